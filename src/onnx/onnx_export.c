/* nnp_graph -> ModelProto -> file.
 *
 * The protobuf-c message tree is built from structs allocated in a pool (every block is
 * recorded and freed together at the end), so error paths never have to walk a half-built
 * tree. Strings and tensor bytes are not copied: the messages point into the graph, which
 * outlives the pack call (protobuf-c's pack only reads). The one exception is tensor data
 * on a big-endian host, which is byte-swapped into pool memory because ONNX raw_data is
 * little-endian. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nnperf/alloc.h"
#include "onnx/onnx_internal.h"
#include "util/atomic_file.h"

/* Protobuf messages (and so ONNX files without external data) cannot exceed 2 GiB. */
#define NNP_PROTOBUF_MAX_BYTES (((size_t)2 << 30) - 1)

typedef struct pool {
  void **blocks;
  size_t n, cap;
  nnp_status status; /* NNP_OK until the first failed allocation */
} pool;

/* Zeroed block owned by the pool; NULL (and pool->status set) on allocation failure. */
static void *pool_alloc(pool *pl, size_t count, size_t size) {
  if (pl->n == pl->cap) {
    size_t ncap = pl->cap ? pl->cap * 2 : 256;
    void **nb = nnp_realloc(pl->blocks, ncap * sizeof *nb);
    if (!nb) goto oom;
    pl->blocks = nb;
    pl->cap = ncap;
  }
  void *p = nnp_calloc(count ? count : 1, size ? size : 1);
  if (!p) goto oom;
  pl->blocks[pl->n++] = p;
  return p;
oom:
  pl->status = nnp_error(NNP_ERR_NOMEM, "out of memory while building the ONNX model to save");
  return NULL;
}

static void pool_free(pool *pl) {
  for (size_t i = 0; i < pl->n; i++) nnp_free(pl->blocks[i]);
  nnp_free(pl->blocks);
  pl->blocks = NULL;
  pl->n = pl->cap = 0;
}

/* Omitted optional inputs/outputs are written as "", as ONNX specifies. */
static char empty_string[1];

static int host_is_little_endian(void) {
  const uint16_t one = 1;
  return *(const uint8_t *)&one == 1;
}

/* TensorProto for t: dims, data_type and raw_data (little-endian). name may be NULL. */
static nnp_status tensor_proto(pool *pl, const nnp_tensor *t, char *name, const char *what,
                               Onnx__TensorProto **out) {
  size_t es = nnp_dtype_size(t->dtype);
  if (es == 0)
    return nnp_error(NNP_ERR_UNSUPPORTED, "%s has type %s, which nnp_onnx_save cannot write", what,
                     nnp_dtype_name(t->dtype));
  if (t->rank < 0 || t->rank > NNP_MAX_RANK)
    return nnp_error(NNP_ERR_INVALID, "%s has rank %d", what, t->rank);
  size_t nbytes;
  nnp_status s = nnp_shape_nbytes(t->dtype, t->rank, t->dims, &nbytes);
  if (s != NNP_OK) return nnp_error_context(s, "%s", what);
  if (nbytes && !t->data) return nnp_error(NNP_ERR_INVALID, "%s has no data", what);
  Onnx__TensorProto *tp = pool_alloc(pl, 1, sizeof *tp);
  int64_t *dims = pool_alloc(pl, (size_t)t->rank, sizeof *dims);
  if (!tp || !dims) return pl->status;
  onnx__tensor_proto__init(tp);
  tp->name = name;
  tp->n_dims = (size_t)t->rank;
  for (int d = 0; d < t->rank; d++) dims[d] = t->dims[d];
  tp->dims = dims;
  tp->has_data_type = 1;
  tp->data_type = (int32_t)t->dtype;
  tp->has_raw_data = 1;
  tp->raw_data.len = nbytes;
  tp->raw_data.data = t->data;
  if (es > 1 && nbytes && !host_is_little_endian()) {
    uint8_t *sw = pool_alloc(pl, nbytes, 1);
    if (!sw) return pl->status;
    const uint8_t *src = t->data;
    for (size_t i = 0; i < nbytes; i += es)
      for (size_t b = 0; b < es; b++) sw[i + b] = src[i + es - 1 - b];
    tp->raw_data.data = sw;
  }
  *out = tp;
  return NNP_OK;
}

/* ValueInfoProto for v: the tensor type when the dtype or the shape is known. Dimensions
 * keep their symbol (dim_param); unknown ones without a symbol stay unset. */
static nnp_status value_info(pool *pl, const nnp_value *v, Onnx__ValueInfoProto **out) {
  Onnx__ValueInfoProto *vi = pool_alloc(pl, 1, sizeof *vi);
  if (!vi) return pl->status;
  onnx__value_info_proto__init(vi);
  vi->name = v->name;
  *out = vi;
  if (v->dtype == NNP_UNDEFINED && v->rank < 0) return NNP_OK;
  if (v->rank > NNP_MAX_RANK) return nnp_error(NNP_ERR_INVALID, "value '%s' has rank %d", v->name, v->rank);
  Onnx__TypeProto *type = pool_alloc(pl, 1, sizeof *type);
  Onnx__TypeProto__Tensor *tt = pool_alloc(pl, 1, sizeof *tt);
  if (!type || !tt) return pl->status;
  onnx__type_proto__init(type);
  onnx__type_proto__tensor__init(tt);
  type->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  type->tensor_type = tt;
  if (v->dtype != NNP_UNDEFINED) {
    tt->has_elem_type = 1;
    tt->elem_type = (int32_t)v->dtype;
  }
  if (v->rank >= 0) {
    Onnx__TensorShapeProto *shape = pool_alloc(pl, 1, sizeof *shape);
    Onnx__TensorShapeProto__Dimension **dims = pool_alloc(pl, (size_t)v->rank, sizeof *dims);
    if (!shape || !dims) return pl->status;
    onnx__tensor_shape_proto__init(shape);
    for (int d = 0; d < v->rank; d++) {
      Onnx__TensorShapeProto__Dimension *dim = pool_alloc(pl, 1, sizeof *dim);
      if (!dim) return pl->status;
      onnx__tensor_shape_proto__dimension__init(dim);
      if (v->dims[d].value >= 0) {
        dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        dim->dim_value = v->dims[d].value;
      } else if (v->dims[d].symbol && v->dims[d].symbol[0]) {
        dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
        dim->dim_param = v->dims[d].symbol;
      }
      dims[d] = dim;
    }
    shape->n_dim = (size_t)v->rank;
    shape->dim = dims;
    tt->shape = shape;
  }
  vi->type = type;
  return NNP_OK;
}

static nnp_status attr_proto(pool *pl, const nnp_node *n, const nnp_attr *a, Onnx__AttributeProto **out) {
  Onnx__AttributeProto *ap = pool_alloc(pl, 1, sizeof *ap);
  if (!ap) return pl->status;
  onnx__attribute_proto__init(ap);
  ap->name = a->name;
  ap->has_type = 1;
  ap->type = (Onnx__AttributeProto__AttributeType)a->type;
  char what[300];
  snprintf(what, sizeof what, "attribute '%s' of node '%s'", a->name, n->name);
  switch (a->type) {
    case NNP_ATTR_FLOAT:
      ap->has_f = 1;
      ap->f = a->f;
      break;
    case NNP_ATTR_INT:
      ap->has_i = 1;
      ap->i = a->i;
      break;
    case NNP_ATTR_STRING:
      ap->has_s = 1;
      ap->s.len = a->s ? a->s_len : 0;
      ap->s.data = (uint8_t *)a->s;
      break;
    case NNP_ATTR_FLOATS:
      if (a->count && !a->floats) return nnp_error(NNP_ERR_INVALID, "%s has no floats", what);
      ap->n_floats = a->count;
      ap->floats = a->floats;
      break;
    case NNP_ATTR_INTS:
      if (a->count && !a->ints) return nnp_error(NNP_ERR_INVALID, "%s has no ints", what);
      ap->n_ints = a->count;
      ap->ints = a->ints;
      break;
    case NNP_ATTR_STRINGS: {
      if (a->count && !a->strings) return nnp_error(NNP_ERR_INVALID, "%s has no strings", what);
      ProtobufCBinaryData *ss = pool_alloc(pl, a->count, sizeof *ss);
      if (!ss) return pl->status;
      for (size_t k = 0; k < a->count; k++) {
        ss[k].len = a->strings[k] ? strlen(a->strings[k]) : 0;
        ss[k].data = (uint8_t *)a->strings[k];
      }
      ap->n_strings = a->count;
      ap->strings = ss;
      break;
    }
    case NNP_ATTR_TENSOR:
      if (!a->tensor) return nnp_error(NNP_ERR_INVALID, "%s is a tensor attribute without a tensor", what);
      NNP_TRY(tensor_proto(pl, a->tensor, NULL, what, &ap->t));
      break;
    case NNP_ATTR_TENSORS: {
      if (a->count && !a->tensor) return nnp_error(NNP_ERR_INVALID, "%s has no tensors", what);
      Onnx__TensorProto **ts = pool_alloc(pl, a->count, sizeof *ts);
      if (!ts) return pl->status;
      for (size_t k = 0; k < a->count; k++) NNP_TRY(tensor_proto(pl, &a->tensor[k], NULL, what, &ts[k]));
      ap->n_tensors = a->count;
      ap->tensors = ts;
      break;
    }
    default:
      /* The importer keeps graph, sparse-tensor and type-proto attributes only as typed
       * placeholders without their content, so there is nothing faithful to write. */
      return nnp_error(NNP_ERR_UNSUPPORTED, "%s has attribute type %d, which nnp_onnx_save cannot write",
                       what, (int)a->type);
  }
  *out = ap;
  return NNP_OK;
}

static nnp_status node_proto(pool *pl, const nnp_graph *g, const nnp_node *n, Onnx__NodeProto **out) {
  Onnx__NodeProto *np = pool_alloc(pl, 1, sizeof *np);
  char **ins = pool_alloc(pl, (size_t)n->n_inputs, sizeof *ins);
  char **outs = pool_alloc(pl, (size_t)n->n_outputs, sizeof *outs);
  Onnx__AttributeProto **attrs = pool_alloc(pl, (size_t)n->n_attrs, sizeof *attrs);
  if (!np || !ins || !outs || !attrs) return pl->status;
  onnx__node_proto__init(np);
  np->name = n->name && n->name[0] ? n->name : NULL;
  np->op_type = n->op_type;
  np->domain = n->domain && n->domain[0] ? n->domain : NULL;
  for (int k = 0; k < n->n_inputs; k++) {
    int v = n->inputs[k];
    if (v >= g->n_values) return nnp_error(NNP_ERR_INVALID, "node '%s' input %d refers to value %d of %d", n->name, k, v, g->n_values);
    ins[k] = v >= 0 ? g->values[v].name : empty_string;
  }
  for (int k = 0; k < n->n_outputs; k++) {
    int v = n->outputs[k];
    if (v >= g->n_values) return nnp_error(NNP_ERR_INVALID, "node '%s' output %d refers to value %d of %d", n->name, k, v, g->n_values);
    outs[k] = v >= 0 ? g->values[v].name : empty_string;
  }
  np->n_input = (size_t)n->n_inputs;
  np->input = ins;
  np->n_output = (size_t)n->n_outputs;
  np->output = outs;
  for (int a = 0; a < n->n_attrs; a++) NNP_TRY(attr_proto(pl, n, &n->attrs[a], &attrs[a]));
  np->n_attribute = (size_t)n->n_attrs;
  np->attribute = attrs;
  *out = np;
  return NNP_OK;
}

/* The IR version that goes with an opset: 8 up to opset 18 (ONNX 1.13), 9 for 19-20,
 * 10 for 21. Checkers reject a model whose IR version is older than its opset. */
static int64_t ir_version_for(int64_t opset) {
  if (opset >= 21) return 10;
  if (opset >= 19) return 9;
  return 8;
}

/* opset_import: the default domain at g->opset, and version 1 of every other domain a
 * node uses (nnperf does not record those versions). */
static nnp_status opset_imports(pool *pl, const nnp_graph *g, Onnx__ModelProto *mp) {
  Onnx__OperatorSetIdProto **list = pool_alloc(pl, (size_t)g->n_nodes + 1, sizeof *list);
  if (!list) return pl->status;
  size_t n = 0;
  if (g->opset > 0) {
    Onnx__OperatorSetIdProto *os = pool_alloc(pl, 1, sizeof *os);
    if (!os) return pl->status;
    onnx__operator_set_id_proto__init(os);
    os->domain = empty_string;
    os->has_version = 1;
    os->version = g->opset;
    list[n++] = os;
  }
  for (int i = 0; i < g->n_nodes; i++) {
    char *d = g->nodes[i].domain;
    if (!d || !d[0] || strcmp(d, "ai.onnx") == 0) continue;
    bool seen = false;
    for (size_t k = 0; k < n && !seen; k++) seen = strcmp(list[k]->domain, d) == 0;
    if (seen) continue;
    Onnx__OperatorSetIdProto *os = pool_alloc(pl, 1, sizeof *os);
    if (!os) return pl->status;
    onnx__operator_set_id_proto__init(os);
    os->domain = d;
    os->has_version = 1;
    os->version = 1;
    list[n++] = os;
  }
  mp->n_opset_import = n;
  mp->opset_import = list;
  return NNP_OK;
}

static nnp_status build_model(pool *pl, const nnp_graph *g, Onnx__ModelProto *mp, Onnx__GraphProto *gp) {
  static char producer[] = "nnperf", default_name[] = "nnperf";
  onnx__model_proto__init(mp);
  onnx__graph_proto__init(gp);
  mp->has_ir_version = 1;
  mp->ir_version = ir_version_for(g->opset);
  mp->producer_name = producer;
  mp->graph = gp;
  NNP_TRY(opset_imports(pl, g, mp));
  gp->name = g->name && g->name[0] ? g->name : default_name;

  int n_init = 0, n_info = 0;
  for (int v = 0; v < g->n_values; v++) {
    const nnp_value *val = &g->values[v];
    if (val->kind == NNP_VALUE_INITIALIZER && val->init) n_init++;
    else if (val->kind == NNP_VALUE_INTERMEDIATE && !val->is_output && (val->dtype != NNP_UNDEFINED || val->rank >= 0))
      n_info++;
  }
  gp->initializer = pool_alloc(pl, (size_t)n_init, sizeof *gp->initializer);
  gp->value_info = pool_alloc(pl, (size_t)n_info, sizeof *gp->value_info);
  gp->input = pool_alloc(pl, (size_t)g->n_inputs, sizeof *gp->input);
  gp->output = pool_alloc(pl, (size_t)g->n_outputs, sizeof *gp->output);
  gp->node = pool_alloc(pl, (size_t)g->n_nodes, sizeof *gp->node);
  if (!gp->initializer || !gp->value_info || !gp->input || !gp->output || !gp->node) return pl->status;

  for (int v = 0; v < g->n_values; v++) {
    const nnp_value *val = &g->values[v];
    if (val->kind == NNP_VALUE_INITIALIZER && val->init) {
      char what[300];
      snprintf(what, sizeof what, "initializer '%s'", val->name);
      NNP_TRY(tensor_proto(pl, val->init, val->name, what, &gp->initializer[gp->n_initializer]));
      gp->n_initializer++;
    } else if (val->kind == NNP_VALUE_INTERMEDIATE && !val->is_output &&
               (val->dtype != NNP_UNDEFINED || val->rank >= 0)) {
      NNP_TRY(value_info(pl, val, &gp->value_info[gp->n_value_info]));
      gp->n_value_info++;
    }
  }
  for (int k = 0; k < g->n_inputs; k++) {
    int v = g->inputs[k];
    if (v < 0 || v >= g->n_values) return nnp_error(NNP_ERR_INVALID, "graph input %d refers to value %d", k, v);
    NNP_TRY(value_info(pl, &g->values[v], &gp->input[k]));
    gp->n_input++;
  }
  for (int k = 0; k < g->n_outputs; k++) {
    int v = g->outputs[k];
    if (v < 0 || v >= g->n_values) return nnp_error(NNP_ERR_INVALID, "graph output %d refers to value %d", k, v);
    NNP_TRY(value_info(pl, &g->values[v], &gp->output[k]));
    gp->n_output++;
  }
  for (int i = 0; i < g->n_nodes; i++) {
    nnp_status s = node_proto(pl, g, &g->nodes[i], &gp->node[i]);
    if (s != NNP_OK) return s;
    gp->n_node++;
  }
  return NNP_OK;
}

static nnp_status write_atomic(const char *path, const uint8_t *buf, size_t n) {
  nnp_atomic_file af;
  NNP_TRY(nnp_atomic_open(&af, path));
  if (n && fwrite(buf, 1, n, af.f) != n) {
    nnp_status s = nnp_error(NNP_ERR_IO, "cannot write '%s': %s", af.tmp, strerror(errno));
    nnp_atomic_abort(&af);
    return s;
  }
  return nnp_atomic_commit(&af);
}

nnp_status nnp_onnx_save(const nnp_graph *g, const char *path) {
  if (!g) return nnp_error(NNP_ERR_INVALID, "nnp_onnx_save: no graph given");
  if (!path || !path[0]) return nnp_error(NNP_ERR_INVALID, "nnp_onnx_save: no output path given");
  pool pl = {0};
  Onnx__ModelProto mp;
  Onnx__GraphProto gp;
  uint8_t *buf = NULL;
  nnp_status s = build_model(&pl, g, &mp, &gp);
  if (s != NNP_OK) goto done;
  size_t size = onnx__model_proto__get_packed_size(&mp);
  if (size > NNP_PROTOBUF_MAX_BYTES) {
    s = nnp_error(NNP_ERR_LIMIT, "model is %zu bytes serialized, over protobuf's 2 GiB limit "
                  "(nnp_onnx_save writes every tensor inline)", size);
    goto done;
  }
  buf = nnp_malloc(size);
  if (!buf) {
    s = nnp_error(NNP_ERR_NOMEM, "cannot allocate %zu bytes to serialize the model", size);
    goto done;
  }
  size_t packed = onnx__model_proto__pack(&mp, buf);
  if (packed != size) {
    s = nnp_error(NNP_ERR_INTERNAL, "protobuf pack wrote %zu bytes, expected %zu", packed, size);
    goto done;
  }
  s = write_atomic(path, buf, size);
done:
  nnp_free(buf);
  pool_free(&pl);
  if (s != NNP_OK) return nnp_error_context(s, "saving '%s'", path);
  return NNP_OK;
}
