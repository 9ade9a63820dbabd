/* BatchNormalization folding: Conv(X, W, B) -> BatchNormalization(scale, beta, mean, var)
 * becomes one Conv with W'[m] = W[m] * s[m] and B'[m] = (B[m] - mean[m]) * s[m] + beta[m],
 * s = scale / sqrt(var + epsilon), when all of them are float32 initializers and the
 * Conv's output feeds only the BatchNormalization. New weights are new initializers (the
 * old ones may be shared). Results differ from the unfused pair by rounding only. */
#include <math.h>
#include <string.h>

#include "ir/passes/pass_util.h"
#include "nnperf/alloc.h"
#include "ops/op.h"

static nnp_status fold_one(nnp_graph *g, int ci, int bi) {
  nnp_node *conv = &g->nodes[ci];
  const nnp_node *bn = &g->nodes[bi];
  const nnp_tensor *w = pass_const_f32(g, conv->inputs[1]);
  const nnp_tensor *b = conv->n_inputs > 2 ? pass_const_f32(g, conv->inputs[2]) : NULL;
  const nnp_tensor *sc = pass_const_f32(g, bn->inputs[1]), *be = pass_const_f32(g, bn->inputs[2]);
  const nnp_tensor *mu = pass_const_f32(g, bn->inputs[3]), *var = pass_const_f32(g, bn->inputs[4]);
  const int64_t m = w->dims[0];
  const int64_t per = nnp_tensor_numel(w) / (m ? m : 1);
  const double eps = nnp_attr_float(bn, "epsilon", 1e-5f);
  nnp_tensor nw, nb;
  memset(&nw, 0, sizeof nw);
  memset(&nb, 0, sizeof nb);
  nw.dtype = nb.dtype = NNP_F32;
  nw.rank = w->rank;
  memcpy(nw.dims, w->dims, sizeof w->dims);
  nb.rank = 1;
  nb.dims[0] = m;
  NNP_TRY(nnp_tensor_alloc(&nw));
  nnp_status s = nnp_tensor_alloc(&nb);
  if (s != NNP_OK) {
    nnp_tensor_free(&nw);
    return s;
  }
  const float *wd = w->data, *bd = b ? b->data : NULL;
  float *nwd = nw.data, *nbd = nb.data;
  for (int64_t o = 0; o < m; o++) {
    const double k = (double)((const float *)sc->data)[o] / sqrt((double)((const float *)var->data)[o] + eps);
    for (int64_t j = 0; j < per; j++) nwd[o * per + j] = (float)(wd[o * per + j] * k);
    nbd[o] = (float)(((bd ? bd[o] : 0.0) - ((const float *)mu->data)[o]) * k + ((const float *)be->data)[o]);
  }
  int vw, vb;
  s = pass_add_initializer(g, g->values[conv->inputs[1]].name, &nw, &vw);
  if (s == NNP_OK) s = pass_add_initializer(g, g->values[conv->inputs[1]].name, &nb, &vb);
  if (s != NNP_OK) {
    nnp_tensor_free(&nw);
    nnp_tensor_free(&nb);
    return s;
  }
  conv = &g->nodes[ci];
  if (conv->n_inputs < 3) {
    int *ni = nnp_realloc(conv->inputs, 3 * sizeof *ni);
    if (!ni) return nnp_error(NNP_ERR_NOMEM, "out of memory folding BatchNormalization");
    conv->inputs = ni;
    conv->n_inputs = 3;
  }
  conv->inputs[1] = vw;
  conv->inputs[2] = vb;
  conv->outputs[0] = g->nodes[bi].outputs[0];
  pass_remove_node(g, bi);
  return NNP_OK;
}

nnp_status nnp_pass_fold_batchnorm(nnp_graph *g, const nnp_graph_shapes *shapes, int *count) {
  (void)shapes;
  *count = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const nnp_node *conv = &g->nodes[i];
    if (conv->op != NNP_OP_CONV || conv->n_outputs != 1 || conv->outputs[0] < 0) continue;
    const nnp_tensor *w = pass_const_f32(g, conv->inputs[1]);
    if (!w || w->rank < 3) continue;
    if (conv->n_inputs > 2 && conv->inputs[2] >= 0) {
      const nnp_tensor *b = pass_const_f32(g, conv->inputs[2]);
      if (!b || nnp_tensor_numel(b) != w->dims[0]) continue;
    }
    int bi = pass_single_consumer(g, conv->outputs[0]);
    if (bi < 0 || !pass_inference_bn(g, &g->nodes[bi], w->dims[0]) || g->nodes[bi].inputs[0] != conv->outputs[0]) continue;
    NNP_TRY(fold_one(g, i, bi));
    if (bi < i) i--;
    ++*count;
  }
  return NNP_OK;
}
