/* Packed INT8 GEMM (u8 activations x s8 weights) with a fused requantize epilogue:
 * C(i, j) = requant_i(sum_k (A(i,k) - a_zp_i) (B(k,j) - b_zp)) as uint8.
 *
 * Why the int16 `vpmaddwd` path and not u8 x s8 `vpmaddubsw`: this CPU has AVX2 without
 * VNNI. vpmaddubsw adds two u8*s8 products into a *saturating* int16, so 255*127*2 =
 * 64770 (or 255*-128*2 = -65280) clips at 32767 / -32768 unless weights are kept to 7
 * bits. vpmaddwd multiplies int16 pairs and adds them into int32, which is exact for
 * every 8-bit input. Both operands are therefore widened to int16 at pack time, and the
 * zero points are subtracted there too: (x - x_zp) and (w - w_zp) lie in [-255, 255], so
 * a pair sum is at most 2*255*255 = 130050, far inside int32, and no zero-point
 * correction terms are needed afterwards. The cost is packed panels twice the size of
 * u8 ones; the gain is 16 multiply-adds per instruction (8 for FMA on floats) and no
 * accuracy caveat. tests/kernels/test_kernels_qgemm.c drives the saturating corners.
 *
 * Layout (K2 = ceil(K / 2), pairs of k, the odd tail padded with 0):
 *  - A (M x K, weights) in panels of NNP_QGEMM_MR rows: int16 at
 *    p*MR*2*K2 + kp*MR*2 + r*2 + (k & 1);
 *  - B (K x N, activations) in panels of NNP_QGEMM_NR columns: int16 at
 *    q*NR*2*K2 + kp*NR*2 + c*2 + (k & 1).
 * The micro-kernel keeps a 6 x 16 int32 tile in 12 YMM registers (as the SGEMM does).
 *
 * The requantize matches ops/quant.c's reference bit for bit: y = clamp(rintf((float)
 * (acc + bias) * mult) + zp, qmin, qmax), with mult = x_scale * w_scale / y_scale
 * computed in float32 by the caller. The generic C tile is the oracle of the AVX2 one. */
#ifndef NNP_KERNELS_QGEMM_H
#define NNP_KERNELS_QGEMM_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/threadpool.h"

#define NNP_QGEMM_MR 6
#define NNP_QGEMM_NR 16

/* Requantize of row i (an output channel): bias[i] (NULL: none) is added to the int32
 * sum, which is scaled by mult[i], rounded half-even, offset by zp and clamped to
 * [qmin, qmax] (0..255, or tighter for a fused Relu / Clip). */
typedef struct nnp_qepilogue {
  const int32_t *bias;
  const float *mult;
  int32_t zp, qmin, qmax;
} nnp_qepilogue;

/* int16 elements a packed A (M x K) or packed B (K x N) occupies. */
size_t nnp_qgemm_packed_a_elems(int64_t M, int64_t K);
size_t nnp_qgemm_packed_b_elems(int64_t K, int64_t N);

/* A(m, k) = A[m*lda + k] (int8); a_zp: per-row zero points, NULL for all 0. */
void nnp_qgemm_pack_a(int64_t M, int64_t K, const int8_t *A, int64_t lda, const int32_t *a_zp, int16_t *dst);
/* B(k, n) = B[k*sbk + n*sbn] (uint8), b_zp subtracted. */
void nnp_qgemm_pack_b(int64_t K, int64_t N, const uint8_t *B, int64_t sbk, int64_t sbn, int32_t b_zp, int16_t *dst);

/* Which tile runs: the portable C one (the oracle), AVX2 vpmaddwd + vpaddd (the issue's
 * AVX2-without-VNNI target), or AVX-512 VNNI vpdpwssd on YMM (qgemm_avx512vnni.c). */
typedef enum nnp_qgemm_isa { NNP_QGEMM_GENERIC, NNP_QGEMM_AVX2, NNP_QGEMM_VNNI } nnp_qgemm_isa;
/* The fastest tile this CPU runs, NNP_CPU_FEATURES respected (generic, avx2). */
nnp_qgemm_isa nnp_qgemm_best_isa(void);
const char *nnp_qgemm_isa_name(nnp_qgemm_isa isa); /* "generic", "avx2", "avx512vnni" */

/* C(i, j) = C[i*ldc + j], over tiles split across tp's threads (tp may be NULL), on the
 * given tile (which the caller has checked the CPU runs). */
void nnp_qgemm_packed_isa(int64_t M, int64_t N, int64_t K, const int16_t *Ap, const int16_t *Bp, uint8_t *C,
                          int64_t ldc, const nnp_qepilogue *ep, nnp_threadpool *tp, nnp_qgemm_isa isa);
/* The same on the generic tile, or else the best one. */
void nnp_qgemm_packed_ex(int64_t M, int64_t N, int64_t K, const int16_t *Ap, const int16_t *Bp, uint8_t *C,
                         int64_t ldc, const nnp_qepilogue *ep, nnp_threadpool *tp, bool generic);

/* One MR x NR tile; raw int32 sums when c is NULL go to acc (tests), else requantized. */
typedef void (*nnp_qgemm_tile_fn)(int64_t K2, const int16_t *a, const int16_t *b, uint8_t *c, int64_t ldc, int mr,
                                  int nr, const nnp_qepilogue *ep, int64_t i0);
void nnp_qgemm_tile_generic(int64_t K2, const int16_t *a, const int16_t *b, uint8_t *c, int64_t ldc, int mr, int nr,
                            const nnp_qepilogue *ep, int64_t i0);
void nnp_qgemm_tile_avx2(int64_t K2, const int16_t *a, const int16_t *b, uint8_t *c, int64_t ldc, int mr, int nr,
                         const nnp_qepilogue *ep, int64_t i0);
void nnp_qgemm_tile_vnni(int64_t K2, const int16_t *a, const int16_t *b, uint8_t *c, int64_t ldc, int mr, int nr,
                         const nnp_qepilogue *ep, int64_t i0);

/* im2col helper of QLinearConv (ops/fast_qconv.c), AVX2 only: 16 consecutive uint8 of
 * every channel pair (x + ch*plane, x + (ch+1)*plane) minus zp, interleaved as the pair
 * rows of a packed B panel: dst[(ch/2)*NR*2 + c*2 + (ch&1)]. An odd C's last pair
 * repeats channel C-1 (the phantom channel, whose weights are 0). */
void nnp_qim2col_pairs_avx2(const uint8_t *x, int64_t plane, int64_t C, int16_t zp, int16_t *dst);
/* The same for 16 arbitrary columns: x[ch*plane + off[c]] where in[c], else the zero
 * point (padding), gathered bytewise and then shifted and interleaved as above. */
void nnp_qim2col_pairs_gather_avx2(const uint8_t *x, int64_t plane, int64_t C, const int64_t *off, const bool *in,
                                   uint8_t zp, int16_t *dst);

/* The u8 x s8 variant for CPUs with AVX-512 VNNI (vpdpbusd: four u8 x s8 products summed
 * into each int32 lane, exact, twice the work per instruction of vpdpwssd on int16 pairs).
 * Operands stay 8-bit: activations raw uint8 (zero point NOT subtracted), weights raw int8
 * with zero point 0 (symmetric: what nnperf's export writes). Then
 *   sum_k (x - x_zp) w = sum_k x w - x_zp sum_k w,
 * so the caller folds -x_zp * rowsum(w) into the epilogue's bias, and padding / K tails
 * hold x_zp (any value: their weights are 0). Layout (K4 = ceil(K / 4)):
 *  - A (M x K) in panels of MR rows: int8 at p*MR*4*K4 + kq*MR*4 + r*4 + (k & 3);
 *  - B (K x N) in panels of NR columns: uint8 at q*NR*4*K4 + kq*NR*4 + c*4 + (k & 3).
 * nnp_qgemm4_tile_generic is the oracle of the VNNI tile. */
size_t nnp_qgemm4_packed_a_bytes(int64_t M, int64_t K);
size_t nnp_qgemm4_packed_b_bytes(int64_t K, int64_t N);
void nnp_qgemm4_pack_a(int64_t M, int64_t K, const int8_t *A, int64_t lda, int8_t *dst);
void nnp_qgemm4_pack_b(int64_t K, int64_t N, const uint8_t *B, int64_t sbk, int64_t sbn, uint8_t pad, uint8_t *dst);
typedef void (*nnp_qgemm4_tile_fn)(int64_t K4, const int8_t *a, const uint8_t *b, uint8_t *c, int64_t ldc, int mr,
                                   int nr, const nnp_qepilogue *ep, int64_t i0);
void nnp_qgemm4_tile_generic(int64_t K4, const int8_t *a, const uint8_t *b, uint8_t *c, int64_t ldc, int mr, int nr,
                             const nnp_qepilogue *ep, int64_t i0);
void nnp_qgemm4_tile_vnni(int64_t K4, const int8_t *a, const uint8_t *b, uint8_t *c, int64_t ldc, int mr, int nr,
                          const nnp_qepilogue *ep, int64_t i0);
/* Two row panels a0 (6 full rows) and a1 (mr1 rows) against one B panel: rows i0..i0+5
 * and i0+6.. of C (the VNNI path's tile wherever two row panels remain). */
void nnp_qgemm4_tile2_vnni(int64_t K4, const int8_t *a0, const int8_t *a1, const uint8_t *b, uint8_t *c,
                           int64_t ldc, int mr1, int nr, const nnp_qepilogue *ep, int64_t i0);
/* vnni false: the generic tile. */
void nnp_qgemm4_packed(int64_t M, int64_t N, int64_t K, const int8_t *Ap, const uint8_t *Bp, uint8_t *C, int64_t ldc,
                       const nnp_qepilogue *ep, nnp_threadpool *tp, bool vnni);
/* im2col helpers of the u8 layout (AVX2): channels ch..ch+3 of 16 columns as one
 * 64-byte group row, for every group of 4 of C4 channels (C4 = C rounded up to 4; the
 * phantom channels repeat channel C-1). contiguous: x + ch*plane + c; gather: offsets
 * off[c] where in[c], else pad. */
void nnp_qim2col4_avx2(const uint8_t *x, int64_t plane, int64_t C, int64_t C4, uint8_t *dst);
void nnp_qim2col4_gather_avx2(const uint8_t *x, int64_t plane, int64_t C, int64_t C4, const int64_t *off,
                              const bool *in, uint8_t pad, uint8_t *dst);
/* The same where the columns are `runs` runs of consecutive offsets: run r covers the
 * columns whose bits are set in lanes[r] and reads x + ch*plane + shift[r] + c for column
 * c; columns in no run are pad (AVX-512BW masked loads; qgemm_avx512vnni.c). */
void nnp_qim2col4_runs_avx512(const uint8_t *x, int64_t plane, int64_t C, int64_t C4, const int64_t *shift,
                              const uint16_t *lanes, int runs, uint8_t pad, uint8_t *dst);

/* The scalar requantize both tiles use for partial tiles (and the reference of tests). */
static inline uint8_t nnp_qrequant(int32_t acc, const nnp_qepilogue *ep, int64_t i) {
  int32_t s = acc + (ep->bias ? ep->bias[i] : 0);
  float r = rintf((float)s * ep->mult[i]) + (float)ep->zp;
  if (!(r >= (float)ep->qmin)) r = (float)ep->qmin;
  if (r > (float)ep->qmax) r = (float)ep->qmax;
  return (uint8_t)r;
}

#endif
