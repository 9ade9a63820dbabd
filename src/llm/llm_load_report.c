/* nnperf llm load results: table, JSON document of kind "llm-load", CSV, HTML page. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "llm/llm_load_result.h"
#include "nnperf/bench.h"
#include "result/result_json.h"
#include "util/atomic_file.h"
#include "util/json_write.h"

#ifndef NNP_VERSION
#define NNP_VERSION "0.1.0"
#endif

static double ms(double s) { return s * 1e3; }

/* The CNN rows' footprint and energy, in words (one line per row). */
static void print_footprint_energy(FILE *f, const nnp_llm_load_row *w) {
  const nnp_row_extras *x = &w->ext;
  if (x->runtime_bytes > 0)
    fprintf(f, "  %s: footprint: runtime %.1f MiB (%d files llama-server mapped, the GGUF left out), model %.1f MiB\n",
            w->label, (double)x->runtime_bytes / 1048576.0, x->runtime_files, (double)x->model_bytes / 1048576.0);
  if (x->energy_j >= 0)
    fprintf(f, "  %s: energy %.3g mJ per output token over the run (%s)\n", w->label, x->energy_j * 1e3,
            x->energy_source);
  else if (x->energy_source[0])
    fprintf(f, "  %s: energy n/a, never estimated: %s\n", w->label, x->energy_source);
}

void nnp_llm_load_print_table(FILE *f, const nnp_llm_load_result *r) {
  fprintf(f, "\nnnperf llm load: %s  (%s, prompt %s, gen %s, %d requests per row, seed %llu)\n", r->model,
          r->backend, r->prompt_len, r->gen_len, r->num_requests, (unsigned long long)r->seed);
  fprintf(f, "%-24s %5s %4s %7s %8s %9s %8s %8s %8s %8s %8s %8s %8s\n", "row", "ok", "fail", "req/s", "goodput",
          "out tok/s", "TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99", "ITL p50", "E2E p50", "E2E p99");
  for (int i = 0; i < r->n_rows; i++) {
    const nnp_llm_load_row *w = &r->rows[i];
    const nnp_llm_metrics *m = &w->m;
    fprintf(f, "%-24s %5d %4d %7.2f %8.2f %9.1f %7.1fms %7.1fms %7.2fms %7.2fms %7.2fms %7.0fms %7.0fms\n", w->label,
            m->n_ok, m->n_failed, m->req_per_s, m->goodput_req_per_s, m->out_tok_per_s, ms(m->ttft.p50),
            ms(m->ttft.p99), ms(m->tpot.p50), ms(m->tpot.p99), ms(m->itl.p50), ms(m->e2e.p50), ms(m->e2e.p99));
  }
  for (int i = 0; i < r->n_rows; i++) {
    const nnp_llm_load_row *w = &r->rows[i];
    if (w->load_s >= 0)
      fprintf(f, "  %s: llama-server load %.2f s, cold start (process start -> first token) %.2f s\n", w->label,
              w->load_s, w->cold_start_s);
    print_footprint_energy(f, w);
    if (w->gauges.samples > 0)
      fprintf(f, "  %s: server /metrics (%d samples): processing max %.0f mean %.2f, deferred max %.0f, "
                 "busy slots per decode %.2f, prompt tokens from cache %.0f\n",
              w->label, w->gauges.samples, w->gauges.processing_max, w->gauges.processing_mean,
              w->gauges.deferred_max, w->gauges.busy_slots_per_decode, w->gauges.prompt_cached_tokens);
    if (w->n_timed > 0)
      fprintf(f, "  %s: server timings vs nnperf (%d requests): TTFT %.1f vs %.1f ms, decode %.1f vs %.1f tok/s\n",
              w->label, w->n_timed, ms(w->server_ttft_s), ms(w->client_ttft_s), w->server_decode_tok_s,
              w->client_decode_tok_s);
    for (int k = 0; k < w->n_causes; k++)
      fprintf(f, "  %s: %d failed (%s), e.g. %s\n", w->label, w->causes[k].count, w->causes[k].cause,
              w->causes[k].example);
    if (!strcmp(w->scenario, "probe")) fprintf(f, "  %s: SLO %s\n", w->label, w->slo_passed ? "met" : "missed");
  }
  if (r->max_rate >= 0)
    fprintf(f, "\nmax request rate meeting the SLO at P%d: %g req/s%s\n", r->slo_percentile, r->max_rate,
            r->max_rate == 0 ? " (no probe met it)" : "");
}

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
  fputs(", \"server_args\": ", f);
  nnp_json_string(f, w->server_args);
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
  fputs("}", f);
}

static void emit_json(FILE *f, const nnp_llm_load_result *r) {
  fprintf(f, "{\n  \"schema_version\": %d,\n  \"schema_minor\": %d,\n  \"tool\": \"nnperf\",\n  \"kind\": \"llm-load\",\n",
          NNP_RESULT_SCHEMA_VERSION, NNP_RESULT_SCHEMA_MINOR);
  fputs("  \"nnperf_version\": ", f);
  nnp_json_string(f, NNP_VERSION);
  const char *keys[] = {"command_line", "model", "backend", "endpoint", "api", "prompt_len", "gen_len"};
  const char *vals[] = {r->command_line, r->model, r->backend, r->endpoint ? r->endpoint : "", r->api,
                        r->prompt_len, r->gen_len};
  for (int i = 0; i < 7; i++) {
    fprintf(f, ",\n  \"%s\": ", keys[i]);
    nnp_json_string(f, vals[i] ? vals[i] : "");
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

static void emit_csv(FILE *f, const nnp_llm_load_result *r) {
  fputs("label,scenario,concurrency,request_rate,slots,kv_type,cache_prompt,shared_prefix,ok,failed,req_per_s,"
        "goodput,out_tok_per_s,total_tok_per_s,ttft_p50_ms,ttft_p90_ms,ttft_p99_ms,tpot_p50_ms,tpot_p99_ms,"
        "itl_p50_ms,itl_p99_ms,e2e_p50_ms,e2e_p99_ms,load_s,cold_start_s,runtime_bytes,model_bytes,"
        "energy_mj_per_output_token,energy_source\r\n", f);
  for (int i = 0; i < r->n_rows; i++) {
    const nnp_llm_load_row *w = &r->rows[i];
    const nnp_llm_metrics *m = &w->m;
    fprintf(f, "\"%s\",%s,%d,%g,%d,%s,%d,%d,%d,%d,%.4f,%.4f,%.2f,%.2f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.2f,%.2f,",
            w->label, w->scenario, w->concurrency, w->rate, w->slots, w->kv_type, w->cache_prompt, w->shared_prefix,
            m->n_ok, m->n_failed, m->req_per_s, m->goodput_req_per_s, m->out_tok_per_s, m->total_tok_per_s,
            ms(m->ttft.p50), ms(m->ttft.p90), ms(m->ttft.p99), ms(m->tpot.p50), ms(m->tpot.p99), ms(m->itl.p50),
            ms(m->itl.p99), ms(m->e2e.p50), ms(m->e2e.p99));
    if (w->load_s >= 0) fprintf(f, "%.3f,%.3f,", w->load_s, w->cold_start_s);
    else fputs(",,", f);
    const nnp_row_extras *x = &w->ext;
    if (x->runtime_bytes > 0) fprintf(f, "%lld,%lld,", (long long)x->runtime_bytes, (long long)x->model_bytes);
    else fputs(",,", f);
    if (x->energy_j >= 0) fprintf(f, "%.6g,", x->energy_j * 1e3);
    else fputs(",", f);
    fputc('"', f); /* the source has commas; a quote in it would end the field */
    for (const char *c = x->energy_source; *c; c++) fputc(*c == '"' ? '\'' : *c, f);
    fputs("\"\r\n", f);
  }
}

typedef void (*emit_fn)(FILE *, const nnp_llm_load_result *);

static nnp_status write_atomic(const char *path, emit_fn emit, const nnp_llm_load_result *r) {
  nnp_atomic_file af;
  nnp_status s = nnp_atomic_open(&af, path);
  if (s != NNP_OK) return nnp_error_context(s, "llm load result");
  emit(af.f, r);
  return nnp_atomic_commit(&af);
}

nnp_status nnp_llm_load_write_json(const nnp_llm_load_result *r, const char *path) {
  return write_atomic(path, emit_json, r);
}

nnp_status nnp_llm_load_write_csv(const nnp_llm_load_result *r, const char *path) {
  return write_atomic(path, emit_csv, r);
}
