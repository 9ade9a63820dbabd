/* Row comparison statistics.
 *
 * Why three statistics and not one: on a shared machine iterations within one worker
 * process are far more alike than two processes are (docs/methodology.md), so a test
 * that treats all samples as independent (Mann-Whitney on raw samples) calls tiny
 * between-run drifts "significant". The verdict therefore needs
 *   - the P50 ratio beyond the threshold, both pooled and on process-level medians,
 *   - a 95% two-level bootstrap CI of the ratio (resample processes, then samples within
 *     each) that excludes 1: it carries the between-process noise, like stats.c's
 *     cluster bootstrap,
 *   - Mann-Whitney U p < alpha on the raw samples,
 * and reports Cliff's delta as the effect size (how often NEW is slower than BASE). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnperf/alloc.h"
#include "nnperf/compare.h"

void nnp_compare_options_default(nnp_compare_options *o) {
  o->threshold = 0.05;
  o->alpha = 0.05;
  o->resamples = 1000;
  o->seed = 1;
  o->base_cpus = o->new_cpus = 0;
}

const char *nnp_compare_verdict_name(nnp_compare_verdict v) {
  switch (v) {
    case NNP_CMP_SAME: return "same";
    case NNP_CMP_REGRESSION: return "REGRESSION";
    case NNP_CMP_IMPROVEMENT: return "improvement";
    case NNP_CMP_NOT_COMPARED: return "not compared";
    case NNP_CMP_INCONCLUSIVE: return "inconclusive";
  }
  return "?";
}

int nnp_rows_match(const nnp_bench_row *a, const nnp_bench_row *b) {
  /* a collected sweep (nnperf sweep): the same hardware class, and the same model (in the label) */
  if (strcmp(a->hw_class, b->hw_class) || (a->hw_class[0] && strcmp(a->label, b->label))) return 0;
  return !strcmp(a->backend, b->backend) && a->precision == b->precision && a->threads == b->threads &&
         a->batch == b->batch && !strcmp(a->scenario, b->scenario);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* k-th smallest of x[0..n) (x is reordered): Hoare's selection, expected O(n). */
static double select_kth(double *x, int n, int k) {
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    double pivot = x[lo + (hi - lo) / 2];
    int i = lo, j = hi;
    while (i <= j) {
      while (x[i] < pivot) i++;
      while (x[j] > pivot) j--;
      if (i <= j) {
        double t = x[i];
        x[i] = x[j];
        x[j] = t;
        i++, j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else break;
  }
  return x[k];
}

/* Median (mean of the two middle values for even n), reordering x. */
static double median_inplace(double *x, int n) {
  double hi = select_kth(x, n, n / 2);
  if (n % 2) return hi;
  double lo = x[0]; /* largest of the lower half */
  for (int i = 1; i < n / 2; i++)
    if (x[i] > lo) lo = x[i];
  return 0.5 * (lo + hi);
}

nnp_status nnp_mann_whitney(const double *a, int na, const double *b, int nb, double *p, double *delta) {
  if (na <= 0 || nb <= 0) return nnp_error(NNP_ERR_INVALID, "Mann-Whitney needs samples on both sides");
  double *sa = nnp_malloc(sizeof(double) * (size_t)na), *sb = nnp_malloc(sizeof(double) * (size_t)nb);
  if (!sa || !sb) {
    nnp_free(sa);
    nnp_free(sb);
    return nnp_error(NNP_ERR_NOMEM, "out of memory");
  }
  memcpy(sa, a, sizeof(double) * (size_t)na);
  memcpy(sb, b, sizeof(double) * (size_t)nb);
  qsort(sa, (size_t)na, sizeof *sa, cmp_double);
  qsort(sb, (size_t)nb, sizeof *sb, cmp_double);
  /* walk both sorted arrays in tie groups: ranks of a, and the tie correction */
  double rank_a = 0, ties = 0, rank = 0;
  int i = 0, j = 0;
  while (i < na || j < nb) {
    double v = i < na && (j >= nb || sa[i] <= sb[j]) ? sa[i] : sb[j];
    int ca = 0, cb = 0;
    while (i < na && sa[i] == v) i++, ca++;
    while (j < nb && sb[j] == v) j++, cb++;
    double t = ca + cb, mid = rank + (t + 1) / 2; /* average rank of the group (1-based) */
    rank_a += ca * mid;
    ties += t * t * t - t;
    rank += t;
  }
  nnp_free(sa);
  nnp_free(sb);
  double n1 = na, n2 = nb, N = n1 + n2;
  double u_a = rank_a - n1 * (n1 + 1) / 2; /* pairs where a > b, ties counted half */
  /* Cliff's delta of b over a: P(b > a) - P(b < a) = 1 - 2 U_a / (n1 n2) */
  *delta = 1 - 2 * u_a / (n1 * n2);
  double mean = n1 * n2 / 2;
  double var = n1 * n2 / 12 * ((N + 1) - (N > 1 ? ties / (N * (N - 1)) : 0));
  if (var <= 0) {
    *p = 1; /* every value equal: no evidence of a difference */
    return NNP_OK;
  }
  double dev = fabs(u_a - mean) - 0.5; /* continuity correction */
  if (dev < 0) dev = 0;
  *p = erfc(dev / sqrt(var) / sqrt(2.0));
  if (*p > 1) *p = 1;
  return NNP_OK;
}

/* The groups (worker processes) of a row: counts[0..*g), at least one group. */
static int row_groups(const nnp_bench_row *w, int *counts) {
  int sum = 0;
  for (int p = 0; p < w->n_processes && p < NNP_MAX_PROCESSES; p++) sum += w->process_samples[p];
  if (w->n_processes <= 0 || sum != w->n_samples) {
    counts[0] = w->n_samples;
    return 1;
  }
  for (int p = 0; p < w->n_processes; p++) counts[p] = w->process_samples[p];
  return w->n_processes;
}

/* Median of the process medians; *spread gets (largest - smallest) / smallest of them. */
static double process_level_median(const nnp_bench_row *w, double *tmp, double *spread) {
  int counts[NNP_MAX_PROCESSES], g = row_groups(w, counts);
  double meds[NNP_MAX_PROCESSES];
  int used = 0;
  for (int p = 0, off = 0; p < g; off += counts[p], p++) {
    if (counts[p] <= 0) continue;
    memcpy(tmp, w->samples + off, sizeof(double) * (size_t)counts[p]);
    meds[used++] = median_inplace(tmp, counts[p]);
  }
  double lo = used ? meds[0] : NAN, hi = lo;
  for (int k = 1; k < used; k++) lo = meds[k] < lo ? meds[k] : lo, hi = meds[k] > hi ? meds[k] : hi;
  *spread = lo > 0 ? (hi - lo) / lo : 0;
  return used ? median_inplace(meds, used) : NAN;
}

static uint64_t next_rand(uint64_t *state) { return nnp_mix64(*state += 0x9E3779B97F4A7C15ull); }

/* One two-level bootstrap draw of a row's median: processes with replacement, then the
 * samples of each drawn process with replacement. */
static double resampled_median(const nnp_bench_row *w, const int *counts, const int *offsets, int g, double *buf,
                               uint64_t *rng) {
  int n = 0;
  for (int k = 0; k < g; k++) {
    int p = (int)(next_rand(rng) % (uint64_t)g);
    for (int i = 0; i < counts[p]; i++) buf[n++] = w->samples[offsets[p] + (int)(next_rand(rng) % (uint64_t)counts[p])];
  }
  /* drawn processes can differ in size, so n varies around n_samples */
  return n ? median_inplace(buf, n) : NAN;
}

/* The verdict, only where the evidence can carry it (docs/report.md, "inconclusive").
 * With one worker process per row there is no measure of run-to-run noise: the
 * process-level ratio is the sample ratio again, and a machine that changed speed between
 * the two runs looks like a change of the code. With several, a change is defended only
 * when it is larger than the spread of either run's own process medians (the drift this
 * machine showed within a run) and than the threshold; "same" only when the noise and the
 * interval are inside the threshold: otherwise the row says it cannot tell. */
static void decide(nnp_compare_row *c, const nnp_compare_options *o, const nnp_bench_row *base,
                   const nnp_bench_row *next) {
  double up = 1 + o->threshold, down = 1 / up;
  bool slower = c->ratio > up && c->proc_ratio > up && c->ratio_lo > 1 && c->mw_p < o->alpha;
  bool faster = c->ratio < down && c->proc_ratio < down && c->ratio_hi < 1 && c->mw_p < o->alpha;
  bool base_noisier = c->base_spread >= c->new_spread;
  double noise = base_noisier ? c->base_spread : c->new_spread;
  const char *noisier = base_noisier ? "BASE" : "NEW";
  c->verdict = NNP_CMP_INCONCLUSIVE;
  if (c->base_processes < 2 || c->new_processes < 2) {
    bool b = c->base_processes < 2;
    snprintf(c->why, sizeof c->why,
             "%s has %d worker process: run-to-run noise is not measured (bench --processes 3 or more)",
             b ? "BASE" : "NEW", b ? c->base_processes : c->new_processes);
    return;
  }
  /* a row whose threads competed with other work measured the other work as much as the
   * code: on this 2-CPU machine, 20 pairs of identical runs beside 1.4-1.9 CPUs of other
   * work moved by up to 23% (docs/report.md) while each run's own processes agreed */
  const nnp_bench_row *over = nnp_row_oversubscribed(base, o->base_cpus) ? base
                              : nnp_row_oversubscribed(next, o->new_cpus) ? next : NULL;
  if (over) {
    snprintf(c->why, sizeof c->why, "%s was oversubscribed: other work kept %.1f of %d CPUs busy beside its %d thread%s",
             over == base ? "BASE" : "NEW", over->other_cpus, over == base ? o->base_cpus : o->new_cpus, over->threads,
             over->threads == 1 ? "" : "s");
    return;
  }
  if (slower || faster) {
    double change = slower ? c->proc_ratio - 1 : 1 / c->proc_ratio - 1;
    if (change > noise) {
      c->verdict = slower ? NNP_CMP_REGRESSION : NNP_CMP_IMPROVEMENT;
      return;
    }
    snprintf(c->why, sizeof c->why, "the %.0f%% change is within the %.0f%% spread of %s's own worker processes",
             change * 100, noise * 100, noisier);
    return;
  }
  if (noise > o->threshold)
    snprintf(c->why, sizeof c->why,
             "the worker processes of %s differ by %.0f%% among themselves: more than the %.0f%% threshold can resolve",
             noisier, noise * 100, o->threshold * 100);
  else if (c->ratio_lo < down || c->ratio_hi > up)
    snprintf(c->why, sizeof c->why, "the 95%% interval [%.3f, %.3f] reaches beyond the %.0f%% threshold", c->ratio_lo,
             c->ratio_hi, o->threshold * 100);
  else
    c->verdict = NNP_CMP_SAME;
}

nnp_status nnp_compare_rows(const nnp_bench_row *base, const nnp_bench_row *next, const nnp_compare_options *o,
                            nnp_compare_row *out) {
  memset(out, 0, sizeof *out);
  out->verdict = NNP_CMP_NOT_COMPARED;
  out->ratio = out->ratio_lo = out->ratio_hi = out->proc_ratio = out->mw_p = out->cliffs_delta = NAN;
  out->base_n = base->n_samples;
  out->new_n = next->n_samples;
  if (base->status != NNP_ROW_OK || next->status != NNP_ROW_OK || base->n_samples < 2 || next->n_samples < 2 ||
      !base->samples || !next->samples)
    return NNP_OK;
  int cb[NNP_MAX_PROCESSES], cn[NNP_MAX_PROCESSES], ob[NNP_MAX_PROCESSES], on[NNP_MAX_PROCESSES];
  int gb = row_groups(base, cb), gn = row_groups(next, cn);
  out->base_processes = gb;
  out->new_processes = gn;
  int maxc = 0;
  for (int p = 0, off = 0; p < gb; off += cb[p], p++) ob[p] = off, maxc = cb[p] > maxc ? cb[p] : maxc;
  for (int p = 0, off = 0; p < gn; off += cn[p], p++) on[p] = off, maxc = cn[p] > maxc ? cn[p] : maxc;
  /* a resample holds up to groups x largest group samples */
  size_t cap = (size_t)maxc * (size_t)(gb > gn ? gb : gn);
  if (cap < (size_t)base->n_samples) cap = (size_t)base->n_samples;
  if (cap < (size_t)next->n_samples) cap = (size_t)next->n_samples;
  double *buf = nnp_malloc(sizeof(double) * cap);
  int R = o->resamples > 0 ? o->resamples : 1000;
  double *ratios = nnp_malloc(sizeof(double) * (size_t)R);
  if (!buf || !ratios) {
    nnp_free(buf);
    nnp_free(ratios);
    return nnp_error(NNP_ERR_NOMEM, "out of memory comparing rows");
  }
  memcpy(buf, base->samples, sizeof(double) * (size_t)base->n_samples);
  double mb = median_inplace(buf, base->n_samples);
  memcpy(buf, next->samples, sizeof(double) * (size_t)next->n_samples);
  double mn = median_inplace(buf, next->n_samples);
  out->ratio = mn / mb;
  out->proc_ratio = process_level_median(next, buf, &out->new_spread) / process_level_median(base, buf, &out->base_spread);
  uint64_t rng = o->seed ^ 0xC0FFEEull;
  int kept = 0;
  for (int r = 0; r < R; r++) {
    double b = resampled_median(base, cb, ob, gb, buf, &rng);
    double n = resampled_median(next, cn, on, gn, buf, &rng);
    if (b > 0 && isfinite(n)) ratios[kept++] = n / b;
  }
  if (kept > 0) {
    qsort(ratios, (size_t)kept, sizeof *ratios, cmp_double);
    out->ratio_lo = ratios[(int)floor(0.025 * (kept - 1))];
    out->ratio_hi = ratios[(int)ceil(0.975 * (kept - 1))];
  }
  nnp_free(buf);
  nnp_free(ratios);
  NNP_TRY(nnp_mann_whitney(base->samples, base->n_samples, next->samples, next->n_samples, &out->mw_p,
                           &out->cliffs_delta));
  decide(out, o, base, next);
  return NNP_OK;
}
