/* QDQ fusion of fully connected layers (part of the fuse-qdq pass): the pattern
 *   A  = DequantizeLinear(aq, as, azp)        as, azp scalar initializers, azp uint8
 *   B  = DequantizeLinear(bq, bs, bzp)        bq 2-D int8 initializer, per tensor or per
 *                                             output column (axis 0 with transB, else 1)
 *   C  = DequantizeLinear(cq, cs[, 0])        Gemm only, optional; int32, cs == as * bs
 *   Y  = Gemm(A, B[, C]) | MatMul(A, B)       A 2-D; Gemm: transA 0, alpha 1, beta 1
 *   [Y = Relu(Y) | Clip(Y, lo, hi)  ->  yq = QuantizeLinear(Y, ys, yzp)]
 * becomes one QGemm (ops/qgemm.c) on the INT8 kernels: with the Q, a uint8 output (the
 * activation as a clamp, as for QLinearConv); without it, a float32 output, which is how
 * a classifier's last layer ends a QDQ model (its logits are the graph output). The
 * float A and B tensors, and the dequantized weight, never exist. */
#include <math.h>
#include <string.h>

#include "ir/passes/pass_util.h"
#include "ir/passes/qdq_match.h"
#include "nnperf/alloc.h"
#include "ops/internal_ops.h"
#include "ops/op.h"

/* The rank v was declared with; a QuantizeLinear output made by the QDQ export declares
 * none and has its input's, a QGemm output is 2-D. 0 when unknown. */
static int declared_rank(const nnp_graph *g, int v) {
  for (int hops = 0; v >= 0 && hops < 4; hops++) {
    if (g->values[v].rank > 0) return g->values[v].rank;
    int p = qdq_producer(g, v);
    if (p >= 0 && g->nodes[p].op == NNP_OP_QGEMM) return 2;
    if (p < 0 || g->nodes[p].op != NNP_OP_QUANTIZE_LINEAR) return 0;
    v = qdq_in(&g->nodes[p], 0);
  }
  return 0;
}

/* The 9 QGemm inputs for product node n (-1: absent), or false. */
static bool match(const nnp_graph *g, const nnp_graph_shapes *shapes, const nnp_node *n, int inputs[9]) {
  bool gemm = n->op == NNP_OP_GEMM;
  if (gemm && (nnp_attr_int(n, "transA", 0) != 0 || nnp_attr_float(n, "alpha", 1.0f) != 1.0f ||
               (qdq_in(n, 2) >= 0 && nnp_attr_float(n, "beta", 1.0f) != 1.0f)))
    return false;
  if (!gemm && n->n_inputs != 2) return false;
  const nnp_node *da = qdq_dq_of(g, qdq_in(n, 0)), *db = qdq_dq_of(g, qdq_in(n, 1));
  if (!da || !db) return false;
  if (!qdq_scalar_init(g, qdq_in(da, 1), NNP_F32) || !qdq_scalar_init(g, qdq_in(da, 2), NNP_U8)) return false;
  /* A must be 2-D: the compiled shape when known, else the declared one */
  const nnp_tensor *sa = pass_shape(shapes, qdq_in(da, 0));
  int ra = sa ? sa->rank : declared_rank(g, qdq_in(da, 0));
  if (ra != 2) return false;
  const nnp_tensor *bq = qdq_init(g, qdq_in(db, 0)), *bs = qdq_init(g, qdq_in(db, 1)), *bz = qdq_init(g, qdq_in(db, 2));
  if (!bq || !bq->data || bq->dtype != NNP_I8 || bq->rank != 2 || !bs || !bs->data || bs->dtype != NNP_F32) return false;
  bool tb = gemm && nnp_attr_int(n, "transB", 0) != 0;
  int64_t N = tb ? bq->dims[0] : bq->dims[1], nbs = nnp_tensor_numel(bs);
  if (nbs != 1 && (nnp_attr_int(db, "axis", 1) != (tb ? 0 : 1) || nbs != N)) return false;
  if (!bz || !bz->data || bz->dtype != NNP_I8 || nnp_tensor_numel(bz) != nbs) return false;
  int cq = -1;
  if (gemm && qdq_in(n, 2) >= 0) {
    const nnp_node *dc = qdq_dq_of(g, qdq_in(n, 2));
    float as = *(const float *)qdq_init(g, qdq_in(da, 1))->data;
    if (!dc || !qdq_bias_matches(g, dc, as, bs, N)) return false;
    cq = qdq_in(dc, 0);
  }
  int v[9] = {qdq_in(da, 0), qdq_in(da, 1), qdq_in(da, 2), qdq_in(db, 0), qdq_in(db, 1), qdq_in(db, 2), cq, -1, -1};
  memcpy(inputs, v, sizeof v);
  return true;
}

nnp_status nnp_pass_fuse_qdq_gemm(nnp_graph *g, const nnp_graph_shapes *shapes, int *count) {
  *count = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    nnp_node *n = &g->nodes[i];
    if ((n->op != NNP_OP_GEMM && n->op != NNP_OP_MATMUL) || (n->domain && n->domain[0]) || n->n_outputs != 1 ||
        n->outputs[0] < 0)
      continue;
    int inputs[9];
    if (!match(g, shapes, n, inputs)) continue;
    int r = -1, q = -1;
    float flo, fhi;
    bool clip;
    bool quantized_out = qdq_act_then_q(g, n->outputs[0], &r, &q, &flo, &fhi, &clip);
    int64_t qlo = 0, qhi = 255;
    bool need_clamp = false;
    if (quantized_out) {
      const nnp_node *qn = &g->nodes[q];
      inputs[7] = qdq_in(qn, 1);
      inputs[8] = qdq_in(qn, 2);
      float ys = *(const float *)qdq_init(g, inputs[7])->data;
      uint8_t yzp = *(const uint8_t *)qdq_init(g, inputs[8])->data;
      need_clamp = r >= 0 && (clip || yzp != 0);
      qlo = qdq_quantize_bound(flo, ys, yzp);
      qhi = qdq_quantize_bound(fhi, ys, yzp);
    }
    int n_in = quantized_out ? 9 : inputs[6] >= 0 ? 7 : 6;
    int *in = nnp_malloc(sizeof inputs);
    if (!in) return nnp_error(NNP_ERR_NOMEM, "out of memory fusing a quantized Gemm");
    memcpy(in, inputs, sizeof inputs);
    NNP_TRY(pass_make_internal(n, NNP_OP_QGEMM, "QGemm"));
    nnp_free(n->inputs);
    n->inputs = in;
    n->n_inputs = n_in;
    if (!quantized_out) {
      ++*count;
      continue;
    }
    if (need_clamp) NNP_TRY(qdq_set_clamp(n, qlo, qhi));
    n->outputs[0] = g->nodes[q].outputs[0];
    qdq_remove_tail(g, r, q, &i);
    ++*count;
  }
  return NNP_OK;
}
