/* The human tables and the CSV of an LLM result. Latencies in ms, rates in tokens/s;
 * intervals are the bootstrap 95% intervals of the median. Rows whose weight types
 * differ are not ranked against the first row unless allow_mixed. */
#include <string.h>

#include "llm/llm_report.h"
#include "util/atomic_file.h"

static void ms(FILE *f, const nnp_stats *s, double v, int width) {
  if (s->n <= 0) fprintf(f, " %*s", width, "-");
  else fprintf(f, " %*.2f", width, v * 1e3);
}

static void latency_row(FILE *f, const nnp_llm_row *w) {
  const nnp_llm_metrics *m = &w->m;
  char ci[40] = "-";
  if (m->ttft.n > 0) snprintf(ci, sizeof ci, "[%.2f, %.2f]", m->ttft.p50_lo * 1e3, m->ttft.p50_hi * 1e3);
  fprintf(f, "%-34s %-9s", w->label, w->weight_type);
  ms(f, &m->ttft, m->ttft.p50, 9);
  fprintf(f, " %-18s", ci);
  ms(f, &m->ttft, m->ttft.p99, 9);
  ms(f, &m->tpot, m->tpot.p50, 9);
  ms(f, &m->tpot, m->tpot.p99, 9);
  ms(f, &m->itl, m->itl.p50, 9);
  ms(f, &m->itl, m->itl.p99, 9);
  ms(f, &m->e2e, m->e2e.p50, 9);
  ms(f, &m->e2e, m->e2e.p99, 9);
  fprintf(f, "%s\n", m->ttft.p99_underpowered ? "  (P99 from <1000 requests)" : "");
}

static void mib(FILE *f, int64_t b) {
  if (b < 0) fprintf(f, " %9s", "-");
  else fprintf(f, " %9.1f", b / 1048576.0);
}

static void throughput_row(FILE *f, const nnp_llm_row *w, const nnp_llm_row *base) {
  fprintf(f, "%-34s %9.1f %9.1f %9.1f", w->label, w->prefill_tok_per_s, w->decode_tok_per_s, w->m.out_tok_per_s);
  if (base && base != w && base->decode_tok_per_s > 0)
    fprintf(f, " %6.2fx", w->decode_tok_per_s / base->decode_tok_per_s);
  else fprintf(f, " %7s", base == w ? "base" : "n/a");
  mib(f, w->peak_rss_bytes);
  mib(f, w->kv_cache_bytes);
  mib(f, w->ext.runtime_bytes);
  mib(f, w->ext.model_bytes);
  if (w->ext.energy_j >= 0) fprintf(f, " %7.3g", w->ext.energy_j * 1e3);
  else fprintf(f, " %7s", "n/a");
  fprintf(f, " %7.2f %7.2f", w->load_s, w->cold_start_s);
  if (w->compared) fprintf(f, "   %5.1f%% / %5.1f%%", w->token_agreement * 100, w->first_token_agreement * 100);
  else fprintf(f, "   %s", w->reference[0] ? "-" : "reference");
  fputc('\n', f);
}

/* The first ok row: the decode-rate baseline of rows with its weight type (or of all rows
 * with allow_mixed) measured on the same host (a collected sweep: rows of other hardware
 * are never ranked against it). */
static const nnp_llm_row *baseline_for(const nnp_llm_result *r, const nnp_llm_row *w) {
  for (int i = 0; i < r->n_rows; i++) {
    const nnp_llm_row *b = &r->rows[i];
    if (b->status != NNP_ROW_OK || strcmp(b->hw_class, w->hw_class) || strcmp(b->node, w->node)) continue;
    if (r->allow_mixed || !strcmp(b->weight_type, w->weight_type)) return b;
  }
  return NULL;
}

/* What the runtime, model and energy columns hold (the CNN table's footprint and energy). */
static void print_llm_edge_notes(FILE *f, const nnp_llm_result *r) {
  for (int i = 0; i < r->n_rows; i++) /* the counter read, or why there is none (once) */
    if (r->rows[i].status == NNP_ROW_OK && r->rows[i].ext.energy_source[0]) {
      fprintf(f, "energy (mJ per output token, measured rounds): %s%s\n", r->rows[i].ext.energy_source,
              r->rows[i].ext.energy_j >= 0 ? "" : ": n/a, never estimated");
      break;
    }
  fputs("footprint: runtime MiB = files the worker process loaded (/proc/self/maps: libllama and ggml, or torch "
        "and its imported modules), the GGUF left out; model MiB = the GGUF file\n", f);
}

void nnp_llm_report_table(FILE *f, const nnp_llm_result *r) {
  fprintf(f, "\nnnperf llm bench: %s (%d measured requests per row after %d warm-up; greedy, seeded prompts)\n",
          r->model, r->requests, r->warmup);
  fprintf(f, "\n%-34s %-9s %9s %-18s %9s %9s %9s %9s %9s %9s %9s\n", "row (threads, prompt, gen, concurrency)",
          "weights", "TTFT P50", "  95% CI", "TTFT P99", "TPOT P50", "TPOT P99", "ITL P50", "ITL P99", "E2E P50",
          "E2E P99");
  for (int i = 0; i < r->n_rows; i++) {
    const nnp_llm_row *w = &r->rows[i];
    if (w->status == NNP_ROW_OK) latency_row(f, w);
    else fprintf(f, "%-34s %s: %s\n", w->label, nnp_row_status_name(w->status), w->reason);
  }
  fprintf(f, "(latencies in ms)\n\n%-34s %9s %9s %9s %7s %9s %9s %9s %9s %7s %7s %7s   %s\n", "row", "prefill",
          "decode", "output", "vs", "peak RSS", "KV cache", "runtime", "model", "energy", "load", "cold",
          "tokens / first token agree");
  fprintf(f, "%-34s %9s %9s %9s %7s %9s %9s %9s %9s %7s %7s %7s\n", "", "tok/s", "tok/s", "tok/s", "decode", "MiB",
          "MiB", "MiB", "MiB", "mJ/tok", "s", "start s");
  for (int i = 0; i < r->n_rows; i++)
    if (r->rows[i].status == NNP_ROW_OK) throughput_row(f, &r->rows[i], baseline_for(r, &r->rows[i]));
  print_llm_edge_notes(f, r);
  int notes = 0;
  for (int i = 0; i < r->n_rows; i++)
    if (r->rows[i].status == NNP_ROW_OK && r->rows[i].compared && r->rows[i].token_agreement < 1.0) notes++;
  if (notes)
    fprintf(f, "\ntoken agreement below 100%% means greedy decoding took another path after a near tie; the torch "
               "row computes in fp32 from dequantised weights, llama.cpp in the file's quantised type\n");
  if (r->noisy) fprintf(f, "\nWARNING: the machine was busy or rows were noisy: treat differences with care\n");
}

static void csv_stats(FILE *f, const nnp_stats *s) {
  if (s->n <= 0) fputs(",,,", f);
  else fprintf(f, ",%.9g,%.9g,%.9g", s->p50, s->p90, s->p99);
}

/* runtime_bytes,model_bytes,energy_mj_per_output_token,energy_source and the line's end:
 * empty where unknown, the source's commas turned into semicolons. */
static void llm_csv_edge(FILE *f, const nnp_row_extras *x) {
  char src[sizeof x->energy_source];
  snprintf(src, sizeof src, "%s", x->energy_source);
  for (char *p = src; *p; p++)
    if (*p == ',' || *p == '"' || *p == '\n') *p = ';';
  if (x->runtime_bytes > 0) fprintf(f, ",%lld", (long long)x->runtime_bytes);
  else fputs(",", f);
  if (x->model_bytes > 0) fprintf(f, ",%lld", (long long)x->model_bytes);
  else fputs(",", f);
  if (x->energy_j >= 0) fprintf(f, ",%.6g", x->energy_j * 1e3);
  else fputs(",", f);
  fprintf(f, ",%s\n", src);
}

nnp_status nnp_llm_write_csv(const nnp_llm_result *r, const char *path) {
  nnp_atomic_file af;
  nnp_status s = nnp_atomic_open(&af, path);
  if (s != NNP_OK) return nnp_error_context(s, "--csv");
  FILE *f = af.f;
  fputs("label,backend,weight_type,threads,prompt_len,gen_len,concurrency,status,reason,ttft_p50_s,ttft_p90_s,"
        "ttft_p99_s,tpot_p50_s,tpot_p90_s,tpot_p99_s,itl_p50_s,itl_p90_s,itl_p99_s,e2e_p50_s,e2e_p90_s,e2e_p99_s,"
        "prefill_tok_per_s,decode_tok_per_s,out_tok_per_s,peak_rss_bytes,kv_cache_bytes,load_s,cold_start_s,"
        "token_agreement,first_token_agreement,runtime_bytes,model_bytes,energy_mj_per_output_token,energy_source\n",
        f);
  for (int i = 0; i < r->n_rows; i++) {
    const nnp_llm_row *w = &r->rows[i];
    char reason[sizeof w->reason];
    snprintf(reason, sizeof reason, "%s", w->reason);
    for (char *p = reason; *p; p++)
      if (*p == ',' || *p == '"' || *p == '\n') *p = ';';
    fprintf(f, "%s,%s,%s,%d,%d,%d,%d,%s,%s", w->label, w->backend, w->weight_type, w->threads, w->prompt_len,
            w->gen_len, w->concurrency, nnp_row_status_name(w->status), reason);
    csv_stats(f, &w->m.ttft);
    csv_stats(f, &w->m.tpot);
    csv_stats(f, &w->m.itl);
    csv_stats(f, &w->m.e2e);
    fprintf(f, ",%.6g,%.6g,%.6g,%lld,%lld,%.6g,%.6g", w->prefill_tok_per_s, w->decode_tok_per_s, w->m.out_tok_per_s,
            (long long)w->peak_rss_bytes, (long long)w->kv_cache_bytes, w->load_s, w->cold_start_s);
    if (w->compared) fprintf(f, ",%.4f,%.4f", w->token_agreement, w->first_token_agreement);
    else fputs(",,", f);
    llm_csv_edge(f, &w->ext);
  }
  return nnp_atomic_commit(&af);
}
