#include "ops/op_util.h"

#include <stdarg.h>
#include <string.h>

#include "util/threadpool.h"

void nnp_set_shape(nnp_tensor *t, nnp_dtype dt, int rank, const int64_t *dims) {
  t->dtype = dt;
  t->rank = rank;
  for (int i = 0; i < rank; i++) t->dims[i] = dims[i];
}

void nnp_copy_shape(nnp_tensor *dst, const nnp_tensor *src) {
  nnp_set_shape(dst, src->dtype, src->rank, src->dims);
}

nnp_status nnp_norm_axis(int64_t axis, int rank, const char *what, int *out) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= (rank > 0 ? rank : 1))
    return nnp_error(NNP_ERR_SHAPE, "%s %lld is out of range for rank %d", what,
                     (long long)axis, rank);
  *out = (int)a;
  return NNP_OK;
}

nnp_status nnp_broadcast_shapes(int ra, const int64_t *da, int rb, const int64_t *db,
                                int *rank_out, int64_t *dims_out) {
  int r = ra > rb ? ra : rb;
  if (r > NNP_MAX_RANK) return nnp_error(NNP_ERR_LIMIT, "broadcast rank %d exceeds %d", r, NNP_MAX_RANK);
  for (int i = 0; i < r; i++) {
    int64_t a = i < r - ra ? 1 : da[i - (r - ra)];
    int64_t b = i < r - rb ? 1 : db[i - (r - rb)];
    if (a == b || b == 1) dims_out[i] = a;
    else if (a == 1) dims_out[i] = b;
    else
      return nnp_error(NNP_ERR_SHAPE, "shapes cannot broadcast: dimension %d is %lld vs %lld", i,
                       (long long)a, (long long)b);
  }
  *rank_out = r;
  return NNP_OK;
}

bool nnp_per_channel_of(const nnp_tensor *big, const nnp_tensor *small, int *per_image) {
  *per_image = 0;
  if (big->rank != 4) return false;
  const int64_t N = big->dims[0], C = big->dims[1];
  if (small->rank == 4 && small->dims[1] == C && small->dims[2] == 1 && small->dims[3] == 1 &&
      (small->dims[0] == N || small->dims[0] == 1)) {
    *per_image = small->dims[0] == N && N > 1;
    return true;
  }
  return small->rank == 3 && small->dims[0] == C && small->dims[1] == 1 && small->dims[2] == 1;
}

void nnp_contiguous_strides(int rank, const int64_t *dims, int64_t *strides) {
  int64_t s = 1;
  for (int i = rank - 1; i >= 0; i--) {
    strides[i] = s;
    s *= dims[i];
  }
}

void nnp_broadcast_strides(const nnp_tensor *t, int rank, const int64_t *dims, int64_t *strides) {
  int64_t own[NNP_MAX_RANK];
  nnp_contiguous_strides(t->rank, t->dims, own);
  int off = rank - t->rank;
  for (int i = 0; i < rank; i++) {
    if (i < off) strides[i] = 0;
    else strides[i] = (t->dims[i - off] == 1 && dims[i] != 1) ? 0 : own[i - off];
  }
}

nnp_status nnp_input_ints(const nnp_op_ctx *c, int i, int64_t *vals, int max, int *count) {
  const nnp_tensor *t = nnp_in(c, i);
  if (!t) return nnp_error(NNP_ERR_SHAPE, "input %d is missing", i);
  if (!t->data)
    return nnp_error(NNP_ERR_UNSUPPORTED,
                     "input %d must be known when the model is loaded (it is computed at run time)", i);
  if (!nnp_dtype_is_int(t->dtype))
    return nnp_error(NNP_ERR_SHAPE, "input %d must be an integer tensor, not %s", i, nnp_dtype_name(t->dtype));
  int64_t n = nnp_tensor_numel(t);
  if (n > max) return nnp_error(NNP_ERR_LIMIT, "input %d has %lld values, at most %d allowed", i, (long long)n, max);
  for (int64_t k = 0; k < n; k++) vals[k] = nnp_tensor_get_i64(t, k);
  *count = (int)n;
  return NNP_OK;
}

nnp_status nnp_input_floats(const nnp_op_ctx *c, int i, float *vals, int max, int *count) {
  const nnp_tensor *t = nnp_in(c, i);
  if (!t) return nnp_error(NNP_ERR_SHAPE, "input %d is missing", i);
  if (!t->data)
    return nnp_error(NNP_ERR_UNSUPPORTED,
                     "input %d must be known when the model is loaded (it is computed at run time)", i);
  int64_t n = nnp_tensor_numel(t);
  if (n > max) return nnp_error(NNP_ERR_LIMIT, "input %d has %lld values, at most %d allowed", i, (long long)n, max);
  for (int64_t k = 0; k < n; k++) vals[k] = (float)nnp_tensor_get_f64(t, k);
  *count = (int)n;
  return NNP_OK;
}

nnp_status nnp_check_dtype(const nnp_tensor *t, const char *what, ...) {
  va_list ap;
  va_start(ap, what);
  for (;;) {
    int dt = va_arg(ap, int);
    if (dt == NNP_UNDEFINED) break;
    if (dt == (int)t->dtype) {
      va_end(ap);
      return NNP_OK;
    }
  }
  va_end(ap);
  return nnp_error(NNP_ERR_UNSUPPORTED, "%s of type %s is not supported", what, nnp_dtype_name(t->dtype));
}

bool nnp_dtype_is_float(nnp_dtype dt) { return dt == NNP_F32 || dt == NNP_F64 || dt == NNP_F16 || dt == NNP_BF16; }

bool nnp_dtype_is_int(nnp_dtype dt) {
  switch (dt) {
    case NNP_I8: case NNP_U8: case NNP_I16: case NNP_U16: case NNP_I32: case NNP_U32:
    case NNP_I64: case NNP_U64: return true;
    default: return false;
  }
}

bool nnp_pooled_copy_pays(const nnp_op_ctx *ctx) {
  return nnp_threadpool_threads(ctx->pool) >= 2 && nnp_tensor_nbytes(ctx->out[0]) >= (32 << 10);
}
