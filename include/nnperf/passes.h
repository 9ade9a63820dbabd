/* Graph passes: rewrites of a graph before plan compilation (folding, no-op removal,
 * fusion into the internal ops of ops/internal_ops.h). nnp_plan_compile runs them on a
 * clone of the caller's graph, so the caller's graph is never changed.
 *
 * Passes keep value indices stable: they add values (folded weights) and drop nodes, but
 * never renumber values, so a value index of the original graph names the same value in
 * the rewritten one. */
#ifndef NNPERF_PASSES_H
#define NNPERF_PASSES_H

#include "nnperf/engine.h"
#include "nnperf/ir.h"
#include "nnperf/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NNP_PASS_COUNT 9

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

/* Runs the passes selected by bits (NNP_PASS_*) on g, in a fixed order. shapes is a plan
 * of the unrewritten graph compiled without passes: fusions that depend on shapes and
 * types (residual shape equality, float32 only) read them there; with shapes NULL those
 * fusions are skipped. report may be NULL. Re-sorts g topologically at the end. */
nnp_status nnp_passes_run(nnp_graph *g, unsigned bits, const nnp_plan *shapes, nnp_pass_report *report);

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
