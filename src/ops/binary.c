/* Elementwise binary, ternary and variadic ops with numpy multidirectional broadcasting:
 * Add Sub Mul Div Pow Mod, comparisons, And Or Xor, Where, Max Min Sum Mean, PRelu.
 *
 * Every op is driven by one broadcast plan: the operands' strides against the output
 * shape, with size-1 dimensions dropped and adjacent dimensions merged wherever every
 * operand steps through them uniformly. After merging, the innermost dimension of each
 * operand has stride 0 (broadcast) or 1 (contiguous), so the work is a sequence of rows
 * handed to a per-(op, dtype) row function that has four tight loops: both operands
 * contiguous (the same-shape case collapses into a single row), and either or both held
 * constant (scalar operand, and channel broadcast such as [N,C,H,W] + [C,1,1], which
 * merges into rows of H*W over one slope/bias value). Row broadcast ([M,N] + [N]) is
 * rows of N with the second operand's row pointer not advancing. No per-element index
 * division anywhere.
 *
 * Integer arithmetic is exact and wraps like numpy: it is done in an unsigned type of at
 * least the operand's width, so overflow is never undefined behaviour. */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "ops/fast_ops.h"
#include "ops/op_util.h"

/* ---------------------------------------------------------------------------------- */
/* Broadcast plan                                                                     */
/* ---------------------------------------------------------------------------------- */

#define MAX_OPERANDS 3

/* y[0..n) = f(x[0][i * s[0]], x[1][i * s[1]], ...), with each s[k] 0 or 1. */
typedef void (*row_fn)(void *y, const void *const *x, const int64_t *s, int64_t n,
                       const void *aux);

typedef struct bplan {
  int rank; /* >= 1 after coalescing */
  int n_in;
  int64_t dims[NNP_MAX_RANK];
  int64_t st[MAX_OPERANDS][NNP_MAX_RANK]; /* element strides of each operand */
} bplan;

static void bplan_build(bplan *p, const nnp_tensor *y, int n_in, const nnp_tensor *const *in) {
  int64_t st[MAX_OPERANDS][NNP_MAX_RANK];
  for (int k = 0; k < n_in; k++) nnp_broadcast_strides(in[k], y->rank, y->dims, st[k]);
  int r = 0;
  for (int d = 0; d < y->rank; d++) {
    if (y->dims[d] == 1) continue; /* contributes nothing to any offset */
    bool merge = r > 0;
    for (int k = 0; k < n_in && merge; k++) merge = p->st[k][r - 1] == st[k][d] * y->dims[d];
    if (merge) {
      p->dims[r - 1] *= y->dims[d];
      for (int k = 0; k < n_in; k++) p->st[k][r - 1] = st[k][d];
    } else {
      p->dims[r] = y->dims[d];
      for (int k = 0; k < n_in; k++) p->st[k][r] = st[k][d];
      r++;
    }
  }
  if (r == 0) { /* scalar output, or all dimensions 1 */
    p->dims[0] = 1;
    for (int k = 0; k < n_in; k++) p->st[k][0] = 0;
    r = 1;
  }
  p->rank = r;
  p->n_in = n_in;
}

/* One broadcast run cut into tasks: task t is chunk t % cpr (elements [c * chunk, ...)
 * of the row) of row t / cpr, so that a few long rows (a same-shape op is one row) still
 * spread over the threads. */
typedef struct bcast_job {
  bplan p;
  int64_t s[MAX_OPERANDS];
  size_t es[MAX_OPERANDS], ys;
  const char *base[MAX_OPERANDS];
  char *y;
  int64_t inner, chunk, cpr;
  row_fn fn;
  const void *aux;
} bcast_job;

static void bcast_tasks(void *ctx, int64_t b, int64_t e) {
  const bcast_job *j = ctx;
  const bplan *p = &j->p;
  int64_t row = b / j->cpr, c = b % j->cpr, idx[NNP_MAX_RANK] = {0}, off[MAX_OPERANDS] = {0};
  for (int64_t d = p->rank - 2, rest = row; d >= 0; d--) { /* the first row's offsets */
    idx[d] = rest % p->dims[d];
    rest /= p->dims[d];
    for (int k = 0; k < p->n_in; k++) off[k] += idx[d] * p->st[k][d];
  }
  for (int64_t t = b; t < e; t++) {
    const int64_t i0 = c * j->chunk, n = j->inner - i0 < j->chunk ? j->inner - i0 : j->chunk;
    const void *x[MAX_OPERANDS];
    for (int k = 0; k < p->n_in; k++) x[k] = j->base[k] + (size_t)(off[k] + i0 * j->s[k]) * j->es[k];
    j->fn(j->y + (size_t)(row * j->inner + i0) * j->ys, x, j->s, n, j->aux);
    if (++c < j->cpr) continue;
    c = 0, row++;
    for (int64_t d = p->rank - 2; d >= 0; d--) { /* odometer over the outer dimensions */
      for (int k = 0; k < p->n_in; k++) off[k] += p->st[k][d];
      if (++idx[d] < p->dims[d]) break;
      for (int k = 0; k < p->n_in; k++) off[k] -= p->st[k][d] * p->dims[d];
      idx[d] = 0;
    }
  }
}

/* Outputs smaller than this run on the caller: a pool run costs more than they do. */
enum { BCAST_POOLED = 32 * 1024, BCAST_CHUNK = 16 * 1024 };

/* Runs fn over every row of y. y must have its final shape; in[k] broadcast to it. The
 * reference runs it on the caller (tp NULL); the fast kernels (bcast_kernel) on the pool,
 * the same rows in the same row functions, so the same bits. */
static void bcast_run_tp(nnp_tensor *y, int n_in, const nnp_tensor *const *in, row_fn fn, const void *aux,
                         nnp_threadpool *tp) {
  const int64_t numel = nnp_tensor_numel(y);
  if (numel == 0) return;
  bcast_job j = {.y = y->data, .ys = nnp_dtype_size(y->dtype), .fn = fn, .aux = aux};
  bplan_build(&j.p, y, n_in, in);
  j.inner = j.p.dims[j.p.rank - 1];
  for (int k = 0; k < n_in; k++) {
    j.s[k] = j.p.st[k][j.p.rank - 1] ? 1 : 0;
    j.es[k] = nnp_dtype_size(in[k]->dtype);
    j.base[k] = in[k]->data;
  }
  const bool pooled = tp && nnp_threadpool_threads(tp) > 1 && numel >= BCAST_POOLED;
  j.chunk = pooled && j.inner > BCAST_CHUNK ? BCAST_CHUNK : j.inner;
  j.cpr = (j.inner + j.chunk - 1) / j.chunk;
  const int64_t tasks = numel / j.inner * j.cpr;
  if (pooled) nnp_threadpool_run(tp, bcast_tasks, &j, tasks);
  else bcast_tasks(&j, 0, tasks);
}

static void bcast_run(nnp_tensor *y, int n_in, const nnp_tensor *const *in, row_fn fn, const void *aux) {
  bcast_run_tp(y, n_in, in, fn, aux, NULL);
}

/* ---------------------------------------------------------------------------------- */
/* Scalar helpers per type                                                            */
/* ---------------------------------------------------------------------------------- */

#define LD_ID(v) (v)
#define ST_ID(v) (v)
#define LD_F16(v) nnp_f16_to_f32(v)
#define ST_F16(v) nnp_f32_to_f16(v)
#define ST_BOOL(v) ((uint8_t)((v) != 0))

/* Float helpers: sfx, compute type. float16 computes in float. Max/Min propagate NaN
 * like numpy.maximum (the ONNX reference). */
#define DEF_FLOAT_HELPERS(sfx, CT)                                                     \
  static inline CT add_##sfx(CT a, CT b) { return a + b; }                             \
  static inline CT sub_##sfx(CT a, CT b) { return a - b; }                             \
  static inline CT mul_##sfx(CT a, CT b) { return a * b; }                             \
  static inline CT div_##sfx(CT a, CT b) { return a / b; }                             \
  static inline CT max_##sfx(CT a, CT b) { return (a > b || a != a) ? a : b; }         \
  static inline CT min_##sfx(CT a, CT b) { return (a < b || a != a) ? a : b; }         \
  static inline CT prelu_##sfx(CT a, CT b) { return a < 0 ? a * b : a; }
DEF_FLOAT_HELPERS(f32, float)
DEF_FLOAT_HELPERS(f64, double)
DEF_FLOAT_HELPERS(f16, float)

/* Integer helpers: sfx, type, unsigned type at least as wide (and at least unsigned int,
 * so that no operand is promoted to signed int before multiplying). Division truncates
 * toward zero like C (the ONNX reference for integer Div, e.g. test_div_uint8); x/0 gives
 * 0 and INT_MIN/-1 wraps, instead of trapping. */
#define DEF_INT_HELPERS(sfx, T, UW, IS_SIGNED)                                         \
  static inline T add_##sfx(T a, T b) { return (T)((UW)a + (UW)b); }                   \
  static inline T sub_##sfx(T a, T b) { return (T)((UW)a - (UW)b); }                   \
  static inline T mul_##sfx(T a, T b) { return (T)((UW)a * (UW)b); }                   \
  static inline T div_##sfx(T a, T b) {                                                \
    if (b == 0) return 0;                                                              \
    if (IS_SIGNED && b == (T)-1) return (T)(0u - (UW)a);                               \
    return (T)(a / b);                                                                 \
  }                                                                                    \
  static inline T max_##sfx(T a, T b) { return a > b ? a : b; }                        \
  static inline T min_##sfx(T a, T b) { return a < b ? a : b; }
/* PRelu on integers: unsigned inputs are never negative, so they pass through. */
#define DEF_SINT_HELPERS(sfx, T, UW)                                                   \
  DEF_INT_HELPERS(sfx, T, UW, 1)                                                       \
  static inline T prelu_##sfx(T a, T b) { return a < 0 ? mul_##sfx(a, b) : a; }
#define DEF_UINT_HELPERS(sfx, T, UW)                                                   \
  DEF_INT_HELPERS(sfx, T, UW, 0)                                                       \
  static inline T prelu_##sfx(T a, T b) { (void)b; return a; }
DEF_SINT_HELPERS(i8, int8_t, uint32_t)
DEF_SINT_HELPERS(i16, int16_t, uint32_t)
DEF_SINT_HELPERS(i32, int32_t, uint32_t)
DEF_SINT_HELPERS(i64, int64_t, uint64_t)
DEF_UINT_HELPERS(u8, uint8_t, uint32_t)
DEF_UINT_HELPERS(u16, uint16_t, uint32_t)
DEF_UINT_HELPERS(u32, uint32_t, uint32_t)
DEF_UINT_HELPERS(u64, uint64_t, uint64_t)

#define CMP_EQ(a, b) ((a) == (b))
#define CMP_LT(a, b) ((a) < (b))
#define CMP_GT(a, b) ((a) > (b))
#define CMP_LE(a, b) ((a) <= (b))
#define CMP_GE(a, b) ((a) >= (b))
#define LOG_AND(a, b) ((a) & (b))
#define LOG_OR(a, b) ((a) | (b))
#define LOG_XOR(a, b) ((a) ^ (b))

/* X(ARG, sfx, dtype, storage type, compute type, load, store) for the numeric types. */
#define FOR_NUMERIC(X, A)                                   \
  X(A, f32, NNP_F32, float, float, LD_ID, ST_ID)            \
  X(A, f64, NNP_F64, double, double, LD_ID, ST_ID)          \
  X(A, f16, NNP_F16, uint16_t, float, LD_F16, ST_F16)       \
  X(A, i8, NNP_I8, int8_t, int8_t, LD_ID, ST_ID)            \
  X(A, i16, NNP_I16, int16_t, int16_t, LD_ID, ST_ID)        \
  X(A, i32, NNP_I32, int32_t, int32_t, LD_ID, ST_ID)        \
  X(A, i64, NNP_I64, int64_t, int64_t, LD_ID, ST_ID)        \
  X(A, u8, NNP_U8, uint8_t, uint8_t, LD_ID, ST_ID)          \
  X(A, u16, NNP_U16, uint16_t, uint16_t, LD_ID, ST_ID)      \
  X(A, u32, NNP_U32, uint32_t, uint32_t, LD_ID, ST_ID)      \
  X(A, u64, NNP_U64, uint64_t, uint64_t, LD_ID, ST_ID)
#define FOR_FLOAT(X, A)                                     \
  X(A, f32, NNP_F32, float, float, LD_ID, ST_ID)            \
  X(A, f64, NNP_F64, double, double, LD_ID, ST_ID)          \
  X(A, f16, NNP_F16, uint16_t, float, LD_F16, ST_F16)
#define LD_BOOL(v) ((v) != 0)

/* ---------------------------------------------------------------------------------- */
/* Row functions                                                                      */
/* ---------------------------------------------------------------------------------- */

#define DEF_ROW2(NAME, TA, CT, TY, LD, ST, F)                                          \
  static void NAME(void *yv, const void *const *x, const int64_t *s, int64_t n,        \
                   const void *aux) {                                                  \
    (void)aux;                                                                         \
    const TA *a = x[0], *b = x[1];                                                     \
    TY *y = yv;                                                                        \
    if (s[0] && s[1]) {                                                                \
      for (int64_t i = 0; i < n; i++) y[i] = ST(F((CT)LD(a[i]), (CT)LD(b[i])));       \
    } else if (s[0]) {                                                                 \
      const CT vb = (CT)LD(b[0]);                                                      \
      for (int64_t i = 0; i < n; i++) y[i] = ST(F((CT)LD(a[i]), vb));                  \
    } else if (s[1]) {                                                                 \
      const CT va = (CT)LD(a[0]);                                                      \
      for (int64_t i = 0; i < n; i++) y[i] = ST(F(va, (CT)LD(b[i])));                  \
    } else {                                                                           \
      const TY r = ST(F((CT)LD(a[0]), (CT)LD(b[0])));                                  \
      for (int64_t i = 0; i < n; i++) y[i] = r;                                        \
    }                                                                                  \
  }

/* Same-type ops (arithmetic, Max/Min, PRelu): output type = input type. */
#define X_ROW_SAME(OP, sfx, DT, T, CT, LD, ST) DEF_ROW2(OP##_row_##sfx, T, CT, T, LD, ST, OP##_##sfx)
#define X_ENTRY(OP, sfx, DT, T, CT, LD, ST) [DT] = OP##_row_##sfx,
#define TABLE_SIZE (NNP_U64 + 1)

#define DEF_SAME_TABLE(OP)                      \
  FOR_NUMERIC(X_ROW_SAME, OP)                   \
  static const row_fn OP##_rows[TABLE_SIZE] = {FOR_NUMERIC(X_ENTRY, OP)};

DEF_SAME_TABLE(add)
DEF_SAME_TABLE(sub)
DEF_SAME_TABLE(mul)
DEF_SAME_TABLE(div)
DEF_SAME_TABLE(max)
DEF_SAME_TABLE(min)
DEF_SAME_TABLE(prelu)

/* Comparisons: bool output; Equal also takes bool inputs. */
#define X_ROW_CMP(OP, sfx, DT, T, CT, LD, ST) DEF_ROW2(OP##_row_##sfx, T, CT, uint8_t, LD, ST_BOOL, OP)
#define DEF_CMP_TABLE(OP)                                                   \
  FOR_NUMERIC(X_ROW_CMP, OP)                                                \
  static const row_fn OP##_rows[TABLE_SIZE] = {FOR_NUMERIC(X_ENTRY, OP)};
DEF_CMP_TABLE(CMP_LT)
DEF_CMP_TABLE(CMP_GT)
DEF_CMP_TABLE(CMP_LE)
DEF_CMP_TABLE(CMP_GE)
FOR_NUMERIC(X_ROW_CMP, CMP_EQ)
DEF_ROW2(CMP_EQ_row_bool, uint8_t, uint8_t, uint8_t, LD_BOOL, ST_BOOL, CMP_EQ)
static const row_fn CMP_EQ_rows[TABLE_SIZE] = {FOR_NUMERIC(X_ENTRY, CMP_EQ)[NNP_BOOL] = CMP_EQ_row_bool};

/* Logical ops on bool (normalised to 0/1 on load so any nonzero byte counts as true). */
DEF_ROW2(and_row_bool, uint8_t, uint8_t, uint8_t, LD_BOOL, ST_BOOL, LOG_AND)
DEF_ROW2(or_row_bool, uint8_t, uint8_t, uint8_t, LD_BOOL, ST_BOOL, LOG_OR)
DEF_ROW2(xor_row_bool, uint8_t, uint8_t, uint8_t, LD_BOOL, ST_BOOL, LOG_XOR)
static const row_fn and_rows[TABLE_SIZE] = {[NNP_BOOL] = and_row_bool};
static const row_fn or_rows[TABLE_SIZE] = {[NNP_BOOL] = or_row_bool};
static const row_fn xor_rows[TABLE_SIZE] = {[NNP_BOOL] = xor_row_bool};

/* Where: condition, x, y; x/y are copied as raw bits, so one row per element size. */
#define DEF_WHERE_ROW(BITS)                                                            \
  static void where_row_##BITS(void *yv, const void *const *x, const int64_t *s,       \
                               int64_t n, const void *aux) {                           \
    (void)aux;                                                                         \
    const uint8_t *c = x[0];                                                           \
    const uint##BITS##_t *a = x[1], *b = x[2];                                         \
    uint##BITS##_t *y = yv;                                                            \
    if (s[0] && s[1] && s[2]) {                                                        \
      for (int64_t i = 0; i < n; i++) y[i] = c[i] ? a[i] : b[i];                       \
    } else {                                                                           \
      int64_t sc = s[0], sa = s[1], sb = s[2];                                         \
      for (int64_t i = 0; i < n; i++) y[i] = c[i * sc] ? a[i * sa] : b[i * sb];        \
    }                                                                                  \
  }
DEF_WHERE_ROW(8)
DEF_WHERE_ROW(16)
DEF_WHERE_ROW(32)
DEF_WHERE_ROW(64)

/* ---------------------------------------------------------------------------------- */
/* Pow                                                                                */
/* ---------------------------------------------------------------------------------- */

/* The base's type is the output type; the exponent may be any numeric type (opset 12+).
 * float32 ^ float32 has its own row; every other pairing goes through per-element loads,
 * computing in double for float bases and exactly in int64 for int ^ int. */
static inline float pow_f32(float a, float b) { return powf(a, b); }
DEF_ROW2(pow_row_f32, float, float, float, LD_ID, ST_ID, pow_f32)
/* x^2 (variance in decomposed LayerNorm): x*x is the correctly rounded square (powf is
 * within an ulp of it) at a fraction of the cost. */
static inline float square_f32(float a, float b) { (void)b; return a * a; }
DEF_ROW2(square_row_f32, float, float, float, LD_ID, ST_ID, square_f32)

typedef struct pow_aux {
  nnp_dtype ta, tb, ty;
} pow_aux;

static inline double load_f64(nnp_dtype dt, const void *p, int64_t i) {
  switch (dt) {
    case NNP_F32: return ((const float *)p)[i];
    case NNP_F64: return ((const double *)p)[i];
    case NNP_F16: return nnp_f16_to_f32(((const uint16_t *)p)[i]);
    case NNP_I8: return ((const int8_t *)p)[i];
    case NNP_I16: return ((const int16_t *)p)[i];
    case NNP_I32: return ((const int32_t *)p)[i];
    case NNP_I64: return (double)((const int64_t *)p)[i];
    case NNP_U8: return ((const uint8_t *)p)[i];
    case NNP_U16: return ((const uint16_t *)p)[i];
    case NNP_U32: return ((const uint32_t *)p)[i];
    case NNP_U64: return (double)((const uint64_t *)p)[i];
    default: return 0;
  }
}

static inline int64_t load_i64(nnp_dtype dt, const void *p, int64_t i) {
  switch (dt) {
    case NNP_I8: return ((const int8_t *)p)[i];
    case NNP_I16: return ((const int16_t *)p)[i];
    case NNP_I32: return ((const int32_t *)p)[i];
    case NNP_I64: return ((const int64_t *)p)[i];
    case NNP_U8: return ((const uint8_t *)p)[i];
    case NNP_U16: return ((const uint16_t *)p)[i];
    case NNP_U32: return ((const uint32_t *)p)[i];
    /* Exponents beyond INT64_MAX saturate: any |base| >= 2 overflows long before. */
    case NNP_U64: {
      uint64_t v = ((const uint64_t *)p)[i];
      return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
    }
    default: return 0;
  }
}

/* Stores an int64 into an integer element, wrapping like a numpy astype. */
static inline void store_i64(nnp_dtype dt, void *p, int64_t i, int64_t v) {
  switch (dt) {
    case NNP_I8: ((int8_t *)p)[i] = (int8_t)(uint8_t)(uint64_t)v; break;
    case NNP_I16: ((int16_t *)p)[i] = (int16_t)(uint16_t)(uint64_t)v; break;
    case NNP_I32: ((int32_t *)p)[i] = (int32_t)(uint32_t)(uint64_t)v; break;
    case NNP_I64: ((int64_t *)p)[i] = v; break;
    case NNP_U8: ((uint8_t *)p)[i] = (uint8_t)(uint64_t)v; break;
    case NNP_U16: ((uint16_t *)p)[i] = (uint16_t)(uint64_t)v; break;
    case NNP_U32: ((uint32_t *)p)[i] = (uint32_t)(uint64_t)v; break;
    case NNP_U64: ((uint64_t *)p)[i] = (uint64_t)v; break;
    default: break;
  }
}

/* A double result into any numeric element; into integers it truncates toward zero and
 * saturates at int64's range (NaN -> 0), then wraps into narrower types. */
static inline void store_f64(nnp_dtype dt, void *p, int64_t i, double v) {
  switch (dt) {
    case NNP_F32: ((float *)p)[i] = (float)v; break;
    case NNP_F64: ((double *)p)[i] = v; break;
    case NNP_F16: ((uint16_t *)p)[i] = nnp_f32_to_f16((float)v); break;
    default: {
      int64_t iv = v != v ? 0 : v <= -9223372036854775808.0 ? INT64_MIN
                   : v >= 9223372036854775808.0 ? INT64_MAX : (int64_t)v;
      store_i64(dt, p, i, iv);
    }
  }
}

/* Exact integer power with wrap-around; negative exponents truncate 1/b^e toward zero
 * (0 unless |b| == 1; 0^-e gives 0 rather than trapping). */
static int64_t ipow(int64_t base, int64_t e) {
  if (e < 0) {
    if (base == 1) return 1;
    if (base == -1) return (e & 1) ? -1 : 1;
    return 0;
  }
  uint64_t r = 1, b = (uint64_t)base;
  while (e) {
    if (e & 1) r *= b;
    b *= b;
    e >>= 1;
  }
  return (int64_t)r;
}

static void pow_row_generic(void *y, const void *const *x, const int64_t *s, int64_t n,
                            const void *auxv) {
  const pow_aux *aux = auxv;
  const int64_t sa = s[0], sb = s[1];
  bool int_int = nnp_dtype_is_int(aux->ta) && nnp_dtype_is_int(aux->tb);
  if (int_int) {
    for (int64_t i = 0; i < n; i++)
      store_i64(aux->ty, y, i, ipow(load_i64(aux->ta, x[0], i * sa), load_i64(aux->tb, x[1], i * sb)));
  } else {
    for (int64_t i = 0; i < n; i++)
      store_f64(aux->ty, y, i, pow(load_f64(aux->ta, x[0], i * sa), load_f64(aux->tb, x[1], i * sb)));
  }
}

/* ---------------------------------------------------------------------------------- */
/* Shape inference                                                                    */
/* ---------------------------------------------------------------------------------- */

static const nnp_tensor *need_input(const nnp_op_ctx *ctx, int i, nnp_status *st) {
  const nnp_tensor *t = nnp_in(ctx, i);
  *st = t ? NNP_OK : nnp_error(NNP_ERR_SHAPE, "input %d is missing", i);
  return t;
}

/* Before opset 7, binary ops broadcast only with attribute broadcast=1, and then B along
 * A's dimensions starting at `axis`. Numpy rules agree when no broadcast is requested
 * with equal shapes, and for the default suffix alignment. Anything else is rejected. */
static nnp_status check_legacy_broadcast(const nnp_op_ctx *ctx, const nnp_tensor *a,
                                         const nnp_tensor *b) {
  if (ctx->opset >= 7) return NNP_OK;
  int64_t bc = nnp_attr_int(ctx->node, "broadcast", 0);
  if (!bc) {
    if (!nnp_tensor_same_shape(a, b))
      return nnp_error(NNP_ERR_SHAPE, "inputs have different shapes and broadcast=0 (opset %lld)",
                       (long long)ctx->opset);
    return NNP_OK;
  }
  const nnp_attr *ax = nnp_node_attr(ctx->node, "axis");
  if (ax) {
    int64_t axis = ax->i < 0 ? ax->i + a->rank : ax->i;
    if (axis != a->rank - b->rank)
      return nnp_error(NNP_ERR_UNSUPPORTED, "legacy broadcast with axis=%lld is not supported "
                       "(only suffix alignment, axis=%d)", (long long)ax->i, a->rank - b->rank);
  }
  if (b->rank > a->rank)
    return nnp_error(NNP_ERR_SHAPE, "legacy broadcast needs rank(B) <= rank(A)");
  return NNP_OK;
}

static nnp_status check_table(const row_fn *rows, nnp_dtype dt, const char *what) {
  if ((unsigned)dt >= TABLE_SIZE || !rows[dt])
    return nnp_error(NNP_ERR_UNSUPPORTED, "%s of type %s is not supported", what, nnp_dtype_name(dt));
  return NNP_OK;
}

/* Two inputs of one type found in `rows`; output type out_dt (UNDEFINED: same). `legacy`:
 * the op had the broadcast/axis attributes before opset 7 (PRelu never did). */
static nnp_status infer_binary_table(nnp_op_ctx *ctx, const row_fn *rows, nnp_dtype out_dt,
                                     bool legacy) {
  nnp_status st;
  const nnp_tensor *a = need_input(ctx, 0, &st);
  if (!a) return st;
  const nnp_tensor *b = need_input(ctx, 1, &st);
  if (!b) return st;
  if (a->dtype != b->dtype)
    return nnp_error(NNP_ERR_SHAPE, "inputs have different types: %s and %s",
                     nnp_dtype_name(a->dtype), nnp_dtype_name(b->dtype));
  NNP_TRY(check_table(rows, a->dtype, "input"));
  if (legacy) NNP_TRY(check_legacy_broadcast(ctx, a, b));
  int rank;
  int64_t dims[NNP_MAX_RANK];
  NNP_TRY(nnp_broadcast_shapes(a->rank, a->dims, b->rank, b->dims, &rank, dims));
  nnp_set_shape(ctx->out[0], out_dt == NNP_UNDEFINED ? a->dtype : out_dt, rank, dims);
  return NNP_OK;
}

static nnp_status run_binary_table(nnp_op_ctx *ctx, const row_fn *rows, nnp_threadpool *tp) {
  const nnp_tensor *in[2] = {ctx->in[0], ctx->in[1]};
  bcast_run_tp(ctx->out[0], 2, in, rows[in[0]->dtype], NULL, tp);
  return NNP_OK;
}

/* The fast kernel of the broadcast ops: the reference's rows over the pool (bcast_run_tp).
 * Why: Swin's attention-bias Adds, mask Wheres and Subs, ViT's query Div, and the other
 * broadcasts no specialised kernel takes ran single-threaded on the reference kernel. */
typedef struct bcast_kernel {
  nnp_status (*run)(nnp_op_ctx *ctx, nnp_threadpool *tp);
  const char *name;
} bcast_kernel;

static nnp_status run_bcast_kernel(void *state, nnp_op_ctx *ctx) {
  return ((const bcast_kernel *)state)->run(ctx, ctx->pool);
}

static nnp_status prepare_bcast(const bcast_kernel *k, nnp_fast_kernel *out) {
  memset(out, 0, sizeof *out);
  out->run = run_bcast_kernel;
  out->state = (void *)k; /* static, not owned: no destroy */
  out->name = k->name;
  return NNP_OK;
}

#define DEF_BINARY(sym, ROWS, OUT_DT)                                                    \
  static nnp_status infer_##sym(nnp_op_ctx *ctx) { return infer_binary_table(ctx, ROWS, OUT_DT, true); } \
  static nnp_status pooled_##sym(nnp_op_ctx *ctx, nnp_threadpool *tp) { return run_binary_table(ctx, ROWS, tp); } \
  static nnp_status ref_##sym(nnp_op_ctx *ctx) { return pooled_##sym(ctx, NULL); }             \
  static const bcast_kernel bcast_##sym = {pooled_##sym, "eltwise." #sym ".rows"};            \
  static nnp_status prepare_##sym(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out) { \
    (void)ctx, (void)generic;                                                                   \
    return prepare_bcast(&bcast_##sym, out);                                                    \
  }

DEF_BINARY(add, add_rows, NNP_UNDEFINED)
DEF_BINARY(sub, sub_rows, NNP_UNDEFINED)
DEF_BINARY(mul, mul_rows, NNP_UNDEFINED)
DEF_BINARY(div, div_rows, NNP_UNDEFINED)
DEF_BINARY(equal, CMP_EQ_rows, NNP_BOOL)
DEF_BINARY(less, CMP_LT_rows, NNP_BOOL)
DEF_BINARY(greater, CMP_GT_rows, NNP_BOOL)
DEF_BINARY(less_or_equal, CMP_LE_rows, NNP_BOOL)
DEF_BINARY(greater_or_equal, CMP_GE_rows, NNP_BOOL)
DEF_BINARY(and, and_rows, NNP_BOOL)
DEF_BINARY(or, or_rows, NNP_BOOL)
DEF_BINARY(xor, xor_rows, NNP_BOOL)

/* Pow: base float or integer, exponent any numeric type, output = base type. */
static nnp_status infer_pow(nnp_op_ctx *ctx) {
  nnp_status st;
  const nnp_tensor *a = need_input(ctx, 0, &st);
  if (!a) return st;
  const nnp_tensor *b = need_input(ctx, 1, &st);
  if (!b) return st;
  if (!nnp_dtype_is_float(a->dtype) && !nnp_dtype_is_int(a->dtype))
    return nnp_error(NNP_ERR_UNSUPPORTED, "input 0 (X) of type %s is not supported",
                     nnp_dtype_name(a->dtype));
  if (!nnp_dtype_is_float(b->dtype) && !nnp_dtype_is_int(b->dtype))
    return nnp_error(NNP_ERR_UNSUPPORTED, "input 1 (Y) of type %s is not supported",
                     nnp_dtype_name(b->dtype));
  NNP_TRY(check_legacy_broadcast(ctx, a, b));
  int rank;
  int64_t dims[NNP_MAX_RANK];
  NNP_TRY(nnp_broadcast_shapes(a->rank, a->dims, b->rank, b->dims, &rank, dims));
  nnp_set_shape(ctx->out[0], a->dtype, rank, dims);
  return NNP_OK;
}

static nnp_status ref_pow(nnp_op_ctx *ctx) {
  const nnp_tensor *in[2] = {ctx->in[0], ctx->in[1]};
  pow_aux aux = {in[0]->dtype, in[1]->dtype, ctx->out[0]->dtype};
  if (aux.ta == NNP_F32 && aux.tb == NNP_F32) {
    bool square = nnp_tensor_numel(in[1]) == 1 && *(const float *)in[1]->data == 2.0f;
    bcast_run(ctx->out[0], 2, in, square ? square_row_f32 : pow_row_f32, NULL);
  } else {
    bcast_run(ctx->out[0], 2, in, pow_row_generic, &aux);
  }
  return NNP_OK;
}

/* ---------------------------------------------------------------------------------- */
/* Mod                                                                                */
/* ---------------------------------------------------------------------------------- */

/* Mod (opset 10+): fmod=0 takes the divisor's sign (Python's %, integers only); fmod=1
 * the dividend's (C's fmod). Integer remainders are exact in int64 (x % 0 gives 0, like
 * numpy, instead of trapping); float remainders go through fmod in double, which is
 * exact, so rounding back to the input type loses nothing. swin_t's shifted windows
 * compute their attention masks with it. */
typedef struct mod_aux {
  nnp_dtype dt;
  bool fmod;
} mod_aux;

static int64_t imod(int64_t a, int64_t b, bool c_style) {
  if (b == 0) return 0;
  if (b == -1) return 0; /* INT64_MIN % -1 traps in C */
  int64_t r = a % b;
  if (!c_style && r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

static void mod_row(void *y, const void *const *x, const int64_t *s, int64_t n, const void *auxv) {
  const mod_aux *aux = auxv;
  for (int64_t i = 0; i < n; i++) {
    if (nnp_dtype_is_float(aux->dt)) {
      store_f64(aux->dt, y, i, fmod(load_f64(aux->dt, x[0], i * s[0]), load_f64(aux->dt, x[1], i * s[1])));
    } else if (aux->dt == NNP_U64) { /* beyond int64: unsigned remainders have no sign to fix */
      uint64_t a = ((const uint64_t *)x[0])[i * s[0]], b = ((const uint64_t *)x[1])[i * s[1]];
      ((uint64_t *)y)[i] = b ? a % b : 0;
    } else {
      store_i64(aux->dt, y, i, imod(load_i64(aux->dt, x[0], i * s[0]), load_i64(aux->dt, x[1], i * s[1]), aux->fmod));
    }
  }
}

static nnp_status infer_mod(nnp_op_ctx *ctx) {
  nnp_status st;
  const nnp_tensor *a = need_input(ctx, 0, &st);
  if (!a) return st;
  const nnp_tensor *b = need_input(ctx, 1, &st);
  if (!b) return st;
  if (a->dtype != b->dtype)
    return nnp_error(NNP_ERR_SHAPE, "inputs have different types: %s and %s", nnp_dtype_name(a->dtype),
                     nnp_dtype_name(b->dtype));
  const bool is_float = nnp_dtype_is_float(a->dtype);
  if (!is_float && !nnp_dtype_is_int(a->dtype))
    return nnp_error(NNP_ERR_UNSUPPORTED, "input of type %s is not supported", nnp_dtype_name(a->dtype));
  int64_t fm = nnp_attr_int(ctx->node, "fmod", 0);
  if (fm != 0 && fm != 1) return nnp_error(NNP_ERR_SHAPE, "attribute fmod is %lld; it must be 0 or 1", (long long)fm);
  if (is_float && fm != 1)
    return nnp_error(NNP_ERR_SHAPE, "attribute fmod must be 1 for %s inputs", nnp_dtype_name(a->dtype));
  int rank;
  int64_t dims[NNP_MAX_RANK];
  NNP_TRY(nnp_broadcast_shapes(a->rank, a->dims, b->rank, b->dims, &rank, dims));
  nnp_set_shape(ctx->out[0], a->dtype, rank, dims);
  return NNP_OK;
}

static nnp_status ref_mod(nnp_op_ctx *ctx) {
  const nnp_tensor *in[2] = {ctx->in[0], ctx->in[1]};
  mod_aux aux = {in[0]->dtype, nnp_attr_int(ctx->node, "fmod", 0) == 1};
  bcast_run(ctx->out[0], 2, in, mod_row, &aux);
  return NNP_OK;
}

/* ---------------------------------------------------------------------------------- */
/* Variadic: Max, Min, Sum, Mean                                                      */
/* ---------------------------------------------------------------------------------- */

static nnp_status infer_variadic(nnp_op_ctx *ctx, const row_fn *rows) {
  nnp_status st;
  const nnp_tensor *a = need_input(ctx, 0, &st);
  if (!a) return st;
  NNP_TRY(check_table(rows, a->dtype, "input"));
  int rank = a->rank;
  int64_t dims[NNP_MAX_RANK];
  memcpy(dims, a->dims, sizeof dims);
  for (int i = 1; i < ctx->n_in; i++) {
    const nnp_tensor *b = need_input(ctx, i, &st);
    if (!b) return st;
    if (b->dtype != a->dtype)
      return nnp_error(NNP_ERR_SHAPE, "input %d is %s but input 0 is %s", i,
                       nnp_dtype_name(b->dtype), nnp_dtype_name(a->dtype));
    int64_t tmp[NNP_MAX_RANK];
    NNP_TRY(nnp_broadcast_shapes(rank, dims, b->rank, b->dims, &rank, tmp));
    memcpy(dims, tmp, sizeof tmp);
  }
  nnp_set_shape(ctx->out[0], a->dtype, rank, dims);
  return NNP_OK;
}

/* Folds the inputs into the output: y = in0 op in1, then y = y op in_k. Every input
 * broadcasts to the final shape, so each step runs over the whole output. (The output
 * must not share memory with any input but the first.) */
static void run_variadic(nnp_op_ctx *ctx, const row_fn *rows) {
  nnp_tensor *y = ctx->out[0];
  const nnp_tensor *x0 = ctx->in[0];
  if (ctx->n_in == 1) {
    if (y->data != x0->data) memcpy(y->data, x0->data, nnp_tensor_nbytes(y));
    return;
  }
  row_fn fn = rows[x0->dtype];
  const nnp_tensor *in[2] = {x0, ctx->in[1]};
  bcast_run(y, 2, in, fn, NULL);
  for (int k = 2; k < ctx->n_in; k++) {
    in[0] = y;
    in[1] = ctx->in[k];
    bcast_run(y, 2, in, fn, NULL);
  }
}

static nnp_status infer_max(nnp_op_ctx *ctx) { return infer_variadic(ctx, max_rows); }
static nnp_status infer_min(nnp_op_ctx *ctx) { return infer_variadic(ctx, min_rows); }
static nnp_status infer_sum(nnp_op_ctx *ctx) { return infer_variadic(ctx, add_rows); }
static nnp_status infer_mean(nnp_op_ctx *ctx) {
  NNP_TRY(infer_variadic(ctx, add_rows));
  if (!nnp_dtype_is_float(ctx->in[0]->dtype))
    return nnp_error(NNP_ERR_UNSUPPORTED, "input of type %s is not supported (float types only)",
                     nnp_dtype_name(ctx->in[0]->dtype));
  return NNP_OK;
}
static nnp_status ref_max(nnp_op_ctx *ctx) { run_variadic(ctx, max_rows); return NNP_OK; }
static nnp_status ref_min(nnp_op_ctx *ctx) { run_variadic(ctx, min_rows); return NNP_OK; }
static nnp_status ref_sum(nnp_op_ctx *ctx) { run_variadic(ctx, add_rows); return NNP_OK; }

/* Mean = Sum / n, dividing (not multiplying by 1/n) to match the reference exactly. */
static nnp_status ref_mean(nnp_op_ctx *ctx) {
  run_variadic(ctx, add_rows);
  nnp_tensor *y = ctx->out[0];
  int64_t n = nnp_tensor_numel(y);
  int k = ctx->n_in;
  if (k == 1) return NNP_OK;
  switch (y->dtype) {
    case NNP_F32: {
      float *d = y->data, div = (float)k;
      for (int64_t i = 0; i < n; i++) d[i] /= div;
      break;
    }
    case NNP_F64: {
      double *d = y->data, div = (double)k;
      for (int64_t i = 0; i < n; i++) d[i] /= div;
      break;
    }
    case NNP_F16: {
      uint16_t *d = y->data;
      float div = (float)k;
      for (int64_t i = 0; i < n; i++) d[i] = nnp_f32_to_f16(nnp_f16_to_f32(d[i]) / div);
      break;
    }
    default: return nnp_error(NNP_ERR_INTERNAL, "Mean kernel reached with %s", nnp_dtype_name(y->dtype));
  }
  return NNP_OK;
}

/* ---------------------------------------------------------------------------------- */
/* Where, PRelu                                                                       */
/* ---------------------------------------------------------------------------------- */

static nnp_status infer_where(nnp_op_ctx *ctx) {
  nnp_status st;
  const nnp_tensor *t[3];
  for (int i = 0; i < 3; i++)
    if (!(t[i] = need_input(ctx, i, &st))) return st;
  if (t[0]->dtype != NNP_BOOL)
    return nnp_error(NNP_ERR_SHAPE, "input 0 (condition) must be bool, not %s",
                     nnp_dtype_name(t[0]->dtype));
  if (t[1]->dtype != t[2]->dtype)
    return nnp_error(NNP_ERR_SHAPE, "inputs 1 and 2 have different types: %s and %s",
                     nnp_dtype_name(t[1]->dtype), nnp_dtype_name(t[2]->dtype));
  if (nnp_dtype_size(t[1]->dtype) == 0)
    return nnp_error(NNP_ERR_UNSUPPORTED, "inputs of type %s are not supported",
                     nnp_dtype_name(t[1]->dtype));
  int rank, r2;
  int64_t dims[NNP_MAX_RANK], d2[NNP_MAX_RANK];
  NNP_TRY(nnp_broadcast_shapes(t[0]->rank, t[0]->dims, t[1]->rank, t[1]->dims, &rank, dims));
  NNP_TRY(nnp_broadcast_shapes(rank, dims, t[2]->rank, t[2]->dims, &r2, d2));
  nnp_set_shape(ctx->out[0], t[1]->dtype, r2, d2);
  return NNP_OK;
}

static nnp_status pooled_where(nnp_op_ctx *ctx, nnp_threadpool *tp) {
  const nnp_tensor *in[3] = {ctx->in[0], ctx->in[1], ctx->in[2]};
  row_fn fn;
  switch (nnp_dtype_size(in[1]->dtype)) {
    case 1: fn = where_row_8; break;
    case 2: fn = where_row_16; break;
    case 4: fn = where_row_32; break;
    case 8: fn = where_row_64; break;
    default: return nnp_error(NNP_ERR_INTERNAL, "Where kernel reached with %s", nnp_dtype_name(in[1]->dtype));
  }
  bcast_run_tp(ctx->out[0], 3, in, fn, NULL, tp);
  return NNP_OK;
}

static nnp_status ref_where(nnp_op_ctx *ctx) { return pooled_where(ctx, NULL); }
static const bcast_kernel bcast_where = {pooled_where, "eltwise.where.rows"};
static nnp_status prepare_where(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out) {
  (void)ctx, (void)generic;
  return prepare_bcast(&bcast_where, out);
}

/* Before opset 7 a 1-D slope of C values applies per channel (axis 1), not along the
 * last axis; viewed as C x 1 x ... x 1 it broadcasts the modern way. Returns ctx itself
 * when no view is needed, else view_ctx with in[1] replaced by *view. */
static nnp_op_ctx *prelu_legacy_view(nnp_op_ctx *ctx, nnp_op_ctx *view_ctx, nnp_tensor *view,
                                     const nnp_tensor **ins) {
  const nnp_tensor *x = nnp_in(ctx, 0), *slope = nnp_in(ctx, 1);
  if (ctx->opset >= 7 || !x || !slope || slope->rank != 1 || x->rank < 3 || slope->dims[0] == 1 ||
      slope->dims[0] != x->dims[1])
    return ctx;
  *view = *slope;
  view->rank = x->rank - 1;
  view->dims[0] = slope->dims[0];
  for (int d = 1; d < view->rank; d++) view->dims[d] = 1;
  ins[0] = x;
  ins[1] = view;
  *view_ctx = *ctx;
  view_ctx->in = ins;
  return view_ctx;
}

/* PRelu: slope broadcasts unidirectionally to X (the output has X's shape). */
static nnp_status infer_prelu(nnp_op_ctx *octx) {
  nnp_op_ctx vctx;
  nnp_tensor view;
  const nnp_tensor *ins[2];
  nnp_op_ctx *ctx = prelu_legacy_view(octx, &vctx, &view, ins);
  NNP_TRY(infer_binary_table(ctx, prelu_rows, NNP_UNDEFINED, false));
  const nnp_tensor *x = ctx->in[0];
  if (!nnp_tensor_same_shape(ctx->out[0], x)) {
    char bx[64], bs[64];
    const nnp_tensor *s = ctx->in[1];
    return nnp_error(NNP_ERR_SHAPE, "slope of shape %s does not broadcast to X of shape %s",
                     nnp_shape_str(s->rank, s->dims, bs, sizeof bs),
                     nnp_shape_str(x->rank, x->dims, bx, sizeof bx));
  }
  return NNP_OK;
}
static nnp_status ref_prelu(nnp_op_ctx *octx) {
  nnp_op_ctx vctx;
  nnp_tensor view;
  const nnp_tensor *ins[2];
  return run_binary_table(prelu_legacy_view(octx, &vctx, &view, ins), prelu_rows, NULL);
}

/* ---------------------------------------------------------------------------------- */
/* Descriptors                                                                        */
/* ---------------------------------------------------------------------------------- */

#define BINARY_OP_FAST(sym, nm, prep)                                                   \
  const nnp_op_info nnp_op_##sym = {.name = nm, .min_inputs = 2, .max_inputs = 2,      \
                                    .min_outputs = 1, .max_outputs = 1,                \
                                    .infer = infer_##sym, .ref = ref_##sym, .prepare = prep};
#define BINARY_OP(sym, nm) BINARY_OP_FAST(sym, nm, NULL)
/* Add and Mul: eltwise.c's kernels where they take the shapes, else the pooled rows */
static nnp_status prepare_add_mul(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out) {
  NNP_TRY(nnp_prepare_eltwise_binary(ctx, generic, out));
  if (out->run) return NNP_OK;
  return ctx->node->op == NNP_OP_ADD ? prepare_add(ctx, generic, out) : prepare_mul(ctx, generic, out);
}

BINARY_OP_FAST(add, "Add", prepare_add_mul)
BINARY_OP_FAST(sub, "Sub", prepare_sub)
BINARY_OP_FAST(mul, "Mul", prepare_add_mul)
BINARY_OP_FAST(div, "Div", prepare_div)
BINARY_OP(pow, "Pow")
BINARY_OP(mod, "Mod")
BINARY_OP_FAST(equal, "Equal", prepare_equal)
BINARY_OP_FAST(less, "Less", prepare_less)
BINARY_OP_FAST(greater, "Greater", prepare_greater)
BINARY_OP_FAST(less_or_equal, "LessOrEqual", prepare_less_or_equal)
BINARY_OP_FAST(greater_or_equal, "GreaterOrEqual", prepare_greater_or_equal)
BINARY_OP_FAST(and, "And", prepare_and)
BINARY_OP_FAST(or, "Or", prepare_or)
BINARY_OP_FAST(xor, "Xor", prepare_xor)
BINARY_OP(prelu, "PRelu")

const nnp_op_info nnp_op_where = {.name = "Where", .min_inputs = 3, .max_inputs = 3,
                                  .min_outputs = 1, .max_outputs = 1,
                                  .infer = infer_where, .ref = ref_where, .prepare = prepare_where};

#define VARIADIC_OP(sym, nm)                                                            \
  const nnp_op_info nnp_op_##sym = {.name = nm, .min_inputs = 1, .max_inputs = 127,    \
                                    .min_outputs = 1, .max_outputs = 1,                \
                                    .flags = NNP_OPF_VARIADIC,                         \
                                    .infer = infer_##sym, .ref = ref_##sym};
VARIADIC_OP(max, "Max")
VARIADIC_OP(min, "Min")
VARIADIC_OP(sum, "Sum")
VARIADIC_OP(mean, "Mean")
