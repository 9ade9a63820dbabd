/* nnperf llm load results: table, CSV, and the files of every format written atomically
 * (the JSON document is llm_load_json.c, the HTML page llm_load_html.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "llm/llm_load_result.h"
#include "nnperf/bench.h"
#include "result/result_json.h"
#include "util/atomic_file.h"
#include "util/json_write.h"

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
  fprintf(f, "\nnnperf llm load: %s  (%s%s%s, prompt %s, gen %s, %d requests per row, seed %llu)\n", r->model,
          r->backend, r->weight_type[0] ? ", " : "", r->weight_type, r->prompt_len, r->gen_len, r->num_requests,
          (unsigned long long)r->seed);
  /* the repack choice is the run's unless a row differs (then each row says its own) */
  int same_note = 1;
  for (int i = 1; i < r->n_rows; i++) same_note &= !strcmp(r->rows[i].note, r->rows[0].note);
  if (r->n_rows && same_note && r->rows[0].note[0]) fprintf(f, "%s\n", r->rows[0].note);
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
    if (!same_note && w->note[0]) fprintf(f, "  %s: %s\n", w->label, w->note);
    if (w->load_s >= 0)
      fprintf(f, "  %s: llama-server load %.2f s, cold start (process start -> first token) %.2f s\n", w->label,
              w->load_s, w->cold_start_s);
    print_footprint_energy(f, w);
    if (w->gauges.samples > 0) {
      /* fewer than two samples, or no decode between them: no share to state (-1), say so */
      char busy[32] = "n/a";
      if (w->gauges.busy_slots_per_decode >= 0) snprintf(busy, sizeof busy, "%.2f", w->gauges.busy_slots_per_decode);
      fprintf(f, "  %s: server /metrics (%d samples): processing max %.0f mean %.2f, deferred max %.0f, "
                 "busy slots per decode %s, prompt tokens from cache %.0f\n",
              w->label, w->gauges.samples, w->gauges.processing_max, w->gauges.processing_mean,
              w->gauges.deferred_max, busy, w->gauges.prompt_cached_tokens);
    }
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

static void emit_csv(FILE *f, const nnp_llm_load_result *r) {
  fputs("label,scenario,concurrency,request_rate,slots,kv_type,cache_prompt,shared_prefix,ok,failed,req_per_s,"
        "goodput,out_tok_per_s,total_tok_per_s,ttft_p50_ms,ttft_p90_ms,ttft_p99_ms,tpot_p50_ms,tpot_p99_ms,"
        "itl_p50_ms,itl_p99_ms,e2e_p50_ms,e2e_p99_ms,load_s,cold_start_s,repack,runtime_bytes,model_bytes,"
        "energy_mj_per_output_token,energy_source\r\n", f);
  for (int i = 0; i < r->n_rows; i++) {
    const nnp_llm_load_row *w = &r->rows[i];
    const nnp_llm_metrics *m = &w->m;
    fprintf(f, "\"%s\",%s,%d,%g,%d,%s,%d,%d,%d,%d,%.4f,%.4f,%.2f,%.2f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.2f,%.2f,",
            w->label, w->scenario, w->concurrency, w->rate, w->slots, w->kv_type, w->cache_prompt, w->shared_prefix,
            m->n_ok, m->n_failed, m->req_per_s, m->goodput_req_per_s, m->out_tok_per_s, m->total_tok_per_s,
            ms(m->ttft.p50), ms(m->ttft.p90), ms(m->ttft.p99), ms(m->tpot.p50), ms(m->tpot.p99), ms(m->itl.p50),
            ms(m->itl.p99), ms(m->e2e.p50), ms(m->e2e.p99));
    if (w->load_s >= 0) fprintf(f, "%.3f,%.3f,%s,", w->load_s, w->cold_start_s, w->repack);
    else fprintf(f, ",,%s,", w->repack);
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
  return write_atomic(path, nnp_llm_load_report_json, r);
}

nnp_status nnp_llm_load_write_csv(const nnp_llm_load_result *r, const char *path) {
  return write_atomic(path, emit_csv, r);
}
