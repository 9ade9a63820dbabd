/* Reading a result JSON (docs/result-schema.md) back into an nnp_bench_result, so that
 * reports, history and comparisons work from files as well as from a live run. */
#ifndef NNPERF_RESULT_LOAD_H
#define NNPERF_RESULT_LOAD_H

#include <stddef.h>

#include "nnperf/bench.h"
#include "nnperf/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parses data[0..n) (a whole result document). name labels error messages (a path, or
 * "history run 3"). On success *out owns its rows and samples: release it with
 * nnp_bench_result_free. On failure *out is left empty and the error message names the
 * field at fault, e.g. "r.json: rows[1].stats.p50: expected a number or null".
 * Unknown fields are ignored (the schema lets writers add fields); a schema_version
 * other than NNP_RESULT_SCHEMA_VERSION is NNP_ERR_UNSUPPORTED. Outputs of the
 * inferences are not in the JSON: rows come back with n_outputs 0. */
nnp_status nnp_result_load_buffer(const char *data, size_t n, const char *name, nnp_bench_result *out);

/* The same, from a file; anything but a regular file (a FIFO, a device) is refused
 * before reading, so a FIFO does not block. */
nnp_status nnp_result_load_file(const char *path, nnp_bench_result *out);

#ifdef __cplusplus
}
#endif
#endif
