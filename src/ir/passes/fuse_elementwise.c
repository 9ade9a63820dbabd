/* Elementwise chain fusion: a chain of float32 elementwise nodes, each the only reader of
 * the previous one's output and all of the chain's shape (e.g. Mul -> Add -> Relu, a
 * scale-and-shift followed by an activation), becomes one FusedElementwise node whose
 * small program replays the chain. Other operands must have the chain's shape or hold one
 * element (no general broadcasting). Chains of one node are left alone. */
#include <string.h>

#include "ir/passes/pass_util.h"
#include "nnperf/alloc.h"
#include "ops/internal_ops.h"

#define MAX_CHAIN 14 /* instructions; FusedElementwise takes at most 16 inputs */

typedef struct chain {
  int n_ins;
  int ins[16];
  int64_t prog[2 * MAX_CHAIN];
  float params[2 * MAX_CHAIN];
  int n;
} chain;

static int opcode_of(int op, bool acc_first) {
  switch (op) {
    case NNP_OP_ADD: return NNP_EW_ADD;
    case NNP_OP_MUL: return NNP_EW_MUL;
    case NNP_OP_SUB: return acc_first ? NNP_EW_SUB : NNP_EW_RSUB;
    case NNP_OP_DIV: return acc_first ? NNP_EW_DIV : NNP_EW_RDIV;
    case NNP_OP_RELU: return NNP_EW_RELU;
    case NNP_OP_SIGMOID: return NNP_EW_SIGMOID;
    case NNP_OP_TANH: return NNP_EW_TANH;
    case NNP_OP_ERF: return NNP_EW_ERF;
    case NNP_OP_NEG: return NNP_EW_NEG;
    case NNP_OP_CLIP: return NNP_EW_CLIP;
    case NNP_OP_HARD_SWISH: return NNP_EW_HARD_SWISH;
    default: return 0;
  }
}

static bool is_binary(int op) { return op == NNP_OP_ADD || op == NNP_OP_MUL || op == NNP_OP_SUB || op == NNP_OP_DIV; }

/* Appends node n to the chain whose accumulator is value acc (-1: n starts the chain).
 * False if n does not fit. */
static bool append(const nnp_graph *g, const nnp_graph_shapes *shapes, const nnp_tensor *full, const nnp_node *n, int acc,
                   chain *c) {
  if (n->n_outputs != 1 || n->outputs[0] < 0 || c->n == MAX_CHAIN) return false;
  const nnp_tensor *to = pass_shape(shapes, n->outputs[0]);
  if (!to || to->dtype != NNP_F32 || !nnp_tensor_same_shape(to, full)) return false;
  float lo = 0, hi = 0;
  if (is_binary(n->op)) {
    if (n->n_inputs != 2 || n->inputs[0] < 0 || n->inputs[1] < 0) return false;
    int ai; /* which operand is the accumulator */
    if (acc >= 0) {
      if (n->inputs[0] == n->inputs[1]) return false; /* Mul(a, a): the operand would be the chain's own value */
      ai = n->inputs[0] == acc ? 0 : n->inputs[1] == acc ? 1 : -1;
    } else {
      const nnp_tensor *t0 = pass_shape(shapes, n->inputs[0]);
      ai = t0 && nnp_tensor_same_shape(t0, full) ? 0 : 1;
    }
    if (ai < 0) return false;
    int other = n->inputs[1 - ai];
    const nnp_tensor *ta = pass_shape(shapes, n->inputs[ai]), *tb = pass_shape(shapes, other);
    if (!ta || !tb || ta->dtype != NNP_F32 || tb->dtype != NNP_F32 || !nnp_tensor_same_shape(ta, full) ||
        (!nnp_tensor_same_shape(tb, full) && nnp_tensor_numel(tb) != 1))
      return false;
    if (acc < 0) c->ins[c->n_ins++] = n->inputs[ai];
    int slot = -1;
    for (int k = 1; k < c->n_ins; k++)
      if (c->ins[k] == other) slot = k;
    if (slot < 0) {
      if (c->n_ins == 16) return false;
      slot = c->n_ins;
      c->ins[c->n_ins++] = other;
    }
    c->prog[2 * c->n] = opcode_of(n->op, ai == 0);
    c->prog[2 * c->n + 1] = slot;
  } else {
    int code = opcode_of(n->op, true);
    if (!code || n->n_inputs < 1 || n->inputs[0] < 0 || (acc >= 0 && n->inputs[0] != acc)) return false;
    if (n->op == NNP_OP_CLIP && !pass_clip_bounds(g, n, &lo, &hi)) return false;
    if (n->op != NNP_OP_CLIP && n->n_inputs != 1) return false;
    const nnp_tensor *ta = pass_shape(shapes, n->inputs[0]);
    if (!ta || ta->dtype != NNP_F32 || !nnp_tensor_same_shape(ta, full)) return false;
    if (acc < 0) c->ins[c->n_ins++] = n->inputs[0];
    c->prog[2 * c->n] = code;
    c->prog[2 * c->n + 1] = -1;
  }
  c->params[2 * c->n] = lo;
  c->params[2 * c->n + 1] = hi;
  c->n++;
  return true;
}

/* Rewrites node i (the chain's head) into the FusedElementwise node writing `out`. */
static nnp_status rewrite(nnp_node *n, const chain *c, int out) {
  int *ins = nnp_malloc(sizeof(int) * (size_t)c->n_ins);
  int64_t *prog = nnp_malloc(sizeof(int64_t) * (size_t)(2 * c->n));
  float *params = nnp_malloc(sizeof(float) * (size_t)(2 * c->n));
  if (!ins || !prog || !params) {
    nnp_free(ins);
    nnp_free(prog);
    nnp_free(params);
    return nnp_error(NNP_ERR_NOMEM, "out of memory fusing an elementwise chain");
  }
  memcpy(ins, c->ins, sizeof(int) * (size_t)c->n_ins);
  memcpy(prog, c->prog, sizeof(int64_t) * (size_t)(2 * c->n));
  memcpy(params, c->params, sizeof(float) * (size_t)(2 * c->n));
  for (int a = 0; a < n->n_attrs; a++) nnp_attr_clear(&n->attrs[a]);
  n->n_attrs = 0;
  nnp_free(n->inputs);
  n->inputs = ins;
  n->n_inputs = c->n_ins;
  n->outputs[0] = out;
  nnp_attr *a;
  nnp_status s = nnp_node_add_attr(n, "program", &a);
  if (s != NNP_OK) {
    nnp_free(prog);
    nnp_free(params);
    return s;
  }
  a->type = NNP_ATTR_INTS;
  a->ints = prog;
  a->count = (size_t)(2 * c->n);
  s = nnp_node_add_attr(n, "params", &a);
  if (s != NNP_OK) {
    nnp_free(params);
    return s;
  }
  a->type = NNP_ATTR_FLOATS;
  a->floats = params;
  a->count = (size_t)(2 * c->n);
  return pass_make_internal(n, NNP_OP_FUSED_ELEMENTWISE, "FusedElementwise");
}

nnp_status nnp_pass_fuse_elementwise(nnp_graph *g, const nnp_graph_shapes *shapes, int *count) {
  *count = 0;
  if (!shapes || g->n_nodes == 0) return NNP_OK;
  /* Use counts are taken once and absorbed nodes only marked, then removed in one
   * compaction: a rescan of the graph per chain link and a memmove per removal made a
   * long chain quadratic (20,000 Relus took seconds). A rewrite only moves or drops uses,
   * so a stale count is never below the true one and "exactly one reader" stays safe. */
  int *uses = pass_use_counts(g);
  bool *dead = nnp_calloc((size_t)g->n_nodes, sizeof(bool));
  if (!uses || !dead) {
    nnp_free(uses);
    nnp_free(dead);
    return nnp_error(NNP_ERR_NOMEM, "out of memory fusing elementwise chains");
  }
  nnp_status st = NNP_OK;
  for (int i = 0; i < g->n_nodes && st == NNP_OK; i++) {
    if (dead[i]) continue;
    const nnp_node *head = &g->nodes[i];
    if (!opcode_of(head->op, true) || head->n_outputs != 1 || head->outputs[0] < 0) continue;
    const nnp_tensor *full = pass_shape(shapes, head->outputs[0]);
    if (!full) continue;
    chain c;
    memset(&c, 0, sizeof c);
    if (!append(g, shapes, full, head, -1, &c)) continue;
    int members[MAX_CHAIN], nm = 0, acc = head->outputs[0], last = i;
    for (;;) {
      int next = uses[acc] == 1 ? pass_next_reader(g, last + 1, acc, dead) : -1;
      if (next < 0 || next == i || !append(g, shapes, full, &g->nodes[next], acc, &c)) break;
      members[nm++] = next;
      acc = g->nodes[next].outputs[0];
      last = next;
    }
    if (nm == 0) continue;
    st = rewrite(&g->nodes[i], &c, acc);
    if (st != NNP_OK) break;
    for (int a = 0; a < nm; a++) dead[members[a]] = true;
    ++*count;
  }
  pass_remove_dead(g, dead);
  nnp_free(uses);
  nnp_free(dead);
  return st;
}
