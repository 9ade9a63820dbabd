/* Static cost of a node: multiply-accumulates, floating-point operations and bytes
 * touched, from its inferred shapes. Used by `nnperf inspect` and for GFLOP/s figures. */
#ifndef NNPERF_COST_H
#define NNPERF_COST_H

#include <stdint.h>

#include "nnperf/ir.h"
#include "nnperf/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nnp_cost {
  int64_t macs;   /* multiply-accumulates of Conv, ConvTranspose, Gemm, MatMul */
  int64_t flops;  /* 2 x macs for those; ~1 per output element (or window element) otherwise */
  int64_t bytes;  /* bytes of inputs read + outputs written */
} nnp_cost;

/* in/out: the node's input/output tensors (shapes), entries may be NULL. */
nnp_cost nnp_node_cost(const nnp_node *n, const nnp_tensor *const *in, const nnp_tensor *const *out);

#ifdef __cplusplus
}
#endif
#endif
