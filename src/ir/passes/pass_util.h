/* Helpers the graph passes share: use counts, node removal, new initializers. */
#ifndef NNP_IR_PASSES_PASS_UTIL_H
#define NNP_IR_PASSES_PASS_UTIL_H

#include <stdbool.h>

#include "ir/shape_infer.h"
#include "nnperf/ir.h"
#include "nnperf/passes.h"

/* Number of reads of value v by nodes, plus one if it is a graph output. */
int pass_uses(const nnp_graph *g, int v);
/* Index of the only node reading v, or -1 if v has another use or is a graph output. */
int pass_single_consumer(const nnp_graph *g, int v);
/* Frees node i and closes the gap (node indices after i shift down by one). */
void pass_remove_node(nnp_graph *g, int i);

/* For passes over long graphs (pass_uses/pass_single_consumer/pass_remove_node are O(nodes)
 * per call, quadratic in a loop): use counts of every value taken once (nnp_malloc'd,
 * n_values entries; NULL when out of memory), the first live node at or after `from`
 * (wrapping around) that reads v, and one compaction removing every node marked dead. */
int *pass_use_counts(const nnp_graph *g);
int pass_next_reader(const nnp_graph *g, int from, int v, const bool *dead);
void pass_remove_dead(nnp_graph *g, const bool *dead);
/* Replaces every node input `from` by `to` (graph outputs are left alone). */
void pass_replace_uses(nnp_graph *g, int from, int to);
/* The float32 constant data of value v (an initializer, or the tensor of the Constant
 * node that produces it), or NULL if v is not one. */
const nnp_tensor *pass_const_f32(const nnp_graph *g, int v);
/* Adds a new initializer value named after base (made unique), taking ownership of *t
 * (its fields are moved; t is zeroed). */
nnp_status pass_add_initializer(nnp_graph *g, const char *base, nnp_tensor *t, int *value);
/* Turns node n into internal op `op` (ops/internal_ops.h) named op_type. */
nnp_status pass_make_internal(nnp_node *n, int op, const char *op_type);
/* The inferred shape of value v (ir/shape_infer.h; data when known at load time), or NULL
 * for a value the passes added or with shapes NULL. */
const nnp_tensor *pass_shape(const nnp_graph_shapes *shapes, int v);

/* Clip's bounds: attributes before opset 11, constant scalar inputs from 11 on; false
 * when a bound is only known at run time. */
bool pass_clip_bounds(const nnp_graph *g, const nnp_node *n, float *lo, float *hi);
/* Gives fused node n the `activation` attribute act ("Relu", "Clip", ...; Clip's bounds
 * lo, hi as `activation_params`), as the fused ops read it (ops/fused.c) */
nnp_status pass_set_activation(nnp_node *n, const char *act, float lo, float hi);
/* Whether bn is an inference BatchNormalization whose scale, B, mean and var are float32
 * constants of m values each and whose training outputs nothing reads */
bool pass_inference_bn(const nnp_graph *g, const nnp_node *bn, int64_t m);
/* Whether n is a BatchNormalization the per-channel kernels take (BlockedBatchNorm,
 * FusedBatchNorm): one output, spatial 1, float32 X of rank >= 2 (its shape from shapes)
 * and pass_inference_bn over X's channels */
bool pass_channel_bn(const nnp_graph *g, const nnp_graph_shapes *shapes, const nnp_node *n);

/* The passes (src/ir/passes/<name>.c); each returns the number of rewrites in *count. */
nnp_status nnp_pass_fold_constants(nnp_graph *g, int *count);
nnp_status nnp_pass_dead_nodes(nnp_graph *g, int *count);
nnp_status nnp_pass_noops(nnp_graph *g, int *count);
nnp_status nnp_pass_fold_batchnorm(nnp_graph *g, const nnp_graph_shapes *shapes, int *count);
nnp_status nnp_pass_fuse_residual(nnp_graph *g, const nnp_graph_shapes *shapes, int *count);
nnp_status nnp_pass_fuse_activation(nnp_graph *g, const nnp_graph_shapes *shapes, int *count);
/* fuse-activation's second half, run after the blocked layout (which fuses a Relu into the
 * BatchNormalizations it takes): a float32 inference BatchNormalization left in NCHW whose
 * output only a Relu reads -> FusedBatchNorm (fuse_activation.c). */
nnp_status nnp_pass_fuse_bn_relu(nnp_graph *g, const nnp_graph_shapes *shapes, int *count);
nnp_status nnp_pass_fuse_elementwise(nnp_graph *g, const nnp_graph_shapes *shapes, int *count);
nnp_status nnp_pass_fuse_layernorm(nnp_graph *g, const nnp_graph_shapes *shapes, int *count);
nnp_status nnp_pass_fuse_qdq(nnp_graph *g, int *count);
/* NCHW16c blocked layout for the convolutions, minimal reorders (blocked_layout.c) */
nnp_status nnp_pass_blocked_layout(nnp_graph *g, const nnp_graph_shapes *shapes, int *count);
/* fuse-qdq's glue rewrites (MaxPool on uint8, QLinearAdd): fuse_qdq_glue.c */
nnp_status nnp_pass_fuse_qdq_glue(nnp_graph *g, const nnp_graph_shapes *shapes, int *count);
/* fuse-qdq's fully connected layers (Gemm, MatMul -> QGemm): fuse_qdq_gemm.c */
nnp_status nnp_pass_fuse_qdq_gemm(nnp_graph *g, const nnp_graph_shapes *shapes, int *count);

#endif
