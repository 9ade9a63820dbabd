/* libFuzzer target: bytes -> .npy parser (user-supplied --input files). Must either give
 * a tensor whose bytes match its shape or fail cleanly. */
#include <stddef.h>
#include <stdint.h>

#include "nnperf/npy.h"
#include "nnperf/tensor.h"

const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1:max_allocation_size_mb=256"; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  nnp_tensor t = {0};
  if (nnp_npy_parse(data, size, &t) != NNP_OK) return 0;
  size_t nb = 0;
  if (nnp_shape_nbytes(t.dtype, t.rank, t.dims, &nb) != NNP_OK || nb != nnp_tensor_nbytes(&t)) __builtin_trap();
  volatile uint8_t sum = 0;
  for (size_t i = 0; i < nb; i++) sum ^= ((const uint8_t *)t.data)[i];
  (void)sum;
  nnp_tensor_free(&t);
  return 0;
}
