/* Einsum (ops/einsum.c): the fast batched-product path against the reference kernel, and
 * across 1-3 threads bit for bit (MaxViT's two equations, batch labels in any position,
 * a product with no batch label, spaces); equations the fast path declines (the output's
 * innermost label not B's own, a diagonal, three inputs, a sum over one input's own
 * label) still match the reference through the plan; malformed equations fail to
 * compile with a message naming the problem. The ONNX node tests (test_einsum_*) check
 * the reference kernel on float64. */
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

/* The model: Einsum(equation) over inputs of the given shapes. */
static nnp_graph *build(const char *eq, int n_in, const int *ranks, const int64_t (*dims)[5]) {
  Onnx__ModelProto *m = mb_model(13);
  char names[32] = "";
  for (int k = 0; k < n_in; k++) {
    char name[8];
    snprintf(name, sizeof name, "x%d", k);
    mb_input(m, name, F32, ranks[k], dims[k]);
    snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", k ? "," : "", name);
  }
  mb_attr_string(mb_node(m, "Einsum", "ein", names, "y"), "equation", eq);
  mb_output(m, "y", F32);
  return pr_load(m);
}

static void one_case(const char *eq, int n_in, const int *ranks, const int64_t (*dims)[5], bool want_fast) {
  nnp_graph *g = build(eq, n_in, ranks, dims);
  if (!g) return;
  size_t nr, n1, nt; /* bytes */
  char kernel[64];
  float *ref = pr_run(g, false, 1, &nr, kernel, sizeof kernel);
  float *one = pr_run(g, true, 1, &n1, kernel, sizeof kernel);
  CHECK_MSG(want_fast == !strncmp(kernel, "einsum.matmul", 13), "'%s' ran %s", eq, kernel);
  if (ref && one) {
    const double e = pr_max_rel(one, ref, nr / sizeof(float));
    CHECK_MSG(n1 == nr && e < 1e-5, "'%s': fast vs reference %g", eq, e);
  }
  for (int t = 2; t <= 3 && one; t++) {
    float *got = pr_run(g, true, t, &nt, kernel, sizeof kernel);
    CHECK_MSG(got && nt == n1 && !memcmp(got, one, n1), "'%s', %d threads: not bit for bit", eq, t);
    free(got);
  }
  free(ref);
  free(one);
  nnp_graph_destroy(g);
  mb_reset();
}

/* wide: two rank-5 inputs, else [3, 4] and [4, 5] */
static void bad_equation(const char *eq, const char *want, bool wide) {
  static const int r2[2] = {2, 2}, r5[2] = {5, 5};
  static const int64_t d2[2][5] = {{3, 4}, {4, 5}}, d5[2][5] = {{1, 2, 1, 2, 1}, {2, 1, 2, 1, 2}};
  nnp_graph *g = build(eq, 2, wide ? r5 : r2, wide ? d5 : d2);
  if (!g) return;
  nnp_plan_options o;
  nnp_plan_options_default(&o);
  nnp_plan *p = NULL;
  nnp_status s = nnp_plan_compile(g, &o, &p);
  CHECK_MSG(s != NNP_OK && strstr(nnp_last_error(), want), "'%s': %s", eq, s == NNP_OK ? "compiled" : nnp_last_error());
  nnp_plan_destroy(p);
  nnp_graph_destroy(g);
  mb_reset();
}

int main(void) {
  static const int r55[2] = {5, 5}, r222[3] = {2, 2, 2}, r22[2] = {2, 2}, r3[2] = {3, 3};
  /* MaxViT: 1 x 5 windows x 2 heads, 49 x 32 */
  static const int64_t qk[2][5] = {{1, 5, 2, 49, 32}, {1, 5, 2, 49, 32}}, av[2][5] = {{1, 5, 2, 49, 49}, {1, 5, 2, 49, 32}};
  one_case("B G H I D, B G H J D -> B G H I J", 2, r55, qk, true);
  one_case("BGHIJ,BGHJD->BGHID", 2, r55, av, true);
  static const int64_t mid[2][5] = {{7, 3, 6}, {6, 3, 5}}, plain[2][5] = {{9, 13}, {13, 20}};
  one_case("ibk,kbj->bij", 2, r3, mid, true); /* the batch label in the middle of both inputs */
  one_case("ik,kj->ij", 2, r22, plain, true);
  one_case("ik,kj", 2, r22, plain, true); /* implicit output: i, j */
  /* declined: Y's innermost label is A's own (a transposed product), a diagonal, a
   * sum over A's own label, three inputs */
  one_case("ik,kj->ji", 2, r22, plain, false);
  static const int64_t sq[2][5] = {{6, 6}, {6, 4}}, three[3][5] = {{4, 5}, {5, 6}, {6, 3}};
  one_case("ii,ij->ij", 2, r22, sq, false);
  one_case("ik,kj->j", 2, r22, plain, false);
  one_case("ab,bc,cd->ad", 3, r222, three, false);
  bad_equation("ij,jk->iz", "in no input", false);
  bad_equation("ij,j1->ik", "not a letter", false);
  bad_equation("ij->ij", "terms for 2 inputs", false);
  bad_equation("ijk,jk->ik", "rank 2", false);
  bad_equation("abcde,fghij", "implicit output over rank 8", true); /* ten labels used once */
  TEST_MAIN_END();
}
