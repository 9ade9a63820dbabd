/* prepare() hooks (ops/op.h) that select the optimised kernels of src/kernels/ for
 * Conv, Gemm and MatMul. Each declines (out->run NULL) what its kernel does not cover,
 * and the reference kernel runs instead. */
#ifndef NNP_OPS_FAST_OPS_H
#define NNP_OPS_FAST_OPS_H

#include "kernels/gemm.h"
#include "kernels/pool.h"
#include "ops/op.h"

nnp_status nnp_prepare_conv(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out);
nnp_status nnp_prepare_gemm(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out);
nnp_status nnp_prepare_matmul(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out);
/* MatMul of two run-time float32 operands, batched, same batch dims (ops/fast_bmm.c) */
nnp_status nnp_prepare_batched_matmul(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out);
/* out runs f (a calloc'd nnp_sgemm_batched with its shape filled; out takes it) on inputs
 * 0 and 1 into output 0: f->generic from the dispatch table, its scratch planned for
 * ctx's pool, out named after the GEMM tile that runs (generic, AVX2 or AVX-512). Shared
 * by batched MatMul and Einsum. */
void nnp_batched_matmul_kernel(nnp_sgemm_batched *f, const nnp_op_ctx *ctx, bool generic, const char *name_generic,
                               const char *name_avx2, const char *name_avx512, nnp_fast_kernel *out);
nnp_status nnp_prepare_pool(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out);
/* The window of a 2-D MaxPool node as the fast max-pool kernels take it (kernel_shape,
 * strides, explicit or VALID pads, no dilation) into d's kh, kw, sh, sw, ph, pw; *ok is
 * false when they do not take it (the reference runs). Shared by nnp_prepare_pool and
 * BlockedMaxPool (ops/blocked.c). */
nnp_status nnp_maxpool2d_window(const nnp_node *node, nnp_pool2d_desc *d, bool *ok);
/* ... and AveragePool's: the window, the end pads and count_include_pad (*ok false: the
 * reference runs it) */
nnp_status nnp_avgpool2d_window(const nnp_node *node, nnp_avgpool2d_desc *a, bool *ok);
/* QLinearConv -> the INT8 GEMM (ops/fast_qconv.c) */
nnp_status nnp_prepare_qlinear_conv(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out);
/* QuantizeLinear float32 -> uint8 and DequantizeLinear uint8 -> float32 with constant
 * scalar parameters -> kernels/qeltwise.h (ops/fast_qeltwise.c) */
nnp_status nnp_prepare_quantize(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out);

/* Relu, Clip, Sigmoid, HardSwish and Add, Mul on float32 -> kernels/eltwise.h
 * (ops/fast_eltwise.c) */
nnp_status nnp_prepare_eltwise_act(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out);
nnp_status nnp_prepare_eltwise_binary(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out);
nnp_status nnp_prepare_batch_norm(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out);
/* FusedBatchNorm's: the same per-channel kernel with its Relu applied as it stores */
nnp_status nnp_prepare_fused_batch_norm(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out);
/* BatchNormalization's y = x * a[k] + b[k] for channels k < c from ctx's scale, B, mean
 * and var (inputs 1-4) and epsilon: a and b in double, rounded to float. Shared by the
 * NCHW fast kernel and BlockedBatchNorm's (ops/blocked_scale.c). */
void nnp_bn_coefficients(const nnp_op_ctx *ctx, int64_t c, float *a, float *b);
nnp_status nnp_prepare_fused_elementwise(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out);
/* Concat of any dtype: the reference's copies across the pool (ops/fast_concat.c) */
nnp_status nnp_prepare_concat(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out);
/* Concat's axis in [0, rank): attribute `axis`, or 1 where opset 1-3 let it default
 * (ops/movement.c; the reference and the fast kernel read it the same way). */
nnp_status nnp_concat_axis(const nnp_op_ctx *c, int rank, int *axis);

/* The op's prepare hook, NULL when there is none. There is one way for an op to have a
 * fast kernel: its nnp_op_info.prepare (set in the op's own descriptor). Not a switch on
 * op types here: the op table already describes each op (infer, ref, prepare side by
 * side), and a second list would have to be kept in step with it. Which ISA variant a
 * hook picks is the CPU-dispatch table's answer (kernels/dispatch.h). */
nnp_prepare_fn nnp_op_prepare(int op);

#endif
