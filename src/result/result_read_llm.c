/* The reader of kind "llm" documents (nnperf llm bench; written by src/llm/llm_json.c):
 * the header into the result, every row into its llm section with each request's token
 * times, and the bench-row mirror of each row (nnp_llm_mirror_row), so history, compare
 * and --resume read LLM runs as they read CNN runs. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench/orchestrator.h"
#include "llm/llm_sweep.h"
#include "nnperf/alloc.h"
#include "result/read_fields.h"
#include "result/result_json.h"
#include "result/result_read_llm.h"

/* Bounds far above any real run: they only keep a hostile file from asking for absurd memory. */
#define MAX_REQS (1 << 20)
#define MAX_TOKENS (1 << 20)

nnp_status nnp_rd_read_llm_request(nnp_reader *rd, json_t *o, nnp_llm_request *q) {
  if (!json_is_object(o)) return nnp_rd_bad(rd, "", "expected a request object");
  INT_FIELD(o, "id", 0, INT32_MAX, 0, q->id);
  INT_FIELD(o, "prompt_tokens", 0, INT32_MAX, 0, q->prompt_tokens);
  NNP_TRY(nnp_rd_get_bool(rd, o, "warmup", &q->warmup));
  NNP_TRY(nnp_rd_get_bool(rd, o, "ok", &q->ok));
  NNP_TRY(nnp_rd_get_num(rd, o, "t_due", 0, &q->t_due));
  NNP_TRY(nnp_rd_get_num(rd, o, "t_sent", 0, &q->t_sent));
  NNP_TRY(nnp_rd_get_num(rd, o, "t_done", 0, &q->t_done));
  NNP_TRY(nnp_rd_get_str(rd, o, "error", q->error, sizeof q->error));
  json_t *times = json_object_get(o, "token_t"), *ids = json_object_get(o, "tokens");
  if (times && !json_is_array(times)) return nnp_rd_bad(rd, "token_t", "expected an array of seconds");
  if (ids && !json_is_array(ids)) return nnp_rd_bad(rd, "tokens", "expected an array of token ids");
  size_t n = times ? json_array_size(times) : 0;
  if (n > MAX_TOKENS) return nnp_rd_bad(rd, "token_t", "%zu tokens: more than %d", n, MAX_TOKENS);
  for (size_t k = 0; k < n; k++) {
    json_t *v = json_array_get(times, k);
    if (!json_is_number(v)) return nnp_rd_bad(rd, "token_t", "element %zu is not a number", k);
    NNP_TRY(nnp_llm_request_add_token(q, q->t_sent + json_number_value(v))); /* written after t_sent */
  }
  size_t m = ids ? json_array_size(ids) : 0;
  if (m > NNP_LLM_KEEP_TOKENS) return nnp_rd_bad(rd, "tokens", "%zu ids: more than %d", m, NNP_LLM_KEEP_TOKENS);
  for (size_t k = 0; k < m; k++) {
    json_t *v = json_array_get(ids, k);
    if (!json_is_integer(v)) return nnp_rd_bad(rd, "tokens", "element %zu is not an integer", k);
    q->tokens[q->n_kept++] = (int32_t)json_integer_value(v);
  }
  return NNP_OK;
}

/* Stats as llm_json.c writes them: the fields read_stats knows, and the intervals as
 * p50_lo/p50_hi/p99_lo/p99_hi when the document has them that way. */
static nnp_status read_llm_stats(nnp_reader *rd, json_t *m, const char *key, nnp_stats *s) {
  json_t *o;
  NNP_TRY(nnp_rd_get_obj(rd, m, key, &o));
  memset(s, 0, sizeof *s);
  if (!o) return NNP_OK;
  NNP_TRY(nnp_rd_read_stats(rd, o, s));
  const struct {
    const char *k;
    double *dst;
  } ci[] = {{"p50_lo", &s->p50_lo}, {"p50_hi", &s->p50_hi}, {"p99_lo", &s->p99_lo}, {"p99_hi", &s->p99_hi}};
  for (size_t i = 0; i < sizeof ci / sizeof *ci; i++)
    if (json_object_get(o, ci[i].k)) NNP_TRY(nnp_rd_get_num(rd, o, ci[i].k, NAN, ci[i].dst));
  return NNP_OK;
}

static nnp_status read_metrics(nnp_reader *rd, json_t *m, nnp_llm_metrics *x) {
  INT_FIELD(m, "n_ok", 0, INT32_MAX, 0, x->n_ok);
  INT_FIELD(m, "n_failed", 0, INT32_MAX, 0, x->n_failed);
  INT_FIELD(m, "n_good", 0, INT32_MAX, 0, x->n_good);
  NNP_TRY(read_llm_stats(rd, m, "ttft_s", &x->ttft));
  NNP_TRY(read_llm_stats(rd, m, "tpot_s", &x->tpot));
  NNP_TRY(read_llm_stats(rd, m, "itl_s", &x->itl));
  NNP_TRY(read_llm_stats(rd, m, "e2e_s", &x->e2e));
  NNP_TRY(nnp_rd_get_num(rd, m, "duration_s", 0, &x->duration_s));
  NNP_TRY(nnp_rd_get_num(rd, m, "req_per_s", 0, &x->req_per_s));
  NNP_TRY(nnp_rd_get_num(rd, m, "out_tok_per_s", 0, &x->out_tok_per_s));
  NNP_TRY(nnp_rd_get_num(rd, m, "total_tok_per_s", 0, &x->total_tok_per_s));
  INT_FIELD(m, "prompt_tokens", 0, INT64_MAX, 0, x->prompt_tokens);
  INT_FIELD(m, "output_tokens", 0, INT64_MAX, 0, x->output_tokens);
  return NNP_OK;
}

static nnp_status read_row_config(nnp_reader *rd, json_t *o, nnp_llm_row *w) {
  char status[32] = "";
  NNP_TRY(nnp_rd_get_str(rd, o, "label", w->label, sizeof w->label));
  NNP_TRY(nnp_rd_get_str(rd, o, "backend", w->backend, sizeof w->backend));
  NNP_TRY(nnp_rd_get_str(rd, o, "backend_version", w->backend_version, sizeof w->backend_version));
  NNP_TRY(nnp_rd_get_str(rd, o, "weight_type", w->weight_type, sizeof w->weight_type));
  NNP_TRY(nnp_rd_get_str(rd, o, "options", w->options, sizeof w->options));
  INT_FIELD(o, "threads", 1, 1 << 20, 0, w->threads);
  INT_FIELD(o, "prompt_len", 1, 1 << 24, 0, w->prompt_len);
  INT_FIELD(o, "gen_len", 1, 1 << 24, 0, w->gen_len);
  INT_FIELD(o, "concurrency", 1, 1 << 20, 0, w->concurrency);
  if (!w->backend[0] || !w->threads || !w->prompt_len || !w->gen_len || !w->concurrency)
    return nnp_rd_bad(rd, "backend", "a row needs backend, threads, prompt_len, gen_len and concurrency");
  NNP_TRY(nnp_rd_get_str(rd, o, "status", status, sizeof status));
  if (!nnp_rd_parse_status(status, &w->status)) return nnp_rd_bad(rd, "status", "unknown status '%s'", status);
  NNP_TRY(nnp_rd_get_str(rd, o, "reason", w->reason, sizeof w->reason));
  NNP_TRY(nnp_rd_get_str(rd, o, "note", w->note, sizeof w->note));
  INT_FIELD(o, "exit_status", -1, 255, -1, w->exit_status);
  INT_FIELD(o, "term_signal", 0, 128, 0, w->term_signal);
  return NNP_OK;
}

static nnp_status read_row_numbers(nnp_reader *rd, json_t *o, int idx, nnp_llm_row *w) {
  NNP_TRY(nnp_rd_get_num(rd, o, "spawn_to_ready_s", -1, &w->spawn_to_ready_s));
  NNP_TRY(nnp_rd_get_num(rd, o, "load_s", -1, &w->load_s));
  NNP_TRY(nnp_rd_get_num(rd, o, "cold_start_s", -1, &w->cold_start_s));
  NNP_TRY(nnp_rd_get_num(rd, o, "prefill_tok_per_s", 0, &w->prefill_tok_per_s));
  NNP_TRY(nnp_rd_get_num(rd, o, "decode_tok_per_s", 0, &w->decode_tok_per_s));
  NNP_TRY(nnp_rd_get_num(rd, o, "harness_overhead_per_token_s", -1, &w->harness_overhead_s));
  INT_FIELD(o, "peak_rss_bytes", -1, INT64_MAX, -1, w->peak_rss_bytes);
  INT_FIELD(o, "vmhwm_bytes", -1, INT64_MAX, -1, w->vmhwm_bytes);
  INT_FIELD(o, "kv_cache_bytes", -1, INT64_MAX, -1, w->kv_cache_bytes);
  NNP_TRY(nnp_rd_get_str(rd, o, "kv_source", w->kv_source, sizeof w->kv_source));
  nnp_row_extras_init(&w->ext); /* absent before schema minor 5: unknown */
  NNP_TRY(nnp_result_read_footprint_energy(rd, o, idx, "j_per_output_token", &w->ext));
  snprintf(rd->where, sizeof rd->where, "rows[%d]", idx);
  json_t *acc, *m;
  NNP_TRY(nnp_rd_get_obj(rd, o, "accuracy", &acc));
  w->first_divergence = -1;
  if (acc) {
    NNP_TRY(nnp_rd_get_bool(rd, acc, "compared", &w->compared));
    NNP_TRY(nnp_rd_get_str(rd, acc, "reference", w->reference, sizeof w->reference));
    NNP_TRY(nnp_rd_get_num(rd, acc, "token_agreement", 0, &w->token_agreement));
    NNP_TRY(nnp_rd_get_num(rd, acc, "first_token_agreement", 0, &w->first_token_agreement));
    INT_FIELD(acc, "first_divergence", -1, INT32_MAX, -1, w->first_divergence);
  }
  NNP_TRY(nnp_rd_get_obj(rd, o, "metrics", &m));
  if (m) NNP_TRY(read_metrics(rd, m, &w->m));
  return NNP_OK;
}

static nnp_status read_row(nnp_reader *rd, json_t *o, int idx, nnp_llm_row *w) {
  snprintf(rd->where, sizeof rd->where, "rows[%d]", idx);
  if (!json_is_object(o)) return nnp_rd_bad(rd, "", "expected an object");
  NNP_TRY(read_row_config(rd, o, w));
  NNP_TRY(nnp_result_read_host(rd, o, idx, NNP_ROW_HOST_REF(w)));
  NNP_TRY(read_row_numbers(rd, o, idx, w));
  json_t *reqs = json_object_get(o, "requests");
  if (reqs && !json_is_array(reqs)) return nnp_rd_bad(rd, "requests", "expected an array");
  size_t n = reqs ? json_array_size(reqs) : 0;
  if (n > MAX_REQS) return nnp_rd_bad(rd, "requests", "%zu requests: more than %d", n, MAX_REQS);
  if (n && !(w->reqs = nnp_calloc(n, sizeof *w->reqs)))
    return nnp_error(NNP_ERR_NOMEM, "%s: out of memory for %zu requests", rd->name, n);
  for (size_t i = 0; i < n; i++) {
    w->n_reqs = (int)i + 1; /* counted first, so a failure frees what was read */
    snprintf(rd->where, sizeof rd->where, "rows[%d].requests[%zu]", idx, i);
    NNP_TRY(nnp_rd_read_llm_request(rd, json_array_get(reqs, i), &w->reqs[i]));
  }
  return NNP_OK;
}

nnp_status nnp_result_read_llm(nnp_reader *rd, json_t *root, nnp_bench_result *r) {
  nnp_llm_result *l = r->llm = nnp_calloc(1, sizeof *r->llm);
  if (!l) return nnp_error(NNP_ERR_NOMEM, "%s: out of memory", rd->name);
  INT_FIELD(root, "requests", 0, INT32_MAX, 0, l->requests);
  INT_FIELD(root, "warmup", 0, INT32_MAX, 0, l->warmup);
  json_t *rows = json_object_get(root, "rows");
  if (!rows || !json_is_array(rows)) return nnp_rd_bad(rd, "rows", "missing or not an array");
  size_t n = json_array_size(rows);
  if (n > 1 << 16) return nnp_rd_bad(rd, "rows", "too many rows (%zu)", n);
  if (n) {
    l->rows = nnp_calloc(n, sizeof *l->rows);
    r->rows = nnp_calloc(n, sizeof *r->rows);
    if (!l->rows || !r->rows) return nnp_error(NNP_ERR_NOMEM, "%s: out of memory for %zu rows", rd->name, n);
    l->cap_rows = r->cap_rows = (int)n;
  }
  for (size_t i = 0; i < n; i++) {
    l->n_rows = (int)i + 1;
    NNP_TRY(read_row(rd, json_array_get(rows, i), (int)i, &l->rows[i]));
    nnp_llm_mirror_row(&l->rows[i], &r->rows[i]);
    r->n_rows = (int)i + 1;
  }
  r->accuracy_rtol = -1;
  nnp_llm_sync_header(r);
  return NNP_OK;
}
