/* Shape arithmetic and shape-only data movement: Shape, Size, Constant, ConstantOfShape,
 * Reshape, Flatten, Squeeze, Unsqueeze, Range.
 *
 * The movement ops only reinterpret the shape: their kernels copy bytes and so work for
 * every dtype nnp_dtype_size() knows. Inputs that decide an output shape (Reshape's shape,
 * Squeeze/Unsqueeze axes, ConstantOfShape's shape, Range's scalars) must be known when the
 * model is loaded, since the engine plans every buffer at compile time. */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "ops/op_util.h"

/* A byte copy from input 0 to output 0 (skipped when the engine aliased them). */
static nnp_status copy_in0(nnp_op_ctx *ctx) {
  const nnp_tensor *x = ctx->in[0];
  nnp_tensor *y = ctx->out[0];
  size_t nb = nnp_tensor_nbytes(x);
  if (nb && y->data != x->data) memcpy(y->data, x->data, nb);
  return NNP_OK;
}

static nnp_status check_copyable(const nnp_tensor *x, const char *what) {
  if (!nnp_dtype_size(x->dtype))
    return nnp_error(NNP_ERR_UNSUPPORTED, "%s of type %s is not supported", what, nnp_dtype_name(x->dtype));
  return NNP_OK;
}

/* Reads an axes list: attribute `axes` before `input_opset`, input 1 from then on.
 * *n = -1 when absent. */
static nnp_status read_axes(const nnp_op_ctx *ctx, int64_t input_opset, int64_t *axes, int *n) {
  *n = -1;
  if (ctx->opset < input_opset) {
    if (nnp_in(ctx, 1))
      return nnp_error(NNP_ERR_FORMAT, "axes is an attribute before opset %lld, not an input (model opset %lld)",
                       (long long)input_opset, (long long)ctx->opset);
    const int64_t *a;
    int c = nnp_attr_ints(ctx->node, "axes", &a);
    if (c > NNP_MAX_RANK)
      return nnp_error(NNP_ERR_LIMIT, "axes has %d values, at most %d allowed", c, NNP_MAX_RANK);
    for (int i = 0; i < c; i++) axes[i] = a[i];
    *n = c;
    return NNP_OK;
  }
  if (nnp_node_attr(ctx->node, "axes"))
    return nnp_error(NNP_ERR_FORMAT, "axes is an input since opset %lld, not an attribute (model opset %lld)",
                     (long long)input_opset, (long long)ctx->opset);
  if (nnp_in(ctx, 1)) NNP_TRY(nnp_input_ints(ctx, 1, axes, NNP_MAX_RANK, n));
  return NNP_OK;
}

/* ---- Shape ---------------------------------------------------------------------------- */

/* [start, end) of the dims Shape returns (opset 15 attributes; clamped like Slice). */
static void shape_range(const nnp_op_ctx *ctx, int r, int *start, int *end) {
  int64_t s = nnp_attr_int(ctx->node, "start", 0);
  int64_t e = nnp_attr_int(ctx->node, "end", r);
  if (s < 0) s += r;
  if (e < 0) e += r;
  s = s < 0 ? 0 : s > r ? r : s;
  e = e < 0 ? 0 : e > r ? r : e;
  *start = (int)s;
  *end = e > s ? (int)e : (int)s;
}

static nnp_status infer_shape(nnp_op_ctx *ctx) {
  int s, e;
  shape_range(ctx, ctx->in[0]->rank, &s, &e);
  int64_t len = e - s;
  nnp_set_shape(ctx->out[0], NNP_I64, 1, &len);
  return NNP_OK;
}

static nnp_status ref_shape(nnp_op_ctx *ctx) {
  const nnp_tensor *x = ctx->in[0];
  int s, e;
  shape_range(ctx, x->rank, &s, &e);
  int64_t *y = ctx->out[0]->data;
  for (int i = s; i < e; i++) y[i - s] = x->dims[i];
  return NNP_OK;
}

const nnp_op_info nnp_op_shape = {.name = "Shape", .min_inputs = 1, .max_inputs = 1,
                                  .min_outputs = 1, .max_outputs = 1, .flags = NNP_OPF_SHAPE_ONLY,
                                  .infer = infer_shape, .ref = ref_shape};

/* ---- Size ----------------------------------------------------------------------------- */

static nnp_status infer_size(nnp_op_ctx *ctx) {
  int64_t n;
  NNP_TRY(nnp_shape_numel(ctx->in[0]->rank, ctx->in[0]->dims, &n));
  nnp_set_shape(ctx->out[0], NNP_I64, 0, NULL);
  return NNP_OK;
}

static nnp_status ref_size(nnp_op_ctx *ctx) {
  *(int64_t *)ctx->out[0]->data = nnp_tensor_numel(ctx->in[0]);
  return NNP_OK;
}

const nnp_op_info nnp_op_size = {.name = "Size", .min_inputs = 1, .max_inputs = 1,
                                 .min_outputs = 1, .max_outputs = 1, .flags = NNP_OPF_SHAPE_ONLY,
                                 .infer = infer_size, .ref = ref_size};

/* ---- Constant ------------------------------------------------------------------------- */

/* The one value attribute of a Constant node. */
static nnp_status constant_attr(const nnp_op_ctx *ctx, const nnp_attr **out) {
  const nnp_node *n = ctx->node;
  const nnp_attr *found = NULL;
  for (int i = 0; i < n->n_attrs; i++) {
    const nnp_attr *a = &n->attrs[i];
    if (strcmp(a->name, "value") && strcmp(a->name, "value_float") && strcmp(a->name, "value_floats") &&
        strcmp(a->name, "value_int") && strcmp(a->name, "value_ints") && strcmp(a->name, "value_string") &&
        strcmp(a->name, "value_strings") && strcmp(a->name, "sparse_value"))
      continue;
    if (found)
      return nnp_error(NNP_ERR_FORMAT, "has both '%s' and '%s': exactly one value attribute is allowed",
                       found->name, a->name);
    found = a;
  }
  if (!found) return nnp_error(NNP_ERR_FORMAT, "has no value attribute");
  const char *nm = found->name;
  nnp_attr_type want = !strcmp(nm, "value") ? NNP_ATTR_TENSOR
                     : !strcmp(nm, "value_float") ? NNP_ATTR_FLOAT
                     : !strcmp(nm, "value_floats") ? NNP_ATTR_FLOATS
                     : !strcmp(nm, "value_int") ? NNP_ATTR_INT
                     : !strcmp(nm, "value_ints") ? NNP_ATTR_INTS : NNP_ATTR_UNDEFINED;
  if (want == NNP_ATTR_UNDEFINED)
    return nnp_error(NNP_ERR_UNSUPPORTED, "attribute '%s' is not supported (no string or sparse tensors)", nm);
  if (found->type != want)
    return nnp_error(NNP_ERR_FORMAT, "attribute '%s' has attribute type %d, expected %d", nm,
                     (int)found->type, (int)want);
  if (want == NNP_ATTR_TENSOR) {
    const nnp_tensor *t = found->tensor;
    if (!t) return nnp_error(NNP_ERR_FORMAT, "attribute 'value' holds no tensor");
    if (!nnp_dtype_size(t->dtype))
      return nnp_error(NNP_ERR_UNSUPPORTED, "attribute 'value' of type %s is not supported", nnp_dtype_name(t->dtype));
    size_t nb;
    NNP_TRY(nnp_shape_nbytes(t->dtype, t->rank, t->dims, &nb));
    if (nb && !t->data) return nnp_error(NNP_ERR_FORMAT, "attribute 'value' has no data");
  }
  if ((want == NNP_ATTR_FLOATS && found->count && !found->floats) ||
      (want == NNP_ATTR_INTS && found->count && !found->ints))
    return nnp_error(NNP_ERR_FORMAT, "attribute '%s' has no data", nm);
  *out = found;
  return NNP_OK;
}

static nnp_status infer_constant(nnp_op_ctx *ctx) {
  const nnp_attr *a;
  NNP_TRY(constant_attr(ctx, &a));
  nnp_tensor *y = ctx->out[0];
  int64_t count = (int64_t)a->count;
  switch (a->type) {
    case NNP_ATTR_TENSOR: nnp_copy_shape(y, a->tensor); break;
    case NNP_ATTR_FLOAT: nnp_set_shape(y, NNP_F32, 0, NULL); break;
    case NNP_ATTR_INT: nnp_set_shape(y, NNP_I64, 0, NULL); break;
    case NNP_ATTR_FLOATS: nnp_set_shape(y, NNP_F32, 1, &count); break;
    case NNP_ATTR_INTS: nnp_set_shape(y, NNP_I64, 1, &count); break;
    default: return nnp_error(NNP_ERR_INTERNAL, "unexpected constant attribute type %d", (int)a->type);
  }
  return NNP_OK;
}

static nnp_status ref_constant(nnp_op_ctx *ctx) {
  const nnp_attr *a;
  NNP_TRY(constant_attr(ctx, &a));
  nnp_tensor *y = ctx->out[0];
  switch (a->type) {
    case NNP_ATTR_TENSOR: {
      size_t nb = nnp_tensor_nbytes(a->tensor);
      if (nb) memcpy(y->data, a->tensor->data, nb);
      break;
    }
    case NNP_ATTR_FLOAT: *(float *)y->data = a->f; break;
    case NNP_ATTR_INT: *(int64_t *)y->data = a->i; break;
    case NNP_ATTR_FLOATS: if (a->count) memcpy(y->data, a->floats, a->count * sizeof(float)); break;
    case NNP_ATTR_INTS: if (a->count) memcpy(y->data, a->ints, a->count * sizeof(int64_t)); break;
    default: return nnp_error(NNP_ERR_INTERNAL, "unexpected constant attribute type %d", (int)a->type);
  }
  return NNP_OK;
}

const nnp_op_info nnp_op_constant = {.name = "Constant", .min_inputs = 0, .max_inputs = 0,
                                     .min_outputs = 1, .max_outputs = 1,
                                     .infer = infer_constant, .ref = ref_constant};

/* ---- ConstantOfShape ------------------------------------------------------------------ */

/* The fill value: a one-element tensor attribute, float32 0 when absent. */
static nnp_status cos_value(const nnp_op_ctx *ctx, nnp_dtype *dt, const void **bytes) {
  static const float zero = 0.0f;
  const nnp_attr *a = nnp_node_attr(ctx->node, "value");
  if (!a) {
    *dt = NNP_F32;
    *bytes = &zero;
    return NNP_OK;
  }
  if (a->type != NNP_ATTR_TENSOR || !a->tensor)
    return nnp_error(NNP_ERR_FORMAT, "attribute 'value' must be a tensor");
  const nnp_tensor *t = a->tensor;
  if (!nnp_dtype_size(t->dtype))
    return nnp_error(NNP_ERR_UNSUPPORTED, "attribute 'value' of type %s is not supported", nnp_dtype_name(t->dtype));
  int64_t n;
  NNP_TRY(nnp_shape_numel(t->rank, t->dims, &n));
  if (n != 1) return nnp_error(NNP_ERR_SHAPE, "attribute 'value' must hold one element, not %lld", (long long)n);
  if (!t->data) return nnp_error(NNP_ERR_FORMAT, "attribute 'value' has no data");
  *dt = t->dtype;
  *bytes = t->data;
  return NNP_OK;
}

static nnp_status infer_constant_of_shape(nnp_op_ctx *ctx) {
  nnp_dtype dt = NNP_F32;
  const void *v = NULL;
  NNP_TRY(cos_value(ctx, &dt, &v));
  if (ctx->in[0]->rank != 1)
    return nnp_error(NNP_ERR_SHAPE, "input 0 (shape) must be 1-D, not rank %d", ctx->in[0]->rank);
  int64_t dims[NNP_MAX_RANK];
  int r;
  NNP_TRY(nnp_input_ints(ctx, 0, dims, NNP_MAX_RANK, &r));
  for (int i = 0; i < r; i++)
    if (dims[i] < 0)
      return nnp_error(NNP_ERR_SHAPE, "input 0 (shape) has negative dimension %lld at %d", (long long)dims[i], i);
  size_t nb;
  NNP_TRY(nnp_shape_nbytes(dt, r, dims, &nb));
  nnp_set_shape(ctx->out[0], dt, r, dims);
  return NNP_OK;
}

static nnp_status ref_constant_of_shape(nnp_op_ctx *ctx) {
  nnp_dtype dt = NNP_F32;
  const void *v = NULL;
  NNP_TRY(cos_value(ctx, &dt, &v));
  nnp_tensor *y = ctx->out[0];
  const size_t es = nnp_dtype_size(dt);
  const int64_t n = nnp_tensor_numel(y);
  unsigned char *p = y->data;
  /* Fill by doubling the already written prefix: log2(n) memcpy calls. */
  if (n == 0) return NNP_OK;
  memcpy(p, v, es);
  size_t done = es, total = (size_t)n * es;
  while (done < total) {
    size_t c = done < total - done ? done : total - done;
    memcpy(p + done, p, c);
    done += c;
  }
  return NNP_OK;
}

const nnp_op_info nnp_op_constant_of_shape = {.name = "ConstantOfShape", .min_inputs = 1, .max_inputs = 1,
                                              .min_outputs = 1, .max_outputs = 1,
                                              .infer = infer_constant_of_shape, .ref = ref_constant_of_shape};

/* ---- Reshape -------------------------------------------------------------------------- */

static nnp_status infer_reshape(nnp_op_ctx *ctx) {
  const nnp_tensor *x = ctx->in[0];
  NNP_TRY(check_copyable(x, "input"));
  int64_t shape[NNP_MAX_RANK];
  int r;
  if (ctx->opset < 5) { /* opset 1..4: shape is an attribute */
    const int64_t *a;
    r = nnp_attr_ints(ctx->node, "shape", &a);
    if (r < 0) return nnp_error(NNP_ERR_FORMAT, "attribute 'shape' is missing");
    if (r > NNP_MAX_RANK) return nnp_error(NNP_ERR_LIMIT, "attribute 'shape' has rank %d, at most %d allowed", r, NNP_MAX_RANK);
    for (int i = 0; i < r; i++) shape[i] = a[i];
  } else {
    if (!nnp_in(ctx, 1)) return nnp_error(NNP_ERR_FORMAT, "input 1 (shape) is missing");
    if (nnp_in(ctx, 1)->rank != 1)
      return nnp_error(NNP_ERR_SHAPE, "input 1 (shape) must be 1-D, not rank %d", nnp_in(ctx, 1)->rank);
    NNP_TRY(nnp_input_ints(ctx, 1, shape, NNP_MAX_RANK, &r));
  }
  const bool allowzero = nnp_attr_int(ctx->node, "allowzero", 0) != 0;
  int64_t in_n;
  NNP_TRY(nnp_shape_numel(x->rank, x->dims, &in_n));
  int infer_at = -1;
  bool has_zero = false;
  int64_t known = 1;
  for (int i = 0; i < r; i++) {
    int64_t d = shape[i];
    if (d == -1) {
      if (infer_at >= 0) return nnp_error(NNP_ERR_SHAPE, "shape has more than one -1 (at %d and %d)", infer_at, i);
      infer_at = i;
      continue;
    }
    if (d < -1) return nnp_error(NNP_ERR_SHAPE, "shape value %lld at %d is invalid", (long long)d, i);
    if (d == 0) {
      has_zero = true;
      if (!allowzero) { /* 0 copies the input's dimension at the same index */
        if (i >= x->rank)
          return nnp_error(NNP_ERR_SHAPE, "shape value 0 at %d has no input dimension to copy (input rank %d)", i, x->rank);
        d = shape[i] = x->dims[i];
      }
    }
    if (d != 0 && known > INT64_MAX / d) return nnp_error(NNP_ERR_LIMIT, "shape element count overflows int64");
    known *= d;
  }
  if (infer_at >= 0) {
    if (allowzero && has_zero)
      return nnp_error(NNP_ERR_SHAPE, "shape has both 0 and -1 while allowzero=1");
    if (known == 0 || in_n % known != 0)
      return nnp_error(NNP_ERR_SHAPE, "cannot infer the -1 in the shape: %lld elements into blocks of %lld",
                       (long long)in_n, (long long)known);
    shape[infer_at] = in_n / known;
    known = in_n;
  }
  if (known != in_n) {
    char a[96], b[96];
    return nnp_error(NNP_ERR_SHAPE, "cannot reshape %s (%lld elements) to %s (%lld elements)",
                     nnp_shape_str(x->rank, x->dims, a, sizeof a), (long long)in_n,
                     nnp_shape_str(r, shape, b, sizeof b), (long long)known);
  }
  nnp_set_shape(ctx->out[0], x->dtype, r, shape);
  return NNP_OK;
}

const nnp_op_info nnp_op_reshape = {.name = "Reshape", .min_inputs = 1, .max_inputs = 2,
                                    .min_outputs = 1, .max_outputs = 1,
                                    .infer = infer_reshape, .ref = copy_in0};

/* ---- Flatten -------------------------------------------------------------------------- */

static nnp_status infer_flatten(nnp_op_ctx *ctx) {
  const nnp_tensor *x = ctx->in[0];
  NNP_TRY(check_copyable(x, "input"));
  const int r = x->rank;
  int64_t axis = nnp_attr_int(ctx->node, "axis", 1);
  int64_t a = axis < 0 ? axis + r : axis;
  if (a < 0 || a > r)
    return nnp_error(NNP_ERR_SHAPE, "axis %lld is out of range for rank %d", (long long)axis, r);
  int64_t d[2];
  NNP_TRY(nnp_shape_numel((int)a, x->dims, &d[0]));
  NNP_TRY(nnp_shape_numel(r - (int)a, x->dims + a, &d[1]));
  nnp_set_shape(ctx->out[0], x->dtype, 2, d);
  return NNP_OK;
}

const nnp_op_info nnp_op_flatten = {.name = "Flatten", .min_inputs = 1, .max_inputs = 1,
                                    .min_outputs = 1, .max_outputs = 1,
                                    .infer = infer_flatten, .ref = copy_in0};

/* ---- Squeeze -------------------------------------------------------------------------- */

static nnp_status infer_squeeze(nnp_op_ctx *ctx) {
  const nnp_tensor *x = ctx->in[0];
  NNP_TRY(check_copyable(x, "input"));
  const int r = x->rank;
  int64_t axes[NNP_MAX_RANK];
  int n;
  NNP_TRY(read_axes(ctx, 13, axes, &n));
  bool drop[NNP_MAX_RANK] = {false};
  if (n <= 0) { /* no (or empty) axes: squeeze every dimension of size 1 */
    for (int i = 0; i < r; i++) drop[i] = x->dims[i] == 1;
  } else {
    for (int i = 0; i < n; i++) {
      int a;
      if (r == 0) return nnp_error(NNP_ERR_SHAPE, "axes value %lld: a scalar has no axes", (long long)axes[i]);
      NNP_TRY(nnp_norm_axis(axes[i], r, "axes value", &a));
      if (drop[a]) return nnp_error(NNP_ERR_SHAPE, "axes lists axis %d twice", a);
      if (x->dims[a] != 1)
        return nnp_error(NNP_ERR_SHAPE, "cannot squeeze axis %d of size %lld", a, (long long)x->dims[a]);
      drop[a] = true;
    }
  }
  int64_t d[NNP_MAX_RANK];
  int orank = 0;
  for (int i = 0; i < r; i++)
    if (!drop[i]) d[orank++] = x->dims[i];
  nnp_set_shape(ctx->out[0], x->dtype, orank, d);
  return NNP_OK;
}

const nnp_op_info nnp_op_squeeze = {.name = "Squeeze", .min_inputs = 1, .max_inputs = 2,
                                    .min_outputs = 1, .max_outputs = 1,
                                    .infer = infer_squeeze, .ref = copy_in0};

/* ---- Unsqueeze ------------------------------------------------------------------------ */

static nnp_status infer_unsqueeze(nnp_op_ctx *ctx) {
  const nnp_tensor *x = ctx->in[0];
  NNP_TRY(check_copyable(x, "input"));
  int64_t axes[NNP_MAX_RANK];
  int n;
  NNP_TRY(read_axes(ctx, 13, axes, &n));
  if (n < 0)
    return nnp_error(NNP_ERR_FORMAT, ctx->opset < 13 ? "attribute 'axes' is missing" : "input 1 (axes) is missing");
  if (x->rank + n > NNP_MAX_RANK)
    return nnp_error(NNP_ERR_LIMIT, "output rank %d exceeds %d", x->rank + n, NNP_MAX_RANK);
  const int orank = x->rank + n;
  bool ins[NNP_MAX_RANK] = {false};
  for (int i = 0; i < n; i++) {
    int a; /* negative axes count from the end of the output */
    NNP_TRY(nnp_norm_axis(axes[i], orank, "axes value", &a));
    if (ins[a]) return nnp_error(NNP_ERR_SHAPE, "axes lists axis %d twice", a);
    ins[a] = true;
  }
  int64_t d[NNP_MAX_RANK];
  for (int i = 0, k = 0; i < orank; i++) d[i] = ins[i] ? 1 : x->dims[k++];
  nnp_set_shape(ctx->out[0], x->dtype, orank, d);
  return NNP_OK;
}

const nnp_op_info nnp_op_unsqueeze = {.name = "Unsqueeze", .min_inputs = 1, .max_inputs = 2,
                                      .min_outputs = 1, .max_outputs = 1,
                                      .infer = infer_unsqueeze, .ref = copy_in0};

/* ---- Range ---------------------------------------------------------------------------- */

/* Element count of Range(start, limit, delta) = max(ceil((limit - start) / delta), 0). */
static nnp_status range_count(const nnp_tensor *const *in, int64_t *count) {
  nnp_dtype dt = in[0]->dtype;
  if (nnp_dtype_is_int(dt)) {
    int64_t s = nnp_tensor_get_i64(in[0], 0), l = nnp_tensor_get_i64(in[1], 0), d = nnp_tensor_get_i64(in[2], 0);
    if (d == 0) return nnp_error(NNP_ERR_SHAPE, "delta must not be 0");
    /* Distances in uint64 so that extreme int64 bounds cannot overflow. */
    uint64_t dist, step;
    if (d > 0) {
      if (l <= s) { *count = 0; return NNP_OK; }
      dist = (uint64_t)l - (uint64_t)s;
      step = (uint64_t)d;
    } else {
      if (l >= s) { *count = 0; return NNP_OK; }
      dist = (uint64_t)s - (uint64_t)l;
      step = (uint64_t)0 - (uint64_t)d;
    }
    uint64_t c = dist / step + (dist % step != 0);
    if (c > (uint64_t)INT64_MAX) return nnp_error(NNP_ERR_LIMIT, "range has too many elements");
    *count = (int64_t)c;
    return NNP_OK;
  }
  double s = nnp_tensor_get_f64(in[0], 0), l = nnp_tensor_get_f64(in[1], 0), d = nnp_tensor_get_f64(in[2], 0);
  if (d == 0) return nnp_error(NNP_ERR_SHAPE, "delta must not be 0");
  double c = ceil((l - s) / d);
  if (isnan(c)) return nnp_error(NNP_ERR_SHAPE, "range of start %g, limit %g, delta %g is undefined", s, l, d);
  if (c <= 0) { *count = 0; return NNP_OK; }
  if (c > (double)((int64_t)1 << 40))
    return nnp_error(NNP_ERR_LIMIT, "range of start %g, limit %g, delta %g has too many elements", s, l, d);
  *count = (int64_t)c;
  return NNP_OK;
}

static nnp_status infer_range(nnp_op_ctx *ctx) {
  static const char *const names[3] = {"start", "limit", "delta"};
  const nnp_tensor *s = ctx->in[0];
  NNP_TRY(nnp_check_dtype(s, "input 0 (start)", NNP_F32, NNP_F64, NNP_I16, NNP_I32, NNP_I64, NNP_UNDEFINED));
  for (int i = 0; i < 3; i++) {
    const nnp_tensor *t = ctx->in[i];
    if (!t) return nnp_error(NNP_ERR_FORMAT, "input %d (%s) is missing", i, names[i]);
    if (t->dtype != s->dtype)
      return nnp_error(NNP_ERR_SHAPE, "input %d (%s) is %s but start is %s", i, names[i],
                       nnp_dtype_name(t->dtype), nnp_dtype_name(s->dtype));
    if (nnp_tensor_numel(t) != 1)
      return nnp_error(NNP_ERR_SHAPE, "input %d (%s) must be a scalar", i, names[i]);
    if (!t->data)
      return nnp_error(NNP_ERR_UNSUPPORTED,
                       "input %d (%s) must be known when the model is loaded: the output length depends on it", i, names[i]);
  }
  int64_t n;
  NNP_TRY(range_count(ctx->in, &n));
  size_t nb;
  NNP_TRY(nnp_shape_nbytes(s->dtype, 1, &n, &nb));
  nnp_set_shape(ctx->out[0], s->dtype, 1, &n);
  return NNP_OK;
}

static nnp_status ref_range(nnp_op_ctx *ctx) {
  nnp_tensor *y = ctx->out[0];
  const int64_t n = y->dims[0];
  if (nnp_dtype_is_int(y->dtype)) {
    /* Every value lies in [start, limit) so fits the type; only i*delta could overflow,
     * hence the modular uint64 arithmetic. */
    uint64_t s = (uint64_t)nnp_tensor_get_i64(ctx->in[0], 0), d = (uint64_t)nnp_tensor_get_i64(ctx->in[2], 0);
    switch (y->dtype) {
      case NNP_I64: for (int64_t i = 0; i < n; i++) ((int64_t *)y->data)[i] = (int64_t)(s + (uint64_t)i * d); break;
      case NNP_I32: for (int64_t i = 0; i < n; i++) ((int32_t *)y->data)[i] = (int32_t)(int64_t)(s + (uint64_t)i * d); break;
      case NNP_I16: for (int64_t i = 0; i < n; i++) ((int16_t *)y->data)[i] = (int16_t)(int64_t)(s + (uint64_t)i * d); break;
      default: return nnp_error(NNP_ERR_INTERNAL, "range kernel for %s missing", nnp_dtype_name(y->dtype));
    }
    return NNP_OK;
  }
  const double s = nnp_tensor_get_f64(ctx->in[0], 0), d = nnp_tensor_get_f64(ctx->in[2], 0);
  if (y->dtype == NNP_F32) {
    /* ONNX's reference accumulates in the input type: start + i * delta in float. */
    const float sf = (float)s, df = (float)d;
    for (int64_t i = 0; i < n; i++) ((float *)y->data)[i] = sf + (float)i * df;
  } else {
    for (int64_t i = 0; i < n; i++) ((double *)y->data)[i] = s + (double)i * d;
  }
  return NNP_OK;
}

const nnp_op_info nnp_op_range = {.name = "Range", .min_inputs = 3, .max_inputs = 3,
                                  .min_outputs = 1, .max_outputs = 1,
                                  .infer = infer_range, .ref = ref_range};
