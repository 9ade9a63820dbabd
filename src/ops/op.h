/* The operator interface: every op is one nnp_op_info in the op table.
 *
 * Contract for implementers:
 *  - infer() runs at plan-compile (load) time. Inputs carry dtype and shape; in[i]->data
 *    is non-NULL only when the value is known at compile time (initializer, constant or
 *    folded shape computation). It must validate attributes, input types and shapes, set
 *    every present output's dtype, rank and dims, and set ctx->scratch_needed if the
 *    kernel needs workspace. Anything the kernel cannot do (an unsupported mode, dtype or
 *    attribute) must fail HERE with NNP_ERR_UNSUPPORTED, never in the kernel.
 *  - ref() is the generic C reference kernel: the oracle every optimised kernel is tested
 *    against. It never allocates: outputs and scratch are provided by the engine, shaped as
 *    infer() said.
 *  - Errors are reported with nnp_error(); the engine adds the node name and op type. */
#ifndef NNP_OPS_OP_H
#define NNP_OPS_OP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nnperf/ir.h"
#include "nnperf/status.h"
#include "nnperf/tensor.h"
#include "ops/op_list.h"

typedef enum nnp_op_id {
  NNP_OP_UNKNOWN = 0,
#define NNP_OP_ENUM_(E, s, name) NNP_OP_##E,
  NNP_OP_LIST(NNP_OP_ENUM_)
#undef NNP_OP_ENUM_
  NNP_OP_COUNT
} nnp_op_id;

typedef struct nnp_threadpool nnp_threadpool;

typedef struct nnp_op_ctx {
  const nnp_node *node;   /* attributes: nnp_attr_int(ctx->node, "axis", 0) etc. */
  int64_t opset;          /* default-domain opset of the model */
  int n_in;
  const nnp_tensor *const *in;  /* in[i] == NULL: optional input omitted */
  int n_out;
  nnp_tensor *const *out;       /* out[i] == NULL: optional output omitted */
  void *scratch;                /* kernel: workspace of scratch_size bytes */
  size_t scratch_size;
  size_t scratch_needed;        /* infer: bytes of workspace the kernel will need */
  nnp_threadpool *pool;         /* fast kernels: the plan's threads (NULL: caller only) */
} nnp_op_ctx;

typedef nnp_status (*nnp_infer_fn)(nnp_op_ctx *ctx);
typedef nnp_status (*nnp_kernel_fn)(nnp_op_ctx *ctx);

enum {
  /* The kernel reads only input shapes, never input data (Shape, Size): the engine
   * evaluates it at compile time whenever input shapes are known. */
  NNP_OPF_SHAPE_ONLY = 1 << 0,
  /* Inputs have no upper bound in count (Concat, Sum, Max, ...). */
  NNP_OPF_VARIADIC = 1 << 1
};

/* An optimised kernel chosen for one step at plan compile (see nnp_op_info.prepare):
 * state (packed weights, the chosen algorithm) is owned by the plan and freed with
 * destroy. run gets the same ctx as ref, plus ctx->pool. */
typedef struct nnp_fast_kernel {
  nnp_status (*run)(void *state, nnp_op_ctx *ctx);
  void (*destroy)(void *state);
  void *state;
  size_t scratch_needed; /* bytes of ctx->scratch run needs */
  const char *name;      /* e.g. "conv2d.im2col.avx2": for inspect and explain */
} nnp_fast_kernel;

/* prepare() runs at plan compile when nnp_plan_options.fast_kernels is on, after infer():
 * inputs carry data only when known at load time (weights), outputs their shapes. It
 * fills *out, or leaves out->run NULL to decline (the reference kernel runs instead: an
 * unusual dtype, non-constant weights, ...). generic: portable C kernels only. */
typedef nnp_status (*nnp_prepare_fn)(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out);

typedef struct nnp_op_info {
  const char *name;
  int8_t min_inputs, max_inputs;   /* max ignored when NNP_OPF_VARIADIC */
  int8_t min_outputs, max_outputs;
  unsigned flags;
  nnp_infer_fn infer;
  nnp_kernel_fn ref;
  nnp_prepare_fn prepare; /* optional: selects a fast kernel at plan compile */
} nnp_op_info;

#define NNP_OP_DECL_(E, s, name) extern const nnp_op_info nnp_op_##s;
NNP_OP_LIST(NNP_OP_DECL_)
#undef NNP_OP_DECL_

/* Descriptor of op id, NULL for NNP_OP_UNKNOWN or out of range. */
const nnp_op_info *nnp_op_get(int op);
/* Op id for (domain, op_type); NNP_OP_UNKNOWN if nnperf does not implement it. */
int nnp_op_lookup(const char *domain, const char *op_type);

#endif
