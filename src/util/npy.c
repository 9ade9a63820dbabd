#include "nnperf/npy.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnperf/alloc.h"
#include "util/regular_file.h" /* nnp_read_file */
#include "util/atomic_file.h"

static const struct {
  const char *descr;
  nnp_dtype dt;
} descrs[] = {{"<f4", NNP_F32}, {"<f8", NNP_F64}, {"<f2", NNP_F16}, {"<i8", NNP_I64}, {"<i4", NNP_I32},
              {"<i2", NNP_I16}, {"|i1", NNP_I8},  {"|u1", NNP_U8},  {"<u2", NNP_U16}, {"<u4", NNP_U32},
              {"<u8", NNP_U64}, {"|b1", NNP_BOOL}};

/* Finds 'key': in the header dict and returns a pointer just after the colon. */
static const char *dict_value(const char *h, const char *key) {
  char pat[32];
  snprintf(pat, sizeof pat, "'%s'", key);
  const char *p = strstr(h, pat);
  if (!p) return NULL;
  p += strlen(pat);
  while (*p == ' ') p++;
  if (*p != ':') return NULL;
  p++;
  while (*p == ' ') p++;
  return p;
}

nnp_status nnp_npy_parse(const void *data, size_t size, nnp_tensor *out) {
  const unsigned char *b = data;
  if (size < 10 || memcmp(b, "\x93NUMPY", 6) != 0)
    return nnp_error(NNP_ERR_FORMAT, "not a .npy file (bad magic)");
  int major = b[6];
  size_t hlen, hstart;
  if (major == 1) {
    hlen = (size_t)b[8] | (size_t)b[9] << 8;
    hstart = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) return nnp_error(NNP_ERR_FORMAT, ".npy header is truncated");
    hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
    hstart = 12;
  } else {
    return nnp_error(NNP_ERR_UNSUPPORTED, ".npy format version %d is not supported", major);
  }
  if (hlen > 65536 || hstart + hlen > size) return nnp_error(NNP_ERR_FORMAT, ".npy header is truncated");
  char h[65537];
  memcpy(h, b + hstart, hlen);
  h[hlen] = 0;
  const char *d = dict_value(h, "descr");
  if (!d || *d != '\'') return nnp_error(NNP_ERR_FORMAT, ".npy header has no 'descr'");
  nnp_tensor t = {0};
  for (size_t i = 0; i < sizeof descrs / sizeof *descrs; i++) {
    size_t n = strlen(descrs[i].descr);
    if (strncmp(d + 1, descrs[i].descr, n) == 0 && d[1 + n] == '\'') t.dtype = descrs[i].dt;
  }
  if (t.dtype == NNP_UNDEFINED) {
    const char *e = strchr(d + 1, '\'');
    int n = e ? (int)(e - d - 1) : 8;
    return nnp_error(NNP_ERR_UNSUPPORTED, ".npy dtype '%.*s' is not supported (use little-endian numeric types)",
                     n > 16 ? 16 : n, d + 1);
  }
  const char *f = dict_value(h, "fortran_order");
  if (!f) return nnp_error(NNP_ERR_FORMAT, ".npy header has no 'fortran_order'");
  if (strncmp(f, "True", 4) == 0)
    return nnp_error(NNP_ERR_UNSUPPORTED, ".npy arrays in Fortran order are not supported (save with C order)");
  const char *s = dict_value(h, "shape");
  if (!s || *s != '(') return nnp_error(NNP_ERR_FORMAT, ".npy header has no 'shape'");
  s++;
  for (;;) {
    while (*s == ' ' || *s == ',') s++;
    if (*s == ')') break;
    if (!isdigit((unsigned char)*s)) return nnp_error(NNP_ERR_FORMAT, ".npy shape is malformed");
    if (t.rank == NNP_MAX_RANK) return nnp_error(NNP_ERR_LIMIT, ".npy array has more than %d dimensions", NNP_MAX_RANK);
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno) return nnp_error(NNP_ERR_LIMIT, ".npy dimension is too large");
    t.dims[t.rank++] = v;
    s = end;
  }
  size_t nbytes;
  NNP_TRY(nnp_shape_nbytes(t.dtype, t.rank, t.dims, &nbytes));
  if (size - hstart - hlen != nbytes)
    return nnp_error(NNP_ERR_FORMAT, ".npy data is %zu bytes, its shape needs %zu", size - hstart - hlen, nbytes);
  NNP_TRY(nnp_tensor_alloc(&t));
  memcpy(t.data, b + hstart + hlen, nbytes);
  *out = t;
  return NNP_OK;
}

nnp_status nnp_npy_read(const char *path, nnp_tensor *out) {
  void *buf = NULL;
  size_t n = 0;
  NNP_TRY(nnp_read_file(path, NNP_TENSOR_MAX_BYTES, &buf, &n));
  nnp_status s = nnp_npy_parse(buf, n, out);
  nnp_free(buf);
  if (s != NNP_OK) return nnp_error_context(s, "%s", path);
  return NNP_OK;
}

nnp_status nnp_npy_write(const char *path, const nnp_tensor *t) {
  const char *descr = NULL;
  for (size_t i = 0; i < sizeof descrs / sizeof *descrs; i++)
    if (descrs[i].dt == t->dtype) descr = descrs[i].descr;
  if (!descr) return nnp_error(NNP_ERR_UNSUPPORTED, "cannot write %s tensors as .npy", nnp_dtype_name(t->dtype));
  char header[512];
  int n = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  for (int i = 0; i < t->rank; i++)
    n += snprintf(header + n, sizeof header - (size_t)n, "%lld%s", (long long)t->dims[i],
                  t->rank == 1 ? "," : (i + 1 < t->rank ? ", " : ""));
  n += snprintf(header + n, sizeof header - (size_t)n, "), }");
  /* pad with spaces so that data starts at a multiple of 64, header ends with '\n' */
  int total = 10 + n + 1;
  int pad = (64 - total % 64) % 64;
  nnp_atomic_file af;
  NNP_TRY(nnp_atomic_open(&af, path));
  FILE *f = af.f;
  unsigned hl = (unsigned)(n + pad + 1);
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hl & 0xff), (unsigned char)(hl >> 8)};
  int ok = fwrite(pre, 1, 10, f) == 10 && fwrite(header, 1, (size_t)n, f) == (size_t)n;
  for (int i = 0; i < pad && ok; i++) ok = fputc(' ', f) != EOF;
  ok = ok && fputc('\n', f) != EOF;
  size_t nb = nnp_tensor_nbytes(t);
  ok = ok && (nb == 0 || fwrite(t->data, 1, nb, f) == nb);
  if (!ok) {
    nnp_status s = nnp_error(NNP_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    nnp_atomic_abort(&af);
    return s;
  }
  return nnp_atomic_commit(&af);
}
