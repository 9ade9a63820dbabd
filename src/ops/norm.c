/* BatchNormalization (inference), InstanceNormalization, LRN.
 *
 * All three work on (N, C, spatial...) tensors viewed as N x C planes of S elements
 * (S = product of the spatial dims). Statistics and per-channel coefficients are computed
 * in double; elements are stored back in the input's type.
 * Types: float32, float64, float16. */
#include <math.h>
#include <string.h>

#include "ops/fast_ops.h"
#include "ops/op_util.h"

#define LD_PLAIN(p, i) ((double)(p)[i])
#define ST_PLAIN(T, v) ((T)(v))
#define LD_F16(p, i) ((double)nnp_f16_to_f32((p)[i]))
#define ST_F16(T, v) nnp_f32_to_f16((float)(v))

/* Planes (N*C) and plane size S of x. */
static void planes_of(const nnp_tensor *x, int64_t *nc, int64_t *s) {
  *nc = x->dims[0] * (x->rank > 1 ? x->dims[1] : 1);
  *s = 1;
  for (int i = 2; i < x->rank; i++) *s *= x->dims[i];
}

static nnp_status check_float_x(const nnp_op_ctx *ctx, int min_rank) {
  const nnp_tensor *x = ctx->in[0];
  if (!x || !nnp_out(ctx, 0)) return nnp_error(NNP_ERR_SHAPE, "input X and output Y are required");
  NNP_TRY(nnp_check_dtype(x, "input X", NNP_F32, NNP_F64, NNP_F16, NNP_UNDEFINED));
  if (x->rank < min_rank)
    return nnp_error(NNP_ERR_SHAPE, "input X must have rank >= %d (N, C, ...), not %d", min_rank,
                     x->rank);
  return NNP_OK;
}

static nnp_status check_param(const nnp_tensor *p, const char *what, int64_t n1, int64_t n2) {
  if (!p) return nnp_error(NNP_ERR_SHAPE, "input %s is missing", what);
  if (!nnp_dtype_is_float(p->dtype))
    return nnp_error(NNP_ERR_SHAPE, "input %s must be a float tensor, not %s", what,
                     nnp_dtype_name(p->dtype));
  int64_t n = nnp_tensor_numel(p);
  if (n != n1 && n != n2)
    return nnp_error(NNP_ERR_SHAPE, "input %s has %lld values, expected %lld (one per channel)", what,
                     (long long)n, (long long)n1);
  return NNP_OK;
}

/* ---------------------------------------------------------------------------------
 * BatchNormalization, inference form: y = (x - mean) / sqrt(var + eps) * scale + B.
 *
 * Opset history handled here: opset 6 is_test (ignored: nnperf only infers, like
 * onnxruntime), opset 7-8 spatial (0: scale/B/mean/var may hold one value per
 * channel *and* spatial position, C x D1 x ... x Dn), opset 14 training_mode (1 is
 * rejected), opset 15 distinct parameter types (read through double).
 * Outputs 1-2 (running mean/var) equal the inputs in inference, where the running
 * statistics are not updated; outputs 3-4 (saved batch statistics) exist only in
 * training and are rejected. */

static nnp_status infer_batch_norm(nnp_op_ctx *ctx) {
  const nnp_tensor *x = ctx->in[0];
  NNP_TRY(check_float_x(ctx, 2));
  if (nnp_attr_int(ctx->node, "training_mode", 0) != 0)
    return nnp_error(NNP_ERR_UNSUPPORTED, "attribute 'training_mode' = %lld: only inference is supported",
                     (long long)nnp_attr_int(ctx->node, "training_mode", 0));
  int64_t spatial = nnp_attr_int(ctx->node, "spatial", 1);
  if (spatial != 0 && spatial != 1)
    return nnp_error(NNP_ERR_SHAPE, "attribute 'spatial' = %lld must be 0 or 1", (long long)spatial);
  int64_t nc, s, c = x->dims[1];
  planes_of(x, &nc, &s);
  int64_t per_elem = spatial ? c : c * s; /* spatial=0: C x D1 x ... also accepted */
  static const char *const names[] = {"scale", "B", "mean", "var"};
  for (int i = 0; i < 4; i++) NNP_TRY(check_param(nnp_in(ctx, 1 + i), names[i], c, per_elem));
  int64_t n0 = nnp_tensor_numel(ctx->in[1]);
  for (int i = 2; i < 5; i++)
    if (nnp_tensor_numel(ctx->in[i]) != n0)
      return nnp_error(NNP_ERR_SHAPE, "inputs scale and %s differ in size", names[i - 1]);
  if (nnp_out(ctx, 3) || nnp_out(ctx, 4))
    return nnp_error(NNP_ERR_UNSUPPORTED,
                     "outputs saved_mean/saved_var exist only in training mode, which is not supported");
  nnp_copy_shape(ctx->out[0], x);
  for (int i = 1; i <= 2; i++)
    if (nnp_out(ctx, i)) nnp_copy_shape(ctx->out[i], ctx->in[2 + i]);
  return NNP_OK;
}

#define DEFINE_BN(SUF, T, LD, ST)                                                         \
  static void bn_##SUF(const T *x, T *y, int64_t len, double a, double b) {              \
    for (int64_t i = 0; i < len; i++) y[i] = ST(T, LD(x, i) * a + b);                     \
  }
DEFINE_BN(f32, float, LD_PLAIN, ST_PLAIN)
DEFINE_BN(f64, double, LD_PLAIN, ST_PLAIN)
DEFINE_BN(f16, uint16_t, LD_F16, ST_F16)

static nnp_status ref_batch_norm(nnp_op_ctx *ctx) {
  const nnp_tensor *x = ctx->in[0], *sc = ctx->in[1], *bi = ctx->in[2], *mu = ctx->in[3],
                   *va = ctx->in[4];
  nnp_tensor *y = ctx->out[0];
  double eps = nnp_attr_float(ctx->node, "epsilon", 1e-5f);
  int64_t nc, s, c = x->dims[1];
  planes_of(x, &nc, &s);
  /* spatial = 0 with C x D1 x ... parameters: one coefficient pair per element of a
   * plane; otherwise one pair per plane. */
  bool per_elem = nnp_tensor_numel(sc) != c;
  int64_t runs = per_elem ? s : 1, len = per_elem ? 1 : s;
  for (int64_t p = 0; p < nc; p++) {
    int64_t ch = p % c;
    for (int64_t r = 0; r < runs; r++) {
      int64_t pi = per_elem ? ch * s + r : ch, at = p * s + r;
      double a = nnp_tensor_get_f64(sc, pi) / sqrt(nnp_tensor_get_f64(va, pi) + eps);
      double b = nnp_tensor_get_f64(bi, pi) - nnp_tensor_get_f64(mu, pi) * a;
      switch (x->dtype) {
        case NNP_F32: bn_f32((const float *)x->data + at, (float *)y->data + at, len, a, b); break;
        case NNP_F64: bn_f64((const double *)x->data + at, (double *)y->data + at, len, a, b); break;
        default: bn_f16((const uint16_t *)x->data + at, (uint16_t *)y->data + at, len, a, b); break;
      }
    }
  }
  for (int i = 1; i <= 2; i++) {
    nnp_tensor *o = nnp_out(ctx, i);
    if (o) memcpy(o->data, ctx->in[2 + i]->data, nnp_tensor_nbytes(o));
  }
  return NNP_OK;
}

const nnp_op_info nnp_op_batch_normalization = {
    .name = "BatchNormalization", .min_inputs = 5, .max_inputs = 5, .min_outputs = 1,
    .max_outputs = 5, .infer = infer_batch_norm, .ref = ref_batch_norm, .prepare = nnp_prepare_batch_norm};

/* ---------------------------------------------------------------------------------
 * InstanceNormalization: per (n, c) plane, y = (x - mean) / sqrt(var + eps) * scale + B
 * with the plane's own (population) mean and variance, computed in two passes. */

static nnp_status infer_instance_norm(nnp_op_ctx *ctx) {
  const nnp_tensor *x = ctx->in[0];
  NNP_TRY(check_float_x(ctx, 3));
  int64_t c = x->dims[1];
  NNP_TRY(check_param(nnp_in(ctx, 1), "scale", c, c));
  NNP_TRY(check_param(nnp_in(ctx, 2), "B", c, c));
  nnp_copy_shape(ctx->out[0], x);
  return NNP_OK;
}

#define DEFINE_IN(SUF, T, LD, ST)                                                         \
  static void inorm_##SUF(const T *x, T *y, int64_t s, double scale, double bias,        \
                          double eps) {                                                   \
    double mean = 0, var = 0;                                                             \
    for (int64_t i = 0; i < s; i++) mean += LD(x, i);                                     \
    mean = s > 0 ? mean / (double)s : 0;                                                  \
    for (int64_t i = 0; i < s; i++) {                                                     \
      double d = LD(x, i) - mean;                                                         \
      var += d * d;                                                                       \
    }                                                                                     \
    var = s > 0 ? var / (double)s : 0;                                                    \
    double a = scale / sqrt(var + eps), b = bias - mean * a;                              \
    for (int64_t i = 0; i < s; i++) y[i] = ST(T, LD(x, i) * a + b);                       \
  }
DEFINE_IN(f32, float, LD_PLAIN, ST_PLAIN)
DEFINE_IN(f64, double, LD_PLAIN, ST_PLAIN)
DEFINE_IN(f16, uint16_t, LD_F16, ST_F16)

static nnp_status ref_instance_norm(nnp_op_ctx *ctx) {
  const nnp_tensor *x = ctx->in[0], *sc = ctx->in[1], *bi = ctx->in[2];
  nnp_tensor *y = ctx->out[0];
  double eps = nnp_attr_float(ctx->node, "epsilon", 1e-5f);
  int64_t nc, s, c = x->dims[1];
  planes_of(x, &nc, &s);
  for (int64_t p = 0; p < nc; p++) {
    double scale = nnp_tensor_get_f64(sc, p % c), bias = nnp_tensor_get_f64(bi, p % c);
    switch (x->dtype) {
      case NNP_F32: inorm_f32((const float *)x->data + p * s, (float *)y->data + p * s, s, scale, bias, eps); break;
      case NNP_F64: inorm_f64((const double *)x->data + p * s, (double *)y->data + p * s, s, scale, bias, eps); break;
      default: inorm_f16((const uint16_t *)x->data + p * s, (uint16_t *)y->data + p * s, s, scale, bias, eps); break;
    }
  }
  return NNP_OK;
}

const nnp_op_info nnp_op_instance_normalization = {
    .name = "InstanceNormalization", .min_inputs = 3, .max_inputs = 3, .min_outputs = 1,
    .max_outputs = 1, .infer = infer_instance_norm, .ref = ref_instance_norm};

/* ---------------------------------------------------------------------------------
 * LRN across channels:
 *   sq[n,c,s] = sum of x[n,c',s]^2 for c' in [c - floor((size-1)/2), c + ceil((size-1)/2)]
 *   y = x / (bias + alpha / size * sq)^beta
 * The window sum of one output plane is accumulated in a scratch plane of S doubles,
 * so the channel loop walks contiguous planes. */

static nnp_status infer_lrn(nnp_op_ctx *ctx) {
  const nnp_tensor *x = ctx->in[0];
  NNP_TRY(check_float_x(ctx, 2));
  const nnp_attr *sz = nnp_node_attr(ctx->node, "size");
  if (!sz) return nnp_error(NNP_ERR_SHAPE, "attribute 'size' is required");
  int64_t size = nnp_attr_int(ctx->node, "size", 0);
  if (size < 1 || size > ((int64_t)1 << 31))
    return nnp_error(NNP_ERR_SHAPE, "attribute 'size' = %lld must be positive", (long long)size);
  int64_t nc, s;
  planes_of(x, &nc, &s);
  if ((uint64_t)s > SIZE_MAX / sizeof(double))
    return nnp_error(NNP_ERR_LIMIT, "LRN plane of %lld elements is too large", (long long)s);
  nnp_copy_shape(ctx->out[0], x);
  ctx->scratch_needed = (size_t)s * sizeof(double);
  return NNP_OK;
}

#define DEFINE_LRN(SUF, T, LD, ST)                                                        \
  static void lrn_##SUF(const T *x, T *y, int64_t n, int64_t c, int64_t s, int64_t size, \
                        double alpha, double beta, double bias, double *sq) {             \
    const int64_t before = (size - 1) / 2, after = size - 1 - before;                     \
    const double k = alpha / (double)size;                                                \
    for (int64_t ni = 0; ni < n; ni++)                                                    \
      for (int64_t ch = 0; ch < c; ch++) {                                                \
        int64_t c0 = ch - before < 0 ? 0 : ch - before;                                   \
        int64_t c1 = ch + after >= c ? c - 1 : ch + after;                                \
        for (int64_t i = 0; i < s; i++) sq[i] = 0;                                        \
        for (int64_t cc = c0; cc <= c1; cc++) {                                           \
          const T *xp = x + (ni * c + cc) * s;                                            \
          for (int64_t i = 0; i < s; i++) {                                               \
            double v = LD(xp, i);                                                         \
            sq[i] += v * v;                                                               \
          }                                                                               \
        }                                                                                 \
        const T *xp = x + (ni * c + ch) * s;                                              \
        T *yp = y + (ni * c + ch) * s;                                                    \
        for (int64_t i = 0; i < s; i++)                                                   \
          yp[i] = ST(T, LD(xp, i) / pow(bias + k * sq[i], beta));                         \
      }                                                                                   \
  }
DEFINE_LRN(f32, float, LD_PLAIN, ST_PLAIN)
DEFINE_LRN(f64, double, LD_PLAIN, ST_PLAIN)
DEFINE_LRN(f16, uint16_t, LD_F16, ST_F16)

static nnp_status ref_lrn(nnp_op_ctx *ctx) {
  const nnp_tensor *x = ctx->in[0];
  nnp_tensor *y = ctx->out[0];
  int64_t size = nnp_attr_int(ctx->node, "size", 1);
  double alpha = nnp_attr_float(ctx->node, "alpha", 1e-4f);
  double beta = nnp_attr_float(ctx->node, "beta", 0.75f);
  double bias = nnp_attr_float(ctx->node, "bias", 1.0f);
  int64_t nc, s, c = x->dims[1];
  planes_of(x, &nc, &s);
  int64_t n = c > 0 ? nc / c : 0;
  if (ctx->scratch_size < (size_t)s * sizeof(double))
    return nnp_error(NNP_ERR_INTERNAL, "LRN scratch too small");
  double *sq = ctx->scratch;
  switch (x->dtype) {
    case NNP_F32: lrn_f32(x->data, y->data, n, c, s, size, alpha, beta, bias, sq); break;
    case NNP_F64: lrn_f64(x->data, y->data, n, c, s, size, alpha, beta, bias, sq); break;
    default: lrn_f16(x->data, y->data, n, c, s, size, alpha, beta, bias, sq); break;
  }
  return NNP_OK;
}

const nnp_op_info nnp_op_lrn = {.name = "LRN", .min_inputs = 1, .max_inputs = 1,
                                .min_outputs = 1, .max_outputs = 1,
                                .infer = infer_lrn, .ref = ref_lrn};
