/* Batch lanes: a batch of N > 1 images run as N inferences of a batch-1 plan, the images
 * spread over the threads (each thread a lane with its own batch-1 plan and arena).
 *
 * Why: layer by layer over the whole batch, every activation is N times larger (the
 * planned arena of mobilenet_v2 grows from 5.7 MiB at batch 1 to 92 MiB at batch 16),
 * so each layer streams its input and output through DRAM instead of L2/L3, and batch 16
 * ran slower per image than batch 1. A batch-1 plan keeps one image's activations in
 * cache from layer to layer; and a whole image per thread needs no synchronisation
 * between layers, where splitting each small layer across threads paid a wake-up and a
 * join per layer.
 *
 * Only for graphs where every step works on each image alone (the per-sample ops of
 * batch_lanes.c: convolutions, pooling, elementwise ops, Gemm/MatMul on constant weights,
 * Flatten/Reshape that keep the batch axis, ...), checked on the compiled batch-N plan;
 * any other graph keeps the layer-at-a-time plan. Each image's result is computed by the
 * same kernels on the same data as in the batch-N plan (convolutions and GEMMs already
 * work image by image or row by row), so the outputs match it. */
#ifndef NNP_ENGINE_BATCH_LANES_H
#define NNP_ENGINE_BATCH_LANES_H

#include "nnperf/engine.h"
#include "util/threadpool.h"

typedef struct nnp_batch_lanes nnp_batch_lanes;

/* Builds the lanes of plan `full` (compiled from `src` under `opt`), or sets *out to NULL
 * when the graph is not per-sample, the batch is 1, or a batch-1 plan does not compile
 * (not an error: the plan then runs layer at a time). Fails only for out of memory. */
nnp_status nnp_batch_lanes_create(const nnp_plan *full, const nnp_graph *src, const nnp_plan_options *opt,
                                  nnp_batch_lanes **out);
void nnp_batch_lanes_destroy(nnp_batch_lanes *bl);
int nnp_batch_lanes_count(const nnp_batch_lanes *bl);
/* One inference of `full`: reads its inputs, writes its outputs; lanes run on tp. */
nnp_status nnp_batch_lanes_run(nnp_batch_lanes *bl, nnp_plan *full, nnp_threadpool *tp);

#endif
