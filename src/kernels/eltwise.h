/* Elementwise fast paths: activations and same-shape Add/Mul on float32, split across
 * the pool in blocks of NNP_ELTWISE_BLOCK elements. y may equal x (in-place). */
#ifndef NNP_KERNELS_ELTWISE_H
#define NNP_KERNELS_ELTWISE_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/epilogue.h"
#include "util/threadpool.h"

#define NNP_ELTWISE_BLOCK 16384

/* y = act(x) with ep's activation (its bias and residual are ignored). */
void nnp_eltwise_act(const float *x, float *y, int64_t n, const nnp_epilogue *ep, nnp_threadpool *tp);

/* y = clip(alpha * x + beta, 0, 1): HardSigmoid, MobileNetV3's squeeze-and-excitation
 * gate (with HardSwish's alpha 1/6 it is fused away instead: ir/passes/fuse_activation.c).
 * Not an epilogue activation: its two parameters would need the act fields of every
 * vector kernel. y may equal x. */
void nnp_eltwise_hard_sigmoid(const float *x, float *y, int64_t n, float alpha, float beta, nnp_threadpool *tp);

typedef enum nnp_binop { NNP_BINOP_ADD, NNP_BINOP_MUL } nnp_binop;
/* y = a op b, then ep's activation (ep may be NULL). */
void nnp_eltwise_binary(nnp_binop op, const float *a, const float *b, float *y, int64_t n, const nnp_epilogue *ep,
                        nnp_threadpool *tp);

/* y[p][i] = x[p][i] op s[c] over planes p = n * C + c of hw elements each: a Mul or Add
 * of an [N,C,H,W] value with a per-channel [N,C,1,1] (s_per_image) or [1,C,1,1] one (the
 * squeeze-and-excitation gate of EfficientNet, MobileNetV3, RegNetY). Split across the
 * pool by planes; y may equal x. */
void nnp_eltwise_channel_binary(nnp_binop op, const float *x, const float *s, float *y, int64_t planes, int64_t C,
                                int64_t hw, int s_per_image, nnp_threadpool *tp);

/* y[r][i] = x[r][i] op v[i] over rows r of n elements: a Mul or Add of a value with one
 * along its last axis (a Linear layer's bias after a MatMul on [tokens, features], a
 * ConvNeXt layer scale). Split across the pool by blocks of rows; y may equal x. */
void nnp_eltwise_row_binary(nnp_binop op, const float *x, const float *v, float *y, int64_t rows, int64_t n,
                            nnp_threadpool *tp);

/* y[p][i] = x[p][i] * a[c] + b[c] over planes p = n * C + c of hw elements (inference
 * BatchNormalization with its coefficients folded per channel), then with relu Relu's
 * v < 0 ? 0 : v (a fused BatchNorm -> ReLU: one pass instead of two). Split by planes. */
void nnp_eltwise_channel_affine(const float *x, const float *a, const float *b, float *y, int64_t planes, int64_t C,
                                int64_t hw, bool relu, nnp_threadpool *tp);

#endif
