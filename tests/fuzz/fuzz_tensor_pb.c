/* libFuzzer target: bytes -> serialized TensorProto (.pb) -> nnp_tensor.
 * Must either succeed (then the tensor's byte size matches its shape and every byte is
 * readable) or fail cleanly; never crash or leak. */
#include <stddef.h>
#include <stdint.h>

#include "nnperf/alloc.h"
#include "nnperf/onnx.h"
#include "nnperf/tensor.h"

const char *__asan_default_options(void);
const char *__asan_default_options(void) {
  return "allocator_may_return_null=1:max_allocation_size_mb=256";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  nnp_tensor t = {0};
  char *name = NULL;
  if (nnp_onnx_parse_tensor(data, size, &t, &name) != NNP_OK) {
    if (name) __builtin_trap(); /* a failed parse must not hand out a name */
    return 0;
  }
  if (!name || t.rank < 0 || t.rank > NNP_MAX_RANK) __builtin_trap();
  size_t nb = 0;
  if (nnp_shape_nbytes(t.dtype, t.rank, t.dims, &nb) != NNP_OK || nb != nnp_tensor_nbytes(&t)) __builtin_trap();
  /* Touch every byte so ASan checks the buffer really is as large as the shape says. */
  volatile uint8_t sum = 0;
  for (size_t i = 0; i < nb; i++) sum ^= ((const uint8_t *)t.data)[i];
  (void)sum;
  nnp_tensor_free(&t);
  nnp_free(name);
  return 0;
}
