/* AVX2 bodies of the INT8 elementwise kernels (kernels/qeltwise.h): 8 elements per step in
 * float32 with the scalar functions' operations (vdivps, vroundps to nearest even, max
 * with the NaN-absorbing operand order), then the scalar functions for the tail. */
#include <immintrin.h>

#include "kernels/qeltwise.h"

#if defined(__AVX2__)
/* 8 uint8 -> 8 float32 of (q - zp) */
static inline __m256 load_shifted(const uint8_t *p, __m256i zp) {
  __m256i q = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p));
  return _mm256_cvtepi32_ps(_mm256_sub_epi32(q, zp));
}

/* rint(rint(x / scale) + zp) saturated to [0, 255], stored as 8 bytes. _mm256_max_ps(f,
 * lo) returns lo when f is NaN, as the scalar `!(r >= 0)` does. */
static inline void store_quantized(uint8_t *y, __m256 x, __m256 scale, __m256 zp) {
  const __m256 lo = _mm256_setzero_ps(), hi = _mm256_set1_ps(255.0f);
  __m256 f = _mm256_round_ps(_mm256_div_ps(x, scale), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  f = _mm256_add_ps(f, zp);
  f = _mm256_min_ps(_mm256_max_ps(f, lo), hi);
  __m256i q = _mm256_cvttps_epi32(f);
  __m128i q16 = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
  _mm_storel_epi64((__m128i *)y, _mm_packus_epi16(q16, q16));
}

void nnp_quantize_u8_avx2(const float *x, uint8_t *y, int64_t n, float scale, int32_t zp) {
  const __m256 s = _mm256_set1_ps(scale), z = _mm256_set1_ps((float)zp);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) store_quantized(y + i, _mm256_loadu_ps(x + i), s, z);
  for (; i < n; i++) y[i] = nnp_quantize_one(x[i], scale, zp);
}

void nnp_dequantize_u8_avx2(const uint8_t *x, float *y, int64_t n, float scale, int32_t zp) {
  const __m256 s = _mm256_set1_ps(scale);
  const __m256i z = _mm256_set1_epi32(zp);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_mul_ps(load_shifted(x + i, z), s));
  for (; i < n; i++) y[i] = nnp_dequantize_one(x[i], scale, zp);
}

void nnp_qadd_u8_avx2(const uint8_t *a, const uint8_t *b, uint8_t *y, int64_t n, const nnp_qadd_params *p) {
  const __m256 as = _mm256_set1_ps(p->a_scale), bs = _mm256_set1_ps(p->b_scale), ys = _mm256_set1_ps(p->y_scale),
               yz = _mm256_set1_ps((float)p->y_zp), lo = _mm256_set1_ps(p->lo), hi = _mm256_set1_ps(p->hi);
  const __m256i az = _mm256_set1_epi32(p->a_zp), bz = _mm256_set1_epi32(p->b_zp);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 s = _mm256_add_ps(_mm256_mul_ps(load_shifted(a + i, az), as), _mm256_mul_ps(load_shifted(b + i, bz), bs));
    /* max(lo, s) / min(hi, s) return s when s is NaN or equal, as `s < lo ? lo : s` does */
    if (p->act) s = _mm256_min_ps(hi, _mm256_max_ps(lo, s));
    store_quantized(y + i, s, ys, yz);
  }
  for (; i < n; i++) y[i] = nnp_qadd_one(a[i], b[i], p);
}
#else
/* Built without AVX2 support in the compiler: never selected (see kernels/cpu.c). */
void nnp_quantize_u8_avx2(const float *x, uint8_t *y, int64_t n, float scale, int32_t zp) {
  for (int64_t i = 0; i < n; i++) y[i] = nnp_quantize_one(x[i], scale, zp);
}
void nnp_dequantize_u8_avx2(const uint8_t *x, float *y, int64_t n, float scale, int32_t zp) {
  for (int64_t i = 0; i < n; i++) y[i] = nnp_dequantize_one(x[i], scale, zp);
}
void nnp_qadd_u8_avx2(const uint8_t *a, const uint8_t *b, uint8_t *y, int64_t n, const nnp_qadd_params *p) {
  for (int64_t i = 0; i < n; i++) y[i] = nnp_qadd_one(a[i], b[i], p);
}
#endif
