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

/* Vertical grid lines and labels for a linear x axis 0..xmax (or lo..hi) in `unit`. */
static void x_axis(FILE *f, double lo, double hi, double y0, double y1, double scale, const char *unit) {
  for (int t = 0; t <= 4; t++) {
    double v = lo + (hi - lo) * t / 4, x = LEFT + (CHART_W - LEFT - RIGHT) * t / 4;
    fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' class='grid'/>", x, y0, x, y1);
    fprintf(f, "<text x='%.1f' y='%.1f' class='tick' text-anchor='middle'>%.3g%s</text>", x, y1 + 14, v * scale,
            t == 4 ? unit : "");
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
  for (int s = 0; s < n_series && n_series > 1; s++)
    fprintf(f, "<rect x='%.0f' y='24' width='10' height='10' fill='%s'/><text x='%.0f' y='33' class='tick'>%s</text>",
            LEFT + s * 90.0, palette[s % 6], LEFT + 14 + s * 90.0, series[s].name);
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

/* Empirical CDF of one row's samples: x latency (ms), y fraction of iterations. */
static void cdf_chart(FILE *f, const nnp_bench_row *w, const double *sorted, int idx) {
  int n = w->n_samples;
  double lo = sorted[0], hi = sorted[n - 1];
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
        "<th title='max relative error vs the reference row, top-1 agreement'>accuracy</th></tr></thead><tbody>\n",
        f);
  for (int i = 0; i < r->n_rows; i++) {
    const nnp_bench_row *w = &r->rows[i];
    fputs("<tr><td>", f);
    esc(f, w->label);
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
    if (w->acc.compared) {
      fprintf(f, "<td class='%s'>%.2g", w->acc.within_tol ? "good" : "bad", w->acc.max_rel);
      if (w->acc.top1 >= 0) fprintf(f, ", top-1 %.0f%%", w->acc.top1 * 100);
      fprintf(f, "%s</td>", w->acc.within_tol ? "" : " (beyond tolerance)");
    } else {
      fputs(w->status == NNP_ROW_OK ? "<td>reference</td>" : "<td>-</td>", f);
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

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
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

  fputs("<h2>Summary</h2>\n", f);
  summary_table(f, r);

  /* bar charts over every row that has the quantity */
  const char *labels[64];
  int n = r->n_rows < 64 ? r->n_rows : 64;
  bar_series *bs = nnp_calloc(2, sizeof *bs);
  if (bs && n > 0) {
    for (int i = 0; i < n; i++) labels[i] = r->rows[i].label;
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
    bs[0].name = "peak RSS";
    bs[1].name = "VmHWM";
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

  fputs("<h2>Latency distribution per row</h2>\n<div class='rows'>\n", f);
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
    cdf_chart(f, w, sorted, i);
    box_chart(f, w, sorted, i);
    /* this row's raw samples as CSV, downloadable from the page itself */
    char *csv = NULL;
    size_t csv_len = 0;
    FILE *m = open_memstream(&csv, &csv_len);
    if (m) {
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

/* shared with report_json.c */
typedef void (*nnp_report_writer)(FILE *f, const nnp_bench_result *r);
nnp_status nnp_report_write_atomic(const char *path, nnp_report_writer emit, const nnp_bench_result *r);

nnp_status nnp_report_write_html(const nnp_bench_result *r, const char *path) {
  return nnp_report_write_atomic(path, nnp_report_html, r);
}
