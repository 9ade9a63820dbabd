/* A finished run -> one result row: metrics, failures by cause, server timings beside
 * nnperf's own. */
#include <stdio.h>
#include <string.h>

#include "llm/llm_load_result.h"
#include "nnperf/alloc.h"
#include "nnperf/bench.h"

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
  for (int i = 0; o->timings && i < o->n; i++) { /* no timings: a run that did not keep them */
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

void nnp_llm_load_result_free(nnp_llm_load_result *r) {
  if (!r) return;
  for (int i = 0; i < r->n_rows; i++) {
    for (int k = 0; k < r->rows[i].n_reqs; k++) nnp_llm_request_free(&r->rows[i].reqs[k]);
    nnp_free(r->rows[i].reqs);
  }
  nnp_free(r->rows);
  r->rows = NULL;
  r->n_rows = 0;
}

/* One section row as a bench row: configuration and outcome for the history's rows table
 * and the generic tables (output tokens/s as items/s); no samples (each row's requests
 * stay in the section, where compare reads them). */
static void mirror_row(const nnp_llm_load_result *l, const nnp_llm_load_row *w, nnp_bench_row *row) {
  memset(row, 0, sizeof *row);
  snprintf(row->backend, sizeof row->backend, "%s", l->backend);
  row->precision = NNP_FP32; /* not an axis of LLM rows: the weight type is (l->weight_type) */
  row->threads = l->threads;
  row->batch = w->concurrency > 0 ? w->concurrency : w->max_concurrency;
  snprintf(row->scenario, sizeof row->scenario, "llm-load %s", w->scenario);
  snprintf(row->label, sizeof row->label, "%s", w->label);
  row->status = w->m.n_ok > 0 ? NNP_ROW_OK : NNP_ROW_FAILED;
  if (w->m.n_ok == 0 && w->n_causes) snprintf(row->reason, sizeof row->reason, "%s", w->causes[0].example);
  snprintf(row->note, sizeof row->note, "%s", w->note);
  row->spawn_to_ready_s = row->parse_s = row->compile_s = row->first_s = -1;
  row->load_s = w->load_s, row->cold_start_s = w->cold_start_s;
  row->items_per_s = w->m.out_tok_per_s;
  row->peak_rss_bytes = row->vmhwm_bytes = -1;
  row->acc.top1 = row->acc.top5 = -1;
}

nnp_status nnp_llm_load_mirror(nnp_bench_result *b) {
  const nnp_llm_load_result *l = b->llm_load;
  for (int i = 0; i < b->n_rows; i++) nnp_bench_row_free(&b->rows[i]);
  nnp_free(b->rows);
  b->rows = NULL;
  b->n_rows = b->cap_rows = 0;
  if (!l || !l->n_rows) return NNP_OK;
  if (!(b->rows = nnp_calloc((size_t)l->n_rows, sizeof *b->rows)))
    return nnp_error(NNP_ERR_NOMEM, "llm load: out of memory for %d rows", l->n_rows);
  b->cap_rows = b->n_rows = l->n_rows;
  for (int i = 0; i < l->n_rows; i++) mirror_row(l, &l->rows[i], &b->rows[i]);
  return NNP_OK;
}
