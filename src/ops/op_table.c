/* The op table, indexed by nnp_op_id (designated initialisers from the op list). */
#include <string.h>

#include "ops/internal_ops.h"
#include "ops/op.h"

#define NNP_OP_ENTRY_(E, s, name) [NNP_OP_##E] = &nnp_op_##s,
static const nnp_op_info *const op_table[] = {
    [NNP_OP_UNKNOWN] = NULL,
    NNP_OP_LIST(NNP_OP_ENTRY_)
};
#undef NNP_OP_ENTRY_

_Static_assert(sizeof(op_table) / sizeof(op_table[0]) == NNP_OP_COUNT,
               "op table and op enum disagree");

/* Internal ops (ops/internal_ops.h) after the ONNX ones: reachable by id only. */
static const nnp_op_info *const internal_table[] = {&nnp_op_fused_conv, &nnp_op_fused_gemm,
                                                      &nnp_op_fused_elementwise, &nnp_op_qlinear_add,
                                                      &nnp_op_qgemm, &nnp_op_to_blocked,
                                                      &nnp_op_from_blocked, &nnp_op_blocked_conv,
                                                      &nnp_op_blocked_max_pool,
                                                      &nnp_op_blocked_global_average_pool,
                                                      &nnp_op_blocked_channel_mul,
                                                      &nnp_op_fused_layer_norm, &nnp_op_blocked_batch_norm,
                                                      &nnp_op_blocked_average_pool, &nnp_op_fused_matmul,
                                                      &nnp_op_fused_batch_norm};
_Static_assert(sizeof(internal_table) / sizeof(internal_table[0]) == NNP_OP_INTERNAL_END - NNP_OP_COUNT,
               "internal op table and ids disagree");

const nnp_op_info *nnp_op_get(int op) {
  if (op >= NNP_OP_COUNT && op < NNP_OP_INTERNAL_END) return internal_table[op - NNP_OP_COUNT];
  if (op <= NNP_OP_UNKNOWN || op >= NNP_OP_COUNT) return NULL;
  return op_table[op];
}

int nnp_op_lookup(const char *domain, const char *op_type) {
  if (domain && domain[0] && strcmp(domain, "ai.onnx") != 0) return NNP_OP_UNKNOWN;
  if (!op_type) return NNP_OP_UNKNOWN;
  for (int i = 1; i < NNP_OP_COUNT; i++) {
    const nnp_op_info *info = op_table[i];
    if (strcmp(info->name, op_type) == 0) return i; /* every entry links to its family file */
  }
  return NNP_OP_UNKNOWN;
}
