/* A dense convolution whose input is plain NCHW with few channels and whose output is
 * blocked NCHW16c (kernels/blocked_conv.h), fused epilogue included: the network's first
 * convolution, on the 3 colour planes. Reordering those planes to NCHW16c first wrote 16
 * floats per pixel for 3 real ones (0.23 ms, 3% of mobilenet_v2 at 1 thread, the same on
 * resnet18 and EfficientNet-Lite0); reading the planes in place costs nothing extra,
 * since the tile broadcasts one input scalar at a time anyway.
 *
 * Covered: group 1, 1..NNP_BCONV_NCHW_MAX_C input channels, any kernel size, stride,
 * padding and dilation. Weights and bias are packed at prepare: [M/16][C][kh][kw][16],
 * zero in padded output channels, which the store forces to 0 (as the blocked kernel).
 * The generic C kernel is the oracle; the AVX-512F tile (blocked_conv_nchw_in_avx512.c)
 * runs where CPUID reports AVX-512F and the caller did not ask for generic. */
#ifndef NNP_KERNELS_BLOCKED_CONV_NCHW_IN_H
#define NNP_KERNELS_BLOCKED_CONV_NCHW_IN_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/conv.h"
#include "kernels/epilogue.h"
#include "nnperf/status.h"
#include "util/threadpool.h"

#define NNP_BCONV_NCHW_MAX_C 4

typedef struct nnp_bconv_nchw_kernel {
  nnp_conv2d_desc d;
  bool generic;
  bool avx2;       /* the AVX2 tile (blocked_conv_nchw_in_avx2.c) in place of the AVX-512 one */
  int64_t mb;      /* output channel blocks */
  float *w;        /* packed weights, 64-byte aligned */
  float *bias;     /* mb * 16 floats, zero past m */
  nnp_epilogue ep; /* act, act_min, act_max only */
} nnp_bconv_nchw_kernel;

/* d: the convolution (group 1, 1 <= c <= NNP_BCONV_NCHW_MAX_C, else NNP_ERR_UNSUPPORTED);
 * w: m x c x kh x kw; bias: m floats or NULL. Both are copied. */
nnp_status nnp_bconv_nchw_prepare(const nnp_conv2d_desc *d, const float *w, const float *bias, int act,
                                  float act_min, float act_max, bool generic, nnp_bconv_nchw_kernel **out);
void nnp_bconv_nchw_destroy(nnp_bconv_nchw_kernel *k);
/* y (blocked) = act(conv(x (NCHW)) + bias + residual (blocked, or NULL)); y may alias
 * residual, not x. */
void nnp_bconv_nchw_run(const nnp_bconv_nchw_kernel *k, const float *x, float *y, const float *residual,
                        nnp_threadpool *tp);

/* One output row oh of one image, output blocks [ob, ob + nb) (nb 1 or 2); x, y, r point
 * at the image. The generic one is the oracle of the AVX-512 and AVX2 ones. */
void nnp_bconv_nchw_row_generic(const nnp_bconv_nchw_kernel *k, const float *x, float *y, const float *r, int64_t ob,
                                int nb, int64_t oh);
void nnp_bconv_nchw_row_avx512(const nnp_bconv_nchw_kernel *k, const float *x, float *y, const float *r, int64_t ob,
                               int nb, int64_t oh);
void nnp_bconv_nchw_row_avx2(const nnp_bconv_nchw_kernel *k, const float *x, float *y, const float *r, int64_t ob,
                             int nb, int64_t oh);

#endif
