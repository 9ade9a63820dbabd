/* The AVX2 transforms of Winograd F(2x2, 3x3) on NCHW planes (kernels/winograd_nchw.h):
 * eight tiles of a tile row per vector. Tile tx starts at input column 2 tx, so the
 * four columns of eight tiles are the even and odd lanes of 16 consecutive inputs (c0,
 * c1) and of the 16 from two columns on (c2, c3): two loads and a deinterleave each.
 * The output transform's two columns per tile are interleaved back into 16 consecutive
 * outputs. Same adds in the same order as the generic rows: the same bits.
 * This file alone is compiled with -mavx2 -mfma. */
#include <immintrin.h>

#include "kernels/winograd_nchw.h"

#if defined(__AVX2__) && defined(__FMA__)
#include "kernels/act_avx2.h"

/* GCC turns the short loops of zero vectors below into libc memset calls, which cost
 * 4% of a 14x14 layer (perf): keep them as the stores they are. */
#if defined(__GNUC__) && !defined(__clang__)
#define NNP_INLINE_ZEROS __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define NNP_INLINE_ZEROS
#endif

bool nnp_wnc_avx2_built(void) { return true; }

/* lanes 0, 2, .. 14 (odd: 1, 3, .. 15) of the 16 floats a, b */
static inline __m256 even8(__m256 a, __m256 b) {
  const __m256 t = _mm256_shuffle_ps(a, b, 0x88); /* a0 a2 b0 b2 | a4 a6 b4 b6 */
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(t), 0xD8));
}
static inline __m256 odd8(__m256 a, __m256 b) {
  const __m256 t = _mm256_shuffle_ps(a, b, 0xDD); /* a1 a3 b1 b3 | a5 a7 b5 b7 */
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(t), 0xD8));
}

/* The column transform of one input row for eight tiles from column 2 tx0 of d. */
static inline void columns(const float *d, __m256 r[4]) {
  const __m256 a = _mm256_loadu_ps(d), b = _mm256_loadu_ps(d + 8);
  const __m256 a2 = _mm256_loadu_ps(d + 2), b2 = _mm256_loadu_ps(d + 10);
  const __m256 c0 = even8(a, b), c1 = odd8(a, b), c2 = even8(a2, b2), c3 = odd8(a2, b2);
  r[0] = _mm256_sub_ps(c0, c2);
  r[1] = _mm256_add_ps(c1, c2);
  r[2] = _mm256_sub_ps(c2, c1);
  r[3] = _mm256_sub_ps(c1, c3);
}

/* The first n (1..8) lanes of v to dst: one store when all eight, else 4-, 2- and
 * 1-float stores (no call, no buffer: a 7-tile row, 14x14 planes, ends ragged in
 * every vector; a masked store is microcoded on AMD). */
static inline void store_n(float *dst, __m256 v, int64_t n) {
  if (n >= 8) {
    _mm256_storeu_ps(dst, v);
    return;
  }
  __m128 q = _mm256_castps256_ps128(v);
  if (n & 4) {
    _mm_storeu_ps(dst, q);
    q = _mm256_extractf128_ps(v, 1);
    dst += 4;
  }
  if (n & 2) {
    _mm_storel_pi((__m64 *)dst, q);
    q = _mm_movehl_ps(q, q);
    dst += 2;
  }
  if (n & 1) _mm_store_ss(dst, q);
}

/* The first n (1..8) floats from src, the other lanes zero. */
static inline __m256 load_n(const float *src, int64_t n) {
  if (n >= 8) return _mm256_loadu_ps(src);
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_maskload_ps(src, _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), idx));
}

/* Input rows r0 .. r0 + rows - 1 (zero outside the plane) into buf, bs floats apart,
 * column j = input column j - pw, in vectors: the rows of a 14x14 plane are 14 floats,
 * and libc's memset and memcpy calls for them cost more than the transform (perf,
 * kernels.md). A row's last store may run past its bs floats, into the next row
 * (written after it) or the buffer's slack. */
NNP_INLINE_ZEROS static void fill_rows(const nnp_wnc_geom *g, const float *xc, int64_t r0, int64_t rows, float *buf,
                                       int64_t bs) {
  const __m256 z = _mm256_setzero_ps();
  const int64_t n = g->w < bs - g->pw ? g->w : bs - g->pw;
  for (int64_t i = 0; i < rows; i++) {
    const int64_t r = r0 + i;
    float *row = buf + i * bs;
    if (r < 0 || r >= g->h) {
      for (int64_t j = 0; j < bs; j += 8) _mm256_storeu_ps(row + j, z);
      continue;
    }
    const float *src = xc + r * g->w;
    if (g->pw) row[0] = 0.0f; /* pw <= 1 (nnp_wnc_applies) */
    for (int64_t j = 0; j < bs - g->pw; j += 8)
      _mm256_storeu_ps(row + g->pw + j, j < n ? load_n(src + j, n - j) : z);
  }
}

/* One tile row from its four input rows at d (bs apart); v: the row's first tile. */
static inline void input_tiles(const nnp_wnc_geom *g, const float *d, int64_t bs, float *v, int64_t vs) {
  for (int64_t tx = 0; tx < g->tw; tx += 8, v += 8) {
    __m256 r0[4], r1[4], r2[4], r3[4];
    columns(d + 2 * tx, r0);
    columns(d + bs + 2 * tx, r1);
    columns(d + 2 * bs + 2 * tx, r2);
    columns(d + 3 * bs + 2 * tx, r3);
    for (int j = 0; j < 4; j++) {
      _mm256_storeu_ps(v + (0 * 4 + j) * vs, _mm256_sub_ps(r0[j], r2[j]));
      _mm256_storeu_ps(v + (1 * 4 + j) * vs, _mm256_add_ps(r1[j], r2[j]));
      _mm256_storeu_ps(v + (2 * 4 + j) * vs, _mm256_sub_ps(r2[j], r1[j]));
      _mm256_storeu_ps(v + (3 * 4 + j) * vs, _mm256_sub_ps(r1[j], r3[j]));
    }
  }
}

/* Tile rows in bands of BAND: the band's 2 BAND + 2 input rows are copied first, so a
 * row's loads come long after its stores (a load straddling two stores still in the
 * store buffer cannot be forwarded: with four rows copied per tile row, the first load
 * after the copy was 13% of the transform). Tile rows in order: each one's last
 * vector runs into the next row's tiles, which are written after it. */
#define BAND 4
NNP_INLINE_ZEROS void nnp_wnc_input_channel_avx2(const nnp_wnc_geom *g, const float *xc, float *vc, int64_t vs) {
  float buf[(2 * BAND + 2) * (NNP_WNC_MAX_OW + 32) + 8];
  const int64_t bs = nnp_wnc_buf_stride(g);
  for (int64_t a = 0; a < g->th; a += BAND) { /* tile rows [a, b) of those V holds */
    const int64_t b = a + BAND < g->th ? a + BAND : g->th;
    fill_rows(g, xc, 2 * (g->ty0 + a) - g->ph, 2 * (b - a) + 2, buf, bs);
    for (int64_t ty = a; ty < b; ty++) input_tiles(g, buf + 2 * (ty - a) * bs, bs, vc + ty * g->tw, vs);
  }
  /* zeros in [T, N) (over the last vector's spill), in vectors: a libc memset call cost 6% */
  for (int xi = 0; xi < 16; xi++)
    for (int64_t t = g->T; t < g->N; t += 8) _mm256_storeu_ps(vc + xi * vs + t, _mm256_setzero_ps());
}

/* 16 outputs of one output row from its two columns per tile (lo: tiles 0-3, hi: 4-7 of
 * the eight), then the residual and the activation; the first n (1..16) stored. */
static inline void store_row(__m256 y0, __m256 y1, float *yrow, const float *rrow, const nnp_epilogue *ep,
                             int64_t n) {
  const __m256 l = _mm256_unpacklo_ps(y0, y1), h = _mm256_unpackhi_ps(y0, y1);
  __m256 lo = _mm256_permute2f128_ps(l, h, 0x20), hi = _mm256_permute2f128_ps(l, h, 0x31);
  if (ep && ep->act == NNP_ACT_SIGMOID) { /* the scalar expf, as the other kernels' epilogues */
    float t[16];
    _mm256_storeu_ps(t, lo);
    _mm256_storeu_ps(t + 8, hi);
    for (int64_t i = 0; i < n; i++) yrow[i] = nnp_act_apply(ep, rrow ? t[i] + rrow[i] : t[i]);
    return;
  }
  if (rrow) {
    lo = _mm256_add_ps(lo, load_n(rrow, n));
    if (n > 8) hi = _mm256_add_ps(hi, load_n(rrow + 8, n - 8));
  }
  if (ep) {
    lo = nnp_act8(ep, lo);
    hi = nnp_act8(ep, hi);
  }
  store_n(yrow, lo, n);
  if (n > 8) store_n(yrow + 8, hi, n - 8);
}

void nnp_wnc_output_row_avx2(const nnp_wnc_geom *g, const float *mm, int64_t ms, float *ym, const float *rm,
                             float bias, const nnp_epilogue *ep, int64_t ty) {
  const __m256 b = _mm256_set1_ps(bias);
  for (int64_t tx = 0; tx < g->tw; tx += 8) {
    const float *m = mm + ty * g->tw + tx; /* lanes past the row read the next row's tiles (or slack) */
    __m256 s0[4], s1[4];
    for (int j = 0; j < 4; j++) {
      const __m256 m0 = _mm256_loadu_ps(m + (0 * 4 + j) * ms), m1 = _mm256_loadu_ps(m + (1 * 4 + j) * ms);
      const __m256 m2 = _mm256_loadu_ps(m + (2 * 4 + j) * ms), m3 = _mm256_loadu_ps(m + (3 * 4 + j) * ms);
      s0[j] = _mm256_add_ps(_mm256_add_ps(m0, m1), m2);
      s1[j] = _mm256_sub_ps(_mm256_sub_ps(m1, m2), m3);
    }
    for (int i = 0; i < 2; i++) {
      const int64_t oy = 2 * (g->ty0 + ty) + i;
      if (oy >= g->oh) break;
      const __m256 *s = i ? s1 : s0;
      const __m256 y0 = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(s[0], s[1]), s[2]), b);
      const __m256 y1 = _mm256_add_ps(_mm256_sub_ps(_mm256_sub_ps(s[1], s[2]), s[3]), b);
      const int64_t ox = 2 * tx, n = g->ow - ox < 16 ? g->ow - ox : 16;
      store_row(y0, y1, ym + oy * g->ow + ox, rm ? rm + oy * g->ow + ox : NULL, ep, n);
    }
  }
}
#else
bool nnp_wnc_avx2_built(void) { return false; }
void nnp_wnc_input_channel_avx2(const nnp_wnc_geom *g, const float *xc, float *vc, int64_t vs) {
  nnp_wnc_input_channel_generic(g, xc, vc, vs);
}
void nnp_wnc_output_row_avx2(const nnp_wnc_geom *g, const float *mm, int64_t ms, float *ym, const float *rm,
                             float bias, const nnp_epilogue *ep, int64_t ty) {
  nnp_wnc_output_row_generic(g, mm, ms, ym, rm, bias, ep, ty);
}
#endif
