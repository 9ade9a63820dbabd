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

/* busy slots per decode over the decodes since the first sample. llama-server reports
 * n_busy_slots_per_decode as busy-slot total / n_decode_total since it started, so on a server
 * that served an earlier row (concurrency 1, then 4) the raw value mixes both rows. */
static double busy_since_start(const nnp_llm_server_gauges *g, double decodes, double busy) {
  if (decodes < 0 || busy < 0 || g->start_decodes < 0) return busy;
  double d = decodes - g->start_decodes;
  return d > 0 ? (busy * decodes - g->start_busy_total) / d : -1;
}

void nnp_llm_gauges_add(nnp_llm_server_gauges *g, const char *text, size_t len) {
  double proc = nnp_prom_value(text, len, "llamacpp:requests_processing");
  double def = nnp_prom_value(text, len, "llamacpp:requests_deferred");
  double busy = nnp_prom_value(text, len, "llamacpp:n_busy_slots_per_decode");
  double decodes = nnp_prom_value(text, len, "llamacpp:n_decode_total");
  double kv = nnp_prom_value(text, len, "llamacpp:kv_cache_usage_ratio");
  double cached = nnp_prom_value(text, len, "llamacpp:prompt_tokens_cached_total");
  if (proc < 0 && def < 0 && busy < 0) return; /* not llama-server's metrics */
  if (g->samples == 0) {
    g->processing_max = g->deferred_max = g->kv_usage_max = -1;
    g->processing_mean = g->deferred_mean = 0;
    g->start_cached = cached;
    g->start_decodes = decodes;
    g->start_busy_total = busy >= 0 && decodes >= 0 ? busy * decodes : -1;
  }
  g->samples++;
  running(&g->processing_mean, &g->processing_max, g->samples, proc);
  running(&g->deferred_mean, &g->deferred_max, g->samples, def);
  if (kv > g->kv_usage_max) g->kv_usage_max = kv;
  g->busy_slots_per_decode = busy_since_start(g, decodes, busy);
  g->prompt_cached_tokens = cached >= 0 && g->start_cached >= 0 ? cached - g->start_cached : -1;
}
