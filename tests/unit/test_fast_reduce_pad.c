/* ReduceMean's and Pad's fast kernels against the reference ones, 1 to 3 threads.
 * ReduceMean over trailing axes (ops/reduce.c: GlobalAveragePool's float rows, within
 * 1e-6 of the reference's double sums): a CNN head's mean over H and W, keepdims 0 and
 * 1, the axes as an attribute (opset 13) and as an input (opset 18), everything reduced,
 * random ranks; axes that are not trailing keep the reference kernel. Pad (ops/pad.c: the
 * reference's rows over the pool, byte for byte): swin_t's all-zero pads, random pads
 * and crops in the constant, edge and reflect modes, float32, int64 and uint8, and a
 * scalar X. */
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
#define U8 ONNX__TENSOR_PROTO__DATA_TYPE__UINT8

static uint64_t rs = 91;
static int64_t rnd(int64_t lo, int64_t hi) { return pr_rnd(&rs, lo, hi); }

/* ReduceMean of x (rank, dims) over n axes (n 0: all); fast: whether the rows should run */
static void mean_case(int opset, int rank, const int64_t *dims, int n, const int64_t *axes, int keepdims, bool fast) {
  Onnx__ModelProto *m = mb_model(opset);
  mb_input(m, "x", F32, rank, dims);
  Onnx__NodeProto *node;
  if (opset >= 18 && n > 0) {
    mb_init_i64(m, "axes", n, axes);
    node = mb_node(m, "ReduceMean", "r", "x,axes", "y");
  } else {
    node = mb_node(m, "ReduceMean", "r", "x", "y");
    if (n > 0) mb_attr_ints(node, "axes", (size_t)n, axes);
  }
  mb_attr_int(node, "keepdims", keepdims);
  mb_output(m, "y", F32);
  nnp_graph *g = pr_load(m);
  if (g) {
    size_t ref_bytes, bytes;
    char kernel[64];
    float *ref = pr_run(g, false, 1, &ref_bytes, kernel, sizeof kernel);
    for (int t = 1; t <= 3 && ref; t++) {
      float *got = pr_run(g, true, t, &bytes, kernel, sizeof kernel);
      CHECK_MSG(got && bytes == ref_bytes && pr_max_rel(got, ref, bytes / 4) < 1e-6,
                "ReduceMean rank %d, %d axes, opset %d, %d threads (%s): differs from the reference", rank, n, opset,
                t, kernel);
      CHECK_MSG(fast == !strcmp(kernel, "reduce_mean.rows"), "ReduceMean rank %d, %d axes, %d threads ran '%s'", rank,
                n, t, kernel);
      free(got);
    }
    free(ref);
    nnp_graph_destroy(g);
  }
  mb_reset();
}

static void mean_cases(void) {
  static const int64_t head[4] = {1, 1280, 7, 7}, hw[2] = {2, 3}, neg[2] = {-2, -1}, c[1] = {1}, cw[2] = {1, 3};
  mean_case(13, 4, head, 2, hw, 0, true); /* mnasnet1_0's head */
  mean_case(18, 4, head, 2, neg, 1, true);
  static const int64_t img[4] = {2, 64, 5, 5};
  mean_case(13, 4, img, 2, hw, 1, true);
  mean_case(13, 4, img, 0, NULL, 0, true); /* everything */
  mean_case(13, 4, img, 1, c, 1, false);   /* channels: not trailing */
  mean_case(18, 4, img, 2, cw, 0, false);  /* C and W: not one block */
  for (int trial = 0; trial < 20; trial++) {
    const int rank = (int)rnd(1, 5), k = (int)rnd(1, rank);
    int64_t dims[5], axes[5];
    for (int i = 0; i < rank; i++) dims[i] = rnd(1, rank <= 2 ? 300 : 12);
    for (int i = 0; i < k; i++) axes[i] = rank - k + i - (trial % 2 ? rank : 0); /* trailing, some negative */
    mean_case(trial % 3 ? 13 : 18, rank, dims, k, axes, trial % 2, true);
  }
}

/* Pad of x (rank, dims) by pads (2 * rank values) in mode */
static void pad_case(int rank, const int64_t *dims, const int64_t *pads, const char *mode, int elem) {
  Onnx__ModelProto *m = mb_model(13);
  mb_input(m, "x", elem, rank, dims);
  mb_init_i64(m, "pads", 2 * rank, pads);
  mb_attr_string(mb_node(m, "Pad", "p", "x,pads", "y"), "mode", mode);
  mb_output(m, "y", elem);
  nnp_graph *g = pr_load(m);
  if (g) {
    char what[48];
    snprintf(what, sizeof what, "Pad rank %d mode %s", rank, mode);
    pr_check_threads(g, what, pr_pooled_copy, "pad.rows");
    nnp_graph_destroy(g);
  }
  mb_reset();
}

static void pad_cases(void) {
  static const int64_t swin[4] = {1, 56, 56, 96}, zero[8] = {0};
  /* a scalar X and no pads: copied, no rows (pad_rows once read the axis before the
   * first; the shape-inference fuzzer found it under UBSan) */
  pad_case(0, zero, zero, "constant", F32);
  pad_case(4, swin, zero, "constant", F32); /* no padding at all: one pooled copy */
  static const int64_t hw[8] = {0, 0, 0, 0, 0, 3, 5, 0};
  pad_case(4, swin, hw, "constant", F32); /* H and W padded at the end (swin_t at other sizes) */
  static const char *modes[3] = {"constant", "edge", "reflect"};
  static const int elems[3] = {F32, I64, U8};
  for (int trial = 0; trial < 40; trial++) {
    const int rank = (int)rnd(1, 4);
    int64_t dims[4], pads[8];
    for (int i = 0; i < rank; i++) dims[i] = rnd(2, rank <= 2 ? 400 : 40);
    for (int i = 0; i < 2 * rank; i++) {
      const int64_t d = dims[i % rank];
      pads[i] = trial % 4 == 0 ? 0 : rnd(-(d / 2 - 1 > 0 ? d / 2 - 1 : 0), 3); /* crops leave an element */
    }
    pad_case(rank, dims, pads, modes[trial % 3], elems[trial % 3 == 1 ? 2 : trial % 2]);
  }
}

int main(void) {
  mean_cases();
  pad_cases();
  TEST_MAIN_END();
}
