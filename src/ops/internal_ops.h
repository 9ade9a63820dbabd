/* Internal ops (domain "com.nnperf"): made only by the graph passes (src/ir/passes/),
 * never by the ONNX importer, because nnp_op_lookup answers only for the default domain.
 * Their ids follow the ONNX ops' ids, so nnp_op_get finds them after the op table.
 *
 * FusedConv(X, W, [B], [R]) and FusedGemm(A, B, [C], [R]) take the attributes of Conv and
 * Gemm plus `activation` (string: Relu, Clip, HardSwish, Sigmoid; absent: none) and
 * `activation_params` (floats: Clip's min and max). The epilogue is y = act(op(...) + R):
 * R (the residual) has the output's shape and is read before y is written, per element. */
#ifndef NNP_OPS_INTERNAL_OPS_H
#define NNP_OPS_INTERNAL_OPS_H

#include "kernels/epilogue.h"
#include "ops/op.h"

#define NNP_INTERNAL_DOMAIN "com.nnperf"

enum {
  NNP_OP_FUSED_CONV = NNP_OP_COUNT,
  NNP_OP_FUSED_GEMM,
  NNP_OP_FUSED_ELEMENTWISE,
  NNP_OP_QLINEAR_ADD,
  NNP_OP_QGEMM,
  NNP_OP_TO_BLOCKED,
  NNP_OP_FROM_BLOCKED,
  NNP_OP_BLOCKED_CONV,
  NNP_OP_BLOCKED_MAX_POOL,
  NNP_OP_BLOCKED_GLOBAL_AVERAGE_POOL,
  NNP_OP_BLOCKED_CHANNEL_MUL,
  NNP_OP_FUSED_LAYER_NORM,
  NNP_OP_BLOCKED_BATCH_NORM,
  NNP_OP_BLOCKED_AVERAGE_POOL,
  NNP_OP_FUSED_MATMUL,
  NNP_OP_FUSED_BATCH_NORM,
  NNP_OP_INTERNAL_END
};

extern const nnp_op_info nnp_op_fused_conv;
extern const nnp_op_info nnp_op_fused_gemm;
/* FusedMatMul(A, B, bias, [R]), FusedGemm's `activation` attributes: MatMul, + bias (one
 * float32 per output column), + R (the output's shape), then the activation
 * (ops/fused.c; made by ir/passes/fuse_residual.c where B is a constant matrix). */
extern const nnp_op_info nnp_op_fused_matmul;
extern const nnp_op_info nnp_op_fused_elementwise;
/* QLinearAdd(A, A_scale, A_zp, B, B_scale, B_zp, C_scale, C_zp), attributes `activation`
 * (Relu, Clip or absent) and `activation_params`: the quantized residual add
 * (ops/qlinear_add.c). */
extern const nnp_op_info nnp_op_qlinear_add;
/* QGemm(A, A_scale, A_zp, B, B_scale, B_zp, [C], [Y_scale, Y_zp]), attributes transB and
 * nnperf_clamp: the quantized Gemm / MatMul with uint8 or float32 output (ops/qgemm.c). */
extern const nnp_op_info nnp_op_qgemm;
/* The blocked layout NCHW16c (kernels/blocked_conv.h; ops/blocked.c): ToBlocked(X) NCHW ->
 * N x C/16 x H x W x 16 (padded channels zero), FromBlocked(X) back, attribute `channels`
 * (the real C), and BlockedConv(X, W, [B], [R]): FusedConv's attributes and epilogue on
 * blocked X, R and Y (W and B in ONNX layout), BlockedMaxPool(X): MaxPool's attributes
 * plus `channels`, on blocked X and Y, BlockedGlobalAveragePool(X): attribute `channels`,
 * blocked X, NCHW Y [N, C, 1, 1]. Made by the blocked-layout pass only. */
extern const nnp_op_info nnp_op_to_blocked;
extern const nnp_op_info nnp_op_from_blocked;
extern const nnp_op_info nnp_op_blocked_conv;
extern const nnp_op_info nnp_op_blocked_max_pool;
extern const nnp_op_info nnp_op_blocked_global_average_pool;
/* BlockedAveragePool(X): AveragePool's attributes plus `channels`, on blocked X and Y */
extern const nnp_op_info nnp_op_blocked_average_pool;
/* BlockedChannelMul(X, S), attribute `channels`: blocked X times one value per channel
 * (S plain [N|1, C, 1, 1] / [C, 1, 1], or blocked [N, C/16, 1, 1, 16]), blocked Y: a
 * squeeze-and-excitation block's scale (ops/blocked_scale.c). */
extern const nnp_op_info nnp_op_blocked_channel_mul;
/* BlockedBatchNorm(X, scale, B, mean, var), attributes `channels`, `epsilon`, `activation`
 * (Relu or absent): inference BatchNormalization on blocked X and Y, the Relu after it
 * fused (ops/blocked_scale.c). */
extern const nnp_op_info nnp_op_blocked_batch_norm;
/* FusedBatchNorm(X, scale, B, mean, var), attributes `epsilon` and `activation` (Relu):
 * inference BatchNormalization of float32 NCHW X with the Relu that alone read its output
 * (DenseNet's pre-activation BatchNorm -> ReLU where the blocked layout does not take it;
 * ops/fused.c, made by ir/passes/fuse_activation.c). */
extern const nnp_op_info nnp_op_fused_batch_norm;
/* FusedLayerNorm(X, [Scale], [B]), attribute `epsilon`: layer normalisation over X's last
 * axis, float32 (ops/layer_norm.c; made by ir/passes/fuse_layernorm.c). */
extern const nnp_op_info nnp_op_fused_layer_norm;

/* FusedElementwise(X0, X1, ...): y = X0, then each instruction of the `program` attribute
 * (ints, two per instruction: opcode, operand input index or -1) updates y in order;
 * `params` (floats, two per instruction) holds Clip's bounds. X0 has the output's shape;
 * every other input has it too or holds one element. float32. */
typedef enum nnp_ew_opcode {
  NNP_EW_ADD = 1, NNP_EW_SUB, NNP_EW_RSUB, NNP_EW_MUL, NNP_EW_DIV, NNP_EW_RDIV,
  NNP_EW_RELU = 10, NNP_EW_SIGMOID, NNP_EW_TANH, NNP_EW_NEG, NNP_EW_CLIP, NNP_EW_HARD_SWISH,
  NNP_EW_ERF /* GELU's erf (ViT, Swin): the whole x * 0.5 * (1 + erf(x / sqrt 2)) becomes one program */
} nnp_ew_opcode;

/* Activation kinds of the fused epilogue: nnp_act of kernels/epilogue.h, shared with the
 * optimised kernels so the reference and the fast path agree on one list. */

/* Parses the node's activation attributes; fails for an unknown name. */
nnp_status nnp_fused_activation(const nnp_node *n, nnp_act *act, float *lo, float *hi);

#endif
