/* Transpose's fast kernel (ops/movement.c: the output cut into rows over its leading
 * axes, one task per row) against the reference kernel, byte for byte: ranks 2 to 6,
 * random permutations and extents (unit axes among them: batch 1), float32, int64 and
 * uint8, outputs from just under the 32 KB threshold (the caller alone) to a few MB, the
 * transformers' own (ViT's [197, 12, 64] -> [12, 197, 64], Swin's window partition),
 * 1 to 3 threads. Slice's fast kernel (the same copy from the slice's first element)
 * likewise: ViT's q, k, v cut out of [197, 2304], random starts, ends and steps (negative
 * ones, ends past the extent) on random axes. And Gather's with one constant index
 * (Swin's q, k, v out of [3, 64, 3, 49, 32]): every axis, scalar and [1] indices, negative
 * ones, int32 and int64. */
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

static uint64_t rs = 77;
static int64_t rnd(int64_t lo, int64_t hi) { return pr_rnd(&rs, lo, hi); }

static void one_case(int rank, const int64_t *dims, const int64_t *perm, int elem) {
  Onnx__ModelProto *m = mb_model(13);
  mb_input(m, "x", elem, rank, dims);
  mb_attr_ints(mb_node(m, "Transpose", "t", "x", "y"), "perm", (size_t)rank, perm);
  mb_output(m, "y", elem);
  nnp_graph *g = pr_load(m);
  if (g) {
    char what[48];
    snprintf(what, sizeof what, "Transpose rank %d", rank);
    pr_check_threads(g, what, pr_pooled_copy, "transpose.rows");
    nnp_graph_destroy(g);
  }
  mb_reset();
}

/* What a Slice or Gather case expects from 2 threads and 32 KB of output: the pooled
 * copy (1), the reference (0: a contiguous block under 256 KB is one memcpy there), or
 * either (-1: random cases, whose contiguity the test does not work out) */
typedef struct expect {
  const char *name;
  int pooled;
} expect;

static bool expected_copy(const char *kernel, int threads, size_t bytes, const void *arg) {
  const expect *e = arg;
  if (threads < 2 || bytes < (32 << 10)) return !strcmp(kernel, "reference");
  if (e->pooled < 0) return !strcmp(kernel, "reference") || !strcmp(kernel, e->name);
  return (e->pooled == 1) == !strcmp(kernel, e->name);
}

/* Slice of x (rank, dims) on n axes */
static void slice_case(int rank, const int64_t *dims, int n, const int64_t *starts, const int64_t *ends,
                       const int64_t *axes, const int64_t *steps, int elem, int pooled) {
  Onnx__ModelProto *m = mb_model(13);
  mb_input(m, "x", elem, rank, dims);
  mb_init_i64(m, "starts", n, starts);
  mb_init_i64(m, "ends", n, ends);
  mb_init_i64(m, "axes", n, axes);
  mb_init_i64(m, "steps", n, steps);
  mb_node(m, "Slice", "s", "x,starts,ends,axes,steps", "y");
  mb_output(m, "y", elem);
  nnp_graph *g = pr_load(m);
  if (g) {
    char what[32];
    snprintf(what, sizeof what, "Slice rank %d", rank);
    const expect e = {"slice.rows", pooled};
    pr_check_threads(g, what, expected_copy, &e);
    nnp_graph_destroy(g);
  }
  mb_reset();
}

/* Gather of x (rank, dims) at one constant index on axis, the index a scalar or [1] */
static void gather_case(int rank, const int64_t *dims, int axis, int64_t index, bool vector, bool i32, int elem,
                        int pooled) {
  Onnx__ModelProto *m = mb_model(13);
  mb_input(m, "x", elem, rank, dims);
  const int64_t one = 1;
  Onnx__TensorProto *t = mb_tensor("i", i32 ? ONNX__TENSOR_PROTO__DATA_TYPE__INT32 : I64, vector ? 1 : 0, &one);
  const int32_t v32 = (int32_t)index;
  if (i32) mb_raw_data(t, sizeof v32, &v32);
  else mb_raw_data(t, sizeof index, &index);
  mb_init(m, t);
  mb_attr_int(mb_node(m, "Gather", "g", "x,i", "y"), "axis", axis);
  mb_output(m, "y", elem);
  nnp_graph *g = pr_load(m);
  if (g) {
    char what[64];
    snprintf(what, sizeof what, "Gather rank %d axis %d index %lld", rank, axis, (long long)index);
    const expect e = {"gather.rows", pooled};
    pr_check_threads(g, what, expected_copy, &e);
    nnp_graph_destroy(g);
  }
  mb_reset();
}

static void gather_cases(void) {
  static const int64_t swin[5] = {3, 64, 3, 49, 32};
  for (int64_t k = 0; k < 3; k++) gather_case(5, swin, 0, k, false, false, F32, 1); /* 301 KB blocks */
  static const int64_t rows[2] = {300, 64};
  gather_case(2, rows, 1, 5, false, false, F32, 0); /* a column: strided, but 1.2 KB */
  static const int64_t planes[3] = {4, 100, 100}, cols[3] = {100, 4, 100};
  gather_case(3, planes, 0, 3, false, false, F32, 0); /* one contiguous 40 KB plane: the reference */
  gather_case(3, cols, 1, 2, true, false, F32, 1);    /* 100 strided rows, 40 KB: pooled */
  static const int elems[3] = {F32, I64, U8};
  for (int trial = 0; trial < 30; trial++) {
    const int rank = (int)rnd(1, 4);
    int64_t dims[4];
    for (int i = 0; i < rank; i++) dims[i] = rnd(1, rank <= 2 ? 300 : 40);
    const int axis = (int)rnd(-rank, rank - 1), a = axis < 0 ? axis + rank : axis;
    const int64_t index = rnd(-dims[a], dims[a] - 1);
    gather_case(rank, dims, axis, index, trial % 2, trial % 3 == 0, elems[trial % 3], -1);
  }
}

static void slice_cases(void) {
  static const int64_t qkv[2] = {197, 2304}, one = 1, step1 = 1;
  for (int64_t k = 0; k < 3; k++) {
    const int64_t s0 = k * 768, e0 = s0 + 768;
    slice_case(2, qkv, 1, &s0, &e0, &one, &step1, F32, 1); /* strided, 605 KB */
  }
  /* ShuffleNet's channel halves: contiguous blocks, 182 KB on the reference, 364 KB pooled */
  static const int64_t half[4] = {1, 116, 28, 28}, big[4] = {1, 232, 28, 28};
  const int64_t s58 = 58, e116 = 116, s0 = 0, e116b = 116, e232 = 232;
  slice_case(4, half, 1, &s58, &e116, &one, &step1, F32, 0);
  slice_case(4, big, 1, &s0, &e116b, &one, &step1, F32, 1);
  slice_case(4, big, 1, &e116b, &e232, &one, &step1, F32, 1);
  static const int elems[3] = {F32, I64, U8};
  for (int trial = 0; trial < 40; trial++) {
    const int rank = (int)rnd(2, 5);
    int64_t dims[5], starts[5], ends[5], axes[5], steps[5];
    for (int i = 0; i < rank; i++) dims[i] = rnd(0, 3) == 0 ? 1 : rnd(2, rank <= 3 ? 120 : 16);
    const int n = (int)rnd(1, rank);
    for (int k = 0; k < n; k++) {
      axes[k] = (k + trial) % rank; /* distinct */
      const int64_t d = dims[axes[k]];
      steps[k] = rnd(0, 4) == 0 ? -rnd(1, 3) : rnd(1, 3);
      starts[k] = rnd(-d, d);
      ends[k] = rnd(0, 5) == 0 ? (steps[k] > 0 ? INT64_MAX : INT64_MIN) : rnd(-d - 2, d + 2);
    }
    slice_case(rank, dims, n, starts, ends, axes, steps, elems[trial % 3], -1);
  }
}

int main(void) {
  static const int64_t vit[3] = {197, 12, 64}, vit_p[3] = {1, 0, 2};
  static const int64_t swin[6] = {1, 8, 7, 8, 7, 96}, swin_p[6] = {0, 1, 3, 2, 4, 5};
  static const int64_t kt[4] = {1, 12, 197, 64}, kt_p[4] = {0, 1, 3, 2};
  static const int64_t small[2] = {90, 90}, small_p[2] = {1, 0}; /* 32.4 KB of float32: pooled */
  static const int64_t tiny[2] = {80, 100}, tiny_p[2] = {1, 0};  /* 32000 bytes: the caller */
  one_case(3, vit, vit_p, F32);
  one_case(6, swin, swin_p, F32);
  one_case(4, kt, kt_p, F32);
  one_case(2, small, small_p, F32);
  one_case(2, tiny, tiny_p, F32);
  static const int elems[3] = {F32, I64, U8};
  for (int trial = 0; trial < 40; trial++) {
    const int rank = (int)rnd(2, 6);
    int64_t dims[6], perm[6];
    for (int i = 0; i < rank; i++) {
      dims[i] = rnd(0, 3) == 0 ? 1 : rnd(2, rank <= 3 ? 90 : 14);
      perm[i] = i;
    }
    for (int i = rank - 1; i > 0; i--) { /* Fisher-Yates */
      const int j = (int)rnd(0, i);
      const int64_t t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
    one_case(rank, dims, perm, elems[trial % 3]);
  }
  slice_cases();
  gather_cases();
  TEST_MAIN_END();
}
