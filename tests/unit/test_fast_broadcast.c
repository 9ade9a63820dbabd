/* The broadcast ops' fast kernel (ops/binary.c: the reference's row functions over the
 * thread pool, rows cut into chunks) against the reference kernel, byte for byte: Add,
 * Sub, Mul, Div, Less and Where over random numpy broadcasts (each axis of an input
 * either the output's or 1, inputs of lower rank), outputs from a few elements (on the
 * caller) to more than a million (pooled), rows longer than a chunk (one same-shape row
 * of 70000 elements) and many short rows, 1 to 3 threads. Sub, Div, Less and Where must
 * run the pooled rows; Add and Mul may run eltwise.c's own kernels where those take the
 * shapes. */
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
#define BOOL ONNX__TENSOR_PROTO__DATA_TYPE__BOOL

static uint64_t rs = 2024;
static int64_t rnd(int64_t lo, int64_t hi) { return pr_rnd(&rs, lo, hi); }

/* The pooled rows (a kernel name ending .rows), or for Add and Mul (arg true) any fast
 * kernel: eltwise.c's take the shapes they can */
static bool rows_kernel(const char *kernel, int threads, size_t bytes, const void *own) {
  (void)threads, (void)bytes;
  const size_t n = strlen(kernel);
  return (n > 5 && !strcmp(kernel + n - 5, ".rows")) || (*(const bool *)own && strcmp(kernel, "reference") != 0);
}

/* op over inputs of ranks ranks[k] with dims dims[k] (Where: a bool condition first) */
static void one_case(const char *op, int n_in, const int *ranks, int64_t (*dims)[4]) {
  Onnx__ModelProto *m = mb_model(13);
  static const char *names[3] = {"a", "b", "c"};
  const bool where = !strcmp(op, "Where");
  for (int k = 0; k < n_in; k++) mb_input(m, names[k], where && k == 0 ? BOOL : F32, ranks[k], dims[k]);
  mb_node(m, op, "op", n_in == 3 ? "a,b,c" : "a,b", "y");
  mb_output(m, "y", !strcmp(op, "Less") ? BOOL : F32);
  nnp_graph *g = pr_load(m);
  if (g) {
    const bool own = !strcmp(op, "Add") || !strcmp(op, "Mul");
    pr_check_threads(g, op, rows_kernel, &own);
    nnp_graph_destroy(g);
  }
  mb_reset();
}

/* Random output dims whose product stays under limit; each input takes every axis or 1,
 * and drops leading axes at random. */
static void random_case(const char *op, int n_in, int64_t limit) {
  int64_t y[4], dims[3][4];
  int ranks[3], ry = (int)rnd(1, 4);
  int64_t total = 1;
  for (int i = 0; i < ry; i++) {
    y[i] = rnd(1, 60);
    if (total * y[i] > limit) y[i] = 1;
    total *= y[i];
  }
  for (int k = 0; k < n_in; k++) {
    ranks[k] = (int)rnd(1, ry);
    for (int i = 0; i < ranks[k]; i++) dims[k][i] = rnd(0, 2) == 0 ? 1 : y[ry - ranks[k] + i];
  }
  ranks[0] = ry; /* one input spans the output's rank, so the output is y or broadcast to it */
  for (int i = 0; i < ry; i++) dims[0][i] = rnd(0, 3) == 0 ? 1 : y[i];
  one_case(op, n_in, ranks, dims);
}

int main(void) {
  static const char *ops[5] = {"Add", "Sub", "Mul", "Div", "Less"};
  for (int trial = 0; trial < 100; trial++) {
    const int64_t limit = trial % 4 == 0 ? 2000000 : trial % 4 == 1 ? 40000 : 3000;
    random_case(ops[trial % 5], 2, limit);
    if (trial % 4 == 0) random_case("Where", 3, limit);
  }
  /* one long same-shape row, chunked; Swin's attention bias [64, 3, 49, 49] + [3, 49, 49] */
  int r2[2] = {1, 1};
  int64_t long_row[2][4] = {{70000}, {70000}};
  one_case("Sub", 2, r2, long_row);
  int swin_r[2] = {4, 3};
  int64_t swin[2][4] = {{64, 3, 49, 49}, {3, 49, 49}};
  one_case("Add", 2, swin_r, swin);
  one_case("Div", 2, swin_r, swin);
  TEST_MAIN_END();
}
