/* nnperf sweep --slurm: submitting a plan's groups as Slurm jobs, and their status. */
#ifndef NNP_CLUSTER_SWEEP_JOBS_H
#define NNP_CLUSTER_SWEEP_JOBS_H

#include <stdio.h>

#include "nnperf/sweep_plan.h"

/* Checks Slurm is there and accepts every hardware class (sbatch --test-only), then
 * submits one --exclusive job per class x group that has rows to run: all of them, or
 * with resume only groups with rows missing or failed (the job itself then runs only
 * those). Nothing is submitted when a check fails. self: the nnperf binary. */
nnp_status nnp_sweep_submit(const nnp_sweep_plan *plan, const char *dir, int resume, const char *self,
                            FILE *log);

/* Prints every job of the results folder (state, node, rows done / failed / expected,
 * the reason of each failed or missing row), then the total. */
nnp_status nnp_sweep_status(const nnp_sweep_plan *plan, const char *dir, FILE *f);

#endif
