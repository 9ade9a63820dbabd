#include "bench/protocol.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nnperf/alloc.h"

void nnp_proto_reader_init(nnp_proto_reader *r, size_t max_payload) {
  memset(r, 0, sizeof *r);
  r->max_payload = max_payload;
}

void nnp_proto_reader_free(nnp_proto_reader *r) {
  nnp_free(r->buf);
  memset(r, 0, sizeof *r);
}

nnp_status nnp_proto_feed(nnp_proto_reader *r, const void *data, size_t n) {
  if (r->pos > 0 && r->pos == r->len) r->pos = r->len = 0;
  if (r->pos > (1 << 20) && r->pos > r->len / 2) { /* compact consumed bytes away */
    memmove(r->buf, r->buf + r->pos, r->len - r->pos);
    r->len -= r->pos;
    r->pos = 0;
  }
  if (r->len + n + 1 > r->cap) {
    size_t ncap = r->cap ? r->cap : 65536;
    while (ncap < r->len + n + 1) ncap *= 2;
    char *nb = nnp_realloc(r->buf, ncap);
    if (!nb) return nnp_error(NNP_ERR_NOMEM, "out of memory reading worker protocol");
    r->buf = nb;
    r->cap = ncap;
  }
  memcpy(r->buf + r->len, data, n);
  r->len += n;
  return NNP_OK;
}

int nnp_proto_split(char *line, char **tok, int max) {
  int n = 0;
  char *p = line;
  while (*p && n < max) {
    while (*p == ' ' || *p == '\t') p++;
    if (!*p) break;
    tok[n++] = p;
    while (*p && *p != ' ' && *p != '\t') p++;
    if (*p) *p++ = 0;
  }
  return n;
}

static int parse_i64(const char *s, int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || end == s || *end) return 0;
  *out = v;
  return 1;
}

/* Parses the header after "tensor " in hdr (modified in place). */
static int parse_tensor_header(char *hdr, nnp_proto_msg *m, size_t *nbytes, size_t max_payload) {
  char *tok[4 + NNP_MAX_RANK + 2];
  /* TAG INDEX DTYPE RANK dims... NBYTES NAME(rest) */
  char *p = hdr;
  int n = 0;
  while (n < 4) {
    while (*p == ' ') p++;
    if (!*p) break;
    tok[n++] = p;
    while (*p && *p != ' ') p++;
    if (*p) *p++ = 0;
  }
  if (n < 4) return nnp_error(NNP_ERR_FORMAT, "worker protocol: tensor header is too short"), 0;
  int64_t index, dtype, rank;
  if (strlen(tok[0]) >= sizeof m->tag || !parse_i64(tok[1], &index) || !parse_i64(tok[2], &dtype) ||
      !parse_i64(tok[3], &rank) || index < 0 || index > 100000 || rank < 0 || rank > NNP_MAX_RANK)
    return nnp_error(NNP_ERR_FORMAT, "worker protocol: malformed tensor header"), 0;
  strcpy(m->tag, tok[0]);
  m->index = (int)index;
  memset(&m->tensor, 0, sizeof m->tensor);
  m->tensor.dtype = (nnp_dtype)dtype;
  m->tensor.rank = (int)rank;
  for (int d = 0; d <= rank; d++) { /* dims, then NBYTES */
    while (*p == ' ') p++;
    char *t = p;
    while (*p && *p != ' ') p++;
    if (*p) *p++ = 0;
    int64_t v;
    if (!parse_i64(t, &v) || v < 0) return nnp_error(NNP_ERR_FORMAT, "worker protocol: malformed tensor dims"), 0;
    if (d < rank) m->tensor.dims[d] = v;
    else *nbytes = (size_t)v;
  }
  while (*p == ' ') p++;
  m->name = p;
  size_t want;
  if (nnp_shape_nbytes(m->tensor.dtype, m->tensor.rank, m->tensor.dims, &want) != NNP_OK) return 0;
  if (want != *nbytes)
    return nnp_error(NNP_ERR_FORMAT, "worker protocol: tensor says %zu bytes, its shape needs %zu", *nbytes, want), 0;
  if (want > max_payload)
    return nnp_error(NNP_ERR_LIMIT, "worker protocol: tensor of %zu bytes exceeds the %zu-byte limit", want, max_payload), 0;
  return 1;
}

int nnp_proto_next(nnp_proto_reader *r, nnp_proto_msg *m) {
  memset(m, 0, sizeof *m);
  char *start = r->buf ? r->buf + r->pos : NULL;
  size_t avail = r->len - r->pos;
  if (!avail) return 0;
  char *nl = memchr(start, '\n', avail);
  if (!nl) {
    if (avail > NNP_PROTO_MAX_LINE) {
      nnp_error(NNP_ERR_FORMAT, "worker protocol: line longer than %d bytes", NNP_PROTO_MAX_LINE);
      return -1;
    }
    return 0;
  }
  size_t line_len = (size_t)(nl - start);
  if (line_len > NNP_PROTO_MAX_LINE) {
    nnp_error(NNP_ERR_FORMAT, "worker protocol: line longer than %d bytes", NNP_PROTO_MAX_LINE);
    return -1;
  }
  if (line_len >= 7 && !memcmp(start, "tensor ", 7)) {
    /* parse a copy of the header first: the payload may not have arrived yet */
    char hdr[NNP_PROTO_MAX_LINE + 1];
    memcpy(hdr, start + 7, line_len - 7);
    hdr[line_len - 7] = 0;
    size_t nbytes = 0;
    if (!parse_tensor_header(hdr, m, &nbytes, r->max_payload)) return -1;
    if (avail - line_len - 1 < nbytes) return 0;
    *nl = 0;
    m->line = start;
    m->is_tensor = 1;
    m->name = start + 7 + (m->name - hdr);
    m->tensor.data = nl + 1;
    r->pos += line_len + 1 + nbytes;
    return 1;
  }
  *nl = 0;
  if (line_len && start[line_len - 1] == '\r') start[line_len - 1] = 0;
  m->line = start;
  r->pos += line_len + 1;
  return 1;
}

int nnp_proto_write_tensor(FILE *f, const char *tag, int index, const char *name, const nnp_tensor *t) {
  size_t nb = nnp_tensor_nbytes(t);
  fprintf(f, "tensor %s %d %d %d", tag, index, (int)t->dtype, t->rank);
  for (int d = 0; d < t->rank; d++) fprintf(f, " %lld", (long long)t->dims[d]);
  fprintf(f, " %zu %s\n", nb, name ? name : "");
  return nb == 0 || fwrite(t->data, 1, nb, f) == nb;
}
