/* libFuzzer target: bytes -> GGUF header reader (the LLM model file users pass to
 * nnperf llm bench / llm load, checked before any framework opens it). Must either accept
 * the file with sane dimensions or fail cleanly with a message. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "llm/gguf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  nnp_gguf_info g;
  if (nnp_gguf_parse(data, size, "fuzz.gguf", &g) != NNP_OK) {
    if (!nnp_last_error()[0]) __builtin_trap(); /* a refusal always says why */
    return 0;
  }
  /* an accepted file's tensors fit in it */
  if (g.tensor_bytes < 0 || g.tensor_bytes > (int64_t)size || g.n_params < 0) __builtin_trap();
  if (!g.arch[0] || strlen(g.weight_type) == 0) __builtin_trap();
  (void)nnp_gguf_kv_bytes(&g, 4096, 2);
  return 0;
}
