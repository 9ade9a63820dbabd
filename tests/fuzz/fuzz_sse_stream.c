/* libFuzzer target: bytes a server streams -> nnperf llm load's event-stream parser and
 * OpenAI chunk reader (src/llm/sse.c, src/llm/oai_stream.c). The first byte picks how the
 * body is cut into reads (servers and TCP split anywhere). Must never crash, read out of
 * bounds or leak, and must leave a consistent record: token times non-decreasing, a
 * failed stream with a reason. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "llm/oai_stream.h"

const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1:max_allocation_size_mb=256"; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  size_t step = 1 + data[0] % 64;
  data++, size--;
  nnp_llm_request rec;
  memset(&rec, 0, sizeof rec);
  nnp_oai_stream s;
  nnp_oai_stream_init(&s, &rec);
  double t = 1.0;
  int rc = 0;
  for (size_t off = 0; off < size && rc == 0; off += step, t += 0.001)
    rc = nnp_oai_stream_feed(&s, (const char *)data + off, size - off < step ? size - off : step, t);
  if (rc == 0) rc = nnp_oai_stream_finish(&s);
  if (rc != 0 && (!s.sse.failed || !s.sse.why[0])) __builtin_trap();
  for (int i = 1; i < rec.n_tokens; i++)
    if (rec.token_t[i] < rec.token_t[i - 1]) __builtin_trap();
  nnp_oai_stream_free(&s);
  nnp_llm_request_free(&rec);
  return 0;
}
