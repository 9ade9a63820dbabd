/* libFuzzer target: bytes -> the worker protocol reader (the parent reads what a worker
 * process writes, and a crashed or hostile worker can write anything). The input is fed
 * in uneven chunks, as pipes deliver it; every record must be well formed or the reader
 * must say malformed, never crash, overrun or leak. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "bench/protocol.h"
#include "nnperf/tensor.h"

const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1:max_allocation_size_mb=256"; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  nnp_proto_reader r;
  nnp_proto_reader_init(&r, (size_t)16 << 20);
  size_t pos = 0, step = 1;
  while (pos < size) {
    size_t n = size - pos < step ? size - pos : step;
    if (nnp_proto_feed(&r, data + pos, n) != NNP_OK) break;
    pos += n;
    step = step * 3 + 1; /* 1, 4, 13, 40, ... bytes per read */
    nnp_proto_msg m;
    int k;
    while ((k = nnp_proto_next(&r, &m)) == 1) {
      if (!m.line) __builtin_trap();
      if (m.is_tensor) {
        size_t nb = 0;
        if (nnp_shape_nbytes(m.tensor.dtype, m.tensor.rank, m.tensor.dims, &nb) != NNP_OK) __builtin_trap();
        volatile uint8_t sum = 0; /* the payload must really be there */
        for (size_t i = 0; i < nb; i++) sum ^= ((const uint8_t *)m.tensor.data)[i];
        (void)sum;
      } else {
        char copy[NNP_PROTO_MAX_LINE + 1];
        strncpy(copy, m.line, NNP_PROTO_MAX_LINE);
        copy[NNP_PROTO_MAX_LINE] = 0;
        char *tok[80];
        nnp_proto_split(copy, tok, 80);
      }
    }
    if (k < 0) break;
  }
  nnp_proto_reader_free(&r);
  return 0;
}
