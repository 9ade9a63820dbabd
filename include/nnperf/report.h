/* Result output: the human table, JSON (versioned schema, raw samples included) and CSV. */
#ifndef NNPERF_REPORT_H
#define NNPERF_REPORT_H

#include <stdio.h>

#include "nnperf/bench.h"
#include "nnperf/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The comparison table. Rows are compared (the "vs baseline" column) only with rows of
 * the same precision and threads as the baseline, unless r->allow_mixed, in which case
 * precision and threads are shown as their own columns. Failed/unavailable rows show
 * their status and reason. Accuracy beyond tolerance is marked. */
void nnp_report_table(FILE *f, const nnp_bench_result *r);

/* Whole result as JSON (schema docs/result-schema.md, "schema_version"). */
void nnp_report_json(FILE *f, const nnp_bench_result *r);
/* Writes the JSON to path atomically (temp file in the same folder, fsync, rename), so
 * a reader always sees either the previous complete file or the new one. */
nnp_status nnp_report_write_json(const nnp_bench_result *r, const char *path);
/* One line per row, summary statistics only (no raw samples). */
nnp_status nnp_report_write_csv(const nnp_bench_result *r, const char *path);

#ifdef __cplusplus
}
#endif
#endif
