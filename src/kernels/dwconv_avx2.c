/* The depthwise kernel compiled for AVX2 + FMA (this file gets -mavx2 -mfma). */
#include "kernels/dwconv.h"

#define DWCONV_FN nnp_dwconv_planes_avx2
#include "kernels/dwconv_impl.h"
