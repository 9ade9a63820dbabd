/* Latency statistics, computed in one place for every backend. */
#ifndef NNPERF_STATS_H
#define NNPERF_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "nnperf/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nnp_stats {
  int n;
  double min, max, mean, stdev, cv; /* cv = stdev / mean */
  double p50, p90, p95, p99, p999;
  /* bootstrap 95% confidence intervals (percentile method, seeded resamples) */
  double p50_lo, p50_hi, p99_lo, p99_hi;
  /* A percentile p is "underpowered" when fewer than 10 samples lie beyond it,
   * i.e. n < 10 / (1 - p): P99 needs 1000 samples, P99.9 needs 10000. */
  bool p99_underpowered, p999_underpowered;
} nnp_stats;

#define NNP_STATS_BOOTSTRAP_RESAMPLES 1000

/* Percentile q in [0,1] of sorted[0..n) with linear interpolation between closest ranks
 * (numpy's default "linear" method). */
double nnp_percentile_sorted(const double *sorted, int n, double q);

/* Computes all statistics of samples[0..n) (seconds). seed makes the bootstrap
 * repeatable. n == 0 is NNP_ERR_INVALID. Allocates temporary memory internally. */
nnp_status nnp_stats_compute(const double *samples, int n, uint64_t seed, nnp_stats *out);

/* The same, for samples that come from n_groups worker processes in turn (group g holds
 * the next counts[g] samples). The P50 and P99 intervals then also cover the spread
 * between processes: each is the union of the sample bootstrap's interval and a
 * cluster bootstrap's (processes resampled with replacement, their samples pooled),
 * because one process's samples say nothing about how the next process will run. */
nnp_status nnp_stats_compute_grouped(const double *samples, int n, const int *counts, int n_groups, uint64_t seed,
                                     nnp_stats *out);

#ifdef __cplusplus
}
#endif
#endif
