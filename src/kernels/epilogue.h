/* What a GEMM or convolution does to each result before storing it:
 *   y = act(acc + bias + residual)
 * Fusing this into the kernel's store saves a full pass over the output per fused op.
 * The residual is added before the activation (ResNet: relu(conv(x) + bias + x)). */
#ifndef NNP_KERNELS_EPILOGUE_H
#define NNP_KERNELS_EPILOGUE_H

#include <math.h>
#include <stdint.h>

typedef enum nnp_act {
  NNP_ACT_NONE = 0,
  NNP_ACT_RELU,
  NNP_ACT_CLIP,      /* min(max(x, act_min), act_max) (Relu6 is clip(0, 6)) */
  NNP_ACT_HARDSWISH, /* x * clip(x + 3, 0, 6) / 6 */
  NNP_ACT_SIGMOID,
  NNP_ACT_SILU /* x * sigmoid(x), Swish: the EfficientNet family's Sigmoid + Mul pair */
} nnp_act;

typedef enum nnp_bias_kind {
  NNP_BIAS_NONE = 0,
  NNP_BIAS_ROW, /* bias[i] for row i (Conv: one per output channel) */
  NNP_BIAS_COL  /* bias[j] for column j (Gemm: one per output feature) */
} nnp_bias_kind;

typedef struct nnp_epilogue {
  const float *bias;
  int bias_kind;       /* nnp_bias_kind */
  int act;             /* nnp_act */
  float act_min, act_max;
  const float *residual; /* same layout as the output (leading dimension ld_res), or NULL */
  int64_t ld_res;
} nnp_epilogue;

/* e^x as the vector kernels compute it (exp_avx2.h's nnp_exp8, exp_avx512.h's
 * nnp_exp16: the same clamp, the same rounding of n, the same fused steps, 2^n from the
 * exponent bits), one float at a time. The epilogues' scalar paths (ragged columns, the
 * one-row GEMV, the portable kernels) use it for SiLU so that an element's bits do not
 * depend on which path computed it: an image's result must not change with its batch. */
static inline float nnp_exp_poly(float x) {
  x = fminf(fmaxf(x, -88.3762626647949f), 88.3762626647949f);
  const float n = rintf(x * 1.44269504088896341f);
  float r = fmaf(-n, 0.693359375f, x);
  r = fmaf(-n, -2.12194440e-4f, r);
  float p = 1.9875691500e-4f;
  p = fmaf(p, r, 1.3981999507e-3f);
  p = fmaf(p, r, 8.3334519073e-3f);
  p = fmaf(p, r, 4.1665795894e-2f);
  p = fmaf(p, r, 1.6666665459e-1f);
  p = fmaf(p, r, 5.0000001201e-1f);
  p = fmaf(p * r, r, r + 1.0f);
  union {
    int32_t i;
    float f;
  } two_n = {.i = ((int32_t)n + 127) * (1 << 23)};
  return p * two_n.f;
}

static inline float nnp_act_apply(const nnp_epilogue *ep, float v) {
  switch (ep->act) {
    case NNP_ACT_RELU: return v > 0.0f ? v : 0.0f;
    case NNP_ACT_CLIP: return v < ep->act_min ? ep->act_min : (v > ep->act_max ? ep->act_max : v);
    case NNP_ACT_HARDSWISH: {
      float t = v + 3.0f;
      t = t < 0.0f ? 0.0f : (t > 6.0f ? 6.0f : t);
      return v * t * (1.0f / 6.0f);
    }
    case NNP_ACT_SIGMOID: return 1.0f / (1.0f + expf(-v));
    case NNP_ACT_SILU: return v / (1.0f + nnp_exp_poly(0.0f - v)); /* the vector kernels' bits */
    default: return v;
  }
}

/* The epilogue of element (i, j) of the output, accumulator acc. ep may be NULL. */
static inline float nnp_epilogue_apply(const nnp_epilogue *ep, int64_t i, int64_t j, float acc) {
  if (!ep) return acc;
  if (ep->bias_kind == NNP_BIAS_ROW) acc += ep->bias[i];
  else if (ep->bias_kind == NNP_BIAS_COL) acc += ep->bias[j];
  if (ep->residual) acc += ep->residual[i * ep->ld_res + j];
  return nnp_act_apply(ep, acc);
}

#endif
