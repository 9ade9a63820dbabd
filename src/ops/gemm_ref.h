/* The portable reference GEMM: Y += A * B, blocked for cache, no intrinsics.
 *
 * One implementation serves every op that multiplies matrices (MatMul, Gemm, and Conv
 * through im2col), so a fix or a speed-up to it reaches all of them, and their results
 * agree bit for bit on the same operands.
 *
 * Loop order is i, k, j with j innermost: the inner loop is an axpy of a row of B into a
 * row of Y, contiguous on both sides, which the compiler vectorises. It is blocked over
 * j (NNP_GEMM_REF_NB columns) and k (NNP_GEMM_REF_KB rows of B) so that the slice of B in
 * use stays in cache instead of being streamed from memory once per row of A: a 256-wide
 * row segment of Y stays in L1, a 128 x 256 panel of B (128 KiB in float32) in L2.
 *
 * Addressing: A(i, k) = A[i*sai + k*sak] (two strides, so a transposed A costs nothing),
 * B(k, j) = B[k*ldb + j], Y(i, j) = Y[i*ldy + j]. Y must be initialised (zeros, a bias or
 * a previous partial sum) and must not overlap A or B. */
#ifndef NNP_OPS_GEMM_REF_H
#define NNP_OPS_GEMM_REF_H

#include <stdint.h>

#include "nnperf/tensor.h"

#define NNP_GEMM_REF_NB 256
#define NNP_GEMM_REF_KB 128

void nnp_gemm_ref_f32(int64_t M, int64_t N, int64_t K, const float *A, int64_t sai, int64_t sak,
                      const float *B, int64_t ldb, float *Y, int64_t ldy);
void nnp_gemm_ref_f64(int64_t M, int64_t N, int64_t K, const double *A, int64_t sai, int64_t sak,
                      const double *B, int64_t ldb, double *Y, int64_t ldy);

/* The same for element type dt: float32, float64, int32, int64, uint32 or uint64 (other
 * types do nothing). Integer products accumulate in the unsigned type of the same width,
 * so overflow wraps (as numpy does) instead of being undefined behaviour. */
void nnp_gemm_ref(nnp_dtype dt, int64_t M, int64_t N, int64_t K, const void *A, int64_t sai,
                  int64_t sak, const void *B, int64_t ldb, void *Y, int64_t ldy);

#endif
