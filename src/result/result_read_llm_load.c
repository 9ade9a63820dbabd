/* The reader of kind "llm-load" documents (nnperf llm load; written by
 * src/llm/llm_load_json.c): every field the writer emits comes back into the
 * nnp_llm_load_result section, each row with its requests' token times, and the rows are
 * mirrored as bench rows (nnp_llm_load_mirror), so history, compare and report read LLM
 * serving runs as they read the other kinds. A null the writer emits for "not measured"
 * reads back as the value that makes the writer emit null again. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench/orchestrator.h"
#include "llm/llm_load_result.h"
#include "nnperf/alloc.h"
#include "result/read_fields.h"
#include "result/result_json.h"
#include "result/result_read_llm.h"

/* Far above any real run: they only keep a hostile file from asking for absurd memory. */
#define MAX_ROWS (1 << 12)
#define MAX_REQS (1 << 20)

/* {"n", "p50_s", "p90_s", "p99_s", "mean_s", "min_s", "max_s", "p50_ci_lo_s", ...} or null */
static nnp_status read_latency(nnp_reader *rd, json_t *lat, const char *key, nnp_stats *s) {
  json_t *o;
  memset(s, 0, sizeof *s);
  NNP_TRY(nnp_rd_get_obj(rd, lat, key, &o));
  if (!o) return NNP_OK;
  size_t at = strlen(rd->where); /* "rows[2]" -> "rows[2].latency.ttft" while reading it */
  snprintf(rd->where + at, sizeof rd->where - at, ".latency.%s", key);
  INT_FIELD(o, "n", 0, INT32_MAX, 0, s->n);
  const struct {
    const char *k;
    double *dst;
  } f[] = {{"p50_s", &s->p50},         {"p90_s", &s->p90},         {"p99_s", &s->p99},
           {"mean_s", &s->mean},       {"min_s", &s->min},         {"max_s", &s->max},
           {"p50_ci_lo_s", &s->p50_lo}, {"p50_ci_hi_s", &s->p50_hi}, {"p99_ci_lo_s", &s->p99_lo},
           {"p99_ci_hi_s", &s->p99_hi}};
  for (size_t i = 0; i < sizeof f / sizeof *f; i++) NNP_TRY(nnp_rd_get_num(rd, o, f[i].k, NAN, f[i].dst));
  bool under = false;
  NNP_TRY(nnp_rd_get_bool(rd, o, "p99_underpowered", &under));
  s->p99_underpowered = under;
  rd->where[at] = '\0';
  return NNP_OK;
}

static nnp_status read_metrics(nnp_reader *rd, json_t *o, nnp_llm_metrics *m) {
  INT_FIELD(o, "ok", 0, INT32_MAX, 0, m->n_ok);
  INT_FIELD(o, "failed", 0, INT32_MAX, 0, m->n_failed);
  INT_FIELD(o, "good", 0, INT32_MAX, 0, m->n_good);
  NNP_TRY(nnp_rd_get_num(rd, o, "duration_s", 0, &m->duration_s));
  NNP_TRY(nnp_rd_get_num(rd, o, "request_throughput", 0, &m->req_per_s));
  NNP_TRY(nnp_rd_get_num(rd, o, "goodput", 0, &m->goodput_req_per_s));
  NNP_TRY(nnp_rd_get_num(rd, o, "output_tokens_per_s", 0, &m->out_tok_per_s));
  NNP_TRY(nnp_rd_get_num(rd, o, "total_tokens_per_s", 0, &m->total_tok_per_s));
  INT_FIELD(o, "prompt_tokens", 0, INT64_MAX, 0, m->prompt_tokens);
  INT_FIELD(o, "output_tokens", 0, INT64_MAX, 0, m->output_tokens);
  json_t *lat;
  NNP_TRY(nnp_rd_get_obj(rd, o, "latency", &lat));
  if (!lat) return nnp_rd_bad(rd, "latency", "missing");
  NNP_TRY(read_latency(rd, lat, "ttft", &m->ttft));
  NNP_TRY(read_latency(rd, lat, "tpot", &m->tpot));
  NNP_TRY(read_latency(rd, lat, "itl", &m->itl));
  return read_latency(rd, lat, "e2e", &m->e2e);
}

static nnp_status read_config(nnp_reader *rd, json_t *o, nnp_llm_load_row *w) {
  NNP_TRY(nnp_rd_get_str(rd, o, "label", w->label, sizeof w->label));
  NNP_TRY(nnp_rd_get_str(rd, o, "scenario", w->scenario, sizeof w->scenario));
  if (strcmp(w->scenario, "closed") && strcmp(w->scenario, "open") && strcmp(w->scenario, "probe") &&
      strcmp(w->scenario, "rung"))
    return nnp_rd_bad(rd, "scenario", "'%s': expected closed, open, probe or rung", w->scenario);
  INT_FIELD(o, "concurrency", 0, 1 << 20, 0, w->concurrency);
  NNP_TRY(nnp_rd_get_num(rd, o, "request_rate", 0, &w->rate));
  NNP_TRY(nnp_rd_get_num(rd, o, "burstiness", 0, &w->burstiness));
  INT_FIELD(o, "max_concurrency", 0, 1 << 20, 0, w->max_concurrency);
  INT_FIELD(o, "slots", -1, 1 << 20, -1, w->slots);
  INT_FIELD(o, "cont_batching", -1, 1, -1, w->cont_batching);
  INT_FIELD(o, "cache_prompt", -1, 1, -1, w->cache_prompt);
  INT_FIELD(o, "shared_prefix", 0, 1 << 24, 0, w->shared_prefix);
  NNP_TRY(nnp_rd_get_str(rd, o, "kv_type", w->kv_type, sizeof w->kv_type));
  NNP_TRY(nnp_rd_get_str(rd, o, "repack", w->repack, sizeof w->repack));
  NNP_TRY(nnp_rd_get_str(rd, o, "server_args", w->server_args, sizeof w->server_args));
  NNP_TRY(nnp_rd_get_str(rd, o, "note", w->note, sizeof w->note));
  NNP_TRY(nnp_rd_get_num(rd, o, "load_s", -1, &w->load_s));
  return nnp_rd_get_num(rd, o, "cold_start_s", -1, &w->cold_start_s);
}

static nnp_status read_failures(nnp_reader *rd, json_t *o, nnp_llm_load_row *w) {
  json_t *a = json_object_get(o, "failures");
  if (a && !json_is_array(a)) return nnp_rd_bad(rd, "failures", "expected an array");
  size_t n = a ? json_array_size(a) : 0;
  if (n > NNP_LLM_MAX_CAUSES) return nnp_rd_bad(rd, "failures", "%zu causes: more than %d", n, NNP_LLM_MAX_CAUSES);
  for (size_t k = 0; k < n; k++) {
    json_t *c = json_array_get(a, k);
    if (!json_is_object(c)) return nnp_rd_bad(rd, "failures", "element %zu is not an object", k);
    nnp_llm_failure_cause *x = &w->causes[w->n_causes++];
    NNP_TRY(nnp_rd_get_str(rd, c, "cause", x->cause, sizeof x->cause));
    INT_FIELD(c, "count", 0, INT32_MAX, 0, x->count);
    NNP_TRY(nnp_rd_get_str(rd, c, "example", x->example, sizeof x->example));
  }
  return NNP_OK;
}

static nnp_status read_server(nnp_reader *rd, json_t *o, nnp_llm_load_row *w) {
  json_t *g, *t;
  NNP_TRY(nnp_rd_get_obj(rd, o, "server_metrics", &g));
  if (g) {
    nnp_llm_server_gauges *x = &w->gauges;
    INT_FIELD(g, "samples", 0, INT32_MAX, 0, x->samples);
    NNP_TRY(nnp_rd_get_num(rd, g, "requests_processing_max", -1, &x->processing_max));
    NNP_TRY(nnp_rd_get_num(rd, g, "requests_processing_mean", -1, &x->processing_mean));
    NNP_TRY(nnp_rd_get_num(rd, g, "requests_deferred_max", -1, &x->deferred_max));
    NNP_TRY(nnp_rd_get_num(rd, g, "requests_deferred_mean", -1, &x->deferred_mean));
    NNP_TRY(nnp_rd_get_num(rd, g, "busy_slots_per_decode", -1, &x->busy_slots_per_decode));
    NNP_TRY(nnp_rd_get_num(rd, g, "kv_cache_usage_max", -1, &x->kv_usage_max));
    NNP_TRY(nnp_rd_get_num(rd, g, "prompt_tokens_cached", -1, &x->prompt_cached_tokens));
  }
  NNP_TRY(nnp_rd_get_obj(rd, o, "server_timings", &t));
  if (t) {
    INT_FIELD(t, "requests", 0, INT32_MAX, 0, w->n_timed);
    NNP_TRY(nnp_rd_get_num(rd, t, "server_ttft_s", 0, &w->server_ttft_s));
    NNP_TRY(nnp_rd_get_num(rd, t, "client_ttft_s", 0, &w->client_ttft_s));
    NNP_TRY(nnp_rd_get_num(rd, t, "server_decode_tokens_per_s", 0, &w->server_decode_tok_s));
    NNP_TRY(nnp_rd_get_num(rd, t, "client_decode_tokens_per_s", 0, &w->client_decode_tok_s));
  }
  bool passed = false;
  NNP_TRY(nnp_rd_get_bool(rd, o, "slo_passed", &passed));
  w->slo_passed = passed;
  return NNP_OK;
}

static nnp_status read_requests(nnp_reader *rd, json_t *o, int idx, nnp_llm_load_row *w) {
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

static nnp_status read_row(nnp_reader *rd, json_t *o, int idx, nnp_llm_load_row *w) {
  snprintf(rd->where, sizeof rd->where, "rows[%d]", idx);
  if (!json_is_object(o)) return nnp_rd_bad(rd, "", "expected an object");
  NNP_TRY(read_config(rd, o, w));
  NNP_TRY(read_metrics(rd, o, &w->m));
  snprintf(rd->where, sizeof rd->where, "rows[%d]", idx);
  NNP_TRY(read_failures(rd, o, w));
  NNP_TRY(read_server(rd, o, w));
  nnp_row_extras_init(&w->ext); /* absent before schema minor 5: unknown */
  NNP_TRY(nnp_result_read_footprint_energy(rd, o, idx, "j_per_output_token", &w->ext));
  snprintf(rd->where, sizeof rd->where, "rows[%d]", idx);
  return read_requests(rd, o, idx, w);
}

static nnp_status read_run(nnp_reader *rd, json_t *root, nnp_llm_load_result *l) {
  struct {
    const char *k;
    char *dst;
    size_t cap;
  } str[] = {{"weight_type", l->weight_type, sizeof l->weight_type}, {"backend", l->backend, sizeof l->backend},
             {"endpoint", l->endpoint, sizeof l->endpoint},          {"api", l->api, sizeof l->api},
             {"prompt_len", l->prompt_len, sizeof l->prompt_len},    {"gen_len", l->gen_len, sizeof l->gen_len}};
  for (size_t i = 0; i < sizeof str / sizeof *str; i++) NNP_TRY(nnp_rd_get_str(rd, root, str[i].k, str[i].dst, str[i].cap));
  if (!l->backend[0]) return nnp_rd_bad(rd, "backend", "missing (llama-server or endpoint)");
  INT_FIELD(root, "threads", 0, 1 << 20, 0, l->threads);
  INT_FIELD(root, "num_requests", 0, INT32_MAX, 0, l->num_requests);
  INT_FIELD(root, "warmup_requests", -1, INT32_MAX, -1, l->warmup_requests);
  INT_FIELD(root, "n_vocab", 0, INT32_MAX, 0, l->n_vocab);
  NNP_TRY(nnp_rd_get_num(rd, root, "timeout_s", 0, &l->timeout_s));
  NNP_TRY(nnp_rd_get_num(rd, root, "max_rate", -1, &l->max_rate));
  json_t *slo;
  NNP_TRY(nnp_rd_get_obj(rd, root, "slo", &slo));
  if (slo) {
    snprintf(rd->where, sizeof rd->where, "slo");
    NNP_TRY(nnp_rd_get_num(rd, slo, "ttft_s", 0, &l->slo.ttft_s));
    NNP_TRY(nnp_rd_get_num(rd, slo, "tpot_s", 0, &l->slo.tpot_s));
    NNP_TRY(nnp_rd_get_num(rd, slo, "e2e_s", 0, &l->slo.e2e_s));
    INT_FIELD(slo, "percentile", 0, 100, 99, l->slo_percentile);
    rd->where[0] = '\0';
  }
  return NNP_OK;
}

nnp_status nnp_result_read_llm_load(nnp_reader *rd, json_t *root, nnp_bench_result *r) {
  nnp_llm_load_result *l = r->llm_load = nnp_calloc(1, sizeof *r->llm_load);
  if (!l) return nnp_error(NNP_ERR_NOMEM, "%s: out of memory", rd->name);
  rd->where[0] = '\0';
  NNP_TRY(read_run(rd, root, l));
  json_t *rows = json_object_get(root, "rows");
  if (!rows || !json_is_array(rows)) return nnp_rd_bad(rd, "rows", "missing or not an array");
  size_t n = json_array_size(rows);
  if (n > MAX_ROWS) return nnp_rd_bad(rd, "rows", "too many rows (%zu)", n);
  if (n && !(l->rows = nnp_calloc(n, sizeof *l->rows)))
    return nnp_error(NNP_ERR_NOMEM, "%s: out of memory for %zu rows", rd->name, n);
  for (size_t i = 0; i < n; i++) {
    l->n_rows = (int)i + 1; /* counted first, so a failure frees what was read */
    NNP_TRY(read_row(rd, json_array_get(rows, i), (int)i, &l->rows[i]));
  }
  r->accuracy_rtol = -1;
  /* the header every kind shares was read into r: the section holds its own copy */
  snprintf(l->model, sizeof l->model, "%s", r->model);
  snprintf(l->command_line, sizeof l->command_line, "%s", r->command_line);
  snprintf(l->nnperf_version, sizeof l->nnperf_version, "%s", r->nnperf_version);
  l->env = r->env;
  l->seed = r->seed;
  return nnp_llm_load_mirror(r);
}
