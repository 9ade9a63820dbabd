/* Load-scenario schedules and the latency tracker: determinism, the statistics of the
 * Poisson arrivals, and the percentile rule. */
#include <math.h>
#include <string.h>

#include "load/schedule.h"
#include "load/tracker.h"
#include "test.h"

#define N 200000

static double a[N], b[N];

static void poisson_determinism(void) {
  nnp_schedule_poisson(50, N, 7, a);
  nnp_schedule_poisson(50, N, 7, b);
  CHECK(memcmp(a, b, sizeof a) == 0); /* same seed: the very same arrivals */
  nnp_schedule_poisson(50, N, 8, b);
  int same = 0;
  for (int i = 0; i < 1000; i++) same += a[i] == b[i];
  CHECK_MSG(same == 0, "%d of 1000 arrivals equal across seeds", same);
  int sorted = 1;
  for (int i = 1; i < N; i++) sorted &= a[i] >= a[i - 1];
  CHECK(sorted && a[0] > 0);
  /* a prefix does not depend on the run length: a shorter run is the same schedule cut */
  nnp_schedule_poisson(50, 100, 7, b);
  CHECK(memcmp(a, b, 100 * sizeof a[0]) == 0);
}

static void poisson_statistics(void) {
  const double qps = 50;
  nnp_schedule_poisson(qps, N, 3, a);
  /* exponential gaps: mean 1/qps, standard deviation 1/qps, P(gap > mean) = 1/e */
  double sum = 0, sq = 0;
  int above = 0;
  for (int i = 0; i < N; i++) {
    double g = a[i] - (i ? a[i - 1] : 0);
    sum += g;
    sq += g * g;
    above += g > 1 / qps;
  }
  double mean = sum / N, sd = sqrt(sq / N - mean * mean);
  CHECK_MSG(fabs(mean * qps - 1) < 0.01, "mean gap %g, expected %g", mean, 1 / qps);
  CHECK_MSG(fabs(sd / mean - 1) < 0.02, "coefficient of variation %g, expected 1", sd / mean);
  CHECK_MSG(fabs((double)above / N - exp(-1)) < 0.005, "P(gap > mean) %g, expected %g", (double)above / N, exp(-1));
  /* counts per 1-second window are Poisson: variance equals the mean (dispersion 1) */
  int windows = (int)a[N - 1];
  static int count[10000];
  memset(count, 0, sizeof count);
  for (int i = 0; i < N; i++)
    if ((int)a[i] < windows) count[(int)a[i]]++;
  double cm = 0, cv = 0;
  for (int w = 0; w < windows; w++) cm += count[w];
  cm /= windows;
  for (int w = 0; w < windows; w++) cv += (count[w] - cm) * (count[w] - cm);
  cv /= windows - 1;
  CHECK_MSG(fabs(cm - qps) < 1, "mean count per second %g, expected %g", cm, qps);
  CHECK_MSG(fabs(cv / cm - 1) < 0.15, "dispersion index %g, expected 1", cv / cm);
}

static void poisson_exact(void) {
  /* conditioned on n arrivals in n/qps: the same gap statistics, the exact rate */
  const double qps = 40;
  nnp_schedule_poisson_exact(qps, N, 5, a);
  nnp_schedule_poisson_exact(qps, N, 5, b);
  CHECK(memcmp(a, b, sizeof a) == 0);
  CHECK(a[N - 1] < N / qps && a[N - 1] > 0.99 * N / qps);
  double sum = 0, sq = 0;
  for (int i = 0; i < N; i++) {
    double g = a[i] - (i ? a[i - 1] : 0);
    sum += g;
    sq += g * g;
  }
  double mean = sum / N, sd = sqrt(sq / N - mean * mean);
  CHECK_MSG(fabs(mean * qps - 1) < 0.01, "mean gap %g", mean);
  CHECK_MSG(fabs(sd / mean - 1) < 0.02, "coefficient of variation %g", sd / mean);
  for (int n = 10; n <= 1000; n *= 10) { /* short runs: offered rate exactly qps */
    nnp_schedule_poisson_exact(qps, n, 9, b);
    CHECK_MSG(b[n - 1] <= n / qps && b[n - 1] > 0.5 * n / qps, "n=%d last arrival %g", n, b[n - 1]);
  }
}

static void periodic_and_offline(void) {
  nnp_schedule_periodic(0.05, 3, 7, a);
  double want[] = {0, 0, 0, 0.05, 0.05, 0.05, 0.1};
  for (int i = 0; i < 7; i++) CHECK_NEAR(a[i], want[i], 1e-12);
  nnp_schedule_offline(5, a);
  for (int i = 0; i < 5; i++) CHECK(a[i] == 0);
}

static void tracker_percentiles(void) {
  /* 1..1000 ms shuffled, plus 10 dropped: nearest rank over the completed ones */
  static double lat[1010];
  for (int i = 0; i < 1000; i++) lat[i] = ((i * 7919) % 1000 + 1) * 1e-3;
  for (int i = 1000; i < 1010; i++) lat[i] = -1;
  nnp_load_summary s;
  CHECK(nnp_load_summarise(lat, 1010, 0.100, 2.0, 505, &s) == 0);
  CHECK(s.queries == 1010 && s.completed == 1000 && s.dropped == 10);
  CHECK_NEAR(s.p50, 0.500, 1e-12);
  CHECK_NEAR(s.p90, 0.900, 1e-12);
  CHECK_NEAR(s.p99, 0.990, 1e-12);
  CHECK_NEAR(s.p999, 0.999, 1e-12);
  CHECK_NEAR(s.max, 1.000, 1e-12);
  CHECK_NEAR(s.mean, 0.5005, 1e-9);
  CHECK(s.late == 900); /* above 100 ms */
  CHECK_NEAR(s.achieved_qps, 500, 1e-9);
  double one = 0.25;
  CHECK(nnp_load_summarise(&one, 1, 0, 1, 1, &s) == 0);
  CHECK(s.p50 == 0.25 && s.p99 == 0.25 && s.p999 == 0.25 && s.late == 0);
  double none = -1;
  CHECK(nnp_load_summarise(&none, 1, 0, 1, 1, &s) == 0);
  CHECK(s.completed == 0 && s.dropped == 1 && s.p99 < 0);
  double sorted[] = {1, 2, 3, 4};
  CHECK(nnp_quantile_sorted(sorted, 4, 0.5) == 2);
  CHECK(nnp_quantile_sorted(sorted, 4, 0.51) == 3);
  CHECK(nnp_quantile_sorted(sorted, 4, 1.0) == 4);
  CHECK(nnp_quantile_sorted(sorted, 4, 0.0) == 1);
}

int main(void) {
  poisson_determinism();
  poisson_statistics();
  poisson_exact();
  periodic_and_offline();
  tracker_percentiles();
  TEST_MAIN_END();
}
