/* Comparison statistics: Mann-Whitney U against hand-computed values, Cliff's delta at
 * its limits, and row verdicts on synthetic rows whose truth is known, including the
 * case that motivates the two-level bootstrap: one slow worker process. */
#include <string.h>

#include "nnperf/alloc.h"
#include "nnperf/compare.h"
#include "test.h"

static void test_mann_whitney(void) {
  const double a[] = {1, 2, 3, 4, 5}, b[] = {6, 7, 8, 9, 10};
  double p, d;
  CHECK_OK(nnp_mann_whitney(a, 5, b, 5, &p, &d));
  /* U = 0: mean 12.5, var 25 * 11 / 12, |U - mean| - 0.5 = 12: z = 2.5067, p = 0.01219
   * (scipy.stats.mannwhitneyu(..., method="asymptotic") gives 0.012185) */
  CHECK_NEAR(p, 0.012185, 2e-5);
  CHECK_NEAR(d, 1.0, 1e-12);
  CHECK_OK(nnp_mann_whitney(b, 5, a, 5, &p, &d));
  CHECK_NEAR(d, -1.0, 1e-12);
  CHECK_OK(nnp_mann_whitney(a, 5, a, 5, &p, &d));
  CHECK_NEAR(d, 0.0, 1e-12);
  CHECK(p > 0.9);
  /* ties: {1,1,2} vs {1,2,2}: average ranks 2, 2, 5 for a: R = 9, U_a = 3; delta = 1 - 6/9
   * (pairs: four where b > a, one where b < a, four ties: (4 - 1) / 9) */
  const double c[] = {1, 1, 2}, e[] = {1, 2, 2};
  CHECK_OK(nnp_mann_whitney(c, 3, e, 3, &p, &d));
  CHECK_NEAR(d, 1.0 / 3, 1e-12);
  const double same[] = {3, 3, 3};
  CHECK_OK(nnp_mann_whitney(same, 3, same, 3, &p, &d));
  CHECK(p == 1 && d == 0);
  CHECK(nnp_mann_whitney(a, 0, b, 5, &p, &d) == NNP_ERR_INVALID);
}

static uint64_t rng = 42;
static double noise(void) { /* uniform -1..1, deterministic */
  rng = nnp_mix64(rng + 0x9E3779B97F4A7C15ull);
  return (double)(rng >> 11) * 0x1.0p-53 * 2 - 1;
}

/* A row of procs processes x per samples; process p has median scale[p] ms, +-2% jitter. */
static void row_n(nnp_bench_row *w, const double *scale, int per, int procs) {
  memset(w, 0, sizeof *w);
  snprintf(w->backend, sizeof w->backend, "native");
  snprintf(w->scenario, sizeof w->scenario, "static:1x3x8x8");
  w->status = NNP_ROW_OK;
  w->threads = 1;
  w->batch = 1;
  w->n_processes = procs;
  w->n_samples = procs * per;
  w->samples = nnp_malloc(sizeof(double) * (size_t)w->n_samples);
  for (int p = 0; p < procs; p++) {
    w->process_samples[p] = per;
    for (int i = 0; i < per; i++) w->samples[p * per + i] = scale[p] * 1e-3 * (1 + 0.02 * noise());
  }
}

static void row(nnp_bench_row *w, const double *scale, int per) { row_n(w, scale, per, 3); }

static nnp_compare_verdict verdict(const double *sb, const double *sn, nnp_compare_row *c) {
  nnp_bench_row b, n;
  row(&b, sb, 200);
  row(&n, sn, 200);
  nnp_compare_options o;
  nnp_compare_options_default(&o);
  CHECK(nnp_rows_match(&b, &n));
  CHECK_OK(nnp_compare_rows(&b, &n, &o, c));
  nnp_bench_row_free(&b);
  nnp_bench_row_free(&n);
  return c->verdict;
}

static void test_verdicts(void) {
  nnp_compare_row c;
  const double base[] = {4.0, 4.04, 3.98};
  const double slow[] = {4.4, 4.44, 4.38};      /* +10% */
  const double fast[] = {3.6, 3.64, 3.58};      /* -10% */
  const double same[] = {4.02, 3.99, 4.03};     /* the same, up to process noise */
  const double small[] = {4.12, 4.16, 4.10};    /* +3%: real, but under the 5% threshold */
  const double one_slow[] = {4.0, 4.02, 5.2};   /* one process 30% slow: between-process noise */
  CHECK(verdict(base, slow, &c) == NNP_CMP_REGRESSION);
  CHECK_NEAR(c.ratio, 1.10, 0.02);
  CHECK(c.ratio_lo > 1.05 && c.ratio_hi < 1.15 && c.cliffs_delta > 0.9 && c.mw_p < 1e-10);
  CHECK(verdict(base, fast, &c) == NNP_CMP_IMPROVEMENT);
  CHECK(c.cliffs_delta < -0.9);
  CHECK(verdict(base, same, &c) == NNP_CMP_SAME);
  CHECK(c.ratio_lo < 1 && c.ratio_hi > 1);
  CHECK(verdict(base, small, &c) == NNP_CMP_SAME);
  CHECK(c.mw_p < 1e-6); /* significant, but not relevant: the threshold decides */
  /* samples alone would call this a regression (p tiny, pooled ratio above 1); the
   * process-level median and the two-level interval do not, and a run whose processes
   * differ by 30% cannot resolve a 5% threshold: inconclusive, with the reason */
  CHECK(verdict(base, one_slow, &c) == NNP_CMP_INCONCLUSIVE);
  CHECK(c.ratio_hi > 1.2 && c.proc_ratio < 1.02);
  CHECK_NEAR(c.new_spread, 0.3, 0.03); /* 5.2 / 4.0 - 1: reported as a noisy run */
  CHECK(c.base_spread < 0.03);
  CHECK(strstr(c.why, "NEW") && strstr(c.why, "30%"));
  /* a 10% change inside a run that itself drifted 15%: not defensible */
  const double drift[] = {4.0, 4.6, 4.2}, drift_slow[] = {4.4, 4.5, 4.45};
  CHECK(verdict(drift, drift_slow, &c) == NNP_CMP_INCONCLUSIVE);
  CHECK(strstr(c.why, "BASE") && strstr(c.why, "15%"));
  /* a 30% slowdown beyond that drift is still caught */
  const double much_slower[] = {5.6, 5.7, 5.65};
  CHECK(verdict(drift, much_slower, &c) == NNP_CMP_REGRESSION);

  /* one worker process per row: the process-level guard is the sample ratio again, so
   * even a clean +10% is inconclusive (issue 25: a CI gate must not cry wolf) */
  {
    nnp_bench_row b1, n1;
    row_n(&b1, base, 200, 1);
    row_n(&n1, slow, 200, 1);
    nnp_compare_options o1;
    nnp_compare_options_default(&o1);
    CHECK_OK(nnp_compare_rows(&b1, &n1, &o1, &c));
    CHECK(c.verdict == NNP_CMP_INCONCLUSIVE && strstr(c.why, "1 worker process"));
    nnp_bench_row_free(&b1);
    nnp_bench_row_free(&n1);
  }

  /* a row oversubscribed by other work: inconclusive, even for a clean +10% */
  {
    nnp_bench_row b2, n2;
    row(&b2, base, 200);
    row(&n2, slow, 200);
    n2.threads = b2.threads = 2;
    n2.other_cpus = 1.7;
    nnp_compare_options o2;
    nnp_compare_options_default(&o2);
    o2.base_cpus = o2.new_cpus = 2;
    CHECK_OK(nnp_compare_rows(&b2, &n2, &o2, &c));
    CHECK(c.verdict == NNP_CMP_INCONCLUSIVE && strstr(c.why, "NEW was oversubscribed"));
    n2.other_cpus = 0.1; /* a quiet machine: the verdict stands */
    CHECK_OK(nnp_compare_rows(&b2, &n2, &o2, &c));
    CHECK(c.verdict == NNP_CMP_REGRESSION);
    nnp_bench_row_free(&b2);
    nnp_bench_row_free(&n2);
  }

  /* rows without samples are not compared; configurations must match */
  nnp_bench_row a, b;
  row(&a, base, 10);
  row(&b, base, 10);
  b.status = NNP_ROW_CRASHED;
  nnp_compare_options o;
  nnp_compare_options_default(&o);
  CHECK_OK(nnp_compare_rows(&a, &b, &o, &c));
  CHECK(c.verdict == NNP_CMP_NOT_COMPARED);
  b.threads = 2;
  CHECK(!nnp_rows_match(&a, &b));
  nnp_bench_row_free(&a);
  nnp_bench_row_free(&b);
}

int main(void) {
  test_mann_whitney();
  test_verdicts();
  TEST_MAIN_END();
}
