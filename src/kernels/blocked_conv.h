/* 2-D convolution in the blocked NCHW16c layout (float32), the fused epilogue included.
 *
 * Layout: an N x C x H x W tensor is stored as N x ceil(C/16) x H x W x 16: the 16
 * channels of one block are contiguous for each pixel, and the channels past C in the
 * last block are zero. A 16-float block is one AVX-512 register, so a convolution can
 * broadcast one input scalar and multiply it by 16 output channels' weights at once,
 * with no im2col copy and no ragged tiles on odd planes (7x7: 49 pixels are 49 full
 * vectors, where the NCHW GEMM wastes 15 of 16 lanes on the last column).
 *
 * Covered: group 1 (dense), depthwise (group == C == M) and grouped convolutions whose
 * output blocks each read a window of at most 4x their groups' input channels
 * (nnp_bconv_groups_fit: RegNet's 16- and 24-wide groups, ResNeXt's 4- to 32-wide), any
 * kernel size, stride, padding and dilation. A grouped layer is dense over its window,
 * with zero weights between the groups. Weights and bias are packed at prepare: dense
 * [M/16][C/16][kh][kw][16 input][16 output] (the 16 input channels of one tap, the tile's
 * inner loop, are 1 KiB in a row, not 16 loads kh*kw*64 bytes apart), depthwise
 * [C/16][kh][kw][16], zero in padded channels, so the
 * padded output channels come out as act(0) and are then forced to 0 by the store.
 * Padded input channels are skipped, never multiplied.
 *
 * The generic C kernel is the oracle; the AVX-512F tile (blocked_conv_avx512.c) runs
 * where CPUID reports AVX-512F and the caller did not ask for generic. */
#ifndef NNP_KERNELS_BLOCKED_CONV_H
#define NNP_KERNELS_BLOCKED_CONV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/conv.h"
#include "kernels/epilogue.h"
#include "nnperf/status.h"
#include "util/threadpool.h"

#define NNP_BLOCK 16

static inline int64_t nnp_blocks(int64_t c) { return (c + NNP_BLOCK - 1) / NNP_BLOCK; }

typedef struct nnp_bconv_kernel nnp_bconv_kernel;

/* Whether the blocked kernels run convolution d's grouping: group 1, depthwise, or
 * groups of whole blocks (the kernel windows are checked apart: nnp_conv2d_read_window). */
bool nnp_bconv_groups_fit(const nnp_conv2d_desc *d);

/* Whether the AVX2 tiles beat the NCHW kernels on convolution d, so that the layout pass
 * blocks it on an AVX2-only CPU (blocked_conv.c says what was measured). */
bool nnp_bconv_avx2_pays(const nnp_conv2d_desc *d);

/* d: the convolution in NCHW terms (real channel counts c and m); its grouping must fit
 * (nnp_bconv_groups_fit; NNP_ERR_UNSUPPORTED otherwise). w: m x c/group x kh x kw; bias: m
 * floats or NULL. Both are copied. act, act_min, act_max: the epilogue's activation
 * (nnp_act). generic: the portable C kernel only. */
nnp_status nnp_bconv_prepare(const nnp_conv2d_desc *d, const float *w, const float *bias, int act, float act_min,
                             float act_max, bool generic, nnp_bconv_kernel **out);
void nnp_bconv_destroy(nnp_bconv_kernel *k);
/* Whether the portable kernel runs (asked for, or no AVX-512F). */
bool nnp_bconv_generic(const nnp_bconv_kernel *k);
bool nnp_bconv_depthwise(const nnp_bconv_kernel *k);
/* Whether the AVX2 tiles run (the dispatch table's pick where AVX-512F is missing). */
bool nnp_bconv_avx2(const nnp_bconv_kernel *k);
/* Whether it runs as Winograd F(2x2, 3x3) (kernels/winograd.h). */
bool nnp_bconv_winograd(const nnp_bconv_kernel *k);
/* Bytes of workspace nnp_bconv_run needs (Winograd's transformed tiles; 0 otherwise). */
size_t nnp_bconv_scratch_bytes(const nnp_bconv_kernel *k);
/* y = act(conv(x) + bias + residual), all blocked (residual: y's layout, or NULL).
 * y must not alias x; it may alias residual. scratch: nnp_bconv_scratch_bytes(k) bytes,
 * 64-byte aligned (may be NULL when that is 0). */
void nnp_bconv_run(const nnp_bconv_kernel *k, const float *x, float *y, const float *residual, void *scratch,
                   nnp_threadpool *tp);

/* Reorders between NCHW (c channels) and NCHW16c (zero-filled padding), hw = H * W,
 * split over tp's threads (NULL: the caller alone). */
void nnp_nchw_to_blocked(const float *x, float *y, int64_t n, int64_t c, int64_t hw, nnp_threadpool *tp);
void nnp_blocked_to_nchw(const float *x, float *y, int64_t n, int64_t c, int64_t hw, nnp_threadpool *tp);

#endif
