/* Concat's fast kernel (ops/fast_concat.c) against the reference kernel, byte for byte:
 * 1 to 5 inputs, every axis (negative too), float32 and int64, outputs from a few bytes
 * (one task, on the caller) to several MB (many 64 KB chunks that start and end inside
 * an input's block and inside a row), an empty input, 1 to 3 threads. */
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
#define I64 ONNX__TENSOR_PROTO__DATA_TYPE__INT64

static void one_case(int n_in, const int64_t *base, int axis, int elem, const int64_t *sizes) {
  Onnx__ModelProto *m = mb_model(13);
  char names[64] = "";
  for (int k = 0; k < n_in; k++) {
    int64_t d[4];
    memcpy(d, base, sizeof d);
    d[axis < 0 ? axis + 4 : axis] = sizes[k];
    char name[8];
    snprintf(name, sizeof name, "x%d", k);
    mb_input(m, name, elem, 4, d);
    snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", k ? "," : "", name);
  }
  mb_attr_int(mb_node(m, "Concat", "cat", names, "y"), "axis", axis);
  mb_output(m, "y", elem);
  nnp_graph *g = pr_load(m);
  if (g) {
    size_t ref_bytes;
    char kernel[64];
    void *ref = pr_run(g, false, 1, &ref_bytes, kernel, sizeof kernel);
    for (int t = 1; t <= 3 && ref; t++) {
      CHECK_MSG(pr_same_bytes(g, t, ref, ref_bytes, kernel, sizeof kernel),
                "Concat of %d inputs on axis %d (%s), %zu bytes, %d threads: differs from the reference", n_in, axis,
                elem == F32 ? "float32" : "int64", ref_bytes, t);
      CHECK_MSG(!strcmp(kernel, "concat.copies"), "Concat ran '%s'", kernel);
    }
    free(ref);
    nnp_graph_destroy(g);
  }
  mb_reset();
}

/* Concat-1 to -3 without an axis attribute concatenate along axis 1 (the fuzzer found
 * the fast kernel taking axis 0 and reading past its inputs). */
static void default_axis_case(void) {
  static const int64_t d[4] = {2, 2, 2, 2};
  Onnx__ModelProto *m = mb_model(3);
  mb_input(m, "x0", F32, 4, d);
  mb_input(m, "x1", F32, 4, d);
  mb_node(m, "Concat", "cat", "x0,x1", "y");
  mb_output(m, "y", F32);
  nnp_graph *g = pr_load(m);
  if (g) {
    size_t ref_bytes;
    char kernel[64];
    void *ref = pr_run(g, false, 1, &ref_bytes, kernel, sizeof kernel);
    CHECK_MSG(ref && pr_same_bytes(g, 2, ref, ref_bytes, kernel, sizeof kernel) && !strcmp(kernel, "concat.copies"),
              "Concat at opset 3 without axis (%s) differs from the reference", kernel);
    free(ref);
    nnp_graph_destroy(g);
  }
  mb_reset();
}

int main(void) {
  default_axis_case();
  static const int64_t small[4] = {2, 3, 4, 5}, big[4] = {1, 48, 56, 56}, rows[4] = {3, 7, 33, 41};
  static const int64_t s1[] = {1, 2, 3, 4, 5}, s2[] = {40, 24, 32, 8, 16}, s3[] = {5, 0, 9, 13, 2};
  for (int axis = -1; axis < 4; axis++) {
    for (int n_in = 1; n_in <= 5; n_in++) {
      one_case(n_in, small, axis, F32, s1);
      one_case(n_in, small, axis, I64, s1);
    }
    one_case(4, rows, axis, F32, s3); /* an empty input; rows that chunks cut anywhere */
  }
  one_case(5, big, 1, F32, s2); /* densenet-like: 1.5 MB over channels, one row */
  one_case(3, big, 2, F32, s2 + 1); /* 48 rows of 13.4 KB: chunks end inside rows and blocks */
  one_case(4, big, -1, F32, s3);
  one_case(3, big, 0, I64, s2 + 2);
  TEST_MAIN_END();
}
