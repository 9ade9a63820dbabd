/* The seeded input generator is part of the methodology (identical inputs for every
 * backend, reproducible from the documented formula): pin its values. The expected
 * numbers were computed with numpy from the formula in include/nnperf/bench.h. */
#include "nnperf/bench.h"
#include "test.h"

int main(void) {
  nnp_tensor t = {.dtype = NNP_F32, .rank = 1, .dims = {5}};
  CHECK_OK(nnp_tensor_alloc(&t));
  nnp_fill_seeded(&t, 1);
  const float want[5] = {0.7666216f, 0.13312314f, 0.18237947f, -0.7730993f, -0.13708836f};
  for (int i = 0; i < 5; i++) CHECK_NEAR(((float *)t.data)[i], want[i], 1e-7);
  /* another seed gives other values, the same seed the same ones */
  nnp_tensor u = {.dtype = NNP_F32, .rank = 1, .dims = {5}};
  CHECK_OK(nnp_tensor_alloc(&u));
  nnp_fill_seeded(&u, 2);
  CHECK(((float *)u.data)[0] != ((float *)t.data)[0]);
  nnp_fill_seeded(&u, 1);
  for (int i = 0; i < 5; i++) CHECK(((float *)u.data)[i] == ((float *)t.data)[i]);
  /* float64 sees the same sequence; integers are zeros */
  nnp_tensor d = {.dtype = NNP_F64, .rank = 1, .dims = {5}};
  CHECK_OK(nnp_tensor_alloc(&d));
  nnp_fill_seeded(&d, 1);
  for (int i = 0; i < 5; i++) CHECK_NEAR(((double *)d.data)[i], want[i], 1e-7);
  nnp_tensor k = {.dtype = NNP_I64, .rank = 1, .dims = {3}};
  CHECK_OK(nnp_tensor_alloc(&k));
  ((int64_t *)k.data)[1] = 7;
  nnp_fill_seeded(&k, 1);
  for (int i = 0; i < 3; i++) CHECK(((int64_t *)k.data)[i] == 0);
  nnp_tensor_free(&t);
  nnp_tensor_free(&u);
  nnp_tensor_free(&d);
  nnp_tensor_free(&k);
  TEST_MAIN_END();
}
