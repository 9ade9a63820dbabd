/* The INT8 depthwise body for AVX-512 VNNI (this file gets -mavx512f -mavx512vl
 * -mavx512bw -mavx512vnni). Three paths, the first that applies runs:
 *
 * 1. Quads (strides 1 and 2, no dilation, weights that fit int8 - the symmetric weights
 *    nnperf's quantizer writes): each channel's plane goes into a border of zero points,
 *    at stride 2 split into its four (row, column) parity phases, so that every tap of
 *    every stride is one shift of a flat plane of pitch P: output oy * P + ox reads phase
 *    (ky % s, kx % s) at oy * P + ox + (ky / s) * P + kx / s (columns ox >= ow are
 *    computed and dropped). Four taps' bytes are interleaved into u8 quads, and one
 *    vpdpbusd adds four u8 x s8 products into each of 16 int32 lanes: 64 outputs per
 *    four taps take four loads, eight unpacks and four vpdpbusd, the 64 accumulators stay
 *    in registers over all taps, and the requantize is done on them directly. The sums
 *    are exact (4 * 255 * 128 per vpdpbusd), and the border of zero points is cancelled
 *    by starting each sum at bias - x_zp * sum(w): the bytes equal the reference
 *    QLinearConv's. The stride-2 layers ran the row path before (EfficientNet-Lite0's
 *    5x5 stride-2 layers took 8-33x the time of the FP32 blocked kernel).
 * 2. Pairs (stride 1, any weights): the flat path of qdwconv_avx2.c with 16 outputs per
 *    ZMM and the pair multiply-add in one vpdpwssd, each lane holding the pair (x[i +
 *    off0], x[i + off1]) as two int16.
 * 3. The shared row path (kernels/qdwconv_impl.h) with 16-wide accumulate rows.
 * Called only where the dispatch table (kernels/dispatch.h) picks VNNI (which needs AVX-512BW here). */
#include "kernels/qdwconv.h"

#if defined(__AVX512VNNI__) && defined(__AVX512F__)
#include <immintrin.h>
#include <string.h>

#include "kernels/qrequant_avx512.h"
#include "nnperf/alloc.h"

/* acc[i] += (src[i*sw] - zp) * wv, 16 at a time for strides 1 and 2 (stride 2: 32 bytes
 * widened to int16, the even ones kept as the low half of each int32 lane; only where
 * all 32 lie inside the valid range). The row path's hot loop for the stride-2 layers:
 * the scalar loop it replaces took half of EfficientNet-Lite0's INT8 depthwise time. */
static inline void acc_row_avx512(int32_t *acc, const uint8_t *src, int64_t lo, int64_t hi, int64_t sw, int32_t zp,
                                  int32_t wv) {
  const __m512i z = _mm512_set1_epi32(zp), w = _mm512_set1_epi32(wv), low16 = _mm512_set1_epi32(0xFFFF);
  int64_t i = lo;
  if (sw == 1) {
    for (; i + 16 <= hi; i += 16) {
      __m512i x = _mm512_sub_epi32(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(src + i))), z);
      _mm512_storeu_si512(acc + i, _mm512_add_epi32(_mm512_loadu_si512(acc + i), _mm512_mullo_epi32(x, w)));
    }
  } else if (sw == 2) {
    for (; i + 16 < hi; i += 16) { /* i + 16 < hi: byte 2i + 31 <= 2(i + 16) is in range */
      __m512i b = _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)(src + 2 * i)));
      __m512i x = _mm512_sub_epi32(_mm512_and_si512(b, low16), z);
      _mm512_storeu_si512(acc + i, _mm512_add_epi32(_mm512_loadu_si512(acc + i), _mm512_mullo_epi32(x, w)));
    }
  }
  /* the last 1..16 outputs (all of a 7- or 14-wide row) under masks that read only the
   * valid bytes: 2n - 1 of them at stride 2 */
  if ((sw == 1 || sw == 2) && i < hi && hi - i <= 16) {
    const int n = (int)(hi - i);
    const __mmask16 m = (__mmask16)((1u << n) - 1);
    __m512i x;
    if (sw == 1) x = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, src + i));
    else {
      const __mmask32 mb = (__mmask32)((1u << (2 * n - 1)) - 1);
      x = _mm512_and_si512(_mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(mb, src + 2 * i)), low16);
    }
    x = _mm512_sub_epi32(x, z);
    _mm512_mask_storeu_epi32(acc + i, m,
                             _mm512_add_epi32(_mm512_maskz_loadu_epi32(m, acc + i), _mm512_mullo_epi32(x, w)));
    return;
  }
  nnp_qdw_acc_row_c(acc, src, i, hi, sw, zp, wv);
}

typedef struct qdw_job qdw_job;
static bool qdw_flat_pairs_vnni(const qdw_job *j, int64_t c0, int64_t c1);
#define QDW_FLAT_DEFINED
#define QDW_FLAT qdw_flat_pairs_vnni
#define QDW_RANGE qdw_range_pairs_vnni
#define QDW_REQUANT nnp_qrequant_row_avx2
#define QDW_ACC_ROW acc_row_avx512
#include "kernels/qdwconv_impl.h"

/* lane i: a[i] in the low int16, b[i] in the high one (16 bytes read from each) */
static inline __m512i load_pairs16(const uint8_t *a, const uint8_t *b) {
  __m512i x = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)a));
  __m512i y = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)b));
  return _mm512_or_si512(x, _mm512_slli_epi32(y, 16));
}

static bool qdw_flat_pairs_vnni(const qdw_job *j, int64_t c0, int64_t c1) {
  const nnp_qdw_desc *d = j->d;
  const int64_t W = d->w + 2 * d->pw, H = d->h + 2 * d->ph, khw = d->kh * d->kw, n = d->oh * W;
  const int64_t n16 = (n + 63) / 64 * 64, np = (khw + 1) / 2; /* four vectors at a time */
  /* the last vector reads up to byte n16 - 1 + (kh-1)*W + kw-1 + 15 < H*W + 63 + kw + 15:
   * 128 bytes of slack hold it for kw <= 16 (QDW_RANGE's condition) */
  uint8_t *xp = nnp_malloc((size_t)(H * W + 128));
  int32_t *acc = nnp_aligned_alloc((size_t)n16 * sizeof(int32_t));
  uint8_t *q = nnp_malloc((size_t)n16);
  int64_t *offs = nnp_malloc((size_t)(2 * np) * sizeof(int64_t));
  int32_t *wp = nnp_malloc((size_t)np * sizeof(int32_t));
  if (!xp || !acc || !q || !offs || !wp || khw > 64) {
    nnp_free(q);
    nnp_free(xp);
    nnp_aligned_free(acc);
    nnp_free(offs);
    nnp_free(wp);
    return false;
  }
  memset(xp, j->xzp, (size_t)(H * W + 128));
  qdw_pair_offsets(d, W, np, offs);
  for (int64_t m = c0; m < c1; m++) {
    const int32_t wsum = qdw_pair_channel(j, m, W, xp, wp);
    const __m512i start = _mm512_set1_epi32(-j->xzp * wsum); /* the x zero point's term */
    /* four independent accumulators: one vpdpwssd chain would wait on its latency */
    for (int64_t i = 0; i < n16; i += 64) {
      __m512i a0 = start, a1 = start, a2 = start, a3 = start;
      for (int64_t p = 0; p < np; p++) {
        const uint8_t *s0 = xp + i + offs[2 * p], *s1 = xp + i + offs[2 * p + 1];
        const __m512i wv = _mm512_set1_epi32(wp[p]);
        a0 = _mm512_dpwssd_epi32(a0, load_pairs16(s0, s1), wv);
        a1 = _mm512_dpwssd_epi32(a1, load_pairs16(s0 + 16, s1 + 16), wv);
        a2 = _mm512_dpwssd_epi32(a2, load_pairs16(s0 + 32, s1 + 32), wv);
        a3 = _mm512_dpwssd_epi32(a3, load_pairs16(s0 + 48, s1 + 48), wv);
      }
      _mm512_store_si512((__m512i *)(acc + i), a0);
      _mm512_store_si512((__m512i *)(acc + i + 16), a1);
      _mm512_store_si512((__m512i *)(acc + i + 32), a2);
      _mm512_store_si512((__m512i *)(acc + i + 48), a3);
    }
    /* requantize the whole flat plane, then drop the W - ow extra columns of each row */
    nnp_qrequant_row_avx2(acc, n16, j->ep, m, q);
    qdw_flat_store(j, m, W, q);
  }
  nnp_free(q);
  nnp_free(xp);
  nnp_aligned_free(acc);
  nnp_free(offs);
  nnp_free(wp);
  return true;
}

/* ---- 1. quads ---------------------------------------------------------------------- */

enum { QUAD_MAX_TAPS = 64 };

typedef struct quad_plan {
  int64_t s, P, Hs, plane; /* stride; pitch and rows of a phase plane; bytes per phase plane */
  int64_t n64;                      /* flat outputs oh * P rounded up to whole 64-output blocks */
  int64_t nq;                       /* quads of taps (the last padded with zero weights) */
  int64_t off[QUAD_MAX_TAPS];       /* per tap: phase * plane + its shift */
} quad_plan;

/* even[k] = src[2k] (2k < n), odd[k] = src[2k + 1] (2k + 1 < n), 64 bytes at a time:
 * vpshufb gathers each 16-byte lane's evens and odds into its two halves, vpermq the
 * halves of all four lanes; masked loads and stores touch only the n bytes. */
static void deinterleave_row(const uint8_t *src, int64_t n, uint8_t *even, uint8_t *odd) {
  const __m512i shuf = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15));
  const __m512i perm = _mm512_set_epi64(7, 5, 3, 1, 6, 4, 2, 0);
  for (int64_t i = 0; i < n; i += 64) {
    const int64_t rem = n - i;
    const __mmask64 m = rem >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << rem) - 1);
    __m512i v = _mm512_permutexvar_epi64(perm, _mm512_shuffle_epi8(_mm512_maskz_loadu_epi8(m, src + i), shuf));
    const int64_t ne = rem >= 64 ? 32 : (rem + 1) / 2, no = rem >= 64 ? 32 : rem / 2;
    _mm256_mask_storeu_epi8(even + i / 2, (__mmask32)(((uint64_t)1 << ne) - 1), _mm512_castsi512_si256(v));
    _mm256_mask_storeu_epi8(odd + i / 2, (__mmask32)(((uint64_t)1 << no) - 1), _mm512_extracti64x4_epi64(v, 1));
  }
}

/* Whether the quads path applies to channels [c0, c1) (weights w - w_zp all in int8),
 * and its geometry. The bordered plane is what the outputs read: (oh - 1) * s + kh rows, (ow - 1) * s + kw
 * columns, input past it ignored and missing input (end padding) a zero point. */
static bool quad_plan_make(const qdw_job *j, int64_t c0, int64_t c1, quad_plan *q) {
  const nnp_qdw_desc *d = j->d;
  const int64_t khw = d->kh * d->kw;
  if ((d->sh != 1 && d->sh != 2) || d->sw != d->sh || d->dh != 1 || d->dw != 1 || khw > QUAD_MAX_TAPS)
    return false;
  for (int64_t i = c0 * khw; i < c1 * khw; i++)
    if (j->w[i] < -128 || j->w[i] > 127) return false;
  const int64_t s = d->sh, Hp = (d->oh - 1) * s + d->kh, Wp = (d->ow - 1) * s + d->kw;
  q->s = s;
  q->P = (Wp + s - 1) / s;
  q->Hs = (Hp + s - 1) / s;
  q->n64 = (d->oh * q->P + 63) / 64 * 64;
  /* reads reach n64 - 1 + (kh - 1) / s * P + (kw - 1) / s < (Hs + 1) * P + 64 (oh + (kh - 1) / s <= Hs) */
  q->plane = (q->Hs + 1) * q->P + 64;
  q->nq = (khw + 3) / 4;
  for (int64_t t = 0; t < 4 * q->nq; t++) {
    const int64_t ky = t < khw ? t / d->kw : 0, kx = t < khw ? t % d->kw : 0;
    q->off[t] = ((ky % s) * s + kx % s) * q->plane + (ky / s) * q->P + kx / s;
  }
  return true;
}

/* n bytes from src to dst: one masked move for the short rows of the small planes (a
 * memcpy call per 7-byte row cost more than the row's arithmetic). */
static inline void copy_bytes(uint8_t *dst, const uint8_t *src, int64_t n) {
  if (n > 64) {
    memcpy(dst, src, (size_t)n);
    return;
  }
  const __mmask64 m = n == 64 ? ~(__mmask64)0 : (((__mmask64)1 << n) - 1);
  _mm512_mask_storeu_epi8(dst, m, _mm512_maskz_loadu_epi8(m, src));
}

/* Channel m into the phase planes xp (borders already zero points). */
static void quad_fill_planes(const qdw_job *j, const quad_plan *q, int64_t m, uint8_t *xp) {
  const nnp_qdw_desc *d = j->d;
  const uint8_t *x = j->x + m * d->h * d->w;
  const int64_t Hp = (d->oh - 1) * q->s + d->kh, Wp = (d->ow - 1) * q->s + d->kw;
  const int64_t rows = d->h < Hp - d->ph ? d->h : Hp - d->ph, cols = d->w < Wp - d->pw ? d->w : Wp - d->pw;
  for (int64_t r = 0; r < rows && cols > 0; r++) {
    const int64_t br = r + d->ph; /* bordered row */
    if (q->s == 1) {
      copy_bytes(xp + br * q->P + d->pw, x + r * d->w, cols);
      continue;
    }
    /* bordered column c + pw: even ones to column phase 0, odd ones to phase 1 */
    uint8_t *p0 = xp + (br % 2) * 2 * q->plane + (br / 2) * q->P, *p1 = p0 + q->plane;
    if (d->pw % 2 == 0) deinterleave_row(x + r * d->w, cols, p0 + d->pw / 2, p1 + d->pw / 2);
    else deinterleave_row(x + r * d->w, cols, p1 + (d->pw - 1) / 2, p0 + (d->pw + 1) / 2);
  }
}

/* 64 flat outputs from i: accumulators a[r] hold outputs 16k + 4r + (0..3) in lanes
 * 4k + (0..3) (the unpacks work within 16-byte lanes); the requantized bytes are put
 * back in order by one vpermd. */
static inline void quad_block(const uint8_t *xp, const quad_plan *q, const int32_t *wq, __m512i start,
                              const nnp_qepilogue *ep, int64_t m, int64_t i, uint8_t *dst) {
  __m512i a0 = start, a1 = start, a2 = start, a3 = start;
  const uint8_t *base = xp + i;
  for (int64_t t = 0; t < q->nq; t++) {
    const int64_t *o = q->off + 4 * t;
    const __m512i l0 = _mm512_loadu_si512(base + o[0]), l1 = _mm512_loadu_si512(base + o[1]);
    const __m512i l2 = _mm512_loadu_si512(base + o[2]), l3 = _mm512_loadu_si512(base + o[3]);
    const __m512i ab_lo = _mm512_unpacklo_epi8(l0, l1), ab_hi = _mm512_unpackhi_epi8(l0, l1);
    const __m512i cd_lo = _mm512_unpacklo_epi8(l2, l3), cd_hi = _mm512_unpackhi_epi8(l2, l3);
    const __m512i w = _mm512_set1_epi32(wq[t]);
    a0 = _mm512_dpbusd_epi32(a0, _mm512_unpacklo_epi16(ab_lo, cd_lo), w);
    a1 = _mm512_dpbusd_epi32(a1, _mm512_unpackhi_epi16(ab_lo, cd_lo), w);
    a2 = _mm512_dpbusd_epi32(a2, _mm512_unpacklo_epi16(ab_hi, cd_hi), w);
    a3 = _mm512_dpbusd_epi32(a3, _mm512_unpackhi_epi16(ab_hi, cd_hi), w);
  }
  /* nnp_qrequant on 16 lanes (the bias is in start) */
  const __m512 mult = _mm512_set1_ps(ep->mult[m]), zp = _mm512_set1_ps((float)ep->zp);
  const __m512 lo = _mm512_set1_ps((float)ep->qmin), hi = _mm512_set1_ps((float)ep->qmax);
  const __m512i acc[4] = {a0, a1, a2, a3};
  __m128i b[4];
  for (int r = 0; r < 4; r++) b[r] = nnp_qrequant16(acc[r], mult, zp, lo, hi); /* byte 4k + j: output 16k + 4r + j */
  __m512i v = _mm512_inserti32x4(_mm512_castsi128_si512(b[0]), b[1], 1);
  v = _mm512_inserti32x4(_mm512_inserti32x4(v, b[2], 2), b[3], 3); /* dword 4r + k */
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  _mm512_storeu_si512(dst, _mm512_permutexvar_epi32(order, v)); /* dword 4k + r */
}

static bool qdw_quads_vnni(const qdw_job *j, int64_t c0, int64_t c1) {
  quad_plan q;
  if (!quad_plan_make(j, c0, c1, &q)) return false;
  const nnp_qdw_desc *d = j->d;
  const int64_t khw = d->kh * d->kw, bytes = q.s * q.s * q.plane;
  /* two sets of planes: channel m + 1 is copied in before channel m is computed, so that
   * the copy's stores have reached the cache when the 64-byte loads read them (loads
   * that span several pending stores wait for them: a third of the time on 14x14 planes) */
  uint8_t *xp = nnp_malloc((size_t)(2 * bytes)), *out = nnp_malloc((size_t)q.n64);
  if (!xp || !out) {
    nnp_free(xp);
    nnp_free(out);
    return false;
  }
  memset(xp, j->xzp, (size_t)(2 * bytes));
  quad_fill_planes(j, &q, c0, xp);
  for (int64_t m = c0; m < c1; m++) {
    const uint8_t *planes = xp + (m - c0) % 2 * bytes;
    if (m + 1 < c1) quad_fill_planes(j, &q, m + 1, xp + (m + 1 - c0) % 2 * bytes);
    const int16_t *wm = j->w + m * khw;
    /* the weights as int8, in tap order: quad t is the int32 at byte 4t, zeros past khw */
    int32_t wq[QUAD_MAX_TAPS / 4];
    __m512i wsum = _mm512_setzero_si512();
    for (int64_t t = 0; t < khw; t += 32) { /* khw <= QUAD_MAX_TAPS (quad_plan_make) */
      const int64_t n = khw - t < 32 ? khw - t : 32;
      const __m512i w16 = _mm512_maskz_loadu_epi16((__mmask32)(((uint64_t)1 << n) - 1), wm + t);
      _mm256_storeu_si256((__m256i *)((int8_t *)wq + t), _mm512_cvtepi16_epi8(w16));
      wsum = _mm512_add_epi32(wsum, _mm512_madd_epi16(w16, _mm512_set1_epi16(1)));
    }
    const __m512i start =
        _mm512_set1_epi32((j->ep->bias ? j->ep->bias[m] : 0) - j->xzp * _mm512_reduce_add_epi32(wsum));
    for (int64_t i = 0; i < q.n64; i += 64) quad_block(planes, &q, wq, start, j->ep, m, i, out + i);
    uint8_t *y = j->y + m * d->oh * d->ow;
    for (int64_t oy = 0; oy < d->oh; oy++) copy_bytes(y + oy * d->ow, out + oy * q.P, d->ow);
  }
  nnp_free(xp);
  nnp_free(out);
  return true;
}

void nnp_qdw_range_avx512vnni(void *job, int64_t c0, int64_t c1) {
  if (!qdw_quads_vnni(job, c0, c1)) qdw_range_pairs_vnni(job, c0, c1);
}
#else
/* Built without AVX-512 VNNI support in the compiler: the AVX2 body does the work. */
void nnp_qdw_range_avx512vnni(void *job, int64_t c0, int64_t c1) { nnp_qdw_range_avx2(job, c0, c1); }
#endif
