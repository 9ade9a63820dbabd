/* Reading llama-server's /metrics (Prometheus text format) without trusting it. */
#include "llm/llm_metrics_scrape.h"

#include <stdlib.h>
#include <string.h>

#include "llm/llm_client.h"

double nnp_prom_value(const char *text, size_t len, const char *name) {
  size_t nl = strlen(name);
  for (size_t i = 0; i < len;) {
    size_t end = i;
    while (end < len && text[end] != '\n') end++;
    /* a sample line: NAME SP VALUE (comments start with '#') */
    if (end - i > nl + 1 && text[i] != '#' && !memcmp(text + i, name, nl) && text[i + nl] == ' ') {
      char num[64];
      size_t k = end - (i + nl + 1);
      if (k >= sizeof num) return -1;
      memcpy(num, text + i + nl + 1, k);
      num[k] = '\0';
      char *stop;
      double v = strtod(num, &stop);
      return stop != num && v >= 0 && v < 1e15 ? v : -1;
    }
    i = end + 1;
  }
  return -1;
}

static void running(double *mean, double *max, int n, double v) {
  if (v < 0) return;
  *mean += (v - *mean) / n;
  if (v > *max) *max = v;
}

void nnp_llm_gauges_add(nnp_llm_server_gauges *g, const char *text, size_t len, double *cached_at_start) {
  double proc = nnp_prom_value(text, len, "llamacpp:requests_processing");
  double def = nnp_prom_value(text, len, "llamacpp:requests_deferred");
  double busy = nnp_prom_value(text, len, "llamacpp:n_busy_slots_per_decode");
  double kv = nnp_prom_value(text, len, "llamacpp:kv_cache_usage_ratio");
  double cached = nnp_prom_value(text, len, "llamacpp:prompt_tokens_cached_total");
  if (proc < 0 && def < 0 && busy < 0) return; /* not llama-server's metrics */
  if (g->samples == 0) {
    g->processing_max = g->deferred_max = g->kv_usage_max = -1;
    g->processing_mean = g->deferred_mean = 0;
    *cached_at_start = cached;
  }
  g->samples++;
  running(&g->processing_mean, &g->processing_max, g->samples, proc);
  running(&g->deferred_mean, &g->deferred_max, g->samples, def);
  if (kv > g->kv_usage_max) g->kv_usage_max = kv;
  g->busy_slots_per_decode = busy;
  g->prompt_cached_tokens = cached >= 0 && *cached_at_start >= 0 ? cached - *cached_at_start : -1;
}
