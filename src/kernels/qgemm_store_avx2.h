/* The stores shared by the AVX2 and the AVX-512 VNNI files of the INT8 GEMM
 * (kernels/qgemm.h): the requantize-and-store of a finished 6 x 16 int32 tile (the float32
 * operations of nnp_qrequant, 16 bytes per row; partial tiles go through nnp_qrequant
 * itself), and the u8 layout's im2col group row. Included only by files compiled with
 * -mavx2. */
#ifndef NNP_KERNELS_QGEMM_STORE_AVX2_H
#define NNP_KERNELS_QGEMM_STORE_AVX2_H

#include <immintrin.h>

#include "kernels/qgemm.h"

/* 16 bytes of each of 4 channels -> the 64-byte group row: column c's 4 channel bytes. */
static inline void nnp_qquad_row(__m128i v0, __m128i v1, __m128i v2, __m128i v3, uint8_t *dst) {
  __m128i a = _mm_unpacklo_epi8(v0, v1), b = _mm_unpackhi_epi8(v0, v1);
  __m128i c = _mm_unpacklo_epi8(v2, v3), d = _mm_unpackhi_epi8(v2, v3);
  _mm_storeu_si128((__m128i *)dst, _mm_unpacklo_epi16(a, c));
  _mm_storeu_si128((__m128i *)(dst + 16), _mm_unpackhi_epi16(a, c));
  _mm_storeu_si128((__m128i *)(dst + 32), _mm_unpacklo_epi16(b, d));
  _mm_storeu_si128((__m128i *)(dst + 48), _mm_unpackhi_epi16(b, d));
}

static inline void nnp_qtile_store_avx2(__m256i acc[6][2], uint8_t *c, int64_t ldc, int mr, int nr,
                                        const nnp_qepilogue *ep, int64_t i0) {
  if (nr == NNP_QGEMM_NR) {
    const __m256 zp = _mm256_set1_ps((float)ep->zp), lo = _mm256_set1_ps((float)ep->qmin),
                 hi = _mm256_set1_ps((float)ep->qmax);
    for (int r = 0; r < mr; r++) {
      __m256i bias = _mm256_set1_epi32(ep->bias ? ep->bias[i0 + r] : 0);
      __m256 mult = _mm256_set1_ps(ep->mult[i0 + r]);
      __m256i q[2];
      for (int h = 0; h < 2; h++) {
        __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(acc[r][h], bias)), mult);
        f = _mm256_add_ps(_mm256_round_ps(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zp);
        f = _mm256_min_ps(_mm256_max_ps(f, lo), hi);
        q[h] = _mm256_cvttps_epi32(f);
      }
      /* 16 int32 in [0, 255] -> 16 bytes in column order (packs works per 128-bit lane) */
      __m256i p16 = _mm256_permute4x64_epi64(_mm256_packs_epi32(q[0], q[1]), 0xd8);
      __m128i p8 = _mm_packus_epi16(_mm256_castsi256_si128(p16), _mm256_extracti128_si256(p16, 1));
      _mm_storeu_si128((__m128i *)(c + r * ldc), p8);
    }
    return;
  }
  int32_t tmp[6][16];
  for (int r = 0; r < mr; r++) {
    _mm256_storeu_si256((__m256i *)tmp[r], acc[r][0]);
    _mm256_storeu_si256((__m256i *)(tmp[r] + 8), acc[r][1]);
  }
  for (int r = 0; r < mr; r++)
    for (int j = 0; j < nr; j++) c[r * ldc + j] = nnp_qrequant(tmp[r][j], ep, i0 + r);
}

#endif
