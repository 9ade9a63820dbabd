/* Pad: modes constant, edge, reflect and (opset 19's) wrap, for every dtype.
 *
 * Signature history: before opset 11 `pads` and `value` are attributes; from 11 `pads`
 * is input 1 (must be known at load time) and the constant is optional input 2; opset
 * 18 adds optional input 3 `axes` naming the axes `pads` refers to.
 *
 * Negative pads crop. Cropping is applied first, and edge/reflect/wrap padding then
 * takes its values from the cropped region (what onnxruntime does).
 *
 * The kernel walks output rows (all axes but the last): a row maps to one input row or,
 * in constant mode, lies wholly in the padding. Within a row the kept input span is one
 * memcpy and only the padded elements are mapped one by one. */
#include <string.h>

#include "ops/op_util.h"
#include "util/threadpool.h"

typedef enum pad_mode { PAD_CONSTANT, PAD_EDGE, PAD_REFLECT, PAD_WRAP } pad_mode;

typedef struct pad_plan {
  pad_mode mode;
  int64_t lo[NNP_MAX_RANK];   /* elements added before the kept span */
  int64_t crop[NNP_MAX_RANK]; /* first input element kept */
  int64_t keep[NNP_MAX_RANK]; /* input elements kept (>= 0) */
  int64_t out[NNP_MAX_RANK];  /* output extent */
} pad_plan;

/* |pad| beyond this is hostile (no tensor is that large) and would risk overflow. */
#define PAD_LIMIT ((int64_t)1 << 48)

static nnp_status pad_plan_make(const nnp_op_ctx *c, const nnp_tensor *x, pad_plan *p) {
  const int r = x->rank;
  const char *mode = nnp_attr_string(c->node, "mode", "constant");
  if (strcmp(mode, "constant") == 0) p->mode = PAD_CONSTANT;
  else if (strcmp(mode, "edge") == 0) p->mode = PAD_EDGE;
  else if (strcmp(mode, "reflect") == 0) p->mode = PAD_REFLECT;
  else if (strcmp(mode, "wrap") == 0) p->mode = PAD_WRAP;
  else return nnp_error(NNP_ERR_UNSUPPORTED, "attribute 'mode' value '%s' is not supported", mode);

  int64_t pads[2 * NNP_MAX_RANK];
  int np;
  if (c->opset < 11) {
    const int64_t *a;
    np = nnp_attr_ints(c->node, "pads", &a);
    if (np < 0) np = nnp_attr_ints(c->node, "paddings", &a); /* Pad-1's name */
    if (np < 0) return nnp_error(NNP_ERR_SHAPE, "attribute 'pads' is required");
    if (np > 2 * NNP_MAX_RANK) return nnp_error(NNP_ERR_SHAPE, "attribute 'pads' has %d values", np);
    memcpy(pads, a, sizeof(int64_t) * (size_t)np);
  } else {
    if (!nnp_in(c, 1)) return nnp_error(NNP_ERR_SHAPE, "input 'pads' is required from opset 11");
    NNP_TRY(nnp_input_ints(c, 1, pads, 2 * NNP_MAX_RANK, &np));
  }

  /* Opset 18: pads covers only the listed axes. */
  int axes[NNP_MAX_RANK], na = r;
  for (int i = 0; i < r; i++) axes[i] = i;
  const nnp_tensor *at = nnp_in(c, 3);
  if (at && nnp_tensor_numel(at) > 0) {
    int64_t av[NNP_MAX_RANK];
    NNP_TRY(nnp_input_ints(c, 3, av, NNP_MAX_RANK, &na));
    unsigned seen = 0;
    for (int k = 0; k < na; k++) {
      NNP_TRY(nnp_norm_axis(av[k], r, "input 'axes' value", &axes[k]));
      if (seen & (1u << axes[k])) return nnp_error(NNP_ERR_SHAPE, "input 'axes' repeats axis %d", axes[k]);
      seen |= 1u << axes[k];
    }
  }
  if (np != 2 * na)
    return nnp_error(NNP_ERR_SHAPE, "'pads' has %d values, expected %d (2 per padded axis)", np, 2 * na);

  for (int i = 0; i < r; i++) {
    p->lo[i] = 0;
    p->crop[i] = 0;
    p->keep[i] = p->out[i] = x->dims[i];
  }
  for (int k = 0; k < na; k++) {
    const int a = axes[k];
    const int64_t b = pads[k], e = pads[k + na], d = x->dims[a];
    if (b > PAD_LIMIT || b < -PAD_LIMIT || e > PAD_LIMIT || e < -PAD_LIMIT)
      return nnp_error(NNP_ERR_LIMIT, "'pads' values %lld, %lld for axis %d are too large", (long long)b,
                       (long long)e, a);
    const int64_t keep = d + (b < 0 ? b : 0) + (e < 0 ? e : 0);
    if (keep < 0)
      return nnp_error(NNP_ERR_SHAPE, "'pads' %lld, %lld crop more than axis %d of size %lld", (long long)b,
                       (long long)e, a, (long long)d);
    p->lo[a] = b > 0 ? b : 0;
    p->crop[a] = b < 0 ? -b : 0;
    p->keep[a] = keep;
    p->out[a] = d + b + e;
    if (p->mode != PAD_CONSTANT && keep == 0 && p->out[a] > 0)
      return nnp_error(NNP_ERR_SHAPE, "mode '%s' cannot pad axis %d, which has no elements", mode, a);
  }
  return NNP_OK;
}

/* Input index along axis a for output index o, or -1 for the constant. */
static int64_t pad_src(const pad_plan *p, int a, int64_t o) {
  int64_t i = o - p->lo[a];
  const int64_t n = p->keep[a];
  if (i >= 0 && i < n) return p->crop[a] + i;
  switch (p->mode) {
    case PAD_CONSTANT: return -1;
    case PAD_EDGE: i = i < 0 ? 0 : n - 1; break;
    case PAD_REFLECT:
      if (n == 1) {
        i = 0;
      } else { /* reflection without repeating the edge has period 2(n-1) */
        const int64_t per = 2 * (n - 1);
        i %= per;
        if (i < 0) i += per;
        if (i >= n) i = per - i;
      }
      break;
    case PAD_WRAP:
      i %= n;
      if (i < 0) i += n;
      break;
  }
  return p->crop[a] + i;
}

/* The padding value as one element of dtype dt (es bytes). */
static void pad_value(const nnp_op_ctx *c, nnp_dtype dt, unsigned char *val) {
  memset(val, 0, 16);
  nnp_tensor v = {.dtype = dt, .rank = 0, .data = val};
  const nnp_tensor *cv = nnp_in(c, 2);
  if (c->opset < 11) {
    nnp_tensor_set_f64(&v, 0, nnp_attr_float(c->node, "value", 0.0f));
  } else if (cv && cv->data && nnp_tensor_numel(cv) > 0) {
    if (cv->dtype == dt) memcpy(val, cv->data, nnp_dtype_size(dt));
    else if (nnp_dtype_is_int(dt) && nnp_dtype_is_int(cv->dtype)) {
      const int64_t iv = nnp_tensor_get_i64(cv, 0); /* exact for int64 */
      if (dt == NNP_I64 || dt == NNP_U64) memcpy(val, &iv, 8);
      else nnp_tensor_set_f64(&v, 0, (double)iv);
    } else {
      nnp_tensor_set_f64(&v, 0, nnp_tensor_get_f64(cv, 0));
    }
  }
}

static nnp_status infer_pad(nnp_op_ctx *c) {
  const nnp_tensor *x = c->in[0];
  if (!x) return nnp_error(NNP_ERR_SHAPE, "input 0 is missing");
  if (!nnp_dtype_size(x->dtype))
    return nnp_error(NNP_ERR_UNSUPPORTED, "input of type %s is not supported", nnp_dtype_name(x->dtype));
  const nnp_tensor *cv = nnp_in(c, 2);
  if (c->opset >= 11 && cv) {
    if (nnp_tensor_numel(cv) > 1)
      return nnp_error(NNP_ERR_SHAPE, "input 'constant_value' must be a scalar, it has %lld elements",
                       (long long)nnp_tensor_numel(cv));
    if (!nnp_dtype_size(cv->dtype))
      return nnp_error(NNP_ERR_UNSUPPORTED, "input 'constant_value' of type %s is not supported",
                       nnp_dtype_name(cv->dtype));
  }
  pad_plan p;
  NNP_TRY(pad_plan_make(c, x, &p));
  size_t nb;
  NNP_TRY(nnp_shape_nbytes(x->dtype, x->rank, p.out, &nb));
  nnp_set_shape(c->out[0], x->dtype, x->rank, p.out);
  return NNP_OK;
}

static void fill(char *d, const unsigned char *val, size_t es, int64_t n) {
  for (int64_t j = 0; j < n; j++) memcpy(d + (size_t)j * es, val, es);
}

/* Output rows [r0, r1) (a row: all axes but the last) of x padded by p into y. */
typedef struct pad_job {
  pad_plan p;
  size_t es;
  unsigned char val[16];
  int rank;
  int64_t xs[NNP_MAX_RANK];
  const char *x;
  char *y;
} pad_job;

static void pad_rows(const pad_job *j, int64_t r0, int64_t r1) {
  if (r0 >= r1) return; /* no rows (a scalar X, copied by pad_job_make): j->rank may be 0 */
  const pad_plan *p = &j->p;
  const size_t es = j->es;
  const int last = j->rank - 1;
  const int64_t n = p->out[last], lo = p->lo[last], keep = p->keep[last];
  int64_t idx[NNP_MAX_RANK] = {0};
  for (int64_t k = last - 1, rest = r0; k >= 0; k--) {
    idx[k] = rest % p->out[k];
    rest /= p->out[k];
  }
  char *dp = j->y + (size_t)(r0 * n) * es;
  for (int64_t r = r0; r < r1; r++, dp += (size_t)n * es) {
    /* Source row for the outer coordinates, or -1 when the row is padding. */
    int64_t base = 0;
    for (int a = 0; a < last && base >= 0; a++) {
      int64_t s = pad_src(p, a, idx[a]);
      base = s < 0 ? -1 : base + s * j->xs[a];
    }
    if (base < 0) {
      fill(dp, j->val, es, n);
    } else {
      const char *row = j->x + (size_t)base * es;
      for (int64_t o = 0; o < lo; o++) {
        int64_t s = pad_src(p, last, o);
        if (s < 0) memcpy(dp + (size_t)o * es, j->val, es);
        else memcpy(dp + (size_t)o * es, row + (size_t)s * es, es);
      }
      if (keep) memcpy(dp + (size_t)lo * es, row + (size_t)p->crop[last] * es, (size_t)keep * es);
      if (p->mode == PAD_CONSTANT) {
        fill(dp + (size_t)(lo + keep) * es, j->val, es, n - lo - keep);
      } else {
        for (int64_t o = lo + keep; o < n; o++)
          memcpy(dp + (size_t)o * es, row + (size_t)pad_src(p, last, o) * es, es);
      }
    }
    for (int k = last - 1; k >= 0; k--) {
      if (++idx[k] < p->out[k]) break;
      idx[k] = 0;
    }
  }
}

static bool unpadded(const pad_plan *p, int a) { return p->lo[a] == 0 && p->crop[a] == 0 && p->keep[a] == p->out[a]; }

/* Constant mode: a trailing axis neither padded nor cropped is merged into the axis
 * before it, whose padding then counts in whole rows of it, so that a row is one long
 * memcpy (swin_t's [56, 56, 96] maps with zero pads: one copy, not 3136 of 384 bytes). */
static void merge_unpadded(pad_job *j) {
  pad_plan *p = &j->p;
  while (j->rank > 1 && unpadded(p, j->rank - 1)) {
    const int a = j->rank - 2, l = j->rank - 1;
    const int64_t n = p->out[l];
    p->lo[a] *= n;
    p->crop[a] *= n;
    p->keep[a] *= n;
    p->out[a] *= n; /* its stride is never read again: a row's elements are contiguous */
    j->rank--;
  }
}

/* The job of one run: the plan from this run's pads (computed at run time in some
 * models: swin_t's come from Shape arithmetic), its unpadded trailing axes merged for
 * the fast kernel (merge; the reference keeps its plain rows, the tests' oracle).
 * *rows: 0 when there is nothing to do. */
static nnp_status pad_job_make(const nnp_op_ctx *c, bool merge, pad_job *j, int64_t *rows) {
  const nnp_tensor *x = c->in[0];
  nnp_tensor *y = c->out[0];
  NNP_TRY(pad_plan_make(c, x, &j->p));
  j->es = nnp_dtype_size(x->dtype);
  pad_value(c, x->dtype, j->val);
  j->rank = x->rank;
  nnp_contiguous_strides(x->rank, x->dims, j->xs);
  j->x = x->data;
  j->y = y->data;
  *rows = 0;
  if (nnp_tensor_numel(y) == 0) return NNP_OK;
  if (x->rank == 0) {
    memcpy(y->data, x->data, j->es);
    return NNP_OK;
  }
  if (merge && j->p.mode == PAD_CONSTANT) merge_unpadded(j);
  *rows = nnp_tensor_numel(y) / j->p.out[j->rank - 1];
  return NNP_OK;
}

static nnp_status ref_pad(nnp_op_ctx *c) {
  pad_job j;
  int64_t rows;
  NNP_TRY(pad_job_make(c, false, &j, &rows));
  pad_rows(&j, 0, rows);
  return NNP_OK;
}

/* Pad's fast kernel: the same rows split over the pool. swin_t pads each stage's
 * feature map before its windows (pads worked out at run time, all zero at 224 x 224),
 * 15 single-threaded copies of up to 1.2 MB a run on the reference kernel (0.5 ms at
 * 2 threads). Outputs under 32 KB stay on the caller: a pool run costs more than them. */
static void pad_range(void *p, int64_t b, int64_t e) { pad_rows(p, b, e); }

/* A Pad that pads nothing (one row once merged): its copy in chunks of COPY_CHUNK bytes */
enum { COPY_CHUNK = 32 << 10 };

static void copy_range(void *p, int64_t b, int64_t e) {
  const pad_job *j = p;
  const size_t total = (size_t)j->p.out[0] * j->es, lo = (size_t)b * COPY_CHUNK;
  const size_t hi = (size_t)e * COPY_CHUNK < total ? (size_t)e * COPY_CHUNK : total;
  memcpy(j->y + lo, j->x + lo, hi - lo);
}

static nnp_status run_fast_pad(void *state, nnp_op_ctx *c) {
  (void)state;
  pad_job j;
  int64_t rows;
  NNP_TRY(pad_job_make(c, true, &j, &rows));
  if (j.rank == 1 && unpadded(&j.p, 0)) /* merged whole: one row */
    nnp_threadpool_run(c->pool, copy_range, &j, ((int64_t)j.es * j.p.out[0] + COPY_CHUNK - 1) / COPY_CHUNK);
  else if (rows > 0) nnp_threadpool_run(c->pool, pad_range, &j, rows);
  return NNP_OK;
}

static nnp_status prepare_pad(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out) {
  (void)generic;
  memset(out, 0, sizeof *out);
  if (!nnp_pooled_copy_pays(ctx)) return NNP_OK;
  out->run = run_fast_pad;
  out->name = "pad.rows";
  return NNP_OK;
}

const nnp_op_info nnp_op_pad = {.name = "Pad", .min_inputs = 1, .max_inputs = 4, .min_outputs = 1,
                                 .max_outputs = 1, .infer = infer_pad, .ref = ref_pad,
                                 .prepare = prepare_pad};
