/* Implicit-GEMM convolution for stems: few input channels (an RGB image), stride 1 or 2,
 * a kernel of up to 7x7 (resnet's 7x7 stride 2, the mobilenets' and efficientnets' 3x3
 * stride 2). im2col + GEMM is the same product, but with K = C x taps of only 27 to 147
 * the column matrix costs about as much as the GEMM: it is built, then read by every row
 * panel (a 3 -> 16 stem on 224x224: im2col 28%, the stride-2 phase split 11%, the GEMM
 * tile 50%, perf). Here the input is split once into its stride x stride phase planes with
 * a zero border, so that tap (c, kh, kw) of 16 consecutive outputs of one output row is
 * 16 consecutive floats of one phase plane: the GEMM tile reads its B rows there through
 * a table of offsets (nnp_sgemm_tile_off_avx2) and nothing else is written. Every output
 * is the same chain of FMAs over k = (c, kh, kw) as im2col + GEMM, padding taps as zeros:
 * the same bits. */
#ifndef NNP_KERNELS_ICONV_H
#define NNP_KERNELS_ICONV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/conv.h"
#include "kernels/epilogue.h"
#include "nnperf/status.h"
#include "util/threadpool.h"

typedef struct nnp_iconv nnp_iconv;

/* Whether the kernel runs this shape: the AVX2 GEMM tile (where it was measured), group 1,
 * at most 4 input channels, stride 1 or 2 both ways, no dilation, K <= 256, output rows
 * of at least 16, and an image's phase planes addressable by 32-bit offsets. */
bool nnp_iconv_pays(const nnp_conv2d_desc *d, bool generic);
/* The offset table for d (the weights are not kept here: nnp_iconv_run reads them packed
 * as the GEMM's A, owned by the caller, conv.c's wpack). Fails for an input whose phase
 * planes 32-bit offsets cannot address (nnp_iconv_pays says no to it first). */
nnp_status nnp_iconv_prepare(const nnp_conv2d_desc *d, nnp_iconv **out);
void nnp_iconv_destroy(nnp_iconv *k);
/* Floats of scratch nnp_iconv_run needs (the phase planes of all images). */
size_t nnp_iconv_scratch_floats(const nnp_iconv *k);
/* Y = epilogue(conv(X)) with a = the weights packed by nnp_sgemm_pack_a (M x K); ep
 * indexed as conv.h says. Y may alias X: X is read whole into the phase planes before Y
 * is written. */
void nnp_iconv_run(const nnp_iconv *k, const float *a, const float *x, float *y, const nnp_epilogue *ep,
                   float *scratch, nnp_threadpool *tp);

#endif
