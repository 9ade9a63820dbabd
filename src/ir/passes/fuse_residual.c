/* Residual fusion: Conv(...) -> Add(conv_out, r) becomes FusedConv(X, W, B, r) when r has
 * exactly the Conv output's shape and both are float32 (read from the inferred shapes, so a
 * broadcasting Add is never fused). The Add must be the Conv output's only reader. Runs
 * before activation fusion, so Conv -> Add -> Relu ends as one FusedConv. */
#include "ir/passes/pass_util.h"
#include "nnperf/alloc.h"
#include "ops/internal_ops.h"

nnp_status nnp_pass_fuse_residual(nnp_graph *g, const nnp_graph_shapes *shapes, int *count) {
  *count = 0;
  if (!shapes) return NNP_OK;
  for (int i = 0; i < g->n_nodes; i++) {
    nnp_node *conv = &g->nodes[i];
    if (conv->op != NNP_OP_CONV || conv->n_outputs != 1 || conv->outputs[0] < 0) continue;
    const int c = conv->outputs[0];
    const int ai = pass_single_consumer(g, c);
    if (ai < 0) continue;
    const nnp_node *add = &g->nodes[ai];
    if (add->op != NNP_OP_ADD || add->n_inputs != 2 || add->n_outputs != 1) continue;
    const int r = add->inputs[0] == c ? add->inputs[1] : add->inputs[0];
    if (r == c || r < 0) continue;
    const nnp_tensor *tc = pass_shape(shapes, c), *tr = pass_shape(shapes, r), *ty = pass_shape(shapes, add->outputs[0]);
    if (!tc || !tr || !ty || tc->dtype != NNP_F32 || tr->dtype != NNP_F32 || !nnp_tensor_same_shape(tc, tr) ||
        !nnp_tensor_same_shape(tc, ty))
      continue;
    int *ni = nnp_realloc(conv->inputs, 4 * sizeof *ni);
    if (!ni) return nnp_error(NNP_ERR_NOMEM, "out of memory fusing a residual Add");
    for (int k = conv->n_inputs; k < 4; k++) ni[k] = -1;
    conv->inputs = ni;
    conv->n_inputs = 4;
    conv->inputs[3] = r;
    conv->outputs[0] = add->outputs[0];
    NNP_TRY(pass_make_internal(conv, NNP_OP_FUSED_CONV, "FusedConv"));
    pass_remove_node(g, ai);
    if (ai < i) i--;
    ++*count;
  }
  return NNP_OK;
}
