/* The INT8 depthwise body compiled with -mavx2 (kernels/qdwconv_impl.h): the same loops,
 * vectorized by the compiler, and the AVX2 row requantize. Called only after
 * nnp_cpu_has_avx2_fma(). */
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

#define QDW_FLAT qdw_flat_avx2
#define QDW_RANGE nnp_qdw_range_avx2
#define QDW_REQUANT nnp_qrequant_row_avx2
#define QDW_ACC_ROW acc_row_avx2
#include "kernels/qdwconv_impl.h"
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
