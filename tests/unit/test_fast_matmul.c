/* MatMul's fast kernels (ops/fast_gemm.c with a constant B, ops/fast_bmm.c with both
 * operands computed at run time) against the reference kernel, and against themselves
 * across thread counts, bit for bit: every output element is one tile's sum in the same
 * order whichever thread computes it, so 1, 2 and 3 threads must agree exactly. Covers
 * A packed on the pool (row panels split over the threads, a ragged last panel), and the
 * batched kernel's two schedules: batches split over the threads (each in its own
 * scratch slot; batch counts not a multiple of the threads) and one batch at a time over
 * all threads (fewer batches than threads). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "nnperf/alloc.h"
#include "nnperf/bench.h"
#include "nnperf/engine.h"
#include "nnperf/onnx.h"
#include "onnx/onnx.pb-c.h"
#include "test.h"

#include "model_builder.h"
#include "plan_run.h"

#define F32 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT

/* Y = A [batch..., M, K] x B: B [K, N] a constant (constant_b) or [batch..., K, N] an input. */
static void one_case(int rank, const int64_t *batch, int64_t M, int64_t K, int64_t N, bool constant_b) {
  Onnx__ModelProto *m = mb_model(13);
  int64_t ad[4], bd[4];
  for (int d = 0; d < rank - 2; d++) ad[d] = bd[d] = batch[d];
  ad[rank - 2] = M, ad[rank - 1] = K;
  bd[rank - 2] = K, bd[rank - 1] = N;
  mb_input(m, "a", F32, rank, ad);
  if (constant_b) {
    const int64_t kn[2] = {K, N};
    float *w = mb_alloc((size_t)(K * N) * sizeof *w);
    for (int64_t i = 0; i < K * N; i++) w[i] = (float)((i * 7919) % 23) / 11.0f - 1.0f;
    mb_init_f32(m, "b", 2, kn, w);
  } else {
    mb_input(m, "b", F32, rank, bd);
  }
  mb_node(m, "MatMul", "mm", "a,b", "y");
  mb_output(m, "y", F32);
  nnp_graph *g = pr_load(m);
  if (g) {
    size_t n_ref, n1, nt; /* bytes */
    char kernel[64];
    float *ref = pr_run(g, false, 1, &n_ref, kernel, sizeof kernel);
    float *one = pr_run(g, true, 1, &n1, kernel, sizeof kernel);
    const char *want = constant_b ? "matmul.packed" : "matmul.batched";
    CHECK_MSG(!strncmp(kernel, want, strlen(want)), "MatMul %lldx%lldx%lld ran '%s'", (long long)M, (long long)K,
              (long long)N, kernel);
    if (ref && one) {
      const double e = pr_max_rel(one, ref, n_ref / sizeof(float));
      CHECK_MSG(n1 == n_ref && e < 1e-5, "MatMul %lldx%lldx%lld (%s B): fast vs reference %g", (long long)M,
                (long long)K, (long long)N, constant_b ? "constant" : "run-time", e);
    }
    for (int t = 2; t <= 3 && one; t++) {
      float *got = pr_run(g, true, t, &nt, kernel, sizeof kernel);
      CHECK_MSG(got && nt == n1 && !memcmp(got, one, n1),
                "MatMul %lldx%lldx%lld (%s B), %d threads: not the 1-thread result bit for bit", (long long)M,
                (long long)K, (long long)N, constant_b ? "constant" : "run-time", t);
      free(got);
    }
    free(ref);
    free(one);
    nnp_graph_destroy(g);
  }
  mb_reset();
}

int main(void) {
  static const int64_t b23[2] = {2, 3}, b1[1] = {1}, b5[1] = {5}, b7[2] = {7, 1};
  /* constant B: A packed on the pool; 100 rows: 17 panels, the last of 4 rows */
  one_case(3, b1, 100, 37, 50, true);
  one_case(3, b5, 49, 96, 70, true);
  one_case(2, NULL, 6, 300, 33, true); /* one panel: nothing to split */
  /* run-time B: 6 and 5 batches split over 2 and 3 threads; 7 of a window attention's
   * 49 x 32 x 49; one batch over all threads */
  one_case(4, b23, 13, 17, 19, false);
  one_case(3, b5, 20, 8, 40, false);
  one_case(4, b7, 49, 32, 49, false);
  one_case(3, b1, 50, 64, 45, false);
  TEST_MAIN_END();
}
