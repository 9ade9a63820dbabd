/* nnp_tensor_set_f64 into integer tensors: out-of-range and NaN values are stored
 * without undefined behaviour (found by fuzz_shape_infer: a Pad value of -1.0 into a
 * uint8 tensor). A plain C cast gives INT64_MIN for 1e30 on x86; saturation gives MAX. */
#include <stdint.h>

#include "nnperf/tensor.h"
#include "test.h"

static void check_store(nnp_dtype dt, double v, int64_t expect) {
  nnp_tensor t = {.dtype = dt, .rank = 1, .dims = {1}};
  CHECK_OK(nnp_tensor_alloc(&t));
  if (!t.data) return;
  nnp_tensor_set_f64(&t, 0, v);
  int64_t got = nnp_tensor_get_i64(&t, 0);
  CHECK_MSG(got == expect, "%s <- %g: got %lld, want %lld", nnp_dtype_name(dt), v, (long long)got,
            (long long)expect);
  nnp_tensor_free(&t);
}

int main(void) {
  check_store(NNP_U8, -3.0, 253);      /* wraps like a uint8 store of int -3 */
  check_store(NNP_U8, -1.0, 255);
  check_store(NNP_U8, 300.0, 44);
  check_store(NNP_I8, 200.0, -56);
  check_store(NNP_I64, 1e30, INT64_MAX);
  check_store(NNP_I64, -1e30, INT64_MIN);
  check_store(NNP_I64, NAN, 0);
  check_store(NNP_I32, NAN, 0);
  check_store(NNP_I32, -7.9, -7);      /* truncation toward zero, as before */
  check_store(NNP_U16, 65535.0, 65535);
  check_store(NNP_BOOL, -0.5, 1);
  TEST_MAIN_END();
}
