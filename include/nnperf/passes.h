/* Graph passes: rewrites of a graph before plan compilation (folding, no-op removal,
 * fusion into the internal ops of ops/internal_ops.h). nnp_plan_compile runs them on a
 * clone of the caller's graph, so the caller's graph is never changed.
 *
 * Passes keep value indices stable: they add values (folded weights) and drop nodes, but
 * never renumber values, so a value index of the original graph names the same value in
 * the rewritten one. */
#ifndef NNPERF_PASSES_H
#define NNPERF_PASSES_H

#include "nnperf/ir.h"
#include "nnperf/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Graph passes (bits of nnp_plan_options.passes, nnperf/engine.h). */
enum {
  NNP_PASS_FOLD_CONSTANTS = 1u << 0, /* evaluate nodes whose inputs are all known */
  NNP_PASS_DEAD_NODES = 1u << 1,     /* drop nodes no output depends on */
  NNP_PASS_NOOPS = 1u << 2,          /* Identity, Dropout (inference), Reshape chains */
  NNP_PASS_FOLD_BATCHNORM = 1u << 3, /* BatchNormalization into the preceding Conv/Gemm */
  NNP_PASS_FUSE_ACTIVATION = 1u << 4,/* Conv/Gemm + bias + Relu/Clip/HardSwish/Sigmoid */
  NNP_PASS_FUSE_RESIDUAL = 1u << 5,  /* Conv + Add (+ activation) */
  NNP_PASS_FUSE_ELEMENTWISE = 1u << 6, /* chains of elementwise ops */
  NNP_PASS_BLOCKED_LAYOUT = 1u << 7, /* NCHWc blocked layout with minimal reorders */
  NNP_PASS_FUSE_QDQ = 1u << 8,       /* DequantizeLinear -> Conv [-> Relu] -> QuantizeLinear */
  NNP_PASS_ALL = (1u << 9) - 1,
  /* What plans run unless told otherwise: every pass. The blocked layout is in it since it
   * measured faster on all three zoo models at batch 1 and 16 (docs/engine-passes.md);
   * --no-blocked-layout turns it off, and it is a no-op without AVX-512F. */
  NNP_PASS_DEFAULT = NNP_PASS_ALL
};

#define NNP_PASS_COUNT 9

/* The inferred shapes of a graph (src/ir/shape_infer.h). */
typedef struct nnp_graph_shapes nnp_graph_shapes;

typedef struct nnp_pass_report {
  int nodes_before, nodes_after;
  int applied[NNP_PASS_COUNT]; /* rewrites made by pass bit k (1u << k) */
} nnp_pass_report;

/* Copy of g (values keep their indices). With share_initializers, initializer data is not
 * copied but borrowed from g (passes never write into an existing initializer): call
 * nnp_graph_unshare(copy, g) before destroying the copy, and keep g alive until then. */
nnp_status nnp_graph_clone(const nnp_graph *g, bool share_initializers, nnp_graph **out);
/* Drops copy's borrowed references to g's initializer data, so that destroying copy
 * frees only what it owns. */
void nnp_graph_unshare(nnp_graph *copy, const nnp_graph *g);

/* Runs the passes selected by bits (NNP_PASS_*) on g, in a fixed order. shapes are g's
 * shapes as inferred before the passes (ir/shape_infer.h): fusions that depend on shapes
 * and types (residual shape equality, float32 only) read them there; values the passes
 * add have none. With shapes NULL those fusions are skipped. report may be NULL.
 * Re-sorts g topologically at the end. */
nnp_status nnp_passes_run(nnp_graph *g, unsigned bits, const nnp_graph_shapes *shapes, nnp_pass_report *report);

/* Name of pass bit (e.g. "fold-constants"), NULL if bit is not one pass. */
const char *nnp_pass_name(unsigned bit);
/* Parses a comma-separated list of pass names ("all" and "none" allowed) into bits. */
nnp_status nnp_passes_parse(const char *list, unsigned *bits);
/* Bit of pass name, 0 if unknown. */
unsigned nnp_pass_bit(const char *name);

#ifdef __cplusplus
}
#endif
#endif
