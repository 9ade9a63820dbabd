/* The human comparison table.
 *
 * Methodology rules it enforces: P50 (with its bootstrap CI) is the headline; a row is
 * only ranked against the baseline of its own batch and input shape (each workload has
 * one) when it measures the same thing (same precision and threads; they may be mixed on
 * request and are then shown as columns); an underpowered P99 is marked; a difference within the CIs is
 * marked as not established; a row that fails the accuracy tolerance is marked, not
 * celebrated; failed rows keep their place with status and reason. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "nnperf/report.h"

#define CELL 224        /* bytes for one formatted cell */
#define REASON_CHARS 72 /* characters of a failure reason shown; the JSON has all */

typedef enum col_id {
  C_LABEL,
  C_HOST, /* a collected sweep's hardware class / node (nnperf sweep); only then shown */
  C_PRECISION,
  C_THREADS,
  C_STATUS,
  C_P50,
  C_P99,
  C_ITEMS,
  C_MEM,
  C_LOAD,
  C_COLD,
  C_RUNTIME, /* footprint: runtime MiB the worker loaded */
  C_MODELB,  /* footprint: model file MiB */
  C_ENERGY,  /* mJ per inference, from a hardware counter only */
  C_DEVMEM,  /* peak device memory (allocator), shown when a row has it */
  C_ACC,
  C_RATIO,
  C_COUNT
} col_id;

static const char *const HEADERS[C_COUNT] = {
    "backend / config", "host", "precision", "threads", "status",  "P50 ms [95% CI]", "P99 ms",
    "items/s",          "peak MiB",  "load ms", "cold ms", "runtime MiB", "model MiB", "mJ/inf", "dev MiB",
    "accuracy",         "vs baseline"};

/* Numbers read better right-aligned. */
static const bool RIGHT[C_COUNT] = {false, false, false, true, false, false, true, true, true,
                                    true,  true,  true,  true, true,  true,  false, false};

typedef struct table {
  const nnp_bench_result *r;
  int base;          /* baseline row index, -1 when none */
  int base_named;    /* r->baseline named a row that exists */
  col_id cols[C_COUNT];
  int ncols;
  int width[C_COUNT];
} table;

/* --- text helpers ----------------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s, 0 when invalid (bytes are checked up to the
 * terminator, so a truncated sequence at the end is invalid, not an over-read). */
static size_t utf8_len(const unsigned char *s) {
  size_t len = s[0] < 0x80 ? 1 : (s[0] >= 0xc2 && s[0] <= 0xdf) ? 2
               : (s[0] >= 0xe0 && s[0] <= 0xef) ? 3 : (s[0] >= 0xf0 && s[0] <= 0xf4) ? 4 : 0;
  for (size_t i = 1; i < len; i++)
    if ((s[i] & 0xc0) != 0x80) return 0;
  return len;
}

/* One display line from s (at most cap bytes): whitespace and control runs collapse to
 * one space, invalid UTF-8 becomes '?', and more than max_chars characters are cut with
 * "...". Returns 1 when something was cut. */
static int one_line(char *dst, size_t dcap, const char *s, size_t cap, int max_chars) {
  size_t n = strnlen(s, cap), o = 0;
  int chars = 0, cut = 0, space = 0;
  char tmp[CELL * 4];
  if (n >= sizeof tmp) n = sizeof tmp - 1;
  memcpy(tmp, s, n);
  tmp[n] = '\0'; /* terminated copy: utf8_len may look ahead safely */
  const unsigned char *u = (const unsigned char *)tmp;
  for (size_t i = 0; i < n;) {
    size_t len = utf8_len(u + i);
    if (len == 1 && (u[i] <= 0x20 || u[i] == 0x7f)) {
      space = chars > 0;
      i++;
      continue;
    }
    size_t need = (len ? len : 1) + (space ? 1 : 0);
    if (chars + (space ? 1 : 0) >= max_chars || o + need + 4 > dcap) {
      cut = 1;
      break;
    }
    if (space) {
      dst[o++] = ' ';
      chars++;
      space = 0;
    }
    if (len == 0) {
      dst[o++] = '?';
      i++;
    } else {
      memcpy(dst + o, u + i, len);
      o += len;
      i += len;
    }
    chars++;
  }
  if (cut) {
    memcpy(dst + o, "...", 3);
    o += 3;
  }
  dst[o] = '\0';
  return cut;
}

/* Display width: characters, not bytes, so that "é" takes one column. */
static int text_width(const char *s) {
  int w = 0;
  for (const unsigned char *u = (const unsigned char *)s; *u; u++)
    if ((*u & 0xc0) != 0x80) w++;
  return w;
}

static void pad(FILE *f, int n) {
  for (int i = 0; i < n; i++) fputc(' ', f);
}

/* Decimals giving about four significant digits for a value in ms, so that 0.0123 ms and
 * 1234.5 ms both read sensibly (and CI bounds share the point estimate's decimals). */
static int ms_decimals(double ms) {
  double a = fabs(ms);
  if (a >= 100) return 1;
  if (a >= 10) return 2;
  if (a >= 1) return 3;
  if (a >= 0.1) return 4;
  return 5;
}

/* --- rows ------------------------------------------------------------------------------- */

/* Rows present (a result whose rows were never allocated has none, whatever n_rows says). */
static int nrows(const nnp_bench_result *r) { return r->rows && r->n_rows > 0 ? r->n_rows : 0; }

static bool row_has_stats(const nnp_bench_row *w) {
  return w->status == NNP_ROW_OK && w->stats.n > 0;
}

static bool same_label(const char *a, size_t acap, const char *b, size_t bcap) {
  size_t n = strnlen(a, acap);
  return n > 0 && n == strnlen(b, bcap) && !memcmp(a, b, n);
}

/* Whether row i is the accuracy reference of some other row. */
static bool is_reference(const nnp_bench_result *r, int i) {
  const nnp_bench_row *w = &r->rows[i];
  for (int j = 0; j < nrows(r); j++)
    if (j != i && same_label(r->rows[j].acc.reference, sizeof r->rows[j].acc.reference,
                             w->label, sizeof w->label))
      return true;
  return false;
}

/* CPUs the run had, for the oversubscription mark. */
static int table_cpus(const nnp_bench_result *r) {
  return r->env.cpus_allowed > 0 ? r->env.cpus_allowed : r->env.cpus_online;
}

/* Same batch and input shape: the same workload, whose latencies may be ranked. */
static bool same_workload(const nnp_bench_row *a, const nnp_bench_row *b) {
  return a->batch == b->batch && (same_label(a->scenario, sizeof a->scenario, b->scenario, sizeof b->scenario) ||
                                  (!a->scenario[0] && !b->scenario[0]));
}

/* Row i's baseline: each batch and input shape is its own workload and gets its own (issue
 * 25: batch-16 rows were never ranked). The run's baseline (--baseline, or the first ok
 * row) for its own workload; for another one, the row of the same backend, precision and
 * threads at that workload, else that workload's first ok row. -1 when none. */
static int base_of(const table *t, int i) {
  if (t->base < 0) return -1;
  const nnp_bench_row *b = &t->r->rows[t->base], *w = &t->r->rows[i];
  if (same_workload(b, w)) return t->base;
  int first = -1;
  for (int j = 0; j < nrows(t->r); j++) {
    const nnp_bench_row *o = &t->r->rows[j];
    if (!row_has_stats(o) || !same_workload(o, w)) continue;
    if (!strcmp(o->backend, b->backend) && o->precision == b->precision && o->threads == b->threads) return j;
    if (first < 0) first = j;
  }
  return first;
}

/* The comparison variables in which row w differs from its baseline, as "precision,
 * threads"; "" when it may be ranked. precision/threads count only without allow_mixed. */
static void differs(const table *t, int i, char *buf, size_t n) {
  const nnp_bench_row *w = &t->r->rows[i], *b = &t->r->rows[base_of(t, i)];
  const char *what[5];
  int k = 0;
  if (!t->r->allow_mixed && w->precision != b->precision) what[k++] = "precision";
  if (!t->r->allow_mixed && w->threads != b->threads) what[k++] = "threads";
  if (w->batch != b->batch) what[k++] = "batch";
  /* another machine is another measurement: never ranked as if it were this one */
  if (strcmp(w->hw_class, b->hw_class) || strcmp(w->node, b->node)) what[k++] = "host";
  if (!same_workload(w, b) && w->batch == b->batch) what[k++] = "input shape";
  buf[0] = '\0';
  size_t o = 0;
  for (int j = 0; j < k && o < n; j++) {
    int m = snprintf(buf + o, n - o, "%s%s", j ? ", " : "", what[j]);
    if (m < 0) break;
    o += (size_t)m;
  }
}

/* The ok row of w's backend, threads, batch and scenario at the baseline's precision. */
static const nnp_bench_row *own_row(const table *t, const nnp_bench_row *w, int base) {
  const nnp_bench_row *b = &t->r->rows[base];
  for (int j = 0; j < nrows(t->r); j++) {
    const nnp_bench_row *o = &t->r->rows[j];
    if (o != w && row_has_stats(o) && o->precision == b->precision && o->threads == w->threads &&
        o->batch == w->batch && !strcmp(o->backend, w->backend) &&
        same_label(o->scenario, sizeof o->scenario, w->scenario, sizeof w->scenario))
      return o;
  }
  return NULL;
}

static bool cis_overlap(const nnp_stats *a, const nnp_stats *b) {
  return !(a->p50_hi < b->p50_lo || a->p50_lo > b->p50_hi);
}

static void ratio_cell(const table *t, int i, char *buf, size_t n) {
  const nnp_bench_row *w = &t->r->rows[i];
  buf[0] = '\0';
  if (!row_has_stats(w)) return;
  int base = base_of(t, i);
  if (base < 0) {
    snprintf(buf, n, "-");
    return;
  }
  if (i == base) {
    snprintf(buf, n, "1.00x (baseline)");
    return;
  }
  char diff[64];
  differs(t, i, diff, sizeof diff);
  /* a speed-up of a row outside its accuracy tolerance is no speed-up: marked */
  const char *acc = w->acc.compared && !w->acc.within_tol ? " [acc FAIL]" : "";
  if (!strcmp(diff, "precision")) { /* e.g. int8: the speed-up over the backend's own row */
    const nnp_bench_row *own = own_row(t, w, base);
    if (own && own->stats.p50 > 0.0 && w->stats.p50 > 0.0) {
      snprintf(buf, n, "%s%.2fx vs own %s%s", cis_overlap(&own->stats, &w->stats) ? "~" : "",
               own->stats.p50 / w->stats.p50, nnp_precision_name(own->precision), acc);
      return;
    }
  }
  if (diff[0]) {
    snprintf(buf, n, "n/a (differs: %s)", diff);
    return;
  }
  const nnp_stats *bs = &t->r->rows[base].stats, *ws = &w->stats;
  if (!(bs->p50 > 0.0) || !(ws->p50 > 0.0)) {
    snprintf(buf, n, "n/a");
    return;
  }
  double ratio = bs->p50 / ws->p50;
  const char *approx = cis_overlap(bs, ws) ? "~" : "";
  if (ratio >= 0.995 && ratio < 1.005) snprintf(buf, n, "%s1.00x%s", approx, acc);
  else if (ratio >= 1.0) snprintf(buf, n, "%s%.2fx faster%s", approx, ratio, acc);
  else snprintf(buf, n, "%s%.2fx slower%s", approx, 1.0 / ratio, acc);
}

/* Formats cell (row i, column c); i == -1 is the header. */
static void cell(const table *t, int i, col_id c, char *buf, size_t n) {
  buf[0] = '\0';
  if (i < 0) {
    snprintf(buf, n, "%s", HEADERS[c]);
    return;
  }
  const nnp_bench_row *w = &t->r->rows[i];
  const nnp_stats *s = &w->stats;
  bool ok = row_has_stats(w);
  switch (c) {
    case C_LABEL:
      one_line(buf, n, w->label[0] ? w->label : w->backend,
               w->label[0] ? sizeof w->label : sizeof w->backend, 60);
      return;
    case C_HOST:
      snprintf(buf, n, "%.47s/%.63s", w->hw_class, w->node);
      return;
    case C_PRECISION: snprintf(buf, n, "%s", nnp_precision_name(w->precision)); return;
    case C_THREADS: snprintf(buf, n, "%d", w->threads); return;
    case C_STATUS:
      snprintf(buf, n, "%s%s%s", nnp_row_status_name(w->status),
               w->status == NNP_ROW_OK && w->time_capped ? " (capped)" : "",
               w->status == NNP_ROW_OK && nnp_row_oversubscribed(w, table_cpus(t->r)) ? " (oversubscribed)" : "");
      return;
    default: break;
  }
  if (w->status != NNP_ROW_OK) return; /* the reason is printed instead of these */
  switch (c) {
    case C_P50:
      if (ok) {
        int d = ms_decimals(s->p50 * 1e3);
        snprintf(buf, n, "%.*f [%.*f, %.*f]", d, s->p50 * 1e3, d, s->p50_lo * 1e3, d,
                 s->p50_hi * 1e3);
      } else snprintf(buf, n, "-");
      return;
    case C_P99:
      if (ok)
        snprintf(buf, n, "%.*f%s", ms_decimals(s->p99 * 1e3), s->p99 * 1e3,
                 s->p99_underpowered ? "*" : "");
      else snprintf(buf, n, "-");
      return;
    case C_ITEMS: {
      double v = w->items_per_s;
      if (!(v > 0.0) || !isfinite(v)) snprintf(buf, n, "-");
      else snprintf(buf, n, "%.*f", v >= 100 ? 0 : v >= 10 ? 1 : 2, v);
      return;
    }
    case C_MEM: {
      int64_t b = w->peak_rss_bytes > 0 ? w->peak_rss_bytes : w->vmhwm_bytes;
      if (b > 0) snprintf(buf, n, "%.1f", (double)b / (1024.0 * 1024.0));
      else snprintf(buf, n, "-");
      return;
    }
    case C_LOAD:
    case C_COLD: {
      double v = (c == C_LOAD ? w->load_s : w->cold_start_s) * 1e3;
      if (v < 0.0 || !isfinite(v)) snprintf(buf, n, "-");
      else snprintf(buf, n, "%.*f", v >= 10 ? 1 : 2, v);
      return;
    }
    case C_RUNTIME:
    case C_MODELB:
    case C_DEVMEM: {
      int64_t b = c == C_RUNTIME ? w->ext.runtime_bytes : c == C_MODELB ? w->ext.model_bytes : w->ext.dev_alloc_peak;
      double mib = (double)b / (1024.0 * 1024.0); /* a small model file is not "0.0" */
      if (b > 0) snprintf(buf, n, "%.*f", mib < 1 ? 3 : 1, mib);
      else snprintf(buf, n, "-");
      return;
    }
    case C_ENERGY:
      if (w->ext.energy_j >= 0) snprintf(buf, n, "%.3g", w->ext.energy_j * 1e3);
      else snprintf(buf, n, "n/a");
      return;
    case C_ACC:
      if (w->acc.compared)
        snprintf(buf, n, "%.1e%s", w->acc.max_rel, w->acc.within_tol ? "" : " FAIL tol");
      else snprintf(buf, n, "%s", is_reference(t->r, i) ? "ref" : "-");
      return;
    case C_RATIO: ratio_cell(t, i, buf, n); return;
    default: return;
  }
}

/* The reason shown for a row that did not run to the end. */
static int reason_text(const nnp_bench_row *w, char *buf, size_t n) {
  if (w->reason[0]) return one_line(buf, n, w->reason, sizeof w->reason, REASON_CHARS);
  if (w->term_signal > 0) snprintf(buf, n, "killed by signal %d", w->term_signal);
  else if (w->exit_status > 0) snprintf(buf, n, "exit status %d", w->exit_status);
  else snprintf(buf, n, "(no reason recorded)");
  return 0;
}

/* --- layout ------------------------------------------------------------------------------ */

static void choose_baseline(table *t) {
  const nnp_bench_result *r = t->r;
  t->base = -1;
  t->base_named = 0;
  if (r->baseline[0]) {
    for (int i = 0; i < nrows(r); i++)
      if (same_label(r->rows[i].label, sizeof r->rows[i].label, r->baseline,
                     sizeof r->baseline)) {
        t->base_named = 1;
        /* A named baseline that did not produce numbers gives no ratios at all rather
         * than silently ranking against some other row. */
        t->base = row_has_stats(&r->rows[i]) ? i : -1;
        return;
      }
  }
  for (int i = 0; i < nrows(r); i++)
    if (row_has_stats(&r->rows[i])) {
      t->base = i;
      return;
    }
}

static void print_row(FILE *f, const table *t, int i) {
  char buf[CELL];
  /* A row that did not run shows label and status, then its reason in the space of the
   * number columns. */
  bool failed = i >= 0 && t->r->rows[i].status != NNP_ROW_OK;
  for (int k = 0; k < t->ncols; k++) {
    col_id c = t->cols[k];
    if (failed && c > C_STATUS) break;
    bool last = k + 1 == t->ncols || (failed && t->cols[k + 1] > C_STATUS);
    cell(t, i, c, buf, sizeof buf);
    int gap = t->width[c] - text_width(buf);
    if (k) fputs("  ", f);
    if (RIGHT[c]) pad(f, gap);
    fputs(buf, f);
    if (!RIGHT[c] && (!last || failed)) pad(f, gap); /* no trailing blanks */
  }
  if (failed) {
    reason_text(&t->r->rows[i], buf, sizeof buf);
    fprintf(f, "  %s", buf);
  }
  fputc('\n', f);
}

static void print_rule(FILE *f, const table *t) {
  for (int k = 0; k < t->ncols; k++) {
    if (k) fputs("  ", f);
    for (int j = 0; j < t->width[t->cols[k]]; j++) fputc('-', f);
  }
  fputc('\n', f);
}

/* Prints "'a', 'b'" for the rows that match (at most 8, then a count). */
static void list_rows(FILE *f, const nnp_bench_result *r, bool (*match)(const nnp_bench_row *)) {
  int shown = 0, more = 0;
  char buf[CELL];
  for (int i = 0; i < nrows(r); i++) {
    if (!match(&r->rows[i])) continue;
    if (shown == 8) {
      more++;
      continue;
    }
    one_line(buf, sizeof buf, r->rows[i].label, sizeof r->rows[i].label, 60);
    fprintf(f, "%s'%s'", shown ? ", " : "", buf);
    shown++;
  }
  if (more) fprintf(f, " and %d more", more);
}

static bool m_underpowered(const nnp_bench_row *w) {
  return row_has_stats(w) && w->stats.p99_underpowered;
}
static bool m_capped(const nnp_bench_row *w) {
  return w->status == NNP_ROW_OK && w->time_capped;
}
static bool m_unstable(const nnp_bench_row *w) {
  return w->status == NNP_ROW_OK && !w->warmup_stable && w->warmup_iterations > 0;
}
static bool m_failtol(const nnp_bench_row *w) {
  return w->status == NNP_ROW_OK && w->acc.compared && !w->acc.within_tol;
}

/* "; within tolerance: fp32 max_rel <= 1e-04; int8 cosine >= 0.99, ..." from the compared
 * rows' criteria, one entry per precision. Results of nnperf before per-row criteria name
 * none: theirs was max_rel for every precision (accuracy_rtol, or per precision). */
static void print_criteria(FILE *f, const nnp_bench_result *r) {
  bool any = false, old = false, cos = false;
  for (int i = 0; i < r->n_rows; i++) {
    const nnp_bench_row *w = &r->rows[i];
    if (!w->acc.compared) continue;
    cos |= strstr(w->acc.criterion, "cosine") != NULL;
    if (!w->acc.criterion[0]) {
      old = true;
      continue;
    }
    bool seen = false; /* this precision listed already */
    for (int j = 0; j < i && !seen; j++)
      seen = r->rows[j].acc.compared && r->rows[j].acc.criterion[0] && r->rows[j].precision == w->precision;
    if (seen) continue;
    char crit[CELL];
    one_line(crit, sizeof crit, w->acc.criterion, sizeof w->acc.criterion, 80);
    fprintf(f, "%s%s %s", any ? "; " : "; within tolerance: ", nnp_precision_name(w->precision), crit);
    any = true;
  }
  if (cos) /* why int8 rows may show a larger max_rel than fp32's bound and still pass */
    fputs(" (int8/mixed: quantization noise in its worst element exceeds a max_rel bound in a correct model)", f);
  if (old) { /* the whole run, or its --resume'd rows, from an nnperf before criteria */
    if (r->accuracy_rtol > 0) fprintf(f, "%stolerance %.1e", any ? "; otherwise " : "; ", r->accuracy_rtol);
    else fprintf(f, "%stolerance per precision (fp32 1e-4, fp16 1e-2, int8/mixed 5e-2)", any ? "; otherwise " : "; ");
  }
}

/* Rows judged by cosine: the value judged, beside the max_rel of the accuracy column. */
static void print_cosines(FILE *f, const nnp_bench_result *r) {
  bool any = false;
  for (int i = 0; i < r->n_rows; i++) {
    const nnp_bench_row *w = &r->rows[i];
    if (w->status != NNP_ROW_OK || !w->acc.compared || !strstr(w->acc.criterion, "cosine")) continue;
    char label[96];
    one_line(label, sizeof label, w->label, sizeof w->label, 60);
    fprintf(f, "%s'%s' %.5f", any ? "; " : "  cosine vs ref: ", label, w->acc.cosine);
    if (w->acc.top1 >= 0) fprintf(f, " (top-1 %.0f%%)", w->acc.top1 * 100);
    any = true;
  }
  if (any) fputs(".\n", f);
}

static void print_env(FILE *f, const nnp_env *e) {
  char model[CELL], os[CELL];
  one_line(model, sizeof model, e->cpu_model, sizeof e->cpu_model, 60);
  one_line(os, sizeof os, e->os, sizeof e->os, 60);
  fprintf(f, "Environment: %s, %d/%d CPUs allowed/online", model[0] ? model : "unknown CPU",
          e->cpus_allowed, e->cpus_online);
  if (e->cpu_mhz > 0) fprintf(f, ", %.0f MHz", e->cpu_mhz);
  char gov[64];
  one_line(gov, sizeof gov, e->governor, sizeof e->governor, 30);
  fprintf(f, ", governor %s, load %.2f%s", gov[0] ? gov : "n/a", e->loadavg1,
          nnp_env_is_busy(e) ? " (busy)" : "");
  if (e->mem_total_bytes > 0)
    fprintf(f, ", %.1f GiB RAM", (double)e->mem_total_bytes / (1024.0 * 1024.0 * 1024.0));
  if (os[0]) fprintf(f, ", %s", os);
  char comp[CELL], flags[CELL], gpu[CELL];
  one_line(comp, sizeof comp, e->compiler, sizeof e->compiler, 60);
  one_line(flags, sizeof flags, e->build_flags, sizeof e->build_flags, 60);
  one_line(gpu, sizeof gpu, e->gpu, sizeof e->gpu, 100);
  if (comp[0]) fprintf(f, ", built with %s", comp);
  if (flags[0]) fprintf(f, " [%s]", flags);
  fputc('\n', f);
  if (gpu[0]) fprintf(f, "GPU: %s\n", gpu);
}

/* Notes on the rows themselves: capped, unstable warm-up, accuracy, int8 agreement. */
static void print_row_notes(FILE *f, const nnp_bench_result *r) {
  int n_rows = nrows(r);
  char buf[CELL];
  bool capped = false, unstable = false, failtol = false, compared = false;
  const char *reference = NULL;
  for (int i = 0; i < n_rows; i++) {
    const nnp_bench_row *w = &r->rows[i];
    capped |= m_capped(w);
    unstable |= m_unstable(w);
    failtol |= m_failtol(w);
    if (w->acc.compared) {
      compared = true;
      if (!reference) reference = w->acc.reference;
      else if (strcmp(reference, w->acc.reference)) reference = ""; /* one per batch/scenario */
    }
  }
  if (capped) {
    fprintf(f, "  ok (capped): steady state stopped at the %.0f s cap before %d iterations: ",
            r->loop.max_time_s, r->loop.iterations);
    list_rows(f, r, m_capped);
    fputs(".\n", f);
  }
  if (unstable) {
    fprintf(f, "  warm-up ended at its bound (%d iterations or %.0f s) without stabilising: ",
            r->loop.warmup_max, r->loop.warmup_max_time_s);
    list_rows(f, r, m_unstable);
    fputs(".\n", f);
  }
  if (compared) {
    if (reference[0]) {
      one_line(buf, sizeof buf, reference, sizeof r->rows[0].acc.reference, 60);
      fprintf(f, "  accuracy: max relative error of the outputs vs '%s' (ref)", buf);
    } else {
      fputs("  accuracy: max relative error of the outputs vs the native fp32 row (ref) of the same batch and input shape",
            f);
    }
    print_criteria(f, r);
    if (failtol) {
      fputs("; FAIL tol, outside it: ", f);
      list_rows(f, r, m_failtol);
    }
    fputs(".\n", f);
  }
  if (compared) print_cosines(f, r);
  for (int i = 0; i < n_rows; i++) { /* --int8-model: other backends vs nnperf's int8 outputs */
    const nnp_bench_row *w = &r->rows[i];
    if (w->status != NNP_ROW_OK || !w->int8_agree.compared) continue;
    char label[96], ref[96];
    one_line(label, sizeof label, w->label, sizeof w->label, 60);
    one_line(ref, sizeof ref, w->int8_agree.reference, sizeof w->int8_agree.reference, 60);
    fprintf(f, "  int8 agreement '%s' vs '%s' (same QDQ model): ", label, ref);
    if (w->int8_agree.top1 >= 0) fprintf(f, "top-1 %.0f%%, ", w->int8_agree.top1 * 100);
    fprintf(f, "cosine %.5f, max relative error %.1e.\n", w->int8_agree.cosine, w->int8_agree.max_rel);
  }
}

/* "vs baseline" and the baseline of each workload (batch, input shape) of the table. */
static void print_baselines(FILE *f, const table *t) {
  char buf[CELL];
  fputs("  vs baseline = baseline P50 / row P50; each batch and input shape has its own baseline:", f);
  int n = 0;
  for (int i = 0; i < nrows(t->r); i++) {
    if (!row_has_stats(&t->r->rows[i]) || base_of(t, i) != i) continue;
    one_line(buf, sizeof buf, t->r->rows[i].label, sizeof t->r->rows[i].label, 60);
    fprintf(f, "%s '%s'", n++ ? "," : "", buf);
  }
  fputs(".\n", f);
}

/* What the footprint and energy columns hold: the counter read, or why there is none. */
static void print_edge_notes(FILE *f, const nnp_bench_result *r) {
  for (int i = 0; i < nrows(r); i++) /* energy: a counter's name, or why there is none (once) */
    if (r->rows[i].status == NNP_ROW_OK && r->rows[i].ext.energy_source[0]) {
      fprintf(f, "  energy (mJ/inf, steady state): %s%s\n", r->rows[i].ext.energy_source,
              r->rows[i].ext.energy_j >= 0 ? "" : ": n/a, never estimated");
      break;
    }
  fputs("  footprint: runtime MiB = files the worker process loaded (/proc/self/maps; Python: + imported "
        "modules); model MiB = the model file as the backend loads it\n", f);
}

void nnp_report_table(FILE *f, const nnp_bench_result *r) {
  table t;
  memset(&t, 0, sizeof t);
  t.r = r;
  int n_rows = nrows(r);
  choose_baseline(&t);

  bool any_host = false, any_devmem = false;
  for (int i = 0; i < n_rows; i++) any_host |= r->rows[i].hw_class[0] != 0;
  for (int i = 0; i < n_rows; i++) any_devmem |= r->rows[i].ext.dev_alloc_peak > 0;
  for (int c = 0; c < C_COUNT; c++)
    if (((c != C_PRECISION && c != C_THREADS) || r->allow_mixed) && (c != C_HOST || any_host) &&
        (c != C_DEVMEM || any_devmem))
      t.cols[t.ncols++] = (col_id)c;

  char buf[CELL];
  for (int i = -1; i < n_rows; i++)
    for (int k = 0; k < t.ncols; k++) {
      col_id c = t.cols[k];
      if (i >= 0 && r->rows[i].status != NNP_ROW_OK && c > C_STATUS) continue;
      cell(&t, i, c, buf, sizeof buf);
      int w = text_width(buf);
      if (w > t.width[c]) t.width[c] = w;
    }

  one_line(buf, sizeof buf, r->model, sizeof r->model, 100);
  int n_ok = 0;
  for (int i = 0; i < n_rows; i++) n_ok += r->rows[i].status == NNP_ROW_OK;
  fprintf(f, "nnperf bench: %s (%d of %d rows ran, seed %llu)\n\n", buf[0] ? buf : "?", n_ok,
          n_rows, (unsigned long long)r->seed);
  print_row(f, &t, -1);
  print_rule(f, &t);
  for (int i = 0; i < n_rows; i++) print_row(f, &t, i);
  fputc('\n', f);

  print_env(f, &r->env);

  /* Notes: only those that apply to this table. */
  bool any_underpowered = false, any_overlap = false, any_cut = false;
  bool any_mix_diff = false; /* precision/threads */
  bool any_host_diff = false;
  double max_cv = 0.0;
  int max_cv_row = -1;
  for (int i = 0; i < n_rows; i++) {
    const nnp_bench_row *w = &r->rows[i];
    if (w->status != NNP_ROW_OK) {
      any_cut |= reason_text(w, buf, sizeof buf) != 0;
      continue;
    }
    if (!row_has_stats(w)) continue;
    any_underpowered |= w->stats.p99_underpowered;
    if (w->stats.cv > max_cv) {
      max_cv = w->stats.cv;
      max_cv_row = i;
    }
    int base = base_of(&t, i);
    if (base >= 0 && i != base) {
      char diff[64];
      differs(&t, i, diff, sizeof diff);
      if (strstr(diff, "precision") || strstr(diff, "threads")) any_mix_diff = true;
      if (strstr(diff, "host")) any_host_diff = true;
      if (!diff[0]) any_overlap |= cis_overlap(&r->rows[base].stats, &w->stats);
    }
  }

  fputs("Notes:\n", f);
  print_edge_notes(f, r);
  for (int i = 0; i < n_rows; i++) { /* what the backends themselves said about ok rows */
    const nnp_bench_row *w = &r->rows[i];
    if (w->status != NNP_ROW_OK || !w->note[0]) continue;
    char label[96];
    one_line(label, sizeof label, w->label, sizeof w->label, 60);
    one_line(buf, sizeof buf, w->note, sizeof w->note, 160);
    fprintf(f, "  '%s': %s\n", label, buf);
  }
  fprintf(f, "  P50 is the headline; [95%% CI] is a bootstrap interval (%d resamples).\n",
          NNP_STATS_BOOTSTRAP_RESAMPLES);
  if (t.base >= 0) print_baselines(f, &t);
  if (r->baseline[0] && !t.base_named) {
    one_line(buf, sizeof buf, r->baseline, sizeof r->baseline, 60);
    fprintf(f, "  baseline '%s' is not a row of this table; the first row that ran is used.\n",
            buf);
  } else if (r->baseline[0] && t.base < 0) {
    one_line(buf, sizeof buf, r->baseline, sizeof r->baseline, 60);
    fprintf(f, "  baseline '%s' did not run: no speed ratios.\n", buf);
  }
  if (any_mix_diff)
    fputs("  n/a (differs: precision/threads): not ranked against the baseline; rows that "
          "differ in precision or threads are only ranked when mixing is asked for.\n",
          f);
  if (any_host_diff)
    fputs("  n/a (differs: host): a row of another hardware class or node (nnperf sweep) is another "
          "machine's measurement, never ranked against this one; compare classes side by side.\n",
          f);
  if (r->allow_mixed)
    fputs("  Rows of different precision and threads are ranked together, as asked.\n", f);
  if (any_overlap)
    fputs("  ~ the 95% CIs of row and baseline P50 overlap: the difference is not "
          "established.\n",
          f);
  if (any_underpowered) {
    fputs("  * P99 from fewer than 1000 samples (fewer than 10 beyond it): indicative only: ",
          f);
    list_rows(f, r, m_underpowered);
    fputs(".\n", f);
  }
  if (r->noisy || nnp_env_is_busy(&r->env)) {
    fputs("  NOISY: ", f);
    if (max_cv_row >= 0) {
      one_line(buf, sizeof buf, r->rows[max_cv_row].label, sizeof r->rows[max_cv_row].label,
               60);
      fprintf(f, "highest CV %.3f ('%s'); ", max_cv, buf);
    }
    fprintf(f, "load %.2f on %d CPUs. Differences may be noise; rerun on a quiet machine.\n",
            r->env.loadavg1, r->env.cpus_allowed > 0 ? r->env.cpus_allowed : r->env.cpus_online);
  }
  print_row_notes(f, r);
  if (any_mix_diff && t.base >= 0)
    fputs("  'Nx vs own PRECISION': a row that differs from the baseline only in precision, against the same backend's "
          "row at the baseline's precision (e.g. INT8 speed-up); ~ where their P50 intervals overlap.\n", f);
  if (any_cut) fputs("  Failure reasons are shortened here; the JSON result has them in full.\n", f);
}
