/* The one timing loop: warm-up until stable (bounded), then the steady state, each
 * iteration timed with CLOCK_MONOTONIC around exactly one synchronous inference. */
#ifndef NNP_BENCH_TIMING_LOOP_H
#define NNP_BENCH_TIMING_LOOP_H

#include <stdbool.h>

#include "nnperf/bench.h"

/* One timed inference. (Named apart from ops/op.h's nnp_infer_fn and nnp_prepare_fn, an op's
 * shape inference and kernel choice: these are the timing loop's callbacks.) */
typedef nnp_status (*nnp_loop_infer_fn)(void *ctx);
/* Called before iteration i (warm-up and steady state numbered together), outside the
 * timed region: dynamic-shape scenarios draw the next shape and prepare its input here. */
typedef nnp_status (*nnp_loop_prepare_fn)(void *ctx, long iteration);
/* Receives each steady-state sample right after it is taken (outside the timed region). */
typedef void (*nnp_sample_sink)(void *ud, double sample_s);

typedef struct nnp_loop_outcome {
  int warmup_iterations;
  bool warmup_stable;
  int n_samples;
  bool time_capped;
} nnp_loop_outcome;

double nnp_now(void); /* CLOCK_MONOTONIC seconds */

/* prepare may be NULL. */
nnp_status nnp_timing_loop(const nnp_loop_spec *spec, nnp_loop_prepare_fn prepare, nnp_loop_infer_fn infer, void *ctx,
                           nnp_sample_sink sink, void *sink_ud, nnp_loop_outcome *out);

/* Median of x[0..n) (copies into tmp, which must hold n doubles). */
double nnp_median(const double *x, int n, double *tmp);

#endif
