/* TensorProto -> nnp_tensor: typed fields, raw_data, confined external data. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nnperf/alloc.h"
#include "onnx/onnx_internal.h"

/* protobuf-c reports an allocation failure like a parse error (NULL): remember it, so
 * callers can say "out of memory" instead of "corrupt file". */
static _Thread_local int pb_alloc_failed;

static void *pb_alloc(void *ud, size_t n) {
  (void)ud;
  void *p = nnp_malloc(n);
  if (!p) pb_alloc_failed = 1;
  return p;
}

void nnp_protobuf_alloc_reset(void) { pb_alloc_failed = 0; }
int nnp_protobuf_alloc_failed(void) { return pb_alloc_failed; }
static void pb_free(void *ud, void *p) {
  (void)ud;
  nnp_free(p);
}
ProtobufCAllocator nnp_protobuf_allocator = {pb_alloc, pb_free, NULL};

/* Resolves `location` inside base_dir, refusing anything that could leave it. */
static nnp_status confined_path(const char *base_dir, const char *location, const char *what,
                                char *out, size_t out_size) {
  if (!base_dir)
    return nnp_error(NNP_ERR_INVALID, "%s uses external data, which is not allowed here", what);
  if (!location || !location[0])
    return nnp_error(NNP_ERR_FORMAT, "%s has external data without a location", what);
  if (location[0] == '/')
    return nnp_error(NNP_ERR_INVALID, "%s: external data path '%s' is absolute; it must be relative to the model's folder",
                     what, location);
  for (const char *p = location; *p;) {
    const char *e = strchr(p, '/');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == 2 && p[0] == '.' && p[1] == '.')
      return nnp_error(NNP_ERR_INVALID, "%s: external data path '%s' leaves the model's folder ('..')",
                       what, location);
    if (!e) break;
    p = e + 1;
  }
  char joined[PATH_MAX];
  if ((size_t)snprintf(joined, sizeof joined, "%s/%s", base_dir, location) >= sizeof joined)
    return nnp_error(NNP_ERR_LIMIT, "%s: external data path is too long", what);
  char real_base[PATH_MAX], real_file[PATH_MAX];
  if (!realpath(base_dir, real_base))
    return nnp_error(NNP_ERR_IO, "cannot resolve model folder '%s': %s", base_dir, strerror(errno));
  if (!realpath(joined, real_file))
    return nnp_error(NNP_ERR_IO, "%s: external data file '%s' not found: %s", what, joined, strerror(errno));
  size_t nb = strlen(real_base);
  if (strncmp(real_file, real_base, nb) != 0 || (real_file[nb] != '/' && real_base[nb - 1] != '/'))
    return nnp_error(NNP_ERR_INVALID, "%s: external data '%s' resolves to '%s', outside the model's folder",
                     what, location, real_file);
  if (strlen(real_file) >= out_size) return nnp_error(NNP_ERR_LIMIT, "%s: path too long", what);
  strcpy(out, real_file);
  return NNP_OK;
}

static nnp_status parse_u64(const char *s, const char *key, const char *what, uint64_t *out) {
  if (!s || !*s) return nnp_error(NNP_ERR_FORMAT, "%s: external data '%s' is empty", what, key);
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end || s[0] == '-')
    return nnp_error(NNP_ERR_FORMAT, "%s: external data '%s' = '%s' is not a byte count", what, key, s);
  *out = v;
  return NNP_OK;
}

static nnp_status read_external(const Onnx__TensorProto *tp, const char *base_dir, const char *what,
                                nnp_tensor *t, size_t nbytes) {
  const char *location = NULL;
  uint64_t offset = 0, length = nbytes;
  int has_length = 0;
  for (size_t i = 0; i < tp->n_external_data; i++) {
    const Onnx__StringStringEntryProto *kv = tp->external_data[i];
    if (!kv->key) continue;
    if (strcmp(kv->key, "location") == 0) location = kv->value;
    else if (strcmp(kv->key, "offset") == 0) NNP_TRY(parse_u64(kv->value, "offset", what, &offset));
    else if (strcmp(kv->key, "length") == 0) {
      NNP_TRY(parse_u64(kv->value, "length", what, &length));
      has_length = 1;
    }
  }
  if (has_length && length != nbytes)
    return nnp_error(NNP_ERR_FORMAT, "%s: external data length %llu does not match its shape (%zu bytes)",
                     what, (unsigned long long)length, nbytes);
  char path[PATH_MAX];
  NNP_TRY(confined_path(base_dir, location, what, path, sizeof path));
  nnp_status err = NNP_OK;
  int odd = 0;
  FILE *f = nnp_open_regular(path, &err, &odd);
  /* the model names the file: one that is not a plain file is the model's fault */
  if (!f) return nnp_error_context(odd ? NNP_ERR_FORMAT : err, "%s: external data", what);
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || (uint64_t)st.st_size < offset || (uint64_t)st.st_size - offset < nbytes) {
    fclose(f);
    return nnp_error(NNP_ERR_FORMAT, "%s: external data file '%s' is too small for offset %llu + %zu bytes",
                     what, path, (unsigned long long)offset, nbytes);
  }
  nnp_status s = NNP_OK;
  if (fseeko(f, (off_t)offset, SEEK_SET) != 0 || (nbytes && fread(t->data, 1, nbytes, f) != nbytes))
    s = nnp_error(NNP_ERR_IO, "%s: short read on external data '%s'", what, path);
  fclose(f);
  return s;
}

#define COPY_FIELD(field, count, ctype)                                   \
  do {                                                                    \
    if ((int64_t)(count) != numel) goto count_mismatch;                   \
    for (int64_t k = 0; k < numel; k++) ((ctype *)t.data)[k] = (ctype)tp->field[k]; \
  } while (0)

nnp_status nnp_onnx_tensor_from_proto(const Onnx__TensorProto *tp, const char *base_dir,
                                      const char *what, nnp_tensor *out) {
  nnp_tensor t = {0};
  if (tp->n_dims > NNP_MAX_RANK)
    return nnp_error(NNP_ERR_LIMIT, "%s has rank %zu; nnperf supports up to %d", what, tp->n_dims, NNP_MAX_RANK);
  t.rank = (int)tp->n_dims;
  for (int i = 0; i < t.rank; i++) {
    if (tp->dims[i] < 0)
      return nnp_error(NNP_ERR_FORMAT, "%s has negative dimension %lld", what, (long long)tp->dims[i]);
    t.dims[i] = tp->dims[i];
  }
  t.dtype = (nnp_dtype)tp->data_type;
  if (!tp->has_data_type || nnp_dtype_size(t.dtype) == 0)
    return nnp_error(NNP_ERR_UNSUPPORTED, "%s has data type %d, which nnperf does not support", what,
                     (int)tp->data_type);
  if (tp->segment) return nnp_error(NNP_ERR_UNSUPPORTED, "%s is segmented, which nnperf does not support", what);
  size_t nbytes;
  nnp_status s = nnp_shape_nbytes(t.dtype, t.rank, t.dims, &nbytes);
  if (s != NNP_OK) return nnp_error_context(s, "%s", what);
  int64_t numel = nnp_tensor_numel(&t);
  /* Check the data is there before allocating: a hostile file can declare huge dims. */
  int external = tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  if (!external && tp->has_raw_data && tp->raw_data.len != nbytes)
    return nnp_error(NNP_ERR_FORMAT, "%s: raw_data has %zu bytes, its shape needs %zu", what,
                     tp->raw_data.len, nbytes);
  if (external && !base_dir)
    return nnp_error(NNP_ERR_INVALID, "%s uses external data, which is not allowed here", what);
  if (!external && !tp->has_raw_data && numel > 0) {
    /* typed fields: the element count must match before a byte is allocated */
    size_t have = 0;
    switch (t.dtype) {
      case NNP_F32: have = tp->n_float_data; break;
      case NNP_F64: have = tp->n_double_data; break;
      case NNP_I64: have = tp->n_int64_data; break;
      case NNP_U64: case NNP_U32: have = tp->n_uint64_data; break;
      default: have = tp->n_int32_data; break;
    }
    if ((int64_t)have != numel) {
      return nnp_error(NNP_ERR_FORMAT, "%s: the number of elements in its data (%zu) does not match its shape (%lld)%s",
                       what, have, (long long)numel, have ? "" : ": it has no data");
    }
  }
  s = nnp_tensor_alloc(&t);
  if (s != NNP_OK) return nnp_error_context(s, "%s", what);
  if (external) {
    s = read_external(tp, base_dir, what, &t, nbytes);
    if (s != NNP_OK) {
      nnp_tensor_free(&t);
      return s;
    }
  } else if (tp->has_raw_data) {
    if (nbytes) memcpy(t.data, tp->raw_data.data, nbytes);
  } else if (numel > 0) {
    switch (t.dtype) {
      case NNP_F32: COPY_FIELD(float_data, tp->n_float_data, float); break;
      case NNP_F64: COPY_FIELD(double_data, tp->n_double_data, double); break;
      case NNP_I64: COPY_FIELD(int64_data, tp->n_int64_data, int64_t); break;
      case NNP_U64: COPY_FIELD(uint64_data, tp->n_uint64_data, uint64_t); break;
      case NNP_U32: COPY_FIELD(uint64_data, tp->n_uint64_data, uint32_t); break;
      case NNP_I32: COPY_FIELD(int32_data, tp->n_int32_data, int32_t); break;
      case NNP_I16: COPY_FIELD(int32_data, tp->n_int32_data, int16_t); break;
      case NNP_U16: case NNP_F16: case NNP_BF16: COPY_FIELD(int32_data, tp->n_int32_data, uint16_t); break;
      case NNP_I8: COPY_FIELD(int32_data, tp->n_int32_data, int8_t); break;
      case NNP_U8: COPY_FIELD(int32_data, tp->n_int32_data, uint8_t); break;
      case NNP_BOOL:
        if ((int64_t)tp->n_int32_data != numel) goto count_mismatch;
        for (int64_t k = 0; k < numel; k++) ((uint8_t *)t.data)[k] = tp->int32_data[k] != 0;
        break;
      default: goto count_mismatch;
    }
  }
  *out = t;
  return NNP_OK;
count_mismatch:
  nnp_tensor_free(&t);
  return nnp_error(NNP_ERR_FORMAT, "%s: its data holds a different number of elements than its shape (%lld)",
                   what, (long long)numel);
}

nnp_status nnp_onnx_parse_tensor(const void *data, size_t size, nnp_tensor *out, char **name_out) {
  nnp_protobuf_alloc_reset();
  Onnx__TensorProto *tp = onnx__tensor_proto__unpack(&nnp_protobuf_allocator, size, data);
  if (!tp && nnp_protobuf_alloc_failed()) return nnp_error(NNP_ERR_NOMEM, "out of memory parsing a TensorProto");
  if (!tp) return nnp_error(NNP_ERR_FORMAT, "not a valid serialized TensorProto (protobuf parse failed)");
  nnp_status s = nnp_onnx_tensor_from_proto(tp, NULL, "tensor", out);
  if (s == NNP_OK && name_out) {
    *name_out = nnp_strdup(tp->name ? tp->name : "");
    if (!*name_out) {
      nnp_tensor_free(out);
      s = nnp_error(NNP_ERR_NOMEM, "out of memory");
    }
  }
  onnx__tensor_proto__free_unpacked(tp, &nnp_protobuf_allocator);
  return s;
}

nnp_status nnp_onnx_read_tensor(const char *path, nnp_tensor *out, char **name_out) {
  void *buf = NULL;
  size_t n = 0;
  NNP_TRY(nnp_read_file(path, (size_t)1 << 31, &buf, &n));
  nnp_status s = nnp_onnx_parse_tensor(buf, n, out, name_out);
  nnp_free(buf);
  if (s != NNP_OK) return nnp_error_context(s, "%s", path);
  return NNP_OK;
}
