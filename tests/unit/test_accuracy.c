/* nnp_accuracy_compare's criteria: fp32/fp16 rows by max_rel, int8/mixed rows by output
 * cosine and (over 10+ classifier rows) top-1 agreement, as quantization is judged. */
#include <math.h>
#include <string.h>

#include "bench/accuracy.h"
#include "test.h"

/* A [rows, cols] f32 tensor (caller frees). */
static nnp_tensor mat(int64_t rows, int64_t cols) {
  nnp_tensor t;
  memset(&t, 0, sizeof t);
  t.dtype = NNP_F32;
  t.rank = 2;
  t.dims[0] = rows;
  t.dims[1] = cols;
  CHECK_OK(nnp_tensor_alloc(&t));
  return t;
}

/* Logit-like reference values in [-1, 1], deterministic, one clear maximum per row (at
 * column (3 * row) % cols, value 4). */
static void fill_ref(nnp_tensor *t) {
  int64_t rows = t->dims[0], cols = t->dims[1];
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++)
      nnp_tensor_set_f64(t, r * cols + c, c == (3 * r) % cols ? 4.0 : sin(0.37 * (double)(r * cols + c) + 0.5));
}

static void copy(nnp_tensor *dst, const nnp_tensor *src) {
  for (int64_t i = 0; i < nnp_tensor_numel(src); i++) nnp_tensor_set_f64(dst, i, nnp_tensor_get_f64(src, i));
}

static nnp_accuracy compare(const nnp_tensor *got, const nnp_tensor *ref, nnp_precision p) {
  nnp_accuracy_criterion c = nnp_accuracy_default_criterion(p);
  nnp_accuracy a;
  memset(&a, 0, sizeof a);
  nnp_accuracy_compare(got, ref, 1, &c, &a);
  return a;
}

/* Quantization-like noise: small everywhere, one element off by 8% of the output's scale
 * (max |ref| = 4). max_rel exceeds the former int8 bound 5e-2, cosine stays near 1. */
static void test_int8_passes_on_cosine(void) {
  nnp_tensor ref = mat(1, 1000), got = mat(1, 1000);
  fill_ref(&ref);
  copy(&got, &ref);
  for (int64_t i = 0; i < 1000; i++) nnp_tensor_set_f64(&got, i, nnp_tensor_get_f64(&ref, i) + 0.01 * cos(1.3 * i));
  nnp_tensor_set_f64(&got, 500, nnp_tensor_get_f64(&ref, 500) + 0.32);
  nnp_accuracy a = compare(&got, &ref, NNP_INT8);
  CHECK_MSG(a.max_rel > 5e-2 && a.max_rel < 0.1, "max_rel %g", a.max_rel);
  CHECK_MSG(a.cosine > 0.999, "cosine %g", a.cosine);
  CHECK(a.top1 == 1.0);
  CHECK(a.compared && a.within_tol);
  CHECK(strstr(a.criterion, "cosine >= 0.99") != NULL);
  a = compare(&got, &ref, NNP_MIXED); /* mixed precision: judged as int8 */
  CHECK(a.within_tol);
  /* the same outputs under the max_rel bound int8 had before: outside it */
  nnp_accuracy_criterion old = {5e-2, -INFINITY, -INFINITY, 0};
  nnp_accuracy_compare(&got, &ref, 1, &old, &a);
  CHECK(!a.within_tol);
  /* and fp32 / fp16 rows with these outputs still fail their max_rel bound */
  a = compare(&got, &ref, NNP_FP32);
  CHECK(!a.within_tol && strstr(a.criterion, "max_rel <= 1e-04") != NULL);
  a = compare(&got, &ref, NNP_FP16);
  CHECK(!a.within_tol);
  nnp_tensor_free(&ref);
  nnp_tensor_free(&got);
}

/* Noise of 40% of the signal's RMS everywhere: top-1 still agrees (the max stands out) but
 * cosine drops below 0.99, and max_rel (~0.07) alone would not tell it from the case above. */
static void test_int8_fails_on_low_cosine(void) {
  nnp_tensor ref = mat(1, 1000), got = mat(1, 1000);
  fill_ref(&ref);
  for (int64_t i = 0; i < 1000; i++)
    nnp_tensor_set_f64(&got, i, nnp_tensor_get_f64(&ref, i) + (i % 2 ? 0.3 : -0.3));
  nnp_accuracy a = compare(&got, &ref, NNP_INT8);
  CHECK_MSG(a.cosine < 0.99 && a.cosine > 0.9, "cosine %g", a.cosine);
  CHECK_MSG(a.max_rel < 0.1, "max_rel %g", a.max_rel);
  CHECK(a.top1 == 1.0);
  CHECK(a.compared && !a.within_tol);
  /* NaN outputs fail whatever max_rel is judged or not */
  copy(&got, &ref);
  nnp_tensor_set_f64(&got, 7, NAN);
  a = compare(&got, &ref, NNP_INT8);
  CHECK(!a.within_tol);
  /* a shape that differs fails */
  nnp_tensor other = mat(1, 999);
  fill_ref(&other);
  a = compare(&other, &ref, NNP_INT8);
  CHECK(!a.within_tol);
  nnp_tensor_free(&other);
  nnp_tensor_free(&ref);
  nnp_tensor_free(&got);
}

/* Top-1 over a batch: the cosine of the whole output hides one input's flip, top-1
 * agreement does not, judged from 10 rows on. */
static void test_int8_top1(void) {
  nnp_tensor ref = mat(20, 1000), got = mat(20, 1000);
  fill_ref(&ref);
  copy(&got, &ref);
  /* rows 0..2 flip: a close second overtakes the top (4 -> 3.9, neighbour 1 -> 4) */
  for (int64_t r = 0; r < 3; r++) {
    int64_t top = (3 * r) % 1000, other = top + 1;
    nnp_tensor_set_f64(&got, r * 1000 + top, 3.9);
    nnp_tensor_set_f64(&got, r * 1000 + other, 4.0);
  }
  nnp_accuracy a = compare(&got, &ref, NNP_INT8);
  CHECK_NEAR(a.top1, 17.0 / 20.0, 1e-12);
  CHECK_MSG(a.cosine >= 0.99, "cosine %g", a.cosine);
  CHECK(!a.within_tol); /* 85% < 90% over 20 rows */
  /* one flip in 20 rows: 95%, within */
  copy(&got, &ref);
  nnp_tensor_set_f64(&got, 0, 3.9);
  nnp_tensor_set_f64(&got, 1, 4.0);
  a = compare(&got, &ref, NNP_INT8);
  CHECK_NEAR(a.top1, 19.0 / 20.0, 1e-12);
  CHECK(a.within_tol);
  /* fewer than 10 rows: top-1 is reported, not judged (one near tie would decide alone) */
  ref.dims[0] = got.dims[0] = 5;
  a = compare(&got, &ref, NNP_INT8);
  CHECK_NEAR(a.top1, 4.0 / 5.0, 1e-12);
  CHECK(a.within_tol);
  ref.dims[0] = got.dims[0] = 20;
  nnp_tensor_free(&ref);
  nnp_tensor_free(&got);
}

/* fp32 and fp16 keep their max_rel bounds (1e-4, 1e-2), whatever the cosine. */
static void test_fp_unchanged(void) {
  nnp_tensor ref = mat(1, 1000), got = mat(1, 1000);
  fill_ref(&ref);
  copy(&got, &ref);
  nnp_tensor_set_f64(&got, 10, nnp_tensor_get_f64(&ref, 10) + 4 * 0.9e-4); /* max_rel 0.9e-4 */
  nnp_accuracy a = compare(&got, &ref, NNP_FP32);
  CHECK(a.within_tol);
  CHECK(strcmp(a.criterion, "max_rel <= 1e-04") == 0);
  nnp_tensor_set_f64(&got, 10, nnp_tensor_get_f64(&ref, 10) + 4 * 1.1e-4); /* max_rel 1.1e-4 */
  a = compare(&got, &ref, NNP_FP32);
  CHECK_MSG(a.cosine > 0.99999, "cosine %g", a.cosine);
  CHECK(!a.within_tol);
  a = compare(&got, &ref, NNP_FP16);
  CHECK(a.within_tol && strcmp(a.criterion, "max_rel <= 1e-02") == 0);
  nnp_tensor_set_f64(&got, 10, nnp_tensor_get_f64(&ref, 10) + 4 * 1.1e-2);
  a = compare(&got, &ref, NNP_FP16);
  CHECK(!a.within_tol);
  /* a NaN output element fails fp32 too, wherever it is: max_rel is NaN, not the largest
   * finite error after it */
  copy(&got, &ref);
  nnp_tensor_set_f64(&got, 7, NAN);
  a = compare(&got, &ref, NNP_FP32);
  CHECK(!a.within_tol);
  CHECK(isnan(a.max_rel) && isnan(a.max_abs));
  /* identical outputs: within for every precision */
  copy(&got, &ref);
  for (int p = NNP_FP32; p <= NNP_MIXED; p++) CHECK(compare(&got, &ref, (nnp_precision)p).within_tol);
  nnp_tensor_free(&ref);
  nnp_tensor_free(&got);
}

static void test_criterion_text(void) {
  char buf[96];
  nnp_accuracy_criterion c = nnp_accuracy_default_criterion(NNP_INT8);
  nnp_accuracy_criterion_text(&c, buf, sizeof buf);
  CHECK_MSG(!strcmp(buf, "cosine >= 0.99, top-1 >= 90% over 10+ rows"), "'%s'", buf);
  char small[12]; /* cut, terminated */
  nnp_accuracy_criterion_text(&c, small, sizeof small);
  CHECK(strlen(small) == sizeof small - 1 && !strncmp(small, "cosine >= 0", 11));
  c = nnp_accuracy_default_criterion(NNP_FP32);
  nnp_accuracy_criterion_text(&c, buf, sizeof buf);
  CHECK_MSG(!strcmp(buf, "max_rel <= 1e-04"), "'%s'", buf);
}

int main(void) {
  test_int8_passes_on_cosine();
  test_int8_fails_on_low_cosine();
  test_int8_top1();
  test_fp_unchanged();
  test_criterion_text();
  TEST_MAIN_END();
}
