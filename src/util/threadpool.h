/* A fixed pool of worker threads for data-parallel kernels.
 *
 * nnp_threadpool_run splits [0, n) into one contiguous range per thread (static
 * partitioning: the same split every run, so results never depend on timing) and the
 * calling thread computes the first range itself, so a pool of n threads starts n - 1
 * workers. A NULL pool, or a pool of one thread, runs fn(ctx, 0, n) on the caller. */
#ifndef NNP_UTIL_THREADPOOL_H
#define NNP_UTIL_THREADPOOL_H

#include <stdint.h>

#include "nnperf/status.h"

typedef struct nnp_threadpool nnp_threadpool;
typedef void (*nnp_range_fn)(void *ctx, int64_t begin, int64_t end);

/* threads: total threads including the caller (>= 1). */
nnp_status nnp_threadpool_create(int threads, nnp_threadpool **out);
void nnp_threadpool_destroy(nnp_threadpool *tp);
int nnp_threadpool_threads(const nnp_threadpool *tp);
/* Runs fn over [0, n) split across the threads; returns when every range is done.
 * Not reentrant: one run at a time per pool. */
void nnp_threadpool_run(nnp_threadpool *tp, nnp_range_fn fn, void *ctx, int64_t n);

#endif
