/* Winograd F(2x2, 3x3) for the blocked (NCHW16c) convolution: dense 3x3 layers at
 * stride 1 on large planes, AVX-512 only (the direct tiles of blocked_conv_avx512.c and
 * the generic kernel stay the fallback and the oracle).
 *
 * Each 2x2 block of outputs is computed from a 4x4 tile of inputs: the tile transformed
 * (V = B^T d B, adds only), 16 products with transformed weights (U = G g G^T, computed
 * once at prepare) summed over the input channels, and the 16 sums transformed back
 * (Y = A^T M A). The products are 16 independent matrix products, one per position xi
 * of the 4x4 tile: [tiles x C] by [C x M], which are 1x1 convolutions over a "plane" of
 * tiles, so they run on the blocked 1x1 kernel (its wide tiles, chunks and epilogue).
 * Multiplications per output: 16 * C / 4 = 4C where the direct kernel does 9C (2.25x
 * fewer); what it costs instead: the transforms (adds) and V and M, 16 values per tile
 * and channel (4x the activation per image), written and read once each.
 *
 * Numerics: the transforms only add, subtract and halve, and the result differs from
 * the direct sum by rounding alone (test_kernels_blocked_conv compares it with the
 * generic kernel, tolerance 1e-5 as for the direct tiles).
 *
 * V and M, for one image (a batch runs image by image), live in the caller's scratch (a
 * plan's one scratch buffer, shared by its steps). */
#ifndef NNP_KERNELS_WINOGRAD_H
#define NNP_KERNELS_WINOGRAD_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/blocked_conv.h"

typedef struct nnp_wino nnp_wino;

/* The tile geometry the AVX-512 transforms need. */
typedef struct nnp_wino_geom {
  int64_t c, m, h, w, oh, ow, ph, pw; /* the convolution (NCHW terms) */
  int64_t cb, mb;                     /* channel blocks in and out */
  int64_t th, tw;                     /* tiles down and across: ceil(oh / 2), ceil(ow / 2) */
  int64_t vh;                         /* tile rows of V's and M's planes: th times the images of a pass */
  int64_t vs, ms;                     /* floats from one tile position xi to the next in V, M */
} nnp_wino_geom;

/* Whether d is a layer Winograd serves (3x3, stride 1, no dilation, group 1, padding
 * 0 or 1, output planes at least NNP_WINO_MIN_W wide and high, or half that in batches
 * of NNP_WINO_MIN_BATCH or more), on an AVX-512 CPU, unless NNP_NOWINO is set in the
 * environment (then the direct tiles run). On one 7x7 plane the 4x4 tiles are half used
 * and the transformed weights (16/9 of the direct ones) dominate: resnet18's 512-channel
 * layers were 14-19% slower at batch 1; at batch 16, where a pass of 8 images reads those
 * weights once, 14% faster. */
#define NNP_WINO_MIN_W 14
#define NNP_WINO_MIN_BATCH 8
bool nnp_wino_fits(const nnp_conv2d_desc *d);
/* w, bias, act, act_min, act_max: as nnp_bconv_prepare's. */
nnp_status nnp_wino_prepare(const nnp_conv2d_desc *d, const float *w, const float *bias, int act, float act_min,
                            float act_max, nnp_wino **out);
void nnp_wino_destroy(nnp_wino *wk);
/* Bytes of V and M: the scratch nnp_wino_run needs. */
size_t nnp_wino_scratch_bytes(const nnp_wino *wk);
/* As nnp_bconv_run (y may alias residual, not x); scratch: nnp_wino_scratch_bytes bytes,
 * 64-byte aligned. */
void nnp_wino_run(const nnp_wino *wk, const float *x, float *y, const float *residual, void *scratch,
                  nnp_threadpool *tp);

/* Whether winograd_avx512.c was compiled with AVX-512 (else its transforms are stubs). */
bool nnp_wino_avx512_built(void);
/* winograd_avx512.c: the transforms of one row of tiles. x: the image (blocked), v: V
 * (position 0), for channel block cb and the image's tile row t, stored at row vr of V's
 * plane (images of one pass stacked); m: M, y/r: the image's output and residual (r may
 * be NULL), for output block ob; bias: mb * 16 floats. */
void nnp_wino_input_row_avx512(const nnp_wino_geom *g, const float *x, float *v, int64_t cb, int64_t t, int64_t vr);
void nnp_wino_output_row_avx512(const nnp_wino_geom *g, const nnp_epilogue *ep, const float *bias, const float *m,
                                float *y, const float *r, int64_t ob, int64_t t, int64_t vr);

#endif
