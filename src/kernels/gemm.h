/* Packed single-precision GEMM with a fused epilogue: C = epilogue(A * B).
 *
 * Both operands are packed into panels the micro-kernel reads sequentially:
 *  - A (M x K) into panels of NNP_SGEMM_MR rows: panel p holds rows p*MR.., stored k-major
 *    (element (k, r) at p*MR*K + k*MR + r), the last panel zero-padded;
 *  - B (K x N) into panels of NNP_SGEMM_NR columns: element (k, c) of panel q at
 *    q*NR*K + k*NR + c, zero-padded likewise.
 * A constant operand (Conv and Gemm weights) is packed once at plan compile; the other
 * is packed per run into scratch (im2col writes straight into the packed B layout).
 * The micro-kernel keeps an MR x NR tile of C in registers over the whole K (6 x 16 on
 * AVX2: 12 accumulators + 2 B vectors + 1 broadcast = 15 of 16 YMM registers) and
 * applies the epilogue as it stores, so C is written exactly once.
 *
 * On CPUs with AVX-512F the same 6 x 16 tile runs on ZMM registers (kernels/gemm_avx512.c);
 * NNP_CPU_FEATURES=avx2 keeps the AVX2 one.
 * The generic C tile is always present: it is the test oracle of the vector tiles and
 * what runs under NNP_CPU_FEATURES=generic or on CPUs without AVX2 + FMA. */
#ifndef NNP_KERNELS_GEMM_H
#define NNP_KERNELS_GEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/epilogue.h"
#include "util/threadpool.h"

#define NNP_SGEMM_MR 6
#define NNP_SGEMM_NR 16

/* Floats a packed A (M x K) or packed B (K x N) occupies. */
size_t nnp_sgemm_packed_a_floats(int64_t M, int64_t K);
size_t nnp_sgemm_packed_b_floats(int64_t K, int64_t N);

/* A(m, k) = A[m*sam + k*sak]; B(k, n) = B[k*sbk + n*sbn] (strides make transposes free). */
void nnp_sgemm_pack_a(int64_t M, int64_t K, const float *A, int64_t sam, int64_t sak, float *dst);
/* The same, its panels split over tp's threads (a MatMul's activations are packed on
 * every run: on one thread, swin_t's 3136-row A panels left the other thread waiting). */
void nnp_sgemm_pack_a_pool(int64_t M, int64_t K, const float *A, int64_t sam, int64_t sak, float *dst,
                           nnp_threadpool *tp);
void nnp_sgemm_pack_b(int64_t K, int64_t N, const float *B, int64_t sbk, int64_t sbn, float *dst);
/* A batch of products C_i = A_i x B_i whose operands are computed at run time (attention's
 * Q.K^T and attn.V: ops/fast_bmm.c, ops/einsum.c): batch i is an odometer over dims
 * (outer first), its A, B and C at the sums of index x stride; within a batch A(m, k) =
 * A[m*sam + k*sak], B(k, n) = B[k*sbk + n*sbn], C(m, n) = C[m*ldc + n]. Each batch is
 * packed into a scratch slot and multiplied; with at least as many batches as threads the
 * threads split the batches (slots: one per thread), else each batch is split over the
 * threads (Swin's 192 window products of 49 x 32 x 49 are too small to share, and were
 * packed on one thread while the other waited). */
enum { NNP_SGEMM_MAX_BATCH_DIMS = 8 };
typedef struct nnp_sgemm_batched {
  int64_t M, N, K, sam, sak, sbk, sbn, ldc;
  int n_dims;
  int64_t dims[NNP_SGEMM_MAX_BATCH_DIMS], a_str[NNP_SGEMM_MAX_BATCH_DIMS], b_str[NNP_SGEMM_MAX_BATCH_DIMS],
      c_str[NNP_SGEMM_MAX_BATCH_DIMS];
  bool generic;
  /* set by nnp_sgemm_batched_plan */
  int64_t batches, slots, slot_floats;
} nnp_sgemm_batched;
/* Fills batches, slots and slot_floats for a pool of `threads`; the scratch run needs. */
size_t nnp_sgemm_batched_plan(nnp_sgemm_batched *b, int threads);
void nnp_sgemm_batched_run(const nnp_sgemm_batched *b, const float *A, const float *B, float *C, float *scratch,
                           nnp_threadpool *tp);

/* Only column panels [q0, q1) of the packed B (threads pack disjoint panels). */
void nnp_sgemm_pack_b_panels(int64_t K, int64_t N, const float *B, int64_t sbk, int64_t sbn, float *dst, int64_t q0,
                             int64_t q1);

/* C(i, j) = C[i*ldc + j] = epilogue(sum_k A(i,k) B(k,j)), over tiles split across tp's
 * threads (tp may be NULL). ep may be NULL (plain product). C must not overlap the
 * packed operands; it may be the epilogue's residual. */
void nnp_sgemm_packed(int64_t M, int64_t N, int64_t K, const float *Ap, const float *Bp, float *C, int64_t ldc,
                      const nnp_epilogue *ep, nnp_threadpool *tp);
/* The same with the tile kernel chosen by the caller (tests: generic vs AVX2). */
void nnp_sgemm_packed_ex(int64_t M, int64_t N, int64_t K, const float *Ap, const float *Bp, float *C,
                         int64_t ldc, const nnp_epilogue *ep, nnp_threadpool *tp, bool generic);

/* One thread's block of C: row panels [ip0, ip1) x column panels [jp0, jp1), the column
 * panels' packed B contiguous from Bp (panel jp at Bp + (jp - jp0) * NR * K: a caller that
 * packs B block by block, e.g. a fused im2col, needs only the block's panels in cache).
 * K is blocked as in nnp_sgemm_packed_ex; the results are the same as its. */
void nnp_sgemm_packed_block(int64_t M, int64_t N, int64_t K, const float *Ap, const float *Bp, float *C, int64_t ldc,
                            const nnp_epilogue *ep, int64_t ip0, int64_t ip1, int64_t jp0, int64_t jp1, bool generic);

/* B read in place, unpacked: B(k, n) = B[k*ldb + n] for the N / NR full column panels
 * (a 1x1 convolution's input is already K x N row-major: packing it was a whole extra
 * pass over the tensor); the ragged last panel, when N % NR != 0, comes packed from
 * Btail (K x NR, nnp_sgemm_pack_b_panels of columns N / NR * NR..). Same results as
 * packing all of B: each tile sums the same products in the same order. */
void nnp_sgemm_direct_b_ex(int64_t M, int64_t N, int64_t K, const float *Ap, const float *B, int64_t ldb,
                           const float *Btail, float *C, int64_t ldc, const nnp_epilogue *ep, nnp_threadpool *tp,
                           bool generic);
/* Whether nnp_sgemm_direct_b_ex may take Btail NULL for an N-column product: N at most
 * NNP_SGEMM_NARROW (a 1x1 convolution on a 1x1 or 1x2 plane: a squeeze-and-excitation
 * layer), whose one panel the narrow AVX2 kernel reads in place, rows ldb apart. Packing
 * it wrote NR floats per k for one or two real ones (16 stores per k, up to 90 KB for a
 * 1392-channel layer: most of the step's time). */
bool nnp_sgemm_narrow_in_place(int64_t N, bool generic);

/* One MR x NR tile: a, b point at the panels (row k of b's panel at b + k*ldb: NR when
 * packed), c at C(i0, j0); mr <= MR, nr <= NR valid. accum: the sum starts from C's
 * current values (a later block of K; ep is then applied only by the last block). */
typedef void (*nnp_sgemm_tile_fn)(int64_t K, const float *a, const float *b, int64_t ldb, float *c, int64_t ldc,
                                  int mr, int nr, bool accum, const nnp_epilogue *ep, int64_t i0, int64_t j0);
void nnp_sgemm_tile_generic(int64_t K, const float *a, const float *b, int64_t ldb, float *c, int64_t ldc, int mr,
                            int nr, bool accum, const nnp_epilogue *ep, int64_t i0, int64_t j0);
void nnp_sgemm_tile_avx2(int64_t K, const float *a, const float *b, int64_t ldb, float *c, int64_t ldc, int mr,
                         int nr, bool accum, const nnp_epilogue *ep, int64_t i0, int64_t j0);
/* The AVX2 tile with B's rows anywhere: row k at b + off[k] (an implicit-GEMM conv's taps
 * on its phase planes, kernels/iconv.h), 16 floats read per row even where nr < 16; a
 * whole K (no accum). The same bits as nnp_sgemm_tile_avx2 on those rows. */
void nnp_sgemm_tile_off_avx2(int64_t K, const float *a, const float *b, const int32_t *off, float *c, int64_t ldc,
                             int mr, int nr, const nnp_epilogue *ep, int64_t i0, int64_t j0);
void nnp_sgemm_tile_avx512(int64_t K, const float *a, const float *b, int64_t ldb, float *c, int64_t ldc, int mr,
                           int nr, bool accum, const nnp_epilogue *ep, int64_t i0, int64_t j0);
/* Two column panels at once on AVX-512F (6 x 32): columns [j0, j0 + 16) from b0, rows
 * ldb0 apart, and [j0 + 16, j0 + nr) from b1, rows ldb1 apart; 17 < nr <= 32. The same
 * bits as nnp_sgemm_tile_avx512 on each panel (gemm_avx512.c says why it is faster). */
void nnp_sgemm_tile2_avx512(int64_t K, const float *a, const float *b0, int64_t ldb0, const float *b1, int64_t ldb1,
                            float *c, int64_t ldc, int mr, int nr, bool accum, const nnp_epilogue *ep, int64_t i0,
                            int64_t j0);
/* M = 1 (nnp_sgemm_packed_ex takes it on AVX-512F): c[0..) = columns j0.. of
 * epilogue(A(0, :) * B) for np (1..4) consecutive packed column panels from b, each with
 * more than one column (N: B's columns), Ap packed as above, K cut into blocks of kc as
 * the tile's K blocking does: the same bits as the tile. */
void nnp_sgemv_panel_avx512(int64_t K, int64_t kc, const float *Ap, const float *b, float *c, int64_t N,
                            const nnp_epilogue *ep, int64_t j0, int np);
/* M = 1 on AVX2 + FMA (nnp_sgemm_packed_ex takes it there): C[j] = epilogue(A(0, :) * B)(j)
 * for the columns of packed column panels [p0, p1), the same bits as the AVX2 tile. */
void nnp_sgemv_panels_avx2(int64_t K, const float *Ap, const float *Bp, float *C, int64_t N, const nnp_epilogue *ep,
                           int64_t p0, int64_t p1);
/* A ragged last column panel of at most NNP_SGEMM_NARROW columns on AVX2 + FMA: columns
 * [j0, j0 + nr) of row panels [ip0, ip1) for one block of K (kn steps; a0: panel ip0's
 * packed A at the block's first k, panels a_stride floats apart; b: the block's first row
 * of the column panel, rows ldb apart; c0: C(ip0 * MR, j0), rows ldc apart). The same
 * bits as the AVX2 tile on those columns (gemm_avx2.c). */
#define NNP_SGEMM_NARROW 2
void nnp_sgemm_narrow_avx2(int64_t M, int64_t kn, const float *a0, int64_t a_stride, const float *b, int64_t ldb,
                           float *c0, int64_t ldc, int nr, int64_t ip0, int64_t ip1, bool accum,
                           const nnp_epilogue *ep, int64_t j0);
/* The tile the non-generic paths run: AVX-512F where the CPU has it (and
 * NNP_CPU_FEATURES is not avx2), else AVX2 + FMA. */
nnp_sgemm_tile_fn nnp_sgemm_tile_fast(void);

#endif
