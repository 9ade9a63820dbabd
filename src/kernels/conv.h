/* Fast 2-D convolution (NCHW, float32) with the fused epilogue (kernels/epilogue.h).
 *
 * nnp_conv2d_prepare picks the algorithm from the shape and packs the weights once:
 *  - depthwise (group == C == M): a direct kernel per channel plane (kernels/dwconv.h),
 *    any kernel size, stride, padding and dilation;
 *  - 1x1, stride 1, no padding: GEMM straight on X (packed per run);
 *  - 1x1 at a larger stride, no padding: X's pixels at the stride copied image by
 *    image, then the stride-1 1x1 conv of the copy;
 *  - dense 3x3 stride-1 layers where the dispatch table runs NCHW Winograd (AVX2 CPUs
 *    without AVX-512) and it pays: Winograd F(2x2, 3x3) (kernels/winograd_nchw.h);
 *  - stride-1 "same" convolutions (3x3 pad 1) on planes of at least 7x7: the direct
 *    kernel (kernels/dconv.h), which reads X in place, no im2col;
 *  - stems (at most 4 input channels, stride 1 or 2) where the AVX2 GEMM tile runs: the
 *    same GEMM with B read from padded phase planes, no im2col (kernels/iconv.h);
 *  - otherwise im2col written directly in the packed-B layout, then the packed GEMM;
 *    grouped convolutions run one GEMM per group.
 * The epilogue passed to nnp_conv2d_run is indexed like the output of one image: bias
 * NNP_BIAS_ROW over output channels, residual with the output's layout (ld_res is
 * ignored: the residual is a tensor shaped like Y). Y may alias X (in-place). */
#ifndef NNP_KERNELS_CONV_H
#define NNP_KERNELS_CONV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/epilogue.h"
#include "nnperf/status.h"
#include "util/threadpool.h"

typedef struct nnp_conv2d_desc {
  int64_t n, c, h, w;        /* input */
  int64_t m, oh, ow;         /* output channels and size */
  int64_t kh, kw, sh, sw, ph, pw, dh, dw; /* ph, pw: top and left padding */
  int64_t group;
} nnp_conv2d_desc;

typedef enum nnp_conv_algo {
  NNP_CONV_DEPTHWISE,
  NNP_CONV_GEMM_1X1,
  NNP_CONV_IM2COL,
  NNP_CONV_DIRECT,
  NNP_CONV_WINOGRAD /* NCHW Winograd F(2x2, 3x3) (kernels/winograd_nchw.h), AVX2 CPUs */
} nnp_conv_algo;

/* Which dense algorithm nnp_conv2d_prepare_pick takes where the direct kernel applies
 * (nnp_conv2d_direct_applies): AUTO where it pays (nnp_conv2d_direct_pays), DIRECT always,
 * GEMM never (im2col + GEMM), WINOGRAD the NCHW Winograd kernel wherever its shape
 * applies and the dispatch table runs it (else as AUTO). Tests and bench_conv_layers
 * force one to compare them; AUTO takes Winograd where nnp_wnc_pays says so. */
typedef enum nnp_conv_pick { NNP_CONV_PICK_AUTO, NNP_CONV_PICK_DIRECT, NNP_CONV_PICK_GEMM, NNP_CONV_PICK_WINOGRAD } nnp_conv_pick;

typedef struct nnp_conv2d_kernel nnp_conv2d_kernel;

/* Packs w (m x c/group x kh x kw). generic: use the portable C kernels only. */
nnp_status nnp_conv2d_prepare(const nnp_conv2d_desc *d, const float *w, bool generic, nnp_conv2d_kernel **out);
/* The same with the dense algorithm picked as `pick` says. */
nnp_status nnp_conv2d_prepare_pick(const nnp_conv2d_desc *d, const float *w, bool generic, nnp_conv_pick pick,
                                   nnp_conv2d_kernel **out);
void nnp_conv2d_destroy(nnp_conv2d_kernel *k);
nnp_conv_algo nnp_conv2d_algo(const nnp_conv2d_kernel *k);
/* Whether the portable kernels run (asked for, or no AVX2 + FMA). */
bool nnp_conv2d_kernel_generic(const nnp_conv2d_kernel *k);
/* The kernel's name for inspect, explain and profiles, e.g. "conv2d.im2col.avx2",
 * "conv2d.direct.avx512". */
const char *nnp_conv2d_kernel_name(const nnp_conv2d_kernel *k);
/* Workspace nnp_conv2d_run needs, in bytes. */
size_t nnp_conv2d_scratch_bytes(const nnp_conv2d_kernel *k);
/* Y = epilogue(conv(X, W)); scratch of nnp_conv2d_scratch_bytes, 64-byte aligned. */
void nnp_conv2d_run(const nnp_conv2d_kernel *k, const float *x, float *y, const nnp_epilogue *ep, void *scratch,
                    nnp_threadpool *tp);

#endif
