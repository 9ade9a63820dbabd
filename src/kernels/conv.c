#include "kernels/conv.h"

#include <string.h>

#include "kernels/cpu.h"
#include "kernels/dwconv.h"
#include "kernels/gemm.h"
#include "nnperf/alloc.h"

struct nnp_conv2d_kernel {
  nnp_conv2d_desc d;
  nnp_conv_algo algo;
  bool generic;
  int64_t mg, cg, ckk, P;  /* per group: output channels, input channels, K; positions */
  float *wpack;           /* GEMM: group g's packed A at g * a_floats; depthwise: W copy */
  size_t a_floats, b_floats;
};

nnp_conv_algo nnp_conv2d_algo(const nnp_conv2d_kernel *k) { return k->algo; }
bool nnp_conv2d_kernel_generic(const nnp_conv2d_kernel *k) { return k->generic; }

void nnp_conv2d_destroy(nnp_conv2d_kernel *k) {
  if (!k) return;
  nnp_aligned_free(k->wpack);
  nnp_free(k);
}

nnp_status nnp_conv2d_prepare(const nnp_conv2d_desc *d, const float *w, bool generic, nnp_conv2d_kernel **out) {
  *out = NULL;
  if (d->group < 1 || d->c % d->group || d->m % d->group)
    return nnp_error(NNP_ERR_SHAPE, "conv2d: group %lld does not divide %lld inputs and %lld outputs",
                     (long long)d->group, (long long)d->c, (long long)d->m);
  nnp_conv2d_kernel *k = nnp_calloc(1, sizeof *k);
  if (!k) return nnp_error(NNP_ERR_NOMEM, "out of memory packing conv weights");
  k->d = *d;
  k->generic = generic || !nnp_cpu_has_avx2_fma();
  k->cg = d->c / d->group;
  k->mg = d->m / d->group;
  k->ckk = k->cg * d->kh * d->kw;
  k->P = d->oh * d->ow;
  if (d->group == d->c && d->group == d->m) k->algo = NNP_CONV_DEPTHWISE;
  else if (d->kh == 1 && d->kw == 1 && d->sh == 1 && d->sw == 1 && d->ph == 0 && d->pw == 0 && d->oh == d->h &&
           d->ow == d->w)
    k->algo = NNP_CONV_GEMM_1X1;
  else k->algo = NNP_CONV_IM2COL;
  if (k->algo == NNP_CONV_DEPTHWISE) {
    size_t n = (size_t)(d->c * d->kh * d->kw);
    k->wpack = nnp_aligned_alloc(n * sizeof(float));
    if (!k->wpack) goto oom;
    memcpy(k->wpack, w, n * sizeof(float));
  } else {
    k->a_floats = nnp_sgemm_packed_a_floats(k->mg, k->ckk);
    k->b_floats = nnp_sgemm_packed_b_floats(k->ckk, k->P);
    k->wpack = nnp_aligned_alloc((size_t)d->group * k->a_floats * sizeof(float));
    if (!k->wpack) goto oom;
    for (int64_t g = 0; g < d->group; g++)
      nnp_sgemm_pack_a(k->mg, k->ckk, w + g * k->mg * k->ckk, k->ckk, 1, k->wpack + (size_t)g * k->a_floats);
  }
  *out = k;
  return NNP_OK;
oom:
  nnp_conv2d_destroy(k);
  return nnp_error(NNP_ERR_NOMEM, "out of memory packing conv weights");
}

size_t nnp_conv2d_scratch_bytes(const nnp_conv2d_kernel *k) {
  if (k->algo == NNP_CONV_DEPTHWISE) /* a copy of X, used only when Y aliases X */
    return (size_t)(k->d.n * k->d.c * k->d.h * k->d.w) * sizeof(float);
  return k->b_floats * sizeof(float);
}

/* ---- im2col into the packed-B layout, one 16-column panel per task ---- */
typedef struct im2col_job {
  const nnp_conv2d_kernel *k;
  const float *x; /* first input channel of the group */
  float *dst;
} im2col_job;

static void im2col_range(void *p, int64_t b, int64_t e) {
  const im2col_job *j = p;
  const nnp_conv2d_desc *d = &j->k->d;
  const int64_t K = j->k->ckk, P = j->k->P, HW = d->h * d->w;
  enum { NR = NNP_SGEMM_NR };
  for (int64_t q = b; q < e; q++) {
    float *dst = j->dst + q * NR * K;
    int64_t ihb[NR], iwb[NR];
    int cols = (int)(P - q * NR < NR ? P - q * NR : NR);
    for (int c = 0; c < NR; c++) {
      int64_t p0 = q * NR + (c < cols ? c : 0);
      ihb[c] = (p0 / d->ow) * d->sh - d->ph;
      iwb[c] = (p0 % d->ow) * d->sw - d->pw;
    }
    for (int64_t kh = 0; kh < d->kh; kh++)
      for (int64_t kw = 0; kw < d->kw; kw++) {
        int64_t off[NR];
        bool ok[NR], all_ok = true, contig = true;
        for (int c = 0; c < NR; c++) {
          int64_t ih = ihb[c] + kh * d->dh, iw = iwb[c] + kw * d->dw;
          ok[c] = c < cols && ih >= 0 && ih < d->h && iw >= 0 && iw < d->w;
          off[c] = ok[c] ? ih * d->w + iw : 0;
          all_ok = all_ok && ok[c];
          contig = contig && off[c] == off[0] + c;
        }
        /* row k = (ic*KH + kh)*KW + kw of the column matrix */
        if (all_ok && contig) { /* 16 consecutive inputs (stride 1, inside one row): a plain copy */
          for (int64_t ic = 0; ic < j->k->cg; ic++)
            memcpy(dst + ((ic * d->kh + kh) * d->kw + kw) * NR, j->x + ic * HW + off[0], NR * sizeof(float));
          continue;
        }
        for (int64_t ic = 0; ic < j->k->cg; ic++) {
          const float *xc = j->x + ic * HW;
          float *drow = dst + ((ic * d->kh + kh) * d->kw + kw) * NR;
          for (int c = 0; c < NR; c++) drow[c] = ok[c] ? xc[off[c]] : 0.0f;
        }
      }
  }
}

typedef struct pack_job {
  const nnp_conv2d_kernel *k;
  const float *x;
  float *dst;
} pack_job;

static void pack_range(void *p, int64_t b, int64_t e) {
  const pack_job *j = p;
  nnp_sgemm_pack_b_panels(j->k->ckk, j->k->P, j->x, j->k->d.h * j->k->d.w, 1, j->dst, b, e);
}

typedef struct dw_job {
  const nnp_conv2d_kernel *k;
  const float *x;
  float *y;
  const nnp_epilogue *ep;
} dw_job;

static void dw_range(void *p, int64_t b, int64_t e) {
  const dw_job *j = p;
  if (j->k->generic) nnp_dwconv_planes_generic(&j->k->d, j->x, j->k->wpack, j->y, j->ep, b, e);
  else nnp_dwconv_planes_avx2(&j->k->d, j->x, j->k->wpack, j->y, j->ep, b, e);
}

void nnp_conv2d_run(const nnp_conv2d_kernel *k, const float *x, float *y, const nnp_epilogue *ep, void *scratch,
                    nnp_threadpool *tp) {
  const nnp_conv2d_desc *d = &k->d;
  const int64_t in_plane = d->h * d->w, P = k->P;
  if (k->algo == NNP_CONV_DEPTHWISE) {
    if (x == y) { /* in-place: later output rows still read input rows already overwritten */
      memcpy(scratch, x, nnp_conv2d_scratch_bytes(k));
      x = scratch;
    }
    dw_job j = {.k = k, .x = x, .y = y, .ep = ep};
    nnp_threadpool_run(tp, dw_range, &j, d->n * d->c);
    return;
  }
  float *bp = scratch;
  for (int64_t n = 0; n < d->n; n++)
    for (int64_t g = 0; g < d->group; g++) {
      const float *xg = x + (n * d->c + g * k->cg) * in_plane;
      float *yg = y + (n * d->m + g * k->mg) * P;
      /* In place (Y aliases X: a 1x1 conv with C == M) B is packed before Y is written;
       * otherwise a 1x1 conv reads X directly as B. */
      /* Only with 64-byte-aligned rows (P % 16 == 0): a 7x7 or 14x14 plane's rows straddle
       * cache lines, and reading them in place measured slower than packing. */
      const bool direct = k->algo == NNP_CONV_GEMM_1X1 && x != y && P % NNP_SGEMM_NR == 0;
      if (direct) { /* X is already the K x P matrix B: only its ragged last panel is packed */
        int64_t full = P / NNP_SGEMM_NR * NNP_SGEMM_NR;
        if (full < P) nnp_sgemm_pack_b_panels(k->ckk, P - full, xg + full, P, 1, bp, 0, 1);
      } else if (k->algo == NNP_CONV_GEMM_1X1) {
        pack_job j = {.k = k, .x = xg, .dst = bp};
        nnp_threadpool_run(tp, pack_range, &j, (P + NNP_SGEMM_NR - 1) / NNP_SGEMM_NR);
      } else {
        im2col_job j = {.k = k, .x = xg, .dst = bp};
        nnp_threadpool_run(tp, im2col_range, &j, (P + NNP_SGEMM_NR - 1) / NNP_SGEMM_NR);
      }
      nnp_epilogue loc, *lp = NULL;
      if (ep) {
        loc = *ep;
        if (loc.bias_kind == NNP_BIAS_ROW) loc.bias = ep->bias + g * k->mg;
        if (loc.residual) loc.residual = ep->residual + (n * d->m + g * k->mg) * P;
        loc.ld_res = P;
        lp = &loc;
      }
      if (direct)
        nnp_sgemm_direct_b_ex(k->mg, P, k->ckk, k->wpack + (size_t)g * k->a_floats, xg, P, bp, yg, P, lp, tp,
                              k->generic);
      else
        nnp_sgemm_packed_ex(k->mg, P, k->ckk, k->wpack + (size_t)g * k->a_floats, bp, yg, P, lp, tp, k->generic);
    }
}
