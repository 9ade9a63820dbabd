/* The shared results folder of a sweep plan (docs/sweep.md):
 *   rows/CLASS/GROUP-ROW.json   one finished row each, a complete result document, written
 *                               atomically (temporary file + rename) by the job that ran it
 *   jobs.tsv                    one line per submitted job: id, class, group, rows
 *   jobs/                       the job scripts and Slurm's output of each job
 * GROUP and ROW are hashes of the group (model and shape) and of the row's key, so a row
 * is found by what it measures, not by its position. */
#ifndef NNP_CLUSTER_RESULTS_DIR_H
#define NNP_CLUSTER_RESULTS_DIR_H

#include <stddef.h>

#include "nnperf/bench.h"
#include "nnperf/sweep_plan.h"

/* Group g's identity as 16 hex digits (model and shape scenario). */
void nnp_results_group_id(const nnp_sweep_plan *plan, int g, char out[17]);

/* mkdir -p of path. */
nnp_status nnp_results_mkdirs(const char *path);

/* Writes row index of res (with its host fields set) as a one-row document to
 * DIR/rows/CLASS/GROUP-ROW.json, atomically. */
nnp_status nnp_results_write_row(const char *dir, const char *gid, const nnp_bench_result *res,
                                 const nnp_bench_row *row);

/* Appends the rows found under DIR/rows/CLASS/ to *out (initialised by the caller): those
 * of group gid, or every group when gid is NULL; ok_only keeps only ok rows. The first
 * document read also gives *out its model, seed, loop and environment when empty. */
nnp_status nnp_results_read(const char *dir, const char *hw_class, const char *gid, int ok_only,
                            nnp_bench_result *out);

/* Whether DIR/rows holds any row file. */
int nnp_results_any(const char *dir);

#endif
