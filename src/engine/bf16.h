/* The bf16 precision of the native engine (nnp_plan_options.bf16): what AMX-BF16 and
 * AVX512-BF16 compute, on whatever kernels the CPU has. The operands of every matrix
 * product (Conv, Gemm, MatMul and the passes' fused / blocked forms) are bf16: constant
 * weights are rounded once when the plan is compiled, activations when the step runs;
 * products and sums stay fp32 (tdpbf16ps and vdpbf16ps accumulate in fp32), bias,
 * residual and activation functions too. On a CPU without bf16 instructions the fp32
 * kernels multiply the rounded values exactly (a bf16 x bf16 product fits fp32's 24-bit
 * mantissa), so the accuracy is bf16's and the speed fp32's. */
#ifndef NNP_ENGINE_BF16_H
#define NNP_ENGINE_BF16_H

#include <stddef.h>

#include "nnperf/tensor.h"

/* Rounds x[0..n) to the nearest bf16 (ties to even), in place; NaN stays NaN, infinities
 * stay, values that round past the largest bf16 become infinity (as vcvtneps2bf16;
 * the same rounding as nnp_f32_to_bf16). */
void nnp_bf16_round(float *x, size_t n);
/* Bit mask of the inputs of op (an NNP_OP_* id) that are matrix-product operands in
 * bf16; 0 for ops that keep fp32. */
unsigned nnp_bf16_operand_mask(int op);
/* Rounds a float32 tensor in place (other dtypes are left alone). */
void nnp_bf16_round_tensor(nnp_tensor *t);

#endif
