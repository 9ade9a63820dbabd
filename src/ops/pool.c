/* MaxPool, AveragePool (1D/2D/3D) and GlobalMaxPool, GlobalAveragePool (any rank >= 3).
 *
 * Windowed pools normalise their geometry to three spatial axes (ops/spatial.h: 1D/2D get
 * leading axes of size 1 with kernel 1, stride 1, no padding) so one kernel serves every
 * rank.
 *
 * Output size along an axis follows ONNX, matching onnxruntime and PyTorch: the rule
 * Conv uses too, plus ceil_mode, so both compute it with nnp_window_out_size
 * (ops/spatial.h states it). With ceil_mode the last window must start inside the input
 * or the left padding, i.e. (out-1)*s < in + pb, else it is dropped.
 *
 * Padding never takes part in MaxPool. AveragePool divides by the number of taps inside
 * the input (count_include_pad = 0) or inside the padded input [-pb, in+pe)
 * (count_include_pad = 1; taps that ceil_mode pushes past the end padding do not count).
 *
 * The valid tap range of every output position along every axis is computed once per
 * call into scratch, so the window loops carry no bounds tests.
 *
 * Types: float32, float64, float16 (computed in float); MaxPool also int8 and uint8. */
#include <math.h>
#include <string.h>

#include "ops/fast_ops.h"
#include "ops/op_util.h"
#include "ops/spatial.h"

typedef struct pool_geom {
  nnp_window win;         /* spatial geometry, normalised to NNP_WINDOW_AXES slots */
  int64_t nc;             /* N * C planes */
  bool count_include_pad;
  bool col_major_indices; /* MaxPool storage_order = 1 */
} pool_geom;

static nnp_status bool_attr(const nnp_node *node, const char *name, bool *out) {
  int64_t v = nnp_attr_int(node, name, 0);
  if (v != 0 && v != 1)
    return nnp_error(NNP_ERR_UNSUPPORTED, "attribute '%s' = %lld must be 0 or 1", name, (long long)v);
  *out = v == 1;
  return NNP_OK;
}

/* Validates a MaxPool/AveragePool node and derives its geometry. Called by infer and
 * again by the kernel so both see the same numbers. */
static nnp_status pool_parse(const nnp_op_ctx *ctx, bool is_max, pool_geom *g) {
  const nnp_tensor *x = ctx->in[0];
  const nnp_node *node = ctx->node;
  memset(g, 0, sizeof *g);
  if (!x || !nnp_out(ctx, 0)) return nnp_error(NNP_ERR_SHAPE, "input X and output Y are required");
  if (is_max)
    NNP_TRY(nnp_check_dtype(x, "input X", NNP_F32, NNP_F64, NNP_F16, NNP_I8, NNP_U8, NNP_UNDEFINED));
  else
    NNP_TRY(nnp_check_dtype(x, "input X", NNP_F32, NNP_F64, NNP_F16, NNP_UNDEFINED));
  if (x->rank < 3 || x->rank > 2 + NNP_WINDOW_AXES)
    return nnp_error(NNP_ERR_UNSUPPORTED,
                     "input X has rank %d; only 1D, 2D and 3D pooling (rank 3..5) is supported", x->rank);
  const int nsp = x->rank - 2, off = NNP_WINDOW_AXES - nsp;
  if (nnp_mul_overflows(x->dims[0], x->dims[1], &g->nc))
    return nnp_error(NNP_ERR_LIMIT, "N x C overflows");

  const int64_t *kv = NULL;
  if (nnp_attr_ints(node, "kernel_shape", &kv) <= 0)
    return nnp_error(NNP_ERR_SHAPE, "attribute 'kernel_shape' is required");
  int64_t k[NNP_WINDOW_AXES];
  NNP_TRY(nnp_spatial_ints(node, "kernel_shape", nsp, 1, 1, NNP_WINDOW_ATTR_MAX, k));
  nnp_window_init(&g->win, nsp, x->dims + 2, k);
  NNP_TRY(nnp_window_read_strides_dilations_pads(node, &g->win));
  bool ceil_mode = false;
  NNP_TRY(bool_attr(node, "ceil_mode", &ceil_mode));
  if (is_max) {
    NNP_TRY(bool_attr(node, "storage_order", &g->col_major_indices));
  } else {
    NNP_TRY(bool_attr(node, "count_include_pad", &g->count_include_pad));
  }
  nnp_auto_pad mode = NNP_AUTO_PAD_NOTSET;
  NNP_TRY(nnp_read_auto_pad(node, &mode));
  for (int i = off; i < NNP_WINDOW_AXES; i++) {
    int64_t ek = 0;
    if (nnp_kernel_extent_overflows(g->win.k[i], g->win.d[i], &ek))
      return nnp_error(NNP_ERR_LIMIT, "kernel extent along spatial axis %d overflows", i - off);
    NNP_TRY(nnp_window_out_size(&g->win, i, ek, mode, ceil_mode));
  }
  return NNP_OK;
}

/* Scratch: for each axis and output position, [lo, hi) of taps inside the input and
 * the number of taps inside the padded input. None for an empty output (which may
 * still have huge spatial sizes when N or C is 0). */
static bool pool_empty(const pool_geom *g) {
  return g->nc == 0 || g->win.out[0] == 0 || g->win.out[1] == 0 || g->win.out[2] == 0;
}
static size_t pool_scratch_bytes(const pool_geom *g) {
  if (pool_empty(g)) return 0;
  return (size_t)(3 * (g->win.out[0] + g->win.out[1] + g->win.out[2])) * sizeof(int64_t);
}

static nnp_status infer_pool(nnp_op_ctx *ctx, bool is_max) {
  pool_geom g;
  NNP_TRY(pool_parse(ctx, is_max, &g));
  const nnp_tensor *x = ctx->in[0];
  int64_t dims[2 + NNP_WINDOW_AXES];
  dims[0] = x->dims[0];
  dims[1] = x->dims[1];
  for (int i = 0; i < g.win.nsp; i++) dims[2 + i] = g.win.out[NNP_WINDOW_AXES - g.win.nsp + i];
  size_t nb;
  NNP_TRY(nnp_shape_nbytes(NNP_I64, x->rank, dims, &nb));
  nnp_set_shape(ctx->out[0], x->dtype, x->rank, dims);
  nnp_tensor *idx = nnp_out(ctx, 1);
  if (idx) nnp_set_shape(idx, NNP_I64, x->rank, dims); /* MaxPool only (arity) */
  ctx->scratch_needed = pool_scratch_bytes(&g);
  return NNP_OK;
}

static void fill_ranges(const pool_geom *g, int64_t *scr) {
  const nnp_window *win = &g->win;
  for (int a = 0; a < NNP_WINDOW_AXES; a++) {
    const int64_t s = win->s[a], d = win->d[a], pb = win->pb[a], k = win->k[a], in = win->in[a];
    for (int64_t o = 0; o < win->out[a]; o++, scr += 3) {
      const int64_t start = o * s - pb;
      /* [lo, hi): taps with 0 <= start + j*d < in */
      nnp_in_bounds_range(start, d, k, in, &scr[0], &scr[1]);
      /* scr[2]: taps inside the padded input, -pb <= start + j*d < in + pe. As start >= -pb
       * always, they are j in [0, scr[2]): only the end of that range is needed. */
      int64_t lo_padded;
      nnp_in_bounds_range(start, d, k, in + win->pe[a], &lo_padded, &scr[2]);
    }
  }
}

/* LD converts an element to the accumulation type ACC, ST converts back. */
#define LD_PLAIN(p, i) ((p)[i])
#define ST_PLAIN(T, v) ((T)(v))
#define LD_F16(p, i) nnp_f16_to_f32((p)[i])
#define ST_F16(T, v) nnp_f32_to_f16((float)(v))

#define DEFINE_MAX_POOL(SUF, T, ACC, LOWEST, LD, ST)                                      \
  static void max_pool_##SUF(const pool_geom *g, const T *x, T *y, int64_t *ind,          \
                             const int64_t *scr) {                                        \
    NNP_WINDOW_LOCALS(&g->win);                                                           \
    const int64_t *rd = scr, *rh = rd + 3 * OD, *rw = rh + 3 * OH;                        \
    const int64_t plane = ID * IH * IW;                                                   \
    /* Index strides of the spatial axes in the Indices output's flattening. */           \
    const int64_t xd = g->col_major_indices ? 1 : IH * IW;                                \
    const int64_t xh = g->col_major_indices ? ID : IW;                                    \
    const int64_t xw = g->col_major_indices ? ID * IH : 1;                                \
    for (int64_t p = 0; p < g->nc; p++) {                                                 \
      const T *xp = x + p * plane;                                                        \
      for (int64_t od = 0; od < OD; od++)                                                 \
        for (int64_t oh = 0; oh < OH; oh++)                                               \
          for (int64_t ow = 0; ow < OW; ow++) {                                           \
            ACC best = LOWEST;                                                            \
            int64_t bi = -1;                                                              \
            for (int64_t kd = rd[3 * od]; kd < rd[3 * od + 1]; kd++) {                    \
              const int64_t id = od * sd - pd + kd * dd;                                  \
              for (int64_t kh = rh[3 * oh]; kh < rh[3 * oh + 1]; kh++) {                  \
                const int64_t ih = oh * sh - ph + kh * dh;                                \
                const T *row = xp + (id * IH + ih) * IW;                                  \
                for (int64_t kw = rw[3 * ow]; kw < rw[3 * ow + 1]; kw++) {                \
                  const int64_t iw = ow * sw - pw + kw * dw;                              \
                  ACC v = LD(row, iw);                                                    \
                  /* First tap always taken, then strictly greater: ties keep the first. */ \
                  if (bi < 0 || v > best) {                                               \
                    best = v;                                                             \
                    bi = id * xd + ih * xh + iw * xw;                                     \
                  }                                                                       \
                }                                                                         \
              }                                                                           \
            }                                                                             \
            int64_t o = ((p * OD + od) * OH + oh) * OW + ow;                              \
            y[o] = ST(T, best);                                                           \
            if (ind) ind[o] = bi < 0 ? -1 : p * plane + bi;                               \
          }                                                                               \
    }                                                                                     \
  }

DEFINE_MAX_POOL(f32, float, float, -INFINITY, LD_PLAIN, ST_PLAIN)
DEFINE_MAX_POOL(f64, double, double, -INFINITY, LD_PLAIN, ST_PLAIN)
DEFINE_MAX_POOL(f16, uint16_t, float, -INFINITY, LD_F16, ST_F16)
DEFINE_MAX_POOL(i8, int8_t, int8_t, INT8_MIN, LD_PLAIN, ST_PLAIN)
DEFINE_MAX_POOL(u8, uint8_t, uint8_t, 0, LD_PLAIN, ST_PLAIN)

/* Accumulates in double: windows can be large and the divisor is exact. */
#define DEFINE_AVG_POOL(SUF, T, LD, ST)                                                   \
  static void avg_pool_##SUF(const pool_geom *g, const T *x, T *y, const int64_t *scr) {  \
    NNP_WINDOW_LOCALS(&g->win);                                                           \
    const int64_t *rd = scr, *rh = rd + 3 * OD, *rw = rh + 3 * OH;                        \
    const int64_t plane = ID * IH * IW;                                                   \
    const bool incl = g->count_include_pad;                                               \
    for (int64_t p = 0; p < g->nc; p++) {                                                 \
      const T *xp = x + p * plane;                                                        \
      for (int64_t od = 0; od < OD; od++)                                                 \
        for (int64_t oh = 0; oh < OH; oh++)                                               \
          for (int64_t ow = 0; ow < OW; ow++) {                                           \
            const int64_t *a = &rd[3 * od], *b = &rh[3 * oh], *c = &rw[3 * ow];           \
            double sum = 0;                                                               \
            for (int64_t kd = a[0]; kd < a[1]; kd++) {                                    \
              const int64_t id = od * sd - pd + kd * dd;                                  \
              for (int64_t kh = b[0]; kh < b[1]; kh++) {                                  \
                const int64_t ih = oh * sh - ph + kh * dh;                                \
                const T *row = xp + (id * IH + ih) * IW;                                  \
                for (int64_t kw = c[0]; kw < c[1]; kw++) sum += LD(row, ow * sw - pw + kw * dw); \
              }                                                                           \
            }                                                                             \
            int64_t cnt = incl ? a[2] * b[2] * c[2]                                       \
                               : (a[1] - a[0]) * (b[1] - b[0]) * (c[1] - c[0]);           \
            /* A window entirely in padding has no taps: define its average as 0. */      \
            y[((p * OD + od) * OH + oh) * OW + ow] = ST(T, cnt > 0 ? sum / (double)cnt : 0.0); \
          }                                                                               \
    }                                                                                     \
  }

DEFINE_AVG_POOL(f32, float, LD_PLAIN, ST_PLAIN)
DEFINE_AVG_POOL(f64, double, LD_PLAIN, ST_PLAIN)
DEFINE_AVG_POOL(f16, uint16_t, LD_F16, ST_F16)

static nnp_status ref_pool(nnp_op_ctx *ctx, bool is_max) {
  pool_geom g;
  NNP_TRY(pool_parse(ctx, is_max, &g));
  if (pool_empty(&g)) return NNP_OK;
  if (ctx->scratch_size < pool_scratch_bytes(&g))
    return nnp_error(NNP_ERR_INTERNAL, "pool scratch too small");
  int64_t *scr = ctx->scratch;
  fill_ranges(&g, scr);
  const nnp_tensor *x = ctx->in[0];
  nnp_tensor *y = ctx->out[0], *ind = nnp_out(ctx, 1);
  int64_t *ip = ind ? ind->data : NULL;
  if (is_max) {
    switch (x->dtype) {
      case NNP_F32: max_pool_f32(&g, x->data, y->data, ip, scr); break;
      case NNP_F64: max_pool_f64(&g, x->data, y->data, ip, scr); break;
      case NNP_F16: max_pool_f16(&g, x->data, y->data, ip, scr); break;
      case NNP_I8: max_pool_i8(&g, x->data, y->data, ip, scr); break;
      case NNP_U8: max_pool_u8(&g, x->data, y->data, ip, scr); break;
      default: return nnp_error(NNP_ERR_INTERNAL, "MaxPool: unexpected type");
    }
  } else {
    switch (x->dtype) {
      case NNP_F32: avg_pool_f32(&g, x->data, y->data, scr); break;
      case NNP_F64: avg_pool_f64(&g, x->data, y->data, scr); break;
      case NNP_F16: avg_pool_f16(&g, x->data, y->data, scr); break;
      default: return nnp_error(NNP_ERR_INTERNAL, "AveragePool: unexpected type");
    }
  }
  return NNP_OK;
}

static nnp_status infer_max_pool(nnp_op_ctx *ctx) { return infer_pool(ctx, true); }
static nnp_status ref_max_pool(nnp_op_ctx *ctx) { return ref_pool(ctx, true); }
static nnp_status infer_average_pool(nnp_op_ctx *ctx) { return infer_pool(ctx, false); }
static nnp_status ref_average_pool(nnp_op_ctx *ctx) { return ref_pool(ctx, false); }

const nnp_op_info nnp_op_max_pool = {.name = "MaxPool", .min_inputs = 1, .max_inputs = 1,
                                     .min_outputs = 1, .max_outputs = 2,
                                     .infer = infer_max_pool, .ref = ref_max_pool,
                                     .prepare = nnp_prepare_pool};
const nnp_op_info nnp_op_average_pool = {.name = "AveragePool", .min_inputs = 1, .max_inputs = 1,
                                         .min_outputs = 1, .max_outputs = 1,
                                         .infer = infer_average_pool, .ref = ref_average_pool,
                                         .prepare = nnp_prepare_pool};

/* ---------------------------------------------------------------------------------
 * GlobalMaxPool / GlobalAveragePool: reduce every (n, c) plane to one value. */

static nnp_status infer_global_pool(nnp_op_ctx *ctx) {
  const nnp_tensor *x = ctx->in[0];
  if (!x || !nnp_out(ctx, 0)) return nnp_error(NNP_ERR_SHAPE, "input X and output Y are required");
  NNP_TRY(nnp_check_dtype(x, "input X", NNP_F32, NNP_F64, NNP_F16, NNP_UNDEFINED));
  if (x->rank < 3)
    return nnp_error(NNP_ERR_SHAPE, "input X must have rank >= 3 (N, C, spatial...), not %d", x->rank);
  int64_t dims[NNP_MAX_RANK];
  for (int i = 0; i < x->rank; i++) dims[i] = i < 2 ? x->dims[i] : 1;
  nnp_set_shape(ctx->out[0], x->dtype, x->rank, dims);
  return NNP_OK;
}

#define DEFINE_GLOBAL_POOL(SUF, T, LD, ST)                                                \
  static void global_pool_##SUF(const T *x, T *y, int64_t nc, int64_t plane, bool max) {  \
    for (int64_t p = 0; p < nc; p++) {                                                    \
      const T *xp = x + p * plane;                                                        \
      double acc;                                                                         \
      if (max) {                                                                          \
        acc = plane > 0 ? (double)LD(xp, 0) : -INFINITY;                                  \
        for (int64_t i = 1; i < plane; i++) {                                             \
          double v = (double)LD(xp, i);                                                   \
          if (v > acc) acc = v;                                                           \
        }                                                                                 \
      } else {                                                                            \
        acc = 0;                                                                          \
        for (int64_t i = 0; i < plane; i++) acc += (double)LD(xp, i);                     \
        acc = plane > 0 ? acc / (double)plane : NAN;                                      \
      }                                                                                   \
      y[p] = ST(T, acc);                                                                  \
    }                                                                                     \
  }

DEFINE_GLOBAL_POOL(f32, float, LD_PLAIN, ST_PLAIN)
DEFINE_GLOBAL_POOL(f64, double, LD_PLAIN, ST_PLAIN)
DEFINE_GLOBAL_POOL(f16, uint16_t, LD_F16, ST_F16)

static nnp_status ref_global_pool(nnp_op_ctx *ctx, bool max) {
  const nnp_tensor *x = ctx->in[0];
  int64_t nc = x->dims[0] * x->dims[1], plane = 1;
  for (int i = 2; i < x->rank; i++) plane *= x->dims[i];
  void *y = ctx->out[0]->data;
  switch (x->dtype) {
    case NNP_F32: global_pool_f32(x->data, y, nc, plane, max); break;
    case NNP_F64: global_pool_f64(x->data, y, nc, plane, max); break;
    case NNP_F16: global_pool_f16(x->data, y, nc, plane, max); break;
    default: return nnp_error(NNP_ERR_INTERNAL, "global pool: unexpected type");
  }
  return NNP_OK;
}

static nnp_status ref_global_average_pool(nnp_op_ctx *ctx) { return ref_global_pool(ctx, false); }
static nnp_status ref_global_max_pool(nnp_op_ctx *ctx) { return ref_global_pool(ctx, true); }

const nnp_op_info nnp_op_global_average_pool = {
    .name = "GlobalAveragePool", .min_inputs = 1, .max_inputs = 1, .min_outputs = 1,
    .max_outputs = 1, .infer = infer_global_pool, .ref = ref_global_average_pool,
    .prepare = nnp_prepare_pool};
const nnp_op_info nnp_op_global_max_pool = {
    .name = "GlobalMaxPool", .min_inputs = 1, .max_inputs = 1, .min_outputs = 1,
    .max_outputs = 1, .infer = infer_global_pool, .ref = ref_global_max_pool};
