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
    case NNP_ACT_SILU: return v / (1.0f + expf(-v)); /* v < -88: v / inf = -0, as x * sigmoid(x) */
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
