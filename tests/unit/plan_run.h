/* The fast-kernel tests' driver (test_fast_concat, test_fast_matmul, test_fast_transpose,
 * test_einsum, test_fast_broadcast): a model built with model_builder.h loaded, compiled with the fast kernels
 * or the reference ones at a thread count, run on seeded inputs, its output copied out.
 * Include after model_builder.h. */
#ifndef NNP_TESTS_PLAN_RUN_H
#define NNP_TESTS_PLAN_RUN_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nnperf/bench.h"
#include "nnperf/engine.h"
#include "nnperf/onnx.h"

/* Packs and loads m; NULL (a failed check) when it does not load. */
MB_FN nnp_graph *pr_load(const Onnx__ModelProto *m) {
  size_t n;
  uint8_t *buf = mb_pack(m, &n);
  nnp_graph *g = NULL;
  CHECK_OK(nnp_onnx_load_buffer(buf, n, NULL, NULL, &g));
  return g;
}

/* A malloc'd copy of output 0 (*bytes long) of g run with the fast kernels or the
 * reference ones on `threads` threads, inputs seeded 11, 12, ...; kernel: step 0's fast
 * kernel, or "reference". NULL (a failed check) when it does not compile. */
MB_FN void *pr_run(const nnp_graph *g, bool fast, int threads, size_t *bytes, char *kernel, size_t kcap) {
  nnp_plan_options o;
  nnp_plan_options_default(&o);
  o.fast_kernels = fast;
  o.threads = threads;
  nnp_plan *p = NULL;
  nnp_status s = nnp_plan_compile(g, &o, &p);
  CHECK_MSG(s == NNP_OK, "compile: %s", nnp_last_error());
  if (s != NNP_OK) return NULL;
  for (int i = 0; i < nnp_plan_num_inputs(p); i++) nnp_fill_seeded(nnp_plan_input(p, i), 11 + (uint64_t)i);
  CHECK_OK(nnp_plan_run(p));
  const nnp_tensor *y = nnp_plan_output(p, 0);
  *bytes = nnp_tensor_nbytes(y);
  void *out = malloc(*bytes + 1);
  memcpy(out, y->data, *bytes);
  snprintf(kernel, kcap, "%s", nnp_plan_step_kernel(p, 0) ? nnp_plan_step_kernel(p, 0) : "reference");
  nnp_plan_destroy(p);
  return out;
}

/* Whether g run with the fast kernels on `threads` threads gives ref (ref_bytes long, a
 * pr_run of the reference kernels) byte for byte; kernel as in pr_run. */
MB_FN bool pr_same_bytes(const nnp_graph *g, int threads, const void *ref, size_t ref_bytes, char *kernel,
                         size_t kcap) {
  size_t bytes = 0;
  void *got = pr_run(g, true, threads, &bytes, kernel, kcap);
  const bool same = got && bytes == ref_bytes && !memcmp(got, ref, bytes);
  free(got);
  return same;
}

/* Whether step 0's fast kernel is the one a case expects at `threads` threads for an
 * output of `bytes` bytes (arg: the case's own data, e.g. a kernel name). */
typedef bool (*pr_kernel_ok)(const char *kernel, int threads, size_t bytes, const void *arg);

/* g with the fast kernels at 1 to 3 threads gives the reference run's bytes, and ok says
 * each run's kernel is the expected one; what names the case in the messages. */
MB_FN void pr_check_threads(const nnp_graph *g, const char *what, pr_kernel_ok ok, const void *arg) {
  size_t ref_bytes;
  char kernel[64];
  void *ref = pr_run(g, false, 1, &ref_bytes, kernel, sizeof kernel);
  for (int t = 1; t <= 3 && ref; t++) {
    CHECK_MSG(pr_same_bytes(g, t, ref, ref_bytes, kernel, sizeof kernel),
              "%s (%zu bytes), %d threads, %s: differs from the reference", what, ref_bytes, t, kernel);
    CHECK_MSG(ok(kernel, t, ref_bytes, arg), "%s (%zu bytes), %d threads ran '%s'", what, ref_bytes, t, kernel);
  }
  free(ref);
}

/* The row-split copies' rule (ops/movement.c): the named kernel from 2 threads and 32 KB
 * of output, the reference below */
MB_FN bool pr_pooled_copy(const char *kernel, int threads, size_t bytes, const void *name) {
  const bool pooled = threads > 1 && bytes >= (32 << 10);
  return pooled == !strcmp(kernel, (const char *)name);
}

/* A seeded draw from [lo, hi] (a 64-bit LCG's high bits): each test keeps its own state,
 * so its random cases are the same every run. */
MB_FN int64_t pr_rnd(uint64_t *state, int64_t lo, int64_t hi) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return lo + (int64_t)((*state >> 33) % (uint64_t)(hi - lo + 1));
}

/* The largest |a - b| / (1 + |b|) over n floats. */
MB_FN double pr_max_rel(const float *a, const float *b, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; i++) {
    const double e = fabs((double)a[i] - b[i]) / (1 + fabs((double)b[i]));
    if (!(e <= m)) m = e;
  }
  return m;
}

#endif
