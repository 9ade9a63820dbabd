/* Reference kernels of the internal fused ops (ops/internal_ops.h): the plain Conv or
 * Gemm reference kernel, then one epilogue pass adding the residual and applying the
 * activation. Numerically this is exactly the unfused sequence Conv -> Add -> Relu (same
 * operations in the same order per element), so the passes' tests can demand identical
 * outputs. Optimised kernels fuse the epilogue into the GEMM tile instead. */
#include <math.h>
#include <string.h>

#include "ops/fast_ops.h"
#include "ops/internal_ops.h"
#include "ops/op_util.h"

nnp_status nnp_fused_activation(const nnp_node *n, nnp_act *act, float *lo, float *hi) {
  const char *name = nnp_attr_string(n, "activation", NULL);
  *lo = -INFINITY;
  *hi = INFINITY;
  *act = NNP_ACT_NONE;
  if (!name) return NNP_OK;
  if (!strcmp(name, "Relu")) *act = NNP_ACT_RELU;
  else if (!strcmp(name, "HardSwish")) *act = NNP_ACT_HARDSWISH;
  else if (!strcmp(name, "Sigmoid")) *act = NNP_ACT_SIGMOID;
  else if (!strcmp(name, "Silu")) *act = NNP_ACT_SILU;
  else if (!strcmp(name, "Clip")) {
    *act = NNP_ACT_CLIP;
    const float *p = NULL;
    int np = nnp_attr_floats(n, "activation_params", &p);
    if (np != 2) return nnp_error(NNP_ERR_FORMAT, "activation Clip needs activation_params [min, max]");
    *lo = p[0];
    *hi = p[1];
  } else {
    return nnp_error(NNP_ERR_UNSUPPORTED, "unknown fused activation '%s'", name);
  }
  return NNP_OK;
}

/* The same formulas as the unary reference kernels (ops/unary.c). */
static inline float apply_act(nnp_act act, float x, float lo, float hi) {
  switch (act) {
    case NNP_ACT_RELU: return x < 0 ? 0.0f : x;
    case NNP_ACT_CLIP: x = x < lo ? lo : x; return x > hi ? hi : x;
    case NNP_ACT_HARDSWISH: {
      float t = x * (1.0f / 6.0f) + 0.5f;
      return x * (t < 0 ? 0.0f : (t > 1 ? 1.0f : t));
    }
    case NNP_ACT_SIGMOID: {
      if (x >= 0) return 1.0f / (1.0f + expf(-x));
      float e = expf(x);
      return e / (1.0f + e);
    }
    case NNP_ACT_SILU: return x * apply_act(NNP_ACT_SIGMOID, x, lo, hi); /* Mul(x, Sigmoid(x)), bit for bit */
    default: return x;
  }
}

/* The residual r (or NULL) and the activation of a fused op whose output is inferred;
 * the activation's kind into *act */
static nnp_status check_epilogue(nnp_op_ctx *ctx, const nnp_tensor *r, nnp_act *act) {
  nnp_tensor *y = ctx->out[0];
  if (y->dtype != NNP_F32) return nnp_error(NNP_ERR_UNSUPPORTED, "fused ops support float32 only");
  if (r && (r->dtype != y->dtype || !nnp_tensor_same_shape(r, y)))
    return nnp_error(NNP_ERR_SHAPE, "the residual input must have the output's type and shape");
  float lo, hi;
  return nnp_fused_activation(ctx->node, act, &lo, &hi);
}

/* Infers like the base op on inputs 0..n_base-1, then checks the residual and the activation. */
static nnp_status fused_infer(nnp_op_ctx *ctx, const nnp_op_info *base) {
  nnp_op_ctx c = *ctx;
  c.n_in = ctx->n_in < 3 ? ctx->n_in : 3;
  NNP_TRY(base->infer(&c));
  ctx->scratch_needed = c.scratch_needed;
  nnp_act act;
  return check_epilogue(ctx, nnp_in(ctx, 3), &act);
}

/* y += r (the residual, or NULL), then the activation */
static nnp_status epilogue_ref(nnp_op_ctx *ctx, const nnp_tensor *r) {
  nnp_act act;
  float lo, hi;
  NNP_TRY(nnp_fused_activation(ctx->node, &act, &lo, &hi));
  nnp_tensor *y = ctx->out[0];
  float *yd = y->data;
  const float *rd = r ? r->data : NULL;
  const int64_t n = nnp_tensor_numel(y);
  if (rd)
    for (int64_t i = 0; i < n; i++) yd[i] += rd[i];
  /* one loop per activation, the switch outside it: with the switch per element the
   * loop did not vectorise, and the fused reference ran up to 1.7x slower than Conv
   * followed by the separate (vectorised) activation op it replaces */
  switch (act) {
    case NNP_ACT_RELU:
      for (int64_t i = 0; i < n; i++) yd[i] = apply_act(NNP_ACT_RELU, yd[i], lo, hi);
      break;
    case NNP_ACT_CLIP:
      for (int64_t i = 0; i < n; i++) yd[i] = apply_act(NNP_ACT_CLIP, yd[i], lo, hi);
      break;
    case NNP_ACT_HARDSWISH:
      for (int64_t i = 0; i < n; i++) yd[i] = apply_act(NNP_ACT_HARDSWISH, yd[i], lo, hi);
      break;
    case NNP_ACT_SIGMOID:
      for (int64_t i = 0; i < n; i++) yd[i] = apply_act(NNP_ACT_SIGMOID, yd[i], lo, hi);
      break;
    case NNP_ACT_SILU:
      for (int64_t i = 0; i < n; i++) yd[i] = apply_act(NNP_ACT_SILU, yd[i], lo, hi);
      break;
    default: break;
  }
  return NNP_OK;
}

static nnp_status fused_ref(nnp_op_ctx *ctx, const nnp_op_info *base) {
  nnp_op_ctx c = *ctx;
  c.n_in = ctx->n_in < 3 ? ctx->n_in : 3;
  NNP_TRY(base->ref(&c));
  return epilogue_ref(ctx, nnp_in(ctx, 3));
}

/* FusedMatMul(A, B, bias, [R]): MatMul, then + bias along the last axis (one value per
 * column, as the Add it replaces: mm + bias per element), then R and the activation */
static nnp_status infer_fused_matmul(nnp_op_ctx *ctx) {
  nnp_op_ctx c = *ctx;
  c.n_in = 2;
  NNP_TRY(nnp_op_matmul.infer(&c));
  ctx->scratch_needed = c.scratch_needed;
  const nnp_tensor *y = ctx->out[0], *bias = nnp_in(ctx, 2);
  if (!bias || bias->dtype != NNP_F32 || y->rank < 1 || nnp_tensor_numel(bias) != y->dims[y->rank - 1])
    return nnp_error(NNP_ERR_SHAPE, "FusedMatMul: the bias must be one float32 per output column");
  nnp_act act;
  return check_epilogue(ctx, nnp_in(ctx, 3), &act);
}

static nnp_status ref_fused_matmul(nnp_op_ctx *ctx) {
  nnp_op_ctx c = *ctx;
  c.n_in = 2;
  NNP_TRY(nnp_op_matmul.ref(&c));
  nnp_tensor *y = ctx->out[0];
  const float *b = ctx->in[2]->data;
  float *yd = y->data;
  const int64_t n = y->dims[y->rank - 1], rows = n ? nnp_tensor_numel(y) / n : 0;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t j = 0; j < n; j++) yd[r * n + j] += b[j];
  return epilogue_ref(ctx, nnp_in(ctx, 3));
}

/* FusedBatchNorm(X, scale, B, mean, var): BatchNormalization's checks, float32 only, and
 * `activation` Relu (the one kind the pass fuses and the fast kernel applies); its
 * reference is BatchNormalization's, then the epilogue's Relu (no residual: input 3 is
 * the mean), the unfused pair's bits. */
static nnp_status infer_fused_batch_norm(nnp_op_ctx *ctx) {
  NNP_TRY(nnp_op_batch_normalization.infer(ctx));
  nnp_act act;
  NNP_TRY(check_epilogue(ctx, NULL, &act)); /* no residual: input 3 is the mean */
  if (act != NNP_ACT_RELU) return nnp_error(NNP_ERR_UNSUPPORTED, "FusedBatchNorm: attribute 'activation' must be \"Relu\"");
  return NNP_OK;
}

static nnp_status ref_fused_batch_norm(nnp_op_ctx *ctx) {
  NNP_TRY(nnp_op_batch_normalization.ref(ctx));
  return epilogue_ref(ctx, NULL);
}

static nnp_status infer_fused_conv(nnp_op_ctx *ctx) { return fused_infer(ctx, &nnp_op_conv); }
static nnp_status ref_fused_conv(nnp_op_ctx *ctx) { return fused_ref(ctx, &nnp_op_conv); }
static nnp_status infer_fused_gemm(nnp_op_ctx *ctx) { return fused_infer(ctx, &nnp_op_gemm); }
static nnp_status ref_fused_gemm(nnp_op_ctx *ctx) { return fused_ref(ctx, &nnp_op_gemm); }

const nnp_op_info nnp_op_fused_conv = {.name = "FusedConv", .min_inputs = 2, .max_inputs = 4,
                                       .min_outputs = 1, .max_outputs = 1,
                                       .infer = infer_fused_conv, .ref = ref_fused_conv,
                                       .prepare = nnp_prepare_conv};
const nnp_op_info nnp_op_fused_matmul = {.name = "FusedMatMul", .min_inputs = 3, .max_inputs = 4,
                                         .min_outputs = 1, .max_outputs = 1,
                                         .infer = infer_fused_matmul, .ref = ref_fused_matmul,
                                         .prepare = nnp_prepare_matmul};
const nnp_op_info nnp_op_fused_batch_norm = {.name = "FusedBatchNorm", .min_inputs = 5, .max_inputs = 5,
                                             .min_outputs = 1, .max_outputs = 1,
                                             .infer = infer_fused_batch_norm, .ref = ref_fused_batch_norm,
                                             .prepare = nnp_prepare_fused_batch_norm};
const nnp_op_info nnp_op_fused_gemm = {.name = "FusedGemm", .min_inputs = 2, .max_inputs = 4,
                                       .min_outputs = 1, .max_outputs = 1,
                                       .infer = infer_fused_gemm, .ref = ref_fused_gemm,
                                       .prepare = nnp_prepare_gemm};
