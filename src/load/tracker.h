/* Per-query latencies of one load run and their summary. Latency is measured from the
 * query's *scheduled* arrival to its completion, so time spent queued counts (as in
 * MLPerf LoadGen's server scenario): a system that falls behind shows it. */
#ifndef NNP_LOAD_TRACKER_H
#define NNP_LOAD_TRACKER_H

#include <stdint.h>

typedef struct nnp_load_summary {
  int64_t queries;       /* scheduled */
  int64_t completed;
  int64_t dropped;       /* not completed when the run's drain deadline passed */
  int64_t late;          /* completed above the latency bound (0 when no bound) */
  double p50, p90, p99, p999, mean, max; /* seconds, over completed queries; -1 if none */
  double offered_qps;    /* queries / span of the schedule */
  double achieved_qps;   /* completed / (last completion - start) */
  double span_s;         /* start to last completion */
} nnp_load_summary;

/* The q-quantile (0..1) of sorted[0..n) by the nearest-rank rule: the smallest value
 * with at least q*n values at or below it (P99 of 1000 values is the 990th). */
double nnp_quantile_sorted(const double *sorted, int64_t n, double q);

/* Summarises latency[0..n): entries < 0 are queries that never completed. Sorts a copy.
 * bound_s > 0 counts completions above it as late. */
int nnp_load_summarise(const double *latency, int64_t n, double bound_s, double span_s, double offered_qps,
                       nnp_load_summary *out);

#endif
