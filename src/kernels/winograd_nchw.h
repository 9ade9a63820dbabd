/* Winograd F(2x2, 3x3) on NCHW planes, for CPUs with AVX2 + FMA and no AVX-512 (where
 * there is no blocked layout and kernels/winograd.h does not run): dense 3x3 stride-1
 * layers, which on those CPUs otherwise run the direct kernel (kernels/dconv.h).
 *
 * The same algebra as kernels/winograd.h: each 2x2 block of outputs comes from a 4x4
 * tile of inputs, V = B^T d B (adds only) per tile and input channel, U = G g G^T per
 * weight (once, at prepare), 16 products M_xi = U_xi x V_xi summed over the input
 * channels, and Y = A^T M A (adds only) per tile and output channel. The 16 products
 * are plain [M x C] by [C x tiles] matrix products, the shape of a 1x1 convolution over
 * a plane of tiles, so they run on the packed SGEMM (kernels/gemm.h) with V read in
 * place as its B operand. 4C multiplications per output instead of the direct kernel's
 * 9C (2.25x fewer); the cost instead: the two transforms and V and M (16 values per
 * tile and channel), written and read once each per image.
 *
 * Layout of the scratch: V[xi][c][ldt], M[xi][m][ldt], tile t = ty * tw + tx of the
 * image's th x tw tiles in columns [0, T); V's columns [T, N) are zero (N = T rounded up
 * to the GEMM's 16-column panels), and ldt leaves slack past N for the output
 * transform's last vector, whose lanes past the row are discarded.
 *
 * Numerics: the transforms only add, subtract and halve; the result differs from the
 * direct sum by rounding alone (tests/kernels/test_kernels_conv.c: within the tolerance
 * of the other fast paths against a double-precision naive convolution).
 *
 * winograd_nchw.c holds the plan, the passes and the portable transforms (the oracle of
 * the vector ones); winograd_nchw_avx2.c the AVX2 transforms. */
#ifndef NNP_KERNELS_WINOGRAD_NCHW_H
#define NNP_KERNELS_WINOGRAD_NCHW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/conv.h"
#include "kernels/epilogue.h"
#include "nnperf/status.h"
#include "util/threadpool.h"

/* Output rows wider than this keep the direct kernel (the input transform reads its
 * four rows through a stack buffer). */
#define NNP_WNC_MAX_OW 512

typedef struct nnp_wnc_geom {
  int64_t c, m, h, w, oh, ow, ph, pw; /* the convolution (one image) */
  int64_t ty0;                        /* the first tile row V and M hold (a band's; 0 for the image) */
  int64_t th, tw, T;                  /* tile rows held, tiles across, tiles held (th x tw) */
  int64_t N, ldt;                     /* GEMM columns (T rounded up to 16), row stride of V and M */
} nnp_wnc_geom;

typedef struct nnp_wnc nnp_wnc;

/* Whether d has the shape the transforms serve: group 1, 3x3, stride 1, no dilation,
 * padding at most 1 on each side, output rows at most NNP_WNC_MAX_OW wide. Whether it
 * pays is the caller's question (nnp_wnc_pays). */
bool nnp_wnc_applies(const nnp_conv2d_desc *d);
/* Whether it is faster than the direct kernel on this layer (measured: kernels.md). */
bool nnp_wnc_pays(const nnp_conv2d_desc *d);
/* w: m x c x 3 x 3. generic: the portable transforms (tests); otherwise the AVX2 ones
 * (the caller checks the dispatch table). The products run the GEMM tile the table
 * says either way. band_rows: 0 chooses (bands of tile rows where the transformed
 * weights are small: each band's V and M stay in L2 through the three stages, one
 * band per thread, no barrier between the stages), < 0 none (three passes of the pool
 * over the image), > 0 that many tile rows per band (tests). A run in place never
 * goes by bands. */
nnp_status nnp_wnc_prepare(const nnp_conv2d_desc *d, const float *w, bool generic, int64_t band_rows, nnp_wnc **out);
void nnp_wnc_destroy(nnp_wnc *k);
size_t nnp_wnc_scratch_bytes(const nnp_wnc *k);
/* y = epilogue(conv(x, w)) as nnp_conv2d_run (ep indexed like one image's output, bias
 * per row, residual shaped like y; y may alias x and the residual). scratch:
 * nnp_wnc_scratch_bytes, 64-byte aligned. */
void nnp_wnc_run(const nnp_wnc *k, const float *x, float *y, const nnp_epilogue *ep, void *scratch,
                 nnp_threadpool *tp);

/* The transforms. Input: all tiles of one input channel: xc is its plane, vc V's row
 * for it at position 0 (position xi at vc + xi * vs); tiles [0, T) written and zeros
 * in [T, N). The AVX2 one writes whole vectors: up to 7 values past a tile row, into
 * the next row's tiles (written after it) or, after the last row, into the slack past
 * N. Output: one row of tiles (ty) of one output channel: mm is M's row for it at
 * position 0 (position xi at mm + xi * ms), ym the channel's output plane, rm its
 * residual plane or NULL, bias added before the residual and the activation of ep. */
typedef void (*nnp_wnc_input_fn)(const nnp_wnc_geom *g, const float *xc, float *vc, int64_t vs);
typedef void (*nnp_wnc_output_fn)(const nnp_wnc_geom *g, const float *mm, int64_t ms, float *ym, const float *rm,
                                  float bias, const nnp_epilogue *ep, int64_t ty);
void nnp_wnc_input_channel_generic(const nnp_wnc_geom *g, const float *xc, float *vc, int64_t vs);
void nnp_wnc_output_row_generic(const nnp_wnc_geom *g, const float *mm, int64_t ms, float *ym, const float *rm,
                                float bias, const nnp_epilogue *ep, int64_t ty);
void nnp_wnc_input_channel_avx2(const nnp_wnc_geom *g, const float *xc, float *vc, int64_t vs);
void nnp_wnc_output_row_avx2(const nnp_wnc_geom *g, const float *mm, int64_t ms, float *ym, const float *rm,
                             float bias, const nnp_epilogue *ep, int64_t ty);
/* Whether winograd_nchw_avx2.c was compiled with AVX2 + FMA (else its rows are the
 * generic ones). */
bool nnp_wnc_avx2_built(void);

/* Floats between the rows of the transforms' input row buffers. */
int64_t nnp_wnc_buf_stride(const nnp_wnc_geom *g);

#endif
