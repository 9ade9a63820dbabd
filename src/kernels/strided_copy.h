/* One phase of a stride-2 row: the copy the stride-2 convolutions make of their input
 * (im2col's phase planes, the implicit-GEMM stem's) so that every tap reads consecutive
 * floats. The direct kernel's phase split (dconv.c) keeps its own loop, which writes the
 * even and the odd phase in one pass over the row: two calls of this measured 2-4% slower
 * on RegNet's grouped stride-2 layers. */
#ifndef NNP_KERNELS_STRIDED_COPY_H
#define NNP_KERNELS_STRIDED_COPY_H

#include <stdint.h>

/* dst[i] = src[2 i] for i < n; reads src[0 .. 2 n - 2] only. */
void nnp_copy_every_other(float *restrict dst, const float *restrict src, int64_t n);

#endif
