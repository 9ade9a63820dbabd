/* No-op removal: Identity and inference-mode Dropout forward their input (their readers
 * read the input instead), and Reshape(Reshape(x, s1), s2) becomes Reshape(x, s2) when s2
 * is a constant without 0 entries (a 0 copies a dim of the input, which the chain changes).
 * A zero Pad of the spatial axes read only by a 2-D Conv or AveragePool becomes that
 * node's own padding (torch exports avg_pool2d(padding=1) as Pad + AveragePool: in
 * inception_v3 the nine Pads ran the reference kernel, 11% of its steps at 2 threads).
 * A node whose output is a graph output stays: the output's name must survive. */
#include <string.h>

#include "ir/passes/pass_util.h"
#include "nnperf/alloc.h"
#include "ops/op.h"

/* Initializer v's first element as a double; `otherwise` when v is not a known value. */
static double const_scalar(const nnp_graph *g, int v, double otherwise) {
  if (v < 0 || g->values[v].kind != NNP_VALUE_INITIALIZER || !g->values[v].init) return otherwise;
  const nnp_tensor *t = g->values[v].init;
  return nnp_tensor_numel(t) == 1 ? nnp_tensor_get_f64(t, 0) : otherwise;
}

static bool forwards_input(const nnp_graph *g, const nnp_node *n) {
  if (n->op == NNP_OP_IDENTITY) return n->n_inputs == 1 && n->n_outputs == 1;
  if (n->op != NNP_OP_DROPOUT) return false;
  /* training_mode (input 2) present: unless it is a constant false, or the ratio a
   * constant 0 (identity in training mode too), it may drop at run time; keep the node */
  if (n->n_inputs > 2 && n->inputs[2] >= 0 && const_scalar(g, n->inputs[2], 1) != 0 &&
      const_scalar(g, n->inputs[1], 1) != 0)
    return false;
  if (nnp_attr_int(n, "is_test", 1) == 0 && nnp_attr_int(n, "training_mode", 0)) return false;
  return true;
}

static bool reshape_target_ok(const nnp_graph *g, const nnp_node *n) {
  if (n->n_inputs < 2 || n->inputs[1] < 0) return false;
  const nnp_value *s = &g->values[n->inputs[1]];
  if (s->kind != NNP_VALUE_INITIALIZER || !s->init || s->init->dtype != NNP_I64) return false;
  if (nnp_attr_int(n, "allowzero", 0)) return true;
  const int64_t *d = s->init->data;
  for (int64_t k = 0; k < nnp_tensor_numel(s->init); k++)
    if (d[k] == 0) return false;
  return true;
}

/* Pad node n's [h begin, w begin, h end, w end] when it pads a rank-4 tensor's spatial
 * axes only, with constant zeros (pads and value known now); false otherwise. */
static bool spatial_zero_pad(const nnp_graph *g, const nnp_node *n, int64_t sp[4]) {
  if (n->op != NNP_OP_PAD || n->n_outputs != 1 || n->inputs[0] < 0) return false;
  if (strcmp(nnp_attr_string(n, "mode", "constant"), "constant") != 0) return false;
  if (n->n_inputs > 3 && n->inputs[3] >= 0) return false; /* axes */
  if (n->n_inputs > 2 && n->inputs[2] >= 0 && const_scalar(g, n->inputs[2], 1) != 0) return false;
  if (nnp_attr_float(n, "value", 0.0f) != 0.0f) return false;
  const int64_t *p = NULL;
  if (n->n_inputs > 1 && n->inputs[1] >= 0) { /* opset 11+: an input */
    const nnp_value *v = &g->values[n->inputs[1]];
    if (v->kind != NNP_VALUE_INITIALIZER || !v->init || v->init->dtype != NNP_I64 || nnp_tensor_numel(v->init) != 8)
      return false;
    p = v->init->data;
  } else if (nnp_attr_ints(n, "pads", &p) != 8) {
    return false;
  }
  if (p[0] || p[1] || p[4] || p[5]) return false; /* batch and channel axes */
  const int64_t s[4] = {p[2], p[3], p[6], p[7]};
  for (int k = 0; k < 4; k++)
    if (s[k] < 0) return false; /* a crop */
  memcpy(sp, s, sizeof s);
  return true;
}

/* Sets n's ints attribute `name` to v[0..count). */
static nnp_status set_ints(nnp_node *n, const char *name, const int64_t *v, size_t count) {
  nnp_attr *a = (nnp_attr *)nnp_node_attr(n, name);
  if (!a) NNP_TRY(nnp_node_add_attr(n, name, &a));
  int64_t *ints = nnp_malloc(count * sizeof *ints);
  if (!ints) return nnp_error(NNP_ERR_NOMEM, "out of memory folding a Pad");
  memcpy(ints, v, count * sizeof *ints);
  nnp_free(a->ints);
  a->type = NNP_ATTR_INTS;
  a->ints = ints;
  a->count = count;
  return NNP_OK;
}

/* Node r (Conv or AveragePool, 2-D, explicit pads) takes Pad sp as padding of its own:
 * false when its attributes make that not the same function. A Conv adds sp to its
 * pads; an AveragePool must count the padded zeros (count_include_pad 1, which its own
 * pads then share) and not use ceil_mode, whose partial windows would count differently. */
static nnp_status absorb_pad(nnp_node *r, const int64_t sp[4], bool *done) {
  *done = false;
  if (strcmp(nnp_attr_string(r, "auto_pad", "NOTSET"), "NOTSET") != 0) return NNP_OK;
  const int64_t *k = NULL, *old = NULL;
  int nk = nnp_attr_ints(r, "kernel_shape", &k), np = nnp_attr_ints(r, "pads", &old);
  if (nk < 0) nk = 0; /* absent */
  if (np < 0) np = 0;
  if (np != 0 && np != 4) return NNP_OK;
  if (r->op == NNP_OP_AVERAGE_POOL) {
    if (nk != 2 || nnp_attr_int(r, "ceil_mode", 0) != 0) return NNP_OK;
    const bool include = nnp_attr_int(r, "count_include_pad", 0) != 0;
    for (int i = 0; i < np && !include; i++)
      if (old[i] != 0) return NNP_OK; /* its own pads would not count, the Pad's would */
  } else if (r->op != NNP_OP_CONV || (nk != 0 && nk != 2)) {
    return NNP_OK;
  }
  int64_t pads[4];
  for (int i = 0; i < 4; i++) pads[i] = sp[i] + (np ? old[i] : 0);
  NNP_TRY(set_ints(r, "pads", pads, 4));
  if (r->op == NNP_OP_AVERAGE_POOL) {
    nnp_attr *a = (nnp_attr *)nnp_node_attr(r, "count_include_pad");
    if (!a) NNP_TRY(nnp_node_add_attr(r, "count_include_pad", &a));
    a->type = NNP_ATTR_INT;
    a->i = 1;
  }
  *done = true;
  return NNP_OK;
}

/* Node i, a spatial zero Pad read by one 2-D Conv (as X) or AveragePool: folded into it. */
static nnp_status fold_pad(nnp_graph *g, int i, bool *folded) {
  *folded = false;
  int64_t sp[4];
  const nnp_node *n = &g->nodes[i];
  if (!spatial_zero_pad(g, n, sp)) return NNP_OK;
  const int y = n->outputs[0];
  if (y < 0 || g->values[y].is_output) return NNP_OK;
  const int r = pass_single_consumer(g, y);
  if (r < 0 || g->nodes[r].inputs[0] != y) return NNP_OK;
  for (int k = 1; k < g->nodes[r].n_inputs; k++)
    if (g->nodes[r].inputs[k] == y) return NNP_OK;
  if (g->nodes[r].op == NNP_OP_CONV) { /* a 2-D conv: its weights are rank 4 */
    const int w = g->nodes[r].n_inputs > 1 ? g->nodes[r].inputs[1] : -1;
    if (w < 0 || g->values[w].kind != NNP_VALUE_INITIALIZER || !g->values[w].init || g->values[w].init->rank != 4)
      return NNP_OK;
  }
  NNP_TRY(absorb_pad(&g->nodes[r], sp, folded));
  if (!*folded) return NNP_OK;
  g->nodes[r].inputs[0] = g->nodes[i].inputs[0];
  pass_remove_node(g, i);
  return NNP_OK;
}

nnp_status nnp_pass_noops(nnp_graph *g, int *count) {
  *count = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    nnp_node *n = &g->nodes[i];
    bool folded;
    NNP_TRY(fold_pad(g, i, &folded));
    if (folded) {
      i--;
      ++*count;
      continue;
    }
    if (forwards_input(g, n)) {
      int in = n->inputs[0], out = n->outputs[0];
      bool mask_used = n->n_outputs > 1 && n->outputs[1] >= 0 && pass_uses(g, n->outputs[1]) > 0;
      if (in < 0 || out < 0 || g->values[out].is_output || mask_used) continue;
      pass_replace_uses(g, out, in);
      pass_remove_node(g, i--);
      ++*count;
      continue;
    }
    if (n->op == NNP_OP_RESHAPE && n->inputs[0] >= 0 && reshape_target_ok(g, n)) {
      int inner_v = n->inputs[0];
      int p = -1;
      for (int j = 0; j < i && p < 0; j++)
        if (g->nodes[j].n_outputs > 0 && g->nodes[j].outputs[0] == inner_v) p = j;
      if (p < 0 || g->nodes[p].op != NNP_OP_RESHAPE || pass_single_consumer(g, inner_v) != i) continue;
      n->inputs[0] = g->nodes[p].inputs[0];
      pass_remove_node(g, p);
      i--;
      ++*count;
    }
  }
  return NNP_OK;
}
