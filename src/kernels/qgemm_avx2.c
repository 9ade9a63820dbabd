/* The AVX2 6 x 16 tile of the packed INT8 GEMM (kernels/qgemm.h): exact int16 pair
 * products by vpmaddwd into int32 accumulators, then the requantize epilogue in float
 * (the same operations, in the same order, as nnp_qrequant). This file alone is compiled
 * with -mavx2 -mfma; it is only called where the dispatch table (kernels/dispatch.h) picks AVX2. */
#include <immintrin.h>
#include <string.h>

#include "kernels/qdwconv.h"
#include "kernels/qgemm.h"

#if defined(__AVX2__)
#include "kernels/qgemm_store_avx2.h"

/* One (k, k+1) weight pair as an int32 in every lane: vpbroadcastd from memory
 * (_mm_loadu_si32 is an unaligned, aliasing-safe 4-byte load). */
static inline __m256i bcast_pair(const int16_t *p) { return _mm256_broadcastd_epi32(_mm_loadu_si32(p)); }

void nnp_qgemm_tile_avx2(int64_t K2, const int16_t *a, const int16_t *b, uint8_t *c, int64_t ldc, int mr, int nr,
                         const nnp_qepilogue *ep, int64_t i0) {
  __m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
  __m256i c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  for (int64_t kp = 0; kp < K2; kp++) {
    __m256i b0 = _mm256_loadu_si256((const __m256i *)b), b1 = _mm256_loadu_si256((const __m256i *)(b + 16)), av;
    av = bcast_pair(a + 0);
    c00 = _mm256_add_epi32(c00, _mm256_madd_epi16(av, b0)); c01 = _mm256_add_epi32(c01, _mm256_madd_epi16(av, b1));
    av = bcast_pair(a + 2);
    c10 = _mm256_add_epi32(c10, _mm256_madd_epi16(av, b0)); c11 = _mm256_add_epi32(c11, _mm256_madd_epi16(av, b1));
    av = bcast_pair(a + 4);
    c20 = _mm256_add_epi32(c20, _mm256_madd_epi16(av, b0)); c21 = _mm256_add_epi32(c21, _mm256_madd_epi16(av, b1));
    av = bcast_pair(a + 6);
    c30 = _mm256_add_epi32(c30, _mm256_madd_epi16(av, b0)); c31 = _mm256_add_epi32(c31, _mm256_madd_epi16(av, b1));
    av = bcast_pair(a + 8);
    c40 = _mm256_add_epi32(c40, _mm256_madd_epi16(av, b0)); c41 = _mm256_add_epi32(c41, _mm256_madd_epi16(av, b1));
    av = bcast_pair(a + 10);
    c50 = _mm256_add_epi32(c50, _mm256_madd_epi16(av, b0)); c51 = _mm256_add_epi32(c51, _mm256_madd_epi16(av, b1));
    a += NNP_QGEMM_MR * 2;
    b += NNP_QGEMM_NR * 2;
  }
  __m256i acc[6][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
  nnp_qtile_store_avx2(acc, c, ldc, mr, nr, ep, i0);
}

/* 16 bytes of channel k and of channel k+1 -> one pair row: (a - zp, b - zp) per column. */
static inline void pair_row(__m128i a8, __m128i b8, __m256i z, int16_t *dst) {
  __m256i a = _mm256_sub_epi16(_mm256_cvtepu8_epi16(a8), z), b = _mm256_sub_epi16(_mm256_cvtepu8_epi16(b8), z);
  /* per 128-bit lane: lo = columns 0-3 | 8-11, hi = 4-7 | 12-15, as (a, b) pairs */
  __m256i lo = _mm256_unpacklo_epi16(a, b), hi = _mm256_unpackhi_epi16(a, b);
  _mm256_storeu_si256((__m256i *)dst, _mm256_permute2x128_si256(lo, hi, 0x20));
  _mm256_storeu_si256((__m256i *)(dst + 16), _mm256_permute2x128_si256(lo, hi, 0x31));
}

void nnp_qim2col_pairs_avx2(const uint8_t *x, int64_t plane, int64_t C, int16_t zp, int16_t *dst) {
  const __m256i z = _mm256_set1_epi16(zp);
  for (int64_t ch = 0; ch < C; ch += 2, dst += NNP_QGEMM_NR * 2)
    pair_row(_mm_loadu_si128((const __m128i *)(x + ch * plane)),
             _mm_loadu_si128((const __m128i *)(x + (ch + 1 < C ? ch + 1 : ch) * plane)), z, dst);
}

void nnp_qim2col_pairs_gather_avx2(const uint8_t *x, int64_t plane, int64_t C, const int64_t *off, const bool *in,
                                   uint8_t zp, int16_t *dst) {
  const __m256i z = _mm256_set1_epi16(zp);
  uint8_t keep[16];
  for (int c = 0; c < 16; c++) keep[c] = in[c] ? 0xff : 0;
  /* padding columns read offset 0 (in bounds) and are then replaced by the zero point */
  const __m128i mask = _mm_loadu_si128((const __m128i *)keep), zb = _mm_set1_epi8((char)zp);
  for (int64_t ch = 0; ch < C; ch += 2, dst += NNP_QGEMM_NR * 2) {
    const uint8_t *s0 = x + ch * plane, *s1 = ch + 1 < C ? s0 + plane : s0;
    uint8_t t0[16], t1[16];
    for (int c = 0; c < 16; c++) {
      t0[c] = s0[off[c]];
      t1[c] = s1[off[c]];
    }
    pair_row(_mm_blendv_epi8(zb, _mm_loadu_si128((const __m128i *)t0), mask),
             _mm_blendv_epi8(zb, _mm_loadu_si128((const __m128i *)t1), mask), z, dst);
  }
}

void nnp_qim2col4_avx2(const uint8_t *x, int64_t plane, int64_t C, int64_t C4, uint8_t *dst) {
  for (int64_t ch = 0; ch < C4; ch += 4, dst += NNP_QGEMM_NR * 4) {
    __m128i v[4];
    for (int t = 0; t < 4; t++) /* phantom channels (>= C) repeat C-1: their weights are 0 */
      v[t] = _mm_loadu_si128((const __m128i *)(x + (ch + t < C ? ch + t : C - 1) * plane));
    nnp_qquad_row(v[0], v[1], v[2], v[3], dst);
  }
}

void nnp_qim2col4_gather_avx2(const uint8_t *x, int64_t plane, int64_t C, int64_t C4, const int64_t *off,
                              const bool *in, uint8_t pad, uint8_t *dst) {
  uint8_t keep[16];
  for (int c = 0; c < 16; c++) keep[c] = in[c] ? 0xff : 0;
  const __m128i mask = _mm_loadu_si128((const __m128i *)keep), pb = _mm_set1_epi8((char)pad);
  for (int64_t ch = 0; ch < C4; ch += 4, dst += NNP_QGEMM_NR * 4) {
    __m128i v[4];
    for (int t = 0; t < 4; t++) {
      const uint8_t *s = x + (ch + t < C ? ch + t : C - 1) * plane;
      uint8_t tmp[16];
      for (int c = 0; c < 16; c++) tmp[c] = s[off[c]]; /* padding columns read offset 0, then blended */
      v[t] = _mm_blendv_epi8(pb, _mm_loadu_si128((const __m128i *)tmp), mask);
    }
    nnp_qquad_row(v[0], v[1], v[2], v[3], dst);
  }
}

void nnp_qrequant_row_avx2(const int32_t *acc, int64_t n, const nnp_qepilogue *ep, int64_t row, uint8_t *y) {
  const __m256 zp = _mm256_set1_ps((float)ep->zp), lo = _mm256_set1_ps((float)ep->qmin),
               hi = _mm256_set1_ps((float)ep->qmax), mult = _mm256_set1_ps(ep->mult[row]);
  const __m256i bias = _mm256_set1_epi32(ep->bias ? ep->bias[row] : 0);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i a = _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(acc + i)), bias);
    __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(a), mult);
    f = _mm256_add_ps(_mm256_round_ps(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zp);
    f = _mm256_min_ps(_mm256_max_ps(f, lo), hi);
    __m256i q = _mm256_cvttps_epi32(f);
    __m128i q16 = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
    _mm_storel_epi64((__m128i *)(y + i), _mm_packus_epi16(q16, q16));
  }
  for (; i < n; i++) y[i] = nnp_qrequant(acc[i], ep, row);
}
#else
/* Built without AVX2 support in the compiler: never selected (see kernels/cpu.c). */
void nnp_qim2col4_avx2(const uint8_t *x, int64_t plane, int64_t C, int64_t C4, uint8_t *dst) {
  for (int64_t ch = 0; ch < C4; ch += 4, dst += NNP_QGEMM_NR * 4)
    for (int c = 0; c < NNP_QGEMM_NR; c++)
      for (int t = 0; t < 4; t++) dst[c * 4 + t] = x[(ch + t < C ? ch + t : C - 1) * plane + c];
}
void nnp_qim2col4_gather_avx2(const uint8_t *x, int64_t plane, int64_t C, int64_t C4, const int64_t *off,
                              const bool *in, uint8_t pad, uint8_t *dst) {
  for (int64_t ch = 0; ch < C4; ch += 4, dst += NNP_QGEMM_NR * 4)
    for (int c = 0; c < NNP_QGEMM_NR; c++)
      for (int t = 0; t < 4; t++) dst[c * 4 + t] = in[c] ? x[(ch + t < C ? ch + t : C - 1) * plane + off[c]] : pad;
}
void nnp_qrequant_row_avx2(const int32_t *acc, int64_t n, const nnp_qepilogue *ep, int64_t row, uint8_t *y) {
  for (int64_t i = 0; i < n; i++) y[i] = nnp_qrequant(acc[i], ep, row);
}
void nnp_qim2col_pairs_gather_avx2(const uint8_t *x, int64_t plane, int64_t C, const int64_t *off, const bool *in,
                                   uint8_t zp, int16_t *dst) {
  for (int64_t ch = 0; ch < C; ch += 2, dst += NNP_QGEMM_NR * 2)
    for (int c = 0; c < NNP_QGEMM_NR; c++) {
      dst[c * 2] = in[c] ? (int16_t)(x[ch * plane + off[c]] - zp) : 0;
      dst[c * 2 + 1] = in[c] ? (int16_t)(x[(ch + 1 < C ? ch + 1 : ch) * plane + off[c]] - zp) : 0;
    }
}
void nnp_qim2col_pairs_avx2(const uint8_t *x, int64_t plane, int64_t C, int16_t zp, int16_t *dst) {
  for (int64_t ch = 0; ch < C; ch += 2, dst += NNP_QGEMM_NR * 2)
    for (int c = 0; c < NNP_QGEMM_NR; c++) {
      dst[c * 2] = (int16_t)(x[ch * plane + c] - zp);
      dst[c * 2 + 1] = (int16_t)(x[(ch + 1 < C ? ch + 1 : ch) * plane + c] - zp);
    }
}
void nnp_qgemm_tile_avx2(int64_t K2, const int16_t *a, const int16_t *b, uint8_t *c, int64_t ldc, int mr, int nr,
                         const nnp_qepilogue *ep, int64_t i0) {
  nnp_qgemm_tile_generic(K2, a, b, c, ldc, mr, nr, ep, i0);
}
#endif
