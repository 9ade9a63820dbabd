/* The epilogue's activations on 16 floats (AVX-512F); sigmoid is left to the caller,
 * SiLU runs here on the vector e^x (exp_avx512.h).
 * Include only from files compiled with -mavx512f. */
#ifndef NNP_KERNELS_ACT_AVX512_H
#define NNP_KERNELS_ACT_AVX512_H

#include <immintrin.h>

#include "kernels/epilogue.h"
#include "kernels/exp_avx512.h"

/* Out of line: inlined into the tiles' stores, the e^x body cost the blocked 1x1 convs
 * (31 of 32 ZMMs live) 5% even where no SiLU runs (mobilenet_v2's step sum). */
static __attribute__((noinline, unused)) __m512 nnp_silu16(__m512 v) { /* v / (1 + e^-v), nnp_act_apply's formula */
  return _mm512_div_ps(v, _mm512_add_ps(_mm512_set1_ps(1.0f), nnp_exp16(_mm512_sub_ps(_mm512_setzero_ps(), v))));
}

/* Forced inline, as nnp_act8 is: left to GCC's inlining limits, the tiles called it out
 * of line, once per stored vector (1181 call sites, the 7x7 two-row tiles among them),
 * and more of them as their file grew (mobilenet_v2's 1x1 expand layers 13-22% slower). */
static inline __attribute__((always_inline)) __m512 nnp_act16(const nnp_epilogue *ep, __m512 v) {
  switch (ep->act) {
    case NNP_ACT_RELU: return _mm512_max_ps(v, _mm512_setzero_ps());
    case NNP_ACT_CLIP:
      return _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(ep->act_min)), _mm512_set1_ps(ep->act_max));
    case NNP_ACT_HARDSWISH: {
      __m512 t = _mm512_add_ps(v, _mm512_set1_ps(3.0f));
      t = _mm512_min_ps(_mm512_max_ps(t, _mm512_setzero_ps()), _mm512_set1_ps(6.0f));
      return _mm512_mul_ps(_mm512_mul_ps(v, t), _mm512_set1_ps(1.0f / 6.0f));
    }
    case NNP_ACT_SILU: return nnp_silu16(v);
    default: return v;
  }
}

#endif
