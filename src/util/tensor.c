#include "nnperf/tensor.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nnperf/alloc.h"

size_t nnp_dtype_size(nnp_dtype dt) {
  switch (dt) {
    case NNP_F32: case NNP_I32: case NNP_U32: return 4;
    case NNP_U8: case NNP_I8: case NNP_BOOL: return 1;
    case NNP_U16: case NNP_I16: case NNP_F16: case NNP_BF16: return 2;
    case NNP_I64: case NNP_F64: case NNP_U64: return 8;
    default: return 0;
  }
}

const char *nnp_dtype_name(nnp_dtype dt) {
  switch (dt) {
    case NNP_UNDEFINED: return "undefined";
    case NNP_F32: return "float32";
    case NNP_U8: return "uint8";
    case NNP_I8: return "int8";
    case NNP_U16: return "uint16";
    case NNP_I16: return "int16";
    case NNP_I32: return "int32";
    case NNP_I64: return "int64";
    case NNP_STRING: return "string";
    case NNP_BOOL: return "bool";
    case NNP_F16: return "float16";
    case NNP_F64: return "float64";
    case NNP_U32: return "uint32";
    case NNP_U64: return "uint64";
    case NNP_BF16: return "bfloat16";
  }
  return "unknown-dtype";
}

nnp_status nnp_shape_numel(int rank, const int64_t *dims, int64_t *out) {
  if (rank < 0 || rank > NNP_MAX_RANK)
    return nnp_error(NNP_ERR_LIMIT, "rank %d outside 0..%d", rank, NNP_MAX_RANK);
  int64_t n = 1;
  for (int i = 0; i < rank; i++) {
    if (dims[i] < 0) return nnp_error(NNP_ERR_SHAPE, "negative dimension %lld", (long long)dims[i]);
    if (dims[i] != 0 && n > INT64_MAX / dims[i])
      return nnp_error(NNP_ERR_LIMIT, "element count overflows int64");
    n *= dims[i];
  }
  *out = n;
  return NNP_OK;
}

nnp_status nnp_shape_nbytes(nnp_dtype dt, int rank, const int64_t *dims, size_t *out) {
  size_t es = nnp_dtype_size(dt);
  if (!es) return nnp_error(NNP_ERR_UNSUPPORTED, "tensor type %s is not supported", nnp_dtype_name(dt));
  int64_t n;
  NNP_TRY(nnp_shape_numel(rank, dims, &n));
  if ((uint64_t)n > NNP_TENSOR_MAX_BYTES / es)
    return nnp_error(NNP_ERR_LIMIT, "tensor of %lld elements exceeds the %llu-byte limit",
                     (long long)n, (unsigned long long)NNP_TENSOR_MAX_BYTES);
  *out = (size_t)n * es;
  return NNP_OK;
}

int64_t nnp_tensor_numel(const nnp_tensor *t) {
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++) n *= t->dims[i];
  return n;
}

size_t nnp_tensor_nbytes(const nnp_tensor *t) {
  return (size_t)nnp_tensor_numel(t) * nnp_dtype_size(t->dtype);
}

nnp_status nnp_tensor_alloc(nnp_tensor *t) {
  size_t nb;
  NNP_TRY(nnp_shape_nbytes(t->dtype, t->rank, t->dims, &nb));
  t->data = nnp_aligned_alloc(nb);
  if (!t->data) return nnp_error(NNP_ERR_NOMEM, "cannot allocate %zu bytes for a tensor", nb);
  memset(t->data, 0, nb);
  return NNP_OK;
}

void nnp_tensor_free(nnp_tensor *t) {
  if (!t) return;
  nnp_aligned_free(t->data);
  t->data = NULL;
}

nnp_status nnp_tensor_clone(const nnp_tensor *src, nnp_tensor *dst) {
  *dst = *src;
  dst->data = NULL;
  NNP_TRY(nnp_tensor_alloc(dst));
  if (src->data) memcpy(dst->data, src->data, nnp_tensor_nbytes(src));
  return NNP_OK;
}

bool nnp_tensor_same_shape(const nnp_tensor *a, const nnp_tensor *b) {
  if (a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

const char *nnp_shape_str(int rank, const int64_t *dims, char *buf, size_t n) {
  size_t used = 0;
  buf[0] = 0;
  if (rank == 0) {
    snprintf(buf, n, "scalar");
    return buf;
  }
  for (int i = 0; i < rank && used < n; i++)
    used += (size_t)snprintf(buf + used, n - used, i ? "x%lld" : "%lld", (long long)dims[i]);
  return buf;
}

double nnp_tensor_get_f64(const nnp_tensor *t, int64_t i) {
  const void *d = t->data;
  switch (t->dtype) {
    case NNP_F32: return ((const float *)d)[i];
    case NNP_F64: return ((const double *)d)[i];
    case NNP_F16: return nnp_f16_to_f32(((const uint16_t *)d)[i]);
    case NNP_BF16: return nnp_bf16_to_f32(((const uint16_t *)d)[i]);
    case NNP_I8: return ((const int8_t *)d)[i];
    case NNP_U8: return ((const uint8_t *)d)[i];
    case NNP_BOOL: return ((const uint8_t *)d)[i] != 0;
    case NNP_I16: return ((const int16_t *)d)[i];
    case NNP_U16: return ((const uint16_t *)d)[i];
    case NNP_I32: return ((const int32_t *)d)[i];
    case NNP_U32: return ((const uint32_t *)d)[i];
    case NNP_I64: return (double)((const int64_t *)d)[i];
    case NNP_U64: return (double)((const uint64_t *)d)[i];
    default: return 0;
  }
}

int64_t nnp_tensor_get_i64(const nnp_tensor *t, int64_t i) {
  const void *d = t->data;
  switch (t->dtype) {
    case NNP_I64: return ((const int64_t *)d)[i];
    case NNP_U64: return (int64_t)((const uint64_t *)d)[i];
    case NNP_I32: return ((const int32_t *)d)[i];
    case NNP_U32: return ((const uint32_t *)d)[i];
    case NNP_I16: return ((const int16_t *)d)[i];
    case NNP_U16: return ((const uint16_t *)d)[i];
    case NNP_I8: return ((const int8_t *)d)[i];
    case NNP_U8: return ((const uint8_t *)d)[i];
    case NNP_BOOL: return ((const uint8_t *)d)[i] != 0;
    default: {
      double v = nnp_tensor_get_f64(t, i);
      if (!(v == v)) return 0;
      if (v >= 9.2e18) return INT64_MAX;
      if (v <= -9.2e18) return INT64_MIN;
      return (int64_t)v;
    }
  }
}

/* double -> int64 without undefined behaviour: NaN becomes 0, out-of-range values
 * saturate. A double outside the target type's range is undefined behaviour in C (a
 * hostile Pad value of -3 on a uint8 tensor reached it); narrowing from int64 is not
 * (unsigned types wrap, signed ones wrap on every compiler nnperf supports), so integer
 * stores go through this first. */
static int64_t f64_to_i64_sat(double v) {
  if (!(v == v)) return 0;
  if (v >= 9.2e18) return INT64_MAX;
  if (v <= -9.2e18) return INT64_MIN;
  return (int64_t)v;
}

void nnp_tensor_set_f64(nnp_tensor *t, int64_t i, double v) {
  void *d = t->data;
  switch (t->dtype) {
    case NNP_F32: ((float *)d)[i] = (float)v; break;
    case NNP_F64: ((double *)d)[i] = v; break;
    case NNP_F16: ((uint16_t *)d)[i] = nnp_f32_to_f16((float)v); break;
    case NNP_BF16: ((uint16_t *)d)[i] = nnp_f32_to_bf16((float)v); break;
    case NNP_I8: ((int8_t *)d)[i] = (int8_t)f64_to_i64_sat(v); break;
    case NNP_U8: ((uint8_t *)d)[i] = (uint8_t)f64_to_i64_sat(v); break;
    case NNP_BOOL: ((uint8_t *)d)[i] = v != 0; break;
    case NNP_I16: ((int16_t *)d)[i] = (int16_t)f64_to_i64_sat(v); break;
    case NNP_U16: ((uint16_t *)d)[i] = (uint16_t)f64_to_i64_sat(v); break;
    case NNP_I32: ((int32_t *)d)[i] = (int32_t)f64_to_i64_sat(v); break;
    case NNP_U32: ((uint32_t *)d)[i] = (uint32_t)f64_to_i64_sat(v); break;
    case NNP_I64: ((int64_t *)d)[i] = f64_to_i64_sat(v); break;
    case NNP_U64: ((uint64_t *)d)[i] = v >= 1.8e19 ? UINT64_MAX : (uint64_t)f64_to_i64_sat(v); break;
    default: break;
  }
}

float nnp_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else { /* subnormal: normalise */
      int e = -1;
      do { e++; mant <<= 1; } while (!(mant & 0x400));
      mant &= 0x3ff;
      bits = sign | (uint32_t)(127 - 15 - e) << 23 | mant << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | mant << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | mant << 13;
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

uint16_t nnp_f32_to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t exp = (x >> 23) & 0xff;
  uint32_t mant = x & 0x7fffff;
  if (exp == 0xff) return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 : 0));
  int e = (int)exp - 127 + 15;
  if (e >= 31) return (uint16_t)(sign | 0x7c00);
  if (e <= 0) {
    if (e < -10) return (uint16_t)sign;
    mant |= 0x800000;
    int shift = 14 - e;
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) half++;
    return (uint16_t)(sign | half);
  }
  uint32_t half = sign | (uint32_t)e << 10 | mant >> 13;
  uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) half++; /* round to nearest even */
  return (uint16_t)half;
}

float nnp_bf16_to_f32(uint16_t h) {
  uint32_t bits = (uint32_t)h << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

uint16_t nnp_f32_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40); /* quiet NaN */
  x += 0x7fffu + ((x >> 16) & 1);
  return (uint16_t)(x >> 16);
}
