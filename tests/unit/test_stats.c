/* Latency statistics against numpy (expected values computed with numpy 1.24,
 * np.percentile default "linear" method, np.std(ddof=1)). */
#include <stdint.h>
#include <string.h>

#include "nnperf/alloc.h"
#include "nnperf/stats.h"
#include "test.h"

static const double A[10] = {3.0, 1.0, 4.0, 1.5, 5.0, 9.0, 2.0, 6.0, 5.5, 3.5};
static const double B[7] = {0.0123, 0.0119, 0.0131, 0.0125, 0.0122, 0.0188, 0.0120};

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Deterministic skewed "latencies"; the same formula produced the numpy references. */
static void gen(double *x, int n) {
  for (int i = 0; i < n; i++) {
    double u = 1.0 + (double)(((int64_t)i * 7919) % 1000) / 1000.0;
    x[i] = 0.01 * u * u * u;
  }
}

static void test_percentile_sorted(void) {
  double s[10];
  memcpy(s, A, sizeof s);
  qsort(s, 10, sizeof *s, cmp);
  const double q[8] = {0, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 1};
  const double want[8] = {1, 2.25, 3.75, 6.2999999999999989, 7.6499999999999968,
                          8.7300000000000004, 8.9730000000000043, 9};
  for (int i = 0; i < 8; i++) CHECK_NEAR(nnp_percentile_sorted(s, 10, q[i]), want[i], 1e-12);
  CHECK(nnp_percentile_sorted(s, 1, 0.99) == 1.0);
  CHECK(isnan(nnp_percentile_sorted(s, 0, 0.5)));
  CHECK(isnan(nnp_percentile_sorted(NULL, 3, 0.5)));
  /* out-of-range q clamps to the ends */
  CHECK(nnp_percentile_sorted(s, 10, -1) == 1.0 && nnp_percentile_sorted(s, 10, 2) == 9.0);
}

static void test_known_arrays(void) {
  nnp_stats st;
  CHECK_OK(nnp_stats_compute(A, 10, 1, &st));
  CHECK(st.n == 10 && st.min == 1.0 && st.max == 9.0);
  CHECK_NEAR(st.mean, 4.0499999999999998, 1e-12);
  CHECK_NEAR(st.stdev, 2.4203994160744076, 1e-12);
  CHECK_NEAR(st.cv, 2.4203994160744076 / 4.05, 1e-12);
  CHECK_NEAR(st.p50, 3.75, 1e-12);
  CHECK_NEAR(st.p90, 6.2999999999999989, 1e-12);
  CHECK_NEAR(st.p95, 7.6499999999999968, 1e-12);
  CHECK_NEAR(st.p99, 8.7300000000000004, 1e-12);
  CHECK_NEAR(st.p999, 8.9730000000000043, 1e-12);

  CHECK_OK(nnp_stats_compute(B, 7, 1, &st));
  CHECK_NEAR(st.mean, 0.013257142857142856, 1e-15);
  CHECK_NEAR(st.stdev, 0.0024757875129994113, 1e-15);
  CHECK_NEAR(st.p50, 0.0123, 1e-15);
  CHECK_NEAR(st.p90, 0.015380000000000003, 1e-15);
  CHECK_NEAR(st.p95, 0.017089999999999998, 1e-15);
  CHECK_NEAR(st.p99, 0.018457999999999999, 1e-15);
  CHECK_NEAR(st.p999, 0.018765800000000006, 1e-15);
  /* the input is not reordered (stats sorts a copy) */
  CHECK(B[0] == 0.0123 && B[5] == 0.0188);
}

static void test_ci_properties(void) {
  enum { N = 500 };
  double x[N];
  gen(x, N);
  nnp_stats st, st2;
  CHECK_OK(nnp_stats_compute(x, N, 42, &st));
  CHECK_NEAR(st.p50, 0.033919132824999997, 1e-15);
  CHECK_NEAR(st.p99, 0.078332916414699999, 1e-15);
  CHECK(st.p50_lo <= st.p50 && st.p50 <= st.p50_hi);
  CHECK(st.p99_lo <= st.p99 && st.p99 <= st.p99_hi);
  CHECK(st.p50_lo < st.p50_hi);
  /* Against a brute-force numpy bootstrap of the same data (200000 explicit resamples):
   * p50 CI [0.031153, 0.037059], p99 CI [0.077273, 0.079167]. The tolerances are ~5
   * Monte-Carlo standard errors of a 1000-resample estimate of those endpoints. */
  CHECK_NEAR(st.p50_lo, 0.031153355904999999, 6e-4);
  CHECK_NEAR(st.p50_hi, 0.03705886457500001, 6e-4);
  CHECK_NEAR(st.p99_lo, 0.077272791481899986, 3e-4);
  CHECK_NEAR(st.p99_hi, 0.079166516797899988, 3e-4);

  /* same seed -> same interval; another seed -> (almost surely) a different one */
  CHECK_OK(nnp_stats_compute(x, N, 42, &st2));
  CHECK(st2.p50_lo == st.p50_lo && st2.p50_hi == st.p50_hi);
  CHECK(st2.p99_lo == st.p99_lo && st2.p99_hi == st.p99_hi);
  CHECK_OK(nnp_stats_compute(x, N, 43, &st2));
  CHECK(st2.p50_lo != st.p50_lo || st2.p50_hi != st.p50_hi || st2.p99_lo != st.p99_lo);
}

static void test_ci_narrows(void) {
  enum { BIG = 20000 };
  double *x = malloc(BIG * sizeof *x);
  CHECK(x != NULL);
  if (!x) return;
  gen(x, BIG);
  nnp_stats small, big;
  CHECK_OK(nnp_stats_compute(x, 100, 7, &small));
  CHECK_OK(nnp_stats_compute(x, BIG, 7, &big));
  double ws = small.p50_hi - small.p50_lo, wb = big.p50_hi - big.p50_lo;
  CHECK_MSG(wb < ws / 4, "p50 CI width %g (n=%d) vs %g (n=100)", wb, BIG, ws);
  CHECK(big.p50_lo <= big.p50 && big.p50 <= big.p50_hi);
  CHECK(big.p99_lo <= big.p99 && big.p99 <= big.p99_hi);
  CHECK(!big.p99_underpowered && big.p999_underpowered == false);
  free(x);
}

static void test_edges(void) {
  nnp_stats st;
  const double one = 0.004;
  CHECK_OK(nnp_stats_compute(&one, 1, 0, &st));
  CHECK(st.n == 1 && st.min == one && st.max == one && st.mean == one);
  CHECK(st.p50 == one && st.p99 == one && st.p999 == one);
  CHECK(st.stdev == 0.0 && st.cv == 0.0);
  CHECK(st.p50_lo == one && st.p50_hi == one && st.p99_lo == one && st.p99_hi == one);
  CHECK(st.p99_underpowered && st.p999_underpowered);

  CHECK(nnp_stats_compute(A, 0, 0, &st) == NNP_ERR_INVALID);
  CHECK(nnp_stats_compute(A, -3, 0, &st) == NNP_ERR_INVALID);
  CHECK(nnp_stats_compute(NULL, 3, 0, &st) == NNP_ERR_INVALID);
  CHECK(nnp_stats_compute(A, 3, 0, NULL) == NNP_ERR_INVALID);
  const double bad[3] = {1.0, NAN, 2.0};
  CHECK(nnp_stats_compute(bad, 3, 0, &st) == NNP_ERR_INVALID);
  CHECK(strstr(nnp_last_error(), "sample 1") != NULL);

  /* constant samples: zero spread, CI collapses onto the value */
  double c[50];
  for (int i = 0; i < 50; i++) c[i] = 0.25;
  CHECK_OK(nnp_stats_compute(c, 50, 3, &st));
  CHECK(st.stdev == 0.0 && st.p50_lo == 0.25 && st.p99_hi == 0.25);
}

static void test_underpowered(void) {
  enum { N = 10000 };
  double *x = malloc(N * sizeof *x);
  CHECK(x != NULL);
  if (!x) return;
  gen(x, N);
  nnp_stats st;
  CHECK_OK(nnp_stats_compute(x, 999, 1, &st));
  CHECK(st.p99_underpowered && st.p999_underpowered);
  CHECK_OK(nnp_stats_compute(x, 1000, 1, &st));
  CHECK(!st.p99_underpowered && st.p999_underpowered);
  CHECK_OK(nnp_stats_compute(x, 9999, 1, &st));
  CHECK(!st.p99_underpowered && st.p999_underpowered);
  CHECK_OK(nnp_stats_compute(x, 10000, 1, &st));
  CHECK(!st.p99_underpowered && !st.p999_underpowered);
  free(x);
}

static void test_alloc_failure(void) {
  nnp_stats st;
  for (long k = 1; k <= 2; k++) {
    nnp_alloc_fail_after(k);
    nnp_status s = nnp_stats_compute(A, 10, 1, &st);
    nnp_alloc_fail_after(0);
    CHECK_MSG(s == NNP_ERR_NOMEM, "allocation %ld failing gives %s", k, nnp_status_name(s));
  }
  CHECK_OK(nnp_stats_compute(A, 10, 1, &st));
}

/* Grouped samples: processes that disagree widen the P50 interval to cover them;
 * processes that agree leave it as the sample bootstrap's. */
static void test_grouped(void) {
  double x[300];
  int counts[3] = {100, 100, 100};
  for (int i = 0; i < 300; i++) x[i] = (i < 100 ? 10.0 : i < 200 ? 12.0 : 14.0) + 0.01 * (i % 10);
  nnp_stats plain, grouped;
  CHECK_OK(nnp_stats_compute(x, 300, 7, &plain));
  CHECK_OK(nnp_stats_compute_grouped(x, 300, counts, 3, 7, &grouped));
  CHECK(grouped.p50 == plain.p50 && grouped.n == 300);
  CHECK(grouped.p50_lo <= plain.p50_lo && grouped.p50_hi >= plain.p50_hi);
  CHECK_MSG(grouped.p50_lo <= 10.1 && grouped.p50_hi >= 13.9, "CI [%g, %g]", grouped.p50_lo, grouped.p50_hi);
  /* processes that agree: the cluster bootstrap adds (almost) nothing */
  double y[300];
  for (int i = 0; i < 300; i++) y[i] = 10.0 + 0.01 * (i % 37);
  nnp_stats py, gy;
  CHECK_OK(nnp_stats_compute(y, 300, 7, &py));
  CHECK_OK(nnp_stats_compute_grouped(y, 300, counts, 3, 7, &gy));
  CHECK(gy.p50_hi - gy.p50_lo <= 2.0 * (py.p50_hi - py.p50_lo) + 1e-12);
  /* bad grouping */
  int bad[2] = {100, 100};
  CHECK(nnp_stats_compute_grouped(x, 300, bad, 2, 7, &grouped) == NNP_ERR_INVALID);
  int empty[3] = {0, 150, 150};
  CHECK(nnp_stats_compute_grouped(x, 300, empty, 3, 7, &grouped) == NNP_ERR_INVALID);
}

int main(void) {
  test_grouped();
  test_percentile_sorted();
  test_known_arrays();
  test_ci_properties();
  test_ci_narrows();
  test_edges();
  test_underpowered();
  test_alloc_failure();
  TEST_MAIN_END();
}
