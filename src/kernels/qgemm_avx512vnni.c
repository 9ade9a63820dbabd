/* The AVX-512 VNNI variants of the INT8 GEMM's 6 x 16 tile (kernels/qgemm.h). The int16
 * one: the same packed int16 pairs and the same YMM accumulators as the AVX2 tile, with vpdpwssd (one
 * instruction: int16 pair products summed into int32, exact, no saturation) in place of
 * vpmaddwd + vpaddd. The target CPU has AVX2 without VNNI, so the AVX2 tile stays
 * the required, tested path; this one is selected at run time only where CPUID reports
 * AVX512_VNNI and AVX512VL (kernels/cpu.c) and NNP_CPU_FEATURES does not rule it out.
 * Integer sums are exact and the requantize is shared, so both tiles give the same bytes;
 * the generic tile is the oracle of both. The u8 x s8 one (nnp_qgemm4_*) is below. This
 * file alone is compiled with -mavx512f -mavx512vnni -mavx512vl. */
#include <immintrin.h>
#include <string.h>

#include "kernels/qgemm.h"

#if defined(__AVX512VNNI__) && defined(__AVX512VL__) && defined(__AVX512F__) && defined(__AVX2__)
#include "kernels/qgemm_store_avx2.h"
#include "kernels/qrequant_avx512.h"

static inline __m256i bcast_pair(const int16_t *p) { return _mm256_broadcastd_epi32(_mm_loadu_si32(p)); }

void nnp_qgemm_tile_vnni(int64_t K2, const int16_t *a, const int16_t *b, uint8_t *c, int64_t ldc, int mr, int nr,
                         const nnp_qepilogue *ep, int64_t i0) {
  __m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
  __m256i c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  for (int64_t kp = 0; kp < K2; kp++) {
    __m256i b0 = _mm256_loadu_si256((const __m256i *)b), b1 = _mm256_loadu_si256((const __m256i *)(b + 16)), av;
    av = bcast_pair(a + 0);
    c00 = _mm256_dpwssd_epi32(c00, av, b0); c01 = _mm256_dpwssd_epi32(c01, av, b1);
    av = bcast_pair(a + 2);
    c10 = _mm256_dpwssd_epi32(c10, av, b0); c11 = _mm256_dpwssd_epi32(c11, av, b1);
    av = bcast_pair(a + 4);
    c20 = _mm256_dpwssd_epi32(c20, av, b0); c21 = _mm256_dpwssd_epi32(c21, av, b1);
    av = bcast_pair(a + 6);
    c30 = _mm256_dpwssd_epi32(c30, av, b0); c31 = _mm256_dpwssd_epi32(c31, av, b1);
    av = bcast_pair(a + 8);
    c40 = _mm256_dpwssd_epi32(c40, av, b0); c41 = _mm256_dpwssd_epi32(c41, av, b1);
    av = bcast_pair(a + 10);
    c50 = _mm256_dpwssd_epi32(c50, av, b0); c51 = _mm256_dpwssd_epi32(c51, av, b1);
    a += NNP_QGEMM_MR * 2;
    b += NNP_QGEMM_NR * 2;
  }
  __m256i acc[6][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
  nnp_qtile_store_avx2(acc, c, ldc, mr, nr, ep, i0);
}

/* Rows of a finished 16-column int32 tile requantized 16 lanes at a time (the float32
 * operations of nnp_qrequant, bit for bit) and stored under a mask for nr < 16: half the
 * instructions of the shared AVX2 store's two YMM halves, which weighed on the 1x1 layers
 * with few input channels (K = 16..40: a handful of vpdpbusd per tile). */
static inline void store_rows16z(const __m512i *acc, int mr, uint8_t *c, int64_t ldc, int nr, const nnp_qepilogue *ep,
                                 int64_t i0) {
  const __m512 zp = _mm512_set1_ps((float)ep->zp), lo = _mm512_set1_ps((float)ep->qmin),
               hi = _mm512_set1_ps((float)ep->qmax);
  const __mmask16 m = (__mmask16)((1u << nr) - 1u);
  for (int r = 0; r < mr; r++) {
    const __m512i s = _mm512_add_epi32(acc[r], _mm512_set1_epi32(ep->bias ? ep->bias[i0 + r] : 0));
    _mm_mask_storeu_epi8(c + r * ldc, m, nnp_qrequant16(s, _mm512_set1_ps(ep->mult[i0 + r]), zp, lo, hi));
  }
}

/* u8 x s8: per group of 4 k, 64 bytes of B (16 columns x 4) in one ZMM, the 4 weight bytes
 * of each row broadcast; vpdpbusd adds the 4 exact products of each column into its lane.
 * Even and odd groups go to two sets of 6 accumulators: 12 independent chains hide
 * vpdpbusd's latency (6 would wait on it), and 64 products per instruction where the YMM
 * tile did 32: resnet18's four INT8 GEMM shapes 0.88-0.89x the YMM tile's time in
 * bench_qgemm_gops (0.723 -> 0.656 ms, 0.599 -> 0.525, 0.666 -> 0.581, 0.783 -> 0.698).
 * The 12-row tile below, which halves the B bytes per product, took them to 0.607, 0.476,
 * 0.478, 0.536 ms. Integer sums: the split changes no bit. */
static inline __m512i bcast4z(const int8_t *p) {
  int32_t v;
  memcpy(&v, p, sizeof v); /* one vpbroadcastd from memory */
  return _mm512_set1_epi32(v);
}

void nnp_qgemm4_tile_vnni(int64_t K4, const int8_t *a, const uint8_t *b, uint8_t *c, int64_t ldc, int mr, int nr,
                          const nnp_qepilogue *ep, int64_t i0) {
  __m512i c0 = _mm512_setzero_si512(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0;
  __m512i d0 = c0, d1 = c0, d2 = c0, d3 = c0, d4 = c0, d5 = c0;
  enum { AS = NNP_QGEMM_MR * 4, BS = NNP_QGEMM_NR * 4 }; /* bytes per group of 4 k */
  int64_t kq = 0;
  for (; kq + 2 <= K4; kq += 2) {
    const __m512i b0 = _mm512_loadu_si512(b), b1 = _mm512_loadu_si512(b + BS);
    c0 = _mm512_dpbusd_epi32(c0, b0, bcast4z(a + 0));
    d0 = _mm512_dpbusd_epi32(d0, b1, bcast4z(a + AS + 0));
    c1 = _mm512_dpbusd_epi32(c1, b0, bcast4z(a + 4));
    d1 = _mm512_dpbusd_epi32(d1, b1, bcast4z(a + AS + 4));
    c2 = _mm512_dpbusd_epi32(c2, b0, bcast4z(a + 8));
    d2 = _mm512_dpbusd_epi32(d2, b1, bcast4z(a + AS + 8));
    c3 = _mm512_dpbusd_epi32(c3, b0, bcast4z(a + 12));
    d3 = _mm512_dpbusd_epi32(d3, b1, bcast4z(a + AS + 12));
    c4 = _mm512_dpbusd_epi32(c4, b0, bcast4z(a + 16));
    d4 = _mm512_dpbusd_epi32(d4, b1, bcast4z(a + AS + 16));
    c5 = _mm512_dpbusd_epi32(c5, b0, bcast4z(a + 20));
    d5 = _mm512_dpbusd_epi32(d5, b1, bcast4z(a + AS + 20));
    a += 2 * AS;
    b += 2 * BS;
  }
  if (kq < K4) {
    const __m512i b0 = _mm512_loadu_si512(b);
    c0 = _mm512_dpbusd_epi32(c0, b0, bcast4z(a + 0));
    c1 = _mm512_dpbusd_epi32(c1, b0, bcast4z(a + 4));
    c2 = _mm512_dpbusd_epi32(c2, b0, bcast4z(a + 8));
    c3 = _mm512_dpbusd_epi32(c3, b0, bcast4z(a + 12));
    c4 = _mm512_dpbusd_epi32(c4, b0, bcast4z(a + 16));
    c5 = _mm512_dpbusd_epi32(c5, b0, bcast4z(a + 20));
  }
  const __m512i s[6] = {_mm512_add_epi32(c0, d0), _mm512_add_epi32(c1, d1), _mm512_add_epi32(c2, d2),
                        _mm512_add_epi32(c3, d3), _mm512_add_epi32(c4, d4), _mm512_add_epi32(c5, d5)};
  store_rows16z(s, mr, c, ldc, nr, ep, i0);
}
/* Two row panels (12 rows) against one B panel: each 64-byte B load feeds 12 vpdpbusd
 * instead of 6, halving the B bytes streamed from L2 per product (a 16-column B panel
 * of resnet18's 512-channel 3x3 layers is 73 KB: it does not stay in L1 across a tile).
 * 12 accumulators are 12 independent chains already. a1: the second panel (rows 6..11,
 * mr1 of them valid, 0 < mr1 <= 6). */
void nnp_qgemm4_tile2_vnni(int64_t K4, const int8_t *a0, const int8_t *a1, const uint8_t *b, uint8_t *c,
                           int64_t ldc, int mr1, int nr, const nnp_qepilogue *ep, int64_t i0) {
  __m512i c0 = _mm512_setzero_si512(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0;
  __m512i d0 = c0, d1 = c0, d2 = c0, d3 = c0, d4 = c0, d5 = c0;
  enum { AS = NNP_QGEMM_MR * 4, BS = NNP_QGEMM_NR * 4 };
  for (int64_t kq = 0; kq < K4; kq++) {
    const __m512i bv = _mm512_loadu_si512(b);
    c0 = _mm512_dpbusd_epi32(c0, bv, bcast4z(a0 + 0));
    d0 = _mm512_dpbusd_epi32(d0, bv, bcast4z(a1 + 0));
    c1 = _mm512_dpbusd_epi32(c1, bv, bcast4z(a0 + 4));
    d1 = _mm512_dpbusd_epi32(d1, bv, bcast4z(a1 + 4));
    c2 = _mm512_dpbusd_epi32(c2, bv, bcast4z(a0 + 8));
    d2 = _mm512_dpbusd_epi32(d2, bv, bcast4z(a1 + 8));
    c3 = _mm512_dpbusd_epi32(c3, bv, bcast4z(a0 + 12));
    d3 = _mm512_dpbusd_epi32(d3, bv, bcast4z(a1 + 12));
    c4 = _mm512_dpbusd_epi32(c4, bv, bcast4z(a0 + 16));
    d4 = _mm512_dpbusd_epi32(d4, bv, bcast4z(a1 + 16));
    c5 = _mm512_dpbusd_epi32(c5, bv, bcast4z(a0 + 20));
    d5 = _mm512_dpbusd_epi32(d5, bv, bcast4z(a1 + 20));
    a0 += AS;
    a1 += AS;
    b += BS;
  }
  const __m512i s0[6] = {c0, c1, c2, c3, c4, c5}, s1[6] = {d0, d1, d2, d3, d4, d5};
  store_rows16z(s0, NNP_QGEMM_MR, c, ldc, nr, ep, i0);
  store_rows16z(s1, mr1, c + NNP_QGEMM_MR * ldc, ldc, nr, ep, i0 + NNP_QGEMM_MR);
}

/* The u8 im2col's group rows where the 16 columns are a few runs of consecutive input
 * offsets (a panel that wraps onto the next output row, or meets the padding): per run
 * and channel one masked 16-byte load that puts the run's bytes in its lanes, the
 * padding lanes the zero point; the byte-by-byte gather took a sixth of resnet18's INT8
 * time (its 28-, 14- and 7-wide planes wrap in every panel). shift[r] = off[c0] - c0 of
 * run r, lanes[r] its lanes. */
void nnp_qim2col4_runs_avx512(const uint8_t *x, int64_t plane, int64_t C, int64_t C4, const int64_t *shift,
                              const uint16_t *lanes, int runs, uint8_t pad, uint8_t *dst) {
  const __m128i pb = _mm_set1_epi8((char)pad);
  for (int64_t ch = 0; ch < C4; ch += 4, dst += NNP_QGEMM_NR * 4) {
    __m128i v[4];
    for (int t = 0; t < 4; t++) {
      /* phantom channels (>= C) repeat C-1: their weights are 0 */
      const uintptr_t s = (uintptr_t)(x + (ch + t < C ? ch + t : C - 1) * plane);
      v[t] = pb;
      for (int r = 0; r < runs; r++) /* the lanes outside the mask are not read */
        v[t] = _mm_mask_loadu_epi8(v[t], lanes[r], (const void *)(s + (uintptr_t)shift[r]));
    }
    nnp_qquad_row(v[0], v[1], v[2], v[3], dst);
  }
}
#else
/* The compiler cannot emit VNNI (not x86-64): never selected, the dispatch table picks no VNNI there. */
void nnp_qgemm4_tile_vnni(int64_t K4, const int8_t *a, const uint8_t *b, uint8_t *c, int64_t ldc, int mr, int nr,
                          const nnp_qepilogue *ep, int64_t i0) {
  nnp_qgemm4_tile_generic(K4, a, b, c, ldc, mr, nr, ep, i0);
}
void nnp_qgemm_tile_vnni(int64_t K2, const int16_t *a, const int16_t *b, uint8_t *c, int64_t ldc, int mr, int nr,
                         const nnp_qepilogue *ep, int64_t i0) {
  nnp_qgemm_tile_generic(K2, a, b, c, ldc, mr, nr, ep, i0);
}
void nnp_qgemm4_tile2_vnni(int64_t K4, const int8_t *a0, const int8_t *a1, const uint8_t *b, uint8_t *c,
                           int64_t ldc, int mr1, int nr, const nnp_qepilogue *ep, int64_t i0) {
  nnp_qgemm4_tile_generic(K4, a0, b, c, ldc, NNP_QGEMM_MR, nr, ep, i0);
  nnp_qgemm4_tile_generic(K4, a1, b, c + NNP_QGEMM_MR * ldc, ldc, mr1, nr, ep, i0 + NNP_QGEMM_MR);
}
void nnp_qim2col4_runs_avx512(const uint8_t *x, int64_t plane, int64_t C, int64_t C4, const int64_t *shift,
                              const uint16_t *lanes, int runs, uint8_t pad, uint8_t *dst) {
  for (int64_t ch = 0; ch < C4; ch += 4, dst += NNP_QGEMM_NR * 4)
    for (int c = 0; c < NNP_QGEMM_NR; c++)
      for (int t = 0; t < 4; t++) {
        const uint8_t *s = x + (ch + t < C ? ch + t : C - 1) * plane;
        dst[c * 4 + t] = pad;
        for (int r = 0; r < runs; r++)
          if (lanes[r] >> c & 1) dst[c * 4 + t] = s[shift[r] + c];
      }
}
#endif
