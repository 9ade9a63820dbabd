/* LayerNorm fusion (part of fuse-elementwise): the decomposition torch exports for
 * nn.LayerNorm below opset 17,
 *   m = ReduceMean(x, axes=[last]); d = Sub(x, m); p = Pow(d, 2); v = ReduceMean(p, [last]);
 *   e = Add(v, eps); s = Sqrt(e); n = Div(d, s); [g = Mul(n, Scale)]; [y = Add(g, B)]
 * becomes one FusedLayerNorm(x, [Scale], [B]) (ops/layer_norm.c). Scale and B are
 * float32 constants of the last axis' length; eps a constant scalar. Every intermediate
 * must be read only inside the pattern (d twice: by Pow and Div) and be no graph output,
 * and both ReduceMeans keep the dimension. ViT, Swin and ConvNeXt have one per block. */
#include <string.h>

#include "ir/passes/pass_util.h"
#include "nnperf/alloc.h"
#include "ops/internal_ops.h"
#include "ops/op.h"

/* Whether node n is ReduceMean over the last axis of its rank-r input, keeping it. */
static bool mean_of_last(const nnp_graph *g, const nnp_node *n, int rank) {
  if (n->op != NNP_OP_REDUCE_MEAN || n->n_outputs != 1 || nnp_attr_int(n, "keepdims", 1) != 1) return false;
  const int64_t *axes = NULL;
  int na = nnp_attr_ints(n, "axes", &axes);
  if (n->n_inputs > 1 && n->inputs[1] >= 0) { /* opset 18: axes as an input */
    const nnp_value *v = &g->values[n->inputs[1]];
    if (na >= 0 || v->kind != NNP_VALUE_INITIALIZER || !v->init || v->init->dtype != NNP_I64) return false;
    na = (int)nnp_tensor_numel(v->init);
    axes = v->init->data;
  }
  return na == 1 && (axes[0] == -1 || axes[0] == rank - 1);
}

/* The one node reading v as input `slot` (-1: any slot), of type op; -1 if v has other
 * readers, is a graph output, or the reader differs. */
static int only_reader(const nnp_graph *g, int v, int op, int slot) {
  const int r = v >= 0 ? pass_single_consumer(g, v) : -1;
  if (r < 0 || g->nodes[r].op != op || g->nodes[r].n_outputs != 1) return -1;
  if (slot >= 0 && (g->nodes[r].n_inputs <= slot || g->nodes[r].inputs[slot] != v)) return -1;
  return r;
}

/* The other input of binary node b (one of whose inputs is v). */
static int other_input(const nnp_node *b, int v) {
  if (b->n_inputs != 2) return -1;
  return b->inputs[0] == v ? b->inputs[1] : b->inputs[0];
}

/* Whether v is a float32 constant scalar (*got: its value). */
static bool const_scalar(const nnp_graph *g, int v, float *got) {
  const nnp_tensor *t = pass_const_f32(g, v);
  if (!t || nnp_tensor_numel(t) != 1) return false;
  *got = *(const float *)t->data;
  return true;
}

/* A float32 constant of c values: a per-channel Scale or B of the last axis. */
static bool channel_const(const nnp_graph *g, int v, int64_t c) {
  const nnp_tensor *t = pass_const_f32(g, v);
  return t && t->rank >= 1 && nnp_tensor_numel(t) == c && t->dims[t->rank - 1] == c;
}

typedef struct ln_match {
  int nodes[9], n_nodes; /* the pattern's nodes; the last one becomes FusedLayerNorm */
  int x, scale, bias, y;
  float eps;
} ln_match;

/* The pattern from ReduceMean node i, or false. */
static bool match(const nnp_graph *g, const nnp_graph_shapes *shapes, int i, ln_match *m) {
  const nnp_node *r1 = &g->nodes[i];
  if (r1->op != NNP_OP_REDUCE_MEAN || r1->n_inputs < 1 || r1->inputs[0] < 0) return false;
  const nnp_tensor *tx = pass_shape(shapes, r1->inputs[0]);
  if (!tx || tx->dtype != NNP_F32 || tx->rank < 1 || !mean_of_last(g, r1, tx->rank)) return false;
  const int x = r1->inputs[0], c = (int)tx->dims[tx->rank - 1];
  const int sub = only_reader(g, r1->outputs[0], NNP_OP_SUB, 1);
  if (sub < 0 || g->nodes[sub].inputs[0] != x) return false;
  const int d = g->nodes[sub].outputs[0];
  if (pass_uses(g, d) != 2) return false;
  int pw = -1, dv = -1;
  for (int k = 0; k < g->n_nodes; k++) {
    const nnp_node *n = &g->nodes[k];
    if (n->op == NNP_OP_POW && n->n_inputs == 2 && n->inputs[0] == d) pw = k;
    if (n->op == NNP_OP_DIV && n->n_inputs == 2 && n->inputs[0] == d) dv = k;
  }
  float two, eps;
  if (pw < 0 || dv < 0 || !const_scalar(g, g->nodes[pw].inputs[1], &two) || two != 2.0f) return false;
  const int r2 = only_reader(g, g->nodes[pw].outputs[0], NNP_OP_REDUCE_MEAN, 0);
  if (r2 < 0 || !mean_of_last(g, &g->nodes[r2], tx->rank)) return false;
  const int add = only_reader(g, g->nodes[r2].outputs[0], NNP_OP_ADD, -1);
  if (add < 0 || !const_scalar(g, other_input(&g->nodes[add], g->nodes[r2].outputs[0]), &eps)) return false;
  const int sq = only_reader(g, g->nodes[add].outputs[0], NNP_OP_SQRT, 0);
  if (sq < 0 || only_reader(g, g->nodes[sq].outputs[0], NNP_OP_DIV, 1) != dv) return false;
  *m = (ln_match){.nodes = {i, sub, pw, r2, add, sq, dv}, .n_nodes = 7, .x = x, .scale = -1, .bias = -1, .eps = eps};
  int last = dv;
  const int mul = only_reader(g, g->nodes[dv].outputs[0], NNP_OP_MUL, -1);
  if (mul >= 0 && channel_const(g, other_input(&g->nodes[mul], g->nodes[dv].outputs[0]), c)) {
    m->scale = other_input(&g->nodes[mul], g->nodes[dv].outputs[0]);
    m->nodes[m->n_nodes++] = last = mul;
    const int ab = only_reader(g, g->nodes[mul].outputs[0], NNP_OP_ADD, -1);
    if (ab >= 0 && channel_const(g, other_input(&g->nodes[ab], g->nodes[mul].outputs[0]), c)) {
      m->bias = other_input(&g->nodes[ab], g->nodes[mul].outputs[0]);
      m->nodes[m->n_nodes++] = last = ab;
    }
  }
  m->y = g->nodes[last].outputs[0];
  for (int k = 0; k + 1 < m->n_nodes; k++) /* intermediates: read inside only */
    if (g->values[g->nodes[m->nodes[k]].outputs[0]].is_output) return false;
  return true;
}

/* The last node of m becomes FusedLayerNorm(x, [Scale], [B]); the others are marked dead. */
static nnp_status rewrite(nnp_graph *g, const ln_match *m, bool *dead) {
  nnp_node *n = &g->nodes[m->nodes[m->n_nodes - 1]];
  int *in = nnp_malloc(3 * sizeof *in);
  if (!in) return nnp_error(NNP_ERR_NOMEM, "out of memory fusing a LayerNorm");
  in[0] = m->x;
  in[1] = m->scale;
  in[2] = m->bias;
  nnp_free(n->inputs);
  n->inputs = in;
  n->n_inputs = m->bias >= 0 ? 3 : m->scale >= 0 ? 2 : 1;
  nnp_attr *a;
  NNP_TRY(nnp_node_add_attr(n, "epsilon", &a));
  a->type = NNP_ATTR_FLOAT;
  a->f = m->eps;
  NNP_TRY(pass_make_internal(n, NNP_OP_FUSED_LAYER_NORM, "FusedLayerNorm"));
  for (int k = 0; k + 1 < m->n_nodes; k++) dead[m->nodes[k]] = true;
  return NNP_OK;
}

nnp_status nnp_pass_fuse_layernorm(nnp_graph *g, const nnp_graph_shapes *shapes, int *count) {
  *count = 0;
  if (!shapes) return NNP_OK;
  bool *dead = nnp_calloc((size_t)g->n_nodes + 1, sizeof *dead);
  if (!dead) return nnp_error(NNP_ERR_NOMEM, "out of memory fusing LayerNorms");
  nnp_status s = NNP_OK;
  for (int i = 0; i < g->n_nodes && s == NNP_OK; i++) {
    ln_match m;
    if (dead[i] || !match(g, shapes, i, &m)) continue;
    bool free_nodes = true;
    for (int k = 0; k < m.n_nodes; k++) free_nodes &= !dead[m.nodes[k]];
    if (!free_nodes) continue;
    s = rewrite(g, &m, dead);
    if (s == NNP_OK) ++*count;
  }
  if (s == NNP_OK) pass_remove_dead(g, dead);
  nnp_free(dead);
  return s;
}
