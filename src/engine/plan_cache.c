/* The native engine's plan cache (include/nnperf/plan_cache.h, docs/plan-cache.md).
 *
 * Writer: the optimised graph is serialised into one memory image (header, key, body,
 * 64-byte-aligned weight data), checksummed, and written atomically. Reader: every
 * length, count, index and offset is checked against the bytes that are there before
 * it is used, so a hostile file fails with a reason instead of reading out of bounds. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernels/cpu.h"
#include "nnperf/alloc.h"
#include "nnperf/onnx.h"
#include "nnperf/plan_cache.h"
#include "ops/internal_ops.h"
#include "util/atomic_file.h"

#ifndef NNP_VERSION
#define NNP_VERSION "0.1.0"
#endif

static const char MAGIC[8] = {'N', 'N', 'P', 'P', 'L', 'A', 'N', 0};
enum { HDR_SIZE = 96, HDR_CHECKSUM = 24, DATA_ALIGN = 64, STR_NULL = 0xffffffffu };

/* ---- hash ---- */

static uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
static uint64_t rd64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

uint64_t nnp_hash64(const void *data, size_t n, uint64_t seed) {
  const uint64_t P1 = 0x9E3779B185EBCA87ull, P2 = 0xC2B2AE3D27D4EB4Full, P3 = 0x165667B19E3779F9ull;
  const unsigned char *p = data;
  uint64_t h[4] = {seed + P1 + P2, seed + P2, seed, seed - P1};
  size_t i = 0;
  for (; i + 32 <= n; i += 32) /* four independent lanes: the multiplies overlap */
    for (int k = 0; k < 4; k++) h[k] = rotl(h[k] + rd64(p + i + 8 * k) * P2, 31) * P1;
  uint64_t r = rotl(h[0], 1) + rotl(h[1], 7) + rotl(h[2], 12) + rotl(h[3], 18) + (uint64_t)n;
  for (; i + 8 <= n; i += 8) r = rotl(r ^ (rotl(rd64(p + i) * P2, 31) * P1), 27) * P1 + P3;
  for (; i < n; i++) r = rotl(r ^ (p[i] * P3), 11) * P1;
  r ^= r >> 33;
  r *= P2;
  r ^= r >> 29;
  r *= P3;
  return r ^ (r >> 32);
}

static uint64_t image_checksum(const unsigned char *buf, size_t len) {
  return nnp_hash64(buf + HDR_CHECKSUM + 8, len - HDR_CHECKSUM - 8, nnp_hash64(buf, HDR_CHECKSUM, 0));
}

/* ---- key ---- */

static int appendf(char *key, size_t n, size_t *at, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
#include <stdarg.h>
static int appendf(char *key, size_t n, size_t *at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int w = *at < n ? vsnprintf(key + *at, n - *at, fmt, ap) : -1;
  va_end(ap);
  if (w < 0 || (size_t)w >= n - *at) return -1;
  *at += (size_t)w;
  return 0;
}

nnp_status nnp_plan_cache_key(const char *model_path, const nnp_plan_options *opt, char *key, size_t n) {
  if (opt->n_consts > 0)
    return nnp_error(NNP_ERR_UNSUPPORTED, "plans with frozen constant inputs are not cached");
  int fd = open(model_path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nnp_error(NNP_ERR_IO, "cannot open %s: %s", model_path, strerror(errno));
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    close(fd);
    return nnp_error(NNP_ERR_IO, "%s is not a regular file", model_path);
  }
  uint64_t h = 0;
  if (sb.st_size > 0) {
    void *m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
      close(fd);
      return nnp_error(NNP_ERR_IO, "cannot map %s: %s", model_path, strerror(errno));
    }
    h = nnp_hash64(m, (size_t)sb.st_size, 0);
    munmap(m, (size_t)sb.st_size);
  }
  close(fd);
  size_t at = 0;
  char shape[160];
  int bad = appendf(key, n, &at, "nnperf=%s;format=%d;model=%lld:%016llx;isa=%s;passes=0x%x;memory_plan=%d;fast_kernels=%d;default_dim=%lld",
                    NNP_VERSION, NNP_PLAN_CACHE_FORMAT, (long long)sb.st_size, (unsigned long long)h,
                    nnp_cpu_kernel_isa(), opt->passes, opt->memory_plan, opt->fast_kernels,
                    (long long)opt->default_dim);
  for (int i = 0; !bad && i < opt->n_dims; i++)
    bad = appendf(key, n, &at, ";dim:%s=%lld", opt->dims[i].symbol, (long long)opt->dims[i].value);
  for (int i = 0; !bad && i < opt->n_shapes; i++)
    bad = appendf(key, n, &at, ";shape:%s=%s", opt->shapes[i].input,
                  nnp_shape_str(opt->shapes[i].rank, opt->shapes[i].dims, shape, sizeof shape));
  if (bad) return nnp_error(NNP_ERR_LIMIT, "plan cache key of %s is longer than %zu bytes", model_path, n);
  return NNP_OK;
}

nnp_status nnp_plan_cache_path(const char *dir, const char *key, char *path, size_t n) {
  int w = snprintf(path, n, "%s/plan-%016llx.nnpplan", dir, (unsigned long long)nnp_hash64(key, strlen(key), 1));
  if (w < 0 || (size_t)w >= n) return nnp_error(NNP_ERR_LIMIT, "plan cache folder path too long: %s", dir);
  return NNP_OK;
}

/* ---- writer ---- */

typedef struct wbuf {
  unsigned char *p;
  size_t len, cap;
  bool fail;
} wbuf;

static void w_bytes(wbuf *b, const void *d, size_t n) {
  if (b->fail) return;
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n) cap *= 2;
    unsigned char *q = nnp_realloc(b->p, cap);
    if (!q) {
      b->fail = true;
      return;
    }
    b->p = q;
    b->cap = cap;
  }
  if (n) memcpy(b->p + b->len, d, n);
  b->len += n;
}
static void w_u8(wbuf *b, uint8_t v) { w_bytes(b, &v, 1); }
static void w_u32(wbuf *b, uint32_t v) { w_bytes(b, &v, 4); }
static void w_i32(wbuf *b, int32_t v) { w_bytes(b, &v, 4); }
static void w_u64(wbuf *b, uint64_t v) { w_bytes(b, &v, 8); }
static void w_i64(wbuf *b, int64_t v) { w_bytes(b, &v, 8); }
static void w_f32(wbuf *b, float v) { w_bytes(b, &v, 4); }
static void w_str(wbuf *b, const char *s) {
  if (!s) {
    w_u32(b, STR_NULL);
    return;
  }
  size_t n = strlen(s);
  w_u32(b, (uint32_t)n);
  w_bytes(b, s, n);
}
static void w_pad(wbuf *b, size_t align) {
  static const unsigned char zero[DATA_ALIGN];
  w_bytes(b, zero, (align - b->len % align) % align);
}
static void w_tensor_inline(wbuf *b, const nnp_tensor *t) {
  w_i32(b, t->dtype);
  w_i32(b, t->rank);
  for (int k = 0; k < t->rank; k++) w_i64(b, t->dims[k]);
  size_t nb = nnp_tensor_nbytes(t);
  w_u64(b, nb);
  w_bytes(b, t->data, nb);
}

static nnp_status w_attr(wbuf *b, const nnp_attr *a) {
  w_str(b, a->name);
  w_u32(b, (uint32_t)a->type);
  switch (a->type) {
  case NNP_ATTR_FLOAT: w_f32(b, a->f); break;
  case NNP_ATTR_INT: w_i64(b, a->i); break;
  case NNP_ATTR_STRING:
    w_u64(b, a->s ? a->s_len : 0);
    if (a->s) w_bytes(b, a->s, a->s_len);
    break;
  case NNP_ATTR_FLOATS:
    w_u64(b, a->floats ? a->count : 0);
    if (a->floats) w_bytes(b, a->floats, sizeof(float) * a->count);
    break;
  case NNP_ATTR_INTS:
    w_u64(b, a->ints ? a->count : 0);
    if (a->ints) w_bytes(b, a->ints, sizeof(int64_t) * a->count);
    break;
  case NNP_ATTR_STRINGS:
    w_u64(b, a->strings ? a->count : 0);
    for (size_t k = 0; a->strings && k < a->count; k++) w_str(b, a->strings[k] ? a->strings[k] : "");
    break;
  case NNP_ATTR_TENSOR:
  case NNP_ATTR_TENSORS: {
    size_t n = a->type == NNP_ATTR_TENSORS ? (a->tensor ? a->count : 0) : 1;
    if (!a->tensor) return nnp_error(NNP_ERR_UNSUPPORTED, "attribute '%s' holds no tensor", a->name);
    w_u64(b, n);
    for (size_t k = 0; k < n; k++) w_tensor_inline(b, &a->tensor[k]);
    break;
  }
  default:
    return nnp_error(NNP_ERR_UNSUPPORTED, "attribute '%s' of type %d cannot be cached", a->name, (int)a->type);
  }
  return NNP_OK;
}

static nnp_status build_image(const char *key, const nnp_graph *g, wbuf *b) {
  unsigned char hdr[HDR_SIZE] = {0};
  w_bytes(b, hdr, HDR_SIZE);
  w_bytes(b, key, strlen(key));
  w_pad(b, 8);
  size_t body_off = b->len;
  w_str(b, g->name);
  w_str(b, g->producer);
  w_i64(b, g->ir_version);
  w_i64(b, g->opset);
  w_u32(b, (uint32_t)g->n_values);
  w_u32(b, (uint32_t)g->n_nodes);
  w_u32(b, (uint32_t)g->n_inputs);
  w_u32(b, (uint32_t)g->n_outputs);
  /* weight data goes after the body: record each initializer's place, patched below */
  size_t *init_slot = nnp_calloc((size_t)(g->n_values ? g->n_values : 1), sizeof *init_slot);
  if (!init_slot) return nnp_error(NNP_ERR_NOMEM, "out of memory writing the plan cache");
  for (int v = 0; v < g->n_values; v++) {
    const nnp_value *val = &g->values[v];
    w_str(b, val->name);
    w_u8(b, (uint8_t)val->kind);
    w_u8(b, val->is_output);
    w_i32(b, val->dtype);
    w_i32(b, val->rank);
    for (int k = 0; k < val->rank && k < NNP_MAX_RANK; k++) {
      w_i64(b, val->dims[k].value);
      w_str(b, val->dims[k].symbol);
    }
    const nnp_tensor *t = val->init;
    w_u8(b, t && t->data ? 1 : 0);
    if (t && t->data) {
      w_i32(b, t->dtype);
      w_i32(b, t->rank);
      for (int k = 0; k < t->rank; k++) w_i64(b, t->dims[k]);
      init_slot[v] = b->len;
      w_u64(b, 0); /* offset, patched */
      w_u64(b, nnp_tensor_nbytes(t));
    }
  }
  nnp_status s = NNP_OK;
  for (int i = 0; i < g->n_nodes && s == NNP_OK; i++) {
    const nnp_node *n = &g->nodes[i];
    w_str(b, n->name);
    w_str(b, n->op_type);
    w_str(b, n->domain);
    w_u32(b, (uint32_t)n->n_inputs);
    for (int k = 0; k < n->n_inputs; k++) w_i32(b, n->inputs[k]);
    w_u32(b, (uint32_t)n->n_outputs);
    for (int k = 0; k < n->n_outputs; k++) w_i32(b, n->outputs[k]);
    w_u32(b, (uint32_t)n->n_attrs);
    for (int a = 0; a < n->n_attrs && s == NNP_OK; a++) s = w_attr(b, &n->attrs[a]);
  }
  for (int k = 0; k < g->n_inputs; k++) w_i32(b, g->inputs[k]);
  for (int k = 0; k < g->n_outputs; k++) w_i32(b, g->outputs[k]);
  size_t body_len = b->len - body_off;
  w_pad(b, DATA_ALIGN);
  size_t data_off = b->len;
  for (int v = 0; v < g->n_values && s == NNP_OK && !b->fail; v++) {
    if (!init_slot[v]) continue;
    w_pad(b, DATA_ALIGN);
    uint64_t off = b->len;
    const nnp_tensor *t = g->values[v].init;
    w_bytes(b, t->data, nnp_tensor_nbytes(t));
    if (!b->fail) memcpy(b->p + init_slot[v], &off, 8);
  }
  nnp_free(init_slot);
  if (s != NNP_OK) return s;
  if (b->fail) return nnp_error(NNP_ERR_NOMEM, "out of memory writing the plan cache");
  unsigned char *h = b->p;
  memcpy(h, MAGIC, 8);
  uint32_t u32 = NNP_PLAN_CACHE_FORMAT;
  memcpy(h + 8, &u32, 4);
  u32 = HDR_SIZE;
  memcpy(h + 12, &u32, 4);
  uint64_t u64 = b->len;
  memcpy(h + 16, &u64, 8);
  snprintf((char *)h + 32, 32, "%s", NNP_VERSION);
  u32 = (uint32_t)strlen(key);
  memcpy(h + 64, &u32, 4);
  u64 = body_off;
  memcpy(h + 72, &u64, 8);
  u64 = body_len;
  memcpy(h + 80, &u64, 8);
  u64 = data_off;
  memcpy(h + 88, &u64, 8);
  u64 = image_checksum(h, b->len);
  memcpy(h + HDR_CHECKSUM, &u64, 8);
  return NNP_OK;
}

nnp_status nnp_plan_cache_write(const char *path, const char *key, const nnp_graph *g) {
  wbuf b = {0};
  nnp_status s = build_image(key, g, &b);
  if (s == NNP_OK) {
    nnp_atomic_file af;
    s = nnp_atomic_open(&af, path);
    if (s == NNP_OK) {
      if (fwrite(b.p, 1, b.len, af.f) != b.len) {
        nnp_atomic_abort(&af);
        s = nnp_error(NNP_ERR_IO, "cannot write %s", path);
      } else
        s = nnp_atomic_commit(&af);
    }
  }
  nnp_free(b.p);
  return s;
}

/* ---- reader ---- */

typedef struct rd {
  const unsigned char *p, *end;
  const char *why; /* first failure */
} rd;

static bool need(rd *r, size_t n) {
  if (r->why) return false;
  if ((size_t)(r->end - r->p) < n) {
    r->why = "truncated body";
    return false;
  }
  return true;
}
static uint8_t r_u8(rd *r) { return need(r, 1) ? *r->p++ : 0; }
#define R_SCALAR(name, T)            \
  static T name(rd *r) {             \
    T v = 0;                         \
    if (need(r, sizeof v)) {         \
      memcpy(&v, r->p, sizeof v);    \
      r->p += sizeof v;              \
    }                                \
    return v;                        \
  }
R_SCALAR(r_u32, uint32_t)
R_SCALAR(r_i32, int32_t)
R_SCALAR(r_u64, uint64_t)
R_SCALAR(r_i64, int64_t)
R_SCALAR(r_f32, float)

/* A NUL-terminated copy (nnp_malloc), NULL for the null string; *ok false on failure. */
static char *r_str(rd *r, bool *ok) {
  uint32_t n = r_u32(r);
  if (r->why || n == STR_NULL) return NULL;
  if (!need(r, n)) {
    *ok = false;
    return NULL;
  }
  char *s = nnp_malloc((size_t)n + 1);
  if (!s) {
    r->why = "out of memory";
    *ok = false;
    return NULL;
  }
  memcpy(s, r->p, n);
  s[n] = 0;
  r->p += n;
  if (memchr(s, 0, n)) {
    r->why = "string with a NUL byte";
    nnp_free(s);
    *ok = false;
    return NULL;
  }
  return s;
}

/* dtype, rank, dims of a tensor; NNP_OK-style bool */
static bool r_shape(rd *r, nnp_tensor *t) {
  t->dtype = (nnp_dtype)r_i32(r);
  t->rank = r_i32(r);
  if (r->why) return false;
  if (t->rank < 0 || t->rank > NNP_MAX_RANK || nnp_dtype_size(t->dtype) == 0) {
    r->why = "bad tensor dtype or rank";
    return false;
  }
  for (int k = 0; k < t->rank; k++) t->dims[k] = r_i64(r);
  size_t nb;
  if (r->why) return false;
  if (nnp_shape_nbytes(t->dtype, t->rank, t->dims, &nb) != NNP_OK) {
    r->why = "bad tensor shape";
    return false;
  }
  return true;
}

static bool r_tensor_inline(rd *r, nnp_tensor *t) {
  if (!r_shape(r, t)) return false;
  uint64_t nb = r_u64(r);
  if (r->why) return false;
  if (nb != nnp_tensor_nbytes(t)) {
    r->why = "tensor size does not match its shape";
    return false;
  }
  if (!need(r, (size_t)nb)) return false;
  if (nnp_tensor_alloc(t) != NNP_OK) {
    r->why = "out of memory";
    return false;
  }
  memcpy(t->data, r->p, (size_t)nb);
  r->p += nb;
  return true;
}

/* An element count that fits in the bytes left at elem bytes each. */
static bool r_count(rd *r, size_t elem, uint64_t *n) {
  *n = r_u64(r);
  if (r->why) return false;
  if (*n > (uint64_t)(r->end - r->p) / elem) {
    r->why = "count larger than the file";
    return false;
  }
  return true;
}

static bool r_attr(rd *r, nnp_node *n) {
  bool ok = true;
  char *name = r_str(r, &ok);
  if (!name) {
    if (!r->why) r->why = "attribute without a name";
    return false;
  }
  nnp_attr *a;
  nnp_status st = nnp_node_add_attr(n, name, &a);
  nnp_free(name);
  if (st != NNP_OK) {
    r->why = "out of memory";
    return false;
  }
  a->type = (nnp_attr_type)r_u32(r);
  uint64_t c;
  switch (a->type) {
  case NNP_ATTR_FLOAT: a->f = r_f32(r); break;
  case NNP_ATTR_INT: a->i = r_i64(r); break;
  case NNP_ATTR_STRING:
    if (!r_count(r, 1, &c)) return false;
    a->s = nnp_malloc((size_t)c + 1);
    if (!a->s) return r->why = "out of memory", false;
    memcpy(a->s, r->p, (size_t)c);
    a->s[c] = 0;
    a->s_len = (size_t)c;
    r->p += c;
    break;
  case NNP_ATTR_FLOATS:
    if (!r_count(r, sizeof(float), &c)) return false;
    a->floats = nnp_malloc(sizeof(float) * (size_t)(c ? c : 1));
    if (!a->floats) return r->why = "out of memory", false;
    memcpy(a->floats, r->p, sizeof(float) * (size_t)c);
    r->p += sizeof(float) * c;
    a->count = (size_t)c;
    break;
  case NNP_ATTR_INTS:
    if (!r_count(r, sizeof(int64_t), &c)) return false;
    a->ints = nnp_malloc(sizeof(int64_t) * (size_t)(c ? c : 1));
    if (!a->ints) return r->why = "out of memory", false;
    memcpy(a->ints, r->p, sizeof(int64_t) * (size_t)c);
    r->p += sizeof(int64_t) * c;
    a->count = (size_t)c;
    break;
  case NNP_ATTR_STRINGS:
    if (!r_count(r, 4, &c)) return false;
    a->strings = nnp_calloc((size_t)(c ? c : 1), sizeof(char *));
    if (!a->strings) return r->why = "out of memory", false;
    a->count = (size_t)c;
    for (size_t k = 0; k < c; k++) {
      a->strings[k] = r_str(r, &ok);
      if (r->why) return false;
      if (!a->strings[k]) return r->why = "null string in a strings attribute", false;
    }
    break;
  case NNP_ATTR_TENSOR:
  case NNP_ATTR_TENSORS:
    if (!r_count(r, 16, &c)) return false; /* an inline tensor takes at least 16 bytes */
    if (a->type == NNP_ATTR_TENSOR && c != 1) return r->why = "tensor attribute without one tensor", false;
    a->tensor = nnp_calloc((size_t)(c ? c : 1), sizeof(nnp_tensor));
    if (!a->tensor) return r->why = "out of memory", false;
    a->count = a->type == NNP_ATTR_TENSORS ? (size_t)c : 0;
    for (size_t k = 0; k < c; k++)
      if (!r_tensor_inline(r, &a->tensor[k])) return false;
    break;
  default: r->why = "unknown attribute type"; return false;
  }
  return !r->why;
}

/* Op id of a node read back: ONNX ops by name, internal ops by the internal table. */
static int resolve_op(const char *domain, const char *op_type) {
  if (domain && !strcmp(domain, NNP_INTERNAL_DOMAIN)) {
    for (int op = NNP_OP_COUNT; op < NNP_OP_INTERNAL_END; op++) {
      const nnp_op_info *info = nnp_op_get(op);
      if (info && !strcmp(info->name, op_type)) return op;
    }
    return NNP_OP_UNKNOWN;
  }
  return nnp_op_lookup(domain, op_type);
}

static bool r_index_list(rd *r, int n_values, bool allow_missing, int **out, uint32_t *count) {
  *count = r_u32(r);
  if (r->why) return false;
  if (*count > (uint32_t)((r->end - r->p) / 4)) return r->why = "index count larger than the file", false;
  int *v = nnp_malloc(sizeof(int) * (*count ? *count : 1));
  if (!v) return r->why = "out of memory", false;
  for (uint32_t k = 0; k < *count; k++) {
    v[k] = r_i32(r);
    if (v[k] >= n_values || v[k] < (allow_missing ? -1 : 0)) {
      nnp_free(v);
      return r->why = "value index out of range", false;
    }
  }
  *out = v;
  return true;
}

static const char *parse_body(rd *r, const unsigned char *buf, size_t len, size_t data_off, nnp_graph *g) {
  bool ok = true;
  g->name = r_str(r, &ok);
  g->producer = r_str(r, &ok);
  g->ir_version = r_i64(r);
  g->opset = r_i64(r);
  uint32_t n_values = r_u32(r), n_nodes = r_u32(r), n_inputs = r_u32(r), n_outputs = r_u32(r);
  if (r->why) return r->why;
  size_t left = (size_t)(r->end - r->p);
  /* each value takes >= 15 bytes, each node >= 24, each input/output 4: bounds the counts */
  if (n_values > left / 15 || n_nodes > left / 24 || n_inputs > left / 4 || n_outputs > left / 4)
    return "counts larger than the file";
  for (uint32_t v = 0; v < n_values; v++) {
    char *name = r_str(r, &ok);
    if (!name) return r->why ? r->why : "value without a name";
    int idx;
    nnp_status st = nnp_graph_value(g, name, &idx);
    nnp_free(name);
    if (st != NNP_OK) return "out of memory";
    if ((uint32_t)idx != v) return "duplicate value name";
    nnp_value *val = &g->values[idx];
    uint8_t kind = r_u8(r);
    val->is_output = r_u8(r) != 0;
    val->dtype = (nnp_dtype)r_i32(r);
    val->rank = r_i32(r);
    if (r->why) return r->why;
    if (kind > NNP_VALUE_INITIALIZER) return "bad value kind";
    val->kind = (nnp_value_kind)kind;
    if (val->rank < -1 || val->rank > NNP_MAX_RANK) return "bad value rank";
    for (int k = 0; k < val->rank; k++) {
      val->dims[k].value = r_i64(r);
      val->dims[k].symbol = r_str(r, &ok);
      if (r->why) return r->why;
    }
    uint8_t has_init = r_u8(r);
    if (r->why) return r->why;
    if (has_init > 1) return "bad initializer flag";
    if (has_init) {
      nnp_tensor t = {0};
      if (!r_shape(r, &t)) return r->why;
      uint64_t off = r_u64(r), nb = r_u64(r);
      if (r->why) return r->why;
      if (nb != nnp_tensor_nbytes(&t)) return "initializer size does not match its shape";
      if (off < data_off || off % DATA_ALIGN || off > len || nb > len - off) return "initializer data out of bounds";
      val->init = nnp_calloc(1, sizeof *val->init);
      if (!val->init) return "out of memory";
      *val->init = t;
      val->init->data = (void *)(buf + off); /* borrowed from the mapping, read only */
    }
  }
  for (uint32_t i = 0; i < n_nodes; i++) {
    char *name = r_str(r, &ok), *op_type = r_str(r, &ok), *domain = r_str(r, &ok);
    int *ins = NULL, *outs = NULL;
    uint32_t ni = 0, no = 0;
    bool good = !r->why && op_type && r_index_list(r, (int)n_values, true, &ins, &ni) &&
                r_index_list(r, (int)n_values, true, &outs, &no);
    int idx = -1;
    if (good && nnp_graph_add_node(g, name ? name : "", op_type, domain ? domain : "", (int)ni, ins, (int)no,
                                   outs, &idx) != NNP_OK)
      r->why = "out of memory";
    if (good && !r->why) g->nodes[idx].op = resolve_op(domain, op_type);
    if (!r->why && !op_type) r->why = "node without an op type";
    nnp_free(name);
    nnp_free(op_type);
    nnp_free(domain);
    nnp_free(ins);
    nnp_free(outs);
    if (r->why) return r->why;
    uint32_t na = r_u32(r);
    if (r->why) return r->why;
    if (na > (uint32_t)((r->end - r->p) / 8)) return "attribute count larger than the file";
    for (uint32_t a = 0; a < na; a++)
      if (!r_attr(r, &g->nodes[idx])) return r->why ? r->why : "bad attribute";
  }
  for (uint32_t k = 0; k < n_inputs; k++) {
    int32_t v = r_i32(r);
    if (r->why) return r->why;
    if (v < 0 || (uint32_t)v >= n_values) return "graph input index out of range";
    if (nnp_graph_add_input(g, v) != NNP_OK) return "out of memory";
    g->values[v].kind = NNP_VALUE_INPUT;
  }
  for (uint32_t k = 0; k < n_outputs; k++) {
    int32_t v = r_i32(r);
    if (r->why) return r->why;
    if (v < 0 || (uint32_t)v >= n_values) return "graph output index out of range";
    if (nnp_graph_add_output(g, v) != NNP_OK) return "out of memory";
  }
  if (r->p != r->end) return "bytes left after the body";
  return NULL;
}

void nnp_plan_cache_graph_destroy(nnp_graph *g, const void *buf, size_t len) {
  if (!g) return;
  const unsigned char *lo = buf, *hi = lo + len;
  for (int v = 0; v < g->n_values; v++) {
    nnp_tensor *t = g->values[v].init;
    if (t && (const unsigned char *)t->data >= lo && (const unsigned char *)t->data <= hi) t->data = NULL;
  }
  nnp_graph_destroy(g);
}

nnp_status nnp_plan_cache_parse(const void *buf, size_t len, const char *key, nnp_graph **out) {
  *out = NULL;
  const unsigned char *b = buf;
  if (len < HDR_SIZE) return nnp_error(NNP_ERR_FORMAT, "truncated header (%zu bytes)", len);
  if (memcmp(b, MAGIC, 8)) return nnp_error(NNP_ERR_FORMAT, "not a plan cache file (bad magic)");
  uint32_t format, hdr_size, key_len;
  uint64_t file_size, checksum, body_off, body_len, data_off;
  memcpy(&format, b + 8, 4);
  memcpy(&hdr_size, b + 12, 4);
  memcpy(&file_size, b + 16, 8);
  memcpy(&checksum, b + HDR_CHECKSUM, 8);
  memcpy(&key_len, b + 64, 4);
  memcpy(&body_off, b + 72, 8);
  memcpy(&body_len, b + 80, 8);
  memcpy(&data_off, b + 88, 8);
  if (format != NNP_PLAN_CACHE_FORMAT)
    return nnp_error(NNP_ERR_FORMAT, "format version %u, this nnperf reads %d", format, NNP_PLAN_CACHE_FORMAT);
  char version[33];
  memcpy(version, b + 32, 32);
  version[32] = 0;
  if (strcmp(version, NNP_VERSION))
    return nnp_error(NNP_ERR_FORMAT, "written by nnperf %.32s, this is %s", version, NNP_VERSION);
  if (hdr_size != HDR_SIZE) return nnp_error(NNP_ERR_FORMAT, "bad header size %u", hdr_size);
  if (file_size != len)
    return nnp_error(NNP_ERR_FORMAT, "truncated or extended: %zu bytes, header says %llu", len,
                     (unsigned long long)file_size);
  if (image_checksum(b, len) != checksum) return nnp_error(NNP_ERR_FORMAT, "checksum mismatch");
  if (key_len > len - HDR_SIZE) return nnp_error(NNP_ERR_FORMAT, "key longer than the file");
  if (key && (strlen(key) != key_len || memcmp(b + HDR_SIZE, key, key_len)))
    return nnp_error(NNP_ERR_FORMAT, "key differs: built for another model, shape, option set or CPU");
  if (body_off < HDR_SIZE + (uint64_t)key_len || body_off > len || body_len > len - body_off ||
      data_off < body_off + body_len || data_off > len)
    return nnp_error(NNP_ERR_FORMAT, "section offsets out of bounds");
  nnp_graph *g;
  NNP_TRY(nnp_graph_create(&g));
  rd r = {b + body_off, b + body_off + body_len, NULL};
  const char *why = parse_body(&r, b, len, (size_t)data_off, g);
  if (!why && nnp_graph_toposort(g) != NNP_OK) why = "graph does not sort (cycle or undefined input)";
  for (int i = 0; !why && i < g->n_nodes; i++)
    if (!nnp_op_get(g->nodes[i].op)) why = "node with an op this nnperf does not know";
  if (why) {
    nnp_plan_cache_graph_destroy(g, buf, len);
    return nnp_error(NNP_ERR_FORMAT, "%s", why);
  }
  *out = g;
  return NNP_OK;
}

/* ---- compile through the cache ---- */

void nnp_cached_plan_destroy(nnp_cached_plan *cp) {
  if (!cp) return;
  nnp_plan_destroy(cp->plan);
  if (cp->map) {
    nnp_plan_cache_graph_destroy(cp->graph, cp->map, cp->map_len);
    munmap(cp->map, cp->map_len);
  } else
    nnp_graph_destroy(cp->graph);
  memset(cp, 0, sizeof *cp);
}

/* Maps path; NNP_ERR_IO when absent or unreadable (a plain miss). */
static nnp_status map_file(const char *path, void **map, size_t *len) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nnp_error(NNP_ERR_IO, "cannot open %s: %s", path, strerror(errno));
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    close(fd);
    return nnp_error(NNP_ERR_FORMAT, "not a regular file");
  }
  if (sb.st_size == 0) {
    close(fd);
    return nnp_error(NNP_ERR_FORMAT, "empty file");
  }
  /* MAP_POPULATE: the checksum reads every page right away anyway; one populate call
   * is cheaper than a page fault per 4 KiB */
  void *m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return nnp_error(NNP_ERR_IO, "cannot map %s: %s", path, strerror(errno));
  *map = m;
  *len = (size_t)sb.st_size;
  return NNP_OK;
}

static nnp_status compile_from_model(const char *model_path, const nnp_plan_options *opt, nnp_cached_plan *out) {
  NNP_TRY(nnp_onnx_load(model_path, NULL, &out->graph));
  nnp_status s = nnp_plan_compile(out->graph, opt, &out->plan);
  if (s != NNP_OK) {
    nnp_graph_destroy(out->graph);
    out->graph = NULL;
  }
  return s;
}

nnp_status nnp_plan_cache_compile(const char *dir, const char *model_path, const nnp_plan_options *opt,
                                  nnp_cached_plan *out) {
  memset(out, 0, sizeof *out);
  char key[NNP_PLAN_CACHE_KEY_MAX];
  if (!dir || !dir[0] || nnp_plan_cache_key(model_path, opt, key, sizeof key) != NNP_OK ||
      nnp_plan_cache_path(dir, key, out->path, sizeof out->path) != NNP_OK) {
    out->path[0] = 0;
    return compile_from_model(model_path, opt, out);
  }
  void *map = NULL;
  size_t len = 0;
  nnp_status s = map_file(out->path, &map, &len);
  out->outcome = NNP_PLAN_CACHE_WRITTEN;
  if (s == NNP_OK) {
    s = nnp_plan_cache_parse(map, len, key, &out->graph);
    if (s == NNP_OK) {
      nnp_plan_options o = *opt;
      o.passes = 0; /* the cached graph is the graph after the passes */
      out->map = map;
      out->map_len = len;
      s = nnp_plan_compile(out->graph, &o, &out->plan);
      if (s == NNP_OK) {
        out->outcome = NNP_PLAN_CACHE_HIT;
        return NNP_OK;
      }
      nnp_plan_cache_graph_destroy(out->graph, map, len);
      out->graph = NULL;
      out->map = NULL;
    }
    munmap(map, len);
  }
  if (s != NNP_OK && (s != NNP_ERR_IO || map)) {
    snprintf(out->reason, sizeof out->reason, "%s", nnp_last_error());
    fprintf(stderr, "nnperf: plan cache %s is corrupt (%s); rebuilding\n", out->path, out->reason);
    out->outcome = NNP_PLAN_CACHE_REBUILT;
  }
  NNP_TRY(compile_from_model(model_path, opt, out));
  mkdir(dir, 0777); /* the folder may exist already: the write below reports real failures */
  if (nnp_plan_cache_write(out->path, key, nnp_plan_graph(out->plan)) != NNP_OK)
    fprintf(stderr, "nnperf: warning: plan cache %s not written (%s)\n", out->path, nnp_last_error());
  return NNP_OK;
}
