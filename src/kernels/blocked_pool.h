/* MaxPool and GlobalAveragePool in the blocked NCHW16c layout (kernels/blocked_conv.h): the window of one
 * output pixel is a max over 16-float vectors, one per tap, so resnet's stem pool stays
 * inside the blocked region instead of costing a FromBlocked and a ToBlocked around it.
 * d->planes counts channel blocks (N * C/16). Padding never takes part; padded channels
 * stay 0 (the max of zeros). y may not alias x. */
#ifndef NNP_KERNELS_BLOCKED_POOL_H
#define NNP_KERNELS_BLOCKED_POOL_H

#include <stdbool.h>

#include "kernels/pool.h"

/* generic: the portable C rows (the test oracle's twin) even on an AVX-512 CPU. */
void nnp_maxpool2d_blocked(const nnp_pool2d_desc *d, const float *x, float *y, bool generic, nnp_threadpool *tp);

/* One output row oh of one channel block, the max (a NULL) or the average (a, whose p is
 * d): x the block's input plane, y its output row (blocked_pool_avx512.c; only where the
 * dispatch table picks AVX-512). */
void nnp_pool2d_blocked_row_avx512(const nnp_pool2d_desc *d, const nnp_avgpool2d_desc *a, const float *x, float *y,
                                   int64_t oh);
/* The same row in two YMM halves (blocked_pool_avx2.c; only where the table picks AVX2). */
void nnp_pool2d_blocked_row_avx2(const nnp_pool2d_desc *d, const nnp_avgpool2d_desc *a, const float *x, float *y,
                                 int64_t oh);

/* AveragePool on blocked X and Y (d->p.planes counts channel blocks): each output pixel
 * the sum of its window's in-bounds taps in (kh, kw) order, one 16-float vector per tap,
 * divided by the tap count (nnp_avgpool_count): the portable NCHW rows' arithmetic, so
 * the two agree bit for bit. Inception's pool branches and DenseNet's transitions read
 * blocked values: without it each cost a FromBlocked and a ToBlocked. */
void nnp_avgpool2d_blocked(const nnp_avgpool2d_desc *d, const float *x, float *y, bool generic, nnp_threadpool *tp);

/* GlobalAveragePool of a blocked X (n images of c real channels, hw pixels) into NCHW Y
 * [n, c, 1, 1]: each lane summed in double over the pixels in order, then divided, as
 * nnp_global_avgpool (kernels/pool.h) does per plane, so the two agree bit for bit. The
 * classifier reads Y as it is: no FromBlocked of the last feature map. */
void nnp_global_avgpool_blocked(int64_t n, int64_t c, int64_t hw, const float *x, float *y, nnp_threadpool *tp);

#endif
