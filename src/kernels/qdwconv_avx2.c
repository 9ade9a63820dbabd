/* The INT8 depthwise body compiled with -mavx2 (kernels/qdwconv_impl.h): the same loops,
 * vectorized by the compiler, and the AVX2 row requantize. Called only after
 * the dispatch table (kernels/dispatch.h) picks AVX2. */
#include "kernels/qdwconv.h"

#if defined(__AVX2__)
#include <immintrin.h>

/* acc[i] += (src[i*sw] - zp) * wv, 8 at a time for strides 1 and 2 (stride 2: 16 bytes,
 * the even ones picked by vpshufb; only where all 16 lie inside the valid range). */
static inline void acc_row_avx2(int32_t *acc, const uint8_t *src, int64_t lo, int64_t hi, int64_t sw, int32_t zp,
                                int32_t wv) {
  const __m256i z = _mm256_set1_epi32(zp), w = _mm256_set1_epi32(wv);
  int64_t i = lo;
  if (sw == 1) {
    for (; i + 8 <= hi; i += 8) {
      __m256i x = _mm256_sub_epi32(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(src + i))), z);
      __m256i *a = (__m256i *)(acc + i);
      _mm256_storeu_si256(a, _mm256_add_epi32(_mm256_loadu_si256(a), _mm256_mullo_epi32(x, w)));
    }
  } else if (sw == 2) {
    const __m128i even = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1);
    for (; i + 8 < hi; i += 8) { /* i + 8 < hi: byte 2i + 15 <= 2(i + 8) is in range */
      __m128i b = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(src + 2 * i)), even);
      __m256i x = _mm256_sub_epi32(_mm256_cvtepu8_epi32(b), z);
      __m256i *a = (__m256i *)(acc + i);
      _mm256_storeu_si256(a, _mm256_add_epi32(_mm256_loadu_si256(a), _mm256_mullo_epi32(x, w)));
    }
  }
  nnp_qdw_acc_row_c(acc, src, i, hi, sw, zp, wv);
}

/* The stride-1 flat path (see qdwconv_impl.h) with taps in pairs: the raw bytes of two
 * taps interleaved as int16 pairs meet the pair of weights in one vpmaddwd (exact: |x w|
 * <= 255 * 255, a pair sum far inside int32), 8 outputs accumulated in a register over
 * all taps and stored once; the x zero point enters as the start value -x_zp * sum(w).
 * The plane copy has 64 bytes of slack for the 8-byte loads past the last output. */
#include <string.h>

#include "nnperf/alloc.h"

typedef struct qdw_job qdw_job;
static bool qdw_flat_pairs_avx2(const qdw_job *j, int64_t c0, int64_t c1);
#define QDW_FLAT_DEFINED
#define QDW_FLAT qdw_flat_pairs_avx2
#define QDW_RANGE nnp_qdw_range_avx2
#define QDW_REQUANT nnp_qrequant_row_avx2
#define QDW_ACC_ROW acc_row_avx2
#include "kernels/qdwconv_impl.h"

static inline __m256i load_pairs(const uint8_t *a, const uint8_t *b) {
  __m128i x = _mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)a));
  __m128i y = _mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)b));
  return _mm256_set_m128i(_mm_unpackhi_epi16(x, y), _mm_unpacklo_epi16(x, y));
}

static bool qdw_flat_pairs_avx2(const qdw_job *j, int64_t c0, int64_t c1) {
  const nnp_qdw_desc *d = j->d;
  const int64_t W = d->w + 2 * d->pw, H = d->h + 2 * d->ph, khw = d->kh * d->kw, n = d->oh * W;
  const int64_t n8 = (n + 7) / 8 * 8, np = (khw + 1) / 2;
  uint8_t *xp = nnp_malloc((size_t)(H * W + 64));
  int32_t *acc = nnp_malloc((size_t)n8 * sizeof(int32_t));
  uint8_t *q = nnp_malloc((size_t)n8);
  int64_t *offs = nnp_malloc((size_t)(2 * np) * sizeof(int64_t));
  int32_t *wp = nnp_malloc((size_t)np * sizeof(int32_t));
  if (!xp || !acc || !q || !offs || !wp || khw > 64) {
    nnp_free(q);
    nnp_free(xp);
    nnp_free(acc);
    nnp_free(offs);
    nnp_free(wp);
    return false;
  }
  memset(xp, j->xzp, (size_t)(H * W + 64));
  qdw_pair_offsets(d, W, np, offs);
  for (int64_t m = c0; m < c1; m++) {
    const int32_t wsum = qdw_pair_channel(j, m, W, xp, wp);
    const __m256i start = _mm256_set1_epi32(-j->xzp * wsum);
    for (int64_t i = 0; i < n8; i += 8) {
      __m256i a = start;
      for (int64_t p = 0; p < np; p++)
        a = _mm256_add_epi32(a, _mm256_madd_epi16(load_pairs(xp + i + offs[2 * p], xp + i + offs[2 * p + 1]),
                                                _mm256_set1_epi32(wp[p])));
      _mm256_storeu_si256((__m256i *)(acc + i), a);
    }
    /* requantize the whole flat plane (no short-row tails), then drop the W - ow extra columns */
    nnp_qrequant_row_avx2(acc, n8, j->ep, m, q);
    qdw_flat_store(j, m, W, q);
  }
  nnp_free(q);
  nnp_free(xp);
  nnp_free(acc);
  nnp_free(offs);
  nnp_free(wp);
  return true;
}
#else
static void requant_row(const int32_t *acc, int64_t n, const nnp_qepilogue *ep, int64_t row, uint8_t *y) {
  for (int64_t i = 0; i < n; i++) y[i] = nnp_qrequant(acc[i], ep, row);
}
#define QDW_FLAT qdw_flat_avx2
#define QDW_RANGE nnp_qdw_range_avx2
#define QDW_REQUANT requant_row
#define QDW_ACC_ROW nnp_qdw_acc_row_c
#include "kernels/qdwconv_impl.h"
#endif
