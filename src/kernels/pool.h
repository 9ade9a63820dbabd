/* Fast float32 pooling over NCHW planes, split across the pool by plane:
 * 2-D MaxPool (float32 or uint8; padding never wins, ties keep the first tap, as the reference) and
 * GlobalAveragePool (summed in double, as the reference). y may not alias x. */
#ifndef NNP_KERNELS_POOL_H
#define NNP_KERNELS_POOL_H

#include <stdbool.h>
#include <stdint.h>

#include "util/threadpool.h"

typedef struct nnp_pool2d_desc {
  int64_t planes, h, w, oh, ow, kh, kw, sh, sw, ph, pw;
} nnp_pool2d_desc;

/* Valid taps [lo, hi) of output o along an axis (stride s, padding p, kernel k, input
 * length n): 0 <= o*s - p + tap < n. Shared by the NCHW and the blocked pools. */
static inline void nnp_pool_taps(int64_t o, int64_t s, int64_t p, int64_t k, int64_t n, int64_t *lo, int64_t *hi) {
  const int64_t start = o * s - p;
  *lo = start < 0 ? -start : 0;
  *hi = start + k > n ? n - start : k;
}

/* generic: the portable rows whatever the dispatch table says (the reference twin) */
void nnp_maxpool2d(const nnp_pool2d_desc *d, const float *x, float *y, bool generic, nnp_threadpool *tp);
/* One output row oh of one plane xp: the portable rows and the AVX2 ones (pool_avx2.c),
 * and outputs [o0, o1) of a row one by one (the AVX2 rows' borders). */
void nnp_maxpool_row_portable(const nnp_pool2d_desc *d, const float *xp, int64_t oh, float *yr);
void nnp_maxpool_row_avx2(const nnp_pool2d_desc *d, const float *xp, int64_t oh, float *yr);
void nnp_maxpool_outputs_portable(const nnp_pool2d_desc *d, const float *xp, int64_t oh, int64_t o0, int64_t o1,
                                  float *yr);
/* Whole planes, AVX2: planes [p0, p1) of x, each copied a band of rows at a time inside
 * a border of -inf (a buffer of NNP_MAXPOOL_PLANE_FLOATS floats on the stack) so that
 * every output is a vector lane; the same bits as the rows. For padded planes, whose
 * border outputs the rows leave to a per-output loop (pool_avx2.c says why). fits: strides
 * 1 and 2, every window holding a valid tap, one output row's band fitting the buffer;
 * pays: it fits, and over 1/16 of a row's outputs are borders. */
#define NNP_MAXPOOL_PLANE_FLOATS 8192
bool nnp_maxpool_plane_avx2_fits(const nnp_pool2d_desc *d);
bool nnp_maxpool_plane_avx2_pays(const nnp_pool2d_desc *d);
void nnp_maxpool_planes_avx2(const nnp_pool2d_desc *d, const float *x, float *y, int64_t p0, int64_t p1);
/* uint8 (an INT8 graph's activations): the same windows, ties and padding rule */
void nnp_maxpool2d_u8(const nnp_pool2d_desc *d, const uint8_t *x, uint8_t *y, nnp_threadpool *tp);
/* AveragePool 2-D, float32: the mean of each window's taps inside the input; the divisor
 * is that count (include_pad 0) or the count of taps inside the padded input [-pb, in+pe)
 * (include_pad 1; taps past the end padding, which ceil_mode can add, never count). A
 * window wholly in padding gives 0. Summed in float in (kh, kw) order: the reference sums
 * in double, so results agree within float rounding, not bit for bit. */
typedef struct nnp_avgpool2d_desc {
  nnp_pool2d_desc p;
  int64_t ph_end, pw_end;
  bool include_pad;
} nnp_avgpool2d_desc;
/* generic: the portable rows (the (kh, kw)-order sums) whatever the dispatch table says */
void nnp_avgpool2d(const nnp_avgpool2d_desc *d, const float *x, float *y, bool generic, nnp_threadpool *tp);
/* Taps of output o along one axis (stride s, pads pb and pe, kernel k, input length n)
 * that the divisor counts: inside the input, or with include_pad inside [-pb, n + pe). */
int64_t nnp_avgpool_count(int64_t o, int64_t s, int64_t pb, int64_t pe, int64_t k, int64_t n, bool include_pad);
/* The AVX2 rows (pool_avx2.c): output rows [oh0, oh1) of plane xp into plane yp, summed
 * separably (each input column's valid rows first, in kh order, then kw taps over those
 * column sums), so the bits differ from the portable rows' within float rounding. All
 * the rows' column sums go first, each into its own row of t (nnp_avgpool_avx2_scratch
 * floats apart), then the rows' windows. cols: the divisor's column factors of outputs
 * [0, ow) padded with ones to a multiple of 8; t: scratch of oh1 - oh0 such rows, each's
 * first pw floats zero and everything from pw + w on zero (only [pw, pw + w) is written). */
int64_t nnp_avgpool_avx2_scratch(const nnp_avgpool2d_desc *d);
void nnp_avgpool_rows_avx2(const nnp_avgpool2d_desc *d, const float *xp, int64_t oh0, int64_t oh1, float *yp,
                           const float *cols, float *t);

/* y[p] = mean of plane p (planes of hw elements) */
void nnp_global_avgpool(int64_t planes, int64_t hw, const float *x, float *y, nnp_threadpool *tp);

#endif
