/* The result document of kind "llm-load" (docs/result-schema.md): the run's parameters,
 * and per row its configuration (the server's controlled variables: slots, batching, KV
 * type, repack), metrics, failures, the server's gauges and timings, and every request's
 * raw token times, written as the llm bench document writes them (nnp_llm_write_request),
 * so src/result/result_read_llm_load.c reads it all back and compare can judge the
 * per-request latencies. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "llm/llm_load_result.h"
#include "llm/llm_report.h"
#include "nnperf/bench.h"
#include "result/result_json.h"
#include "util/json_write.h"

static void jnum(FILE *f, const char *key, double v, int comma) {
  fprintf(f, "%s\"%s\": ", comma ? ", " : "", key);
  nnp_json_number(f, v);
}

static void write_stats(FILE *f, const char *key, const nnp_stats *s, int comma) {
  fprintf(f, "%s\"%s\": ", comma ? ", " : "", key);
  if (s->n == 0) {
    fputs("null", f);
    return;
  }
  fprintf(f, "{\"n\": %d", s->n);
  jnum(f, "p50_s", s->p50, 1);
  jnum(f, "p90_s", s->p90, 1);
  jnum(f, "p99_s", s->p99, 1);
  jnum(f, "mean_s", s->mean, 1);
  jnum(f, "min_s", s->min, 1);
  jnum(f, "max_s", s->max, 1);
  jnum(f, "p50_ci_lo_s", s->p50_lo, 1);
  jnum(f, "p50_ci_hi_s", s->p50_hi, 1);
  jnum(f, "p99_ci_lo_s", s->p99_lo, 1);
  jnum(f, "p99_ci_hi_s", s->p99_hi, 1);
  fprintf(f, ", \"p99_underpowered\": %s}", s->p99_underpowered ? "true" : "false");
}

static void write_row(FILE *f, const nnp_llm_load_row *w) {
  const nnp_llm_metrics *m = &w->m;
  fputs("    {\"label\": ", f);
  nnp_json_string(f, w->label);
  fputs(", \"scenario\": ", f);
  nnp_json_string(f, w->scenario);
  fprintf(f, ", \"concurrency\": %d", w->concurrency);
  jnum(f, "request_rate", w->rate > 0 ? w->rate : NAN, 1);
  jnum(f, "burstiness", w->burstiness, 1);
  fprintf(f, ", \"max_concurrency\": %d, \"slots\": %d, \"cont_batching\": %d, \"cache_prompt\": %d, "
             "\"shared_prefix\": %d, \"kv_type\": ",
          w->max_concurrency, w->slots, w->cont_batching, w->cache_prompt, w->shared_prefix);
  nnp_json_string(f, w->kv_type);
  fputs(", \"repack\": ", f);
  nnp_json_string(f, w->repack);
  fputs(", \"server_args\": ", f);
  nnp_json_string(f, w->server_args);
  fputs(", \"note\": ", f);
  nnp_json_string(f, w->note);
  jnum(f, "load_s", w->load_s >= 0 ? w->load_s : NAN, 1);
  jnum(f, "cold_start_s", w->cold_start_s >= 0 ? w->cold_start_s : NAN, 1);
  fprintf(f, ",\n     \"ok\": %d, \"failed\": %d, \"good\": %d", m->n_ok, m->n_failed, m->n_good);
  jnum(f, "duration_s", m->duration_s, 1);
  jnum(f, "request_throughput", m->req_per_s, 1);
  jnum(f, "goodput", m->goodput_req_per_s, 1);
  jnum(f, "output_tokens_per_s", m->out_tok_per_s, 1);
  jnum(f, "total_tokens_per_s", m->total_tok_per_s, 1);
  fprintf(f, ", \"prompt_tokens\": %lld, \"output_tokens\": %lld", (long long)m->prompt_tokens,
          (long long)m->output_tokens);
  fputs(",\n     ", f);
  fputs("\"latency\": {", f);
  write_stats(f, "ttft", &m->ttft, 0);
  write_stats(f, "tpot", &m->tpot, 1);
  write_stats(f, "itl", &m->itl, 1);
  write_stats(f, "e2e", &m->e2e, 1);
  fputs("},\n     \"failures\": [", f);
  for (int k = 0; k < w->n_causes; k++) {
    fprintf(f, "%s{\"cause\": ", k ? ", " : "");
    nnp_json_string(f, w->causes[k].cause);
    fprintf(f, ", \"count\": %d, \"example\": ", w->causes[k].count);
    nnp_json_string(f, w->causes[k].example);
    fputs("}", f);
  }
  const nnp_llm_server_gauges *g = &w->gauges;
  fprintf(f, "],\n     \"server_metrics\": {\"samples\": %d", g->samples);
  jnum(f, "requests_processing_max", g->samples ? g->processing_max : NAN, 1);
  jnum(f, "requests_processing_mean", g->samples ? g->processing_mean : NAN, 1);
  jnum(f, "requests_deferred_max", g->samples ? g->deferred_max : NAN, 1);
  jnum(f, "requests_deferred_mean", g->samples ? g->deferred_mean : NAN, 1);
  jnum(f, "busy_slots_per_decode", g->samples && g->busy_slots_per_decode >= 0 ? g->busy_slots_per_decode : NAN, 1);
  jnum(f, "kv_cache_usage_max", g->samples && g->kv_usage_max >= 0 ? g->kv_usage_max : NAN, 1);
  jnum(f, "prompt_tokens_cached", g->samples && g->prompt_cached_tokens >= 0 ? g->prompt_cached_tokens : NAN, 1);
  fprintf(f, "},\n     \"server_timings\": {\"requests\": %d", w->n_timed);
  jnum(f, "server_ttft_s", w->n_timed ? w->server_ttft_s : NAN, 1);
  jnum(f, "client_ttft_s", w->n_timed ? w->client_ttft_s : NAN, 1);
  jnum(f, "server_decode_tokens_per_s", w->n_timed ? w->server_decode_tok_s : NAN, 1);
  jnum(f, "client_decode_tokens_per_s", w->n_timed ? w->client_decode_tok_s : NAN, 1);
  fprintf(f, "}, \"slo_passed\": %s", strcmp(w->scenario, "probe") ? "null" : w->slo_passed ? "true" : "false");
  fputs(",\n     ", f); /* the CNN rows' objects; energy per output token */
  nnp_result_write_footprint_energy(f, &w->ext, "j_per_output_token");
  fputs(",\n     \"requests\": [", f);
  for (int i = 0; i < w->n_reqs; i++) {
    fputs(i ? ",\n       " : "\n       ", f);
    nnp_llm_write_request(f, &w->reqs[i]);
  }
  fputs("]}", f);
}

void nnp_llm_load_report_json(FILE *f, const nnp_llm_load_result *r) {
  fprintf(f, "{\n  \"schema_version\": %d,\n  \"schema_minor\": %d,\n  \"tool\": \"nnperf\",\n  \"kind\": \"llm-load\",\n",
          NNP_RESULT_SCHEMA_VERSION, NNP_RESULT_SCHEMA_MINOR);
  fputs("  \"nnperf_version\": ", f);
  nnp_json_string(f, r->nnperf_version);
  const char *keys[] = {"command_line", "model", "weight_type", "backend", "endpoint", "api", "prompt_len", "gen_len"};
  const char *vals[] = {r->command_line, r->model, r->weight_type, r->backend, r->endpoint, r->api,
                        r->prompt_len, r->gen_len};
  for (int i = 0; i < 8; i++) {
    fprintf(f, ",\n  \"%s\": ", keys[i]);
    nnp_json_string(f, vals[i]);
  }
  fprintf(f, ",\n  \"seed\": %llu, \"threads\": %d, \"num_requests\": %d, \"warmup_requests\": %d, \"n_vocab\": %d",
          (unsigned long long)r->seed, r->threads, r->num_requests, r->warmup_requests, r->n_vocab);
  jnum(f, "timeout_s", r->timeout_s, 1);
  fputs(",\n  \"slo\": {", f);
  jnum(f, "ttft_s", r->slo.ttft_s > 0 ? r->slo.ttft_s : NAN, 0);
  jnum(f, "tpot_s", r->slo.tpot_s > 0 ? r->slo.tpot_s : NAN, 1);
  jnum(f, "e2e_s", r->slo.e2e_s > 0 ? r->slo.e2e_s : NAN, 1);
  fprintf(f, ", \"percentile\": %d}", r->slo_percentile);
  fputs(",\n  \"max_rate\": ", f);
  nnp_json_number(f, r->max_rate >= 0 ? r->max_rate : NAN);
  fputs(",\n  \"env\": ", f);
  nnp_env_write_json(f, &r->env);
  fputs(",\n  \"rows\": [\n", f);
  for (int i = 0; i < r->n_rows; i++) {
    write_row(f, &r->rows[i]);
    fputs(i + 1 < r->n_rows ? ",\n" : "\n", f);
  }
  fputs("  ]\n}\n", f);
}

