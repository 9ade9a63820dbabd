/* Elementwise unary ops: math functions, activations, Clip, Not, Cast, Identity, Dropout.
 *
 * Every op here keeps the input's shape. float32 is the fast path: each float op is one
 * static inline scalar function of (x, params) applied by a tight loop that the compiler
 * can vectorise; float64 gets the same formula in double and float16 is computed in
 * float32 (load, compute, round back), which is what the ONNX reference does for the
 * transcendental ops in practice. Integer variants exist only where ONNX defines them
 * (Abs, Neg, Relu, Clip) and use exact integer arithmetic. */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "ops/fast_ops.h"
#include "ops/op_util.h"

/* Attribute values of one node, read once per call (never per element). Passed by value
 * so that the compiler knows the output stores cannot alias them. */
typedef struct unary_params {
  float alpha, beta, gamma;
} unary_params;

/* ---------------------------------------------------------------------------------- */
/* Scalar formulas                                                                    */
/* ---------------------------------------------------------------------------------- */

/* Each op NAME defines NAME_f (float) and NAME_d (double). */
static inline float abs_f(float x, unary_params p) { (void)p; return fabsf(x); }
static inline double abs_d(double x, unary_params p) { (void)p; return fabs(x); }
static inline float neg_f(float x, unary_params p) { (void)p; return -x; }
static inline double neg_d(double x, unary_params p) { (void)p; return -x; }
static inline float sqrt_f(float x, unary_params p) { (void)p; return sqrtf(x); }
static inline double sqrt_d(double x, unary_params p) { (void)p; return sqrt(x); }
static inline float exp_f(float x, unary_params p) { (void)p; return expf(x); }
static inline double exp_d(double x, unary_params p) { (void)p; return exp(x); }
static inline float log_f(float x, unary_params p) { (void)p; return logf(x); }
static inline double log_d(double x, unary_params p) { (void)p; return log(x); }
static inline float reciprocal_f(float x, unary_params p) { (void)p; return 1.0f / x; }
static inline double reciprocal_d(double x, unary_params p) { (void)p; return 1.0 / x; }
static inline float floor_f(float x, unary_params p) { (void)p; return floorf(x); }
static inline double floor_d(double x, unary_params p) { (void)p; return floor(x); }
static inline float ceil_f(float x, unary_params p) { (void)p; return ceilf(x); }
static inline double ceil_d(double x, unary_params p) { (void)p; return ceil(x); }
static inline float erf_f(float x, unary_params p) { (void)p; return erff(x); }
static inline double erf_d(double x, unary_params p) { (void)p; return erf(x); }
static inline float tanh_f(float x, unary_params p) { (void)p; return tanhf(x); }
static inline double tanh_d(double x, unary_params p) { (void)p; return tanh(x); }

/* Two-sided form so that exp() never overflows: for x < 0 use e^x / (1 + e^x). */
static inline float sigmoid_f(float x, unary_params p) {
  (void)p;
  if (x >= 0) return 1.0f / (1.0f + expf(-x));
  float e = expf(x);
  return e / (1.0f + e);
}
static inline double sigmoid_d(double x, unary_params p) {
  (void)p;
  if (x >= 0) return 1.0 / (1.0 + exp(-x));
  double e = exp(x);
  return e / (1.0 + e);
}

/* x > 0 ? x : 0, written so that NaN propagates (NaN > 0 is false, but x < 0 too). */
static inline float relu_f(float x, unary_params p) { (void)p; return x < 0 ? 0.0f : x; }
static inline double relu_d(double x, unary_params p) { (void)p; return x < 0 ? 0.0 : x; }
static inline float leaky_relu_f(float x, unary_params p) { return x < 0 ? p.alpha * x : x; }
static inline double leaky_relu_d(double x, unary_params p) { return x < 0 ? (double)p.alpha * x : x; }

static inline float clamp01_f(float v) { return v < 0 ? 0.0f : (v > 1 ? 1.0f : v); }
static inline double clamp01_d(double v) { return v < 0 ? 0.0 : (v > 1 ? 1.0 : v); }
static inline float hard_sigmoid_f(float x, unary_params p) { return clamp01_f(p.alpha * x + p.beta); }
static inline double hard_sigmoid_d(double x, unary_params p) {
  return clamp01_d((double)p.alpha * x + (double)p.beta);
}
/* HardSwish = x * HardSigmoid(x) with alpha = 1/6, beta = 0.5 (fixed by the spec). */
static inline float hard_swish_f(float x, unary_params p) {
  (void)p;
  return x * clamp01_f(x * (1.0f / 6.0f) + 0.5f);
}
static inline double hard_swish_d(double x, unary_params p) {
  (void)p;
  return x * clamp01_d(x / 6.0 + 0.5);
}

static inline float gelu_f(float x, unary_params p) {
  (void)p;
  return 0.5f * x * (1.0f + erff(x * 0.70710678118654752440f));
}
static inline double gelu_d(double x, unary_params p) {
  (void)p;
  return 0.5 * x * (1.0 + erf(x * 0.70710678118654752440));
}
/* approximate="tanh": 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). */
static inline float gelu_tanh_f(float x, unary_params p) {
  (void)p;
  return 0.5f * x * (1.0f + tanhf(0.79788456080286535588f * (x + 0.044715f * x * x * x)));
}
static inline double gelu_tanh_d(double x, unary_params p) {
  (void)p;
  return 0.5 * x * (1.0 + tanh(0.79788456080286535588 * (x + 0.044715 * x * x * x)));
}

/* expm1 keeps precision for small negative x, where exp(x) - 1 would cancel. */
static inline float elu_f(float x, unary_params p) { return x < 0 ? p.alpha * expm1f(x) : x; }
static inline double elu_d(double x, unary_params p) { return x < 0 ? (double)p.alpha * expm1(x) : x; }
static inline float selu_f(float x, unary_params p) {
  return p.gamma * (x <= 0 ? p.alpha * expm1f(x) : x);
}
static inline double selu_d(double x, unary_params p) {
  return (double)p.gamma * (x <= 0 ? (double)p.alpha * expm1(x) : x);
}
/* log(1 + e^x) without overflow: for x > 0 it is x + log1p(e^-x). */
static inline float softplus_f(float x, unary_params p) {
  (void)p;
  return x > 0 ? x + log1pf(expf(-x)) : log1pf(expf(x));
}
static inline double softplus_d(double x, unary_params p) {
  (void)p;
  return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

/* ---------------------------------------------------------------------------------- */
/* Loops over float tensors                                                           */
/* ---------------------------------------------------------------------------------- */

typedef struct float_kernels {
  void (*f32)(const float *x, float *y, int64_t n, unary_params p);
  void (*f64)(const double *x, double *y, int64_t n, unary_params p);
  void (*f16)(const uint16_t *x, uint16_t *y, int64_t n, unary_params p);
} float_kernels;

#define DEFINE_FLOAT_LOOPS(NAME)                                                        \
  static void NAME##_loop_f32(const float *x, float *y, int64_t n, unary_params p) {    \
    for (int64_t i = 0; i < n; i++) y[i] = NAME##_f(x[i], p);                           \
  }                                                                                     \
  static void NAME##_loop_f64(const double *x, double *y, int64_t n, unary_params p) {  \
    for (int64_t i = 0; i < n; i++) y[i] = NAME##_d(x[i], p);                           \
  }                                                                                     \
  static void NAME##_loop_f16(const uint16_t *x, uint16_t *y, int64_t n, unary_params p) { \
    for (int64_t i = 0; i < n; i++) y[i] = nnp_f32_to_f16(NAME##_f(nnp_f16_to_f32(x[i]), p)); \
  }                                                                                     \
  static const float_kernels NAME##_kernels = {NAME##_loop_f32, NAME##_loop_f64, NAME##_loop_f16};

DEFINE_FLOAT_LOOPS(abs)
DEFINE_FLOAT_LOOPS(neg)
DEFINE_FLOAT_LOOPS(sqrt)
DEFINE_FLOAT_LOOPS(exp)
DEFINE_FLOAT_LOOPS(log)
DEFINE_FLOAT_LOOPS(reciprocal)
DEFINE_FLOAT_LOOPS(floor)
DEFINE_FLOAT_LOOPS(ceil)
DEFINE_FLOAT_LOOPS(erf)
DEFINE_FLOAT_LOOPS(tanh)
DEFINE_FLOAT_LOOPS(sigmoid)
DEFINE_FLOAT_LOOPS(relu)
DEFINE_FLOAT_LOOPS(leaky_relu)
DEFINE_FLOAT_LOOPS(hard_sigmoid)
DEFINE_FLOAT_LOOPS(hard_swish)
DEFINE_FLOAT_LOOPS(gelu)
DEFINE_FLOAT_LOOPS(gelu_tanh)
DEFINE_FLOAT_LOOPS(elu)
DEFINE_FLOAT_LOOPS(selu)
DEFINE_FLOAT_LOOPS(softplus)

/* Runs a float kernel set over in[0] -> out[0]; infer() has checked the dtype. */
static nnp_status run_float(nnp_op_ctx *ctx, const float_kernels *k, unary_params p) {
  const nnp_tensor *x = ctx->in[0];
  nnp_tensor *y = ctx->out[0];
  int64_t n = nnp_tensor_numel(x);
  switch (x->dtype) {
    case NNP_F32: k->f32(x->data, y->data, n, p); return NNP_OK;
    case NNP_F64: k->f64(x->data, y->data, n, p); return NNP_OK;
    case NNP_F16: k->f16(x->data, y->data, n, p); return NNP_OK;
    default:
      return nnp_error(NNP_ERR_INTERNAL, "input of type %s reached the float kernel",
                       nnp_dtype_name(x->dtype));
  }
}

/* ---------------------------------------------------------------------------------- */
/* Integer loops (Abs, Neg, Relu)                                                     */
/* ---------------------------------------------------------------------------------- */

/* X(dtype, T, unsigned T, min, max) for every integer type. */
#define FOR_EACH_SIGNED_INT(X)                  \
  X(NNP_I8, int8_t, uint8_t, INT8_MIN, INT8_MAX)     \
  X(NNP_I16, int16_t, uint16_t, INT16_MIN, INT16_MAX) \
  X(NNP_I32, int32_t, uint32_t, INT32_MIN, INT32_MAX) \
  X(NNP_I64, int64_t, uint64_t, INT64_MIN, INT64_MAX)
#define FOR_EACH_UNSIGNED_INT(X)                \
  X(NNP_U8, uint8_t, uint8_t, 0, UINT8_MAX)          \
  X(NNP_U16, uint16_t, uint16_t, 0, UINT16_MAX)      \
  X(NNP_U32, uint32_t, uint32_t, 0, UINT32_MAX)      \
  X(NNP_U64, uint64_t, uint64_t, 0, UINT64_MAX)
#define FOR_EACH_INT(X) FOR_EACH_SIGNED_INT(X) FOR_EACH_UNSIGNED_INT(X)

/* Negation through the unsigned type so that INT_MIN wraps (as numpy does) instead of
 * overflowing, which is undefined behaviour in C. The conversion back to the signed type
 * is implementation-defined (modular on every compiler we target), not undefined. */
#define INT_NEG(T, U, v) ((T)(U)(0u - (uint64_t)(U)(v)))

typedef enum int_unop { INT_ABS, INT_NEG_OP, INT_RELU } int_unop;

static nnp_status run_int(nnp_op_ctx *ctx, int_unop op) {
  const nnp_tensor *x = ctx->in[0];
  nnp_tensor *y = ctx->out[0];
  int64_t n = nnp_tensor_numel(x);
  switch (x->dtype) {
#define INT_CASE(DT, T, U, MIN, MAX)                                                \
  case DT: {                                                                        \
    const T *xs = x->data;                                                          \
    T *ys = y->data;                                                                \
    if (op == INT_ABS)                                                              \
      for (int64_t i = 0; i < n; i++) ys[i] = xs[i] < 0 ? INT_NEG(T, U, xs[i]) : xs[i]; \
    else if (op == INT_NEG_OP)                                                      \
      for (int64_t i = 0; i < n; i++) ys[i] = INT_NEG(T, U, xs[i]);                 \
    else                                                                            \
      for (int64_t i = 0; i < n; i++) ys[i] = xs[i] < 0 ? (T)0 : xs[i];             \
    return NNP_OK;                                                                  \
  }
    FOR_EACH_SIGNED_INT(INT_CASE)
#undef INT_CASE
    case NNP_U8: case NNP_U16: case NNP_U32: case NNP_U64:
      /* Only Abs reaches here with unsigned input (infer rejects Neg/Relu): identity. */
      if (y->data != x->data) memcpy(y->data, x->data, nnp_tensor_nbytes(x));
      return NNP_OK;
    default:
      return nnp_error(NNP_ERR_INTERNAL, "input of type %s reached the integer kernel",
                       nnp_dtype_name(x->dtype));
  }
}

/* ---------------------------------------------------------------------------------- */
/* Shape inference                                                                    */
/* ---------------------------------------------------------------------------------- */

static bool is_signed_int(nnp_dtype dt) {
  return dt == NNP_I8 || dt == NNP_I16 || dt == NNP_I32 || dt == NNP_I64;
}

/* Output 0 = input 0's dtype and shape. */
static nnp_status infer_same(nnp_op_ctx *ctx) {
  const nnp_tensor *x = nnp_in(ctx, 0);
  if (!x) return nnp_error(NNP_ERR_SHAPE, "input 0 is missing");
  if (nnp_dtype_size(x->dtype) == 0)
    return nnp_error(NNP_ERR_UNSUPPORTED, "input of type %s is not supported",
                     nnp_dtype_name(x->dtype));
  nnp_copy_shape(ctx->out[0], x);
  return NNP_OK;
}

static nnp_status infer_float(nnp_op_ctx *ctx) {
  NNP_TRY(infer_same(ctx));
  if (!nnp_dtype_is_float(ctx->in[0]->dtype))
    return nnp_error(NNP_ERR_UNSUPPORTED, "input of type %s is not supported (float types only)",
                     nnp_dtype_name(ctx->in[0]->dtype));
  return NNP_OK;
}

/* Float types and signed integers (Neg, Relu). */
static nnp_status infer_float_or_signed(nnp_op_ctx *ctx) {
  NNP_TRY(infer_same(ctx));
  nnp_dtype dt = ctx->in[0]->dtype;
  if (!nnp_dtype_is_float(dt) && !is_signed_int(dt))
    return nnp_error(NNP_ERR_UNSUPPORTED,
                     "input of type %s is not supported (float or signed integer types only)",
                     nnp_dtype_name(dt));
  return NNP_OK;
}

/* Any numeric type (Abs, Clip). */
static nnp_status infer_numeric(nnp_op_ctx *ctx) {
  NNP_TRY(infer_same(ctx));
  nnp_dtype dt = ctx->in[0]->dtype;
  if (!nnp_dtype_is_float(dt) && !nnp_dtype_is_int(dt))
    return nnp_error(NNP_ERR_UNSUPPORTED, "input of type %s is not supported (numeric types only)",
                     nnp_dtype_name(dt));
  return NNP_OK;
}

/* ---------------------------------------------------------------------------------- */
/* Plain float ops                                                                    */
/* ---------------------------------------------------------------------------------- */

static const unary_params no_params = {0, 0, 0};

#define DEFINE_FLOAT_REF(NAME)                                   \
  static nnp_status ref_##NAME(nnp_op_ctx *ctx) {                \
    return run_float(ctx, &NAME##_kernels, no_params);           \
  }
DEFINE_FLOAT_REF(sqrt)
DEFINE_FLOAT_REF(exp)
DEFINE_FLOAT_REF(log)
DEFINE_FLOAT_REF(reciprocal)
DEFINE_FLOAT_REF(floor)
DEFINE_FLOAT_REF(ceil)
DEFINE_FLOAT_REF(erf)
DEFINE_FLOAT_REF(tanh)
DEFINE_FLOAT_REF(sigmoid)
DEFINE_FLOAT_REF(hard_swish)
DEFINE_FLOAT_REF(softplus)

static nnp_status ref_abs(nnp_op_ctx *ctx) {
  if (nnp_dtype_is_int(ctx->in[0]->dtype)) return run_int(ctx, INT_ABS);
  return run_float(ctx, &abs_kernels, no_params);
}
static nnp_status ref_neg(nnp_op_ctx *ctx) {
  if (nnp_dtype_is_int(ctx->in[0]->dtype)) return run_int(ctx, INT_NEG_OP);
  return run_float(ctx, &neg_kernels, no_params);
}
static nnp_status ref_relu(nnp_op_ctx *ctx) {
  if (nnp_dtype_is_int(ctx->in[0]->dtype)) return run_int(ctx, INT_RELU);
  return run_float(ctx, &relu_kernels, no_params);
}

/* ---------------------------------------------------------------------------------- */
/* Ops with float attributes                                                          */
/* ---------------------------------------------------------------------------------- */

static nnp_status ref_leaky_relu(nnp_op_ctx *ctx) {
  unary_params p = {.alpha = nnp_attr_float(ctx->node, "alpha", 0.01f)};
  return run_float(ctx, &leaky_relu_kernels, p);
}
static nnp_status ref_hard_sigmoid(nnp_op_ctx *ctx) {
  unary_params p = {.alpha = nnp_attr_float(ctx->node, "alpha", 0.2f),
                    .beta = nnp_attr_float(ctx->node, "beta", 0.5f)};
  return run_float(ctx, &hard_sigmoid_kernels, p);
}
static nnp_status ref_elu(nnp_op_ctx *ctx) {
  unary_params p = {.alpha = nnp_attr_float(ctx->node, "alpha", 1.0f)};
  return run_float(ctx, &elu_kernels, p);
}
/* Defaults are the float32 values the spec gives (1.67326319217681884765625, ...). */
static nnp_status ref_selu(nnp_op_ctx *ctx) {
  unary_params p = {.alpha = nnp_attr_float(ctx->node, "alpha", 1.67326319217681884765625f),
                    .gamma = nnp_attr_float(ctx->node, "gamma", 1.05070102214813232421875f)};
  return run_float(ctx, &selu_kernels, p);
}

/* Gelu entered the default domain in opset 20; older exporters emit it too (it ran in
 * com.microsoft before), so it is accepted at every opset. */
static nnp_status infer_gelu(nnp_op_ctx *ctx) {
  NNP_TRY(infer_float(ctx));
  const char *approx = nnp_attr_string(ctx->node, "approximate", "none");
  if (strcmp(approx, "none") != 0 && strcmp(approx, "tanh") != 0)
    return nnp_error(NNP_ERR_UNSUPPORTED, "attribute approximate='%s' is not supported (none, tanh)",
                     approx);
  return NNP_OK;
}
static nnp_status ref_gelu(nnp_op_ctx *ctx) {
  const char *approx = nnp_attr_string(ctx->node, "approximate", "none");
  return run_float(ctx, strcmp(approx, "tanh") == 0 ? &gelu_tanh_kernels : &gelu_kernels, no_params);
}

/* ---------------------------------------------------------------------------------- */
/* Clip                                                                               */
/* ---------------------------------------------------------------------------------- */

/* Before opset 11 the bounds are float attributes; from 11 they are optional scalar
 * inputs 1 and 2 of the input's type (either may be omitted, or given as ""). Bound
 * inputs may be run-time values: the kernel reads them, so they need not be constant. */
static nnp_status infer_clip(nnp_op_ctx *ctx) {
  NNP_TRY(infer_numeric(ctx));
  const nnp_tensor *x = ctx->in[0];
  if (ctx->opset < 11) {
    if (!nnp_dtype_is_float(x->dtype))
      return nnp_error(NNP_ERR_UNSUPPORTED, "input of type %s is not supported before opset 11",
                       nnp_dtype_name(x->dtype));
    if (ctx->n_in > 1)
      return nnp_error(NNP_ERR_FORMAT, "has %d inputs; before opset 11 min/max are attributes",
                       ctx->n_in);
    return NNP_OK;
  }
  for (int i = 1; i <= 2; i++) {
    const nnp_tensor *b = nnp_in(ctx, i);
    if (!b) continue;
    if (b->dtype != x->dtype)
      return nnp_error(NNP_ERR_SHAPE, "input %d (%s) is %s but input 0 is %s", i,
                       i == 1 ? "min" : "max", nnp_dtype_name(b->dtype), nnp_dtype_name(x->dtype));
    /* The spec says scalar; exporters also write shape [1]. */
    if (nnp_tensor_numel(b) != 1) {
      char buf[64];
      return nnp_error(NNP_ERR_SHAPE, "input %d (%s) must be a scalar, has shape %s", i,
                       i == 1 ? "min" : "max", nnp_shape_str(b->rank, b->dims, buf, sizeof buf));
    }
  }
  return NNP_OK;
}

/* Written as two compares so that a NaN input stays NaN (as numpy.clip does) and a
 * lower bound above the upper bound yields the upper bound everywhere (also numpy). */
#define CLIP_LOOP(T, xs, ys, n, lo, hi)            \
  for (int64_t i = 0; i < (n); i++) {              \
    T v_ = (xs)[i];                                \
    v_ = v_ < (lo) ? (lo) : v_;                    \
    (ys)[i] = v_ > (hi) ? (hi) : v_;               \
  }

static nnp_status ref_clip(nnp_op_ctx *ctx) {
  const nnp_tensor *x = ctx->in[0];
  nnp_tensor *y = ctx->out[0];
  int64_t n = nnp_tensor_numel(x);
  const nnp_tensor *tmin = ctx->opset >= 11 ? nnp_in(ctx, 1) : NULL;
  const nnp_tensor *tmax = ctx->opset >= 11 ? nnp_in(ctx, 2) : NULL;
  /* Before opset 11 the defaults are float's lowest/max; after it, no bound at all. */
  float amin = ctx->opset < 11 ? nnp_attr_float(ctx->node, "min", -FLT_MAX) : -INFINITY;
  float amax = ctx->opset < 11 ? nnp_attr_float(ctx->node, "max", FLT_MAX) : INFINITY;
  switch (x->dtype) {
    case NNP_F32: {
      float lo = tmin ? *(const float *)tmin->data : amin;
      float hi = tmax ? *(const float *)tmax->data : amax;
      const float *xs = x->data;
      float *ys = y->data;
      CLIP_LOOP(float, xs, ys, n, lo, hi);
      return NNP_OK;
    }
    case NNP_F64: {
      double lo = tmin ? *(const double *)tmin->data : (double)amin;
      double hi = tmax ? *(const double *)tmax->data : (double)amax;
      const double *xs = x->data;
      double *ys = y->data;
      CLIP_LOOP(double, xs, ys, n, lo, hi);
      return NNP_OK;
    }
    case NNP_F16: {
      uint16_t lo_h = tmin ? *(const uint16_t *)tmin->data : nnp_f32_to_f16(amin);
      uint16_t hi_h = tmax ? *(const uint16_t *)tmax->data : nnp_f32_to_f16(amax);
      float lo = nnp_f16_to_f32(lo_h), hi = nnp_f16_to_f32(hi_h);
      const uint16_t *xs = x->data;
      uint16_t *ys = y->data;
      /* Selects bit patterns rather than rounding results: every candidate is f16. */
      for (int64_t i = 0; i < n; i++) {
        float v = nnp_f16_to_f32(xs[i]);
        uint16_t r = xs[i];
        if (v < lo) { r = lo_h; v = lo; }
        ys[i] = v > hi ? hi_h : r;
      }
      return NNP_OK;
    }
#define CLIP_INT_CASE(DT, T, U, MIN, MAX)                            \
  case DT: {                                                         \
    T lo = tmin ? *(const T *)tmin->data : (T)(MIN);                 \
    T hi = tmax ? *(const T *)tmax->data : (T)(MAX);                 \
    const T *xs = x->data;                                           \
    T *ys = y->data;                                                 \
    CLIP_LOOP(T, xs, ys, n, lo, hi);                                 \
    return NNP_OK;                                                   \
  }
    FOR_EACH_INT(CLIP_INT_CASE)
#undef CLIP_INT_CASE
    default:
      return nnp_error(NNP_ERR_INTERNAL, "input of type %s reached the Clip kernel",
                       nnp_dtype_name(x->dtype));
  }
}

/* ---------------------------------------------------------------------------------- */
/* Not, Identity, Dropout                                                             */
/* ---------------------------------------------------------------------------------- */

static nnp_status infer_not(nnp_op_ctx *ctx) {
  NNP_TRY(infer_same(ctx));
  return nnp_check_dtype(ctx->in[0], "input", NNP_BOOL, NNP_UNDEFINED);
}
static nnp_status ref_not(nnp_op_ctx *ctx) {
  const uint8_t *x = ctx->in[0]->data;
  uint8_t *y = ctx->out[0]->data;
  int64_t n = nnp_tensor_numel(ctx->in[0]);
  for (int64_t i = 0; i < n; i++) y[i] = x[i] == 0;
  return NNP_OK;
}

/* Copies in[0] into out[0] unless the engine made them the same buffer. */
static void copy_input(nnp_op_ctx *ctx) {
  const nnp_tensor *x = ctx->in[0];
  nnp_tensor *y = ctx->out[0];
  if (y->data != x->data) memcpy(y->data, x->data, nnp_tensor_nbytes(x));
}

static nnp_status ref_identity(nnp_op_ctx *ctx) {
  copy_input(ctx);
  return NNP_OK;
}

/* Inference-mode Dropout: output = input, mask = all kept.
 *  - opset < 7: attribute is_test selects inference; nnperf only does inference, so a
 *    model exported with is_test=0 is run as if is_test=1 (every runtime does this).
 *  - opset 7..11: ratio is an attribute; the mask has the input's type before opset 10
 *    and is bool from 10.
 *  - opset >= 12: ratio and training_mode are optional inputs 1 and 2. training_mode
 *    must be known at load time and false: training-mode dropout is random and is not
 *    what an inference benchmark should measure. Training mode with a known ratio of 0
 *    is the identity too (ONNX's definition), and common: torchvision 0.14's swin_t calls
 *    F.dropout(attn, p=0.0) without training=, which exports training_mode = true. */
static nnp_status infer_dropout(nnp_op_ctx *ctx) {
  NNP_TRY(infer_float(ctx));
  const nnp_tensor *x = ctx->in[0];
  if (ctx->opset >= 12) {
    const nnp_tensor *ratio = nnp_in(ctx, 1);
    if (ratio && (!nnp_dtype_is_float(ratio->dtype) || nnp_tensor_numel(ratio) != 1))
      return nnp_error(NNP_ERR_SHAPE, "input 1 (ratio) must be a float scalar");
    const nnp_tensor *train = nnp_in(ctx, 2);
    if (train) {
      if (train->dtype != NNP_BOOL || nnp_tensor_numel(train) != 1)
        return nnp_error(NNP_ERR_SHAPE, "input 2 (training_mode) must be a bool scalar");
      if (!train->data)
        return nnp_error(NNP_ERR_UNSUPPORTED,
                         "input 2 (training_mode) must be known when the model is loaded");
      const bool zero_ratio = ratio && ratio->data && nnp_tensor_get_f64(ratio, 0) == 0.0;
      if (*(const uint8_t *)train->data && !zero_ratio)
        return nnp_error(NNP_ERR_UNSUPPORTED, "input 2 (training_mode) is true: training-mode "
                                              "dropout is not supported (only with ratio 0)");
    }
  } else if (ctx->n_in > 1) {
    return nnp_error(NNP_ERR_FORMAT, "has %d inputs; before opset 12 Dropout takes one",
                     ctx->n_in);
  }
  nnp_tensor *mask = nnp_out(ctx, 1);
  if (mask) nnp_set_shape(mask, ctx->opset >= 10 ? NNP_BOOL : x->dtype, x->rank, x->dims);
  return NNP_OK;
}

static nnp_status ref_dropout(nnp_op_ctx *ctx) {
  copy_input(ctx);
  nnp_tensor *mask = nnp_out(ctx, 1);
  if (mask) {
    int64_t n = nnp_tensor_numel(mask);
    if (mask->dtype == NNP_BOOL) memset(mask->data, 1, (size_t)n);
    else for (int64_t i = 0; i < n; i++) nnp_tensor_set_f64(mask, i, 1.0);
  }
  return NNP_OK;
}

/* ---------------------------------------------------------------------------------- */
/* Cast                                                                               */
/* ---------------------------------------------------------------------------------- */

/* Rounds a double to the nearest float16 (ties to even) in one step. Going through
 * float first would round twice and could differ from numpy's astype(float16). */
static uint16_t f64_to_f16(double d) {
  uint64_t x;
  memcpy(&x, &d, 8);
  uint16_t sign = (uint16_t)((x >> 48) & 0x8000);
  int exp = (int)((x >> 52) & 0x7ff);
  uint64_t mant = x & 0xfffffffffffffull;
  if (exp == 0x7ff) return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 : 0));
  int e = exp - 1023 + 15; /* biased half exponent */
  if (e >= 31) return (uint16_t)(sign | 0x7c00);
  if (exp == 0) return sign; /* double subnormals are far below half's range */
  mant |= 1ull << 52;       /* 53-bit significand */
  int shift;                /* bits to drop to reach the half significand */
  if (e <= 0) {
    if (e < -10) return sign;
    shift = 42 + 1 - e; /* subnormal half: significand has 10 - (1 - e) + 1 bits */
  } else {
    shift = 42;
  }
  uint64_t half = mant >> shift;
  uint64_t rem = mant & ((1ull << shift) - 1);
  uint64_t mid = 1ull << (shift - 1);
  if (rem > mid || (rem == mid && (half & 1))) half++;
  /* For normals, `half` still holds the implicit bit; adding the exponent field with
   * (e - 1) absorbs it, and a carry out of the significand bumps the exponent, which is
   * exactly the rounding overflow we want (up to infinity). */
  if (e > 0) return (uint16_t)(sign | (((uint64_t)(e - 1) << 10) + half));
  return (uint16_t)(sign | half);
}

/* Cast converts through one of three lossless intermediate forms depending on the
 * source: int64 (signed ints, bool, uint8..32), uint64 (uint64), double (floats).
 * Elements move in blocks through a small stack buffer so that both the load and the
 * store loops have the type switch outside the loop. */
typedef enum cast_kind { CK_INT, CK_UINT, CK_FLOAT } cast_kind;
#define CAST_BLOCK 256

static cast_kind cast_kind_of(nnp_dtype dt) {
  if (dt == NNP_U64) return CK_UINT;
  if (nnp_dtype_is_float(dt)) return CK_FLOAT;
  return CK_INT;
}

typedef union cast_buf {
  int64_t i[CAST_BLOCK];
  uint64_t u[CAST_BLOCK];
  double f[CAST_BLOCK];
} cast_buf;

static void cast_load(nnp_dtype dt, const void *src, int64_t off, int64_t n, cast_buf *b) {
  switch (dt) {
#define LOAD_CASE(DT, T, DST)                                         \
  case DT: {                                                          \
    const T *s = (const T *)src + off;                                \
    for (int64_t i = 0; i < n; i++) b->DST[i] = s[i];                 \
    break;                                                            \
  }
    LOAD_CASE(NNP_I8, int8_t, i)
    LOAD_CASE(NNP_I16, int16_t, i)
    LOAD_CASE(NNP_I32, int32_t, i)
    LOAD_CASE(NNP_I64, int64_t, i)
    LOAD_CASE(NNP_U8, uint8_t, i)
    LOAD_CASE(NNP_U16, uint16_t, i)
    LOAD_CASE(NNP_U32, uint32_t, i)
    LOAD_CASE(NNP_U64, uint64_t, u)
    LOAD_CASE(NNP_F32, float, f)
    LOAD_CASE(NNP_F64, double, f)
#undef LOAD_CASE
    case NNP_BOOL: {
      const uint8_t *s = (const uint8_t *)src + off;
      for (int64_t i = 0; i < n; i++) b->i[i] = s[i] != 0;
      break;
    }
    case NNP_F16: {
      const uint16_t *s = (const uint16_t *)src + off;
      for (int64_t i = 0; i < n; i++) b->f[i] = nnp_f16_to_f32(s[i]);
      break;
    }
    case NNP_BF16: {
      const uint16_t *s = (const uint16_t *)src + off;
      for (int64_t i = 0; i < n; i++) b->f[i] = nnp_bf16_to_f32(s[i]);
      break;
    }
    default: break; /* rejected by infer */
  }
}

/* Float -> integer: truncation toward zero, saturating at the type's range, NaN -> 0.
 * (C leaves out-of-range conversions undefined; numpy gives platform garbage.) The
 * limits are compared as doubles: lo is exact (-2^(k-1) or 0) and hi+1 = 2^k is exact,
 * so `v >= hi1` catches everything the type cannot hold. */
#define SAT_FROM_DOUBLE(T, v, lo, hi1, hi) \
  ((v) != (v) ? (T)0 : (v) <= (lo) ? (T)(lo) : (v) >= (hi1) ? (hi) : (T)(v))

/* Cast to bfloat16 truncates, as the ONNX reference of the conformance suite nnperf is
 * tested with (ONNX 1.12, Debian's) does; newer ONNX releases round to nearest even
 * (nnp_f32_to_bf16). NaN stays NaN. */
static uint16_t f32_to_bf16_truncate(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40);
  return (uint16_t)(x >> 16);
}

static void cast_store(nnp_dtype dt, cast_kind k, const cast_buf *b, void *dst, int64_t off,
                       int64_t n) {
  switch (dt) {
#define STORE_INT_CASE(DT, T, U, LO, HI1, HI)                                          \
  case DT: {                                                                           \
    T *d = (T *)dst + off;                                                             \
    if (k == CK_INT) for (int64_t i = 0; i < n; i++) d[i] = (T)(U)(uint64_t)b->i[i];  \
    else if (k == CK_UINT) for (int64_t i = 0; i < n; i++) d[i] = (T)(U)b->u[i];      \
    else for (int64_t i = 0; i < n; i++) {                                             \
      double v = b->f[i];                                                              \
      d[i] = SAT_FROM_DOUBLE(T, v, LO, HI1, HI);                                       \
    }                                                                                  \
    break;                                                                             \
  }
    STORE_INT_CASE(NNP_I8, int8_t, uint8_t, -128.0, 128.0, INT8_MAX)
    STORE_INT_CASE(NNP_I16, int16_t, uint16_t, -32768.0, 32768.0, INT16_MAX)
    STORE_INT_CASE(NNP_I32, int32_t, uint32_t, -2147483648.0, 2147483648.0, INT32_MAX)
    STORE_INT_CASE(NNP_I64, int64_t, uint64_t, -9223372036854775808.0, 9223372036854775808.0,
                   INT64_MAX)
    STORE_INT_CASE(NNP_U8, uint8_t, uint8_t, 0.0, 256.0, UINT8_MAX)
    STORE_INT_CASE(NNP_U16, uint16_t, uint16_t, 0.0, 65536.0, UINT16_MAX)
    STORE_INT_CASE(NNP_U32, uint32_t, uint32_t, 0.0, 4294967296.0, UINT32_MAX)
    STORE_INT_CASE(NNP_U64, uint64_t, uint64_t, 0.0, 18446744073709551616.0, UINT64_MAX)
#undef STORE_INT_CASE
#define STORE_FLOAT_CASE(DT, T)                                                  \
  case DT: {                                                                     \
    T *d = (T *)dst + off;                                                       \
    if (k == CK_INT) for (int64_t i = 0; i < n; i++) d[i] = (T)b->i[i];          \
    else if (k == CK_UINT) for (int64_t i = 0; i < n; i++) d[i] = (T)b->u[i];    \
    else for (int64_t i = 0; i < n; i++) d[i] = (T)b->f[i];                      \
    break;                                                                       \
  }
    STORE_FLOAT_CASE(NNP_F32, float)
    STORE_FLOAT_CASE(NNP_F64, double)
#undef STORE_FLOAT_CASE
    case NNP_F16: {
      uint16_t *d = (uint16_t *)dst + off;
      if (k == CK_INT) for (int64_t i = 0; i < n; i++) d[i] = f64_to_f16((double)b->i[i]);
      else if (k == CK_UINT) for (int64_t i = 0; i < n; i++) d[i] = f64_to_f16((double)b->u[i]);
      else for (int64_t i = 0; i < n; i++) d[i] = f64_to_f16(b->f[i]);
      break;
    }
    case NNP_BF16: { /* via float32, truncated to its top half */
      uint16_t *d = (uint16_t *)dst + off;
      for (int64_t i = 0; i < n; i++) {
        float v = k == CK_INT ? (float)b->i[i] : k == CK_UINT ? (float)b->u[i] : (float)b->f[i];
        d[i] = f32_to_bf16_truncate(v);
      }
      break;
    }
    case NNP_BOOL: {
      uint8_t *d = (uint8_t *)dst + off;
      /* NaN is true, as in numpy. */
      if (k == CK_INT) for (int64_t i = 0; i < n; i++) d[i] = b->i[i] != 0;
      else if (k == CK_UINT) for (int64_t i = 0; i < n; i++) d[i] = b->u[i] != 0;
      else for (int64_t i = 0; i < n; i++) d[i] = b->f[i] != 0;
      break;
    }
    default: break; /* rejected by infer */
  }
}

static nnp_status infer_cast(nnp_op_ctx *ctx) {
  const nnp_tensor *x = nnp_in(ctx, 0);
  if (!x) return nnp_error(NNP_ERR_SHAPE, "input 0 is missing");
  const nnp_attr *to = nnp_node_attr(ctx->node, "to");
  if (!to || to->type != NNP_ATTR_INT)
    return nnp_error(NNP_ERR_FORMAT, "attribute 'to' (an int) is required");
  int64_t t = to->i;
  /* saturate (opset 19) only concerns float8 types, which nnperf has none of. */
  if (t == NNP_STRING || x->dtype == NNP_STRING)
    return nnp_error(NNP_ERR_UNSUPPORTED, "casting %s string is not supported",
                     x->dtype == NNP_STRING ? "from" : "to");
  if (t <= 0 || (t > NNP_U64 && t != NNP_BF16) || nnp_dtype_size((nnp_dtype)t) == 0)
    return nnp_error(NNP_ERR_UNSUPPORTED, "attribute to=%lld is not a supported tensor type",
                     (long long)t);
  if (nnp_dtype_size(x->dtype) == 0)
    return nnp_error(NNP_ERR_UNSUPPORTED, "input of type %s is not supported",
                     nnp_dtype_name(x->dtype));
  nnp_set_shape(ctx->out[0], (nnp_dtype)t, x->rank, x->dims);
  return NNP_OK;
}

static nnp_status ref_cast(nnp_op_ctx *ctx) {
  const nnp_tensor *x = ctx->in[0];
  nnp_tensor *y = ctx->out[0];
  if (x->dtype == y->dtype) {
    copy_input(ctx);
    return NNP_OK;
  }
  int64_t n = nnp_tensor_numel(x);
  /* Hot pair in mixed-precision models: f32 <-> f16 directly. */
  if (x->dtype == NNP_F32 && y->dtype == NNP_F16) {
    const float *s = x->data;
    uint16_t *d = y->data;
    for (int64_t i = 0; i < n; i++) d[i] = nnp_f32_to_f16(s[i]);
    return NNP_OK;
  }
  if (x->dtype == NNP_F16 && y->dtype == NNP_F32) {
    const uint16_t *s = x->data;
    float *d = y->data;
    for (int64_t i = 0; i < n; i++) d[i] = nnp_f16_to_f32(s[i]);
    return NNP_OK;
  }
  cast_kind k = cast_kind_of(x->dtype);
  cast_buf buf;
  for (int64_t off = 0; off < n; off += CAST_BLOCK) {
    int64_t m = n - off < CAST_BLOCK ? n - off : CAST_BLOCK;
    cast_load(x->dtype, x->data, off, m, &buf);
    cast_store(y->dtype, k, &buf, y->data, off, m);
  }
  return NNP_OK;
}

/* ---------------------------------------------------------------------------------- */
/* Descriptors                                                                        */
/* ---------------------------------------------------------------------------------- */

#define UNARY_OP_FAST(sym, nm, inf, rf, prep) \
  const nnp_op_info nnp_op_##sym = {.name = nm, .min_inputs = 1, .max_inputs = 1, \
                                    .min_outputs = 1, .max_outputs = 1, .infer = inf, .ref = rf, .prepare = prep};
#define UNARY_OP(sym, nm, inf, rf) UNARY_OP_FAST(sym, nm, inf, rf, NULL)

UNARY_OP(abs, "Abs", infer_numeric, ref_abs)
UNARY_OP(neg, "Neg", infer_float_or_signed, ref_neg)
UNARY_OP(sqrt, "Sqrt", infer_float, ref_sqrt)
UNARY_OP(exp, "Exp", infer_float, ref_exp)
UNARY_OP(log, "Log", infer_float, ref_log)
UNARY_OP(reciprocal, "Reciprocal", infer_float, ref_reciprocal)
UNARY_OP(floor, "Floor", infer_float, ref_floor)
UNARY_OP(ceil, "Ceil", infer_float, ref_ceil)
UNARY_OP(erf, "Erf", infer_float, ref_erf)
UNARY_OP(tanh, "Tanh", infer_float, ref_tanh)
UNARY_OP_FAST(sigmoid, "Sigmoid", infer_float, ref_sigmoid, nnp_prepare_eltwise_act)
UNARY_OP_FAST(relu, "Relu", infer_float_or_signed, ref_relu, nnp_prepare_eltwise_act)
UNARY_OP(leaky_relu, "LeakyRelu", infer_float, ref_leaky_relu)
UNARY_OP_FAST(hard_sigmoid, "HardSigmoid", infer_float, ref_hard_sigmoid, nnp_prepare_eltwise_act)
UNARY_OP_FAST(hard_swish, "HardSwish", infer_float, ref_hard_swish, nnp_prepare_eltwise_act)
UNARY_OP(gelu, "Gelu", infer_gelu, ref_gelu)
UNARY_OP(elu, "Elu", infer_float, ref_elu)
UNARY_OP(selu, "Selu", infer_float, ref_selu)
UNARY_OP(softplus, "Softplus", infer_float, ref_softplus)
UNARY_OP(not, "Not", infer_not, ref_not)
UNARY_OP(cast, "Cast", infer_cast, ref_cast)
UNARY_OP(identity, "Identity", infer_same, ref_identity)

const nnp_op_info nnp_op_clip = {.name = "Clip", .min_inputs = 1, .max_inputs = 3,
                                 .min_outputs = 1, .max_outputs = 1,
                                 .infer = infer_clip, .ref = ref_clip, .prepare = nnp_prepare_eltwise_act};
const nnp_op_info nnp_op_dropout = {.name = "Dropout", .min_inputs = 1, .max_inputs = 3,
                                    .min_outputs = 1, .max_outputs = 2,
                                    .infer = infer_dropout, .ref = ref_dropout};
