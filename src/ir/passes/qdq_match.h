/* Pattern pieces the fuse-qdq rewrites share (fuse_qdq.c: Conv, fuse_qdq_gemm.c: Gemm
 * and MatMul, fuse_qdq_glue.c: MaxPool and Add): constant parameters, the producing
 * DequantizeLinear, the bias that must equal x_scale * w_scale, and the optional
 * activation and QuantizeLinear after a product. */
#ifndef NNP_IR_PASSES_QDQ_MATCH_H
#define NNP_IR_PASSES_QDQ_MATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "nnperf/ir.h"

/* The initializer tensor of value v, or NULL. */
const nnp_tensor *qdq_init(const nnp_graph *g, int v);
/* v is a one-element initializer of type dt with data. */
bool qdq_scalar_init(const nnp_graph *g, int v, nnp_dtype dt);
/* Index of the node producing v (scanned: value.producer is not kept up to date by the
 * passes), or -1. */
int qdq_producer(const nnp_graph *g, int v);
/* The default-domain DequantizeLinear producing v with at least 2 inputs, or NULL. */
const nnp_node *qdq_dq_of(const nnp_graph *g, int v);
/* Input k of n, or -1. */
static inline int qdq_in(const nnp_node *n, int k) { return k < n->n_inputs ? n->inputs[k] : -1; }
/* QuantizeLinear of one float bound to uint8, as the reference computes it (+-inf
 * saturate). */
int64_t qdq_quantize_bound(float v, float scale, uint8_t zp);

/* A bias DequantizeLinear db fit for an integer epilogue: int32 initializer of M
 * elements, zero point 0 if given, scale (1 or M) equal to x_scale * w_scale(m) within
 * 1e-5 relative (ws: 1 or M float32 values). */
bool qdq_bias_matches(const nnp_graph *g, const nnp_node *db, float x_scale, const nnp_tensor *ws, int64_t M);

/* What follows a product's float output v: [Relu | Clip(constant bounds)] and then a
 * per-tensor uint8 QuantizeLinear (scalar float32 scale, uint8 zero point initializers),
 * each the only reader of its input. On true: *q the Q node, *act the activation node
 * or -1, [*lo, *hi] its bounds (Relu: [0, inf)), *clip whether it is a Clip. */
bool qdq_act_then_q(const nnp_graph *g, int v, int *act, int *q, float *lo, float *hi, bool *clip);

/* Removes the Q node and the activation node (or -1) that a rewrite of node *i absorbed,
 * keeping *i the index of that node. */
void qdq_remove_tail(nnp_graph *g, int act, int q, int *i);

/* Adds attribute nnperf_clamp = [lo, hi] to node n (QLinearConv, QGemm). */
nnp_status qdq_set_clamp(nnp_node *n, int64_t lo, int64_t hi);

#endif
