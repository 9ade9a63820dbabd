/* INT8 matrix product for quantized Gemm / MatMul with constant weights (ops/qgemm.c):
 *   acc(r, n) = sum_k (X(r, k) - x_zp) (W(n, k) - w_zp(n)) + bias(n)
 * for rows r of uint8 activations X (R x K) and int8 weights W (N x K, one row per
 * output), then either the requantize of kernels/qgemm.h (uint8 Y, bit for bit
 * nnp_qrequant) or a float32 Y = (float)acc * scale(n) (the dequantized output a QDQ
 * classifier's last Gemm feeds to the graph output).
 *
 * Shape: a fully connected layer has few rows (R = batch) and large N x K, so it is a
 * matrix-vector product per row, bound by streaming the weights. Both operands are
 * widened to int16 with their zero points subtracted (weights once at prepare,
 * activations once per run), which makes every product exact under `vpmaddwd`: a pair
 * sum is at most 2 * 255 * 255 (the u8 x s8 `vpmaddubsw` alternative saturates, see
 * kernels/qgemm.h). K is padded with zeros to a multiple of 16 (one YMM of int16).
 * Output channels are split across the thread pool; each block of 4 weight rows stays
 * in L1 while every row r of X passes over it, so the weights stream once per run.
 * The generic C body is the oracle of the AVX2 one: the int32 sums are identical. */
#ifndef NNP_KERNELS_QGEMV_H
#define NNP_KERNELS_QGEMV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/qgemm.h"
#include "util/threadpool.h"

/* K rounded up to the int16 vector width. */
int64_t nnp_qgemv_kpad(int64_t K);

/* dst (N x kpad int16) = W(n, k) - w_zp[n], zero beyond K; W(n, k) = W[n*swn + k*swk]
 * (Gemm transB = 1: swn = K, swk = 1; MatMul or transB = 0: swn = 1, swk = N). */
void nnp_qgemv_pack_w(int64_t N, int64_t K, const int8_t *W, int64_t swn, int64_t swk, const int32_t *w_zp,
                      int16_t *dst);

/* dst (R x kpad int16) = X[r*K + k] - x_zp, zero beyond K. */
void nnp_qgemv_widen_x(int64_t R, int64_t K, const uint8_t *X, int32_t x_zp, int16_t *dst);

/* The output of nnp_qgemv: exactly one of u8 (with ep: bias, mult, zp, clamp) or f32
 * (with bias, NULL for none, and scale per output channel). Y(r, n) at [r*N + n]. */
typedef struct nnp_qgemv_out {
  uint8_t *u8;
  const nnp_qepilogue *ep;
  float *f32;
  const int32_t *bias;
  const float *scale;
} nnp_qgemv_out;

void nnp_qgemv(int64_t R, int64_t N, int64_t kpad, const int16_t *x, const int16_t *w, const nnp_qgemv_out *out,
               nnp_threadpool *tp, bool generic);

/* The AVX2 body: 4 dot products (w0..w3 against x) of kpad int16, exact int32 sums. */
void nnp_qgemv_dot4_avx2(int64_t kpad, const int16_t *x, const int16_t *w, int64_t ldw, int32_t acc[4]);

#endif
