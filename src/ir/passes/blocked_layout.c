/* Blocked layout: 2-D float32 convolutions (Conv and FusedConv, group 1, depthwise or
 * grouped as nnp_bconv_groups_fit takes them, constant weights) become BlockedConv (ops/internal_ops.h), which reads and writes the
 * NCHW16c layout of kernels/blocked_conv.h, with as few reorders as possible.
 *
 * Converted convolutions that feed each other form regions; inside a region values stay
 * blocked. Each value entering a region (a convolution's X or residual R made by
 * anything else) gets exactly one ToBlocked, shared by every converted reader, and each
 * value leaving it (read by an unconverted node, or a graph output) exactly one
 * FromBlocked, shared by every outside reader; a value read only inside its region is
 * never unblocked. A convolution on a value with at most NNP_BCONV_NCHW_MAX_C channels that
 * no converted node made (the network input's colour planes) reads it as NCHW in place
 * (BlockedConv's `nchw_input`) instead of through a ToBlocked. The fused residual and activation already live inside FusedConv, so
 * resnet's Conv -> Add -> Relu chains and mobilenet's inverted residuals stay blocked
 * end to end. A 2-D MaxPool whose input is already blocked joins the region as
 * BlockedMaxPool (resnet's stem pool, between two convs, would otherwise cost a
 * FromBlocked and a ToBlocked); a pool on an unblocked value is left alone, since
 * blocking it would add reorders, not remove them. A GlobalAveragePool on a blocked
 * value becomes BlockedGlobalAveragePool, which writes its small NCHW output itself, so
 * the last feature map needs no FromBlocked (0.02-0.03 ms of mobilenet_v2 and
 * EfficientNet-Lite0 on 2 threads). A Mul of a blocked value by one value per channel
 * (a squeeze-and-excitation scale) becomes BlockedChannelMul. Other ops (the network
 * head) read the unblocked value.
 *
 * Only on CPUs with AVX-512F (the blocked tile's ISA; NNP_CPU_FEATURES=avx2 or generic
 * turns the pass into a no-op). Runs last: it needs the fusions' FusedConv nodes. Nodes are visited in topological
 * order, so a region's producers are converted before their readers. The original
 * output value of a converted node keeps its index and name: FromBlocked produces it
 * where it is still read, so the graph's outputs and value indices stay valid. */
#include <stdio.h>
#include <string.h>

#include "ir/passes/pass_util.h"
#include "kernels/blocked_conv.h"
#include "kernels/blocked_conv_nchw_in.h"
#include "kernels/dispatch.h"
#include "nnperf/alloc.h"
#include "ops/conv_desc.h"
#include "ops/internal_ops.h"
#include "ops/op_util.h"

/* Whether node n is a convolution the blocked kernels run (checked on the inferred shapes). */
static bool convertible(const nnp_graph *g, const nnp_graph_shapes *shapes, const nnp_node *n) {
  if (n->op != NNP_OP_CONV && n->op != NNP_OP_FUSED_CONV) return false;
  if (n->n_inputs < 2 || n->n_outputs != 1 || n->outputs[0] < 0 || n->inputs[0] < 0 || n->inputs[1] < 0) return false;
  const nnp_tensor *x = pass_shape(shapes, n->inputs[0]), *y = pass_shape(shapes, n->outputs[0]);
  const nnp_tensor *w = pass_const_f32(g, n->inputs[1]);
  if (!x || !y || !w || x->dtype != NNP_F32 || y->dtype != NNP_F32 || x->rank != 4 || y->rank != 4 || w->rank != 4)
    return false;
  if (g->values[n->inputs[0]].kind == NNP_VALUE_INITIALIZER) return false; /* constant X: folding's job */
  if (n->n_inputs > 2 && n->inputs[2] >= 0 && !pass_const_f32(g, n->inputs[2])) return false;
  if (n->n_inputs > 3 && n->inputs[3] >= 0) {
    const nnp_tensor *r = pass_shape(shapes, n->inputs[3]);
    if (!r || r->dtype != NNP_F32 || !nnp_tensor_same_shape(r, y)) return false;
  }
  if (nnp_tensor_numel(x) == 0 || nnp_tensor_numel(y) == 0) return false;
  nnp_conv2d_desc d = {.n = x->dims[0], .c = x->dims[1], .h = x->dims[2], .w = x->dims[3], .m = y->dims[1],
                       .oh = y->dims[2], .ow = y->dims[3], .kh = w->dims[2], .kw = w->dims[3]};
  d.group = nnp_attr_int(n, "group", 1);
  if (d.group < 1 || !nnp_bconv_groups_fit(&d)) return false;
  if (w->dims[0] != d.m || w->dims[1] * d.group != d.c) return false;
  bool ok = false;
  if (nnp_conv2d_read_window(n, &d, &ok) != NNP_OK) {
    nnp_clear_error();
    return false;
  }
  return ok && (nnp_dispatch_isa(NNP_KF_BLOCKED_CONV) != NNP_ISA_AVX2 || nnp_bconv_avx2_pays(&d));
}

/* A MaxPool or AveragePool the blocked pools can run: one input and output, 2-D float32
 * (the window attributes are checked by their prepare hooks, which leave the rest to the
 * reference). */
static bool pool_convertible(const nnp_graph_shapes *shapes, const nnp_node *n) {
  if ((n->op != NNP_OP_MAX_POOL && n->op != NNP_OP_AVERAGE_POOL) || n->n_inputs != 1 || n->n_outputs != 1 || n->inputs[0] < 0 || n->outputs[0] < 0)
    return false;
  const int64_t *k = NULL;
  if (nnp_attr_ints(n, "kernel_shape", &k) != 2) return false;
  const nnp_tensor *x = pass_shape(shapes, n->inputs[0]), *y = pass_shape(shapes, n->outputs[0]);
  return x && y && x->dtype == NNP_F32 && x->rank == 4 && y->dtype == NNP_F32 && y->rank == 4 &&
         nnp_tensor_numel(y) > 0;
}

/* A new intermediate value named after value v, made unique. */
static nnp_status new_value(nnp_graph *g, int v, const char *suffix, int *out) {
  char name[512];
  for (int k = 0;; k++) {
    snprintf(name, sizeof name, "%s/%s%d", g->values[v].name ? g->values[v].name : "v", suffix, k);
    if (nnp_graph_find_value(g, name) < 0) break;
  }
  return nnp_graph_value(g, name, out);
}

static nnp_status set_int_attr(nnp_node *n, const char *name, int64_t v) {
  nnp_attr *a;
  NNP_TRY(nnp_node_add_attr(n, name, &a));
  a->type = NNP_ATTR_INT;
  a->i = v;
  return NNP_OK;
}

/* Appends a ToBlocked or FromBlocked node from -> to. */
static nnp_status add_reorder(nnp_graph *g, int op, int from, int to, int64_t channels) {
  const bool to_blocked = op == NNP_OP_TO_BLOCKED;
  const char *type = to_blocked ? "ToBlocked" : "FromBlocked";
  char name[512];
  snprintf(name, sizeof name, "%s/%s", g->values[from].name ? g->values[from].name : "v", type);
  int ni;
  NNP_TRY(nnp_graph_add_node(g, name, type, NNP_INTERNAL_DOMAIN, 1, &from, 1, &to, &ni));
  nnp_node *n = &g->nodes[ni];
  n->op = op;
  return to_blocked ? NNP_OK : set_int_attr(n, "channels", channels);
}

typedef struct maps {
  int n;         /* values before the pass: the maps' length */
  int *blocked;  /* value -> its blocked twin made by a converted node, or -1 */
  int *entering; /* value -> its ToBlocked output, or -1 */
} maps;

/* The blocked value for input v of a converted node: the twin if a converted node made
 * it, else the (one) ToBlocked of v, added on first use. */
static nnp_status blocked_input(nnp_graph *g, maps *m, int v, int *out) {
  if (m->blocked[v] >= 0) {
    *out = m->blocked[v];
    return NNP_OK;
  }
  if (m->entering[v] < 0) {
    int t;
    NNP_TRY(new_value(g, v, "nchw16c", &t));
    NNP_TRY(add_reorder(g, NNP_OP_TO_BLOCKED, v, t, 0));
    m->entering[v] = t;
  }
  *out = m->entering[v];
  return NNP_OK;
}

/* Node i's output y becomes a new blocked value, y's twin: whoever still reads y gets a
 * FromBlocked at the end of the pass. */
static nnp_status blocked_output(nnp_graph *g, maps *m, int i) {
  const int y = g->nodes[i].outputs[0];
  int yb;
  NNP_TRY(new_value(g, y, "nchw16c", &yb));
  g->nodes[i].outputs[0] = yb;
  g->values[y].producer = -1;
  m->blocked[y] = yb;
  return NNP_OK;
}

/* Node i, if a MaxPool or AveragePool on a value a converted node made blocked:
 * BlockedMaxPool or BlockedAveragePool. */
static nnp_status join_pool(nnp_graph *g, const nnp_graph_shapes *shapes, maps *m, int i, int *count) {
  if (!pool_convertible(shapes, &g->nodes[i])) return NNP_OK;
  const int x = g->nodes[i].inputs[0], y = g->nodes[i].outputs[0];
  if (x >= m->n || y >= m->n || m->blocked[x] < 0) return NNP_OK;
  NNP_TRY(blocked_output(g, m, i));
  nnp_node *n = &g->nodes[i];
  NNP_TRY(set_int_attr(n, "channels", pass_shape(shapes, x)->dims[1]));
  n->inputs[0] = m->blocked[x];
  if (n->op == NNP_OP_MAX_POOL) NNP_TRY(pass_make_internal(n, NNP_OP_BLOCKED_MAX_POOL, "BlockedMaxPool"));
  else NNP_TRY(pass_make_internal(n, NNP_OP_BLOCKED_AVERAGE_POOL, "BlockedAveragePool"));
  ++*count;
  return NNP_OK;
}

/* Node i, if a 2-D float32 GlobalAveragePool on a value a converted node made blocked:
 * BlockedGlobalAveragePool, which reads the blocked value and writes the NCHW output
 * itself (the network head's pool: its input then needs no FromBlocked). */
static nnp_status join_gap(nnp_graph *g, const nnp_graph_shapes *shapes, maps *m, int i, int *count) {
  const nnp_node *n = &g->nodes[i];
  if (strcmp(n->op_type, "GlobalAveragePool") != 0 || n->n_inputs != 1 || n->n_outputs != 1) return NNP_OK;
  const int x = n->inputs[0], y = n->outputs[0];
  if (x < 0 || x >= m->n || y < 0 || m->blocked[x] < 0) return NNP_OK;
  const nnp_tensor *tx = pass_shape(shapes, x), *ty = pass_shape(shapes, y);
  if (!tx || !ty || tx->dtype != NNP_F32 || tx->rank != 4 || ty->rank != 4) return NNP_OK;
  nnp_node *gn = &g->nodes[i];
  NNP_TRY(set_int_attr(gn, "channels", tx->dims[1]));
  gn->inputs[0] = m->blocked[x];
  NNP_TRY(pass_make_internal(gn, NNP_OP_BLOCKED_GLOBAL_AVERAGE_POOL, "BlockedGlobalAveragePool"));
  ++*count;
  return NNP_OK;
}

/* Node i, if Mul(X, S) (either order) of a value X a converted node made blocked by one
 * value per channel S ([N or 1, C, 1, 1] or [C, 1, 1]; the squeeze-and-excitation
 * scale): BlockedChannelMul, reading S's blocked twin where a converted node made S, so
 * the feature map stays blocked through the block. */
static nnp_status join_channel_mul(nnp_graph *g, const nnp_graph_shapes *shapes, maps *m, int i, int *count) {
  const nnp_node *n = &g->nodes[i];
  if (n->op != NNP_OP_MUL || n->n_inputs != 2 || n->n_outputs != 1 || n->outputs[0] < 0 || n->outputs[0] >= m->n)
    return NNP_OK;
  for (int k = 0; k < 2; k++) {
    const int x = n->inputs[k], s = n->inputs[1 - k], y = n->outputs[0];
    if (x < 0 || s < 0 || x >= m->n || s >= m->n || m->blocked[x] < 0) continue;
    const nnp_tensor *tx = pass_shape(shapes, x), *ts = pass_shape(shapes, s), *ty = pass_shape(shapes, y);
    if (!tx || !ts || !ty || ts->dtype != NNP_F32 || !nnp_tensor_same_shape(tx, ty)) continue;
    const int64_t c = tx->dims[1];
    int per_image;
    if (!nnp_per_channel_of(tx, ts, &per_image) || (m->blocked[s] >= 0 && (ts->rank != 4 || ts->dims[0] != tx->dims[0])))
      continue;
    NNP_TRY(blocked_output(g, m, i));
    nnp_node *mn = &g->nodes[i];
    NNP_TRY(set_int_attr(mn, "channels", c));
    mn->inputs[0] = m->blocked[x];
    mn->inputs[1] = m->blocked[s] >= 0 ? m->blocked[s] : s;
    NNP_TRY(pass_make_internal(mn, NNP_OP_BLOCKED_CHANNEL_MUL, "BlockedChannelMul"));
    ++*count;
    return NNP_OK;
  }
  return NNP_OK;
}

/* Node i, if a channel Concat of 2-D float32 values, at least one of them made blocked by
 * a converted node, each but the last a whole number of blocks: the same Concat on the
 * blocked values (N x CB x H x W x 16, axis 1), whose blocks follow one another as the
 * channels do; the last input's padded lanes are the output's. An input no converted
 * node made enters through its one ToBlocked (DenseNet's transition output, read by
 * every concat of the next dense block). SqueezeNet's fire modules and the Inception
 * family concatenate their branch convs: each concat cost a FromBlocked per branch and a
 * ToBlocked after (squeezenet1_0: 24 reorders, 18% of its steps at 2 threads). */
static nnp_status join_concat(nnp_graph *g, const nnp_graph_shapes *shapes, maps *m, int i, int *count) {
  const nnp_node *n = &g->nodes[i];
  if (n->op != NNP_OP_CONCAT || n->n_inputs < 1 || n->n_outputs != 1 || n->outputs[0] < 0 || n->outputs[0] >= m->n)
    return NNP_OK;
  const nnp_tensor *ty = pass_shape(shapes, n->outputs[0]);
  if (!ty || ty->dtype != NNP_F32 || ty->rank != 4) return NNP_OK;
  if (nnp_attr_int(n, "axis", 1) != 1) return NNP_OK; /* -3 would be the blocked tensor's H */
  int blocked = 0;
  for (int k = 0; k < n->n_inputs; k++) {
    const int x = n->inputs[k];
    if (x < 0 || x >= m->n) return NNP_OK;
    const nnp_tensor *tx = pass_shape(shapes, x);
    if (!tx || tx->rank != 4 || (k < n->n_inputs - 1 && tx->dims[1] % NNP_BLOCK != 0)) return NNP_OK;
    blocked += m->blocked[x] >= 0;
  }
  if (!blocked) return NNP_OK;
  int xb[128]; /* inputs first: blocked_input may append nodes (g->nodes moves) */
  if (n->n_inputs > 128) return NNP_OK;
  for (int k = 0; k < g->nodes[i].n_inputs; k++) NNP_TRY(blocked_input(g, m, g->nodes[i].inputs[k], &xb[k]));
  NNP_TRY(blocked_output(g, m, i));
  nnp_node *cn = &g->nodes[i];
  for (int k = 0; k < cn->n_inputs; k++) cn->inputs[k] = xb[k];
  ++*count;
  return NNP_OK;
}

/* An inference BatchNormalization of a 2-D float32 value with constant per-channel
 * parameters (what BlockedBatchNorm takes) */
static bool bn_convertible(const nnp_graph *g, const nnp_graph_shapes *shapes, const nnp_node *n) {
  return pass_channel_bn(g, shapes, n) && pass_shape(shapes, n->inputs[0])->rank == 4;
}

/* Node i, if bn_convertible on a value a converted node made blocked: BlockedBatchNorm,
 * with the Relu that alone reads it fused (DenseNet's BN -> ReLU -> conv); that Relu is
 * marked in dead[] and removed at the end of the pass. */
static nnp_status join_batch_norm(nnp_graph *g, const nnp_graph_shapes *shapes, maps *m, int i, bool *dead,
                                  int *count) {
  const nnp_node *n = &g->nodes[i];
  if (!bn_convertible(g, shapes, n)) return NNP_OK;
  const int x = n->inputs[0], y = n->outputs[0];
  if (x >= m->n || y >= m->n || m->blocked[x] < 0) return NNP_OK;
  const int r = pass_single_consumer(g, y);
  const bool relu = r > i && g->nodes[r].op == NNP_OP_RELU && g->nodes[r].n_outputs == 1 &&
                    g->nodes[r].outputs[0] >= 0 && g->nodes[r].outputs[0] < m->n;
  if (relu) {
    g->nodes[i].outputs[0] = g->nodes[r].outputs[0];
    dead[r] = true;
    NNP_TRY(pass_set_activation(&g->nodes[i], "Relu", 0, 0));
  }
  NNP_TRY(blocked_output(g, m, i));
  nnp_node *bn = &g->nodes[i];
  NNP_TRY(set_int_attr(bn, "channels", pass_shape(shapes, x)->dims[1]));
  bn->inputs[0] = m->blocked[x];
  NNP_TRY(pass_make_internal(bn, NNP_OP_BLOCKED_BATCH_NORM, "BlockedBatchNorm"));
  ++*count;
  return NNP_OK;
}

static nnp_status rewrite(nnp_graph *g, const nnp_graph_shapes *shapes, maps *m, bool *conv, bool *dead, int *count) {
  const int n_nodes = g->n_nodes; /* reorders are appended after these */
  for (int i = 0; i < n_nodes; i++) conv[i] = convertible(g, shapes, &g->nodes[i]);
  for (int i = 0; i < n_nodes; i++) {
    if (dead[i]) continue; /* a Relu fused into the BlockedBatchNorm before it */
    if (!conv[i]) {
      NNP_TRY(join_batch_norm(g, shapes, m, i, dead, count));
      NNP_TRY(join_pool(g, shapes, m, i, count));
      NNP_TRY(join_gap(g, shapes, m, i, count));
      NNP_TRY(join_channel_mul(g, shapes, m, i, count));
      NNP_TRY(join_concat(g, shapes, m, i, count));
      continue;
    }
    /* inputs first: blocked_input may append nodes (g->nodes moves). An X with a few
     * channels that no converted node made (the network's colour planes) is read as
     * NCHW in place: its ToBlocked would write 16 floats per pixel for 3 real ones. */
    int bx, br = -1;
    const int x = g->nodes[i].inputs[0];
    const bool plain_x = m->blocked[x] < 0 && nnp_attr_int(&g->nodes[i], "group", 1) == 1 &&
                         pass_shape(shapes, x)->dims[1] <= NNP_BCONV_NCHW_MAX_C;
    if (plain_x) bx = x;
    else NNP_TRY(blocked_input(g, m, x, &bx));
    if (g->nodes[i].n_inputs > 3 && g->nodes[i].inputs[3] >= 0)
      NNP_TRY(blocked_input(g, m, g->nodes[i].inputs[3], &br));
    NNP_TRY(blocked_output(g, m, i));
    nnp_node *n = &g->nodes[i];
    n->inputs[0] = bx;
    if (br >= 0) n->inputs[3] = br;
    NNP_TRY(pass_make_internal(n, NNP_OP_BLOCKED_CONV, "BlockedConv"));
    if (plain_x) {
      NNP_TRY(set_int_attr(n, "nchw_input", 1));
    }
    ++*count;
  }
  /* values leaving a region: one FromBlocked each, if anything still reads them */
  int *uses = pass_use_counts(g);
  if (!uses) return nnp_error(NNP_ERR_NOMEM, "out of memory in the blocked-layout pass");
  nnp_status s = NNP_OK;
  for (int v = 0; v < m->n && s == NNP_OK; v++) {
    if (m->blocked[v] < 0 || uses[v] == 0) continue;
    const nnp_tensor *t = pass_shape(shapes, v);
    s = add_reorder(g, NNP_OP_FROM_BLOCKED, m->blocked[v], v, t->dims[1]);
  }
  nnp_free(uses);
  if (s == NNP_OK) pass_remove_dead(g, dead);
  return s;
}

/* *count: the convolutions and pools converted (the reorders are not counted). */
nnp_status nnp_pass_blocked_layout(nnp_graph *g, const nnp_graph_shapes *shapes, int *count) {
  *count = 0;
  /* Only the vector tiles make the layout pay: without them BlockedConv would run the
   * generic C kernel instead of the GEMM, so the pass leaves the graph alone. */
  const nnp_isa isa = nnp_dispatch_isa(NNP_KF_BLOCKED_CONV);
  if (!shapes || (isa != NNP_ISA_AVX512 && isa != NNP_ISA_AVX2)) return NNP_OK;
  NNP_TRY(nnp_graph_toposort(g));
  /* the maps are indexed by the values that exist now; the pass adds values after them */
  const int n_values = g->n_values;
  maps m = {n_values, nnp_malloc((size_t)n_values * sizeof(int) + 1), nnp_malloc((size_t)n_values * sizeof(int) + 1)};
  /* dead: a flag per node, the reorders the pass appends included (at most a ToBlocked
   * and a FromBlocked per value), as pass_remove_dead reads it */
  bool *conv = nnp_calloc((size_t)g->n_nodes + 1, sizeof *conv);
  bool *dead = nnp_calloc((size_t)g->n_nodes + 2 * (size_t)n_values + 1, sizeof *dead);
  nnp_status s = NNP_OK;
  if (!m.blocked || !m.entering || !conv || !dead)
    s = nnp_error(NNP_ERR_NOMEM, "out of memory in the blocked-layout pass");
  if (s == NNP_OK) {
    for (int v = 0; v < n_values; v++) m.blocked[v] = m.entering[v] = -1;
    s = rewrite(g, shapes, &m, conv, dead, count);
  }
  nnp_free(m.blocked);
  nnp_free(m.entering);
  nnp_free(conv);
  nnp_free(dead);
  return s;
}
