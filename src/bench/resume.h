/* bench --resume: the rows an interrupted sweep already finished, read back from its
 * result JSON (docs/result-schema.md), so that only the rest are run.
 *
 * The file is read by nnp_result_load_file (nnperf/result_load.h), the same reader as
 * report and compare use; this adds the checks a resumed run needs. */
#ifndef NNP_BENCH_RESUME_H
#define NNP_BENCH_RESUME_H

#include "bench/orchestrator.h"
#include "nnperf/bench.h"

/* Reads path into *out: the run's model, seed, loop, accuracy tolerance and noisy flag,
 * and every row with its configuration, outcome, phases, statistics, memory, accuracy
 * and raw samples (outputs are not in the JSON: n_outputs is 0). On error *out is left
 * empty and the message names the file and the field at fault. Free with
 * nnp_bench_result_free. */
nnp_status nnp_resume_load(const char *path, nnp_bench_result *out);

/* Checks that the run about to start (now: model, seed, loop, accuracy_rtol filled)
 * measures what the loaded one did; NNP_ERR_INVALID naming the first difference. */
nnp_status nnp_resume_check_run(const nnp_bench_result *loaded, const nnp_bench_result *now, const char *path);

/* Checks that loaded row `index` has the configuration of the planned row (backend,
 * precision, threads, batch, scenario) and, when ok, was measured by `processes`
 * worker processes. */
nnp_status nnp_resume_check_row(const nnp_bench_row *loaded, const nnp_bench_row *planned, int index,
                                int processes, const char *path);

/* A loaded row has no outputs (the JSON keeps none), yet later rows are compared with
 * the reference row's outputs. This runs req's worker once, with one inference and no
 * warm-up, and gives its outputs to *row; the row's measurements are untouched. The
 * inputs are seeded, so the outputs are those the original run compared against.
 * Returns NNP_OK with row->n_outputs still 0 when the worker produced none. */
nnp_status nnp_resume_fetch_outputs(const nnp_row_request *req, nnp_bench_row *row);

#endif
