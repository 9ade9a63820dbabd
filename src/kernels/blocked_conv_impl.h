/* Internals shared by the generic blocked convolution (blocked_conv.c) and its AVX-512
 * tile (blocked_conv_avx512.c): the prepared kernel and the per-row entry points. */
#ifndef NNP_KERNELS_BLOCKED_CONV_IMPL_H
#define NNP_KERNELS_BLOCKED_CONV_IMPL_H

#include "kernels/blocked_conv.h"

struct nnp_bconv_kernel {
  nnp_conv2d_desc d;
  bool depthwise, generic;
  bool avx2;      /* the AVX2 tiles (blocked_conv_avx2.c): one shape, none of the AVX-512 file's variants */
  int64_t cb, mb; /* input blocks one output block reads (grouped: its group's), output blocks */
  int64_t cb_x;   /* input channel blocks of the tensor: an image's stride (cb, but for groups) */
  int64_t *in0;   /* grouped: the first of the cb input blocks output block ob reads (mb entries); NULL otherwise */
  int step;       /* output blocks per task: 2 (a pair sharing its input loads), 1 where a pair's windows differ */
  float *w;       /* packed weights (see blocked_conv.h), 64-byte aligned */
  float *bias;    /* mb * 16 floats, zero past m */
  nnp_epilogue ep; /* act, act_min, act_max only */
  int64_t chunk;   /* input blocks per pass of nnp_bconv_dense_plane_avx512; 0: not used */
  struct nnp_wino *wino; /* Winograd F(2x2, 3x3) in place of the direct tiles (kernels/winograd.h), or NULL */
};

/* The AVX-512 wide tile's pixels (strides 1 and 2): planes at most half as wide are
 * computed two output rows per tile and per thread-pool task. */
#define NNP_BCONV_WIDE_PX 14

/* One output row oh of one image: dense for output blocks [ob, ob + nb) (nb 1 or 2),
 * depthwise for channel block cb (the generic dense row: one output block ob); the
 * AVX-512 dense row does rows (1 or 2) rows from oh. x, y, r point at the image (r may be NULL). */
void nnp_bconv_dense_row_generic(const nnp_bconv_kernel *k, const float *x, float *y, const float *r, int64_t ob,
                                 int64_t oh);
void nnp_bconv_dw_row_generic(const nnp_bconv_kernel *k, const float *x, float *y, const float *r, int64_t cb,
                              int64_t oh);
void nnp_bconv_dense_row_avx512(const nnp_bconv_kernel *k, const float *x, float *y, const float *r, int64_t ob,
                                int nb, int64_t oh, int rows);
void nnp_bconv_dw_row_avx512(const nnp_bconv_kernel *k, const float *x, float *y, const float *r, int64_t cb,
                             int64_t oh);
/* The AVX2 rows (blocked_conv_avx2.c): one output row oh of output blocks [ob, ob + nb),
 * or of depthwise channel block cb. */
void nnp_bconv_dense_row_avx2(const nnp_bconv_kernel *k, const float *x, float *y, const float *r, int64_t ob,
                              int nb, int64_t oh);
void nnp_bconv_dw_row_avx2(const nnp_bconv_kernel *k, const float *x, float *y, const float *r, int64_t cb,
                           int64_t oh);
/* Pixels [p0, p1) of one whole channel block (16 real channels) between planes, its 16
 * NCHW planes of hw pixels, and blk, the block in NCHW16c: 8 x 8 transposes in YMMs
 * (blocked_conv_avx2.c). */
void nnp_to_blocked_avx2(const float *planes, int64_t hw, float *blk, int64_t p0, int64_t p1);
void nnp_from_blocked_avx2(const float *blk, int64_t hw, float *planes, int64_t p0, int64_t p1);
/* Dense layers on planes at most NNP_BCONV_WIDE_PX wide, strides 1 and 2, more input
 * blocks than one chunk (k->chunk, set at prepare): output rows [oh0, oh1) of output
 * blocks [ob, ob + nb), the input channels in chunks whose weights stay in L1 across the
 * rows' tiles (resnet18's 256- and 512-channel layers, the 1x1 layers over many channels
 * at the end of MobileNet and EfficientNet). At most NNP_BCONV_PLANE_TILES tiles: 8 rows
 * of a plane at most 7 wide, 4 rows of a wider one. */
#define NNP_BCONV_PLANE_TILES 4
void nnp_bconv_dense_plane_avx512(const nnp_bconv_kernel *k, const float *x, float *y, const float *r, int64_t ob,
                                  int nb, int64_t oh0, int64_t oh1);

#endif
