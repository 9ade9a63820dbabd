/* nnp_qrequant (kernels/qgemm.h) on 16 int32 lanes at once, for the AVX-512 INT8 kernels
 * (the u8 GEMM tiles and the depthwise quads): the same float32 operations in the same
 * order, so the bytes equal the scalar requantize's. s holds acc + bias already; the
 * result is clamped to [qmin, qmax] within 0..255, one byte per lane. Include only from
 * files compiled with -mavx512f. */
#ifndef NNP_KERNELS_QREQUANT_AVX512_H
#define NNP_KERNELS_QREQUANT_AVX512_H

#include <immintrin.h>

static inline __m128i nnp_qrequant16(__m512i s, __m512 mult, __m512 zp, __m512 lo, __m512 hi) {
  __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(s), mult);
  f = _mm512_add_ps(_mm512_roundscale_ps(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zp);
  f = _mm512_min_ps(_mm512_max_ps(f, lo), hi);
  return _mm512_cvtusepi32_epi8(_mm512_cvttps_epi32(f));
}

#endif
