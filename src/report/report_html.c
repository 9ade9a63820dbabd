/* HTML report with inline SVG. Everything is in the one file: CSS inline, charts as SVG
 * elements, the result JSON embedded (for scripts) and as a data: URI (for people), so
 * the page can be mailed, archived or opened offline and still shows everything. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nnperf/alloc.h"
#include "nnperf/report.h"
#include "nnperf/report_html.h"
#include "util/atomic_file.h"

/* --- text ----------------------------------------------------------------------------- */

/* Text and attribute values: the five characters HTML gives meaning to. */
static void esc(FILE *f, const char *s) {
  for (; *s; s++) switch (*s) {
      case '<': fputs("&lt;", f); break;
      case '>': fputs("&gt;", f); break;
      case '&': fputs("&amp;", f); break;
      case '"': fputs("&quot;", f); break;
      case '\'': fputs("&#39;", f); break;
      default: fputc(*s, f);
    }
}

static void base64(FILE *f, const unsigned char *p, size_t n) {
  static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (size_t i = 0; i < n; i += 3) {
    unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
    fputc(tab[v >> 18 & 63], f);
    fputc(tab[v >> 12 & 63], f);
    fputc(i + 1 < n ? tab[v >> 6 & 63] : '=', f);
    fputc(i + 2 < n ? tab[v & 63] : '=', f);
  }
}

/* Seconds in the unit a reader wants: "812 us", "12.3 ms", "1.52 s". */
static void fmt_time(char *out, size_t n, double s) {
  if (!(s >= 0) || !isfinite(s)) snprintf(out, n, "-");
  else if (s < 1e-3) snprintf(out, n, "%.0f us", s * 1e6);
  else if (s < 0.9995) snprintf(out, n, "%.3g ms", s * 1e3); /* 0.9996 s is "1 s", not "1e+03 ms" */
  else snprintf(out, n, "%.3g s", s);
}

static void fmt_mib(char *out, size_t n, int64_t b) {
  if (b <= 0) snprintf(out, n, "-");
  else snprintf(out, n, "%.1f MiB", (double)b / (1 << 20));
}

static int row_ok(const nnp_bench_row *w) { return w->status == NNP_ROW_OK && w->n_samples > 0 && w->samples; }

/* --- SVG charts ----------------------------------------------------------------------- */

#define CHART_W 640.0
#define LEFT 190.0  /* room for row labels */
#define RIGHT 24.0

/* A "nice" axis maximum (1, 2, 5 x 10^k) at or above v. */
static double nice_ceil(double v) {
  if (!(v > 0)) return 1;
  double e = pow(10, floor(log10(v)));
  const double steps[] = {1, 2, 2.5, 5, 10};
  for (int i = 0; i < 5; i++)
    if (steps[i] * e >= v) return steps[i] * e;
  return 10 * e;
}

static const char *const palette[] = {"#3367d6", "#e8710a", "#188038", "#a142f4", "#c5221f", "#12a4af"};

/* A tick label: plain digits, never "1e+03" (issue 25: the clipped "1e+03ms" tick). */
static void tick_text(char *buf, size_t n, double v) {
  if (fabs(v) >= 100) snprintf(buf, n, "%.0f", v);
  else snprintf(buf, n, "%.3g", v);
}

/* Vertical grid lines and labels for a linear x axis 0..xmax (or lo..hi) in `unit`. */
static void x_axis(FILE *f, double lo, double hi, double y0, double y1, double scale, const char *unit) {
  for (int t = 0; t <= 4; t++) {
    double v = lo + (hi - lo) * t / 4, x = LEFT + (CHART_W - LEFT - RIGHT) * t / 4;
    char label[32];
    tick_text(label, sizeof label, v * scale);
    fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' class='grid'/>", x, y0, x, y1);
    fprintf(f, "<text x='%.1f' y='%.1f' class='tick' text-anchor='%s'>%s%s</text>", x, y1 + 14,
            t == 4 ? "end" : "middle", label, t == 4 ? unit : ""); /* the last label ends at the edge: not clipped */
  }
}

typedef struct bar_series {
  const char *name;
  double v[64], lo[64], hi[64]; /* lo/hi < 0: no whisker; v < 0: not measured */
} bar_series;

/* Horizontal grouped bars, one group per label, one bar per series, with optional CI
 * whiskers. scale converts values to the axis unit (1e3 for ms). */
static void bar_chart(FILE *f, const char *title, const char *id, int n, const char *const *labels,
                      const bar_series *series, int n_series, double scale, const char *unit) {
  double vmax = 0;
  for (int s = 0; s < n_series; s++)
    for (int i = 0; i < n; i++) {
      if (series[s].v[i] > vmax) vmax = series[s].v[i];
      if (series[s].hi[i] > vmax) vmax = series[s].hi[i];
    }
  double xmax = nice_ceil(vmax * scale) / scale, bar_h = 14, gap = 10;
  /* the legend has its own line under the title: long titles must not run into it */
  double group_h = n_series * bar_h + gap, top = n_series > 1 ? 46 : 30, h = top + n * group_h + 30;
  double plot_w = CHART_W - LEFT - RIGHT;
  fprintf(f, "<figure><svg id='%s' class='chart' viewBox='0 0 %.0f %.0f' role='img' aria-label='", id, CHART_W, h);
  esc(f, title);
  fprintf(f, "'><text x='4' y='16' class='title'>");
  esc(f, title);
  fputs("</text>", f);
  /* legend entries as wide as their names (about 6 px a character at 11 px) */
  for (int s = 0, x = (int)LEFT; s < n_series && n_series > 1; s++) {
    fprintf(f, "<rect x='%d' y='24' width='10' height='10' fill='%s'/><text x='%d' y='33' class='tick'>%s</text>", x,
            palette[s % 6], x + 14, series[s].name);
    x += 14 + 6 * (int)strlen(series[s].name) + 16;
  }
  x_axis(f, 0, xmax, top - 4, top + n * group_h, scale, unit);
  for (int i = 0; i < n; i++) {
    double gy = top + i * group_h;
    fprintf(f, "<text x='%.0f' y='%.1f' class='label' text-anchor='end'>", LEFT - 6, gy + n_series * bar_h / 2 + 4);
    esc(f, labels[i]);
    fputs("</text>", f);
    for (int s = 0; s < n_series; s++) {
      double v = series[s].v[i], y = gy + s * bar_h;
      if (!(v >= 0)) {
        fprintf(f, "<text x='%.0f' y='%.1f' class='tick'>not measured</text>", LEFT + 4, y + 11);
        continue;
      }
      char val[32];
      snprintf(val, sizeof val, "%.3g %s", v * scale, unit);
      fprintf(f, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='%s'><title>%s: %s</title></rect>", LEFT, y + 1,
              plot_w * v / xmax, bar_h - 2, palette[s % 6], series[s].name, val);
      if (series[s].lo[i] >= 0 && series[s].hi[i] >= 0) {
        double x0 = LEFT + plot_w * series[s].lo[i] / xmax, x1 = LEFT + plot_w * series[s].hi[i] / xmax,
               ym = y + bar_h / 2;
        fprintf(f,
                "<path d='M%.1f %.1fH%.1fM%.1f %.1fV%.1fM%.1f %.1fV%.1f' class='whisker'><title>95%% CI %.3g..%.3g "
                "%s</title></path>",
                x0, ym, x1, x0, ym - 4, ym + 4, x1, ym - 4, ym + 4, series[s].lo[i] * scale, series[s].hi[i] * scale,
                unit);
      }
    }
  }
  fputs("</svg></figure>\n", f);
}

/* Empirical CDF of one row's samples: x latency (ms) on the axis lo..hi that every row's
 * CDF shares (so rows compare by eye), y fraction of iterations. */
static void cdf_chart(FILE *f, const nnp_bench_row *w, const double *sorted, int idx, double lo, double hi) {
  int n = w->n_samples;
  if (hi <= lo) hi = lo * 1.01 + 1e-9;
  double h = 200, top = 24, bottom = 170, plot_w = CHART_W - LEFT - RIGHT;
  fprintf(f, "<figure><svg id='cdf-%d' class='chart cdf' viewBox='0 0 %.0f %.0f' role='img' aria-label='latency CDF'>",
          idx, CHART_W, h);
  fputs("<text x='4' y='16' class='title'>latency CDF (fraction of iterations at or below)</text>", f);
  x_axis(f, lo, hi, top, bottom, 1e3, " ms");
  for (int t = 0; t <= 4; t++) {
    double y = bottom - (bottom - top) * t / 4;
    fprintf(f, "<line x1='%.0f' y1='%.1f' x2='%.0f' y2='%.1f' class='grid'/>", LEFT, y, CHART_W - RIGHT, y);
    fprintf(f, "<text x='%.0f' y='%.1f' class='tick' text-anchor='end'>%.2f</text>", LEFT - 4, y + 4, t / 4.0);
  }
  /* at most ~500 points: the curve looks the same, the file stays small */
  int step = n > 500 ? n / 500 : 1;
  fputs("<polyline class='cdfline' points='", f);
  for (int i = 0; i < n; i += step) {
    int k = i + step >= n ? n - 1 : i;
    fprintf(f, "%.1f,%.1f ", LEFT + plot_w * (sorted[k] - lo) / (hi - lo), bottom - (bottom - top) * (k + 1.0) / n);
    if (k == n - 1) break;
  }
  fputs("'/>", f);
  const struct {
    const char *name;
    double v;
  } marks[] = {{"P50", w->stats.p50}, {"P99", w->stats.p99}};
  for (int m = 0; m < 2; m++) {
    if (!(marks[m].v >= lo)) continue;
    double x = LEFT + plot_w * (marks[m].v - lo) / (hi - lo);
    fprintf(f, "<line x1='%.1f' y1='%.0f' x2='%.1f' y2='%.0f' class='mark'/><text x='%.1f' y='%.0f' class='tick'>%s</text>",
            x, top, x, bottom, x + 3, top + 10 + 12 * m, marks[m].name);
  }
  fputs("</svg></figure>\n", f);
}

/* Box plot: box P25..P75, line at the median, whiskers to the furthest samples within
 * 1.5 IQR (Tukey), samples beyond drawn as dots (at most 200 of them). */
static void box_chart(FILE *f, const nnp_bench_row *w, const double *sorted, int idx) {
  int n = w->n_samples;
  double q1 = nnp_percentile_sorted(sorted, n, 0.25), q2 = nnp_percentile_sorted(sorted, n, 0.5),
         q3 = nnp_percentile_sorted(sorted, n, 0.75), iqr = q3 - q1;
  double wl = q1, wh = q3;
  int outliers = 0;
  for (int i = 0; i < n; i++) {
    if (sorted[i] >= q1 - 1.5 * iqr && sorted[i] < wl) wl = sorted[i];
    if (sorted[i] <= q3 + 1.5 * iqr && sorted[i] > wh) wh = sorted[i];
  }
  double lo = sorted[0], hi = sorted[n - 1];
  if (hi <= lo) hi = lo * 1.01 + 1e-9;
  double plot_w = CHART_W - LEFT - RIGHT, y0 = 30, y1 = 62;
#define X(v) (LEFT + plot_w * ((v) - lo) / (hi - lo))
  fprintf(f, "<figure><svg id='box-%d' class='chart box' viewBox='0 0 %.0f 96' role='img' aria-label='box plot'>", idx,
          CHART_W);
  fputs("<text x='4' y='16' class='title'>box plot (P25..P75, median, 1.5 IQR whiskers, outliers)</text>", f);
  x_axis(f, lo, hi, y0 - 6, y1 + 6, 1e3, " ms");
  fprintf(f, "<path d='M%.1f %.1fH%.1fM%.1f %.1fH%.1fM%.1f %.1fV%.1fM%.1f %.1fV%.1f' class='whisker'/>", X(wl),
          (y0 + y1) / 2, X(q1), X(q3), (y0 + y1) / 2, X(wh), X(wl), y0 + 8, y1 - 8, X(wh), y0 + 8, y1 - 8);
  fprintf(f, "<rect x='%.1f' y='%.0f' width='%.1f' height='%.0f' class='boxrect'/>", X(q1), y0, X(q3) - X(q1) + 0.5,
          y1 - y0);
  fprintf(f, "<line x1='%.1f' y1='%.0f' x2='%.1f' y2='%.0f' class='median'/>", X(q2), y0, X(q2), y1);
  for (int i = 0; i < n; i++)
    if (sorted[i] < wl || sorted[i] > wh) {
      if (++outliers <= 200) fprintf(f, "<circle cx='%.1f' cy='%.1f' r='2' class='outlier'/>", X(sorted[i]), (y0 + y1) / 2);
    }
#undef X
  fprintf(f, "<text x='%.0f' y='%.0f' class='tick' text-anchor='end'>%d outlier%s</text>", LEFT - 6, (y0 + y1) / 2 + 4,
          outliers, outliers == 1 ? "" : "s");
  fputs("</svg></figure>\n", f);
}

/* --- load and cold start ---------------------------------------------------------------- */

static void td_time(FILE *f, double v);

static int curve_run(const nnp_load_run_record *u) {
  /* the probe and the capacity run put every query in the queue at once: no rate to plot */
  return u->completed > 0 && u->achieved_qps > 0 && u->p50_s >= 0 && strcmp(u->purpose, "probe") &&
         strcmp(u->purpose, "capacity");
}

static int cmp_by_rate(const void *a, const void *b) {
  const nnp_load_run_record *x = *(const nnp_load_run_record *const *)a, *y = *(const nnp_load_run_record *const *)b;
  double kx = x->target_qps > 0 ? x->target_qps : x->achieved_qps, ky = y->target_qps > 0 ? y->target_qps : y->achieved_qps;
  return (kx > ky) - (kx < ky);
}

/* Latency vs achieved QPS: P50 and P99 of every run that offered a rate, in the order of
 * the rates offered (past saturation the achieved rate stops growing and the curve turns
 * upward: the knee), with the offline capacity, the found max QPS and the P99 bound. */
static void load_curve(FILE *f, const nnp_load_section *l) {
  const nnp_load_run_record **pts = nnp_malloc(sizeof *pts * (size_t)(l->n_runs > 0 ? l->n_runs : 1));
  if (!pts) return;
  int n = 0;
  double xmax = 0, ymax = 0;
  for (int i = 0; i < l->n_runs; i++)
    if (curve_run(&l->runs[i])) {
      const nnp_load_run_record *u = &l->runs[i];
      pts[n++] = u;
      if (u->achieved_qps > xmax) xmax = u->achieved_qps;
      if (u->p99_s > ymax) ymax = u->p99_s;
    }
  if (n == 0) {
    nnp_free(pts);
    return;
  }
  qsort(pts, (size_t)n, sizeof *pts, cmp_by_rate);
  if (l->capacity_qps > xmax) xmax = l->capacity_qps;
  if (l->latency_bound_s > ymax) ymax = l->latency_bound_s;
  xmax = nice_ceil(xmax * 1.05);
  ymax = nice_ceil(ymax * 1e3) / 1e3;
  double left = 70, top = 46, bottom = 250, h = 290, plot_w = CHART_W - left - RIGHT;
#define PX(v) (left + plot_w * (v) / xmax)
#define PY(v) (bottom - (bottom - top) * (v) / ymax)
  fprintf(f, "<figure><svg id='load-curve' class='chart' viewBox='0 0 %.0f %.0f' role='img' "
             "aria-label='latency vs achieved QPS'>", CHART_W, h);
  fputs("<text x='4' y='16' class='title'>latency vs achieved QPS (from each query's scheduled arrival)</text>", f);
  for (int s = 0; s < 2; s++)
    fprintf(f, "<rect x='%.0f' y='24' width='10' height='10' fill='%s'/><text x='%.0f' y='33' class='tick'>%s</text>",
            left + s * 90.0, palette[s], left + 14 + s * 90.0, s ? "P99" : "P50");
  for (int t = 0; t <= 4; t++) {
    double x = left + plot_w * t / 4, y = bottom - (bottom - top) * t / 4;
    fprintf(f, "<line x1='%.1f' y1='%.0f' x2='%.1f' y2='%.0f' class='grid'/>", x, top, x, bottom);
    fprintf(f, "<text x='%.1f' y='%.0f' class='tick' text-anchor='middle'>%.4g%s</text>", x, bottom + 14, xmax * t / 4,
            t == 4 ? " QPS" : "");
    fprintf(f, "<line x1='%.0f' y1='%.1f' x2='%.0f' y2='%.1f' class='grid'/>", left, y, CHART_W - RIGHT, y);
    fprintf(f, "<text x='%.0f' y='%.1f' class='tick' text-anchor='end'>%.4g%s</text>", left - 4, y + 4, ymax * 1e3 * t / 4,
            t == 4 ? " ms" : "");
  }
  if (l->latency_bound_s > 0)
    fprintf(f, "<line x1='%.0f' y1='%.1f' x2='%.0f' y2='%.1f' class='mark'/><text x='%.0f' y='%.1f' class='tick' "
               "text-anchor='end'>P99 bound</text>",
            left, PY(l->latency_bound_s), CHART_W - RIGHT, PY(l->latency_bound_s), CHART_W - RIGHT - 2,
            PY(l->latency_bound_s) - 3);
  const struct {
    const char *name;
    double v;
  } marks[] = {{"capacity", l->capacity_qps}, {"max QPS", l->max_qps}};
  for (int m = 0; m < 2; m++) {
    if (!(marks[m].v > 0)) continue;
    fprintf(f, "<line id='load-%s' x1='%.1f' y1='%.0f' x2='%.1f' y2='%.0f' class='mark'/><text x='%.1f' y='%.0f' "
               "class='tick'>%s %.4g/s</text>",
            m ? "maxqps" : "capacity", PX(marks[m].v), top, PX(marks[m].v), bottom, PX(marks[m].v) + 3,
            top + 10 + 12 * m, marks[m].name, marks[m].v);
  }
  for (int s = 0; s < 2; s++) {
    fprintf(f, "<polyline fill='none' stroke='%s' stroke-width='2.5' points='", palette[s]);
    for (int i = 0; i < n; i++) fprintf(f, "%.1f,%.1f ", PX(pts[i]->achieved_qps), PY(s ? pts[i]->p99_s : pts[i]->p50_s));
    fputs("'/>", f);
    for (int i = 0; i < n; i++) {
      double v = s ? pts[i]->p99_s : pts[i]->p50_s;
      char t[32];
      fmt_time(t, sizeof t, v);
      fprintf(f, "<circle cx='%.1f' cy='%.1f' r='4' fill='%s'><title>%s %.4g/s offered, %.4g/s achieved: %s %s</title>"
                 "</circle>",
              PX(pts[i]->achieved_qps), PY(v), palette[s], pts[i]->purpose, pts[i]->target_qps > 0 ? pts[i]->target_qps : 0,
              pts[i]->achieved_qps, s ? "P99" : "P50", t);
    }
  }
#undef PX
#undef PY
  fputs("</svg></figure>\n", f);
  nnp_free(pts);
}

static void td_rate(FILE *f, double v) {
  if (v >= 0) fprintf(f, v >= 100 ? "<td>%.0f</td>" : "<td>%.3g</td>", v);
  else fputs("<td>-</td>", f);
}

static void load_section(FILE *f, const nnp_load_section *l) {
  char b[32];
  fputs("<h2>Load</h2>\n<dl class='env' id='load-config'>", f);
  fputs("<dt>scenario</dt><dd>", f);
  esc(f, l->scenario);
  fprintf(f, "</dd><dt>instances</dt><dd>%d worker process%s", l->instances, l->instances == 1 ? "" : "es");
  if (strcmp(l->scenario, "multi-stream") && l->streams > 1) fprintf(f, ", %d streams each", l->streams);
  fmt_time(b, sizeof b, l->duration_s);
  fprintf(f, "</dd><dt>run length</dt><dd>%s%s", b, l->max_queries > 0 ? "" : "");
  if (l->max_queries > 0) fprintf(f, ", at most %lld queries", (long long)l->max_queries);
  fprintf(f, "</dd><dt>seed</dt><dd>%llu</dd>", (unsigned long long)l->seed);
  if (l->qps > 0) fprintf(f, "<dt>target rate</dt><dd>%.4g QPS (Poisson)</dd>", l->qps);
  if (l->latency_bound_s > 0) {
    fmt_time(b, sizeof b, l->latency_bound_s);
    fprintf(f, "<dt>P99 bound</dt><dd>%s</dd>", b);
  }
  if (l->capacity_qps > 0) fprintf(f, "<dt>offline capacity</dt><dd>%.4g queries/s (one query per request)</dd>", l->capacity_qps);
  if (l->max_qps >= 0) fprintf(f, "<dt>max QPS</dt><dd id='load-max-qps'>%.4g (P99 within the bound, nothing dropped)</dd>", l->max_qps);
  if (l->backend_options[0]) {
    fputs("<dt>backend options</dt><dd>", f);
    esc(f, l->backend_options);
    fputs("</dd>", f);
  }
  fputs("</dl>\n", f);
  load_curve(f, l);
  fputs("<div class='scroll'><table id='load-runs'><thead><tr><th>run</th><th>target/s</th><th>offered/s</th>"
        "<th>achieved/s</th><th>P50</th><th>P90</th><th>P99</th><th>P99.9</th><th>queries</th><th>late</th>"
        "<th>dropped</th><th>passed</th></tr></thead><tbody>\n",
        f);
  for (int i = 0; i < l->n_runs; i++) {
    const nnp_load_run_record *u = &l->runs[i];
    fputs("<tr><td>", f);
    esc(f, u->purpose);
    fputs("</td>", f);
    td_rate(f, u->target_qps);
    td_rate(f, u->offered_qps);
    td_rate(f, u->achieved_qps);
    td_time(f, u->p50_s);
    td_time(f, u->p90_s);
    td_time(f, u->p99_s);
    td_time(f, u->p999_s);
    fprintf(f, "<td>%lld</td><td>%lld</td><td class='%s'>%lld</td><td class='%s'>%s</td></tr>\n", (long long)u->queries,
            (long long)u->late, u->dropped ? "bad" : "", (long long)u->dropped, u->passed ? "good" : "bad",
            u->passed ? "yes" : "no");
  }
  fputs("</tbody></table></div>\n<p class='meta'>Latency from each query's scheduled arrival to its completion (time "
        "queued counts), nearest-rank percentiles over completed queries. Every run's latencies (or a seeded sample "
        "of 1000) are in the result JSON.</p>\n",
        f);
  if (l->n_startup > 0) {
    fputs("<h3>Worker start-up</h3><div class='scroll'><table id='load-startup'><thead><tr><th>worker</th>"
          "<th>start to ready</th><th>load</th><th>first inference</th><th>cold start</th></tr></thead><tbody>",
          f);
    for (int k = 0; k < l->n_startup; k++) {
      const nnp_load_startup *w = &l->startup[k];
      fprintf(f, "<tr><td>%d</td>", k + 1);
      td_time(f, w->spawn_to_ready_s);
      td_time(f, w->load_s);
      td_time(f, w->first_s);
      td_time(f, w->cold_start_s);
      fputs("</tr>", f);
    }
    fputs("</tbody></table></div>\n", f);
  }
}

static void coldstart_section(FILE *f, const nnp_coldstart_section *c) {
  const struct {
    const char *name;
    const nnp_coldstart_series *s;
  } series[] = {{"no cache", &c->plain}, {"cold cache", &c->cold}, {"warm cache", &c->warm}};
  fputs("<h2>Cold start</h2>\n<div class='scroll'><table id='coldstart'><thead><tr><th>phase</th>", f);
  for (int k = 0; k < 3; k++)
    if (series[k].s->n > 0) fprintf(f, "<th>%s P50</th><th>%s P99</th>", series[k].name, series[k].name);
  fputs("</tr></thead><tbody>\n", f);
  for (int ph = 0; ph < NNP_COLDSTART_PHASES; ph++) {
    fprintf(f, "<tr><td>%s</td>", nnp_coldstart_phase_names[ph]);
    for (int k = 0; k < 3; k++)
      if (series[k].s->n > 0) {
        td_time(f, nnp_coldstart_quantile(series[k].s, ph, 0.5));
        td_time(f, nnp_coldstart_quantile(series[k].s, ph, 0.99));
      }
    fputs("</tr>\n", f);
  }
  fprintf(f, "</tbody></table></div>\n<p class='meta'>%d fresh processes", c->plain.n);
  if (c->warm.n > 0) {
    fprintf(f, " without the plan cache, one that filled it (");
    esc(f, c->cache_dir);
    fprintf(f, "), %d with the warm cache", c->warm.n);
  }
  fputs("; nearest-rank percentiles.</p>\n", f);
  bar_series *bs = nnp_calloc(2, sizeof *bs);
  if (!bs) return;
  const char *labels[NNP_COLDSTART_PHASES];
  const nnp_coldstart_series *warm = c->warm.n > 0 ? &c->warm : NULL;
  bs[0].name = warm ? "no cache" : "P50";
  bs[1].name = warm ? "warm cache" : "P99";
  for (int ph = 0; ph < NNP_COLDSTART_PHASES; ph++) {
    labels[ph] = nnp_coldstart_phase_names[ph];
    bs[0].v[ph] = nnp_coldstart_quantile(&c->plain, ph, 0.5);
    bs[1].v[ph] = warm ? nnp_coldstart_quantile(warm, ph, 0.5) : nnp_coldstart_quantile(&c->plain, ph, 0.99);
    bs[0].lo[ph] = bs[0].hi[ph] = bs[1].lo[ph] = bs[1].hi[ph] = -1;
  }
  bar_chart(f, warm ? "cold start by phase, P50: without and with the plan cache" : "cold start by phase: P50 and P99",
            "coldstart-phases", NNP_COLDSTART_PHASES, labels, bs, 2, 1e3, "ms");
  nnp_free(bs);
}

/* --- page ----------------------------------------------------------------------------- */

static const char css[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;max-width:1100px;"
    "padding:12px;color:#202124;background:#fff}"
    "h1{font-size:20px;margin:4px 0}h2{font-size:17px;margin:22px 0 8px;border-bottom:1px solid #ddd}"
    "h3{font-size:15px;margin:14px 0 4px}"
    ".meta{color:#5f6368;word-break:break-all}.noisy{background:#fce8e6;color:#a50e0e;padding:6px 10px;"
    "border-radius:4px;margin:8px 0}"
    ".scroll{overflow-x:auto}table{border-collapse:collapse;font-variant-numeric:tabular-nums}"
    "table{font-size:13px}th,td{padding:3px 6px;border-bottom:1px solid #eee;text-align:right;white-space:nowrap}"
    "th:first-child,td:first-child{text-align:left}th{background:#f1f3f4}"
    ".bad{color:#c5221f;font-weight:600}.good{color:#188038}"
    "figure{margin:6px 0}svg.chart{width:100%;height:auto;max-width:760px;display:block}"
    "svg .grid{stroke:#e0e0e0}svg .tick{font-size:11px;fill:#5f6368}svg .label{font-size:12px;fill:#202124}"
    "svg .title{font-size:13px;font-weight:600;fill:#202124}svg .whisker{stroke:#202124;stroke-width:1.5;fill:none}"
    "svg .cdfline{fill:none;stroke:#3367d6;stroke-width:2}svg .mark{stroke:#c5221f;stroke-dasharray:3 3}"
    "svg .boxrect{fill:#d2e3fc;stroke:#3367d6}svg .median{stroke:#c5221f;stroke-width:2}"
    "svg .outlier{fill:#e8710a;opacity:.6}"
    ".rows{display:grid;grid-template-columns:1fr 1fr;gap:8px 20px}.row{min-width:0}"
    "dl.env{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px}dl.env dt{color:#5f6368}"
    "dl.env dd{margin:0;word-break:break-word}a.dl{display:inline-block;margin:2px 8px 2px 0}"
    "@media (max-width:700px){body{padding:6px;font-size:13px}.rows{grid-template-columns:1fr}"
    "dl.env{grid-template-columns:1fr}dl.env dd{margin-bottom:4px}}"
    "@media print{a.dl,.nopr{display:none}body{max-width:none}h2{break-after:avoid}"
    "figure,.row,tr{break-inside:avoid}.scroll{overflow:visible}}";

static void td_time(FILE *f, double v) {
  char b[32];
  fmt_time(b, sizeof b, v);
  fprintf(f, "<td>%s</td>", b);
}

static void summary_table(FILE *f, const nnp_bench_result *r) {
  fputs("<div class='scroll'><table id='summary'><thead><tr><th>row</th><th>status</th><th>P50</th><th>P50 95% CI</th>"
        "<th>P99</th><th>P99 95% CI</th><th>CV</th><th>items/s</th><th>peak RSS</th><th>load</th><th>cold start</th>"
        "<th title='bytes of the files the worker loaded (docs/worker-protocol.md)'>runtime</th><th>model file</th>"
        "<th title='per inference, steady state, from RAPL or NVML only'>energy</th><th>device peak</th>"
        "<th title='max relative error vs the reference row, top-1 agreement'>accuracy</th></tr></thead><tbody>\n",
        f);
  for (int i = 0; i < r->n_rows; i++) {
    const nnp_bench_row *w = &r->rows[i];
    fputs("<tr><td>", f);
    esc(f, w->label);
    if (w->hw_class[0]) { /* a collected sweep: which machine measured it */
      fputs(" @", f);
      esc(f, w->hw_class);
    }
    fprintf(f, "</td><td class='%s'>%s</td>", w->status == NNP_ROW_OK ? "good" : "bad", nnp_row_status_name(w->status));
    if (w->stats.n > 0) {
      char a[32], b[32];
      td_time(f, w->stats.p50);
      fmt_time(a, sizeof a, w->stats.p50_lo), fmt_time(b, sizeof b, w->stats.p50_hi);
      fprintf(f, "<td>%s .. %s</td>", a, b);
      td_time(f, w->stats.p99);
      fmt_time(a, sizeof a, w->stats.p99_lo), fmt_time(b, sizeof b, w->stats.p99_hi);
      fprintf(f, "<td>%s .. %s%s</td><td>%.3f</td>", a, b, w->stats.p99_underpowered ? "*" : "", w->stats.cv);
      fprintf(f, w->items_per_s >= 100 ? "<td>%.0f</td>" : "<td>%.3g</td>", w->items_per_s);
    } else {
      fputs("<td>-</td><td>-</td><td>-</td><td>-</td><td>-</td><td>-</td>", f);
    }
    char m[32];
    fmt_mib(m, sizeof m, w->peak_rss_bytes);
    fprintf(f, "<td>%s</td>", m);
    td_time(f, w->load_s);
    td_time(f, w->cold_start_s);
    fmt_mib(m, sizeof m, w->ext.runtime_bytes);
    fprintf(f, "<td>%s</td>", m);
    fmt_mib(m, sizeof m, w->ext.model_bytes);
    fprintf(f, "<td>%s</td>", m);
    if (w->ext.energy_j >= 0) fprintf(f, "<td>%.3g mJ</td>", w->ext.energy_j * 1e3);
    else {
      fputs("<td title='", f);
      esc(f, w->ext.energy_source);
      fputs("'>not available here</td>", f);
    }
    fmt_mib(m, sizeof m, w->ext.dev_alloc_peak);
    fprintf(f, "<td>%s</td>", m);
    if (w->acc.compared) {
      fprintf(f, "<td class='%s' title='", w->acc.within_tol ? "good" : "bad");
      esc(f, w->acc.criterion[0] ? w->acc.criterion : "max_rel within the precision's tolerance");
      fprintf(f, "'>%.2g", w->acc.max_rel);
      /* int8 / mixed rows are judged by cosine (bench/accuracy.h): show what was judged */
      if (w->precision >= NNP_INT8) fprintf(f, ", cos %.5f", w->acc.cosine);
      if (w->acc.top1 >= 0) fprintf(f, ", top-1 %.0f%%", w->acc.top1 * 100);
      fprintf(f, "%s</td>", w->acc.within_tol ? "" : " (beyond tolerance)");
    } else {
      /* a load or coldstart run compares no outputs: its one row is no reference */
      fputs(w->status == NNP_ROW_OK && !r->load && !r->coldstart ? "<td>reference</td>" : "<td>-</td>", f);
    }
    fputs("</tr>\n", f);
    if (w->status != NNP_ROW_OK && w->reason[0]) {
      fputs("<tr><td colspan='12' class='meta' style='white-space:normal;text-align:left'>", f);
      esc(f, w->reason);
      fputs("</td></tr>\n", f);
    }
  }
  fputs("</tbody></table></div>\n<p class='meta'>* P99 from fewer than 1000 samples (fewer than 10 beyond it): "
        "indicative only. CIs are 95% bootstrap intervals that include the spread between worker processes. "
        "Accuracy: largest error relative to the output's scale vs the reference row, and top-1 agreement.</p>\n",
        f);
}

static void env_block(FILE *f, const nnp_bench_result *r) {
  const nnp_env *e = &r->env;
  char mem[64], mhz[32], load[32], cpus[32];
  snprintf(mem, sizeof mem, "%.1f GiB total, %.1f GiB available", (double)e->mem_total_bytes / (1 << 30),
           (double)e->mem_available_bytes / (1 << 30));
  snprintf(mhz, sizeof mhz, "%.0f", e->cpu_mhz);
  snprintf(load, sizeof load, "%.2f", e->loadavg1);
  snprintf(cpus, sizeof cpus, "%d online, %d allowed", e->cpus_online, e->cpus_allowed);
  const struct {
    const char *k, *v;
  } kv[] = {{"CPU", e->cpu_model},     {"CPU flags", e->cpu_flags}, {"CPUs", cpus},
            {"memory", mem},           {"OS", e->os},               {"kernel", e->kernel},
            {"host", e->hostname},     {"compiler", e->compiler},   {"build", e->build_flags},
            {"governor", e->governor}, {"CPU MHz", mhz},            {"load average (1 min)", load},
            {"GPU", e->gpu},           {"measured at", e->timestamp}};
  fputs("<dl class='env' id='env'>", f);
  for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++) {
    fprintf(f, "<dt>%s</dt><dd>", kv[i].k);
    esc(f, kv[i].v[0] ? kv[i].v : "-");
    fputs("</dd>", f);
  }
  fputs("</dl>\n", f);
}

/* A collected sweep (nnperf sweep) labels rows "MODEL CONFIG": true when row w is model m's. */
static int same_model(const nnp_bench_row *w, const char *m, size_t len) {
  return strlen(w->label) > len && !strncmp(w->label, m, len) && w->label[len] == ' ';
}

/* One chart of model m (label prefix of len bytes): its configurations as groups, the
 * hardware classes as series side by side (P50, whiskers the 95% CI). Classes are put next
 * to each other, never ranked as one machine. */
static void class_chart(FILE *f, const nnp_bench_result *r, const char *m, size_t len, const char *const *cls,
                        int n_cls, int id) {
  char cfg[64][96];
  const char *labels[64];
  int n_cfg = 0;
  bar_series *bs = nnp_calloc((size_t)n_cls, sizeof *bs);
  if (!bs) return;
  for (int c = 0; c < n_cls; c++) {
    bs[c].name = cls[c];
    for (int i = 0; i < 64; i++) bs[c].v[i] = bs[c].lo[i] = bs[c].hi[i] = -1;
  }
  for (int i = 0; i < r->n_rows; i++) {
    const nnp_bench_row *w = &r->rows[i];
    if (!same_model(w, m, len) || !row_ok(w)) continue;
    int k = 0, c = 0;
    while (k < n_cfg && strcmp(cfg[k], w->label + len + 1)) k++;
    while (c < n_cls && strcmp(cls[c], w->hw_class)) c++;
    if (c == n_cls || (k == n_cfg && n_cfg == 64)) continue;
    if (k == n_cfg) snprintf(cfg[n_cfg++], sizeof cfg[0], "%s", w->label + len + 1);
    bs[c].v[k] = w->stats.p50, bs[c].lo[k] = w->stats.p50_lo, bs[c].hi[k] = w->stats.p50_hi;
  }
  for (int k = 0; k < n_cfg; k++) labels[k] = cfg[k];
  char title[160], cid[32];
  snprintf(title, sizeof title, "%.*s: P50 per hardware class (whiskers: 95%% bootstrap CI)", (int)(len < 100 ? len : 100), m);
  snprintf(cid, sizeof cid, "classes-%d", id);
  if (n_cfg) bar_chart(f, title, cid, n_cfg, labels, bs, n_cls, 1e3, "ms");
  nnp_free(bs);
}

/* nnperf sweep collect's result: a chart per model across the hardware classes. */
static void classes_section(FILE *f, const nnp_bench_result *r) {
  const char *cls[6];
  int n_cls = 0, charts = 0;
  for (int i = 0; i < r->n_rows; i++) {
    int c = 0;
    while (c < n_cls && strcmp(cls[c], r->rows[i].hw_class)) c++;
    if (c == n_cls && r->rows[i].hw_class[0] && n_cls < 6) cls[n_cls++] = r->rows[i].hw_class;
  }
  if (!n_cls) return;
  fputs("<h2>Hardware classes side by side</h2>\n<p class='meta'>Each class is its own machine: bars are "
        "shown next to each other, not ranked as one measurement.</p>\n", f);
  for (int i = 0; i < r->n_rows; i++) {
    const char *m = r->rows[i].label;
    size_t len = strcspn(m, " ");
    int seen = !m[len];
    for (int j = 0; j < i && !seen; j++) seen = same_model(&r->rows[j], m, len);
    if (!seen) class_chart(f, r, m, len, cls, n_cls, charts++);
  }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* A load or cold-start result's one configuration row, which has no samples: said in
 * words, not as a summary row of dashes (issue 25). */
static void config_line(FILE *f, const nnp_bench_result *r) {
  fputs("<h2>Configuration</h2>\n<p class='meta' id='config'>", f);
  for (int i = 0; i < r->n_rows; i++) {
    const nnp_bench_row *w = &r->rows[i];
    fputs(i ? "; " : "", f);
    esc(f, w->label);
    fputs(" (", f);
    esc(f, w->backend_version[0] ? w->backend_version : "version unknown");
    fprintf(f, "), %s", nnp_row_status_name(w->status));
    if (w->reason[0]) {
      fputs(": ", f);
      esc(f, w->reason);
    }
  }
  fputs("</p>\n", f);
}

/* One time axis for every row's CDF, so rows compare by eye (issue 25): the fastest
 * sample to the slowest of all rows. */
static void shared_cdf_axis(const nnp_bench_result *r, double *lo, double *hi) {
  *lo = INFINITY, *hi = 0;
  for (int i = 0; i < r->n_rows; i++) {
    const nnp_bench_row *w = &r->rows[i];
    for (int k = 0; row_ok(w) && k < w->n_samples; k++) {
      if (w->samples[k] < *lo) *lo = w->samples[k];
      if (w->samples[k] > *hi) *hi = w->samples[k];
    }
  }
  if (!(*lo < INFINITY)) *lo = 0;
}

/* Row i's raw samples as CSV, downloadable from the page itself. */
static void samples_link(FILE *f, const nnp_bench_row *w, int i) {
  char *csv = NULL;
  size_t csv_len = 0;
  FILE *m = open_memstream(&csv, &csv_len);
  if (!m) return;
  fputs("iteration,process,latency_s\n", m);
  for (int k = 0, p = 0, left = w->n_processes > 0 ? w->process_samples[0] : w->n_samples; k < w->n_samples; k++) {
    while (left == 0 && p + 1 < w->n_processes) left = w->process_samples[++p];
    fprintf(m, "%d,%d,%.9g\n", k, p, w->samples[k]);
    left--;
  }
  fclose(m);
  fputs("<a class='dl' download='samples-row", f);
  fprintf(f, "%d.csv' href='data:text/csv;base64,", i);
  base64(f, (const unsigned char *)csv, csv_len);
  fputs("'>raw samples (CSV)</a>", f);
  free(csv);
}

void nnp_report_html(FILE *f, const nnp_bench_result *r) {
  fputs("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width,initial-scale=1'><title>nnperf: ",
        f);
  esc(f, r->model);
  fprintf(f, "</title><style>%s</style></head><body>\n<h1>nnperf report: ", css);
  esc(f, r->model);
  fputs("</h1>\n<div class='meta'>", f);
  esc(f, r->env.timestamp);
  fputs(" &middot; nnperf ", f);
  esc(f, r->nnperf_version);
  fputs(" &middot; <code>", f);
  esc(f, r->command_line);
  fputs("</code></div>\n", f);
  if (r->noisy)
    fputs("<div class='noisy' id='noisy'>This run was flagged noisy (high CV, processes that disagree, or a busy "
          "machine): treat small differences with care.</div>\n",
          f);

  if (r->load || r->coldstart) {
    config_line(f, r);
  } else {
    fputs("<h2>Summary</h2>\n", f);
    summary_table(f, r);
  }

  if (r->load) load_section(f, r->load);
  if (r->coldstart) coldstart_section(f, r->coldstart);

  /* bar charts over every row that has the quantity (a load or coldstart run's one row
   * has no steady-state samples: its sections above hold its charts) */
  const char *labels[64];
  int n = r->n_rows < 64 ? r->n_rows : 64;
  bar_series *bs = r->load || r->coldstart ? NULL : nnp_calloc(2, sizeof *bs);
  if (bs && n > 0) {
    char named[64][160]; /* a collected sweep's rows: "label @class" */
    for (int i = 0; i < n; i++) {
      snprintf(named[i], sizeof named[i], r->rows[i].hw_class[0] ? "%s @%s" : "%s", r->rows[i].label, r->rows[i].hw_class);
      labels[i] = named[i];
    }
    bs[0].name = "P50";
    bs[1].name = "P99";
    for (int i = 0; i < n; i++) {
      const nnp_stats *s = &r->rows[i].stats;
      int has = s->n > 0;
      bs[0].v[i] = has ? s->p50 : -1, bs[0].lo[i] = has ? s->p50_lo : -1, bs[0].hi[i] = has ? s->p50_hi : -1;
      bs[1].v[i] = has ? s->p99 : -1, bs[1].lo[i] = has ? s->p99_lo : -1, bs[1].hi[i] = has ? s->p99_hi : -1;
    }
    fputs("<h2>Latency</h2>\n", f);
    if (r->n_rows > n) /* the bar charts have room for 64 rows; the table has them all */
      fprintf(f, "<p class='meta'>Charts show the first %d of %d rows; the summary table has all of them.</p>\n", n,
              r->n_rows);
    bar_chart(f, "P50 and P99 latency (whiskers: 95% bootstrap CI)", "bars-latency", n, labels, bs, 2, 1e3, "ms");
    /* two readings of one quantity, said in words (issue 25: "VmHWM" was jargon) */
    bs[0].name = "peak RSS (getrusage)";
    bs[1].name = "peak RSS (kernel VmHWM at exit)";
    for (int i = 0; i < n; i++) {
      const nnp_bench_row *w = &r->rows[i];
      bs[0].v[i] = w->peak_rss_bytes > 0 ? (double)w->peak_rss_bytes : -1;
      bs[1].v[i] = w->vmhwm_bytes > 0 ? (double)w->vmhwm_bytes : -1;
      bs[0].lo[i] = bs[0].hi[i] = bs[1].lo[i] = bs[1].hi[i] = -1;
    }
    fputs("<h2>Memory, load and cold start</h2>\n", f);
    bar_chart(f, "peak memory of the worker process", "bars-memory", n, labels, bs, 2, 1.0 / (1 << 20), "MiB");
    bs[0].name = "load";
    bs[1].name = "cold start";
    for (int i = 0; i < n; i++) {
      bs[0].v[i] = r->rows[i].load_s;
      bs[1].v[i] = r->rows[i].cold_start_s;
    }
    bar_chart(f, "load (parse + compile) and cold start (process start to first result)", "bars-startup", n, labels, bs,
              2, 1e3, "ms");
  }
  nnp_free(bs);

  classes_section(f, r);
  double cdf_lo, cdf_hi;
  shared_cdf_axis(r, &cdf_lo, &cdf_hi);
  if (!r->load && !r->coldstart)
    fputs("<h2>Latency distribution per row</h2>\n<p class='meta'>Every row's CDF uses the same time axis.</p>\n", f);
  fputs("<div class='rows'>\n", f);
  for (int i = 0; i < r->n_rows; i++) {
    const nnp_bench_row *w = &r->rows[i];
    if (!row_ok(w)) continue;
    double *sorted = nnp_malloc(sizeof(double) * (size_t)w->n_samples);
    if (!sorted) continue;
    memcpy(sorted, w->samples, sizeof(double) * (size_t)w->n_samples);
    qsort(sorted, (size_t)w->n_samples, sizeof *sorted, cmp_double);
    fputs("<div class='row'><h3>", f);
    esc(f, w->label);
    fprintf(f, "</h3><div class='meta'>%d samples from %d process%s", w->n_samples, w->n_processes > 0 ? w->n_processes : 1,
            w->n_processes > 1 ? "es" : "");
    if (w->note[0]) {
      fputs("; ", f);
      esc(f, w->note);
    }
    fputs("</div>\n", f);
    cdf_chart(f, w, sorted, i, cdf_lo, cdf_hi);
    box_chart(f, w, sorted, i);
    samples_link(f, w, i);
    fputs("</div>\n", f);
    nnp_free(sorted);
  }
  fputs("</div>\n<h2>Environment</h2>\n", f);
  env_block(f, r);

  /* the whole result, raw samples included: as a download and as data for scripts */
  char *json = NULL;
  size_t json_len = 0;
  FILE *m = open_memstream(&json, &json_len);
  if (m) {
    nnp_report_json(m, r);
    fclose(m);
    fputs("<h2 class='nopr'>Data</h2>\n<p class='nopr'><a class='dl' id='download-json' download='result.json' "
          "href='data:application/json;base64,",
          f);
    base64(f, (const unsigned char *)json, json_len);
    fputs("'>full result JSON (raw samples, every field)</a></p>\n"
          "<script type='application/json' id='nnperf-result'>",
          f);
    /* "</script" or "<!--" inside a string would end or confuse the script element;
     * '<' only occurs inside JSON strings, where \u003c is the same character */
    for (size_t i = 0; i < json_len; i++) {
      if (json[i] == '<') fputs("\\u003c", f);
      else fputc(json[i], f);
    }
    fputs("</script>\n", f);
    free(json);
  }
  fputs("</body></html>\n", f);
}

/* shared with src/result/result_write.c */
typedef void (*nnp_report_writer)(FILE *f, const nnp_bench_result *r);
nnp_status nnp_report_write_atomic(const char *path, nnp_report_writer emit, const nnp_bench_result *r);

nnp_status nnp_report_write_html(const nnp_bench_result *r, const char *path) {
  return nnp_report_write_atomic(path, nnp_report_html, r);
}
