#include "ops/op_eval.h"

#include <string.h>

#include "nnperf/alloc.h"

static nnp_status check_arity(const nnp_op_info *info, const nnp_node *node, int n_in, int n_out) {
  if (n_in < info->min_inputs || (!(info->flags & NNP_OPF_VARIADIC) && n_in > info->max_inputs))
    return nnp_error(NNP_ERR_FORMAT, "has %d inputs, %s takes %d to %d", n_in, info->name,
                     info->min_inputs, info->max_inputs);
  if (n_out < info->min_outputs || n_out > info->max_outputs)
    return nnp_error(NNP_ERR_FORMAT, "has %d outputs, %s gives %d to %d", n_out, info->name,
                     info->min_outputs, info->max_outputs);
  (void)node;
  return NNP_OK;
}

nnp_status nnp_op_infer(const nnp_node *node, int64_t opset, int n_in,
                        const nnp_tensor *const *in, int n_out, nnp_tensor *out,
                        size_t *scratch_needed) {
  const nnp_op_info *info = nnp_op_get(node->op);
  if (!info || !info->infer)
    return nnp_error(NNP_ERR_UNSUPPORTED, "op '%s' is not supported", node->op_type);
  NNP_TRY(check_arity(info, node, n_in, n_out));
  for (int i = 0; i < info->min_inputs && i < n_in; i++) /* kernels rely on required inputs */
    if (!in[i]) return nnp_error(NNP_ERR_FORMAT, "required input %d is omitted", i);
  nnp_tensor *outp[n_out > 0 ? n_out : 1];
  for (int i = 0; i < n_out; i++) {
    memset(&out[i], 0, sizeof out[i]);
    outp[i] = &out[i];
  }
  nnp_op_ctx ctx = {.node = node, .opset = opset, .n_in = n_in, .in = in,
                    .n_out = n_out, .out = outp};
  NNP_TRY(info->infer(&ctx));
  for (int i = 0; i < n_out; i++)
    if (out[i].dtype == NNP_UNDEFINED)
      return nnp_error(NNP_ERR_INTERNAL, "shape inference left output %d untyped", i);
  if (scratch_needed) *scratch_needed = ctx.scratch_needed;
  return NNP_OK;
}

nnp_status nnp_op_eval(const nnp_node *node, int64_t opset, int n_in,
                       const nnp_tensor *const *in, int n_out, nnp_tensor *out) {
  size_t scratch_needed = 0;
  NNP_TRY(nnp_op_infer(node, opset, n_in, in, n_out, out, &scratch_needed));
  nnp_status st = NNP_OK;
  for (int i = 0; i < n_out && st == NNP_OK; i++) st = nnp_tensor_alloc(&out[i]);
  void *scratch = NULL;
  if (st == NNP_OK && scratch_needed) {
    scratch = nnp_aligned_alloc(scratch_needed);
    if (!scratch) st = nnp_error(NNP_ERR_NOMEM, "cannot allocate %zu bytes of scratch", scratch_needed);
  }
  if (st == NNP_OK) {
    nnp_tensor *outp[n_out > 0 ? n_out : 1];
    for (int i = 0; i < n_out; i++) outp[i] = &out[i];
    nnp_op_ctx ctx = {.node = node, .opset = opset, .n_in = n_in, .in = in, .n_out = n_out,
                      .out = outp, .scratch = scratch, .scratch_size = scratch_needed};
    st = nnp_op_get(node->op)->ref(&ctx);
  }
  nnp_aligned_free(scratch);
  if (st != NNP_OK)
    for (int i = 0; i < n_out; i++) nnp_tensor_free(&out[i]);
  return st;
}
