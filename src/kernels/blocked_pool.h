/* MaxPool in the blocked NCHW16c layout (kernels/blocked_conv.h): the window of one
 * output pixel is a max over 16-float vectors, one per tap, so resnet's stem pool stays
 * inside the blocked region instead of costing a FromBlocked and a ToBlocked around it.
 * d->planes counts channel blocks (N * C/16). Padding never takes part; padded channels
 * stay 0 (the max of zeros). y may not alias x. */
#ifndef NNP_KERNELS_BLOCKED_POOL_H
#define NNP_KERNELS_BLOCKED_POOL_H

#include "kernels/pool.h"

void nnp_maxpool2d_blocked(const nnp_pool2d_desc *d, const float *x, float *y, nnp_threadpool *tp);

#endif
