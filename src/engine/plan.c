/* Plan compilation and execution.
 *
 * Compile takes the graph's shapes from shape inference (ir/shape_infer.h), which also
 * evaluates at load time the nodes whose inputs are all known and whose outputs are
 * small (shape arithmetic such as Shape -> Gather -> Concat -> Reshape), so that shapes
 * depending on them are static. Every other node becomes a step, whose op may pick a
 * fast kernel. Runtime intermediates get arena offsets from the memory plan, or each
 * its own buffer without one. */
#include <stdio.h>
#include <string.h>

#include "engine/batch_lanes.h"
#include "engine/memory_plan.h"
#include "ir/shape_infer.h"
#include "nnperf/alloc.h"
#include "nnperf/engine.h"
#include "nnperf/passes.h"
#include "ops/fast_ops.h"
#include "ops/op.h"
#include "util/threadpool.h"
#include "engine/bf16.h"

typedef struct plan_value {
  nnp_tensor t;
  bool used;     /* defined or read by the plan */
  bool known;    /* data known at load time (initializer or folded) */
  bool owns;     /* t.data allocated by the plan */
} plan_value;

typedef struct plan_step {
  const nnp_node *node;
  const nnp_op_info *info;
  int first_in, first_out; /* offsets into plan->in_ptrs / out_ptrs */
  nnp_fast_kernel fast;    /* fast.run NULL: the reference kernel runs */
  unsigned bf16_inputs;    /* inputs rounded to bf16 before each run (engine/bf16.h) */
} plan_step;

struct nnp_plan {
  const nnp_graph *g;
  nnp_graph *owned_graph; /* the rewritten clone when passes ran (g points at it); it
                           * borrows the caller's initializer data (the caller's graph
                           * outlives the plan) */
  const nnp_graph *user_graph;
  plan_value *values;
  plan_step *steps;
  int n_steps;
  const nnp_tensor **in_ptrs;
  nnp_tensor **out_ptrs;
  void *scratch;
  size_t scratch_size;
  void *arena;           /* planned intermediates (memory_plan), NULL otherwise */
  bool defer_buffers;    /* memory plan: runtime values get arena offsets after compile,
                          * so compile never holds a buffer per value (the naive peak) */
  nnp_plan_memory mem;
  nnp_threadpool *pool; /* NULL when the plan runs on one thread */
  bool fast_kernels;
  bool bf16; /* matrix-product operands in bf16 (engine/bf16.h) */
  nnp_batch_lanes *lanes; /* batch > 1 run image by image (NULL: layer at a time) */
};

void nnp_plan_options_default(nnp_plan_options *o) {
  memset(o, 0, sizeof *o);
  o->default_dim = 1;
  o->passes = NNP_PASS_DEFAULT;
  o->memory_plan = true;
  o->fast_kernels = true;
  o->threads = 1;
  o->batch_lanes = NNP_LANES_AUTO;
}

nnp_status nnp_plan_options_bind_shape(nnp_plan_options *o, const char *input, int rank, const int64_t *dims) {
  int slot = 0;
  while (slot < o->n_shapes && strcmp(o->shapes[slot].input, input)) slot++;
  if (slot == o->n_shapes) {
    if (o->n_shapes == NNP_PLAN_MAX_BINDINGS) return nnp_error(NNP_ERR_LIMIT, "too many input shapes");
    o->n_shapes++;
  }
  o->shapes[slot].input = input;
  o->shapes[slot].rank = rank;
  memcpy(o->shapes[slot].dims, dims, sizeof(int64_t) * (size_t)rank);
  return NNP_OK;
}

static nnp_status oom(void) { return nnp_error(NNP_ERR_NOMEM, "out of memory while compiling the plan"); }

void nnp_plan_destroy(nnp_plan *p) {
  if (!p) return;
  nnp_batch_lanes_destroy(p->lanes);
  if (p->values)
    for (int v = 0; v < p->g->n_values; v++)
      if (p->values[v].owns) nnp_tensor_free(&p->values[v].t);
  nnp_free(p->values);
  if (p->steps)
    for (int i = 0; i < p->n_steps; i++)
      if (p->steps[i].fast.destroy) p->steps[i].fast.destroy(p->steps[i].fast.state);
  nnp_free(p->steps);
  nnp_threadpool_destroy(p->pool);
  nnp_free(p->in_ptrs);
  nnp_free(p->out_ptrs);
  nnp_aligned_free(p->scratch);
  if (p->owned_graph) nnp_graph_unshare(p->owned_graph, p->user_graph);
  nnp_graph_destroy(p->owned_graph);
  nnp_aligned_free(p->arena);
  nnp_free(p);
}

nnp_status nnp_resolve_input_shape(const nnp_graph *g, const nnp_plan_options *opt, int i, nnp_tensor *t) {
  const nnp_value *val = &g->values[g->inputs[i]];
  memset(t, 0, sizeof *t);
  t->dtype = val->dtype;
  if (nnp_dtype_size(t->dtype) == 0)
    return nnp_error(NNP_ERR_UNSUPPORTED, "input '%s' has type %s, which nnperf does not support", val->name,
                     nnp_dtype_name(val->dtype));
  for (int k = 0; k < opt->n_shapes; k++) {
    if (strcmp(opt->shapes[k].input, val->name) != 0) continue;
    if (val->rank >= 0 && opt->shapes[k].rank != val->rank)
      return nnp_error(NNP_ERR_SHAPE, "input '%s' has rank %d, the given shape has rank %d", val->name, val->rank,
                       opt->shapes[k].rank);
    t->rank = opt->shapes[k].rank;
    for (int d = 0; d < t->rank; d++) {
      if (val->rank >= 0 && val->dims[d].value >= 0 && val->dims[d].value != opt->shapes[k].dims[d])
        return nnp_error(NNP_ERR_SHAPE, "input '%s' dimension %d is fixed at %lld by the model, not %lld", val->name,
                         d, (long long)val->dims[d].value, (long long)opt->shapes[k].dims[d]);
      t->dims[d] = opt->shapes[k].dims[d];
    }
    return NNP_OK;
  }
  if (val->rank < 0)
    return nnp_error(NNP_ERR_SHAPE, "input '%s' has no declared shape: give it one (e.g. --shape %s:1x3x224x224)",
                     val->name, val->name);
  t->rank = val->rank;
  for (int d = 0; d < t->rank; d++) {
    int64_t dim = val->dims[d].value;
    if (dim < 0) {
      dim = opt->default_dim;
      for (int k = 0; k < opt->n_dims && val->dims[d].symbol; k++)
        if (strcmp(opt->dims[k].symbol, val->dims[d].symbol) == 0) dim = opt->dims[k].value;
    }
    t->dims[d] = dim;
  }
  return NNP_OK;
}

/* The dtype and shape of each graph input under opt (ir/shape_infer.h's inputs): a
 * frozen input's value is borrowed from opt (shape inference copies it). */
static nnp_status resolve_inputs(const nnp_graph *g, const nnp_plan_options *opt, nnp_tensor *inputs) {
  for (int i = 0; i < g->n_inputs; i++) {
    const nnp_value *val = &g->values[g->inputs[i]];
    const nnp_tensor *frozen = NULL;
    for (int k = 0; k < opt->n_consts && !frozen; k++)
      if (strcmp(opt->consts[k].input, val->name) == 0) frozen = opt->consts[k].value;
    if (!frozen) {
      NNP_TRY(nnp_resolve_input_shape(g, opt, i, &inputs[i]));
      continue;
    }
    if (val->dtype != NNP_UNDEFINED && frozen->dtype != val->dtype)
      return nnp_error(NNP_ERR_SHAPE, "input '%s' is %s, the frozen value is %s", val->name,
                       nnp_dtype_name(val->dtype), nnp_dtype_name(frozen->dtype));
    inputs[i] = *frozen;
  }
  return NNP_OK;
}

static nnp_status grow_scratch(nnp_plan *p, size_t bytes) {
  if (bytes <= p->scratch_size) return NNP_OK;
  nnp_aligned_free(p->scratch);
  p->scratch = nnp_aligned_alloc(bytes);
  p->scratch_size = p->scratch ? bytes : 0;
  if (!p->scratch) return nnp_error(NNP_ERR_NOMEM, "cannot allocate %zu bytes of scratch", bytes);
  return NNP_OK;
}

/* Lets the op pick a fast kernel (ops/op.h, prepare): it sees the data of known inputs
 * only, as infer() does; the kernel's state then belongs to the step. */
static nnp_status prepare_fast(nnp_plan *p, const nnp_graph *g, plan_step *st, const nnp_tensor **in,
                               nnp_tensor **outp) {
  const nnp_node *n = st->node;
  nnp_tensor in_local[n->n_inputs > 0 ? n->n_inputs : 1];
  const nnp_tensor *in_view[n->n_inputs > 0 ? n->n_inputs : 1];
  for (int k = 0; k < n->n_inputs; k++) {
    in_view[k] = NULL;
    if (!in[k]) continue;
    in_local[k] = *in[k];
    if (!p->values[n->inputs[k]].known) in_local[k].data = NULL;
    in_view[k] = &in_local[k];
  }
  nnp_op_ctx ctx = {.node = n, .opset = g->opset, .n_in = n->n_inputs, .in = in_view, .n_out = n->n_outputs,
                    .out = outp, .pool = p->pool};
  NNP_TRY(nnp_op_prepare(n->op)(&ctx, false, &st->fast));
  return st->fast.run ? grow_scratch(p, st->fast.scratch_needed) : NNP_OK;
}

/* bf16 (engine/bf16.h): a constant operand is rounded now, once (a copy: its data may be
 * the caller's graph's), a runtime one is marked for rounding before each run. */
static nnp_status bf16_operands(nnp_plan *p, const nnp_node *n, plan_step *st) {
  unsigned mask = nnp_bf16_operand_mask(n->op);
  for (int k = 0; k < n->n_inputs && k < 32; k++) {
    if (!(mask >> k & 1) || n->inputs[k] < 0) continue;
    plan_value *pv = &p->values[n->inputs[k]];
    if (!pv->known) {
      st->bf16_inputs |= 1u << k;
      continue;
    }
    if (!pv->owns) {
      nnp_tensor copy;
      NNP_TRY(nnp_tensor_clone(&pv->t, &copy));
      pv->t = copy;
      pv->owns = true;
    }
    nnp_bf16_round_tensor(&pv->t); /* idempotent: a weight shared by two nodes is fine */
  }
  return NNP_OK;
}

/* Node i, which shape inference left to run time, becomes a step: its outputs get
 * buffers (or, with a memory plan, arena offsets later) and its op may pick a fast
 * kernel. */
static nnp_status add_step(nnp_plan *p, const nnp_graph *g, int i, int *n_in_used, int *n_out_used) {
  const nnp_node *n = &g->nodes[i];
  const nnp_tensor **in = p->in_ptrs + *n_in_used;
  nnp_tensor **outp = p->out_ptrs + *n_out_used;
  for (int k = 0; k < n->n_inputs; k++) in[k] = n->inputs[k] >= 0 ? &p->values[n->inputs[k]].t : NULL;
  for (int k = 0; k < n->n_outputs; k++) {
    int v = n->outputs[k];
    outp[k] = v >= 0 ? &p->values[v].t : NULL; /* omitted optional output: the kernel sees NULL */
    if (v < 0) continue;
    p->values[v].owns = true;
    if (!p->defer_buffers) NNP_TRY(nnp_tensor_alloc(&p->values[v].t));
  }
  plan_step *st = &p->steps[p->n_steps++];
  st->node = n;
  st->info = nnp_op_get(n->op);
  st->first_in = *n_in_used;
  st->first_out = *n_out_used;
  *n_in_used += n->n_inputs;
  *n_out_used += n->n_outputs;
  if (p->bf16) NNP_TRY(bf16_operands(p, n, st));
  if (p->fast_kernels && nnp_op_prepare(n->op)) NNP_TRY(prepare_fast(p, g, st, in, outp));
  return NNP_OK;
}

/* Elementwise ops whose kernels read input element i only to write output element i, so
 * the output may overwrite an input of the same shape. FusedConv/FusedGemm are not here:
 * their kernel writes the output while other outputs' rows still need the residual. */
static bool elementwise_inplace_ok(int op) {
  switch (op) {
    case NNP_OP_RELU: case NNP_OP_SIGMOID: case NNP_OP_CLIP: case NNP_OP_HARD_SWISH: case NNP_OP_HARD_SIGMOID:
    case NNP_OP_TANH: case NNP_OP_LEAKY_RELU: case NNP_OP_NEG: case NNP_OP_ABS: case NNP_OP_EXP: case NNP_OP_SQRT:
    case NNP_OP_ADD: case NNP_OP_SUB: case NNP_OP_MUL: case NNP_OP_DIV:
      return true;
    default:
      return false;
  }
}

/* Ops whose output is their input 0's bytes under another shape (their kernel skips the
 * copy when the two share a buffer): the output may take over input 0's buffer. The
 * transformers reshape between every pair of ops (vit_b_16: 61 Reshapes, 3.3 ms of
 * single-threaded copies per run at 2 threads). */
static bool view_inplace_ok(int op) {
  return op == NNP_OP_RESHAPE || op == NNP_OP_FLATTEN || op == NNP_OP_SQUEEZE || op == NNP_OP_UNSQUEEZE;
}

/* Replaces the per-value buffers of runtime intermediates by offsets in one arena. */
static nnp_status plan_memory(nnp_plan *p) {
  const nnp_graph *g = p->g;
  int *item_of = nnp_malloc(sizeof(int) * (size_t)(g->n_values ? g->n_values : 1));
  nnp_mem_item *items = nnp_calloc((size_t)(g->n_values ? g->n_values : 1), sizeof *items);
  bool *taken = nnp_calloc((size_t)(g->n_values ? g->n_values : 1), sizeof *taken);
  if (!item_of || !items || !taken) {
    nnp_free(item_of);
    nnp_free(items);
    nnp_free(taken);
    return oom();
  }
  int n = 0;
  for (int v = 0; v < g->n_values; v++) item_of[v] = -1;
  for (int s = 0; s < p->n_steps; s++) {
    const nnp_node *nd = p->steps[s].node;
    for (int k = 0; k < nd->n_inputs; k++)
      if (nd->inputs[k] >= 0 && item_of[nd->inputs[k]] >= 0) items[item_of[nd->inputs[k]]].last = s;
    for (int k = 0; k < nd->n_outputs; k++) {
      int v = nd->outputs[k];
      if (v < 0) continue;
      plan_value *pv = &p->values[v];
      if (!pv->owns || pv->known || g->values[v].kind != NNP_VALUE_INTERMEDIATE) continue;
      items[n] = (nnp_mem_item){.size = nnp_tensor_nbytes(&pv->t), .first = s, .last = s, .inplace_of = -1};
      item_of[v] = n++;
    }
  }
  for (int k = 0; k < g->n_outputs; k++)
    if (item_of[g->outputs[k]] >= 0) items[item_of[g->outputs[k]]].last = p->n_steps;
  for (int s = 0; s < p->n_steps; s++) {
    const nnp_node *nd = p->steps[s].node;
    const bool view = view_inplace_ok(nd->op);
    if ((!elementwise_inplace_ok(nd->op) && !view) || nd->n_outputs != 1 || nd->outputs[0] < 0) continue;
    int io = item_of[nd->outputs[0]];
    if (io < 0) continue;
    const nnp_tensor *to = &p->values[nd->outputs[0]].t;
    for (int k = 0; k < (view ? 1 : nd->n_inputs); k++) {
      int v = nd->inputs[k];
      int ii = v >= 0 ? item_of[v] : -1;
      if (ii < 0 || taken[ii] || items[ii].last != s || g->values[v].is_output) continue;
      const nnp_tensor *ti = &p->values[v].t;
      if (ti->dtype != to->dtype || (view ? nnp_tensor_nbytes(ti) != nnp_tensor_nbytes(to) : !nnp_tensor_same_shape(ti, to)))
        continue;
      items[io].inplace_of = ii;
      taken[ii] = true;
      break;
    }
  }
  nnp_mem_stats st;
  nnp_status s = nnp_memory_plan(items, n, &st);
  if (s == NNP_OK && st.planned) {
    p->arena = nnp_aligned_alloc(st.planned);
    if (!p->arena) s = nnp_error(NNP_ERR_NOMEM, "cannot allocate a %zu-byte activation arena", st.planned);
  }
  if (s == NNP_OK) {
    for (int v = 0; v < g->n_values; v++) {
      if (item_of[v] < 0) continue;
      plan_value *pv = &p->values[v];
      nnp_tensor_free(&pv->t);
      pv->t.data = (char *)p->arena + items[item_of[v]].offset;
      pv->owns = false;
    }
    p->mem = (nnp_plan_memory){.planned = st.planned, .naive = st.naive, .lower_bound = st.lower_bound,
                               .inplace = st.inplace, .buffers = n};
  }
  nnp_free(item_of);
  nnp_free(items);
  nnp_free(taken);
  return s;
}

/* Takes over the inferred tensors (the data of values known at load time moves into the
 * plan), gives the non-frozen inputs their buffers, and sizes the scratch. */
static nnp_status adopt_shapes(nnp_plan *p, nnp_graph_shapes *sh) {
  const nnp_graph *g = p->g;
  size_t scratch = 0;
  for (int v = 0; v < g->n_values; v++) {
    nnp_value_shape *vs = &sh->values[v];
    p->values[v] = (plan_value){.t = vs->t, .used = vs->used, .known = vs->known, .owns = vs->owns};
    vs->owns = false;
  }
  for (int i = 0; i < g->n_nodes; i++) scratch = sh->scratch[i] > scratch ? sh->scratch[i] : scratch;
  for (int k = 0; k < g->n_inputs; k++) {
    plan_value *pv = &p->values[g->inputs[k]];
    if (pv->known) continue; /* frozen: its value is already there */
    pv->owns = true;
    nnp_status s = nnp_tensor_alloc(&pv->t);
    if (s != NNP_OK) return nnp_error_context(s, "input '%s'", g->values[g->inputs[k]].name);
  }
  return grow_scratch(p, scratch);
}

static nnp_status alloc_plan(const nnp_graph *g, const nnp_plan_options *opt, nnp_plan **out) {
  nnp_plan *p = nnp_calloc(1, sizeof *p);
  if (!p) return oom();
  *out = p;
  p->g = g;
  p->defer_buffers = opt->memory_plan;
  p->fast_kernels = opt->fast_kernels;
  p->bf16 = opt->bf16;
  /* threads <= 0 (options zeroed by hand rather than defaulted) means the caller only */
  if (opt->threads > 1) NNP_TRY(nnp_threadpool_create(opt->threads, &p->pool));
  size_t total_in = 0, total_out = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    total_in += (size_t)g->nodes[i].n_inputs;
    total_out += (size_t)g->nodes[i].n_outputs;
  }
  p->values = nnp_calloc((size_t)(g->n_values ? g->n_values : 1), sizeof *p->values);
  p->steps = nnp_calloc((size_t)(g->n_nodes ? g->n_nodes : 1), sizeof *p->steps);
  p->in_ptrs = nnp_calloc(total_in ? total_in : 1, sizeof *p->in_ptrs);
  p->out_ptrs = nnp_calloc(total_out ? total_out : 1, sizeof *p->out_ptrs);
  if (!p->values || !p->steps || !p->in_ptrs || !p->out_ptrs) return oom();
  return NNP_OK;
}

/* Compiles g (shapes inferred for inputs) into a plan: every node shape inference did not
 * evaluate becomes a step. */
static nnp_status compile_graph(const nnp_graph *g, const nnp_plan_options *opt, const nnp_tensor *inputs,
                                nnp_plan **out) {
  *out = NULL;
  nnp_plan *p = NULL;
  nnp_graph_shapes *sh = NULL;
  nnp_status s = alloc_plan(g, opt, &p);
  if (s == NNP_OK) s = nnp_graph_shapes_infer(g, inputs, &sh);
  if (s == NNP_OK) s = adopt_shapes(p, sh);
  int n_in_used = 0, n_out_used = 0;
  for (int i = 0; s == NNP_OK && i < g->n_nodes; i++) {
    if (sh->evaluated[i]) continue;
    s = add_step(p, g, i, &n_in_used, &n_out_used);
    if (s != NNP_OK) s = nnp_error_context(s, "node '%s' (%s)", g->nodes[i].name, g->nodes[i].op_type);
  }
  nnp_graph_shapes_destroy(sh);
  if (s == NNP_OK && opt->memory_plan) s = plan_memory(p);
  if (s == NNP_OK && !opt->memory_plan) p->mem.naive = p->mem.planned = nnp_plan_activation_bytes(p);
  if (s != NNP_OK) {
    nnp_plan_destroy(p);
    return s;
  }
  *out = p;
  return NNP_OK;
}

/* Batch lanes (engine/batch_lanes.h) when asked for: lane plans compile from the graph
 * and options p came from, with batch 1 and one thread each. */
static nnp_status add_lanes(nnp_plan **pp, const nnp_graph *src, const nnp_plan_options *opt) {
  if (opt->batch_lanes == NNP_LANES_OFF) return NNP_OK;
  nnp_status s = nnp_batch_lanes_create(*pp, src, opt, &(*pp)->lanes);
  if (s != NNP_OK) {
    nnp_plan_destroy(*pp);
    *pp = NULL;
  }
  return s;
}

/* Graph passes run on a clone: the caller's graph stays as it is. The passes read the
 * clone's shapes as inferred before they run (ir/shape_infer.h); the plan is then
 * compiled once, from the rewritten clone. */
static nnp_status compile_with_passes(const nnp_graph *g, const nnp_plan_options *opt, const nnp_tensor *inputs,
                                      nnp_plan **out) {
  nnp_graph *clone = NULL;
  nnp_graph_shapes *sh = NULL;
  nnp_status s = nnp_graph_clone(g, true, &clone);
  if (s == NNP_OK) s = nnp_graph_shapes_infer(clone, inputs, &sh);
  if (s == NNP_OK) {
    nnp_graph_shapes_apply(clone, sh);
    s = nnp_passes_run(clone, opt->passes, sh, NULL);
  }
  nnp_graph_shapes_destroy(sh);
  if (s == NNP_OK) s = compile_graph(clone, opt, inputs, out);
  if (s != NNP_OK) {
    if (clone) nnp_graph_unshare(clone, g);
    nnp_graph_destroy(clone);
    return s;
  }
  (*out)->owned_graph = clone;
  (*out)->user_graph = g;
  return NNP_OK;
}

nnp_status nnp_plan_compile(const nnp_graph *g, const nnp_plan_options *opt, nnp_plan **out) {
  nnp_plan_options defaults;
  if (!opt) {
    nnp_plan_options_default(&defaults);
    opt = &defaults;
  }
  *out = NULL;
  NNP_TRY(nnp_graph_check_ops(g));
  nnp_tensor inputs[g->n_inputs > 0 ? g->n_inputs : 1];
  NNP_TRY(resolve_inputs(g, opt, inputs));
  if (opt->passes & NNP_PASS_ALL) NNP_TRY(compile_with_passes(g, opt, inputs, out));
  else NNP_TRY(compile_graph(g, opt, inputs, out));
  return add_lanes(out, g, opt);
}

/* One step: the single place a step's kernel is called (the optimised-kernel dispatch
 * belongs here). */
nnp_status nnp_plan_run_step(nnp_plan *p, int i) {
  const plan_step *st = &p->steps[i];
  nnp_op_ctx ctx = {.node = st->node, .opset = p->g->opset, .n_in = st->node->n_inputs,
                    .in = p->in_ptrs + st->first_in, .n_out = st->node->n_outputs,
                    .out = p->out_ptrs + st->first_out, .scratch = p->scratch,
                    .scratch_size = p->scratch_size, .pool = p->pool};
  for (unsigned m = st->bf16_inputs, k = 0; m; m >>= 1, k++)
    if (m & 1) nnp_bf16_round_tensor((nnp_tensor *)ctx.in[k]); /* the activation is stored in bf16 */
  nnp_status s = st->fast.run ? st->fast.run(st->fast.state, &ctx) : st->info->ref(&ctx);
  if (s != NNP_OK) return nnp_error_context(s, "node '%s' (%s)", st->node->name, st->node->op_type);
  return NNP_OK;
}

nnp_status nnp_plan_run(nnp_plan *p) {
  if (p->lanes) return nnp_batch_lanes_run(p->lanes, p, p->pool);
  for (int i = 0; i < p->n_steps; i++) NNP_TRY(nnp_plan_run_step(p, i));
  return NNP_OK;
}

int nnp_plan_num_inputs(const nnp_plan *p) { return p->g->n_inputs; }
const char *nnp_plan_input_name(const nnp_plan *p, int i) { return p->g->values[p->g->inputs[i]].name; }
int nnp_plan_find_input(const nnp_plan *p, const char *name) {
  for (int i = 0; i < p->g->n_inputs; i++)
    if (strcmp(nnp_plan_input_name(p, i), name) == 0) return i;
  return -1;
}
nnp_tensor *nnp_plan_input(nnp_plan *p, int i) { return &p->values[p->g->inputs[i]].t; }

nnp_status nnp_plan_set_input(nnp_plan *p, int i, const nnp_tensor *src) {
  if (i < 0 || i >= p->g->n_inputs) return nnp_error(NNP_ERR_INVALID, "input index %d out of range", i);
  nnp_tensor *dst = nnp_plan_input(p, i);
  const char *name = nnp_plan_input_name(p, i);
  if (src->dtype != dst->dtype)
    return nnp_error(NNP_ERR_SHAPE, "input '%s' expects %s, got %s", name, nnp_dtype_name(dst->dtype),
                     nnp_dtype_name(src->dtype));
  if (!nnp_tensor_same_shape(src, dst)) {
    char a[128], b[128];
    return nnp_error(NNP_ERR_SHAPE, "input '%s' expects shape %s, got %s", name,
                     nnp_shape_str(dst->rank, dst->dims, a, sizeof a), nnp_shape_str(src->rank, src->dims, b, sizeof b));
  }
  if (p->values[p->g->inputs[i]].known) { /* frozen at load time: what depends on it is folded */
    if (memcmp(dst->data, src->data, nnp_tensor_nbytes(dst)) != 0)
      return nnp_error(NNP_ERR_INVALID, "input '%s' was frozen at load time; it cannot change", name);
    return NNP_OK;
  }
  memcpy(dst->data, src->data, nnp_tensor_nbytes(dst));
  return NNP_OK;
}

int nnp_plan_num_outputs(const nnp_plan *p) { return p->g->n_outputs; }
const char *nnp_plan_output_name(const nnp_plan *p, int i) { return p->g->values[p->g->outputs[i]].name; }
const nnp_tensor *nnp_plan_output(const nnp_plan *p, int i) { return &p->values[p->g->outputs[i]].t; }

const nnp_tensor *nnp_plan_value(const nnp_plan *p, int v) {
  return v >= 0 && v < p->g->n_values && p->values[v].used ? &p->values[v].t : NULL;
}
bool nnp_plan_value_is_constant(const nnp_plan *p, int v) {
  return v >= 0 && v < p->g->n_values && p->values[v].known;
}
int nnp_plan_num_steps(const nnp_plan *p) { return p->n_steps; }
const nnp_graph *nnp_plan_graph(const nnp_plan *p) { return p->g; }
const nnp_node *nnp_plan_step_node(const nnp_plan *p, int s) { return p->steps[s].node; }
const char *nnp_plan_step_kernel(const nnp_plan *p, int s) {
  return p->steps[s].fast.run ? p->steps[s].fast.name : "reference";
}
int nnp_plan_threads(const nnp_plan *p) { return nnp_threadpool_threads(p->pool); }
int nnp_plan_batch_lanes(const nnp_plan *p) { return nnp_batch_lanes_count(p->lanes); }

const nnp_plan_memory *nnp_plan_memory_stats(const nnp_plan *p) { return &p->mem; }

size_t nnp_plan_activation_bytes(const nnp_plan *p) {
  size_t total = 0;
  for (int v = 0; v < p->g->n_values; v++) {
    const plan_value *pv = &p->values[v];
    if (pv->used && !pv->known && p->g->values[v].kind == NNP_VALUE_INTERMEDIATE) total += nnp_tensor_nbytes(&pv->t);
  }
  return total;
}
