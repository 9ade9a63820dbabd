/* Quantization ops: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,
 * QLinearConv, QLinearMatMul, ConvInteger, MatMulInteger (8-bit, ONNX default domain).
 *
 * These are the reference kernels: the oracle a fast INT8 kernel is tested against, and
 * what runs QDQ / QOperator models in the native engine until one exists. Formulas are
 * the ONNX spec's:
 *   quantize    q = saturate(round_half_even(x / scale) + zero_point)
 *   dequantize  x = (q - zero_point) * scale
 *   QLinear*    acc = sum (x - x_zp)(w - w_zp) [+ B];  y = saturate(round(acc * xs*ws/ys) + y_zp)
 * with x / scale and the requantize product computed in float32 (as ONNX's reference
 * implementation and ONNX Runtime do), and rounding by rintf under the default
 * round-to-nearest-even mode.
 *
 * The integer convolutions and matrix products run exactly by converting the
 * zero-point-shifted operands to float64 in scratch and calling the float64 Conv / MatMul
 * reference kernels with the node's own attributes: every product is an integer below
 * 2^16 and every sum stays far below 2^53, so float64 is exact, and the sliding-window
 * and broadcasting logic exists once (ops/conv.c, ops/matmul.c). The int32 results of
 * ConvInteger / MatMulInteger saturate instead of wrapping (a sum that large needs more
 * than 2^15 taps of extreme values). */
#include <math.h>
#include <string.h>

#include "ops/fast_ops.h"
#include "ops/op_util.h"

#define ALIGN64(n) (((n) + 63) & ~(size_t)63)

static bool is_q8(nnp_dtype t) { return t == NNP_U8 || t == NNP_I8; }

static float sat_round(float v, nnp_dtype t) {
  float r = rintf(v);
  float lo = t == NNP_U8 ? 0.0f : -128.0f, hi = t == NNP_U8 ? 255.0f : 127.0f;
  if (!(r >= lo)) r = lo; /* NaN saturates low, as a cast would be undefined */
  if (r > hi) r = hi;
  return r;
}

static void store_q(void *y, int64_t i, nnp_dtype t, float v) {
  if (t == NNP_U8) ((uint8_t *)y)[i] = (uint8_t)v;
  else ((int8_t *)y)[i] = (int8_t)v;
}

static int32_t load_int(const void *p, int64_t i, nnp_dtype t) {
  switch (t) {
    case NNP_U8: return ((const uint8_t *)p)[i];
    case NNP_I8: return ((const int8_t *)p)[i];
    case NNP_I32: return ((const int32_t *)p)[i];
    default: return 0;
  }
}

/* ---------------------------------------------------------------------------------
 * Per-tensor or per-axis parameters: a scale / zero-point pair either scalar (numel 1)
 * or 1-D with one value per index of `axis`. */

typedef struct qparam_layout {
  int64_t outer, channels, inner; /* x viewed as outer x channels x inner */
  bool per_axis;
} qparam_layout;

static nnp_status qparam_check(const nnp_op_ctx *ctx, const nnp_tensor *x, const nnp_tensor *scale,
                               const nnp_tensor *zp, int64_t axis_attr, qparam_layout *L) {
  memset(L, 0, sizeof *L);
  int64_t n = nnp_tensor_numel(scale);
  if (scale->rank > 1) return nnp_error(NNP_ERR_SHAPE, "scale must be a scalar or 1-D, not rank %d", scale->rank);
  if (zp && !nnp_tensor_same_shape(zp, scale) && !(nnp_tensor_numel(zp) == 1 && n == 1))
    return nnp_error(NNP_ERR_SHAPE, "zero point and scale have different shapes");
  L->outer = 1;
  L->inner = nnp_tensor_numel(x);
  L->channels = 1;
  if (scale->rank == 1 && !(n == 1 && x->rank == 0)) {
    int axis;
    NNP_TRY(nnp_norm_axis(axis_attr, x->rank, "axis", &axis));
    if (x->dims[axis] != n)
      return nnp_error(NNP_ERR_SHAPE, "per-axis scale has %lld values but axis %d of the input has %lld",
                       (long long)n, axis, (long long)x->dims[axis]);
    L->per_axis = true;
    L->channels = n;
    for (int i = 0; i < axis; i++) L->outer *= x->dims[i];
    L->inner = 1;
    for (int i = axis + 1; i < x->rank; i++) L->inner *= x->dims[i];
  }
  (void)ctx;
  return NNP_OK;
}

static nnp_status check_block_size(const nnp_op_ctx *ctx) {
  if (nnp_attr_int(ctx->node, "block_size", 0) != 0)
    return nnp_error(NNP_ERR_UNSUPPORTED, "blocked quantization (block_size) is not supported");
  return NNP_OK;
}

/* ---------------------------------------------------------------------------------
 * QuantizeLinear(x, y_scale, y_zero_point?) -> y; y's type is the zero point's (uint8
 * without one). x: float32 or int32. */

static nnp_status infer_quantize_linear(nnp_op_ctx *ctx) {
  const nnp_tensor *x = ctx->in[0], *s = nnp_in(ctx, 1), *zp = nnp_in(ctx, 2);
  if (!s || !nnp_out(ctx, 0)) return nnp_error(NNP_ERR_SHAPE, "inputs x and y_scale and output y are required");
  NNP_TRY(nnp_check_dtype(x, "input x", NNP_F32, NNP_I32, NNP_UNDEFINED));
  NNP_TRY(nnp_check_dtype(s, "y_scale", NNP_F32, NNP_UNDEFINED));
  NNP_TRY(check_block_size(ctx));
  nnp_dtype yt = NNP_U8;
  if (zp) {
    NNP_TRY(nnp_check_dtype(zp, "y_zero_point", NNP_U8, NNP_I8, NNP_UNDEFINED));
    yt = zp->dtype;
  }
  int64_t odt = nnp_attr_int(ctx->node, "output_dtype", 0);
  if (odt != 0 && odt != (int64_t)yt)
    return nnp_error(NNP_ERR_UNSUPPORTED, "output_dtype %lld is not supported (uint8/int8 from the zero point)",
                     (long long)odt);
  if (odt != 0) yt = (nnp_dtype)odt;
  qparam_layout L;
  NNP_TRY(qparam_check(ctx, x, s, zp, nnp_attr_int(ctx->node, "axis", 1), &L));
  nnp_set_shape(ctx->out[0], yt, x->rank, x->dims);
  return NNP_OK;
}

static nnp_status ref_quantize_linear(nnp_op_ctx *ctx) {
  const nnp_tensor *x = ctx->in[0], *s = ctx->in[1], *zp = nnp_in(ctx, 2);
  nnp_tensor *y = ctx->out[0];
  qparam_layout L;
  NNP_TRY(qparam_check(ctx, x, s, zp, nnp_attr_int(ctx->node, "axis", 1), &L));
  const float *sc = s->data;
  int64_t i = 0;
  for (int64_t o = 0; o < L.outer; o++)
    for (int64_t c = 0; c < L.channels; c++) {
      float scale = sc[c];
      float z = zp ? (float)load_int(zp->data, c, zp->dtype) : 0.0f;
      for (int64_t k = 0; k < L.inner; k++, i++) {
        float v = x->dtype == NNP_F32 ? ((const float *)x->data)[i] : (float)((const int32_t *)x->data)[i];
        store_q(y->data, i, y->dtype, sat_round(rintf(v / scale) + z, y->dtype));
      }
    }
  return NNP_OK;
}

const nnp_op_info nnp_op_quantize_linear = {.name = "QuantizeLinear", .min_inputs = 2, .max_inputs = 3,
                                            .min_outputs = 1, .max_outputs = 1,
                                            .infer = infer_quantize_linear, .ref = ref_quantize_linear,
                                            .prepare = nnp_prepare_quantize};

/* ---------------------------------------------------------------------------------
 * DequantizeLinear(x, x_scale, x_zero_point?) -> float32 y. x: uint8, int8, int32. */

static nnp_status infer_dequantize_linear(nnp_op_ctx *ctx) {
  const nnp_tensor *x = ctx->in[0], *s = nnp_in(ctx, 1), *zp = nnp_in(ctx, 2);
  if (!s || !nnp_out(ctx, 0)) return nnp_error(NNP_ERR_SHAPE, "inputs x and x_scale and output y are required");
  NNP_TRY(nnp_check_dtype(x, "input x", NNP_U8, NNP_I8, NNP_I32, NNP_UNDEFINED));
  NNP_TRY(nnp_check_dtype(s, "x_scale", NNP_F32, NNP_UNDEFINED));
  NNP_TRY(check_block_size(ctx));
  if (zp && zp->dtype != x->dtype)
    return nnp_error(NNP_ERR_SHAPE, "x_zero_point has type %s, x has %s", nnp_dtype_name(zp->dtype),
                     nnp_dtype_name(x->dtype));
  qparam_layout L;
  NNP_TRY(qparam_check(ctx, x, s, zp, nnp_attr_int(ctx->node, "axis", 1), &L));
  nnp_set_shape(ctx->out[0], NNP_F32, x->rank, x->dims);
  return NNP_OK;
}

static nnp_status ref_dequantize_linear(nnp_op_ctx *ctx) {
  const nnp_tensor *x = ctx->in[0], *s = ctx->in[1], *zp = nnp_in(ctx, 2);
  float *y = ctx->out[0]->data;
  qparam_layout L;
  NNP_TRY(qparam_check(ctx, x, s, zp, nnp_attr_int(ctx->node, "axis", 1), &L));
  const float *sc = s->data;
  int64_t i = 0;
  for (int64_t o = 0; o < L.outer; o++)
    for (int64_t c = 0; c < L.channels; c++) {
      int32_t z = zp ? load_int(zp->data, c, zp->dtype) : 0;
      for (int64_t k = 0; k < L.inner; k++, i++)
        y[i] = (float)((int64_t)load_int(x->data, i, x->dtype) - z) * sc[c];
    }
  return NNP_OK;
}

const nnp_op_info nnp_op_dequantize_linear = {.name = "DequantizeLinear", .min_inputs = 2, .max_inputs = 3,
                                              .min_outputs = 1, .max_outputs = 1,
                                              .infer = infer_dequantize_linear, .ref = ref_dequantize_linear,
                                              .prepare = nnp_prepare_quantize};

/* ---------------------------------------------------------------------------------
 * DynamicQuantizeLinear(x) -> y (uint8), y_scale, y_zero_point: the range of x widened
 * to include 0 maps onto [0, 255]. */

static nnp_status infer_dynamic_quantize_linear(nnp_op_ctx *ctx) {
  const nnp_tensor *x = ctx->in[0];
  NNP_TRY(nnp_check_dtype(x, "input x", NNP_F32, NNP_UNDEFINED));
  if (nnp_out(ctx, 0)) nnp_set_shape(ctx->out[0], NNP_U8, x->rank, x->dims);
  if (nnp_out(ctx, 1)) nnp_set_shape(ctx->out[1], NNP_F32, 0, NULL);
  if (nnp_out(ctx, 2)) nnp_set_shape(ctx->out[2], NNP_U8, 0, NULL);
  return NNP_OK;
}

static nnp_status ref_dynamic_quantize_linear(nnp_op_ctx *ctx) {
  const nnp_tensor *x = ctx->in[0];
  const float *xv = x->data;
  int64_t n = nnp_tensor_numel(x);
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < n; i++) {
    if (xv[i] < lo) lo = xv[i];
    if (xv[i] > hi) hi = xv[i];
  }
  float scale = (hi - lo) / 255.0f;
  float zpf = scale > 0 ? sat_round(0.0f - lo / scale, NNP_U8) : 0.0f;
  if (nnp_out(ctx, 0))
    for (int64_t i = 0; i < n; i++)
      store_q(ctx->out[0]->data, i, NNP_U8, scale > 0 ? sat_round(rintf(xv[i] / scale) + zpf, NNP_U8) : zpf);
  if (nnp_out(ctx, 1)) *(float *)ctx->out[1]->data = scale;
  if (nnp_out(ctx, 2)) *(uint8_t *)ctx->out[2]->data = (uint8_t)zpf;
  return NNP_OK;
}

const nnp_op_info nnp_op_dynamic_quantize_linear = {
    .name = "DynamicQuantizeLinear", .min_inputs = 1, .max_inputs = 1, .min_outputs = 1, .max_outputs = 3,
    .infer = infer_dynamic_quantize_linear, .ref = ref_dynamic_quantize_linear};

/* ---------------------------------------------------------------------------------
 * Integer Conv / MatMul through the float64 reference kernels. */

typedef enum int_kind { K_CONV, K_MATMUL } int_kind;

/* Which input slots hold what, per op. -1: the op has no such input. */
typedef struct int_op {
  int_kind kind;
  bool qlinear;   /* requantizes to 8 bits (QLinear*) or returns int32 (*Integer) */
  int a, a_zp, a_scale, b, b_zp, b_scale, y_scale, y_zp, bias;
} int_op;

static const int_op OP_QLINEAR_CONV = {K_CONV, true, 0, 2, 1, 3, 5, 4, 6, 7, 8};
static const int_op OP_QLINEAR_MATMUL = {K_MATMUL, true, 0, 2, 1, 3, 5, 4, 6, 7, -1};
static const int_op OP_CONV_INTEGER = {K_CONV, false, 0, 2, -1, 1, 3, -1, -1, -1, -1};
static const int_op OP_MATMUL_INTEGER = {K_MATMUL, false, 0, 2, -1, 1, 3, -1, -1, -1, -1};

static const nnp_tensor *slot(const nnp_op_ctx *ctx, int i) { return i < 0 ? NULL : nnp_in(ctx, i); }

/* Axis of A along which A's zero point (and scale) may vary, and B's likewise:
 * Conv: A per tensor only, W per output channel (axis 0).
 * MatMul: A per row (axis rank-2), B per column (axis rank-1). */
static int a_axis(const int_op *op, const nnp_tensor *a) {
  return op->kind == K_CONV ? -1 : (a->rank >= 2 ? a->rank - 2 : -1);
}
static int b_axis(const int_op *op, const nnp_tensor *b) {
  return op->kind == K_CONV ? 0 : b->rank - 1;
}

/* A zero point or scale of t: scalar, or 1-D along `axis` of t (axis -1: scalar only). */
static nnp_status check_param(const nnp_tensor *p, const char *what, const nnp_tensor *t, int axis,
                              nnp_dtype want) {
  if (!p) return NNP_OK;
  if (p->dtype != want)
    return nnp_error(NNP_ERR_SHAPE, "%s has type %s, expected %s", what, nnp_dtype_name(p->dtype), nnp_dtype_name(want));
  int64_t n = nnp_tensor_numel(p);
  if (n == 1 && p->rank <= 1) return NNP_OK;
  if (p->rank == 1 && axis >= 0 && axis < t->rank && t->dims[axis] == n) return NNP_OK;
  return nnp_error(NNP_ERR_UNSUPPORTED, "%s must be a scalar%s", what,
                   axis >= 0 ? " or 1-D with one value per channel/row/column" : "");
}

/* Index of t's element i along axis (0 for a scalar parameter). */
static int64_t param_index(const nnp_tensor *t, const nnp_tensor *p, int axis, int64_t i) {
  if (!p || nnp_tensor_numel(p) == 1) return 0;
  int64_t inner = 1;
  for (int d = axis + 1; d < t->rank; d++) inner *= t->dims[d];
  return (i / inner) % t->dims[axis];
}

static nnp_status int_check(const nnp_op_ctx *ctx, const int_op *op) {
  const nnp_tensor *a = slot(ctx, op->a), *b = slot(ctx, op->b);
  if (!a || !b || !nnp_out(ctx, 0)) return nnp_error(NNP_ERR_SHAPE, "missing required input or output");
  if (!is_q8(a->dtype) || !is_q8(b->dtype))
    return nnp_error(NNP_ERR_UNSUPPORTED, "inputs must be uint8 or int8, got %s and %s",
                     nnp_dtype_name(a->dtype), nnp_dtype_name(b->dtype));
  NNP_TRY(check_param(slot(ctx, op->a_zp), "A zero point", a, a_axis(op, a), a->dtype));
  NNP_TRY(check_param(slot(ctx, op->b_zp), "B zero point", b, b_axis(op, b), b->dtype));
  if (op->qlinear) {
    for (int i = 0; i < 8; i++)
      if (!nnp_in(ctx, i)) return nnp_error(NNP_ERR_SHAPE, "input %d is required", i);
    NNP_TRY(check_param(slot(ctx, op->a_scale), "A scale", a, a_axis(op, a), NNP_F32));
    NNP_TRY(check_param(slot(ctx, op->b_scale), "B scale", b, b_axis(op, b), NNP_F32));
    NNP_TRY(check_param(slot(ctx, op->y_scale), "y scale", a, -1, NNP_F32));
    const nnp_tensor *yzp = slot(ctx, op->y_zp);
    if (!is_q8(yzp->dtype)) return nnp_error(NNP_ERR_UNSUPPORTED, "y zero point must be uint8 or int8");
    NNP_TRY(check_param(yzp, "y zero point", a, -1, yzp->dtype));
    const nnp_tensor *bias = slot(ctx, op->bias);
    if (bias && (bias->dtype != NNP_I32 || bias->rank != 1 || bias->dims[0] != b->dims[0]))
      return nnp_error(NNP_ERR_SHAPE, "B (bias) must be int32 with one value per output channel");
  }
  return NNP_OK;
}

/* The float64 tensors the inner op sees (data in scratch; NULL data at infer time). */
typedef struct int_inner {
  nnp_tensor a, b, y;
  size_t off_a, off_b, off_y, off_s, total;
  size_t inner_scratch;
} int_inner;

static const nnp_op_info *inner_info(const int_op *op) {
  return op->kind == K_CONV ? &nnp_op_conv : &nnp_op_matmul;
}

/* Shapes of the inner op and the scratch layout [A f64][B f64][Y f64][inner scratch]. */
static nnp_status int_inner_plan(nnp_op_ctx *ctx, const int_op *op, int_inner *in) {
  memset(in, 0, sizeof *in);
  const nnp_tensor *a = slot(ctx, op->a), *b = slot(ctx, op->b);
  in->a = (nnp_tensor){NNP_F64, a->rank, {0}, NULL};
  memcpy(in->a.dims, a->dims, sizeof a->dims);
  in->b = (nnp_tensor){NNP_F64, b->rank, {0}, NULL};
  memcpy(in->b.dims, b->dims, sizeof b->dims);
  const nnp_tensor *ins[2] = {&in->a, &in->b};
  nnp_tensor *outs[1] = {&in->y};
  nnp_op_ctx c = {.node = ctx->node, .opset = ctx->opset, .n_in = 2, .in = ins, .n_out = 1, .out = outs};
  nnp_status s = inner_info(op)->infer(&c);
  if (s != NNP_OK) return s;
  in->inner_scratch = c.scratch_needed;
  size_t na = nnp_tensor_nbytes(&in->a), nb = nnp_tensor_nbytes(&in->b), ny = nnp_tensor_nbytes(&in->y);
  in->off_a = 0;
  in->off_b = ALIGN64(na);
  in->off_y = in->off_b + ALIGN64(nb);
  in->off_s = in->off_y + ALIGN64(ny);
  in->total = in->off_s + in->inner_scratch;
  return NNP_OK;
}

static nnp_status infer_int(nnp_op_ctx *ctx, const int_op *op) {
  NNP_TRY(int_check(ctx, op));
  int_inner in;
  NNP_TRY(int_inner_plan(ctx, op, &in));
  nnp_dtype yt = op->qlinear ? slot(ctx, op->y_zp)->dtype : NNP_I32;
  nnp_set_shape(ctx->out[0], yt, in.y.rank, in.y.dims);
  ctx->scratch_needed = in.total;
  return NNP_OK;
}

/* dst[i] = t[i] - zp[channel of i], as float64. */
static void shift_to_f64(const nnp_tensor *t, const nnp_tensor *zp, int axis, double *dst) {
  int64_t n = nnp_tensor_numel(t);
  for (int64_t i = 0; i < n; i++) {
    int32_t z = zp ? load_int(zp->data, param_index(t, zp, axis, i), zp->dtype) : 0;
    dst[i] = (double)(load_int(t->data, i, t->dtype) - z);
  }
}

static nnp_status ref_int(nnp_op_ctx *ctx, const int_op *op) {
  int_inner in;
  NNP_TRY(int_inner_plan(ctx, op, &in));
  if (ctx->scratch_size < in.total) return nnp_error(NNP_ERR_INTERNAL, "integer op scratch too small");
  char *base = ctx->scratch;
  const nnp_tensor *a = slot(ctx, op->a), *b = slot(ctx, op->b);
  in.a.data = base + in.off_a;
  in.b.data = base + in.off_b;
  in.y.data = base + in.off_y;
  shift_to_f64(a, slot(ctx, op->a_zp), a_axis(op, a), in.a.data);
  shift_to_f64(b, slot(ctx, op->b_zp), b_axis(op, b), in.b.data);
  const nnp_tensor *ins[2] = {&in.a, &in.b};
  nnp_tensor *outs[1] = {&in.y};
  nnp_op_ctx c = {.node = ctx->node, .opset = ctx->opset, .n_in = 2, .in = ins, .n_out = 1, .out = outs,
                  .scratch = base + in.off_s, .scratch_size = in.inner_scratch};
  NNP_TRY(inner_info(op)->ref(&c));
  const double *acc = in.y.data;
  nnp_tensor *y = ctx->out[0];
  int64_t n = nnp_tensor_numel(y);
  if (!op->qlinear) {
    int32_t *yi = y->data;
    for (int64_t i = 0; i < n; i++) {
      double v = acc[i];
      yi[i] = v > 2147483647.0 ? INT32_MAX : v < -2147483648.0 ? INT32_MIN : (int32_t)v;
    }
    return NNP_OK;
  }
  const nnp_tensor *as = slot(ctx, op->a_scale), *bs = slot(ctx, op->b_scale), *ys = slot(ctx, op->y_scale);
  const nnp_tensor *yzp = slot(ctx, op->y_zp), *bias = slot(ctx, op->bias);
  const float *asv = as->data, *bsv = bs->data;
  float ysv = *(const float *)ys->data, z = (float)load_int(yzp->data, 0, yzp->dtype);
  /* Output element i: channel m (Conv: axis 1 of Y), row r and column c (MatMul). */
  int64_t inner = 1;
  if (op->kind == K_CONV)
    for (int d = 2; d < y->rank; d++) inner *= y->dims[d];
  int64_t ncols = y->rank >= 1 ? y->dims[y->rank - 1] : 1, nrows = y->rank >= 2 ? y->dims[y->rank - 2] : 1;
  bool a_per_row = nnp_tensor_numel(as) > 1, b_per = nnp_tensor_numel(bs) > 1;
  /* nnperf_clamp [qmin, qmax]: a Relu / Clip the fuse-qdq pass folded into the output
   * range (never in imported models: it is nnperf's own attribute) */
  const int64_t *cl = NULL;
  bool clamp = nnp_attr_ints(ctx->node, "nnperf_clamp", &cl) == 2;
  for (int64_t i = 0; i < n; i++) {
    float sa, sb;
    double v = acc[i];
    if (op->kind == K_CONV) {
      int64_t m = (i / inner) % y->dims[1];
      sa = asv[0];
      sb = bsv[b_per ? m : 0];
      if (bias) v += ((const int32_t *)bias->data)[m];
    } else {
      int64_t col = i % ncols, row = (i / ncols) % nrows;
      sa = asv[a_per_row ? row : 0];
      sb = bsv[b_per ? col : 0];
    }
    float mult = sa * sb / ysv;
    float r = sat_round(rintf((float)v * mult) + z, yzp->dtype);
    if (clamp) r = r < (float)cl[0] ? (float)cl[0] : r > (float)cl[1] ? (float)cl[1] : r;
    store_q(y->data, i, yzp->dtype, r);
  }
  return NNP_OK;
}

#define DEFINE_INT_OP_FAST(sym, NAME, OPDESC, MIN_IN, MAX_IN, PREP)                              \
  static nnp_status infer_##sym(nnp_op_ctx *ctx) { return infer_int(ctx, &OPDESC); }              \
  static nnp_status ref_##sym(nnp_op_ctx *ctx) { return ref_int(ctx, &OPDESC); }                  \
  const nnp_op_info nnp_op_##sym = {.name = NAME, .min_inputs = MIN_IN, .max_inputs = MAX_IN,       \
                                    .min_outputs = 1, .max_outputs = 1, .infer = infer_##sym,      \
                                    .ref = ref_##sym, .prepare = PREP};
#define DEFINE_INT_OP(sym, NAME, OPDESC, MIN_IN, MAX_IN) DEFINE_INT_OP_FAST(sym, NAME, OPDESC, MIN_IN, MAX_IN, NULL)

DEFINE_INT_OP_FAST(qlinear_conv, "QLinearConv", OP_QLINEAR_CONV, 8, 9, nnp_prepare_qlinear_conv)
DEFINE_INT_OP(qlinear_matmul, "QLinearMatMul", OP_QLINEAR_MATMUL, 8, 8)
DEFINE_INT_OP(conv_integer, "ConvInteger", OP_CONV_INTEGER, 2, 4)
DEFINE_INT_OP(matmul_integer, "MatMulInteger", OP_MATMUL_INTEGER, 2, 4)
