/* The inputs of a sweep's rows: the plan bindings a batch size makes, and per batch the
 * seeded input tensors every backend gets (identical across backends) with the row's
 * shape scenario string. Shared by the inference workload and the CLI's --batch. */
#ifndef NNP_BENCH_SWEEP_INPUTS_H
#define NNP_BENCH_SWEEP_INPUTS_H

#include <stdint.h>

#include "nnperf/engine.h"
#include "nnperf/ir.h"
#include "nnperf/status.h"
#include "nnperf/tensor.h"

/* Binds each input's symbolic (or unknown) first dimension of g to batch in *plan; an
 * unnamed --shape binding applies to the only input. batch 0: no batch binding. */
void nnp_plan_bind_batch(nnp_plan_options *plan, int64_t batch, const nnp_graph *g);

/* One batch of a sweep: what its rows send to the workers. */
typedef struct nnp_sweep_inputs {
  int n_inputs;
  nnp_tensor inputs[NNP_PLAN_MAX_BINDINGS]; /* owned; the dynamic one is left empty */
  const char *names[NNP_PLAN_MAX_BINDINGS]; /* the graph's input names */
  char scenario[160];                       /* "static:1x3x224x224" or "dynamic:1x3x[160..320]x..." */
  char dyn_dims[160];                       /* the dynamic spec at this batch; "" for static */
} nnp_sweep_inputs;

/* Fills *out for batch (static_rank >= 0: static_dims replace the first input's shape;
 * dynamic non-NULL: the first input is drawn per iteration by the worker). Inputs are
 * seeded with seed + input index. On error *out holds nothing and the message names the
 * input. */
nnp_status nnp_sweep_inputs_make(const nnp_graph *g, const nnp_plan_options *plan, int64_t batch, int static_rank,
                                 const int64_t *static_dims, const char *dynamic, uint64_t seed, nnp_sweep_inputs *out);
void nnp_sweep_inputs_free(nnp_sweep_inputs *in);

/* Checks a dynamic spec: dims joined by 'x', each N (the batch), a positive integer or
 * [LO..HI] with 1 <= LO <= HI, at least one range. */
int nnp_dynamic_spec_valid(const char *spec);

#endif
