/* Softmax, LogSoftmax, the Reduce* family (Mean, Sum, Max, Min, Prod) and ArgMax/ArgMin.
 *
 * All of them view the input as blocks along one or more axes. Kernels are generated per
 * element type with macros so that inner loops carry no dtype switch; float types
 * accumulate in double and integer types in int64 (wrapping, never UB), which keeps the
 * reference kernels a good oracle for faster ones. */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "kernels/dispatch.h"
#include "kernels/pool.h"
#include "kernels/softmax.h"
#include "nnperf/alloc.h"
#include "ops/fast_ops.h"
#include "ops/op_util.h"

/* Loads and stores for the generated kernels: identity casts, except half floats. */
#define LD_ID(v) (v)
#define LD_F16(v) nnp_f16_to_f32(v)
#define ST_F32(v) ((float)(v))
#define ST_F64(v) ((double)(v))
#define ST_F16(v) nnp_f32_to_f16((float)(v))

static int64_t prod_dims(const int64_t *d, int from, int to) {
  int64_t p = 1;
  for (int i = from; i < to; i++) p *= d[i];
  return p;
}

/* ------------------------------------------------------------------------------------ */
/* Softmax / LogSoftmax                                                                 */
/* ------------------------------------------------------------------------------------ */

/* The input as [outer, n, inner]; softmax runs along n. */
typedef struct sm_geom {
  int64_t outer, n, inner;
} sm_geom;

static nnp_status softmax_geom(const nnp_op_ctx *ctx, sm_geom *g) {
  const nnp_tensor *x = ctx->in[0];
  int r = x->rank;
  if (ctx->opset < 13) {
    /* Opset 1..12: the input is coerced to 2D [d0*..*d(axis-1), d(axis)*..*d(r-1)] and
     * softmax runs over each row of the flattened trailing block. Like Flatten, axis == r
     * is accepted (rows of length 1). */
    int64_t axis = nnp_attr_int(ctx->node, "axis", 1);
    int64_t a = axis < 0 ? axis + r : axis;
    if (a < 0 || a > r)
      return nnp_error(NNP_ERR_SHAPE, "axis %lld is out of range for rank %d", (long long)axis, r);
    g->outer = prod_dims(x->dims, 0, (int)a);
    g->n = prod_dims(x->dims, (int)a, r);
    g->inner = 1;
    return NNP_OK;
  }
  /* Opset 13+: per-axis along `axis` (default -1). */
  int64_t axis = nnp_attr_int(ctx->node, "axis", -1);
  if (r == 0) { /* a scalar is its own (single-element) softmax row */
    if (axis != 0 && axis != -1)
      return nnp_error(NNP_ERR_SHAPE, "axis %lld is out of range for a scalar input", (long long)axis);
    g->outer = g->n = g->inner = 1;
    return NNP_OK;
  }
  int a;
  NNP_TRY(nnp_norm_axis(axis, r, "axis", &a));
  g->outer = prod_dims(x->dims, 0, a);
  g->n = x->dims[a];
  g->inner = prod_dims(x->dims, a + 1, r);
  return NNP_OK;
}

static nnp_status infer_softmax(nnp_op_ctx *ctx) {
  const nnp_tensor *x = ctx->in[0];
  NNP_TRY(nnp_check_dtype(x, "input", NNP_F32, NNP_F64, NNP_F16, NNP_UNDEFINED));
  sm_geom g;
  NNP_TRY(softmax_geom(ctx, &g));
  nnp_copy_shape(ctx->out[0], x);
  /* Strided (inner > 1) layouts keep a running max and sum per inner column. */
  if (g.inner > 1) ctx->scratch_needed = (size_t)g.inner * 2 * sizeof(double);
  return NNP_OK;
}

/* ws: 2 * inner doubles when inner > 1. Sums accumulate in double. */
#define SOFTMAX_KERNEL(NAME, T, CT, EXPF, LOGF, LD, ST)                                  \
  static void NAME(const T *x, T *y, sm_geom g, bool log_out, double *ws) {               \
    const int64_t n = g.n, inner = g.inner;                                               \
    for (int64_t o = 0; o < g.outer; o++) {                                               \
      const T *xb = x + o * n * inner;                                                    \
      T *yb = y + o * n * inner;                                                          \
      if (n == 0) continue;                                                               \
      if (inner == 1) {                                                                   \
        CT mx = LD(xb[0]);                                                                \
        for (int64_t k = 1; k < n; k++) {                                                 \
          CT v = LD(xb[k]);                                                               \
          if (v > mx) mx = v;                                                             \
        }                                                                                 \
        double sum = 0;                                                                   \
        if (log_out) {                                                                    \
          for (int64_t k = 0; k < n; k++) sum += EXPF(LD(xb[k]) - mx);                    \
          CT lse = mx + (CT)LOGF((CT)sum);                                                \
          for (int64_t k = 0; k < n; k++) yb[k] = ST(LD(xb[k]) - lse);                    \
        } else {                                                                          \
          for (int64_t k = 0; k < n; k++) {                                               \
            CT e = EXPF(LD(xb[k]) - mx);                                                  \
            yb[k] = ST(e);                                                                \
            sum += e;                                                                     \
          }                                                                               \
          CT inv = (CT)(1.0 / sum);                                                       \
          for (int64_t k = 0; k < n; k++) yb[k] = ST(LD(yb[k]) * inv);                    \
        }                                                                                 \
        continue;                                                                         \
      }                                                                                   \
      double *mx = ws, *sum = ws + inner;                                                 \
      for (int64_t j = 0; j < inner; j++) {                                               \
        mx[j] = LD(xb[j]);                                                                \
        sum[j] = 0;                                                                       \
      }                                                                                   \
      for (int64_t k = 1; k < n; k++) {                                                   \
        const T *row = xb + k * inner;                                                    \
        for (int64_t j = 0; j < inner; j++) {                                             \
          double v = LD(row[j]);                                                          \
          if (v > mx[j]) mx[j] = v;                                                       \
        }                                                                                 \
      }                                                                                   \
      for (int64_t k = 0; k < n; k++) {                                                   \
        const T *row = xb + k * inner;                                                    \
        T *yrow = yb + k * inner;                                                         \
        for (int64_t j = 0; j < inner; j++) {                                             \
          CT e = EXPF(LD(row[j]) - (CT)mx[j]);                                            \
          sum[j] += e;                                                                    \
          if (!log_out) yrow[j] = ST(e);                                                  \
        }                                                                                 \
      }                                                                                   \
      if (log_out) {                                                                      \
        for (int64_t j = 0; j < inner; j++) sum[j] = mx[j] + (double)LOGF((CT)sum[j]);    \
        for (int64_t k = 0; k < n; k++) {                                                 \
          const T *row = xb + k * inner;                                                  \
          T *yrow = yb + k * inner;                                                       \
          for (int64_t j = 0; j < inner; j++) yrow[j] = ST(LD(row[j]) - (CT)sum[j]);      \
        }                                                                                 \
      } else {                                                                            \
        for (int64_t j = 0; j < inner; j++) sum[j] = 1.0 / sum[j];                        \
        for (int64_t k = 0; k < n; k++) {                                                 \
          T *yrow = yb + k * inner;                                                       \
          for (int64_t j = 0; j < inner; j++) yrow[j] = ST(LD(yrow[j]) * (CT)sum[j]);     \
        }                                                                                 \
      }                                                                                   \
    }                                                                                     \
  }

SOFTMAX_KERNEL(softmax_f32, float, float, expf, logf, LD_ID, ST_F32)
SOFTMAX_KERNEL(softmax_f64, double, double, exp, log, LD_ID, ST_F64)
SOFTMAX_KERNEL(softmax_f16, uint16_t, float, expf, logf, LD_F16, ST_F16)

static nnp_status softmax_run(nnp_op_ctx *ctx, bool log_out) {
  const nnp_tensor *x = ctx->in[0];
  nnp_tensor *y = ctx->out[0];
  sm_geom g;
  NNP_TRY(softmax_geom(ctx, &g));
  if (nnp_tensor_numel(x) == 0) return NNP_OK; /* no scratch was sized for an empty tensor */
  double *ws = ctx->scratch;
  switch (x->dtype) {
    case NNP_F32: softmax_f32(x->data, y->data, g, log_out, ws); break;
    case NNP_F64: softmax_f64(x->data, y->data, g, log_out, ws); break;
    case NNP_F16: softmax_f16(x->data, y->data, g, log_out, ws); break;
    default: return nnp_error(NNP_ERR_INTERNAL, "softmax kernel for %s missing", nnp_dtype_name(x->dtype));
  }
  return NNP_OK;
}

static nnp_status ref_softmax(nnp_op_ctx *ctx) { return softmax_run(ctx, false); }

/* float32 Softmax over contiguous rows (the last axis, or opset < 13's flattened trailing
 * block) on the AVX2 rows of kernels/softmax.h, where the FusedElementwise family runs AVX2
 * (the same vector exp). */
typedef struct fast_softmax {
  int64_t rows, n;
  bool avx512; /* the 16-lane kernel: where the dispatch gives the eltwise family AVX-512 */
} fast_softmax;

static void fast_softmax_destroy(void *p) { nnp_free(p); }

static nnp_status fast_softmax_run(void *p, nnp_op_ctx *ctx) {
  const fast_softmax *f = p;
  nnp_softmax_rows(ctx->in[0]->data, ctx->out[0]->data, f->rows, f->n, f->avx512, ctx->pool);
  return NNP_OK;
}

static nnp_status prepare_softmax(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out) {
  memset(out, 0, sizeof *out);
  const nnp_tensor *x = ctx->in[0];
  if (x->dtype != NNP_F32 || nnp_tensor_numel(x) == 0 || nnp_dispatch_portable(NNP_KF_FUSED_ELTWISE, generic))
    return NNP_OK;
  sm_geom g;
  NNP_TRY(softmax_geom((nnp_op_ctx *)ctx, &g));
  if (g.inner != 1) return NNP_OK;
  fast_softmax *f = nnp_calloc(1, sizeof *f);
  if (!f) return nnp_error(NNP_ERR_NOMEM, "out of memory preparing Softmax");
  f->rows = g.outer;
  f->n = g.n;
  out->run = fast_softmax_run;
  out->destroy = fast_softmax_destroy;
  out->state = f;
  f->avx512 = nnp_dispatch_isa(NNP_KF_FUSED_ELTWISE) == NNP_ISA_AVX512;
  out->name = f->avx512 ? "softmax.avx512" : "softmax.avx2";
  return NNP_OK;
}
static nnp_status ref_log_softmax(nnp_op_ctx *ctx) { return softmax_run(ctx, true); }

const nnp_op_info nnp_op_softmax = {.name = "Softmax", .min_inputs = 1, .max_inputs = 1,
                                    .min_outputs = 1, .max_outputs = 1,
                                    .infer = infer_softmax, .ref = ref_softmax, .prepare = prepare_softmax};
const nnp_op_info nnp_op_log_softmax = {.name = "LogSoftmax", .min_inputs = 1, .max_inputs = 1,
                                        .min_outputs = 1, .max_outputs = 1,
                                        .infer = infer_softmax, .ref = ref_log_softmax};

/* ------------------------------------------------------------------------------------ */
/* ReduceMean / Sum / Max / Min / Prod                                                  */
/* ------------------------------------------------------------------------------------ */

typedef enum red_kind { RED_SUM, RED_MEAN, RED_MAX, RED_MIN, RED_PROD } red_kind;

/* The input shape compressed for the kernel: size-1 dims dropped and runs of adjacent
 * dims that are all reduced (or all kept) merged, so the kernel walks at most
 * NNP_MAX_RANK alternating groups and its innermost loop is as long as possible. */
typedef struct red_plan {
  int m;                           /* compressed rank, >= 1 */
  int64_t dims[NNP_MAX_RANK];
  int64_t ostride[NNP_MAX_RANK];   /* output stride of each group; 0 for reduced ones */
  bool last_reduced;
  int64_t in_numel, out_numel;
} red_plan;

/* Reads axes (attribute before `input_opset`, optional input 1 from then on), applies
 * noop_with_empty_axes and keepdims, and fills the reduced-axis mask, the output shape and
 * (when plan != NULL) the kernel plan. Shared by infer and ref so both agree. */
static nnp_status reduce_setup(const nnp_op_ctx *ctx, int64_t input_opset, int *out_rank,
                               int64_t *out_dims, red_plan *plan) {
  const nnp_tensor *x = ctx->in[0];
  const int r = x->rank;
  int64_t axes[NNP_MAX_RANK];
  int n_axes = 0;
  if (ctx->opset < input_opset) {
    if (nnp_in(ctx, 1))
      return nnp_error(NNP_ERR_FORMAT, "axes is an attribute before opset %lld, not an input (model opset %lld)",
                       (long long)input_opset, (long long)ctx->opset);
    const int64_t *a;
    int n = nnp_attr_ints(ctx->node, "axes", &a);
    if (n > r && n > 0)
      return nnp_error(NNP_ERR_SHAPE, "axes has %d values for an input of rank %d", n, r);
    for (int i = 0; i < n; i++) axes[i] = a[i];
    n_axes = n > 0 ? n : 0;
  } else {
    if (nnp_node_attr(ctx->node, "axes"))
      return nnp_error(NNP_ERR_FORMAT, "axes is an input since opset %lld, not an attribute (model opset %lld)",
                       (long long)input_opset, (long long)ctx->opset);
    if (nnp_in(ctx, 1)) NNP_TRY(nnp_input_ints(ctx, 1, axes, NNP_MAX_RANK, &n_axes));
  }
  const bool keepdims = nnp_attr_int(ctx->node, "keepdims", 1) != 0;
  const bool noop = nnp_attr_int(ctx->node, "noop_with_empty_axes", 0) != 0;

  bool mask[NNP_MAX_RANK] = {false};
  if (n_axes == 0) {
    /* Empty axes reduce everything, unless noop_with_empty_axes makes the op an identity. */
    for (int i = 0; i < r; i++) mask[i] = !noop;
  } else {
    for (int i = 0; i < n_axes; i++) {
      int a;
      NNP_TRY(nnp_norm_axis(axes[i], r, "axes value", &a));
      if (r == 0) continue; /* a scalar has nothing to reduce */
      if (mask[a]) return nnp_error(NNP_ERR_SHAPE, "axes lists axis %d twice", a);
      mask[a] = true;
    }
  }

  int orank = 0;
  for (int i = 0; i < r; i++) {
    if (!mask[i]) out_dims[orank++] = x->dims[i];
    else if (keepdims) out_dims[orank++] = 1;
  }
  *out_rank = orank;
  if (!plan) return NNP_OK;

  memset(plan, 0, sizeof *plan);
  plan->in_numel = nnp_tensor_numel(x);
  plan->out_numel = prod_dims(out_dims, 0, orank);
  bool red[NNP_MAX_RANK];
  int m = 0;
  for (int i = 0; i < r; i++) {
    if (x->dims[i] == 1) continue;
    if (m > 0 && red[m - 1] == mask[i]) {
      plan->dims[m - 1] *= x->dims[i];
    } else {
      plan->dims[m] = x->dims[i];
      red[m++] = mask[i];
    }
  }
  if (m == 0) { /* every dim is 1: one element in, one out */
    plan->dims[0] = 1;
    red[0] = false;
    m = 1;
  }
  int64_t s = 1;
  for (int i = m - 1; i >= 0; i--) {
    plan->ostride[i] = red[i] ? 0 : s;
    if (!red[i]) s *= plan->dims[i];
  }
  plan->m = m;
  plan->last_reduced = red[m - 1];
  return NNP_OK;
}

static int64_t reduce_input_opset(red_kind k) { return k == RED_SUM ? 13 : 18; }

static nnp_status reduce_infer(nnp_op_ctx *ctx, red_kind k) {
  const nnp_tensor *x = ctx->in[0];
  NNP_TRY(nnp_check_dtype(x, "input", NNP_F32, NNP_F64, NNP_F16, NNP_I8, NNP_U8, NNP_I16, NNP_U16,
                          NNP_I32, NNP_U32, NNP_I64, NNP_UNDEFINED));
  int orank;
  int64_t odims[NNP_MAX_RANK];
  red_plan plan;
  NNP_TRY(reduce_setup(ctx, reduce_input_opset(k), &orank, odims, &plan));
  nnp_set_shape(ctx->out[0], x->dtype, orank, odims);
  /* One accumulator (double or int64) per output element. */
  ctx->scratch_needed = (size_t)(plan.out_numel > 0 ? plan.out_numel : 1) * 8;
  return NNP_OK;
}

/* Signed integer sums and products wrap through uint64 (two's complement) instead of
 * overflowing, which would be UB. */
#define ACC_ADD_D(a, v) ((a) + (v))
#define ACC_MUL_D(a, v) ((a) * (v))
#define ACC_ADD_I(a, v) ((int64_t)((uint64_t)(a) + (uint64_t)(v)))
#define ACC_MUL_I(a, v) ((int64_t)((uint64_t)(a) * (uint64_t)(v)))
#define NOT_NAN(v) 0
#define IS_NAN(v) isnan(v)

/* Walks the input once in memory order: the compressed outer groups are an odometer that
 * tracks the output offset; the innermost group is either reduced (a row folds into one
 * accumulator) or kept (a row folds element-wise into a row of accumulators). Max/Min
 * propagate NaN like numpy. */
#define REDUCE_KERNEL(NAME, T, ACC, LD, ST, ADD, MUL, ISNAN, LOWEST, HIGHEST)             \
  static void NAME(const red_plan *p, red_kind kind, const T *x, T *y, ACC *acc) {        \
    const ACC init = kind == RED_PROD ? (ACC)1                                            \
                   : kind == RED_MAX  ? (ACC)(LOWEST)                                     \
                   : kind == RED_MIN  ? (ACC)(HIGHEST) : (ACC)0;                          \
    for (int64_t o = 0; o < p->out_numel; o++) acc[o] = init;                             \
    if (p->in_numel > 0) {                                                                \
      const int64_t L = p->dims[p->m - 1];                                                \
      const int64_t rows = p->in_numel / L;                                               \
      int64_t idx[NNP_MAX_RANK] = {0};                                                    \
      int64_t ooff = 0;                                                                   \
      const T *row = x;                                                                   \
      for (int64_t it = 0; it < rows; it++, row += L) {                                   \
        ACC *a = acc + ooff;                                                              \
        if (p->last_reduced) {                                                            \
          ACC s = a[0];                                                                   \
          switch (kind) {                                                                 \
            case RED_SUM: case RED_MEAN:                                                  \
              for (int64_t j = 0; j < L; j++) s = ADD(s, (ACC)LD(row[j]));                \
              break;                                                                      \
            case RED_PROD:                                                                \
              for (int64_t j = 0; j < L; j++) s = MUL(s, (ACC)LD(row[j]));                \
              break;                                                                      \
            case RED_MAX:                                                                 \
              for (int64_t j = 0; j < L; j++) {                                           \
                ACC v = (ACC)LD(row[j]);                                                  \
                if (v > s || ISNAN(v)) s = ISNAN(s) ? s : v;                              \
              }                                                                           \
              break;                                                                      \
            case RED_MIN:                                                                 \
              for (int64_t j = 0; j < L; j++) {                                           \
                ACC v = (ACC)LD(row[j]);                                                  \
                if (v < s || ISNAN(v)) s = ISNAN(s) ? s : v;                              \
              }                                                                           \
              break;                                                                      \
          }                                                                               \
          a[0] = s;                                                                       \
        } else {                                                                          \
          switch (kind) {                                                                 \
            case RED_SUM: case RED_MEAN:                                                  \
              for (int64_t j = 0; j < L; j++) a[j] = ADD(a[j], (ACC)LD(row[j]));          \
              break;                                                                      \
            case RED_PROD:                                                                \
              for (int64_t j = 0; j < L; j++) a[j] = MUL(a[j], (ACC)LD(row[j]));          \
              break;                                                                      \
            case RED_MAX:                                                                 \
              for (int64_t j = 0; j < L; j++) {                                           \
                ACC v = (ACC)LD(row[j]);                                                  \
                if ((v > a[j] || ISNAN(v)) && !ISNAN(a[j])) a[j] = v;                     \
              }                                                                           \
              break;                                                                      \
            case RED_MIN:                                                                 \
              for (int64_t j = 0; j < L; j++) {                                           \
                ACC v = (ACC)LD(row[j]);                                                  \
                if ((v < a[j] || ISNAN(v)) && !ISNAN(a[j])) a[j] = v;                     \
              }                                                                           \
              break;                                                                      \
          }                                                                               \
        }                                                                                 \
        for (int d = p->m - 2; d >= 0; d--) {                                             \
          ooff += p->ostride[d];                                                          \
          if (++idx[d] < p->dims[d]) break;                                               \
          ooff -= p->ostride[d] * p->dims[d];                                             \
          idx[d] = 0;                                                                     \
        }                                                                                 \
      }                                                                                   \
    }                                                                                     \
    if (kind == RED_MEAN) {                                                               \
      const int64_t count = p->out_numel > 0 ? p->in_numel / p->out_numel : 0;            \
      for (int64_t o = 0; o < p->out_numel; o++)                                          \
        y[o] = count ? ST(acc[o] / (ACC)count) : ST(reduce_empty_mean_##ACC());           \
    } else {                                                                              \
      for (int64_t o = 0; o < p->out_numel; o++) y[o] = ST(acc[o]);                       \
    }                                                                                     \
  }

/* The mean of nothing: NaN for floats (0/0), 0 for integers. */
static double reduce_empty_mean_double(void) { return NAN; }
static int64_t reduce_empty_mean_int64_t(void) { return 0; }

#define ST_CAST(T) (T)
REDUCE_KERNEL(reduce_f32, float, double, LD_ID, ST_F32, ACC_ADD_D, ACC_MUL_D, IS_NAN, -INFINITY, INFINITY)
REDUCE_KERNEL(reduce_f64, double, double, LD_ID, ST_F64, ACC_ADD_D, ACC_MUL_D, IS_NAN, -INFINITY, INFINITY)
REDUCE_KERNEL(reduce_f16, uint16_t, double, LD_F16, ST_F16, ACC_ADD_D, ACC_MUL_D, IS_NAN, -INFINITY, INFINITY)
REDUCE_KERNEL(reduce_i8, int8_t, int64_t, LD_ID, ST_CAST(int8_t), ACC_ADD_I, ACC_MUL_I, NOT_NAN, INT8_MIN, INT8_MAX)
REDUCE_KERNEL(reduce_u8, uint8_t, int64_t, LD_ID, ST_CAST(uint8_t), ACC_ADD_I, ACC_MUL_I, NOT_NAN, 0, UINT8_MAX)
REDUCE_KERNEL(reduce_i16, int16_t, int64_t, LD_ID, ST_CAST(int16_t), ACC_ADD_I, ACC_MUL_I, NOT_NAN, INT16_MIN, INT16_MAX)
REDUCE_KERNEL(reduce_u16, uint16_t, int64_t, LD_ID, ST_CAST(uint16_t), ACC_ADD_I, ACC_MUL_I, NOT_NAN, 0, UINT16_MAX)
REDUCE_KERNEL(reduce_i32, int32_t, int64_t, LD_ID, ST_CAST(int32_t), ACC_ADD_I, ACC_MUL_I, NOT_NAN, INT32_MIN, INT32_MAX)
REDUCE_KERNEL(reduce_u32, uint32_t, int64_t, LD_ID, ST_CAST(uint32_t), ACC_ADD_I, ACC_MUL_I, NOT_NAN, 0, UINT32_MAX)
REDUCE_KERNEL(reduce_i64, int64_t, int64_t, LD_ID, ST_CAST(int64_t), ACC_ADD_I, ACC_MUL_I, NOT_NAN, INT64_MIN, INT64_MAX)

static nnp_status reduce_ref(nnp_op_ctx *ctx, red_kind k) {
  const nnp_tensor *x = ctx->in[0];
  nnp_tensor *y = ctx->out[0];
  int orank;
  int64_t odims[NNP_MAX_RANK];
  red_plan p;
  NNP_TRY(reduce_setup(ctx, reduce_input_opset(k), &orank, odims, &p));
  void *acc = ctx->scratch;
  switch (x->dtype) {
    case NNP_F32: reduce_f32(&p, k, x->data, y->data, acc); break;
    case NNP_F64: reduce_f64(&p, k, x->data, y->data, acc); break;
    case NNP_F16: reduce_f16(&p, k, x->data, y->data, acc); break;
    case NNP_I8: reduce_i8(&p, k, x->data, y->data, acc); break;
    case NNP_U8: reduce_u8(&p, k, x->data, y->data, acc); break;
    case NNP_I16: reduce_i16(&p, k, x->data, y->data, acc); break;
    case NNP_U16: reduce_u16(&p, k, x->data, y->data, acc); break;
    case NNP_I32: reduce_i32(&p, k, x->data, y->data, acc); break;
    case NNP_U32: reduce_u32(&p, k, x->data, y->data, acc); break;
    case NNP_I64: reduce_i64(&p, k, x->data, y->data, acc); break;
    default: return nnp_error(NNP_ERR_INTERNAL, "reduce kernel for %s missing", nnp_dtype_name(x->dtype));
  }
  return NNP_OK;
}

#define REDUCE_OP(sym, Name, KIND)                                                        \
  static nnp_status infer_##sym(nnp_op_ctx *ctx) { return reduce_infer(ctx, KIND); }      \
  static nnp_status ref_##sym(nnp_op_ctx *ctx) { return reduce_ref(ctx, KIND); }          \
  const nnp_op_info nnp_op_##sym = {.name = Name, .min_inputs = 1, .max_inputs = 2,       \
                                    .min_outputs = 1, .max_outputs = 1,                   \
                                    .infer = infer_##sym, .ref = ref_##sym};

/* float32 ReduceMean over the trailing axes (a CNN head's mean over H and W: mnasnet1_0,
 * shufflenet_v2_x1_0) as GlobalAveragePool's rows over the pool: each output the mean of
 * one contiguous block. The reference walks an odometer with a double per output, 0.09
 * ms for mnasnet1_0's 1280 x 7 x 7 where the rows take a tenth of that. The rows sum in
 * float (GlobalAveragePool's kernel, tested against a double oracle within 1e-6). */
typedef struct fast_mean {
  int64_t outer, inner;
} fast_mean;

static nnp_status fast_mean_run(void *p, nnp_op_ctx *ctx) {
  const fast_mean *f = p;
  nnp_global_avgpool(f->outer, f->inner, ctx->in[0]->data, ctx->out[0]->data, ctx->pool);
  return NNP_OK;
}

static nnp_status prepare_reduce_mean(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out) {
  (void)generic;
  memset(out, 0, sizeof *out);
  const nnp_tensor *x = ctx->in[0];
  int orank;
  int64_t odims[NNP_MAX_RANK];
  red_plan p;
  if (x->dtype != NNP_F32 || nnp_tensor_numel(x) == 0) return NNP_OK;
  if (reduce_setup(ctx, reduce_input_opset(RED_MEAN), &orank, odims, &p) != NNP_OK) return NNP_OK;
  if (!p.last_reduced || p.m > 2) return NNP_OK; /* not one kept block of reduced rows */
  fast_mean *f = nnp_calloc(1, sizeof *f);
  if (!f) return nnp_error(NNP_ERR_NOMEM, "out of memory preparing ReduceMean");
  f->inner = p.dims[p.m - 1];
  f->outer = p.out_numel;
  out->run = fast_mean_run;
  out->destroy = nnp_free;
  out->state = f;
  out->name = "reduce_mean.rows";
  return NNP_OK;
}

static nnp_status infer_reduce_mean(nnp_op_ctx *ctx) { return reduce_infer(ctx, RED_MEAN); }
static nnp_status ref_reduce_mean(nnp_op_ctx *ctx) { return reduce_ref(ctx, RED_MEAN); }
const nnp_op_info nnp_op_reduce_mean = {.name = "ReduceMean", .min_inputs = 1, .max_inputs = 2, .min_outputs = 1,
                                        .max_outputs = 1, .infer = infer_reduce_mean, .ref = ref_reduce_mean,
                                        .prepare = prepare_reduce_mean};
REDUCE_OP(reduce_sum, "ReduceSum", RED_SUM)
REDUCE_OP(reduce_max, "ReduceMax", RED_MAX)
REDUCE_OP(reduce_min, "ReduceMin", RED_MIN)
REDUCE_OP(reduce_prod, "ReduceProd", RED_PROD)

/* ------------------------------------------------------------------------------------ */
/* ArgMax / ArgMin                                                                      */
/* ------------------------------------------------------------------------------------ */

static nnp_status arg_geom(const nnp_op_ctx *ctx, sm_geom *g, int *axis_out) {
  const nnp_tensor *x = ctx->in[0];
  int a;
  NNP_TRY(nnp_norm_axis(nnp_attr_int(ctx->node, "axis", 0), x->rank, "axis", &a));
  if (x->rank == 0) {
    g->outer = g->n = g->inner = 1;
  } else {
    g->outer = prod_dims(x->dims, 0, a);
    g->n = x->dims[a];
    g->inner = prod_dims(x->dims, a + 1, x->rank);
  }
  *axis_out = a;
  return NNP_OK;
}

static nnp_status infer_arg(nnp_op_ctx *ctx) {
  const nnp_tensor *x = ctx->in[0];
  NNP_TRY(nnp_check_dtype(x, "input", NNP_F32, NNP_F64, NNP_F16, NNP_I8, NNP_U8, NNP_I16, NNP_U16,
                          NNP_I32, NNP_U32, NNP_I64, NNP_U64, NNP_UNDEFINED));
  sm_geom g;
  int a;
  NNP_TRY(arg_geom(ctx, &g, &a));
  if (g.n == 0) return nnp_error(NNP_ERR_SHAPE, "axis %d has size 0: no index to return", a);
  const bool keepdims = nnp_attr_int(ctx->node, "keepdims", 1) != 0;
  int64_t odims[NNP_MAX_RANK];
  int orank = 0;
  for (int i = 0; i < x->rank; i++) {
    if (i != a) odims[orank++] = x->dims[i];
    else if (keepdims) odims[orank++] = 1;
  }
  nnp_set_shape(ctx->out[0], NNP_I64, orank, odims);
  return NNP_OK;
}

/* y holds, per inner column, the index of the best value so far; the best value itself is
 * re-read from x (same block, cache-resident) so no workspace is needed. */
#define ARG_LOOP(T, LD, CMP)                                                              \
  for (int64_t k = 1; k < n; k++) {                                                       \
    const T *row = xb + k * inner;                                                        \
    for (int64_t j = 0; j < inner; j++) {                                                 \
      if (LD(row[j]) CMP LD(xb[yb[j] * inner + j])) yb[j] = k;                            \
    }                                                                                     \
  }

#define ARG_KERNEL(NAME, T, LD)                                                           \
  static void NAME(const T *x, int64_t *y, sm_geom g, bool is_max, bool last) {           \
    const int64_t n = g.n, inner = g.inner;                                               \
    for (int64_t o = 0; o < g.outer; o++) {                                               \
      const T *xb = x + o * n * inner;                                                    \
      int64_t *yb = y + o * inner;                                                        \
      for (int64_t j = 0; j < inner; j++) yb[j] = 0;                                      \
      if (is_max && !last) { ARG_LOOP(T, LD, >) }                                         \
      else if (is_max) { ARG_LOOP(T, LD, >=) }                                            \
      else if (!last) { ARG_LOOP(T, LD, <) }                                              \
      else { ARG_LOOP(T, LD, <=) }                                                        \
    }                                                                                     \
  }

ARG_KERNEL(arg_f32, float, LD_ID)
ARG_KERNEL(arg_f64, double, LD_ID)
ARG_KERNEL(arg_f16, uint16_t, LD_F16)
ARG_KERNEL(arg_i8, int8_t, LD_ID)
ARG_KERNEL(arg_u8, uint8_t, LD_ID)
ARG_KERNEL(arg_i16, int16_t, LD_ID)
ARG_KERNEL(arg_u16, uint16_t, LD_ID)
ARG_KERNEL(arg_i32, int32_t, LD_ID)
ARG_KERNEL(arg_u32, uint32_t, LD_ID)
ARG_KERNEL(arg_i64, int64_t, LD_ID)
ARG_KERNEL(arg_u64, uint64_t, LD_ID)

static nnp_status arg_run(nnp_op_ctx *ctx, bool is_max) {
  const nnp_tensor *x = ctx->in[0];
  int64_t *y = ctx->out[0]->data;
  sm_geom g;
  int a;
  NNP_TRY(arg_geom(ctx, &g, &a));
  const bool last = nnp_attr_int(ctx->node, "select_last_index", 0) != 0;
  switch (x->dtype) {
    case NNP_F32: arg_f32(x->data, y, g, is_max, last); break;
    case NNP_F64: arg_f64(x->data, y, g, is_max, last); break;
    case NNP_F16: arg_f16(x->data, y, g, is_max, last); break;
    case NNP_I8: arg_i8(x->data, y, g, is_max, last); break;
    case NNP_U8: arg_u8(x->data, y, g, is_max, last); break;
    case NNP_I16: arg_i16(x->data, y, g, is_max, last); break;
    case NNP_U16: arg_u16(x->data, y, g, is_max, last); break;
    case NNP_I32: arg_i32(x->data, y, g, is_max, last); break;
    case NNP_U32: arg_u32(x->data, y, g, is_max, last); break;
    case NNP_I64: arg_i64(x->data, y, g, is_max, last); break;
    case NNP_U64: arg_u64(x->data, y, g, is_max, last); break;
    default: return nnp_error(NNP_ERR_INTERNAL, "arg kernel for %s missing", nnp_dtype_name(x->dtype));
  }
  return NNP_OK;
}

static nnp_status ref_arg_max(nnp_op_ctx *ctx) { return arg_run(ctx, true); }
static nnp_status ref_arg_min(nnp_op_ctx *ctx) { return arg_run(ctx, false); }

const nnp_op_info nnp_op_arg_max = {.name = "ArgMax", .min_inputs = 1, .max_inputs = 1,
                                    .min_outputs = 1, .max_outputs = 1,
                                    .infer = infer_arg, .ref = ref_arg_max};
const nnp_op_info nnp_op_arg_min = {.name = "ArgMin", .min_inputs = 1, .max_inputs = 1,
                                    .min_outputs = 1, .max_outputs = 1,
                                    .infer = infer_arg, .ref = ref_arg_min};
