/* Comparing two bench results row by row: is NEW slower or faster than BASE, by how
 * much, and is the difference larger than the noise of this machine? */
#ifndef NNPERF_COMPARE_H
#define NNPERF_COMPARE_H

#include <stdint.h>

#include "nnperf/bench.h"
#include "nnperf/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nnp_compare_options {
  double threshold;  /* a change smaller than this fraction of the P50 is never flagged (0.05) */
  double alpha;      /* significance level of the Mann-Whitney test (0.05) */
  int resamples;     /* bootstrap resamples of the P50 ratio (1000) */
  uint64_t seed;     /* bootstrap seed: the same inputs give the same verdict */
  int base_cpus, new_cpus; /* CPUs each run had (env), for oversubscribed rows; 0 unknown */
} nnp_compare_options;

void nnp_compare_options_default(nnp_compare_options *o);

typedef enum nnp_compare_verdict {
  NNP_CMP_SAME = 0,     /* no change beyond the threshold that the statistics support */
  NNP_CMP_REGRESSION,   /* NEW slower: every test agrees and the change exceeds the threshold */
  NNP_CMP_IMPROVEMENT,  /* NEW faster, same rule */
  NNP_CMP_NOT_COMPARED, /* a row without samples on either side */
  NNP_CMP_INCONCLUSIVE  /* the evidence cannot carry a verdict either way (why says what is missing) */
} nnp_compare_verdict;
const char *nnp_compare_verdict_name(nnp_compare_verdict v);

typedef struct nnp_compare_row {
  double ratio;              /* P50(NEW) / P50(BASE) of all samples pooled */
  double ratio_lo, ratio_hi; /* 95% two-level bootstrap CI: processes, then samples within them */
  double proc_ratio;         /* median of NEW's process medians / median of BASE's */
  double mw_p;               /* Mann-Whitney U, two-sided p (normal approximation, tie-corrected) */
  double cliffs_delta;       /* P(new > base) - P(new < base): -1..1, > 0 means NEW slower */
  int base_n, new_n, base_processes, new_processes;
  double base_spread, new_spread; /* (largest - smallest) / smallest of each row's process medians */
  nnp_compare_verdict verdict;
  char why[192];             /* inconclusive: what the evidence lacks; "" otherwise */
} nnp_compare_row;

/* Compares the raw samples of two rows (the caller matched their configurations). */
nnp_status nnp_compare_rows(const nnp_bench_row *base, const nnp_bench_row *next, const nnp_compare_options *o,
                            nnp_compare_row *out);

/* The building blocks, exposed for tests. */
/* Two-sided p of the Mann-Whitney U test of a vs b, and Cliff's delta of b over a. */
nnp_status nnp_mann_whitney(const double *a, int na, const double *b, int nb, double *p, double *cliffs_delta);

/* Rows a and b measure the same configuration: backend, precision, threads, batch and
 * scenario (input shapes) are equal. */
int nnp_rows_match(const nnp_bench_row *a, const nnp_bench_row *b);

#ifdef __cplusplus
}
#endif
#endif
