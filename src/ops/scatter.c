/* ScatterND (opset 11; 16 and 18 add the `reduction` attribute): output = data, with
 * the slices addressed by `indices` replaced by (or, with a reduction, combined with)
 * `updates`. swin_t builds its shifted-window attention masks with it (constant inputs:
 * the engine folds them at load time). Indices may be negative (counted from the end);
 * an index out of range is an error naming the value, never a write out of bounds. */
#include <string.h>

#include "ops/op_util.h"

typedef enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN } reduction;

static nnp_status read_reduction(const nnp_node *n, reduction *out) {
  const nnp_attr *a = nnp_node_attr(n, "reduction");
  const char *s = a && a->type == NNP_ATTR_STRING && a->s ? a->s : "none";
  static const char *const names[] = {"none", "add", "mul", "max", "min"};
  for (int i = 0; i < 5; i++)
    if (!strcmp(s, names[i])) {
      *out = (reduction)i;
      return NNP_OK;
    }
  return nnp_error(NNP_ERR_UNSUPPORTED, "attribute reduction '%s' is not supported (none, add, mul, max, min)", s);
}

static nnp_status infer_scatter_nd(nnp_op_ctx *ctx) {
  const nnp_tensor *data = nnp_in(ctx, 0), *idx = nnp_in(ctx, 1), *upd = nnp_in(ctx, 2);
  if (!data || !idx || !upd) return nnp_error(NNP_ERR_SHAPE, "ScatterND needs data, indices and updates");
  reduction red;
  NNP_TRY(read_reduction(ctx->node, &red));
  if (red != RED_NONE && data->dtype != NNP_F32 && data->dtype != NNP_F64 && data->dtype != NNP_I32 &&
      data->dtype != NNP_I64)
    return nnp_error(NNP_ERR_UNSUPPORTED, "reduction on %s data is not supported", nnp_dtype_name(data->dtype));
  if (idx->dtype != NNP_I64) return nnp_error(NNP_ERR_SHAPE, "indices must be int64, not %s", nnp_dtype_name(idx->dtype));
  if (upd->dtype != data->dtype)
    return nnp_error(NNP_ERR_SHAPE, "updates are %s but data is %s", nnp_dtype_name(upd->dtype),
                     nnp_dtype_name(data->dtype));
  if (data->rank < 1 || idx->rank < 1) return nnp_error(NNP_ERR_SHAPE, "data and indices need rank >= 1");
  const int64_t k = idx->dims[idx->rank - 1];
  if (k < 1 || k > data->rank)
    return nnp_error(NNP_ERR_SHAPE, "indices' last dimension %lld must be in [1, rank(data)=%d]", (long long)k,
                     data->rank);
  /* updates' shape = indices.shape[:-1] + data.shape[k:] */
  const int want_rank = idx->rank - 1 + data->rank - (int)k;
  bool ok = upd->rank == want_rank;
  for (int d = 0; ok && d < idx->rank - 1; d++) ok = upd->dims[d] == idx->dims[d];
  for (int d = 0; ok && d < data->rank - (int)k; d++) ok = upd->dims[idx->rank - 1 + d] == data->dims[k + d];
  if (!ok) return nnp_error(NNP_ERR_SHAPE, "updates' shape must be indices.shape[:-1] + data.shape[%lld:]", (long long)k);
  nnp_copy_shape(ctx->out[0], data);
  return NNP_OK;
}

#define COMBINE(T)                                                                        \
  static void combine_##T(T *y, const T *u, int64_t n, reduction r) {                    \
    for (int64_t i = 0; i < n; i++)                                                      \
      y[i] = r == RED_ADD ? y[i] + u[i] : r == RED_MUL ? y[i] * u[i]                     \
           : r == RED_MAX ? (u[i] > y[i] ? u[i] : y[i]) : (u[i] < y[i] ? u[i] : y[i]);   \
  }
COMBINE(float)
COMBINE(double)
COMBINE(int32_t)
COMBINE(int64_t)

/* y (one slice of n elements) combined with u under reduction r. */
static void apply_slice(void *y, const void *u, int64_t n, size_t es, nnp_dtype dt, reduction r) {
  if (r == RED_NONE) memcpy(y, u, (size_t)n * es);
  else if (dt == NNP_F32) combine_float(y, u, n, r);
  else if (dt == NNP_F64) combine_double(y, u, n, r);
  else if (dt == NNP_I32) combine_int32_t(y, u, n, r);
  else combine_int64_t(y, u, n, r);
}

static nnp_status ref_scatter_nd(nnp_op_ctx *ctx) {
  const nnp_tensor *data = ctx->in[0], *idx = ctx->in[1], *upd = ctx->in[2];
  nnp_tensor *y = ctx->out[0];
  const size_t es = nnp_dtype_size(data->dtype);
  if (y->data != data->data) memcpy(y->data, data->data, nnp_tensor_nbytes(data));
  reduction red;
  NNP_TRY(read_reduction(ctx->node, &red));
  const int k = (int)idx->dims[idx->rank - 1];
  int64_t slice = 1; /* elements per addressed slice: data.shape[k:] */
  for (int d = k; d < data->rank; d++) slice *= data->dims[d];
  const int64_t n_idx = nnp_tensor_numel(idx) / k;
  const int64_t *ix = idx->data;
  for (int64_t i = 0; i < n_idx; i++) {
    int64_t off = 0;
    for (int d = 0; d < k; d++) {
      int64_t v = ix[i * k + d];
      if (v < 0) v += data->dims[d];
      if (v < 0 || v >= data->dims[d])
        return nnp_error(NNP_ERR_SHAPE, "index %lld is out of range for dimension %d of size %lld",
                         (long long)ix[i * k + d], d, (long long)data->dims[d]);
      off = off * data->dims[d] + v;
    }
    apply_slice((char *)y->data + (size_t)(off * slice) * es, (const char *)upd->data + (size_t)(i * slice) * es,
                slice, es, data->dtype, red);
  }
  return NNP_OK;
}

const nnp_op_info nnp_op_scatter_nd = {.name = "ScatterND", .min_inputs = 3, .max_inputs = 3,
                                       .min_outputs = 1, .max_outputs = 1,
                                       .infer = infer_scatter_nd, .ref = ref_scatter_nd};
