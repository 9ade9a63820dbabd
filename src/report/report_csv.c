/* CSV summary: one line per row, for spreadsheets and plotting scripts (RFC 4180: CRLF
 * line ends, fields with comma, quote, CR or LF quoted, quotes doubled). Times in ms.
 * Empty fields mean "not measured" (the JSON has null there). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "nnperf/report.h"
#include "util/json_write.h"

typedef void (*nnp_report_writer)(FILE *f, const nnp_bench_result *r);
/* Defined in src/result/result_write.c: temp file + fsync + rename. */
nnp_status nnp_report_write_atomic(const char *path, nnp_report_writer emit,
                                   const nnp_bench_result *r);

static const char *const COLUMNS[] = {
    "label",        "backend",       "version",      "precision",     "threads",
    "batch",        "scenario",      "status",       "p50_ms",        "p90_ms",
    "p99_ms",       "p50_ci_lo_ms",  "p50_ci_hi_ms", "mean_ms",       "stdev_ms",
    "cv",           "items_per_s",   "peak_rss_mib", "load_ms",       "first_ms",
    "cold_start_ms", "max_rel_err",  "top1",         "within_tol",    "cosine",
    "criterion",    "runtime_bytes", "model_bytes", "energy_mj_per_inference", "energy_source",
    "device",       "device_alloc_peak_bytes", "realistic"};

/* A text field of at most cap bytes as valid UTF-8, quoted only when it has to be. */
static void csv_text(FILE *f, const char *field, size_t cap) {
  char s[2048];
  nnp_json_clean_utf8(s, sizeof s, field, cap);
  size_t n = strlen(s);
  int quote = 0;
  for (size_t i = 0; i < n; i++)
    if (s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r') quote = 1;
  if (!quote) {
    fwrite(s, 1, n, f);
    return;
  }
  fputc('"', f);
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '"') fputc('"', f);
    fputc(s[i], f);
  }
  fputc('"', f);
}

#define CSV_TEXT(f, field) csv_text((f), (field), sizeof(field))

/* A number, or an empty field when absent (ok == 0) or not finite. */
static void csv_num(FILE *f, double v, int ok) {
  if (ok && isfinite(v)) fprintf(f, "%.9g", v);
}

static void write_csv(FILE *f, const nnp_bench_result *r) {
  size_t ncol = sizeof COLUMNS / sizeof COLUMNS[0];
  for (size_t c = 0; c < ncol; c++) fprintf(f, "%s%s", c ? "," : "", COLUMNS[c]);
  fputs("\r\n", f);
  for (int i = 0; r->rows && i < r->n_rows; i++) {
    const nnp_bench_row *w = &r->rows[i];
    const nnp_stats *s = &w->stats;
    int has = s->n > 0;
    CSV_TEXT(f, w->label);
    fputc(',', f);
    CSV_TEXT(f, w->backend);
    fputc(',', f);
    CSV_TEXT(f, w->backend_version);
    fprintf(f, ",%s,%d,%lld,", nnp_precision_name(w->precision), w->threads,
            (long long)w->batch);
    CSV_TEXT(f, w->scenario);
    fprintf(f, ",%s,", nnp_row_status_name(w->status));
    csv_num(f, s->p50 * 1e3, has);
    fputc(',', f);
    csv_num(f, s->p90 * 1e3, has);
    fputc(',', f);
    csv_num(f, s->p99 * 1e3, has);
    fputc(',', f);
    csv_num(f, s->p50_lo * 1e3, has);
    fputc(',', f);
    csv_num(f, s->p50_hi * 1e3, has);
    fputc(',', f);
    csv_num(f, s->mean * 1e3, has);
    fputc(',', f);
    csv_num(f, s->stdev * 1e3, has);
    fputc(',', f);
    csv_num(f, s->cv, has);
    fputc(',', f);
    csv_num(f, w->items_per_s, w->items_per_s > 0.0);
    fputc(',', f);
    csv_num(f, (double)w->peak_rss_bytes / (1024.0 * 1024.0), w->peak_rss_bytes > 0);
    fputc(',', f);
    csv_num(f, w->load_s * 1e3, w->load_s >= 0.0);
    fputc(',', f);
    csv_num(f, w->first_s * 1e3, w->first_s >= 0.0);
    fputc(',', f);
    csv_num(f, w->cold_start_s * 1e3, w->cold_start_s >= 0.0);
    fputc(',', f);
    csv_num(f, w->acc.max_rel, w->acc.compared);
    fputc(',', f);
    csv_num(f, w->acc.top1, w->acc.compared && w->acc.top1 >= 0.0);
    fputc(',', f);
    if (w->acc.compared) fputs(w->acc.within_tol ? "true" : "false", f);
    fputc(',', f);
    csv_num(f, w->acc.cosine, w->acc.compared);
    fputc(',', f);
    if (w->acc.compared) CSV_TEXT(f, w->acc.criterion);
    fputc(',', f);
    csv_num(f, (double)w->ext.runtime_bytes, w->ext.runtime_bytes > 0);
    fputc(',', f);
    csv_num(f, (double)w->ext.model_bytes, w->ext.model_bytes > 0);
    fputc(',', f);
    csv_num(f, w->ext.energy_j * 1e3, w->ext.energy_j >= 0);
    fputc(',', f);
    CSV_TEXT(f, w->ext.energy_source);
    fputc(',', f);
    CSV_TEXT(f, w->ext.device);
    fputc(',', f);
    csv_num(f, (double)w->ext.dev_alloc_peak, w->ext.dev_alloc_peak > 0);
    fputs(w->ext.realistic ? ",true" : ",false", f);
    fputs("\r\n", f);
  }
}

nnp_status nnp_report_write_csv(const nnp_bench_result *r, const char *path) {
  return nnp_report_write_atomic(path, write_csv, r);
}
