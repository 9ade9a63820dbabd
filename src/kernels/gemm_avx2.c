/* The AVX2 + FMA 6 x 16 tile of the packed SGEMM (kernels/gemm.h). This file alone is
 * compiled with -mavx2 -mfma; it is only called where the dispatch table (kernels/dispatch.h) picks AVX2. */
#include <immintrin.h>
#include <math.h>

#include "kernels/act_avx2.h"
#include "kernels/gemm.h"

#if defined(__AVX2__) && defined(__FMA__)
/* A ragged last column panel of at most 8 columns (resnet18's 7x7 planes: N = 49 =
 * 3 x 16 + 1) as a 6 x 8 tile: half the FMAs of the full tile, which spent 16 lanes on
 * one column. */
static void tile_6x8(int64_t K, const float *a, const float *b, int64_t ldb, float *c, int64_t ldc, int mr, int nr,
                     bool accum, const nnp_epilogue *ep, int64_t i0, int64_t j0) {
  __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0;
  float t[NNP_SGEMM_MR][8] = {{0}};
  if (accum) {
    for (int r = 0; r < mr; r++)
      for (int j = 0; j < nr; j++) t[r][j] = c[r * ldc + j];
    c0 = _mm256_loadu_ps(t[0]); c1 = _mm256_loadu_ps(t[1]); c2 = _mm256_loadu_ps(t[2]);
    c3 = _mm256_loadu_ps(t[3]); c4 = _mm256_loadu_ps(t[4]); c5 = _mm256_loadu_ps(t[5]);
  }
  for (int64_t k = 0; k < K; k++) {
    __m256 b0 = _mm256_loadu_ps(b);
    c0 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + 0), b0, c0);
    c1 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + 1), b0, c1);
    c2 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + 2), b0, c2);
    c3 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + 3), b0, c3);
    c4 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + 4), b0, c4);
    c5 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + 5), b0, c5);
    a += NNP_SGEMM_MR;
    b += ldb;
  }
  _mm256_storeu_ps(t[0], c0); _mm256_storeu_ps(t[1], c1); _mm256_storeu_ps(t[2], c2);
  _mm256_storeu_ps(t[3], c3); _mm256_storeu_ps(t[4], c4); _mm256_storeu_ps(t[5], c5);
  for (int r = 0; r < mr; r++)
    for (int j = 0; j < nr; j++) c[r * ldc + j] = nnp_epilogue_apply(ep, i0 + r, j0 + j, t[r][j]);
}

/* The first mr rows of a full-width tile through the epilogue into C, act a constant
 * after inlining (one copy per activation, chosen once per tile). The row loop used to
 * run to a run-time mr with nnp_act8's switch on every vector: GCC stored all twelve
 * accumulators to the stack to index them by row and reloaded them, and branched on the
 * activation six times a tile (perf annotate of a K = 16 layer, where the FMA loop is
 * 96 of a tile's ~170 cycles). Unrolled, the accumulators stay in registers. The same
 * operations in the same order: the same bits. */
static inline __attribute__((always_inline)) void store_wide(__m256 acc[6][2], float *c, int64_t ldc, int mr,
                                                             const nnp_epilogue *ep0, int64_t i0, int64_t j0,
                                                             const int act) {
  nnp_epilogue ep = {0};
  if (ep0) ep = *ep0;
  ep.act = act; /* folds nnp_act8's switch */
  const float *res = ep.residual ? ep.residual + i0 * ep.ld_res + j0 : NULL;
#pragma GCC unroll 6
  for (int r = 0; r < NNP_SGEMM_MR; r++) {
    if (r >= mr) break;
    __m256 v0 = acc[r][0], v1 = acc[r][1];
    if (ep0) {
      if (ep.bias_kind == NNP_BIAS_ROW) {
        const __m256 bv = _mm256_set1_ps(ep.bias[i0 + r]);
        v0 = _mm256_add_ps(v0, bv);
        v1 = _mm256_add_ps(v1, bv);
      } else if (ep.bias_kind == NNP_BIAS_COL) {
        v0 = _mm256_add_ps(v0, _mm256_loadu_ps(ep.bias + j0));
        v1 = _mm256_add_ps(v1, _mm256_loadu_ps(ep.bias + j0 + 8));
      }
      if (res) {
        v0 = _mm256_add_ps(v0, _mm256_loadu_ps(res + r * ep.ld_res));
        v1 = _mm256_add_ps(v1, _mm256_loadu_ps(res + r * ep.ld_res + 8));
      }
      v0 = nnp_act8(&ep, v0);
      v1 = nnp_act8(&ep, v1);
    }
    _mm256_storeu_ps(c + r * ldc, v0);
    _mm256_storeu_ps(c + r * ldc + 8, v1);
  }
}

/* The 6 x 16 tile; with offs (a constant after inlining) row k of B is at b + off[k]
 * (nnp_sgemm_tile_off_avx2), else at b + k * ldb. */
static inline __attribute__((always_inline)) void tile_6x16(int64_t K, const float *a, const float *b, int64_t ldb,
                                                            const int32_t *off, float *c, int64_t ldc, int mr,
                                                            int nr, bool accum, const nnp_epilogue *ep, int64_t i0,
                                                            int64_t j0, const bool offs) {
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
  __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  if (!offs && nr <= 8) {
    tile_6x8(K, a, b, ldb, c, ldc, mr, nr, accum, ep, i0, j0);
    return;
  }
  /* Rows of 16 columns are loaded and stored as vectors, the first mr of them (a ragged
   * last row panel too, M % 6 != 0): a later K block's partial sums were read back
   * through a buffer of scalar copies, whose vector reloads wait on eight forwarded
   * scalar stores each, and a ragged row panel took the scalar epilogue. */
  const bool wide = nr == NNP_SGEMM_NR;
  if (accum && wide) { /* a later K block: the partial sums straight from C */
    c00 = _mm256_loadu_ps(c); c01 = _mm256_loadu_ps(c + 8);
    if (mr > 1) { c10 = _mm256_loadu_ps(c + ldc); c11 = _mm256_loadu_ps(c + ldc + 8); }
    if (mr > 2) { c20 = _mm256_loadu_ps(c + 2 * ldc); c21 = _mm256_loadu_ps(c + 2 * ldc + 8); }
    if (mr > 3) { c30 = _mm256_loadu_ps(c + 3 * ldc); c31 = _mm256_loadu_ps(c + 3 * ldc + 8); }
    if (mr > 4) { c40 = _mm256_loadu_ps(c + 4 * ldc); c41 = _mm256_loadu_ps(c + 4 * ldc + 8); }
    if (mr > 5) { c50 = _mm256_loadu_ps(c + 5 * ldc); c51 = _mm256_loadu_ps(c + 5 * ldc + 8); }
  } else if (accum) { /* a ragged tile's partial sums, through a buffer (C may end mid-tile) */
    float t[NNP_SGEMM_MR][NNP_SGEMM_NR] = {{0}};
    for (int r = 0; r < mr; r++)
      for (int j = 0; j < nr; j++) t[r][j] = c[r * ldc + j];
    c00 = _mm256_loadu_ps(t[0]); c01 = _mm256_loadu_ps(t[0] + 8);
    c10 = _mm256_loadu_ps(t[1]); c11 = _mm256_loadu_ps(t[1] + 8);
    c20 = _mm256_loadu_ps(t[2]); c21 = _mm256_loadu_ps(t[2] + 8);
    c30 = _mm256_loadu_ps(t[3]); c31 = _mm256_loadu_ps(t[3] + 8);
    c40 = _mm256_loadu_ps(t[4]); c41 = _mm256_loadu_ps(t[4] + 8);
    c50 = _mm256_loadu_ps(t[5]); c51 = _mm256_loadu_ps(t[5] + 8);
  }
  for (int64_t k = 0; k < K; k++) {
    const float *bk = offs ? b + off[k] : b;
    __m256 b0 = _mm256_loadu_ps(bk), b1 = _mm256_loadu_ps(bk + 8), av;
    av = _mm256_broadcast_ss(a + 0); c00 = _mm256_fmadd_ps(av, b0, c00); c01 = _mm256_fmadd_ps(av, b1, c01);
    av = _mm256_broadcast_ss(a + 1); c10 = _mm256_fmadd_ps(av, b0, c10); c11 = _mm256_fmadd_ps(av, b1, c11);
    av = _mm256_broadcast_ss(a + 2); c20 = _mm256_fmadd_ps(av, b0, c20); c21 = _mm256_fmadd_ps(av, b1, c21);
    av = _mm256_broadcast_ss(a + 3); c30 = _mm256_fmadd_ps(av, b0, c30); c31 = _mm256_fmadd_ps(av, b1, c31);
    av = _mm256_broadcast_ss(a + 4); c40 = _mm256_fmadd_ps(av, b0, c40); c41 = _mm256_fmadd_ps(av, b1, c41);
    av = _mm256_broadcast_ss(a + 5); c50 = _mm256_fmadd_ps(av, b0, c50); c51 = _mm256_fmadd_ps(av, b1, c51);
    a += NNP_SGEMM_MR;
    if (!offs) b += ldb;
  }
  __m256 acc[6][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
  if (wide && (!ep || ep->act != NNP_ACT_SIGMOID)) {
#define STORE_WIDE(A) store_wide(acc, c, ldc, mr, ep, i0, j0, A)
    NNP_ACT8_CONST(ep ? ep->act : NNP_ACT_NONE, STORE_WIDE)
#undef STORE_WIDE
    return;
  }
  float tmp[NNP_SGEMM_MR][NNP_SGEMM_NR];
  for (int r = 0; r < NNP_SGEMM_MR; r++) {
    _mm256_storeu_ps(tmp[r], acc[r][0]);
    _mm256_storeu_ps(tmp[r] + 8, acc[r][1]);
  }
  for (int r = 0; r < mr; r++)
    for (int j = 0; j < nr; j++) c[r * ldc + j] = nnp_epilogue_apply(ep, i0 + r, j0 + j, tmp[r][j]);
}

void nnp_sgemm_tile_avx2(int64_t K, const float *a, const float *b, int64_t ldb, float *c, int64_t ldc, int mr,
                         int nr, bool accum, const nnp_epilogue *ep, int64_t i0, int64_t j0) {
  tile_6x16(K, a, b, ldb, NULL, c, ldc, mr, nr, accum, ep, i0, j0, false);
}

void nnp_sgemm_tile_off_avx2(int64_t K, const float *a, const float *b, const int32_t *off, float *c, int64_t ldc,
                             int mr, int nr, const nnp_epilogue *ep, int64_t i0, int64_t j0) {
  tile_6x16(K, a, b, 0, off, c, ldc, mr, nr, false, ep, i0, j0, true);
}

/* Columns [j0, j0 + nr), nr <= NNP_SGEMM_NARROW, of row panels [ip0, ip1) for one block
 * of K (kn steps; a0: panel ip0's A at the block's first k, panels a_stride floats apart;
 * b: the block's first row of the column panel, rows ldb apart; c0: C(ip0 * MR, j0)).
 * A ragged last column panel of one or two columns (7x7 planes: N = 49 = 3 x 16 + 1;
 * 17x17: 289 = 18 x 16 + 1) cost the 6 x 8 tile six FMAs per k per row panel for one
 * useful lane each; here a row panel's six rows are the lanes of one vector, four row
 * panels at a time, one FMA per k per panel and column. Every element is one chain of
 * FMAs in k order continued from C's partial sum (accum), as in the tile, and the
 * epilogue is the tile's scalar one, so the bits are the tile's. */
static const int32_t six_lanes[8] = {-1, -1, -1, -1, -1, -1, 0, 0};

static inline __attribute__((always_inline)) void narrow_group(int64_t kn, const float *a, int64_t a_stride,
                                                               const float *b, int64_t ldb, int nr, const int G,
                                                               __m256 acc[4][NNP_SGEMM_NARROW]) {
  const __m256i m6 = _mm256_loadu_si256((const __m256i *)six_lanes);
  for (int64_t k = 0; k < kn; k++, a += NNP_SGEMM_MR, b += ldb) {
    const __m256 b0 = _mm256_broadcast_ss(b), b1 = _mm256_broadcast_ss(b + (nr > 1));
    for (int g = 0; g < G; g++) {
      const __m256 av = _mm256_maskload_ps(a + g * a_stride, m6);
      acc[g][0] = _mm256_fmadd_ps(av, b0, acc[g][0]);
      if (nr > 1) acc[g][1] = _mm256_fmadd_ps(av, b1, acc[g][1]);
    }
  }
}

void nnp_sgemm_narrow_avx2(int64_t M, int64_t kn, const float *a0, int64_t a_stride, const float *b, int64_t ldb,
                           float *c0, int64_t ldc, int nr, int64_t ip0, int64_t ip1, bool accum,
                           const nnp_epilogue *ep, int64_t j0) {
  for (int64_t ip = ip0; ip < ip1; ip += 4) {
    const int G = ip1 - ip < 4 ? (int)(ip1 - ip) : 4;
    float t[4][NNP_SGEMM_NARROW][8] = {{{0}}};
    __m256 acc[4][NNP_SGEMM_NARROW];
    for (int g = 0; g < G; g++) {
      const int64_t i0 = (ip + g) * NNP_SGEMM_MR, mr = M - i0 < NNP_SGEMM_MR ? M - i0 : NNP_SGEMM_MR;
      for (int j = 0; j < NNP_SGEMM_NARROW; j++) {
        if (accum && j < nr)
          for (int64_t r = 0; r < mr; r++) t[g][j][r] = c0[(i0 - ip0 * NNP_SGEMM_MR + r) * ldc + j];
        acc[g][j] = _mm256_loadu_ps(t[g][j]);
      }
    }
    const float *a = a0 + (ip - ip0) * a_stride;
    switch (G) { /* constant group sizes: the accumulators stay in registers */
      case 4: narrow_group(kn, a, a_stride, b, ldb, nr, 4, acc); break;
      case 3: narrow_group(kn, a, a_stride, b, ldb, nr, 3, acc); break;
      case 2: narrow_group(kn, a, a_stride, b, ldb, nr, 2, acc); break;
      default: narrow_group(kn, a, a_stride, b, ldb, nr, 1, acc); break;
    }
    for (int g = 0; g < G; g++) {
      const int64_t i0 = (ip + g) * NNP_SGEMM_MR, mr = M - i0 < NNP_SGEMM_MR ? M - i0 : NNP_SGEMM_MR;
      for (int j = 0; j < nr; j++) {
        _mm256_storeu_ps(t[g][j], acc[g][j]);
        for (int64_t r = 0; r < mr; r++)
          c0[(i0 - ip0 * NNP_SGEMM_MR + r) * ldc + j] = nnp_epilogue_apply(ep, i0 + r, j0 + j, t[g][j][r]);
      }
    }
  }
}

/* NP (1..4) consecutive packed column panels of a one-row product: one FMA per loaded B
 * vector (the 6-row tile spent six, five of them on padding rows), 2 * NP independent
 * sums. Each column is one chain of FMAs in k order, as in the tile (whose K blocks
 * only store and reload the float partial sums), and the epilogue is the tile's
 * (nnp_act8 and nnp_act_apply agree bit for bit), so a row gives the same bits alone as
 * inside a batch. */
static inline __attribute__((always_inline)) void gemv_panels(int64_t K, const float *a, const float *b, float *c,
                                                              int64_t N, const nnp_epilogue *ep, int64_t j0,
                                                              const int NP) {
  const int64_t ps = (int64_t)NNP_SGEMM_NR * K; /* floats between two packed panels */
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
  for (int64_t k = 0; k < K; k++, a += NNP_SGEMM_MR, b += NNP_SGEMM_NR) {
    const __m256 av = _mm256_broadcast_ss(a);
    s0 = _mm256_fmadd_ps(av, _mm256_loadu_ps(b), s0);
    s1 = _mm256_fmadd_ps(av, _mm256_loadu_ps(b + 8), s1);
    if (NP > 1) s2 = _mm256_fmadd_ps(av, _mm256_loadu_ps(b + ps), s2);
    if (NP > 1) s3 = _mm256_fmadd_ps(av, _mm256_loadu_ps(b + ps + 8), s3);
    if (NP > 2) s4 = _mm256_fmadd_ps(av, _mm256_loadu_ps(b + 2 * ps), s4);
    if (NP > 2) s5 = _mm256_fmadd_ps(av, _mm256_loadu_ps(b + 2 * ps + 8), s5);
    if (NP > 3) s6 = _mm256_fmadd_ps(av, _mm256_loadu_ps(b + 3 * ps), s6);
    if (NP > 3) s7 = _mm256_fmadd_ps(av, _mm256_loadu_ps(b + 3 * ps + 8), s7);
  }
  float t[4 * NNP_SGEMM_NR];
  _mm256_storeu_ps(t, s0), _mm256_storeu_ps(t + 8, s1), _mm256_storeu_ps(t + 16, s2), _mm256_storeu_ps(t + 24, s3);
  _mm256_storeu_ps(t + 32, s4), _mm256_storeu_ps(t + 40, s5), _mm256_storeu_ps(t + 48, s6);
  _mm256_storeu_ps(t + 56, s7);
  for (int64_t j = 0; j < NP * NNP_SGEMM_NR && j0 + j < N; j++) c[j0 + j] = nnp_epilogue_apply(ep, 0, j0 + j, t[j]);
}

void nnp_sgemv_panels_avx2(int64_t K, const float *Ap, const float *Bp, float *C, int64_t N, const nnp_epilogue *ep,
                           int64_t p0, int64_t p1) {
  for (int64_t jp = p0; jp < p1; jp += 4) {
    const float *b = Bp + jp * NNP_SGEMM_NR * K;
    const int64_t j0 = jp * NNP_SGEMM_NR;
    switch (p1 - jp < 4 ? p1 - jp : 4) {
      case 4: gemv_panels(K, Ap, b, C, N, ep, j0, 4); break;
      case 3: gemv_panels(K, Ap, b, C, N, ep, j0, 3); break;
      case 2: gemv_panels(K, Ap, b, C, N, ep, j0, 2); break;
      default: gemv_panels(K, Ap, b, C, N, ep, j0, 1); break;
    }
  }
}
#else
/* Built without AVX2 support in the compiler: never selected (see kernels/cpu.c). */
void nnp_sgemm_narrow_avx2(int64_t M, int64_t kn, const float *a0, int64_t a_stride, const float *b, int64_t ldb,
                           float *c0, int64_t ldc, int nr, int64_t ip0, int64_t ip1, bool accum,
                           const nnp_epilogue *ep, int64_t j0) {
  for (int64_t ip = ip0; ip < ip1; ip++) {
    const int64_t i0 = ip * NNP_SGEMM_MR;
    nnp_sgemm_tile_generic(kn, a0 + (ip - ip0) * a_stride, b, ldb, c0 + (i0 - ip0 * NNP_SGEMM_MR) * ldc, ldc,
                           M - i0 < NNP_SGEMM_MR ? (int)(M - i0) : NNP_SGEMM_MR, nr, accum, ep, i0, j0);
  }
}
void nnp_sgemv_panels_avx2(int64_t K, const float *Ap, const float *Bp, float *C, int64_t N, const nnp_epilogue *ep,
                           int64_t p0, int64_t p1) {
  for (int64_t jp = p0; jp < p1; jp++) {
    const int64_t j0 = jp * NNP_SGEMM_NR;
    nnp_sgemm_tile_generic(K, Ap, Bp + j0 * K, NNP_SGEMM_NR, C + j0, 0, 1, N - j0 < NNP_SGEMM_NR ? (int)(N - j0) : NNP_SGEMM_NR,
                           false, ep, 0, j0);
  }
}
void nnp_sgemm_tile_avx2(int64_t K, const float *a, const float *b, int64_t ldb, float *c, int64_t ldc, int mr,
                         int nr, bool accum, const nnp_epilogue *ep, int64_t i0, int64_t j0) {
  nnp_sgemm_tile_generic(K, a, b, ldb, c, ldc, mr, nr, accum, ep, i0, j0);
}
void nnp_sgemm_tile_off_avx2(int64_t K, const float *a, const float *b, const int32_t *off, float *c, int64_t ldc,
                             int mr, int nr, const nnp_epilogue *ep, int64_t i0, int64_t j0) {
  for (int r = 0; r < mr; r++)
    for (int j = 0; j < nr; j++) {
      float acc = 0.0f;
      for (int64_t k = 0; k < K; k++) acc = fmaf(a[k * NNP_SGEMM_MR + r], b[off[k] + j], acc);
      c[r * ldc + j] = nnp_epilogue_apply(ep, i0 + r, j0 + j, acc);
    }
}
#endif
