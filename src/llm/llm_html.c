/* The HTML report of an LLM result: one self-contained page (inline SVG, no scripts):
 * per-row TTFT and TPOT distributions on one shared axis (empirical CDFs), and decode
 * tokens/s against concurrency per backend and prompt length. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/llm_report.h"
#include "nnperf/alloc.h"
#include "util/atomic_file.h"

#define W 640
#define H 260
#define PAD 48

static const char *colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#7f7f7f"};

static void esc(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '<') fputs("&lt;", f);
    else if (*s == '>') fputs("&gt;", f);
    else if (*s == '&') fputs("&amp;", f);
    else fputc(*s, f);
  }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The per-request TTFT (which = 0) or TPOT (1) samples of row w, sorted; count in *n. */
static double *samples(const nnp_llm_row *w, int which, int *n) {
  double *v = nnp_malloc(sizeof(double) * (size_t)(w->n_reqs ? w->n_reqs : 1));
  *n = 0;
  if (!v) return NULL;
  for (int i = 0; i < w->n_reqs; i++) {
    const nnp_llm_request *q = &w->reqs[i];
    if (q->warmup || !q->ok || !q->n_tokens) continue;
    double ttft = q->token_t[0] - q->t_due, end = q->token_t[q->n_tokens - 1] - q->t_due;
    if (which == 0) v[(*n)++] = ttft;
    else if (q->n_tokens > 1) v[(*n)++] = (end - ttft) / (q->n_tokens - 1);
  }
  qsort(v, (size_t)*n, sizeof *v, cmp_double);
  return v;
}

static void axes(FILE *f, const char *title, const char *xlabel, double xmax, const char *ylabel, double ymax) {
  fprintf(f, "<h2>");
  esc(f, title);
  fprintf(f, "</h2>\n<svg width=\"%d\" height=\"%d\" style=\"font:11px sans-serif\">\n", W + 220, H + 40);
  fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#000\"/>", PAD, H, W, H);
  fprintf(f, "<line x1=\"%d\" y1=\"10\" x2=\"%d\" y2=\"%d\" stroke=\"#000\"/>\n", PAD, PAD, H);
  for (int k = 0; k <= 4; k++) {
    double x = PAD + (W - PAD) * k / 4.0, y = H - (H - 10) * k / 4.0;
    fprintf(f, "<text x=\"%.0f\" y=\"%d\" text-anchor=\"middle\">%.3g</text>", x, H + 14, xmax * k / 4);
    fprintf(f, "<text x=\"%d\" y=\"%.0f\" text-anchor=\"end\">%.3g</text>\n", PAD - 4, y + 4, ymax * k / 4);
  }
  fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>", (W + PAD) / 2, H + 30, xlabel);
  fprintf(f, "<text x=\"12\" y=\"%d\" transform=\"rotate(-90 12 %d)\" text-anchor=\"middle\">%s</text>\n", H / 2,
          H / 2, ylabel);
}

static void legend(FILE *f, int k, const char *label) {
  fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">", W + 10,
          14 + 16 * k, colors[k % 8], W + 24, 23 + 16 * k);
  esc(f, label);
  fputs("</text>\n", f);
}

/* Empirical CDFs of TTFT or TPOT of every ok row, on one shared millisecond axis. */
static void cdf_chart(FILE *f, const nnp_llm_result *r, int which) {
  double xmax = 0;
  for (int i = 0; i < r->n_rows; i++) {
    int n;
    double *v = r->rows[i].status == NNP_ROW_OK ? samples(&r->rows[i], which, &n) : NULL;
    if (v && n && v[n - 1] > xmax) xmax = v[n - 1];
    nnp_free(v);
  }
  if (!(xmax > 0)) return;
  xmax *= 1e3 * 1.05;
  axes(f, which ? "TPOT per request (CDF)" : "TTFT per request (CDF)", "ms", xmax, "fraction of requests", 1);
  for (int i = 0, k = 0; i < r->n_rows; i++) {
    int n;
    if (r->rows[i].status != NNP_ROW_OK) continue;
    double *v = samples(&r->rows[i], which, &n);
    if (!v || !n) {
      nnp_free(v);
      continue;
    }
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", colors[k % 8]);
    for (int j = 0; j < n; j++) {
      double x = PAD + (W - PAD) * v[j] * 1e3 / xmax;
      fprintf(f, "%.1f,%.1f %.1f,%.1f ", x, H - (H - 10) * (double)j / n, x, H - (H - 10) * (double)(j + 1) / n);
    }
    fputs("\"/>\n", f);
    legend(f, k++, r->rows[i].label);
    nnp_free(v);
  }
  fputs("</svg>\n", f);
}

/* Decode tokens/s (all sequences together) against concurrency, one line per backend x
 * threads x prompt length. */
static void concurrency_chart(FILE *f, const nnp_llm_result *r) {
  double ymax = 0;
  int cmax = 1;
  for (int i = 0; i < r->n_rows; i++)
    if (r->rows[i].status == NNP_ROW_OK) {
      if (r->rows[i].decode_tok_per_s > ymax) ymax = r->rows[i].decode_tok_per_s;
      if (r->rows[i].concurrency > cmax) cmax = r->rows[i].concurrency;
    }
  if (!(ymax > 0)) return;
  axes(f, "Decode tokens/s against concurrency", "concurrent sequences", cmax, "decode tokens/s", ymax * 1.1);
  int k = 0;
  for (int i = 0; i < r->n_rows; i++) {
    const nnp_llm_row *a = &r->rows[i];
    int first = 1;
    for (int j = 0; j < i; j++) /* one line per series: drawn at its first row */
      first &= !(!strcmp(r->rows[j].backend, a->backend) && r->rows[j].threads == a->threads &&
                 r->rows[j].prompt_len == a->prompt_len);
    if (!first || a->status != NNP_ROW_OK) continue;
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", colors[k % 8]);
    for (int j = i; j < r->n_rows; j++) {
      const nnp_llm_row *b = &r->rows[j];
      if (b->status != NNP_ROW_OK || strcmp(b->backend, a->backend) || b->threads != a->threads ||
          b->prompt_len != a->prompt_len)
        continue;
      fprintf(f, "%.1f,%.1f ", PAD + (W - PAD) * (double)b->concurrency / cmax,
              H - (H - 10) * b->decode_tok_per_s / (ymax * 1.1));
    }
    fputs("\"/>\n", f);
    char label[96];
    snprintf(label, sizeof label, "%s t%d p%d", a->backend, a->threads, a->prompt_len);
    legend(f, k++, label);
  }
  fputs("</svg>\n", f);
}

nnp_status nnp_llm_write_html(const nnp_llm_result *r, const char *path) {
  nnp_atomic_file af;
  nnp_status s = nnp_atomic_open(&af, path);
  if (s != NNP_OK) return nnp_error_context(s, "--html");
  FILE *f = af.f;
  fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>nnperf llm bench</title></head>\n"
        "<body style=\"font-family:sans-serif;max-width:960px;margin:auto\">\n<h1>nnperf llm bench</h1>\n<p>Model: ",
        f);
  esc(f, r->model);
  fputs("</p>\n<pre>", f);
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  if (mem) {
    nnp_llm_report_table(mem, r);
    fclose(mem);
    esc(f, buf);
    free(buf);
  }
  fputs("</pre>\n", f);
  cdf_chart(f, r, 0);
  cdf_chart(f, r, 1);
  concurrency_chart(f, r);
  fputs("<p>Every number above comes from the per-request token times in the JSON result "
        "(rows[].requests[].token_t).</p>\n</body></html>\n",
        f);
  return nnp_atomic_commit(&af);
}
