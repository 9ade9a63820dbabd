/* GGUF header reader (see gguf.h). The format: magic "GGUF", version, tensor and key
 * counts, key/value pairs, the tensor table, then tensor data at an aligned offset. Every
 * count and length is checked against the bytes left before it is used, so a hostile file
 * costs at most one pass over its header. */
#include "llm/gguf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum { GGUF_T_U8, GGUF_T_I8, GGUF_T_U16, GGUF_T_I16, GGUF_T_U32, GGUF_T_I32, GGUF_T_F32, GGUF_T_BOOL,
       GGUF_T_STRING, GGUF_T_ARRAY, GGUF_T_U64, GGUF_T_I64, GGUF_T_F64, GGUF_T_COUNT };

#define GGUF_MAX_DIMS 4
#define GGUF_MAX_TYPES 40

typedef struct cursor {
  const uint8_t *p;
  size_t n, pos;
  const char *what;
} cursor;

static nnp_status truncated(const cursor *c, const char *field) {
  return nnp_error(NNP_ERR_FORMAT, "%s: truncated GGUF: %s at byte %zu runs past the end (%zu bytes)", c->what, field,
                   c->pos, c->n);
}

static nnp_status take(cursor *c, void *dst, size_t k, const char *field) {
  if (c->n - c->pos < k) return truncated(c, field);
  if (dst) memcpy(dst, c->p + c->pos, k);
  c->pos += k;
  return NNP_OK;
}

static nnp_status u32(cursor *c, uint32_t *v, const char *f) { return take(c, v, 4, f); }
static nnp_status u64(cursor *c, uint64_t *v, const char *f) { return take(c, v, 8, f); }

/* A gguf string: u64 length + bytes. Copies at most cap-1 bytes into dst (may be NULL). */
static nnp_status str(cursor *c, char *dst, size_t cap, const char *field) {
  uint64_t len;
  NNP_TRY(u64(c, &len, field));
  if (len > c->n - c->pos) return truncated(c, field);
  if (dst) {
    size_t k = len < cap - 1 ? (size_t)len : cap - 1;
    memcpy(dst, c->p + c->pos, k);
    dst[k] = 0;
  }
  c->pos += (size_t)len;
  return NNP_OK;
}

static size_t scalar_size(uint32_t t) {
  static const size_t sizes[GGUF_T_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
  return t < GGUF_T_COUNT ? sizes[t] : 0;
}

/* Skips one value of type t (arrays of arrays are refused: no real file has them). */
static nnp_status skip_value(cursor *c, uint32_t t, const char *key, uint64_t *array_len) {
  if (t == GGUF_T_STRING) return str(c, NULL, 0, key);
  if (t != GGUF_T_ARRAY) {
    size_t k = scalar_size(t);
    if (!k) return nnp_error(NNP_ERR_FORMAT, "%s: key '%s' has unknown value type %u", c->what, key, t);
    return take(c, NULL, k, key);
  }
  uint32_t et;
  uint64_t n;
  NNP_TRY(u32(c, &et, key));
  NNP_TRY(u64(c, &n, key));
  if (array_len) *array_len = n;
  if (et == GGUF_T_STRING) {
    if (n > (c->n - c->pos) / 8) return truncated(c, key); /* each string needs 8 bytes at least */
    for (uint64_t i = 0; i < n; i++) NNP_TRY(str(c, NULL, 0, key));
    return NNP_OK;
  }
  size_t k = scalar_size(et);
  if (!k) return nnp_error(NNP_ERR_FORMAT, "%s: key '%s' is an array of unsupported type %u", c->what, key, et);
  if (n > (c->n - c->pos) / k) return truncated(c, key);
  return take(c, NULL, (size_t)n * k, key);
}

/* An integer-typed value as int64 (the dimension keys are u32 in practice, u64 allowed). */
static nnp_status int_value(cursor *c, uint32_t t, const char *key, int64_t *out) {
  uint8_t b[8] = {0};
  size_t k = scalar_size(t);
  if (t == GGUF_T_STRING || t == GGUF_T_ARRAY || t == GGUF_T_F32 || t == GGUF_T_F64 || !k)
    return nnp_error(NNP_ERR_FORMAT, "%s: key '%s' should be an integer (type %u)", c->what, key, t);
  NNP_TRY(take(c, b, k, key));
  uint64_t v = 0;
  memcpy(&v, b, 8); /* little-endian files on little-endian hosts */
  *out = (int64_t)v;
  return NNP_OK;
}

/* Which dimension field a key names ("llama.block_count" -> n_layer), or NULL. */
static int64_t *dim_field(nnp_gguf_info *g, const char *key) {
  size_t al = strlen(g->arch);
  if (!al || strncmp(key, g->arch, al) || key[al] != '.') return NULL;
  const char *k = key + al + 1;
  if (!strcmp(k, "context_length")) return &g->n_ctx_train;
  if (!strcmp(k, "block_count")) return &g->n_layer;
  if (!strcmp(k, "embedding_length")) return &g->n_embd;
  if (!strcmp(k, "attention.head_count")) return &g->n_head;
  if (!strcmp(k, "attention.head_count_kv")) return &g->n_head_kv;
  return NULL;
}

static nnp_status read_kv(cursor *c, nnp_gguf_info *g, uint64_t *alignment) {
  char key[256];
  uint32_t t;
  NNP_TRY(str(c, key, sizeof key, "a key"));
  NNP_TRY(u32(c, &t, key));
  int64_t *dim = dim_field(g, key);
  if (!strcmp(key, "general.architecture") && t == GGUF_T_STRING) return str(c, g->arch, sizeof g->arch, key);
  if (!strcmp(key, "general.name") && t == GGUF_T_STRING) return str(c, g->name, sizeof g->name, key);
  if (dim) return int_value(c, t, key, dim);
  if (!strcmp(key, "general.alignment")) {
    int64_t a;
    NNP_TRY(int_value(c, t, key, &a));
    if (a <= 0 || a > 1 << 20 || (a & (a - 1)))
      return nnp_error(NNP_ERR_FORMAT, "%s: general.alignment %lld is not a power of two up to 1 MiB", c->what,
                       (long long)a);
    *alignment = (uint64_t)a;
    return NNP_OK;
  }
  uint64_t n = 0;
  NNP_TRY(skip_value(c, t, key, &n));
  if (!strcmp(key, "tokenizer.ggml.tokens")) g->n_vocab = (int64_t)n;
  return NNP_OK;
}

/* ggml tensor types: name, bytes per block, elements per block (0: unknown here). */
static const struct { const char *name; int bytes, block; } tensor_types[GGUF_MAX_TYPES] = {
    [0] = {"F32", 4, 1},     [1] = {"F16", 2, 1},      [2] = {"Q4_0", 18, 32},  [3] = {"Q4_1", 20, 32},
    [6] = {"Q5_0", 22, 32},  [7] = {"Q5_1", 24, 32},   [8] = {"Q8_0", 34, 32},  [9] = {"Q8_1", 36, 32},
    [10] = {"Q2_K", 84, 256}, [11] = {"Q3_K", 110, 256}, [12] = {"Q4_K", 144, 256}, [13] = {"Q5_K", 176, 256},
    [14] = {"Q6_K", 210, 256}, [15] = {"Q8_K", 292, 256}, [24] = {"I8", 1, 1},    [25] = {"I16", 2, 1},
    [26] = {"I32", 4, 1},    [27] = {"I64", 8, 1},     [28] = {"F64", 8, 1},    [30] = {"BF16", 2, 1},
};

typedef struct tensor_table {
  int64_t bytes_by_type[GGUF_MAX_TYPES];
  uint64_t end;      /* largest offset + size: where tensor data must reach */
  char end_name[128];
} tensor_table;

static nnp_status read_tensor(cursor *c, nnp_gguf_info *g, tensor_table *tt) {
  char name[128];
  uint32_t n_dims, type;
  uint64_t dims[GGUF_MAX_DIMS], offset, numel = 1;
  NNP_TRY(str(c, name, sizeof name, "a tensor name"));
  NNP_TRY(u32(c, &n_dims, name));
  if (n_dims == 0 || n_dims > GGUF_MAX_DIMS)
    return nnp_error(NNP_ERR_FORMAT, "%s: tensor '%s' has %u dimensions (1 to %d)", c->what, name, n_dims,
                     GGUF_MAX_DIMS);
  for (uint32_t d = 0; d < n_dims; d++) {
    NNP_TRY(u64(c, &dims[d], name));
    /* each factor below 2^40 and the product below 2^50: far beyond any file we can map */
    if (dims[d] == 0 || dims[d] > (1ull << 40) || numel > (1ull << 50) / dims[d])
      return nnp_error(NNP_ERR_FORMAT, "%s: tensor '%s' declares an absurd size (dimension %u is %llu)", c->what,
                       name, d, (unsigned long long)dims[d]);
    numel *= dims[d];
  }
  NNP_TRY(u32(c, &type, name));
  NNP_TRY(u64(c, &offset, name));
  if (type >= GGUF_MAX_TYPES || !tensor_types[type].name)
    return nnp_error(NNP_ERR_UNSUPPORTED, "%s: tensor '%s' has ggml type %u, which nnperf does not know", c->what,
                     name, type);
  uint64_t block = (uint64_t)tensor_types[type].block;
  if (dims[0] % block)
    return nnp_error(NNP_ERR_FORMAT, "%s: tensor '%s': first dimension %llu is not a multiple of %s's block of %llu",
                     c->what, name, (unsigned long long)dims[0], tensor_types[type].name, (unsigned long long)block);
  uint64_t bytes = numel / block * (uint64_t)tensor_types[type].bytes;
  if (offset > (1ull << 62) - bytes)
    return nnp_error(NNP_ERR_FORMAT, "%s: tensor '%s' has an absurd offset %llu", c->what, name,
                     (unsigned long long)offset);
  if (offset + bytes > tt->end) {
    tt->end = offset + bytes;
    snprintf(tt->end_name, sizeof tt->end_name, "%s", name);
  }
  tt->bytes_by_type[type] += (int64_t)bytes;
  g->n_params += (int64_t)numel;
  g->tensor_bytes += (int64_t)bytes;
  return NNP_OK;
}

static void init_info(nnp_gguf_info *g, size_t size) {
  memset(g, 0, sizeof *g);
  g->n_ctx_train = g->n_layer = g->n_embd = g->n_head = g->n_head_kv = g->n_vocab = -1;
  g->file_bytes = (int64_t)size;
}

static nnp_status read_header(cursor *c, nnp_gguf_info *g) {
  uint8_t magic[4];
  if (c->n < 4 || memcmp(c->p, "GGUF", 4)) {
    NNP_TRY(take(c, magic, c->n < 4 ? c->n : 4, "the magic"));
    return nnp_error(NNP_ERR_FORMAT, "%s: not a GGUF file (it does not start with \"GGUF\")", c->what);
  }
  NNP_TRY(take(c, magic, 4, "the magic"));
  NNP_TRY(u32(c, &g->version, "the version"));
  if (g->version < 2 || g->version > 3)
    return nnp_error(NNP_ERR_UNSUPPORTED, "%s: GGUF version %u (nnperf reads versions 2 and 3)", c->what, g->version);
  NNP_TRY(u64(c, &g->n_tensors, "the tensor count"));
  NNP_TRY(u64(c, &g->n_kv, "the key count"));
  /* a key needs at least 12 bytes and a tensor entry 28: counts beyond that are lies */
  if (g->n_kv > (c->n - c->pos) / 12 || g->n_tensors > (c->n - c->pos) / 28)
    return nnp_error(NNP_ERR_FORMAT, "%s: declares %llu keys and %llu tensors, more than its %zu bytes can hold",
                     c->what, (unsigned long long)g->n_kv, (unsigned long long)g->n_tensors, c->n);
  return NNP_OK;
}

nnp_status nnp_gguf_parse(const uint8_t *data, size_t size, const char *what, nnp_gguf_info *g) {
  cursor c = {.p = data, .n = size, .what = what};
  init_info(g, size);
  NNP_TRY(read_header(&c, g));
  uint64_t alignment = 32;
  for (uint64_t i = 0; i < g->n_kv; i++) NNP_TRY(read_kv(&c, g, &alignment));
  tensor_table tt;
  memset(&tt, 0, sizeof tt);
  for (uint64_t i = 0; i < g->n_tensors; i++) NNP_TRY(read_tensor(&c, g, &tt));
  uint64_t data_start = (c.pos + alignment - 1) / alignment * alignment;
  if (tt.end > 0 && (data_start > size || tt.end > size - data_start))
    return nnp_error(NNP_ERR_FORMAT,
                     "%s: truncated GGUF: tensor '%s' ends at byte %llu of the data, but the file holds %llu bytes "
                     "of data",
                     what, tt.end_name, (unsigned long long)tt.end,
                     (unsigned long long)(data_start > size ? 0 : size - data_start));
  /* Each tensor fitting is not enough: overlapping tensors (which llama.cpp refuses, since it
   * lays them out back to back) would make the weight bytes we report exceed the file. */
  if ((uint64_t)g->tensor_bytes > size - data_start)
    return nnp_error(NNP_ERR_FORMAT,
                     "%s: tensors overlap: they declare %lld bytes of weights, but the file holds %llu bytes of data",
                     what, (long long)g->tensor_bytes, (unsigned long long)(size - data_start));
  int best = -1;
  for (int t = 0; t < GGUF_MAX_TYPES; t++)
    if (tt.bytes_by_type[t] > 0 && (best < 0 || tt.bytes_by_type[t] > tt.bytes_by_type[best])) best = t;
  snprintf(g->weight_type, sizeof g->weight_type, "%s", best >= 0 ? tensor_types[best].name : "none");
  if (!g->arch[0]) return nnp_error(NNP_ERR_FORMAT, "%s: GGUF file without general.architecture", what);
  return NNP_OK;
}

nnp_status nnp_gguf_read_info(const char *path, nnp_gguf_info *out) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return nnp_error(NNP_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return nnp_error(NNP_ERR_IO, "%s: not a regular file", path);
  }
  if (st.st_size == 0) {
    close(fd);
    return nnp_error(NNP_ERR_FORMAT, "%s: not a GGUF file (it is empty)", path);
  }
  void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return nnp_error(NNP_ERR_IO, "%s: cannot map: %s", path, strerror(errno));
  nnp_status s = nnp_gguf_parse(m, (size_t)st.st_size, path, out);
  munmap(m, (size_t)st.st_size);
  return s;
}

int64_t nnp_gguf_kv_bytes(const nnp_gguf_info *g, int64_t n_ctx, int elem_bytes) {
  if (g->n_layer <= 0 || g->n_embd <= 0 || g->n_head <= 0) return -1;
  int64_t kv_heads = g->n_head_kv > 0 ? g->n_head_kv : g->n_head;
  int64_t width = g->n_embd / g->n_head * kv_heads;
  return 2 * g->n_layer * n_ctx * width * elem_bytes;
}
