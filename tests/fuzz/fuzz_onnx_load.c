/* libFuzzer target: bytes -> ONNX model -> plan -> one run.
 *
 * Whatever the bytes, loading, compiling and running must either succeed or fail with a
 * status and a message: never crash, read out of bounds, overflow, hang or leak. The
 * model is loaded with base_dir NULL, so any external data must be refused.
 *
 * Two guards keep the fuzzer on bugs rather than on legitimately expensive models:
 *  - A hostile model can declare tensors of up to NNP_TENSOR_MAX_BYTES (64 GiB), which
 *    the engine would really try to allocate. ASan is told (below) to return NULL for
 *    any single allocation over 256 MiB, so such inputs exercise the engine's
 *    out-of-memory paths instead of tripping libFuzzer's malloc limit.
 *  - The plan is run only when its activations take < 64 MiB and a rough operation
 *    count (multiply-adds of Conv/MatMul/Gemm/pooling windows, elements elsewhere) is
 *    under FUZZ_MAX_WORK: a tiny file can describe a Conv of 10^12 multiply-adds, which
 *    is slow, not wrong. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nnperf/alloc.h"
#include "nnperf/engine.h"
#include "nnperf/onnx.h"

#define FUZZ_MAX_ACTIVATION_BYTES ((size_t)64 << 20)
#define FUZZ_MAX_WORK ((double)(1 << 22)) /* ~0.5 s at the sanitized build's speed */

const char *__asan_default_options(void);
const char *__asan_default_options(void) {
  return "allocator_may_return_null=1:max_allocation_size_mb=256";
}

static double numel_of(const nnp_plan *p, const nnp_node *n, int k, int output) {
  int count = output ? n->n_outputs : n->n_inputs;
  if (k >= count) return 0;
  const nnp_tensor *t = nnp_plan_value(p, output ? n->outputs[k] : n->inputs[k]);
  if (!t) return 0;
  double e = 1;
  for (int d = 0; d < t->rank; d++) e *= (double)t->dims[d];
  return e;
}

static double dim_of(const nnp_plan *p, const nnp_node *n, int k, int d_from_end) {
  if (k >= n->n_inputs) return 1;
  const nnp_tensor *t = nnp_plan_value(p, n->inputs[k]);
  if (!t || t->rank < d_from_end) return 1;
  return (double)t->dims[t->rank - d_from_end];
}

/* Rough count of the operations one run performs. */
static double plan_work(const nnp_plan *p) {
  double work = 0;
  for (int s = 0; s < nnp_plan_num_steps(p); s++) {
    const nnp_node *n = nnp_plan_step_node(p, s);
    const char *op = n->op_type;
    double out = numel_of(p, n, 0, 1), w = numel_of(p, n, 1, 0);
    double step = 16;
    for (int k = 0; k < n->n_inputs; k++) step += numel_of(p, n, k, 0);
    for (int k = 0; k < n->n_outputs; k++) step += numel_of(p, n, k, 1);
    if (strcmp(op, "Conv") == 0) {
      double cout = n->n_inputs > 1 ? dim_of(p, n, 1, 0) : 1; /* W is [Cout, Cin/g, k...] */
      const nnp_tensor *wt = n->n_inputs > 1 ? nnp_plan_value(p, n->inputs[1]) : NULL;
      if (wt && wt->rank > 0) cout = (double)wt->dims[0];
      step += out * (cout > 0 ? w / cout : w);
    } else if (strcmp(op, "ConvTranspose") == 0) {
      const nnp_tensor *wt = n->n_inputs > 1 ? nnp_plan_value(p, n->inputs[1]) : NULL;
      double cin = wt && wt->rank > 0 && wt->dims[0] > 0 ? (double)wt->dims[0] : 1;
      step += numel_of(p, n, 0, 0) * w / cin + out;
    } else if (strcmp(op, "MatMul") == 0) {
      step += out * dim_of(p, n, 0, 1);
    } else if (strcmp(op, "Gemm") == 0) {
      double a0 = dim_of(p, n, 0, 2), a1 = dim_of(p, n, 0, 1);
      step += out * (a0 > a1 ? a0 : a1);
    } else if (strstr(op, "Pool") || strcmp(op, "LRN") == 0) {
      /* Window size: kernel_shape (pools) or size (LRN); global pools read every input. */
      const int64_t *ks = NULL;
      int nk = nnp_attr_ints(n, "kernel_shape", &ks);
      double win = 1;
      for (int k = 0; k < nk; k++) win *= (double)(ks[k] > 0 ? ks[k] : 1);
      win *= (double)nnp_attr_int(n, "size", 1);
      step += out * win;
    }
    work += step;
  }
  return work;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  nnp_graph *g = NULL;
  if (nnp_onnx_load_buffer(data, size, NULL, NULL, &g) != NNP_OK) {
    if (g) __builtin_trap(); /* a failed load must not hand out a graph */
    return 0;
  }
  nnp_plan_options opt;
  nnp_plan_options_default(&opt);
  nnp_plan *p = NULL;
  if (nnp_plan_compile(g, &opt, &p) == NNP_OK) {
    if (nnp_plan_activation_bytes(p) < FUZZ_MAX_ACTIVATION_BYTES && plan_work(p) < FUZZ_MAX_WORK)
      (void)nnp_plan_run(p);
    nnp_plan_destroy(p);
  } else if (p) {
    __builtin_trap(); /* a failed compile must not hand out a plan */
  }
  nnp_graph_destroy(g);
  return 0;
}
