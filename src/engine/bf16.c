#include "engine/bf16.h"

#include <stdint.h>
#include <string.h>

#include "ops/internal_ops.h"

/* nnp_f32_to_bf16 widened back, branch-free so the compiler vectorizes it: it runs on every
 * matrix-product input of every inference (tests/unit/test_bf16.c checks the two agree). */
static inline uint32_t round_bits(uint32_t u) {
  uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
  uint32_t quiet_nan = (u | 0x00400000u) & 0xffff0000u;
  return (u & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded;
}

void nnp_bf16_round(float *x, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint32_t u;
    memcpy(&u, &x[i], sizeof u);
    u = round_bits(u);
    memcpy(&x[i], &u, sizeof u);
  }
}

unsigned nnp_bf16_operand_mask(int op) {
  switch (op) {
    case NNP_OP_CONV: case NNP_OP_CONV_TRANSPOSE: case NNP_OP_GEMM: case NNP_OP_MATMUL:
    case NNP_OP_FUSED_CONV: case NNP_OP_FUSED_GEMM: case NNP_OP_BLOCKED_CONV:
      return 0x3; /* X/A and W/B; bias, residual stay fp32 */
    default:
      return 0;
  }
}

void nnp_bf16_round_tensor(nnp_tensor *t) {
  if (t->dtype == NNP_F32 && t->data) nnp_bf16_round((float *)t->data, (size_t)nnp_tensor_numel(t));
}
