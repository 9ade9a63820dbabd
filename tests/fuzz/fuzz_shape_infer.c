/* libFuzzer target: shape inference alone, one op at a time.
 *
 * fuzz_onnx_load spends most of its executions in the protobuf parser; an op's infer()
 * is reached only by inputs that survive parsing. This target skips the parser: it
 * decodes the bytes into a one-node graph directly (op, opset, inputs with fuzzed dtypes,
 * ranks and small dims, some of them initializers with fuzzed small values, and
 * attributes with names the ops really read and fuzzed types and values), then runs
 * toposort, shape inference + compile, and one inference. Whatever the bytes, each step
 * must succeed or fail with a status: never crash, overflow, read out of bounds or leak.
 *
 * Byte layout (each read wraps to 0 when the input is exhausted, so every prefix of a
 * valid input is also valid):
 *   op, opset, n_inputs, { kind, dtype, rank, dims..., [values...] } per input,
 *   n_attrs, { name, type, count, values... } per attr, n_outputs.
 * Dims are 0..5 and values small (-3..12, a few special floats), so a run is cheap;
 * ops that make outputs from values (Tile, Expand, ConstantOfShape, Range, Resize) are
 * bounded by the activation guard below. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnperf/alloc.h"
#include "nnperf/engine.h"
#include "nnperf/ir.h"
#include "ops/op.h"

#define FUZZ_MAX_ACTIVATION_BYTES ((size_t)16 << 20)
#define FUZZ_MAX_INPUTS 6
#define FUZZ_MAX_ATTRS 6

const char *__asan_default_options(void);
const char *__asan_default_options(void) {
  return "allocator_may_return_null=1:max_allocation_size_mb=256";
}

typedef struct reader {
  const uint8_t *p;
  size_t n;
} reader;

static uint8_t rd(reader *r) {
  if (r->n == 0) return 0;
  r->n--;
  return *r->p++;
}

/* Attribute names that some op reads (grep of src/ops), plus one no op knows. */
static const char *const k_attr_names[] = {
    "axis", "axes", "keepdims", "perm", "kernel_shape", "pads", "strides", "dilations", "group",
    "auto_pad", "ceil_mode", "count_include_pad", "alpha", "beta", "gamma", "transA", "transB",
    "epsilon", "to", "split", "num_outputs", "starts", "ends", "mode", "value", "value_float",
    "value_floats", "value_int", "value_ints", "noop_with_empty_axes", "select_last_index",
    "allowzero", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a",
    "exclude_outside", "extrapolation_value", "output_padding", "output_shape", "scales",
    "size", "bias", "min", "max", "approximate", "storage_order", "spatial", "training_mode",
    "broadcast", "start", "end", "keep_aspect_ratio_policy", "antialias", "unknown_attr"};
#define N_ATTR_NAMES (sizeof k_attr_names / sizeof k_attr_names[0])

/* String values the ops compare against (modes, pads, transforms). */
static const char *const k_strings[] = {
    "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", "constant", "reflect", "edge", "wrap",
    "nearest", "linear", "cubic", "bilinear", "half_pixel", "asymmetric", "align_corners",
    "pytorch_half_pixel", "tf_crop_and_resize", "round_prefer_floor", "floor", "ceil",
    "tanh", "none", "stretch", "not_larger", "", "garbage"};
#define N_STRINGS (sizeof k_strings / sizeof k_strings[0])

static const nnp_dtype k_dtypes[] = {NNP_F32, NNP_I64, NNP_F32, NNP_I32, NNP_BOOL, NNP_U8,
                                     NNP_F16, NNP_I8,  NNP_F64, NNP_STRING, NNP_UNDEFINED, NNP_BF16};
#define N_DTYPES (sizeof k_dtypes / sizeof k_dtypes[0])

static const float k_floats[] = {0.0f, 1.0f, -1.0f, 0.5f, 2.0f, 3.0f, 1e-5f, -0.0f, 1e30f, NAN, INFINITY, 0.25f};
#define N_FLOATS (sizeof k_floats / sizeof k_floats[0])

static int64_t small_int(reader *r) { return (int64_t)(rd(r) % 16) - 3; } /* -3..12 */

/* Fills a freshly allocated initializer with fuzzed small values. */
static void fill_values(reader *r, nnp_tensor *t) {
  int64_t n = nnp_tensor_numel(t);
  for (int64_t i = 0; i < n; i++) {
    uint8_t b = rd(r);
    if (t->dtype == NNP_F32 || t->dtype == NNP_F16 || t->dtype == NNP_F64 || t->dtype == NNP_BF16)
      nnp_tensor_set_f64(t, i, (double)k_floats[b % N_FLOATS]);
    else
      nnp_tensor_set_f64(t, i, (double)((int64_t)(b % 16) - 3));
  }
}

/* Adds graph input or initializer number k; returns its value index or -1 (omitted). */
static int add_input(reader *r, nnp_graph *g, int k, nnp_status *st) {
  uint8_t kind = rd(r) % 4; /* 0,1: graph input; 2: initializer; 3: omitted (optional) */
  if (kind == 3 && k > 0) return -1;
  char name[16];
  snprintf(name, sizeof name, "in%d", k);
  int v;
  if ((*st = nnp_graph_value(g, name, &v)) != NNP_OK) return -1;
  nnp_value *val = &g->values[v];
  val->dtype = k_dtypes[rd(r) % N_DTYPES];
  uint8_t rb = rd(r);
  val->rank = rb < 240 ? rb % 5 : (int)(rb % 9); /* mostly 0..4, sometimes up to 8 */
  for (int d = 0; d < val->rank; d++) val->dims[d].value = rd(r) % 6;
  if (kind == 2 && nnp_dtype_size(val->dtype) > 0) {
    nnp_tensor *t = nnp_calloc(1, sizeof *t);
    if (!t) {
      *st = NNP_ERR_NOMEM;
      return -1;
    }
    t->dtype = val->dtype;
    t->rank = val->rank;
    for (int d = 0; d < t->rank; d++) t->dims[d] = val->dims[d].value;
    if ((*st = nnp_tensor_alloc(t)) != NNP_OK) {
      nnp_free(t);
      return -1;
    }
    fill_values(r, t);
    val->kind = NNP_VALUE_INITIALIZER;
    val->init = t;
  } else {
    val->kind = NNP_VALUE_INPUT;
    if ((*st = nnp_graph_add_input(g, v)) != NNP_OK) return -1;
  }
  return v;
}

static nnp_status add_attr(reader *r, nnp_node *n) {
  nnp_attr *a = NULL;
  nnp_status st = nnp_node_add_attr(n, k_attr_names[rd(r) % N_ATTR_NAMES], &a);
  if (st != NNP_OK) return st;
  static const nnp_attr_type types[] = {NNP_ATTR_INT, NNP_ATTR_INTS, NNP_ATTR_FLOAT,
                                        NNP_ATTR_FLOATS, NNP_ATTR_STRING, NNP_ATTR_TENSOR, NNP_ATTR_INTS};
  a->type = types[rd(r) % (sizeof types / sizeof types[0])];
  size_t count = rd(r) % 9;
  switch (a->type) {
  case NNP_ATTR_INT: a->i = small_int(r); break;
  case NNP_ATTR_FLOAT: a->f = k_floats[rd(r) % N_FLOATS]; break;
  case NNP_ATTR_STRING: {
    const char *s = k_strings[rd(r) % N_STRINGS];
    if (!(a->s = nnp_strdup(s))) return NNP_ERR_NOMEM;
    a->s_len = strlen(s);
    break;
  }
  case NNP_ATTR_INTS:
    a->count = count;
    if (!(a->ints = nnp_calloc(count ? count : 1, sizeof *a->ints))) return NNP_ERR_NOMEM;
    for (size_t i = 0; i < count; i++) a->ints[i] = small_int(r);
    break;
  case NNP_ATTR_FLOATS:
    a->count = count;
    if (!(a->floats = nnp_calloc(count ? count : 1, sizeof *a->floats))) return NNP_ERR_NOMEM;
    for (size_t i = 0; i < count; i++) a->floats[i] = k_floats[rd(r) % N_FLOATS];
    break;
  case NNP_ATTR_TENSOR: { /* Constant's value / ConstantOfShape's value */
    nnp_tensor *t = nnp_calloc(1, sizeof *t);
    if (!t) return NNP_ERR_NOMEM;
    a->tensor = t;
    t->dtype = k_dtypes[rd(r) % N_DTYPES];
    if (nnp_dtype_size(t->dtype) == 0) t->dtype = NNP_F32;
    t->rank = (int)(count % 3);
    for (int d = 0; d < t->rank; d++) t->dims[d] = rd(r) % 4;
    if ((st = nnp_tensor_alloc(t)) != NNP_OK) return st;
    fill_values(r, t);
    break;
  }
  default: break;
  }
  return NNP_OK;
}

static nnp_status build(reader *r, nnp_graph *g) {
  int op = 1 + rd(r) % (NNP_OP_COUNT - 1);
  const nnp_op_info *info = nnp_op_get(op);
  if (!info) __builtin_trap(); /* every id in 1..COUNT-1 has a descriptor */
  uint8_t ob = rd(r);
  g->ir_version = 8;
  g->opset = ob < 250 ? 7 + ob % 13 : (int64_t)ob - 250 - 1; /* 7..19; rarely -1..4 */

  int n_in = info->min_inputs + rd(r) % 3 - 1; /* one fewer .. one more than the minimum */
  int max_in = (info->flags & NNP_OPF_VARIADIC) ? FUZZ_MAX_INPUTS : info->max_inputs;
  if (rd(r) & 1) n_in = info->min_inputs + rd(r) % (max_in - info->min_inputs + 2);
  if (n_in < 0) n_in = 0;
  if (n_in > FUZZ_MAX_INPUTS) n_in = FUZZ_MAX_INPUTS;
  int inputs[FUZZ_MAX_INPUTS];
  nnp_status st = NNP_OK;
  for (int k = 0; k < n_in; k++) {
    inputs[k] = add_input(r, g, k, &st);
    if (st != NNP_OK) return st;
  }

  int n_out = info->min_outputs + rd(r) % (info->max_outputs - info->min_outputs + 2);
  if (n_out > 4) n_out = 4;
  int outputs[4];
  for (int k = 0; k < n_out; k++) {
    char name[16];
    snprintf(name, sizeof name, "out%d", k);
    if ((st = nnp_graph_value(g, name, &outputs[k])) != NNP_OK) return st;
  }
  int node;
  if ((st = nnp_graph_add_node(g, "n0", info->name, "", n_in, inputs, n_out, outputs, &node)) != NNP_OK)
    return st;
  g->nodes[node].op = op; /* the importer's lookup, which nnp_graph_add_node leaves to its caller */
  int n_attrs = rd(r) % (FUZZ_MAX_ATTRS + 1);
  for (int k = 0; k < n_attrs; k++)
    if ((st = add_attr(r, &g->nodes[node])) != NNP_OK) return st;
  for (int k = 0; k < n_out; k++)
    if ((st = nnp_graph_add_output(g, outputs[k])) != NNP_OK) return st;
  return nnp_graph_toposort(g);
}

/* FUZZ_SHAPE_VERBOSE=1 prints how far each input got (to check that the seeds compile
 * and run: build-fuzz/tests/fuzz/fuzz_shape_infer with the seed files as arguments). */
static void say(const nnp_graph *g, const char *stage, nnp_status st) {
  static int verbose = -1;
  if (verbose < 0) verbose = getenv("FUZZ_SHAPE_VERBOSE") != NULL;
  if (!verbose) return;
  fprintf(stderr, "fuzz_shape_infer: %s %s: %s\n", g->n_nodes ? g->nodes[0].op_type : "?", stage,
          st == NNP_OK ? "ok" : nnp_last_error());
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  reader r = {data, size};
  nnp_graph *g = NULL;
  if (nnp_graph_create(&g) != NNP_OK) return 0;
  nnp_status st = build(&r, g);
  say(g, "build", st);
  if (st == NNP_OK) {
    nnp_plan_options opt;
    nnp_plan_options_default(&opt);
    nnp_plan *p = NULL;
    st = nnp_plan_compile(g, &opt, &p);
    say(g, "compile", st);
    if (st == NNP_OK) {
      if (nnp_plan_activation_bytes(p) < FUZZ_MAX_ACTIVATION_BYTES) say(g, "run", nnp_plan_run(p));
      nnp_plan_destroy(p);
    } else if (p) {
      __builtin_trap(); /* a failed compile must not hand out a plan */
    }
  }
  nnp_graph_destroy(g);
  return 0;
}
