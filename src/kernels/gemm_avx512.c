/* The AVX-512F 6 x 16 tile of the packed SGEMM (kernels/gemm.h): the AVX2 tile's
 * geometry and packing, two ZMM accumulators per row (even and odd k). This file alone
 * is compiled with -mavx512f; it is only called where the dispatch table (kernels/dispatch.h) picks AVX-512.
 *
 * Why, on a CPU whose 512-bit FMA peak equals its 256-bit one (AMD Zen 4 runs a ZMM
 * FMA as two 256-bit halves: bench_gemm_gflops measures both peaks): per k the AVX2 tile
 * issues 2 B loads, 6 broadcasts and 12 FMAs, this one 1 load, 6 broadcasts and 6 FMAs
 * for the same work, so fewer instructions compete for the front end and load ports;
 * and masked loads and stores make a ragged tile (nr < 16, resnet18's 7x7 and 14x14
 * planes) as cheap as a full one instead of a scalar copy. */
#include <immintrin.h>

#include "kernels/gemm.h"

#if defined(__AVX512F__) && defined(__AVX512VL__)
#include "kernels/act_avx512.h"

/* Row i of a tile, columns j0..j0+nr: the epilogue (bias, residual, activation) on the
 * 16 sums, stored under a mask (the tile and the one-row GEMV). */
static inline void store_row16(const nnp_epilogue *ep, __m512 v, float *c, int64_t i, int64_t j0, int nr) {
  const __mmask16 m = (__mmask16)((1u << nr) - 1u);
  if (ep && ep->act == NNP_ACT_SIGMOID) { /* scalar expf: through a buffer */
    float t[16];
    _mm512_storeu_ps(t, v);
    for (int j = 0; j < nr; j++) c[j] = nnp_epilogue_apply(ep, i, j0 + j, t[j]);
    return;
  }
  if (ep) {
    if (ep->bias_kind == NNP_BIAS_ROW) v = _mm512_add_ps(v, _mm512_set1_ps(ep->bias[i]));
    else if (ep->bias_kind == NNP_BIAS_COL) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, ep->bias + j0));
    if (ep->residual) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, ep->residual + i * ep->ld_res + j0));
    v = nnp_act16(ep, v);
  }
  _mm512_mask_storeu_ps(c, m, v);
}

/* A panel with one column (7x7 planes: N = 49 = 3 x 16 + 1): the full tile spends 6 FMAs
 * per k on it, a quarter of the layer. Here the 6 rows are the vector, loaded from A's
 * k-major panel (masked: the last k's 8 lanes would read past the panel), times B(k)
 * broadcast; 4 chains over k hide the FMA latency. About 1/6 of the full tile's FMAs. */
static void tile_6x1(int64_t K, const float *a, const float *b, int64_t ldb, float *c, int64_t ldc, int mr,
                     bool accum, const nnp_epilogue *ep, int64_t i0, int64_t j0) {
  const __mmask8 m6 = 0x3f;
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  int64_t k = 0;
  for (; k + 4 <= K; k += 4) {
    s0 = _mm256_fmadd_ps(_mm256_maskz_loadu_ps(m6, a + (k + 0) * NNP_SGEMM_MR), _mm256_set1_ps(b[(k + 0) * ldb]), s0);
    s1 = _mm256_fmadd_ps(_mm256_maskz_loadu_ps(m6, a + (k + 1) * NNP_SGEMM_MR), _mm256_set1_ps(b[(k + 1) * ldb]), s1);
    s2 = _mm256_fmadd_ps(_mm256_maskz_loadu_ps(m6, a + (k + 2) * NNP_SGEMM_MR), _mm256_set1_ps(b[(k + 2) * ldb]), s2);
    s3 = _mm256_fmadd_ps(_mm256_maskz_loadu_ps(m6, a + (k + 3) * NNP_SGEMM_MR), _mm256_set1_ps(b[(k + 3) * ldb]), s3);
  }
  for (; k < K; k++)
    s0 = _mm256_fmadd_ps(_mm256_maskz_loadu_ps(m6, a + k * NNP_SGEMM_MR), _mm256_set1_ps(b[k * ldb]), s0);
  float t[8];
  _mm256_storeu_ps(t, _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
  for (int r = 0; r < mr; r++) {
    float v = accum ? c[r * ldc] + t[r] : t[r];
    c[r * ldc] = nnp_epilogue_apply(ep, i0 + r, j0, v);
  }
}

void nnp_sgemm_tile_avx512(int64_t K, const float *a, const float *b, int64_t ldb, float *c, int64_t ldc, int mr,
                           int nr, bool accum, const nnp_epilogue *ep, int64_t i0, int64_t j0) {
  if (nr == 1) {
    tile_6x1(K, a, b, ldb, c, ldc, mr, accum, ep, i0, j0);
    return;
  }
  const __mmask16 m = (__mmask16)((1u << nr) - 1u);
  __m512 c0 = _mm512_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0;
  if (accum) { /* a later K block: continue from the partial sums in C */
    __m512 *acc[6] = {&c0, &c1, &c2, &c3, &c4, &c5};
    for (int r = 0; r < mr; r++) *acc[r] = _mm512_maskz_loadu_ps(m, c + r * ldc);
  }
  /* Odd k into a second set of accumulators: 6 chains of dependent FMAs cannot keep
   * two 512-bit FMA pipes with a 4-cycle latency busy (that takes 8); 12 can. */
  __m512 d0 = _mm512_setzero_ps(), d1 = d0, d2 = d0, d3 = d0, d4 = d0, d5 = d0;
  int64_t k = 0;
  for (; k + 2 <= K; k += 2) {
    __m512 bv = _mm512_loadu_ps(b), bw = _mm512_loadu_ps(b + ldb);
    c0 = _mm512_fmadd_ps(_mm512_set1_ps(a[0]), bv, c0);
    c1 = _mm512_fmadd_ps(_mm512_set1_ps(a[1]), bv, c1);
    c2 = _mm512_fmadd_ps(_mm512_set1_ps(a[2]), bv, c2);
    c3 = _mm512_fmadd_ps(_mm512_set1_ps(a[3]), bv, c3);
    c4 = _mm512_fmadd_ps(_mm512_set1_ps(a[4]), bv, c4);
    c5 = _mm512_fmadd_ps(_mm512_set1_ps(a[5]), bv, c5);
    d0 = _mm512_fmadd_ps(_mm512_set1_ps(a[6]), bw, d0);
    d1 = _mm512_fmadd_ps(_mm512_set1_ps(a[7]), bw, d1);
    d2 = _mm512_fmadd_ps(_mm512_set1_ps(a[8]), bw, d2);
    d3 = _mm512_fmadd_ps(_mm512_set1_ps(a[9]), bw, d3);
    d4 = _mm512_fmadd_ps(_mm512_set1_ps(a[10]), bw, d4);
    d5 = _mm512_fmadd_ps(_mm512_set1_ps(a[11]), bw, d5);
    a += 2 * NNP_SGEMM_MR;
    b += 2 * ldb;
  }
  for (; k < K; k++) {
    __m512 bv = _mm512_loadu_ps(b);
    c0 = _mm512_fmadd_ps(_mm512_set1_ps(a[0]), bv, c0);
    c1 = _mm512_fmadd_ps(_mm512_set1_ps(a[1]), bv, c1);
    c2 = _mm512_fmadd_ps(_mm512_set1_ps(a[2]), bv, c2);
    c3 = _mm512_fmadd_ps(_mm512_set1_ps(a[3]), bv, c3);
    c4 = _mm512_fmadd_ps(_mm512_set1_ps(a[4]), bv, c4);
    c5 = _mm512_fmadd_ps(_mm512_set1_ps(a[5]), bv, c5);
  }
  c0 = _mm512_add_ps(c0, d0);
  c1 = _mm512_add_ps(c1, d1);
  c2 = _mm512_add_ps(c2, d2);
  c3 = _mm512_add_ps(c3, d3);
  c4 = _mm512_add_ps(c4, d4);
  c5 = _mm512_add_ps(c5, d5);
  const __m512 acc[6] = {c0, c1, c2, c3, c4, c5};
  for (int r = 0; r < mr; r++) store_row16(ep, acc[r], c + r * ldc, i0 + r, j0, nr);
}

/* Two column panels side by side (6 x 32): columns [j0, j0 + 16) from b0 (rows ldb0
 * apart), [j0 + 16, j0 + nr) from b1 (ldb1), 17 < nr <= 32. Why: per pair of k the 6 x 16
 * tile loads 2 B vectors and broadcasts 12 A values for 12 FMAs; this one shares the
 * broadcasts between the two panels, 4 loads and 12 broadcasts for 24 FMAs, which lets
 * a CPU with two full-width 512-bit FMA pipes (AMD Zen 5) get near its peak: alone on
 * L1-resident panels (K = 256) 197 -> 231 GFLOP/s of 240. Each column sums exactly as
 * the 6 x 16 tile does (even k, odd k, added at the end), so the bits are the same. */
static void tile_6x32(int64_t K, const float *a, const float *b0, int64_t ldb0, const float *b1, int64_t ldb1,
                      float *c, int64_t ldc, int mr, int nr, bool accum, const nnp_epilogue *ep, int64_t i0,
                      int64_t j0) {
  const __mmask16 m1 = (__mmask16)((1u << (nr - 16)) - 1u);
  __m512 s[6], t[6], u[6], v[6]; /* panel 0 even k, panel 1 even k, panel 0 odd k, panel 1 odd k */
#pragma GCC unroll 6
  for (int r = 0; r < 6; r++) s[r] = t[r] = u[r] = v[r] = _mm512_setzero_ps();
  if (accum)
    for (int r = 0; r < mr; r++) s[r] = _mm512_loadu_ps(c + r * ldc), t[r] = _mm512_maskz_loadu_ps(m1, c + r * ldc + 16);
  int64_t k = 0;
  for (; k + 2 <= K; k += 2) {
    const __m512 p0 = _mm512_loadu_ps(b0), q0 = _mm512_loadu_ps(b1);
    const __m512 p1 = _mm512_loadu_ps(b0 + ldb0), q1 = _mm512_loadu_ps(b1 + ldb1);
#pragma GCC unroll 6
    for (int r = 0; r < 6; r++) {
      const __m512 ar = _mm512_set1_ps(a[r]);
      s[r] = _mm512_fmadd_ps(ar, p0, s[r]);
      t[r] = _mm512_fmadd_ps(ar, q0, t[r]);
    }
#pragma GCC unroll 6
    for (int r = 0; r < 6; r++) {
      const __m512 ar = _mm512_set1_ps(a[6 + r]);
      u[r] = _mm512_fmadd_ps(ar, p1, u[r]);
      v[r] = _mm512_fmadd_ps(ar, q1, v[r]);
    }
    a += 2 * NNP_SGEMM_MR;
    b0 += 2 * ldb0;
    b1 += 2 * ldb1;
  }
  if (k < K) {
    const __m512 p0 = _mm512_loadu_ps(b0), q0 = _mm512_loadu_ps(b1);
#pragma GCC unroll 6
    for (int r = 0; r < 6; r++) {
      s[r] = _mm512_fmadd_ps(_mm512_set1_ps(a[r]), p0, s[r]);
      t[r] = _mm512_fmadd_ps(_mm512_set1_ps(a[r]), q0, t[r]);
    }
  }
  for (int r = 0; r < mr; r++) {
    store_row16(ep, _mm512_add_ps(s[r], u[r]), c + r * ldc, i0 + r, j0, 16);
    store_row16(ep, _mm512_add_ps(t[r], v[r]), c + r * ldc + 16, i0 + r, j0 + 16, nr - 16);
  }
}

void nnp_sgemm_tile2_avx512(int64_t K, const float *a, const float *b0, int64_t ldb0, const float *b1, int64_t ldb1,
                            float *c, int64_t ldc, int mr, int nr, bool accum, const nnp_epilogue *ep, int64_t i0,
                            int64_t j0) {
  tile_6x32(K, a, b0, ldb0, b1, ldb1, c, ldc, mr, nr, accum, ep, i0, j0);
}

/* One row of C (M = 1: a fully connected layer at batch 1), one column panel (nr > 1
 * columns from j0): the 6-row tile would spend six FMAs per loaded B vector on one real
 * row; here each k is one FMA and the packed panel streams through once (the layer is
 * memory-bound: EfficientNet-Lite0's and mobilenet_v2's classifier is 1280 x 1000
 * floats, 5 MB). The sums follow the tile's order exactly (per K block of kc: even k in
 * one chain that starts from the earlier blocks' sum, odd k in another, added at the
 * block's end), so an image gives the same bits at batch 1 as inside a batch (batch
 * lanes, tests/unit/test_batch_lanes.c). */
/* np (1..4) panels side by side: four streams in flight hide more of the memory latency
 * than one (each panel's sums keep their order). */
static inline void sgemv_panels(int64_t K, int64_t kc, const float *Ap, const float *b, float *c, int64_t N,
                                const nnp_epilogue *ep, int64_t j0, const int np) {
  __m512 sum[4];
#pragma GCC unroll 4
  for (int q = 0; q < np; q++) sum[q] = _mm512_setzero_ps();
  const int64_t ps = K * NNP_SGEMM_NR; /* panel stride */
  for (int64_t k0 = 0; k0 < K; k0 += kc) {
    const int64_t k1 = K - k0 < kc ? K : k0 + kc;
    __m512 s[4], d[4];
#pragma GCC unroll 4
    for (int q = 0; q < np; q++) s[q] = sum[q], d[q] = _mm512_setzero_ps();
    int64_t k = k0;
    for (; k + 2 <= k1; k += 2) {
      const __m512 a0 = _mm512_set1_ps(Ap[k * NNP_SGEMM_MR]), a1 = _mm512_set1_ps(Ap[(k + 1) * NNP_SGEMM_MR]);
#pragma GCC unroll 4
      for (int q = 0; q < np; q++) {
        s[q] = _mm512_fmadd_ps(a0, _mm512_loadu_ps(b + q * ps + k * NNP_SGEMM_NR), s[q]);
        d[q] = _mm512_fmadd_ps(a1, _mm512_loadu_ps(b + q * ps + (k + 1) * NNP_SGEMM_NR), d[q]);
      }
    }
    if (k < k1) {
      const __m512 a0 = _mm512_set1_ps(Ap[k * NNP_SGEMM_MR]);
#pragma GCC unroll 4
      for (int q = 0; q < np; q++) s[q] = _mm512_fmadd_ps(a0, _mm512_loadu_ps(b + q * ps + k * NNP_SGEMM_NR), s[q]);
    }
#pragma GCC unroll 4
    for (int q = 0; q < np; q++) sum[q] = _mm512_add_ps(s[q], d[q]);
  }
#pragma GCC unroll 4
  for (int q = 0; q < np; q++) {
    const int64_t jq = j0 + q * NNP_SGEMM_NR;
    store_row16(ep, sum[q], c + q * NNP_SGEMM_NR, 0, jq, (int)(N - jq < NNP_SGEMM_NR ? N - jq : NNP_SGEMM_NR));
  }
}

void nnp_sgemv_panel_avx512(int64_t K, int64_t kc, const float *Ap, const float *b, float *c, int64_t N,
                            const nnp_epilogue *ep, int64_t j0, int np) {
  switch (np) {
    case 4: sgemv_panels(K, kc, Ap, b, c, N, ep, j0, 4); break;
    case 3: sgemv_panels(K, kc, Ap, b, c, N, ep, j0, 3); break;
    case 2: sgemv_panels(K, kc, Ap, b, c, N, ep, j0, 2); break;
    default: sgemv_panels(K, kc, Ap, b, c, N, ep, j0, 1); break;
  }
}
#else
/* Built without AVX-512 support in the compiler: never selected (see kernels/cpu.c). */
void nnp_sgemm_tile_avx512(int64_t K, const float *a, const float *b, int64_t ldb, float *c, int64_t ldc, int mr,
                           int nr, bool accum, const nnp_epilogue *ep, int64_t i0, int64_t j0) {
  nnp_sgemm_tile_avx2(K, a, b, ldb, c, ldc, mr, nr, accum, ep, i0, j0);
}
void nnp_sgemm_tile2_avx512(int64_t K, const float *a, const float *b0, int64_t ldb0, const float *b1, int64_t ldb1,
                            float *c, int64_t ldc, int mr, int nr, bool accum, const nnp_epilogue *ep, int64_t i0,
                            int64_t j0) {
  nnp_sgemm_tile_avx2(K, a, b0, ldb0, c, ldc, mr, 16, accum, ep, i0, j0);
  nnp_sgemm_tile_avx2(K, a, b1, ldb1, c + 16, ldc, mr, nr - 16, accum, ep, i0, j0 + 16);
}
void nnp_sgemv_panel_avx512(int64_t K, int64_t kc, const float *Ap, const float *b, float *c, int64_t N,
                            const nnp_epilogue *ep, int64_t j0, int np) {
  (void)kc;
  for (int q = 0; q < np; q++) {
    const int64_t jq = j0 + q * NNP_SGEMM_NR;
    nnp_sgemm_tile_avx2(K, Ap, b + q * K * NNP_SGEMM_NR, NNP_SGEMM_NR, c + q * NNP_SGEMM_NR, 0, 1,
                        (int)(N - jq < NNP_SGEMM_NR ? N - jq : NNP_SGEMM_NR), false, ep, 0, jq);
  }
}
#endif
