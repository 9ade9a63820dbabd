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

/* Where a row ran: its hardware class ("local" here), node and Slurm job id ("" here). */
typedef struct nnp_results_host {
  const char *hw_class, *node, *job_id;
} nnp_results_host;

/* Writes row index of res, with host and res's environment as its host, as a one-row
 * document to DIR/rows/CLASS/GROUP-ROW.json, atomically: a bench document, or for an LLM
 * run (res->llm) an llm document holding that row with its requests. */
nnp_status nnp_results_write_row(const char *dir, const char *gid, const nnp_bench_result *res, int index,
                                 const nnp_results_host *host);

/* Appends the rows found under DIR/rows/CLASS/ to *out (initialised by the caller): those
 * of group gid, or every group when gid is NULL; done_only keeps only the rows a resume
 * keeps: ok, or unavailable (the backend is not installed there: running the row again
 * would say the same). The first
 * document read also gives *out its model, seed, loop and environment when empty. LLM
 * rows go into out->llm as well (rows[i] mirrors llm->rows[i]); a folder that mixes
 * LLM and bench rows into one *out is an error. */
nnp_status nnp_results_read(const char *dir, const char *hw_class, const char *gid, int done_only,
                            nnp_bench_result *out);

/* Whether DIR/rows holds any row file. */
int nnp_results_any(const char *dir);

#endif
