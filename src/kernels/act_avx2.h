/* The epilogue's activations on 8 floats (AVX2); sigmoid is left to the scalar path,
 * SiLU runs here on the vector e^x (exp_avx2.h: within a few ulp of expf).
 * Include only from files compiled with -mavx2 -mfma. */
#ifndef NNP_KERNELS_ACT_AVX2_H
#define NNP_KERNELS_ACT_AVX2_H

#include <immintrin.h>

#include "kernels/epilogue.h"
#include "kernels/exp_avx2.h"

/* Inline (out of line before, as nnp_silu16 in act_avx512.h still is): a call per vector
 * reloaded the exp's dozen constants and left one dependent chain of ~20 operations in
 * flight; inline, a tile's or a row's vectors overlap. SiLU is EfficientNet's activation
 * after every expansion and depthwise conv: a loop of calls took 7.1 ns a vector against
 * 4.7 inline (2.45 GHz Zen 3), and efficientnet_b3's conv steps on one thread summed 3%
 * less (bench_plan_steps, three alternations). The same operations: the same bits. */
static inline __attribute__((always_inline, unused)) __m256 nnp_silu8(__m256 v) { /* v / (1 + e^-v), nnp_act_apply's formula */
  return _mm256_div_ps(v, _mm256_add_ps(_mm256_set1_ps(1.0f), nnp_exp8(_mm256_sub_ps(_mm256_setzero_ps(), v))));
}

/* Inline everywhere (forced: with SiLU's exp inside, GCC kept an out-of-line copy for the
 * depthwise rows, 721,280 calls of 35 instructions in one efficientnet_b0 run). */
static inline __attribute__((always_inline)) __m256 nnp_act8(const nnp_epilogue *ep, __m256 v) {
  switch (ep->act) {
    case NNP_ACT_RELU: return _mm256_max_ps(v, _mm256_setzero_ps());
    case NNP_ACT_CLIP:
      return _mm256_min_ps(_mm256_max_ps(v, _mm256_set1_ps(ep->act_min)), _mm256_set1_ps(ep->act_max));
    case NNP_ACT_HARDSWISH: {
      __m256 t = _mm256_add_ps(v, _mm256_set1_ps(3.0f));
      t = _mm256_min_ps(_mm256_max_ps(t, _mm256_setzero_ps()), _mm256_set1_ps(6.0f));
      return _mm256_mul_ps(_mm256_mul_ps(v, t), _mm256_set1_ps(1.0f / 6.0f));
    }
    case NNP_ACT_SILU: return nnp_silu8(v);
    default: return v;
  }
}

/* Runs CALL(A) with A the activation `act` as a compile-time constant: one copy of the
 * caller's loop per activation, in which nnp_act8's switch folds away (a switch on every
 * vector kept GCC from holding the loop's values in registers). Callers send Sigmoid to
 * the scalar epilogue first: here it would run as no activation. Used by the GEMM tile's
 * store (gemm_avx2.c) and the depthwise epilogues (dwconv_fast_avx2.h, dwconv_c8_avx2.h). */
#define NNP_ACT8_CONST(act, CALL)                           \
  switch (act) {                                            \
    case NNP_ACT_RELU: CALL(NNP_ACT_RELU); break;           \
    case NNP_ACT_CLIP: CALL(NNP_ACT_CLIP); break;           \
    case NNP_ACT_HARDSWISH: CALL(NNP_ACT_HARDSWISH); break; \
    case NNP_ACT_SILU: CALL(NNP_ACT_SILU); break;           \
    default: CALL(NNP_ACT_NONE); break;                     \
  }

#endif
