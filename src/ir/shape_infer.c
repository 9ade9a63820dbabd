/* Shape inference on the IR (ir/shape_infer.h): walks the nodes in topological order,
 * asks each op's `infer` for its outputs, and evaluates at load time what is known and
 * small (the same rule the plan compiler applied before shapes moved here). */
#include "ir/shape_infer.h"

#include <stdio.h>
#include <string.h>

#include "nnperf/alloc.h"
#include "ops/op.h"
#include "ops/op_eval.h"

typedef struct infer_state {
  const nnp_graph *g;
  nnp_graph_shapes *s;
  void *scratch; /* for nodes evaluated here */
  size_t scratch_size;
} infer_state;

static nnp_status oom(void) { return nnp_error(NNP_ERR_NOMEM, "out of memory while inferring shapes"); }

/* Lists every node whose op nnperf lacks, in one message. */
nnp_status nnp_graph_check_ops(const nnp_graph *g) {
  char msg[900];
  size_t used = 0;
  int missing = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const nnp_node *n = &g->nodes[i];
    if (nnp_op_get(n->op)) continue;
    if (missing < 6 && used < sizeof msg)
      used += (size_t)snprintf(msg + used, sizeof msg - used, "%s%s%s%s (node '%s')", missing ? ", " : "",
                               n->domain[0] ? n->domain : "", n->domain[0] ? "." : "", n->op_type, n->name);
    missing++;
  }
  if (!missing) return NNP_OK;
  if (missing > 6 && used < sizeof msg) snprintf(msg + used, sizeof msg - used, " and %d more", missing - 6);
  return nnp_error(NNP_ERR_UNSUPPORTED, "unsupported op%s: %s", missing > 1 ? "s" : "", msg);
}

void nnp_graph_shapes_destroy(nnp_graph_shapes *s) {
  if (!s) return;
  if (s->values)
    for (int v = 0; v < s->n_values; v++)
      if (s->values[v].owns) nnp_tensor_free(&s->values[v].t);
  nnp_free(s->values);
  nnp_free(s->evaluated);
  nnp_free(s->scratch);
  nnp_free(s);
}

/* Initializers (borrowed from the graph) and the graph inputs. */
static nnp_status bind_sources(const nnp_graph *g, const nnp_tensor *inputs, nnp_graph_shapes *s) {
  for (int v = 0; v < g->n_values; v++) {
    const nnp_value *val = &g->values[v];
    if (val->kind == NNP_VALUE_INITIALIZER && val->init) {
      s->values[v].t = *val->init;
      s->values[v].known = s->values[v].used = true;
    }
  }
  for (int i = 0; i < g->n_inputs; i++) {
    nnp_value_shape *vs = &s->values[g->inputs[i]];
    vs->used = true;
    if (!inputs[i].data) {
      vs->t = inputs[i];
      continue;
    }
    NNP_TRY(nnp_tensor_clone(&inputs[i], &vs->t));
    vs->owns = vs->known = true;
  }
  return NNP_OK;
}

static nnp_status grow_scratch(infer_state *st, size_t bytes) {
  if (bytes <= st->scratch_size) return NNP_OK;
  nnp_aligned_free(st->scratch);
  st->scratch = nnp_aligned_alloc(bytes);
  st->scratch_size = st->scratch ? bytes : 0;
  if (!st->scratch) return nnp_error(NNP_ERR_NOMEM, "cannot allocate %zu bytes of scratch", bytes);
  return NNP_OK;
}

/* Runs node n's reference kernel on its known inputs into freshly allocated outputs. */
static nnp_status evaluate(infer_state *st, const nnp_node *n, const nnp_tensor **in, size_t scratch) {
  nnp_tensor *outp[n->n_outputs > 0 ? n->n_outputs : 1];
  for (int k = 0; k < n->n_outputs; k++) {
    int v = n->outputs[k];
    outp[k] = v >= 0 ? &st->s->values[v].t : NULL;
    if (v < 0) continue;
    NNP_TRY(nnp_tensor_alloc(outp[k]));
    st->s->values[v].owns = true;
  }
  NNP_TRY(grow_scratch(st, scratch));
  nnp_op_ctx ctx = {.node = n, .opset = st->g->opset, .n_in = n->n_inputs, .in = in, .n_out = n->n_outputs,
                    .out = outp, .scratch = st->scratch, .scratch_size = st->scratch_size};
  NNP_TRY(nnp_op_get(n->op)->ref(&ctx));
  for (int k = 0; k < n->n_outputs; k++)
    if (n->outputs[k] >= 0) st->s->values[n->outputs[k]].known = true;
  return NNP_OK;
}

static nnp_status infer_node(infer_state *st, int i) {
  const nnp_node *n = &st->g->nodes[i];
  nnp_graph_shapes *s = st->s;
  const nnp_op_info *info = nnp_op_get(n->op);
  for (int k = 0; k < info->min_outputs && k < n->n_outputs; k++) /* kernels write required outputs */
    if (n->outputs[k] < 0) return nnp_error(NNP_ERR_FORMAT, "required output %d is omitted", k);
  const nnp_tensor *in[n->n_inputs > 0 ? n->n_inputs : 1];
  bool all_known = true;
  for (int k = 0; k < n->n_inputs; k++) { /* unknown values have no data: infer's contract */
    int v = n->inputs[k];
    in[k] = v >= 0 ? &s->values[v].t : NULL;
    if (v >= 0 && !s->values[v].known) all_known = false;
  }
  nnp_tensor out[n->n_outputs > 0 ? n->n_outputs : 1];
  NNP_TRY(nnp_op_infer(n, st->g->opset, n->n_inputs, in, n->n_outputs, out, &s->scratch[i]));
  int64_t out_elems = 0;
  for (int k = 0; k < n->n_outputs; k++) out_elems += nnp_tensor_numel(&out[k]);
  for (int k = 0; k < n->n_outputs; k++) {
    int v = n->outputs[k];
    if (v < 0) continue; /* omitted optional output */
    s->values[v].t = out[k];
    s->values[v].t.data = NULL;
    s->values[v].used = true;
  }
  /* a node whose outputs are all empty has nothing to compute: it never runs */
  s->evaluated[i] = out_elems == 0 || (info->flags & NNP_OPF_SHAPE_ONLY) ||
                    (all_known && out_elems <= NNP_LOAD_EVAL_MAX_ELEMS);
  if (!s->evaluated[i]) return NNP_OK;
  if (out_elems == 0) {
    for (int k = 0; k < n->n_outputs; k++) {
      int v = n->outputs[k];
      if (v < 0) continue;
      NNP_TRY(nnp_tensor_alloc(&s->values[v].t));
      s->values[v].owns = s->values[v].known = true;
    }
    return NNP_OK;
  }
  return evaluate(st, n, in, s->scratch[i]);
}

nnp_status nnp_graph_shapes_infer(const nnp_graph *g, const nnp_tensor *inputs, nnp_graph_shapes **out) {
  *out = NULL;
  nnp_graph_shapes *s = nnp_calloc(1, sizeof *s);
  if (!s) return oom();
  s->n_values = g->n_values;
  s->n_nodes = g->n_nodes;
  s->values = nnp_calloc((size_t)(g->n_values ? g->n_values : 1), sizeof *s->values);
  s->evaluated = nnp_calloc((size_t)(g->n_nodes ? g->n_nodes : 1), sizeof *s->evaluated);
  s->scratch = nnp_calloc((size_t)(g->n_nodes ? g->n_nodes : 1), sizeof *s->scratch);
  infer_state st = {.g = g, .s = s};
  nnp_status status = NNP_OK;
  if (!s->values || !s->evaluated || !s->scratch) status = oom();
  if (status == NNP_OK) status = bind_sources(g, inputs, s);
  for (int i = 0; status == NNP_OK && i < g->n_nodes; i++) {
    status = infer_node(&st, i);
    if (status != NNP_OK)
      status = nnp_error_context(status, "node '%s' (%s)", g->nodes[i].name, g->nodes[i].op_type);
  }
  nnp_aligned_free(st.scratch);
  if (status != NNP_OK) {
    nnp_graph_shapes_destroy(s);
    return status;
  }
  *out = s;
  return NNP_OK;
}

const nnp_tensor *nnp_graph_shape(const nnp_graph_shapes *s, int v) {
  return s && v >= 0 && v < s->n_values && s->values[v].used ? &s->values[v].t : NULL;
}

bool nnp_graph_shape_known(const nnp_graph_shapes *s, int v) {
  return s && v >= 0 && v < s->n_values && s->values[v].known;
}

void nnp_graph_shapes_apply(nnp_graph *g, const nnp_graph_shapes *s) {
  for (int v = 0; v < s->n_values && v < g->n_values; v++) {
    const nnp_value_shape *vs = &s->values[v];
    nnp_value *val = &g->values[v];
    if (!vs->used || val->kind == NNP_VALUE_INPUT) continue;
    val->dtype = vs->t.dtype;
    val->rank = vs->t.rank;
    for (int d = 0; d < vs->t.rank; d++) val->dims[d].value = vs->t.dims[d];
  }
}
