/* Result output: the human table, JSON (versioned schema, raw samples included) and CSV. */
#ifndef NNPERF_REPORT_H
#define NNPERF_REPORT_H

#include <stdio.h>

#include "nnperf/bench.h"
#include "nnperf/result.h"
#include "nnperf/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The comparison table. Rows are compared (the "vs baseline" column) only with rows of
 * the same precision and threads as the baseline, unless r->allow_mixed, in which case
 * precision and threads are shown as their own columns. Failed/unavailable rows show
 * their status and reason. Accuracy beyond tolerance is marked. */
void nnp_report_table(FILE *f, const nnp_bench_result *r);

/* The result document (nnperf/result.h owns it); these names stay for their callers. */
static inline void nnp_report_json(FILE *f, const nnp_bench_result *r) { nnp_result_write(f, r); }
static inline nnp_status nnp_report_write_json(const nnp_bench_result *r, const char *path) {
  return nnp_result_write_file(r, path);
}
/* One line per row, summary statistics only (no raw samples). */
nnp_status nnp_report_write_csv(const nnp_bench_result *r, const char *path);

#ifdef __cplusplus
}
#endif
#endif
