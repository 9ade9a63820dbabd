/* libFuzzer target: bytes -> plan cache reader (nnp_plan_cache_parse). A cache file is
 * never trusted, so the reader must refuse anything malformed with an error and never
 * read outside the image. The size and checksum fields are fixed up before parsing, so
 * mutations reach the body parser instead of stopping at the checksum (the real reader
 * would refuse them there: this covers a file forged with a matching checksum). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nnperf/plan_cache.h"

const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1:max_allocation_size_mb=256"; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* an exact-size heap copy: ASan sees any read past the end */
  uint8_t *buf = malloc(size ? size : 1);
  if (!buf) return 0;
  memcpy(buf, data, size);
  if (size >= 96) {
    uint64_t n = size;
    memcpy(buf + 16, &n, 8);
    uint64_t sum = nnp_hash64(buf + 32, size - 32, nnp_hash64(buf, 24, 0));
    memcpy(buf + 24, &sum, 8);
  }
  nnp_graph *g = NULL;
  if (nnp_plan_cache_parse(buf, size, NULL, &g) == NNP_OK) {
    /* touch every initializer byte: each must lie inside the image */
    volatile uint8_t x = 0;
    for (int v = 0; v < g->n_values; v++) {
      const nnp_tensor *t = g->values[v].init;
      if (!t) continue;
      size_t nb = nnp_tensor_nbytes(t);
      for (size_t i = 0; i < nb; i++) x ^= ((const uint8_t *)t->data)[i];
    }
    (void)x;
    nnp_plan_cache_graph_destroy(g, buf, size);
  }
  free(buf);
  return 0;
}
