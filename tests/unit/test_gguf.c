/* The GGUF header reader on hand-built images: each refusal the fuzzer found (or could find)
 * gets a case that must fail with the right message, beside a well-formed twin that must
 * pass, so a test that cannot fail would show as the twin failing too. */
#include <stdint.h>
#include <string.h>

#include "llm/gguf.h"
#include "test.h"

typedef struct image {
  uint8_t b[512];
  size_t n;
} image;

static void put(image *im, const void *p, size_t k) {
  memcpy(im->b + im->n, p, k);
  im->n += k;
}
static void put_u32(image *im, uint32_t v) { put(im, &v, 4); }
static void put_u64(image *im, uint64_t v) { put(im, &v, 8); }
static void put_str(image *im, const char *s) {
  put_u64(im, strlen(s));
  put(im, s, strlen(s));
}

/* A version-3 file: general.architecture = llama, two F32 tensors of `elems` elements at the
 * given offsets, then data_bytes bytes of tensor data at a 32-byte aligned start. */
static void build(image *im, uint64_t elems, uint64_t off_a, uint64_t off_b, size_t data_bytes) {
  memset(im, 0, sizeof *im);
  put(im, "GGUF", 4);
  put_u32(im, 3);
  put_u64(im, 2); /* tensors */
  put_u64(im, 1); /* keys */
  put_str(im, "general.architecture");
  put_u32(im, 8); /* string */
  put_str(im, "llama");
  const char *names[2] = {"a.weight", "b.weight"};
  uint64_t offs[2] = {off_a, off_b};
  for (int t = 0; t < 2; t++) {
    put_str(im, names[t]);
    put_u32(im, 1);
    put_u64(im, elems);
    put_u32(im, 0); /* F32 */
    put_u64(im, offs[t]);
  }
  im->n = (im->n + 31) / 32 * 32 + data_bytes;
}

int main(void) {
  image im;
  nnp_gguf_info g;

  build(&im, 4, 0, 16, 32); /* back to back: 32 bytes of weights in 32 bytes of data */
  CHECK_OK(nnp_gguf_parse(im.b, im.n, "ok.gguf", &g));
  CHECK(g.tensor_bytes == 32 && g.n_params == 8 && !strcmp(g.arch, "llama") && !strcmp(g.weight_type, "F32"));

  /* Both tensors at offset 0 in 16 bytes: each fits alone, together they claim more bytes
   * than the file holds (the fuzz_gguf crash: tensor_bytes beyond the file size). */
  build(&im, 4, 0, 0, 16);
  CHECK(nnp_gguf_parse(im.b, im.n, "overlap.gguf", &g) == NNP_ERR_FORMAT);
  CHECK_MSG(strstr(nnp_last_error(), "overlap.gguf: tensors overlap") != NULL, "%s", nnp_last_error());

  build(&im, 4, 0, 16, 24); /* the second tensor runs past the end */
  CHECK(nnp_gguf_parse(im.b, im.n, "cut.gguf", &g) == NNP_ERR_FORMAT);
  CHECK_MSG(strstr(nnp_last_error(), "truncated GGUF: tensor 'b.weight'") != NULL, "%s", nnp_last_error());

  build(&im, 4, 0, 16, 32);
  memcpy(im.b, "GGUX", 4);
  CHECK(nnp_gguf_parse(im.b, im.n, "magic.gguf", &g) == NNP_ERR_FORMAT);
  CHECK(strstr(nnp_last_error(), "not a GGUF file") != NULL);
  TEST_MAIN_END();
}
