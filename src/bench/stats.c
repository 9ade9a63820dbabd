/* Latency statistics: percentiles, moments and bootstrap confidence intervals.
 *
 * All backends' samples go through nnp_stats_compute, so every row of a comparison is
 * summarised by exactly the same arithmetic. */
#include "nnperf/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nnperf/alloc.h"

/* numpy's _lerp: a + (b - a) * t, computed from the nearer end so that t == 1 gives
 * exactly b. Matching numpy bit for bit keeps our numbers comparable with a notebook. */
static double lerp(double a, double b, double t) {
  double d = b - a;
  return t >= 0.5 ? b - d * (1.0 - t) : a + d * t;
}

double nnp_percentile_sorted(const double *sorted, int n, double q) {
  if (!sorted || n <= 0 || isnan(q)) return NAN;
  if (q <= 0.0) return sorted[0];
  if (q >= 1.0) return sorted[n - 1];
  /* "linear" method: virtual index h = (n - 1) q between closest ranks. */
  double h = (double)(n - 1) * q;
  double lo = floor(h);
  int k = (int)lo;
  if (k >= n - 1) return sorted[n - 1];
  return lerp(sorted[k], sorted[k + 1], h - lo);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* --- seeded random numbers (splitmix64: small, fast, passes BigCrush) ------------ */

typedef struct rng {
  uint64_t state;
} rng;

static uint64_t rng_next(rng *g) {
  uint64_t z = (g->state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Uniform in the open interval (0, 1): safe to take the logarithm of. */
static double rng_uniform(rng *g) {
  return ((double)(rng_next(g) >> 11) + 0.5) * 0x1.0p-53;
}

static double rng_normal(rng *g) {
  /* Box-Muller; the second variate is dropped to keep the generator stateless. */
  double u1 = rng_uniform(g), u2 = rng_uniform(g);
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* Gamma(a, 1) for a >= 1 (Marsaglia & Tsang 2000). */
static double rng_gamma(rng *g, double a) {
  double d = a - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = rng_normal(g);
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    double u = rng_uniform(g);
    if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
    if (log(u) < 0.5 * x * x + d * (1.0 - v + log(v))) return d * v;
  }
}

/* Beta(a, b) for a, b >= 1. */
static double rng_beta(rng *g, double a, double b) {
  double x = rng_gamma(g, a), y = rng_gamma(g, b);
  return x / (x + y);
}

/* --- bootstrap --------------------------------------------------------------------- */

/* Element of sorted[0..n) that the empirical quantile function gives at u in (0, 1). */
static double empirical_at(const double *sorted, int n, double u) {
  double r = ceil((double)n * u) - 1.0;
  if (r < 0.0) r = 0.0;
  if (r > (double)(n - 1)) r = (double)(n - 1);
  return sorted[(int)r];
}

/* Percentile q of one bootstrap resample (n draws with replacement from sorted).
 *
 * Drawing n indices and sorting them costs O(n log n) per resample, which for the
 * millions of samples a microsecond-scale model produces in the 60 s cap would make
 * statistics slower than the measurement. Instead we draw the two order statistics the
 * "linear" percentile needs directly from their exact distribution: the j-th smallest of
 * n uniforms is Beta(j, n - j + 1), and given it, the next one is the minimum of the
 * n - j uniforms above it. Mapping those through the empirical quantile function gives
 * the resample's j-th and (j+1)-th smallest values with exactly the distribution that
 * explicit resampling would give, in O(1) per resample. */
static double resample_percentile(rng *g, const double *sorted, int n, double q) {
  double h = (double)(n - 1) * q;
  double lo = floor(h);
  int k = (int)lo; /* 0-based rank of the lower neighbour */
  double t = h - lo;
  int j = k + 1;   /* 1-based */
  double uj = rng_beta(g, (double)j, (double)(n - j + 1));
  double a = empirical_at(sorted, n, uj);
  if (t == 0.0 || j >= n) return a;
  /* min of m = n - j uniforms on (uj, 1): uj + (1 - uj)(1 - V^(1/m)); expm1 keeps the
   * precision when m is large and V^(1/m) is close to 1. */
  double m = (double)(n - j);
  double next = uj + (1.0 - uj) * -expm1(log(rng_uniform(g)) / m);
  double b = empirical_at(sorted, n, next);
  return lerp(a, b, t);
}

/* 95% percentile-bootstrap interval of percentile q; scratch holds RESAMPLES doubles. */
static void bootstrap_ci(rng *g, const double *sorted, int n, double q, double point,
                         double *scratch, double *lo, double *hi) {
  for (int b = 0; b < NNP_STATS_BOOTSTRAP_RESAMPLES; b++)
    scratch[b] = resample_percentile(g, sorted, n, q);
  qsort(scratch, NNP_STATS_BOOTSTRAP_RESAMPLES, sizeof *scratch, cmp_double);
  *lo = nnp_percentile_sorted(scratch, NNP_STATS_BOOTSTRAP_RESAMPLES, 0.025);
  *hi = nnp_percentile_sorted(scratch, NNP_STATS_BOOTSTRAP_RESAMPLES, 0.975);
  /* The percentile method can, for a tail statistic on few samples, give an interval
   * that misses the point estimate; a reported "P99 = x [lo, hi]" with x outside would
   * only confuse, so the interval is widened (never narrowed) to include it. */
  if (point < *lo) *lo = point;
  if (point > *hi) *hi = point;
}

nnp_status nnp_stats_compute(const double *samples, int n, uint64_t seed, nnp_stats *out) {
  if (!out) return nnp_error(NNP_ERR_INVALID, "stats: output is NULL");
  memset(out, 0, sizeof *out);
  if (n <= 0) return nnp_error(NNP_ERR_INVALID, "stats: no samples (n = %d)", n);
  if (!samples) return nnp_error(NNP_ERR_INVALID, "stats: samples is NULL");
  for (int i = 0; i < n; i++)
    if (!isfinite(samples[i]))
      return nnp_error(NNP_ERR_INVALID, "stats: sample %d is not finite (%g)", i, samples[i]);

  double *sorted = nnp_malloc((size_t)n * sizeof *sorted);
  double *scratch = nnp_malloc(NNP_STATS_BOOTSTRAP_RESAMPLES * sizeof *scratch);
  if (!sorted || !scratch) {
    nnp_free(sorted);
    nnp_free(scratch);
    return nnp_error(NNP_ERR_NOMEM, "stats: cannot allocate for %d samples", n);
  }
  memcpy(sorted, samples, (size_t)n * sizeof *sorted);
  qsort(sorted, (size_t)n, sizeof *sorted, cmp_double);

  nnp_stats s;
  memset(&s, 0, sizeof s);
  s.n = n;
  s.min = sorted[0];
  s.max = sorted[n - 1];
  /* Two passes (mean, then squared deviations) avoid the cancellation of sum-of-squares. */
  double sum = 0.0;
  for (int i = 0; i < n; i++) sum += sorted[i];
  s.mean = sum / n;
  double ss = 0.0;
  for (int i = 0; i < n; i++) {
    double d = sorted[i] - s.mean;
    ss += d * d;
  }
  /* Sample standard deviation (n - 1); one sample has no spread to estimate: 0. */
  s.stdev = n > 1 ? sqrt(ss / (n - 1)) : 0.0;
  s.cv = s.mean != 0.0 ? s.stdev / s.mean : 0.0;
  s.p50 = nnp_percentile_sorted(sorted, n, 0.50);
  s.p90 = nnp_percentile_sorted(sorted, n, 0.90);
  s.p95 = nnp_percentile_sorted(sorted, n, 0.95);
  s.p99 = nnp_percentile_sorted(sorted, n, 0.99);
  s.p999 = nnp_percentile_sorted(sorted, n, 0.999);

  rng g = {seed};
  bootstrap_ci(&g, sorted, n, 0.50, s.p50, scratch, &s.p50_lo, &s.p50_hi);
  bootstrap_ci(&g, sorted, n, 0.99, s.p99, scratch, &s.p99_lo, &s.p99_hi);

  /* Fewer than 10 samples beyond percentile p, i.e. n < 10 / (1 - p). Integer
   * thresholds avoid 10 / (1 - 0.99) landing a hair off 1000 in floating point. */
  s.p99_underpowered = n < 1000;
  s.p999_underpowered = n < 10000;

  nnp_free(sorted);
  nnp_free(scratch);
  *out = s;
  return NNP_OK;
}

/* k-th smallest (0-based) of the union in which group g's sorted samples count w[g]
 * times: binary search over the pooled sorted values, counting with upper bounds. */
static int64_t upper_bound(const double *a, int n, double v) {
  int lo = 0, hi = n;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (a[mid] <= v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static double weighted_kth(const double *pooled, int n, double *const *groups, const int *counts, const int *w,
                           int n_groups, int64_t k) {
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    int64_t c = 0;
    for (int g = 0; g < n_groups; g++)
      if (w[g]) c += (int64_t)w[g] * upper_bound(groups[g], counts[g], pooled[mid]);
    if (c > k) hi = mid;
    else lo = mid + 1;
  }
  return pooled[lo];
}

static void cluster_ci(rng *rg, const double *pooled, int n, double *const *groups, const int *counts, int n_groups,
                       double q, double *scratch, double *lo, double *hi) {
  int w[64];
  for (int b = 0; b < NNP_STATS_BOOTSTRAP_RESAMPLES; b++) {
    memset(w, 0, sizeof w);
    int64_t total = 0;
    for (int d = 0; d < n_groups; d++) {
      int g = (int)(rng_next(rg) % (uint64_t)n_groups);
      w[g]++;
      total += counts[g];
    }
    double h = (double)(total - 1) * q;
    int64_t k = (int64_t)floor(h);
    double a = weighted_kth(pooled, n, groups, counts, w, n_groups, k);
    double c = k + 1 < total ? weighted_kth(pooled, n, groups, counts, w, n_groups, k + 1) : a;
    scratch[b] = lerp(a, c, h - floor(h));
  }
  qsort(scratch, NNP_STATS_BOOTSTRAP_RESAMPLES, sizeof *scratch, cmp_double);
  double l = nnp_percentile_sorted(scratch, NNP_STATS_BOOTSTRAP_RESAMPLES, 0.025);
  double u = nnp_percentile_sorted(scratch, NNP_STATS_BOOTSTRAP_RESAMPLES, 0.975);
  if (l < *lo) *lo = l;
  if (u > *hi) *hi = u;
}

nnp_status nnp_stats_compute_grouped(const double *samples, int n, const int *counts, int n_groups, uint64_t seed,
                                     nnp_stats *out) {
  NNP_TRY(nnp_stats_compute(samples, n, seed, out));
  if (n_groups <= 1) return NNP_OK;
  if (n_groups > 64) return nnp_error(NNP_ERR_INVALID, "stats: at most 64 groups, not %d", n_groups);
  int total = 0;
  for (int g = 0; g < n_groups; g++) {
    if (counts[g] <= 0) return nnp_error(NNP_ERR_INVALID, "stats: group %d is empty", g);
    total += counts[g];
  }
  if (total != n) return nnp_error(NNP_ERR_INVALID, "stats: group counts add up to %d, not %d", total, n);
  double *pooled = nnp_malloc((size_t)n * 2 * sizeof *pooled);
  double *scratch = nnp_malloc(NNP_STATS_BOOTSTRAP_RESAMPLES * sizeof *scratch);
  if (!pooled || !scratch) {
    nnp_free(pooled);
    nnp_free(scratch);
    return nnp_error(NNP_ERR_NOMEM, "stats: cannot allocate for %d samples", n);
  }
  /* pooled[0..n): all samples sorted; pooled[n..2n): each group's samples sorted */
  double *groups[64];
  memcpy(pooled, samples, (size_t)n * sizeof *pooled);
  qsort(pooled, (size_t)n, sizeof *pooled, cmp_double);
  memcpy(pooled + n, samples, (size_t)n * sizeof *pooled);
  for (int g = 0, off = 0; g < n_groups; off += counts[g], g++) {
    groups[g] = pooled + n + off;
    qsort(groups[g], (size_t)counts[g], sizeof *pooled, cmp_double);
  }
  rng g2 = {seed ^ 0x5DEECE66Dull};
  cluster_ci(&g2, pooled, n, groups, counts, n_groups, 0.50, scratch, &out->p50_lo, &out->p50_hi);
  cluster_ci(&g2, pooled, n, groups, counts, n_groups, 0.99, scratch, &out->p99_lo, &out->p99_hi);
  nnp_free(pooled);
  nnp_free(scratch);
  return NNP_OK;
}
