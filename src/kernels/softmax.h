/* Softmax over the last axis (rows of n contiguous floats) on AVX2 or AVX-512: max,
 * e^(x - max) by the FusedElementwise programs' vector exp (within 1e-6 of expf), the sum
 * in float, one multiply by its reciprocal; rows split across the pool. The reference (ops/reduce.c)
 * uses expf and double sums: results agree within float rounding. vit_b_16 and swin_t
 * spend 5% in their attention softmax on the reference (docs/kernels.md). */
#ifndef NNP_KERNELS_SOFTMAX_H
#define NNP_KERNELS_SOFTMAX_H

#include <stdbool.h>
#include <stdint.h>

#include "util/threadpool.h"

/* rows rows of n floats, split across the pool, each by the AVX-512 row function
 * (softmax_avx512.c: 16 lanes, the same e^x bits, sums in 16 lanes) or the AVX2 one. */
void nnp_softmax_rows(const float *x, float *y, int64_t rows, int64_t n, bool avx512, nnp_threadpool *tp);
void nnp_softmax_row_avx2(const float *x, float *y, int64_t n);
void nnp_softmax_row_avx512(const float *x, float *y, int64_t n);

#endif
