/* ModelProto -> nnp_graph. */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "nnperf/alloc.h"
#include "onnx/onnx_internal.h"
#include "ops/op.h"

void nnp_load_options_default(nnp_load_options *o) {
  o->max_file_bytes = (size_t)2 << 30;
  o->max_nodes = 1000000;
}

/* No op has more than a dozen attributes; the limit keeps the duplicate check (linear
 * per attribute) from going quadratic on a hostile node. */
#define NNP_MAX_ATTRS 1024

static nnp_status oom(void) { return nnp_error(NNP_ERR_NOMEM, "out of memory while importing the model"); }

/* Declared type of a graph input/output or value_info entry. */
static nnp_status import_type(nnp_value *v, const Onnx__TypeProto *tp) {
  if (!tp) return NNP_OK;
  if (tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
    return nnp_error(NNP_ERR_UNSUPPORTED, "value '%s' is not a tensor (sequence/map/optional types are not supported)",
                     v->name);
  const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
  if (!tt) return NNP_OK;
  if (tt->has_elem_type) v->dtype = (nnp_dtype)tt->elem_type;
  if (!tt->shape) return NNP_OK;
  if (tt->shape->n_dim > NNP_MAX_RANK)
    return nnp_error(NNP_ERR_LIMIT, "value '%s' has rank %zu; nnperf supports up to %d", v->name,
                     tt->shape->n_dim, NNP_MAX_RANK);
  v->rank = (int)tt->shape->n_dim;
  for (int d = 0; d < v->rank; d++) {
    const Onnx__TensorShapeProto__Dimension *dim = tt->shape->dim[d];
    nnp_free(v->dims[d].symbol);
    v->dims[d].symbol = NULL;
    v->dims[d].value = -1;
    if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
      if (dim->dim_value < 0)
        return nnp_error(NNP_ERR_FORMAT, "value '%s' has negative dimension %lld", v->name,
                         (long long)dim->dim_value);
      v->dims[d].value = dim->dim_value;
    } else if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && dim->dim_param) {
      v->dims[d].symbol = nnp_strdup(dim->dim_param);
      if (!v->dims[d].symbol) return oom();
    }
  }
  return NNP_OK;
}

static nnp_status import_attr(nnp_node *n, const Onnx__AttributeProto *ap, const char *base_dir) {
  if (!ap->name || !ap->name[0])
    return nnp_error(NNP_ERR_FORMAT, "node '%s' (%s) has an attribute without a name", n->name, n->op_type);
  if (nnp_node_attr(n, ap->name))
    return nnp_error(NNP_ERR_FORMAT, "node '%s' (%s) has attribute '%s' twice", n->name, n->op_type, ap->name);
  nnp_attr *a;
  NNP_TRY(nnp_node_add_attr(n, ap->name, &a));
  a->type = ap->has_type ? (nnp_attr_type)ap->type : NNP_ATTR_UNDEFINED;
  if (ap->ref_attr_name && ap->ref_attr_name[0])
    return nnp_error(NNP_ERR_UNSUPPORTED, "node '%s' (%s): attribute references are only valid inside functions",
                     n->name, n->op_type);
  if (a->type == NNP_ATTR_UNDEFINED) { /* IR version < 2 omitted the type: infer it */
    if (ap->has_f) a->type = NNP_ATTR_FLOAT;
    else if (ap->has_i) a->type = NNP_ATTR_INT;
    else if (ap->has_s) a->type = NNP_ATTR_STRING;
    else if (ap->t) a->type = NNP_ATTR_TENSOR;
    else if (ap->n_floats) a->type = NNP_ATTR_FLOATS;
    else if (ap->n_ints) a->type = NNP_ATTR_INTS;
    else if (ap->n_strings) a->type = NNP_ATTR_STRINGS;
    else if (ap->g) a->type = NNP_ATTR_GRAPH;
  }
  char what[300];
  snprintf(what, sizeof what, "attribute '%s' of node '%s'", ap->name, n->name);
  switch (a->type) {
    case NNP_ATTR_FLOAT: a->f = ap->f; break;
    case NNP_ATTR_INT: a->i = ap->i; break;
    case NNP_ATTR_STRING:
      a->s = nnp_malloc(ap->s.len + 1);
      if (!a->s) return oom();
      if (ap->s.len) memcpy(a->s, ap->s.data, ap->s.len);
      a->s[ap->s.len] = 0;
      a->s_len = ap->s.len;
      break;
    case NNP_ATTR_FLOATS:
      a->count = ap->n_floats;
      a->floats = nnp_malloc(sizeof(float) * (ap->n_floats ? ap->n_floats : 1));
      if (!a->floats) return oom();
      if (ap->n_floats) memcpy(a->floats, ap->floats, sizeof(float) * ap->n_floats);
      break;
    case NNP_ATTR_INTS:
      a->count = ap->n_ints;
      a->ints = nnp_malloc(sizeof(int64_t) * (ap->n_ints ? ap->n_ints : 1));
      if (!a->ints) return oom();
      if (ap->n_ints) memcpy(a->ints, ap->ints, sizeof(int64_t) * ap->n_ints);
      break;
    case NNP_ATTR_STRINGS:
      a->strings = nnp_calloc(ap->n_strings ? ap->n_strings : 1, sizeof(char *));
      if (!a->strings) return oom();
      a->count = ap->n_strings;
      for (size_t k = 0; k < ap->n_strings; k++) {
        a->strings[k] = nnp_malloc(ap->strings[k].len + 1);
        if (!a->strings[k]) return oom();
        if (ap->strings[k].len) memcpy(a->strings[k], ap->strings[k].data, ap->strings[k].len);
        a->strings[k][ap->strings[k].len] = 0;
      }
      break;
    case NNP_ATTR_TENSOR:
      if (!ap->t) return nnp_error(NNP_ERR_FORMAT, "%s is a tensor attribute without a tensor", what);
      a->tensor = nnp_calloc(1, sizeof(nnp_tensor));
      if (!a->tensor) return oom();
      NNP_TRY(nnp_onnx_tensor_from_proto(ap->t, base_dir, what, a->tensor));
      break;
    case NNP_ATTR_TENSORS:
      a->tensor = nnp_calloc(ap->n_tensors ? ap->n_tensors : 1, sizeof(nnp_tensor));
      if (!a->tensor) return oom();
      for (size_t k = 0; k < ap->n_tensors; k++) {
        NNP_TRY(nnp_onnx_tensor_from_proto(ap->tensors[k], base_dir, what, &a->tensor[k]));
        a->count = k + 1;
      }
      break;
    default:
      /* Graphs, sparse tensors and type protos: kept as a typed placeholder; no supported
       * op reads them, and ops that need them (If, Loop, Scan) are rejected as unsupported. */
      break;
  }
  return NNP_OK;
}

static nnp_status import_graph(nnp_graph *g, const Onnx__GraphProto *gp, const char *base_dir,
                               const nnp_load_options *opt) {
  if (gp->n_node > (size_t)opt->max_nodes)
    return nnp_error(NNP_ERR_LIMIT, "model has %zu nodes, over the limit of %d", gp->n_node, opt->max_nodes);
  if (gp->name && !(g->name = nnp_strdup(gp->name))) return oom();
  if (gp->n_sparse_initializer)
    return nnp_error(NNP_ERR_UNSUPPORTED, "model has %zu sparse initializers, which nnperf does not support",
                     gp->n_sparse_initializer);
  for (size_t i = 0; i < gp->n_initializer; i++) {
    const Onnx__TensorProto *tp = gp->initializer[i];
    if (!tp->name || !tp->name[0]) return nnp_error(NNP_ERR_FORMAT, "initializer #%zu has no name", i);
    int v;
    NNP_TRY(nnp_graph_value(g, tp->name, &v));
    nnp_value *val = &g->values[v];
    if (val->init) return nnp_error(NNP_ERR_FORMAT, "initializer '%s' is defined twice", tp->name);
    val->init = nnp_calloc(1, sizeof(nnp_tensor));
    if (!val->init) return oom();
    char what[300];
    snprintf(what, sizeof what, "initializer '%s'", tp->name);
    nnp_status s = nnp_onnx_tensor_from_proto(tp, base_dir, what, val->init);
    if (s != NNP_OK) {
      nnp_free(val->init);
      val->init = NULL;
      return s;
    }
    val->kind = NNP_VALUE_INITIALIZER;
    val->dtype = val->init->dtype;
    val->rank = val->init->rank;
    for (int d = 0; d < val->rank; d++) val->dims[d].value = val->init->dims[d];
  }
  for (size_t i = 0; i < gp->n_input; i++) {
    const Onnx__ValueInfoProto *vi = gp->input[i];
    if (!vi->name || !vi->name[0]) return nnp_error(NNP_ERR_FORMAT, "graph input #%zu has no name", i);
    int v;
    NNP_TRY(nnp_graph_value(g, vi->name, &v));
    /* Before IR version 4 initializers were also listed as inputs: they stay constants. */
    if (g->values[v].kind == NNP_VALUE_INITIALIZER) continue;
    if (g->values[v].kind == NNP_VALUE_INPUT)
      return nnp_error(NNP_ERR_FORMAT, "graph input '%s' is listed twice", vi->name);
    NNP_TRY(import_type(&g->values[v], vi->type));
    NNP_TRY(nnp_graph_add_input(g, v));
  }
  for (size_t i = 0; i < gp->n_value_info; i++) {
    const Onnx__ValueInfoProto *vi = gp->value_info[i];
    if (!vi->name || !vi->name[0]) continue;
    int v;
    NNP_TRY(nnp_graph_value(g, vi->name, &v));
    if (g->values[v].kind == NNP_VALUE_INTERMEDIATE) NNP_TRY(import_type(&g->values[v], vi->type));
  }
  for (size_t i = 0; i < gp->n_node; i++) {
    const Onnx__NodeProto *np = gp->node[i];
    if (!np->op_type || !np->op_type[0]) return nnp_error(NNP_ERR_FORMAT, "node #%zu has no op_type", i);
    if (np->n_input > 100000 || np->n_output > 100000)
      return nnp_error(NNP_ERR_LIMIT, "node #%zu has too many inputs or outputs", i);
    int stack_in[16], stack_out[16];
    int *ins = np->n_input <= 16 ? stack_in : nnp_malloc(sizeof(int) * np->n_input);
    int *outs = np->n_output <= 16 ? stack_out : nnp_malloc(sizeof(int) * np->n_output);
    nnp_status s = (ins && outs) ? NNP_OK : oom();
    for (size_t k = 0; s == NNP_OK && k < np->n_input; k++) {
      ins[k] = -1;
      if (np->input[k] && np->input[k][0]) s = nnp_graph_value(g, np->input[k], &ins[k]);
    }
    for (size_t k = 0; s == NNP_OK && k < np->n_output; k++) {
      outs[k] = -1;
      if (np->output[k] && np->output[k][0]) s = nnp_graph_value(g, np->output[k], &outs[k]);
    }
    char synth[96];
    const char *name = np->name;
    if (!name || !name[0]) { /* unnamed nodes get a stable name for messages */
      snprintf(synth, sizeof synth, "%.60s_%zu", np->op_type, i);
      name = synth;
    }
    int idx = -1;
    if (s == NNP_OK)
      s = nnp_graph_add_node(g, name, np->op_type, np->domain, (int)np->n_input, ins, (int)np->n_output, outs, &idx);
    if (ins != stack_in) nnp_free(ins);
    if (outs != stack_out) nnp_free(outs);
    NNP_TRY(s);
    nnp_node *n = &g->nodes[idx];
    if (g->opset == 0 && (!n->domain[0] || strcmp(n->domain, "ai.onnx") == 0))
      return nnp_error(NNP_ERR_FORMAT, "node '%s' (%s) is in the default ONNX domain, but the model imports no opset for it",
                       n->name, n->op_type);
    n->op = nnp_op_lookup(n->domain, n->op_type);
    if (np->n_attribute > NNP_MAX_ATTRS)
      return nnp_error(NNP_ERR_LIMIT, "node '%s' (%s) has %zu attributes, over the limit of %d", n->name, n->op_type,
                       np->n_attribute, NNP_MAX_ATTRS);
    for (size_t a = 0; a < np->n_attribute; a++) NNP_TRY(import_attr(n, np->attribute[a], base_dir));
  }
  for (size_t i = 0; i < gp->n_output; i++) {
    const Onnx__ValueInfoProto *vi = gp->output[i];
    if (!vi->name || !vi->name[0]) return nnp_error(NNP_ERR_FORMAT, "graph output #%zu has no name", i);
    int v;
    NNP_TRY(nnp_graph_value(g, vi->name, &v));
    if (g->values[v].is_output) return nnp_error(NNP_ERR_FORMAT, "graph output '%s' is listed twice", vi->name);
    if (g->values[v].kind == NNP_VALUE_INTERMEDIATE) NNP_TRY(import_type(&g->values[v], vi->type));
    NNP_TRY(nnp_graph_add_output(g, v));
  }
  if (g->n_outputs == 0) return nnp_error(NNP_ERR_FORMAT, "model graph has no outputs");
  return nnp_graph_toposort(g);
}

nnp_status nnp_onnx_load_buffer(const void *data, size_t size, const char *base_dir,
                                const nnp_load_options *opt, nnp_graph **out) {
  nnp_load_options defaults;
  if (!opt) {
    nnp_load_options_default(&defaults);
    opt = &defaults;
  }
  *out = NULL;
  if (size > opt->max_file_bytes)
    return nnp_error(NNP_ERR_LIMIT, "model is %zu bytes, over the %zu-byte limit", size, opt->max_file_bytes);
  if (size == 0) return nnp_error(NNP_ERR_FORMAT, "not an ONNX model: the file is empty");
  nnp_protobuf_alloc_reset();
  Onnx__ModelProto *mp = onnx__model_proto__unpack(&nnp_protobuf_allocator, size, data);
  if (!mp && nnp_protobuf_alloc_failed()) return nnp_error(NNP_ERR_NOMEM, "out of memory parsing the model");
  if (!mp) return nnp_error(NNP_ERR_FORMAT, "not a valid ONNX model: protobuf parse failed (truncated or corrupt file?)");
  nnp_graph *g = NULL;
  nnp_status s = nnp_graph_create(&g);
  if (s != NNP_OK) goto done;
  if (!mp->graph) {
    s = nnp_error(NNP_ERR_FORMAT, "not an ONNX model: it has no graph");
    goto done;
  }
  g->ir_version = mp->has_ir_version ? mp->ir_version : 0;
  g->opset = -1;
  for (size_t i = 0; i < mp->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *os = mp->opset_import[i];
    if (!os->domain || !os->domain[0] || strcmp(os->domain, "ai.onnx") == 0) g->opset = os->version;
  }
  if (g->opset < 0) {
    if (mp->n_opset_import == 0 && g->ir_version > 0 && g->ir_version < 3) {
      g->opset = 1; /* IR v1/v2 models predate opset_import */
    } else if (mp->n_opset_import > 0) {
      g->opset = 0; /* only other domains: a default-domain node is then an error */
    } else {
      s = nnp_error(NNP_ERR_FORMAT, "model declares no opset for the default ONNX domain");
      goto done;
    }
  }
  if (g->opset > NNP_MAX_OPSET) {
    s = nnp_error(NNP_ERR_UNSUPPORTED, "model uses opset %lld; nnperf supports opsets 1 to %d",
                  (long long)g->opset, NNP_MAX_OPSET);
    goto done;
  }
  if (mp->producer_name && !(g->producer = nnp_strdup(mp->producer_name))) {
    s = oom();
    goto done;
  }
  s = import_graph(g, mp->graph, base_dir, opt);
done:
  onnx__model_proto__free_unpacked(mp, &nnp_protobuf_allocator);
  if (s != NNP_OK) {
    nnp_graph_destroy(g);
    return s;
  }
  *out = g;
  return NNP_OK;
}

nnp_status nnp_onnx_load(const char *path, const nnp_load_options *opt, nnp_graph **out) {
  nnp_load_options defaults;
  if (!opt) {
    nnp_load_options_default(&defaults);
    opt = &defaults;
  }
  *out = NULL;
  void *buf = NULL;
  size_t n = 0;
  NNP_TRY(nnp_read_file(path, opt->max_file_bytes, &buf, &n));
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s", path);
  nnp_status s = nnp_onnx_load_buffer(buf, n, dirname(dir), opt, out);
  nnp_free(buf);
  if (s != NNP_OK) return nnp_error_context(s, "%s", path);
  return NNP_OK;
}
