/* The native engine: compiles a graph into a plan for fixed input shapes and runs it.
 *
 * A plan borrows the graph: the graph must outlive it. All memory a plan needs is
 * allocated by nnp_plan_compile; nnp_plan_run allocates nothing. */
#ifndef NNPERF_ENGINE_H
#define NNPERF_ENGINE_H

#include <stdint.h>

#include "nnperf/ir.h"
#include "nnperf/passes.h" /* NNP_PASS_* bits of nnp_plan_options.passes */
#include "nnperf/status.h"
#include "nnperf/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NNP_PLAN_MAX_BINDINGS 16

typedef struct nnp_plan nnp_plan;

typedef struct nnp_dim_binding {
  const char *symbol; /* a dim_param of the model, e.g. "N" or "batch_size" */
  int64_t value;
} nnp_dim_binding;

typedef struct nnp_shape_binding {
  const char *input; /* graph input name */
  int rank;
  int64_t dims[NNP_MAX_RANK];
} nnp_shape_binding;

typedef struct nnp_plan_options {
  /* Value given to symbolic or unknown input dimensions without a binding (default 1:
   * the symbolic batch dimension becomes batch 1). */
  int64_t default_dim;
  int n_dims;
  nnp_dim_binding dims[NNP_PLAN_MAX_BINDINGS];
  int n_shapes; /* explicit full shapes for inputs, override the declared ones */
  nnp_shape_binding shapes[NNP_PLAN_MAX_BINDINGS];
  /* Graph inputs frozen to a value at load time (as TensorRT treats shape tensors):
   * the value is copied, the input keeps that value for every run, and whatever
   * depends on it (a Reshape's target shape, Slice bounds, ...) becomes static. */
  int n_consts;
  struct {
    const char *input;
    const nnp_tensor *value;
  } consts[NNP_PLAN_MAX_BINDINGS];
  /* Optimisation switches: nnperf explain turns them on one at a time, so each one's
   * contribution is measured. nnp_plan_options_default turns every one on, with the
   * passes NNP_PASS_DEFAULT (all of them). */
  unsigned passes;   /* NNP_PASS_* bits: graph passes run before compile */
  bool memory_plan;  /* one arena, offsets from liveness; false: a buffer per value */
  bool fast_kernels; /* CPUID-selected optimised kernels; false: reference kernels only */
  int threads;       /* threads the kernels use (the caller's thread included); default 1 */
  bool bf16;         /* bf16 matrix-product operands, fp32 accumulation (src/engine/bf16.h) */
  /* Batch > 1 on a per-sample graph: run it image by image on batch-1 plans, the images
   * spread over the threads (engine/batch_lanes.h); NNP_LANES_OFF: layer at a time over
   * the whole batch; NNP_LANES_AUTO (the default): lanes unless the weights outweigh an
   * image's activations by far (engine/batch_lanes.h says when). With lanes,
   * nnp_plan_run leaves the batch plan's intermediate values unwritten (only its inputs
   * and outputs are used): a caller that reads intermediates (calibration) turns lanes
   * off. */
  int batch_lanes;
} nnp_plan_options;

/* nnp_plan_options.batch_lanes (false and true read as off and on) */
enum { NNP_LANES_AUTO = -1, NNP_LANES_OFF = 0, NNP_LANES_ON = 1 };

void nnp_plan_options_default(nnp_plan_options *o);
/* Binds input `input` to the full shape dims[0..rank): replaces its binding in o, or
 * adds one (NNP_ERR_LIMIT past NNP_PLAN_MAX_BINDINGS). `input` is borrowed. */
nnp_status nnp_plan_options_bind_shape(nnp_plan_options *o, const char *input, int rank, const int64_t *dims);

/* Shape and dtype of graph input i (index into g->inputs) under opt: an explicit
 * shape binding, else the declared dims with symbolic ones bound (t->data stays NULL). */
nnp_status nnp_resolve_input_shape(const nnp_graph *g, const nnp_plan_options *opt, int i, nnp_tensor *t);

/* Resolves input shapes, checks every op is supported (listing all that are not, by op
 * and node), infers all shapes, evaluates what is known at load time, allocates. */
nnp_status nnp_plan_compile(const nnp_graph *g, const nnp_plan_options *opt, nnp_plan **out);
void nnp_plan_destroy(nnp_plan *p);

int nnp_plan_num_inputs(const nnp_plan *p);
const char *nnp_plan_input_name(const nnp_plan *p, int i);
int nnp_plan_find_input(const nnp_plan *p, const char *name);
/* The input buffer itself (dtype and shape fixed at compile time): fill it in place. */
nnp_tensor *nnp_plan_input(nnp_plan *p, int i);
/* Copies src into input i after checking dtype and shape. */
nnp_status nnp_plan_set_input(nnp_plan *p, int i, const nnp_tensor *src);

/* One synchronous inference. */
nnp_status nnp_plan_run(nnp_plan *p);
/* Runs step s alone (steps must run in order; explain --profile times each). */
nnp_status nnp_plan_run_step(nnp_plan *p, int s);

int nnp_plan_num_outputs(const nnp_plan *p);
const char *nnp_plan_output_name(const nnp_plan *p, int i);
const nnp_tensor *nnp_plan_output(const nnp_plan *p, int i);

/* Introspection (inspect, explain): the tensor of graph value v as compiled (dtype,
 * shape, buffer; NULL for a value no node uses or defines), whether it was known at
 * load time, the executed steps and the node each runs. */
const nnp_tensor *nnp_plan_value(const nnp_plan *p, int v);
bool nnp_plan_value_is_constant(const nnp_plan *p, int v);
int nnp_plan_num_steps(const nnp_plan *p);
/* The graph the plan executes: the caller's, or its rewritten clone when passes ran
 * (value indices of the caller's graph stay valid in it; it may have more values). */
const nnp_graph *nnp_plan_graph(const nnp_plan *p);
const nnp_node *nnp_plan_step_node(const nnp_plan *p, int s);
/* Activation memory of the plan: the planned arena, each value its own buffer (naive),
 * the most bytes live at one step (lower bound for any placement without more in-place
 * sharing). Without memory_plan, planned = naive and lower_bound = 0 (not computed). */
typedef struct nnp_plan_memory {
  size_t planned, naive, lower_bound;
  int inplace; /* outputs written over their input */
  int buffers; /* planned intermediates */
} nnp_plan_memory;
const nnp_plan_memory *nnp_plan_memory_stats(const nnp_plan *p);
/* The kernel step s runs: "reference", or the fast kernel's name ("conv2d.im2col.avx2"). */
const char *nnp_plan_step_kernel(const nnp_plan *p, int s);
/* Threads the plan's kernels use (the caller's included). */
int nnp_plan_threads(const nnp_plan *p);
/* Batch lanes nnp_plan_run uses (engine/batch_lanes.h), 0 when it runs layer at a time. */
int nnp_plan_batch_lanes(const nnp_plan *p);
/* Bytes of buffers for non-constant intermediate values (each its own buffer). */
size_t nnp_plan_activation_bytes(const nnp_plan *p);

#ifdef __cplusplus
}
#endif
#endif
