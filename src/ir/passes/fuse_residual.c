/* Residual fusion: Conv(...) -> Add(conv_out, r) becomes FusedConv(X, W, B, r) when r has
 * exactly the Conv output's shape and both are float32 (read from the inferred shapes, so a
 * broadcasting Add is never fused). The Add must be the Conv output's only reader. Runs
 * before activation fusion, so Conv -> Add -> Relu ends as one FusedConv.
 *
 * Bias fusion: MatMul(A, B) -> Add(mm, bias), B a constant float32 matrix and bias a
 * constant float32 vector along the output's last axis, becomes FusedMatMul(A, B, bias),
 * the bias added in the GEMM's epilogue; and a same-shape Add reading only that becomes
 * its residual R. Exporters write every linear layer of a transformer (ViT, Swin,
 * ConvNeXt's MLPs) as MatMul + Add: each bias was a pass over the output (vit_b_16: 36). */
#include "ir/passes/pass_util.h"
#include "nnperf/alloc.h"
#include "ops/internal_ops.h"

/* Whether v is a constant float32 vector of n values along the last axis: [n], [1, n], ... */
static bool const_row(const nnp_graph *g, int v, int64_t n) {
  const nnp_tensor *t = v >= 0 ? pass_const_f32(g, v) : NULL;
  if (!t || t->rank < 1 || t->dims[t->rank - 1] != n) return false;
  return nnp_tensor_numel(t) == n;
}

/* The Add that alone reads node i's output, its other input in *other; -1 if none. */
static int sole_add(const nnp_graph *g, int i, int *other) {
  const int c = g->nodes[i].outputs[0];
  const int ai = pass_single_consumer(g, c);
  if (ai < 0) return -1;
  const nnp_node *add = &g->nodes[ai];
  if (add->op != NNP_OP_ADD || add->n_inputs != 2 || add->n_outputs != 1 || add->outputs[0] < 0) return -1;
  *other = add->inputs[0] == c ? add->inputs[1] : add->inputs[0];
  return *other == c || *other < 0 ? -1 : ai;
}

/* Node i's output becomes Add ai's (removed); *i moves back when ai came before it */
static void take_add_output(nnp_graph *g, int *i, int ai) {
  g->nodes[*i].outputs[0] = g->nodes[ai].outputs[0];
  pass_remove_node(g, ai);
  if (ai < *i) --*i;
}

static nnp_status set_inputs(nnp_node *n, int count) {
  int *ni = nnp_realloc(n->inputs, (size_t)count * sizeof *ni);
  if (!ni) return nnp_error(NNP_ERR_NOMEM, "out of memory fusing an Add");
  for (int k = n->n_inputs; k < count; k++) ni[k] = -1;
  n->inputs = ni;
  n->n_inputs = count;
  return NNP_OK;
}

/* Node i, a MatMul of a constant B [K, N] read only by Add(mm, bias): FusedMatMul, and
 * then its sole same-shape Add as R. */
static nnp_status fuse_matmul_bias(nnp_graph *g, const nnp_graph_shapes *shapes, int *i, int *count) {
  nnp_node *mm = &g->nodes[*i];
  if (mm->op != NNP_OP_MATMUL || mm->n_inputs != 2 || mm->n_outputs != 1 || mm->outputs[0] < 0) return NNP_OK;
  const nnp_tensor *b = mm->inputs[1] >= 0 ? pass_const_f32(g, mm->inputs[1]) : NULL;
  const nnp_tensor *ty = pass_shape(shapes, mm->outputs[0]);
  if (!b || b->rank != 2 || !ty || ty->dtype != NNP_F32 || ty->rank < 2) return NNP_OK;
  int bias, ai = sole_add(g, *i, &bias);
  const nnp_tensor *tsum = ai >= 0 ? pass_shape(shapes, g->nodes[ai].outputs[0]) : NULL;
  if (ai < 0 || !const_row(g, bias, b->dims[1]) || !tsum || !nnp_tensor_same_shape(tsum, ty)) return NNP_OK;
  NNP_TRY(set_inputs(mm, 3));
  mm->inputs[2] = bias;
  NNP_TRY(pass_make_internal(mm, NNP_OP_FUSED_MATMUL, "FusedMatMul"));
  take_add_output(g, i, ai);
  ++*count;
  int r;
  ai = sole_add(g, *i, &r);
  const nnp_tensor *tr = ai >= 0 ? pass_shape(shapes, r) : NULL, *ts = ai >= 0 ? pass_shape(shapes, g->nodes[ai].outputs[0]) : NULL;
  if (ai < 0 || !tr || !ts || tr->dtype != NNP_F32 || !nnp_tensor_same_shape(tr, ty) || !nnp_tensor_same_shape(ts, ty))
    return NNP_OK;
  mm = &g->nodes[*i];
  NNP_TRY(set_inputs(mm, 4));
  mm->inputs[3] = r;
  take_add_output(g, i, ai);
  ++*count;
  return NNP_OK;
}

nnp_status nnp_pass_fuse_residual(nnp_graph *g, const nnp_graph_shapes *shapes, int *count) {
  *count = 0;
  if (!shapes) return NNP_OK;
  for (int i = 0; i < g->n_nodes; i++) {
    NNP_TRY(fuse_matmul_bias(g, shapes, &i, count));
    nnp_node *conv = &g->nodes[i];
    if (conv->op != NNP_OP_CONV || conv->n_outputs != 1 || conv->outputs[0] < 0) continue;
    int r;
    const int ai = sole_add(g, i, &r);
    if (ai < 0) continue;
    const nnp_tensor *tc = pass_shape(shapes, conv->outputs[0]), *tr = pass_shape(shapes, r);
    const nnp_tensor *ty = pass_shape(shapes, g->nodes[ai].outputs[0]);
    if (!tc || !tr || !ty || tc->dtype != NNP_F32 || tr->dtype != NNP_F32 || !nnp_tensor_same_shape(tc, tr) ||
        !nnp_tensor_same_shape(tc, ty))
      continue;
    NNP_TRY(set_inputs(conv, 4));
    conv->inputs[3] = r;
    NNP_TRY(pass_make_internal(conv, NNP_OP_FUSED_CONV, "FusedConv"));
    take_add_output(g, &i, ai);
    ++*count;
  }
  return NNP_OK;
}
