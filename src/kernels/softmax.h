/* Softmax over the last axis (rows of n contiguous floats) on AVX2: max, e^(x - max) by
 * the FusedElementwise programs' vector exp (within 1e-6 of expf), the sum in float, one
 * multiply by its reciprocal; rows split across the pool. The reference (ops/reduce.c)
 * uses expf and double sums: results agree within float rounding. vit_b_16 and swin_t
 * spend 5% in their attention softmax on the reference (docs/kernels.md). */
#ifndef NNP_KERNELS_SOFTMAX_H
#define NNP_KERNELS_SOFTMAX_H

#include <stdint.h>

#include "util/threadpool.h"

void nnp_softmax_rows_avx2(const float *x, float *y, int64_t rows, int64_t n, nnp_threadpool *tp);
/* The same with 16 lanes (softmax_avx512.c): each e^x the same bits, sums in 16 lanes. */
void nnp_softmax_rows_avx512(const float *x, float *y, int64_t rows, int64_t n, nnp_threadpool *tp);

#endif
