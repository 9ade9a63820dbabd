/* The INT8 depthwise body for AVX-512 VNNI (this file gets -mavx512f -mavx512vl
 * -mavx512bw -mavx512vnni): the stride-1 flat path of qdwconv_avx2.c with 16 outputs per
 * ZMM and the pair multiply-add and accumulate in one vpdpwssd, so that INT8 depthwise
 * layers keep up with the FP32 AVX-512 ones (EfficientNet-Lite0's INT8 depthwise layers
 * took 3x the time of the FP32 blocked ones on the AVX2 body). Each lane holds the pair
 * (x[i + off0], x[i + off1]) as two int16 (bytes zero-extended: exact), against the pair
 * of weights (w0, w1); the sums stay exact in int32, so the bytes equal the reference
 * QLinearConv's. Strides other than 1 and dilation run the shared row path, compiled
 * here with 16-wide accumulate rows. Called only after nnp_cpu_has_avx512_vnni(). */
#include "kernels/qdwconv.h"

#if defined(__AVX512VNNI__) && defined(__AVX512F__)
#include <immintrin.h>
#include <string.h>

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
#define QDW_RANGE nnp_qdw_range_avx512vnni
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
#else
/* Built without AVX-512 VNNI support in the compiler: the AVX2 body does the work. */
void nnp_qdw_range_avx512vnni(void *job, int64_t c0, int64_t c1) { nnp_qdw_range_avx2(job, c0, c1); }
#endif
