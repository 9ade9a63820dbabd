/* Reading a result document back: the reader is nnperf/result.h's nnp_result_read_*
 * (src/result/result_read.c); these names stay for the callers that use them. */
#ifndef NNPERF_RESULT_LOAD_H
#define NNPERF_RESULT_LOAD_H

#include <stddef.h>

#include "nnperf/bench.h"
#include "nnperf/result.h"
#include "nnperf/status.h"

#ifdef __cplusplus
extern "C" {
#endif

static inline nnp_status nnp_result_load_buffer(const char *data, size_t n, const char *name, nnp_bench_result *out) {
  return nnp_result_read_buffer(data, n, name, out);
}

static inline nnp_status nnp_result_load_file(const char *path, nnp_bench_result *out) {
  return nnp_result_read_file(path, out);
}

#ifdef __cplusplus
}
#endif
#endif
