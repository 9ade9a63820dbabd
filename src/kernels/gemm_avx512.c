/* The AVX-512F 6 x 16 tile of the packed SGEMM (kernels/gemm.h): the AVX2 tile's
 * geometry and packing, one ZMM accumulator per row. This file alone is compiled with
 * -mavx512f; it is only called after nnp_cpu_has_avx512f().
 *
 * Why, on a CPU whose 512-bit FMA peak equals its 256-bit one (AMD Zen 4 runs a ZMM
 * FMA as two 256-bit halves: bench_gemm_gflops measures both peaks): per k the AVX2 tile
 * issues 2 B loads, 6 broadcasts and 12 FMAs, this one 1 load, 6 broadcasts and 6 FMAs
 * for the same work, so fewer instructions compete for the front end and load ports;
 * and masked loads and stores make a ragged tile (nr < 16, resnet18's 7x7 and 14x14
 * planes) as cheap as a full one instead of a scalar copy. */
#include <immintrin.h>

#include "kernels/gemm.h"

#if defined(__AVX512F__)
static inline __m512 act16(const nnp_epilogue *ep, __m512 v) {
  switch (ep->act) {
    case NNP_ACT_RELU: return _mm512_max_ps(v, _mm512_setzero_ps());
    case NNP_ACT_CLIP:
      return _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(ep->act_min)), _mm512_set1_ps(ep->act_max));
    case NNP_ACT_HARDSWISH: {
      __m512 t = _mm512_add_ps(v, _mm512_set1_ps(3.0f));
      t = _mm512_min_ps(_mm512_max_ps(t, _mm512_setzero_ps()), _mm512_set1_ps(6.0f));
      return _mm512_mul_ps(_mm512_mul_ps(v, t), _mm512_set1_ps(1.0f / 6.0f));
    }
    default: return v;
  }
}

void nnp_sgemm_tile_avx512(int64_t K, const float *a, const float *b, int64_t ldb, float *c, int64_t ldc, int mr,
                           int nr, bool accum, const nnp_epilogue *ep, int64_t i0, int64_t j0) {
  const __mmask16 m = (__mmask16)((1u << nr) - 1u);
  __m512 c0 = _mm512_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0;
  if (accum) { /* a later K block: continue from the partial sums in C */
    __m512 *acc[6] = {&c0, &c1, &c2, &c3, &c4, &c5};
    for (int r = 0; r < mr; r++) *acc[r] = _mm512_maskz_loadu_ps(m, c + r * ldc);
  }
  for (int64_t k = 0; k < K; k++) {
    __m512 bv = _mm512_loadu_ps(b);
    c0 = _mm512_fmadd_ps(_mm512_set1_ps(a[0]), bv, c0);
    c1 = _mm512_fmadd_ps(_mm512_set1_ps(a[1]), bv, c1);
    c2 = _mm512_fmadd_ps(_mm512_set1_ps(a[2]), bv, c2);
    c3 = _mm512_fmadd_ps(_mm512_set1_ps(a[3]), bv, c3);
    c4 = _mm512_fmadd_ps(_mm512_set1_ps(a[4]), bv, c4);
    c5 = _mm512_fmadd_ps(_mm512_set1_ps(a[5]), bv, c5);
    a += NNP_SGEMM_MR;
    b += ldb;
  }
  __m512 acc[6] = {c0, c1, c2, c3, c4, c5};
  if (ep && ep->act == NNP_ACT_SIGMOID) { /* scalar expf: through a buffer */
    float t[16];
    for (int r = 0; r < mr; r++) {
      _mm512_storeu_ps(t, acc[r]);
      for (int j = 0; j < nr; j++) c[r * ldc + j] = nnp_epilogue_apply(ep, i0 + r, j0 + j, t[j]);
    }
    return;
  }
  for (int r = 0; r < mr; r++) {
    __m512 v = acc[r];
    if (ep) {
      if (ep->bias_kind == NNP_BIAS_ROW) v = _mm512_add_ps(v, _mm512_set1_ps(ep->bias[i0 + r]));
      else if (ep->bias_kind == NNP_BIAS_COL) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, ep->bias + j0));
      if (ep->residual) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, ep->residual + (i0 + r) * ep->ld_res + j0));
      v = act16(ep, v);
    }
    _mm512_mask_storeu_ps(c + r * ldc, m, v);
  }
}
#else
/* Built without AVX-512 support in the compiler: never selected (see kernels/cpu.c). */
void nnp_sgemm_tile_avx512(int64_t K, const float *a, const float *b, int64_t ldb, float *c, int64_t ldc, int mr,
                           int nr, bool accum, const nnp_epilogue *ep, int64_t i0, int64_t j0) {
  nnp_sgemm_tile_avx2(K, a, b, ldb, c, ldc, mr, nr, accum, ep, i0, j0);
}
#endif
