/* The pass driver: fixed order, names for the command line. */
#include <string.h>

#include "ir/passes/pass_util.h"
#include "nnperf/passes.h"

static const char *const pass_names[NNP_PASS_COUNT] = {
    "fold-constants", "dead-nodes", "noops", "fold-batchnorm",
    "fuse-activation", "fuse-residual", "fuse-elementwise", "blocked-layout", "fuse-qdq"};

const char *nnp_pass_name(unsigned bit) {
  for (int k = 0; k < NNP_PASS_COUNT; k++)
    if (bit == 1u << k) return pass_names[k];
  return NULL;
}

unsigned nnp_pass_bit(const char *name) {
  for (int k = 0; k < NNP_PASS_COUNT; k++)
    if (!strcmp(name, pass_names[k])) return 1u << k;
  return 0;
}

nnp_status nnp_passes_parse(const char *list, unsigned *bits) {
  *bits = 0;
  char name[64];
  const char *p = list;
  while (*p) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == 0 || len >= sizeof name) return nnp_error(NNP_ERR_INVALID, "empty or overlong pass name in '%s'", list);
    memcpy(name, p, len);
    name[len] = 0;
    unsigned b = !strcmp(name, "all")       ? NNP_PASS_ALL
                 : !strcmp(name, "default") ? NNP_PASS_DEFAULT
                 : !strcmp(name, "none")    ? 0u
                                            : nnp_pass_bit(name);
    if (!b && strcmp(name, "none"))
      return nnp_error(NNP_ERR_INVALID, "unknown pass '%s' (known: fold-constants, dead-nodes, noops, fold-batchnorm, "
                       "fuse-activation, fuse-residual, fuse-elementwise, blocked-layout, fuse-qdq, all, default, "
                       "none)", name);
    *bits |= b;
    p += len + (e ? 1 : 0);
  }
  return NNP_OK;
}

nnp_status nnp_passes_run(nnp_graph *g, unsigned bits, const nnp_graph_shapes *shapes, nnp_pass_report *report) {
  nnp_pass_report local;
  if (!report) report = &local;
  memset(report, 0, sizeof *report);
  report->nodes_before = g->n_nodes;
  int n = 0;
  /* Folding and no-op removal first: they expose Conv -> BatchNormalization and
   * Conv -> Add -> Relu patterns hidden behind Identity nodes and constant subgraphs.
   * Residual fusion runs before activation fusion so that the activation after the Add
   * lands in the same FusedConv. Blocked layout runs last but one: it converts the FusedConv
   * nodes the fusions made, residual and activation included; then the BatchNormalization ->
   * Relu pairs it left in NCHW are fused. */
  if (bits & NNP_PASS_FUSE_QDQ) { /* first: constant folding would dequantize the weights */
    NNP_TRY(nnp_pass_fuse_qdq_glue(g, shapes, &n)); /* first: its MaxPool swap exposes Conv -> Q */
    report->applied[8] += n;
    NNP_TRY(nnp_pass_fuse_qdq(g, &n));
    report->applied[8] += n;
    NNP_TRY(nnp_pass_fuse_qdq_gemm(g, shapes, &n));
    report->applied[8] += n;
  }
  if (bits & NNP_PASS_FOLD_CONSTANTS) {
    NNP_TRY(nnp_pass_fold_constants(g, &n));
    report->applied[0] += n;
  }
  if (bits & NNP_PASS_NOOPS) {
    NNP_TRY(nnp_pass_noops(g, &n));
    report->applied[2] += n;
  }
  if (bits & NNP_PASS_DEAD_NODES) {
    NNP_TRY(nnp_pass_dead_nodes(g, &n));
    report->applied[1] += n;
  }
  if (bits & NNP_PASS_FOLD_BATCHNORM) {
    NNP_TRY(nnp_pass_fold_batchnorm(g, shapes, &n));
    report->applied[3] += n;
  }
  if (bits & NNP_PASS_FUSE_RESIDUAL) {
    NNP_TRY(nnp_pass_fuse_residual(g, shapes, &n));
    report->applied[5] += n;
  }
  if (bits & NNP_PASS_FUSE_ACTIVATION) {
    NNP_TRY(nnp_pass_fuse_activation(g, shapes, &n));
    report->applied[4] += n;
  }
  if (bits & NNP_PASS_FUSE_ELEMENTWISE) { /* after the Conv/Gemm fusions: what they left */
    NNP_TRY(nnp_pass_fuse_layernorm(g, shapes, &n)); /* first: its Sub/Div/Mul/Add are elementwise too */
    report->applied[6] += n;
    NNP_TRY(nnp_pass_fuse_elementwise(g, shapes, &n));
    report->applied[6] += n;
  }
  if (bits & NNP_PASS_BLOCKED_LAYOUT) {
    NNP_TRY(nnp_pass_blocked_layout(g, shapes, &n));
    report->applied[7] += n;
  }
  if (bits & NNP_PASS_FUSE_ACTIVATION) { /* after the blocked layout: see nnp_pass_fuse_bn_relu */
    NNP_TRY(nnp_pass_fuse_bn_relu(g, shapes, &n));
    report->applied[4] += n;
  }
  NNP_TRY(nnp_graph_toposort(g));
  report->nodes_after = g->n_nodes;
  return NNP_OK;
}
