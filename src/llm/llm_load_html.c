/* nnperf llm load as one self-contained HTML page: TTFT and TPOT (P50, P99) against the
 * offered load, output tokens/s against concurrency, and the rows' table. Inline SVG, no
 * script, as the bench report draws (src/report/report_html.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "llm/llm_load_result.h"
#include "util/atomic_file.h"

typedef struct series {
  const char *name, *color;
  double x[64], y[64];
  int n;
} series;

static void html_text(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '<') fputs("&lt;", f);
    else if (*s == '>') fputs("&gt;", f);
    else if (*s == '&') fputs("&amp;", f);
    else fputc(*s, f);
  }
}

/* A line chart of the series (points sorted by x as given), axes from 0. */
static void chart(FILE *f, const char *title, const char *xlabel, const char *ylabel, const series *s, int ns) {
  double xmax = 0, ymax = 0;
  for (int k = 0; k < ns; k++)
    for (int i = 0; i < s[k].n; i++) {
      if (s[k].x[i] > xmax) xmax = s[k].x[i];
      if (isfinite(s[k].y[i]) && s[k].y[i] > ymax) ymax = s[k].y[i];
    }
  if (xmax <= 0 || ymax <= 0) return;
  const double W = 560, H = 300, L = 60, B = 40, T = 30;
  fprintf(f, "<svg width='%g' height='%g' xmlns='http://www.w3.org/2000/svg' font-size='12'>\n", W + 160, H);
  fprintf(f, "<text x='%g' y='18' font-weight='bold'>", L);
  html_text(f, title);
  fprintf(f, "</text><line x1='%g' y1='%g' x2='%g' y2='%g' stroke='black'/>", L, H - B, W, H - B);
  fprintf(f, "<line x1='%g' y1='%g' x2='%g' y2='%g' stroke='black'/>\n", L, T, L, H - B);
  fprintf(f, "<text x='%g' y='%g'>%s (max %.3g)</text>", L + 150, H - 8, xlabel, xmax);
  fprintf(f, "<text x='4' y='%g'>%.3g</text><text x='4' y='%g'>%s</text>\n", T + 4, ymax, (H - B + T) / 2, ylabel);
  for (int k = 0; k < ns; k++) {
    if (!s[k].n) continue;
    fprintf(f, "<polyline fill='none' stroke='%s' stroke-width='2' points='", s[k].color);
    for (int i = 0; i < s[k].n; i++)
      if (isfinite(s[k].y[i]))
        fprintf(f, "%.1f,%.1f ", L + (W - L) * s[k].x[i] / xmax, (H - B) - (H - B - T) * s[k].y[i] / ymax);
    fprintf(f, "'/><text x='%g' y='%d' fill='%s'>%s</text>\n", W + 10, (int)T + 16 * k, s[k].color, s[k].name);
  }
  fputs("</svg>\n", f);
}

static void latency_vs_load(FILE *f, const nnp_llm_load_result *r) {
  series s[4] = {{"TTFT P50 (ms)", "#1f77b4", {0}, {0}, 0}, {"TTFT P99 (ms)", "#aec7e8", {0}, {0}, 0},
                 {"TPOT P50 (ms)", "#d62728", {0}, {0}, 0}, {"TPOT P99 (ms)", "#ff9896", {0}, {0}, 0}};
  int open = 0;
  for (int i = 0; i < r->n_rows; i++) open += r->rows[i].rate > 0;
  for (int i = 0; i < r->n_rows && s[0].n < 64; i++) {
    const nnp_llm_load_row *w = &r->rows[i];
    double x = open ? w->rate : w->concurrency;
    if (x <= 0 || w->m.n_ok == 0) continue;
    /* probes come in search order: insert sorted by x */
    int at = s[0].n;
    while (at > 0 && s[0].x[at - 1] > x) at--;
    double y[4] = {w->m.ttft.p50 * 1e3, w->m.ttft.p99 * 1e3, w->m.tpot.n ? w->m.tpot.p50 * 1e3 : NAN,
                   w->m.tpot.n ? w->m.tpot.p99 * 1e3 : NAN};
    for (int k = 0; k < 4; k++) {
      memmove(&s[k].x[at + 1], &s[k].x[at], sizeof(double) * (size_t)(s[k].n - at));
      memmove(&s[k].y[at + 1], &s[k].y[at], sizeof(double) * (size_t)(s[k].n - at));
      s[k].x[at] = x;
      s[k].y[at] = y[k];
      s[k].n++;
    }
  }
  chart(f, "TTFT and TPOT against offered load", open ? "request rate (req/s)" : "concurrency", "ms", s, 4);
}

static void throughput_vs_concurrency(FILE *f, const nnp_llm_load_result *r) {
  series s[1] = {{"output tokens/s", "#2ca02c", {0}, {0}, 0}};
  for (int i = 0; i < r->n_rows && s[0].n < 64; i++)
    if (!strcmp(r->rows[i].scenario, "closed") && r->rows[i].m.n_ok) {
      s[0].x[s[0].n] = r->rows[i].concurrency;
      s[0].y[s[0].n++] = r->rows[i].m.out_tok_per_s;
    }
  chart(f, "Output tokens/s against concurrency", "concurrent streams", "tok/s", s, 1);
}

/* The CNN report's footprint and energy cells: MiB, and mJ per output token or "not
 * available here" with the reason on hover. */
static void footprint_energy_cells(FILE *f, const nnp_row_extras *x) {
  if (x->runtime_bytes > 0)
    fprintf(f, "<td>%.1f</td><td>%.1f</td>", (double)x->runtime_bytes / 1048576.0, (double)x->model_bytes / 1048576.0);
  else fputs("<td>-</td><td>-</td>", f);
  if (x->energy_j >= 0) fprintf(f, "<td>%.3g</td></tr>\n", x->energy_j * 1e3);
  else {
    fputs("<td title='", f);
    html_text(f, x->energy_source);
    fputs("'>not available here</td></tr>\n", f);
  }
}

static void emit(FILE *f, const nnp_llm_load_result *r) {
  fputs("<!doctype html><html><head><meta charset='utf-8'><title>nnperf llm load</title></head>"
        "<body style='font-family:sans-serif'>\n<h1>nnperf llm load</h1>\n<p>", f);
  html_text(f, r->command_line);
  /* the controlled variables: weight type, and each row's repack with its reason */
  fputs("</p>\n<p>", f);
  html_text(f, r->backend);
  fputs(r->weight_type[0] ? ", weights " : "", f);
  html_text(f, r->weight_type);
  for (int i = 0; i < r->n_rows; i++)
    if (r->rows[i].note[0] && (i == 0 || strcmp(r->rows[i].note, r->rows[i - 1].note))) {
      fputs("<br>", f);
      html_text(f, r->rows[i].label);
      fputs(": ", f);
      html_text(f, r->rows[i].note);
    }
  fputs("</p>\n", f);
  latency_vs_load(f, r);
  throughput_vs_concurrency(f, r);
  fputs("<table border='1' cellpadding='3'><tr><th>row</th><th>ok</th><th>failed</th><th>req/s</th><th>goodput</th>"
        "<th>out tok/s</th><th>TTFT P50 ms</th><th>TTFT P99 ms</th><th>TPOT P50 ms</th><th>TPOT P99 ms</th>"
        "<th>E2E P99 ms</th><th>runtime MiB</th><th>model MiB</th><th>energy mJ/output token</th></tr>\n", f);
  for (int i = 0; i < r->n_rows; i++) {
    const nnp_llm_load_row *w = &r->rows[i];
    fputs("<tr><td>", f);
    html_text(f, w->label);
    fprintf(f, "</td><td>%d</td><td>%d</td><td>%.2f</td><td>%.2f</td><td>%.1f</td><td>%.1f</td><td>%.1f</td>"
               "<td>%.2f</td><td>%.2f</td><td>%.0f</td>",
            w->m.n_ok, w->m.n_failed, w->m.req_per_s, w->m.goodput_req_per_s, w->m.out_tok_per_s,
            w->m.ttft.p50 * 1e3, w->m.ttft.p99 * 1e3, w->m.tpot.p50 * 1e3, w->m.tpot.p99 * 1e3, w->m.e2e.p99 * 1e3);
    footprint_energy_cells(f, &w->ext);
  }
  fputs("</table></body></html>\n", f);
}

nnp_status nnp_llm_load_write_html(const nnp_llm_load_result *r, const char *path) {
  nnp_atomic_file af;
  nnp_status s = nnp_atomic_open(&af, path);
  if (s != NNP_OK) return nnp_error_context(s, "llm load html");
  emit(af.f, r);
  return nnp_atomic_commit(&af);
}
