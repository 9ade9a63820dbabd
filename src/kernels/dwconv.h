/* Depthwise convolution, one channel plane at a time: y = epilogue(sum over taps of
 * w * x). Rows of the output are accumulated tap by tap over the range of output
 * columns whose input column is inside X (no bounds tests in the inner loop), which the
 * compiler vectorises; dwconv_avx2.c compiles the same code for AVX2 + FMA.
 * dwconv_avx2.c and dwconv_avx512.c hold the register-blocked kernels that conv.c runs
 * on CPUs with those features (the AVX-512 one for 3x3 and 5x5, stride 1 and 2). */
#ifndef NNP_KERNELS_DWCONV_H
#define NNP_KERNELS_DWCONV_H

#include "kernels/conv.h"

/* Planes [b, e) of the n*c planes; ep as in nnp_conv2d_run. */
void nnp_dwconv_planes_generic(const nnp_conv2d_desc *d, const float *x, const float *w, float *y,
                               const nnp_epilogue *ep, int64_t b, int64_t e);
/* AVX-512F only (the dispatch table's depthwise entry); shapes it does not cover run the AVX2 kernel. */
void nnp_dwconv_planes_avx512(const nnp_conv2d_desc *d, const float *x, const float *w, float *y,
                              const nnp_epilogue *ep, int64_t b, int64_t e);
void nnp_dwconv_planes_avx2(const nnp_conv2d_desc *d, const float *x, const float *w, float *y,
                            const nnp_epilogue *ep, int64_t b, int64_t e);

#endif
