/* A finished run -> one result row: metrics, failures by cause, server timings beside
 * nnperf's own. */
#include <string.h>

#include "llm/llm_load_result.h"

double nnp_llm_stat_pct(const nnp_stats *s, int pct) {
  switch (pct) {
  case 50: return s->p50;
  case 90: return s->p90;
  case 95: return s->p95;
  default: return s->p99;
  }
}

/* Failures grouped by the cause before the reason's first colon. */
static void add_cause(nnp_llm_load_row *row, const char *error) {
  char cause[32];
  size_t n = strcspn(error, ":");
  if (n >= sizeof cause) n = sizeof cause - 1;
  memcpy(cause, error, n);
  cause[n] = '\0';
  for (int k = 0; k < row->n_causes; k++)
    if (!strcmp(row->causes[k].cause, cause)) {
      row->causes[k].count++;
      return;
    }
  int k = row->n_causes < NNP_LLM_MAX_CAUSES ? row->n_causes++ : NNP_LLM_MAX_CAUSES - 1;
  if (k == NNP_LLM_MAX_CAUSES - 1 && row->causes[k].count) snprintf(cause, sizeof cause, "other");
  snprintf(row->causes[k].cause, sizeof row->causes[k].cause, "%s", cause);
  snprintf(row->causes[k].example, sizeof row->causes[k].example, "%s", error);
  row->causes[k].count++;
}

/* llama-server's timings against nnperf's clock for the same requests: TTFT against the
 * server's prompt time, decode tokens/s ((n-1) gaps over first -> last token) against the
 * server's predicted_n / predicted_ms. */
static void compare_timings(nnp_llm_load_row *row, const nnp_llm_load_out *o) {
  double s_prompt = 0, s_pred_n = 0, s_pred_ms = 0, c_ttft = 0, c_tok = 0, c_span = 0;
  int n = 0;
  for (int i = 0; i < o->n; i++) {
    const nnp_llm_request *r = &o->reqs[i];
    const nnp_oai_timings *t = &o->timings[i];
    if (r->warmup || !r->ok || r->n_tokens < 2 || !t->valid || t->prompt_ms < 0) continue;
    n++;
    s_prompt += t->prompt_ms / 1e3;
    s_pred_n += t->predicted_n;
    s_pred_ms += t->predicted_ms;
    c_ttft += r->token_t[0] - r->t_due;
    c_tok += r->n_tokens - 1;
    c_span += r->token_t[r->n_tokens - 1] - r->token_t[0];
  }
  row->n_timed = n;
  if (!n) return;
  row->server_ttft_s = s_prompt / n;
  row->client_ttft_s = c_ttft / n;
  row->server_decode_tok_s = s_pred_ms > 0 ? s_pred_n / (s_pred_ms / 1e3) : 0;
  row->client_decode_tok_s = c_span > 0 ? c_tok / c_span : 0;
}

nnp_status nnp_llm_load_row_fill(nnp_llm_load_row *row, const nnp_llm_load_out *o, const nnp_llm_slo *slo,
                                 uint64_t seed) {
  NNP_TRY(nnp_llm_metrics_compute(o->reqs, o->n, slo, seed, &row->m));
  for (int i = 0; i < o->n; i++)
    if (!o->reqs[i].warmup && !(o->reqs[i].ok && o->reqs[i].n_tokens > 0))
      add_cause(row, o->reqs[i].error[0] ? o->reqs[i].error : "no-tokens: no output token");
  row->gauges = o->gauges;
  compare_timings(row, o);
  return NNP_OK;
}
