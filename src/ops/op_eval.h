/* Runs one node on its own: shape inference, output allocation, reference kernel.
 * Used for compile-time evaluation of values known at load time (shape arithmetic) and
 * by the per-op tests. */
#ifndef NNP_OPS_OP_EVAL_H
#define NNP_OPS_OP_EVAL_H

#include "nnperf/ir.h"
#include "ops/op.h"

/* Infers output shapes only; out[i].data stays NULL. in[i] may be NULL (omitted). */
nnp_status nnp_op_infer(const nnp_node *node, int64_t opset, int n_in,
                        const nnp_tensor *const *in, int n_out, nnp_tensor *out,
                        size_t *scratch_needed);

/* Infers, allocates out[0..n_out) with nnp_tensor_alloc (caller frees each with
 * nnp_tensor_free) and runs the reference kernel. */
nnp_status nnp_op_eval(const nnp_node *node, int64_t opset, int n_in,
                       const nnp_tensor *const *in, int n_out, nnp_tensor *out);

#endif
