/* A fixed pool of worker threads for data-parallel kernels.
 *
 * nnp_threadpool_run splits [0, n) into nnp_threadpool_chunks(tp, n) contiguous chunks
 * (static partitioning: the same cut every run) and the threads, the calling one
 * included (a pool of n threads starts n - 1 workers), claim chunks until none is left,
 * so a thread that is late (descheduled, waking up) holds nobody up. fn must compute
 * each index of its range from that index alone, so results never depend on which
 * thread ran which chunk. A NULL pool, or a pool of one thread, runs fn(ctx, 0, n) on
 * the caller. */
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
/* The same, but each thread first runs its own contiguous share of the chunks (thread i
 * the i-th of `threads` equal parts) and only then helps with the others' from their
 * ends: for memory-bound kernels (depthwise, pooling), where one long stream per
 * thread beat interleaved chunks (threadpool.c). */
void nnp_threadpool_run_homed(nnp_threadpool *tp, nnp_range_fn fn, void *ctx, int64_t n);
/* Chunks a run over n is cut into: min(n, 4 per thread), 1 without workers. */
int nnp_threadpool_chunks(const nnp_threadpool *tp, int64_t n);

#endif
