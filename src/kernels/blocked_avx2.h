/* One NCHW16c pixel (16 channels) as two YMM halves, and its epilogue, for the AVX2 tiles
 * of the blocked layout (blocked_conv_avx2.c, blocked_conv_nchw_in_avx2.c). The layout's
 * block stays 16 wide on AVX2, so that one packing, one pass and one set of reorders serve
 * both ISAs; a tile's accumulator is a pair of YMMs instead of one ZMM.
 * Include only from files compiled with -mavx2 -mfma. */
#ifndef NNP_KERNELS_BLOCKED_AVX2_H
#define NNP_KERNELS_BLOCKED_AVX2_H

#include <immintrin.h>
#include <stdint.h>

#include "kernels/act_avx2.h"
#include "kernels/blocked_conv.h"

/* bias (16 floats, 32-byte aligned), residual r (or NULL, read before y is written: y may
 * be r), activation, then the lanes past valid stored as 0, as the generic kernels do. */
static inline __attribute__((always_inline)) void nnp_blocked_store16_avx2(const float *bias, const nnp_epilogue *ep,
                                                                          int64_t valid, __m256 lo, __m256 hi,
                                                                          const float *r, float *y) {
  lo = _mm256_add_ps(lo, _mm256_load_ps(bias));
  hi = _mm256_add_ps(hi, _mm256_load_ps(bias + 8));
  if (r) {
    lo = _mm256_add_ps(lo, _mm256_loadu_ps(r));
    hi = _mm256_add_ps(hi, _mm256_loadu_ps(r + 8));
  }
  if (ep->act == NNP_ACT_SIGMOID || valid < NNP_BLOCK) { /* scalar expf, as the generic kernel; ragged last block */
    float t[NNP_BLOCK];
    _mm256_storeu_ps(t, lo);
    _mm256_storeu_ps(t + 8, hi);
    for (int l = 0; l < NNP_BLOCK; l++) y[l] = l < valid ? nnp_act_apply(ep, t[l]) : 0.0f;
    return;
  }
  _mm256_storeu_ps(y, nnp_act8(ep, lo));
  _mm256_storeu_ps(y + 8, nnp_act8(ep, hi));
}

#endif
