#include "kernels/dconv.h"

#include <string.h>

#include "nnperf/alloc.h"

bool nnp_conv2d_direct_applies(const nnp_conv2d_desc *d) {
  const bool depthwise = d->group > 1 && d->group == d->c && d->group == d->m;
  const bool s1 = d->sh == 1 && d->sw == 1 && d->oh == d->h && d->ow == d->w;
  const bool s2 = d->sh == 2 && d->sw == 2 && d->oh == (d->h - 1) / 2 + 1 && d->ow == (d->w - 1) / 2 + 1;
  return d->group >= 1 && d->c % d->group == 0 && d->m % d->group == 0 && !depthwise && (s1 || s2) && d->dh == 1 &&
         d->dw == 1 && d->kh % 2 == 1 && d->kw % 2 == 1 && d->ph == d->kh / 2 && d->pw == d->kw / 2 &&
         d->h * d->w <= INT32_MAX;
}

/* Measured with bench_conv_layers forced direct vs im2col (docs/kernels.md): the direct
 * kernel took 0.61 to 0.75 of the time of im2col + GEMM on every resnet18 3x3 stride-1
 * layer, 56x56 down to 7x7 (2 threads; 0.75 to 0.83 on one). Smaller planes were not
 * measured: below 7x7 (49 positions, 4 vectors) most lanes of a vector are padding or
 * past the plane, so they keep the GEMM. A 1x1 conv is a plain GEMM already. */
bool nnp_conv2d_direct_pays(const nnp_conv2d_desc *d) {
  /* stride 2: grouped layers only (RegNet's first block per stage); dense stride-2 layers
   * (resnet18, stems) were 1.05-1.30x slower than im2col + GEMM here (docs/kernels.md) */
  return nnp_conv2d_direct_applies(d) && d->kh * d->kw > 1 && d->oh * d->ow >= 7 * 7 && (d->sh == 1 || d->group > 1);
}

void nnp_dconv_destroy(nnp_dconv *k) {
  if (!k) return;
  nnp_aligned_free(k->w);
  nnp_free(k->mask);
  nnp_free(k->off);
  nnp_free(k);
}

/* Register tiles per ISA (MB channels x NV vectors of VL lanes): AVX-512 8 x 3 ZMM = 24
 * accumulators + 3 input vectors of 32 registers; AVX2 4 x 3 YMM = 12 + 3 + 1 broadcast
 * of 16. The generic tile only needs to cut the same kind of tasks. */
static void geometry(nnp_dconv_isa isa, int *mb, int *nv, int *vl) {
  switch (isa) {
    case NNP_DCONV_AVX512: *mb = 8, *nv = 3, *vl = 16; break;
    case NNP_DCONV_AVX2: *mb = 4, *nv = 3, *vl = 8; break;
    default: *mb = 8, *nv = 2, *vl = 16; break;
  }
}

nnp_status nnp_dconv_prepare(const nnp_conv2d_desc *d, const float *w, nnp_dconv_isa isa, nnp_dconv **out) {
  *out = NULL;
  if (!nnp_conv2d_direct_applies(d) || ((d->group > 1 || d->sh > 1) && isa == NNP_DCONV_AVX512))
    return nnp_error(NNP_ERR_SHAPE, "conv2d: the direct kernel needs a stride-1 or 2 'same' convolution (grouped: "
                                    "not depthwise; grouped or stride 2: not on the AVX-512 tile)");
  nnp_dconv *k = nnp_calloc(1, sizeof *k);
  if (!k) return nnp_error(NNP_ERR_NOMEM, "out of memory packing direct conv weights");
  k->d = *d;
  k->isa = isa;
  geometry(isa, &k->mb, &k->nv, &k->vl);
  k->P = d->oh * d->ow;
  k->phases = d->sh == 2;
  k->cstride = k->phases ? 4 * k->P : k->P;
  k->taps = d->kh * d->kw;
  k->cg = d->c / d->group;
  k->mg = d->m / d->group;
  k->gblocks = (k->mg + k->mb - 1) / k->mb;
  k->blocks = d->group * k->gblocks;
  k->vecs = (k->P + k->vl - 1) / k->vl;
  k->groups = (k->vecs + k->nv - 1) / k->nv;
  k->by_blocks = d->m * k->cg * k->taps > d->c * k->P; /* weights (M x C/group x taps) over one input (C x P) */
  size_t wf = (size_t)(k->blocks * k->taps * k->cg * k->mb);
  k->w = nnp_aligned_alloc(wf * sizeof(float));
  k->mask = nnp_malloc((size_t)(k->vecs * k->taps) * sizeof *k->mask);
  k->off = nnp_malloc((size_t)k->taps * sizeof *k->off);
  if (!k->w || !k->mask || !k->off) {
    nnp_dconv_destroy(k);
    return nnp_error(NNP_ERR_NOMEM, "out of memory packing direct conv weights");
  }
  for (int64_t b = 0; b < k->blocks; b++) {
    int64_t m0, c0;
    int mr;
    nnp_dconv_block(k, b, &m0, &mr, &c0);
    for (int64_t t = 0; t < k->taps; t++)
      for (int64_t c = 0; c < k->cg; c++)
        for (int i = 0; i < k->mb; i++)
          k->w[((b * k->taps + t) * k->cg + c) * k->mb + i] = i < mr ? w[((m0 + i) * k->cg + c) * k->taps + t] : 0.0f;
  }
  const int64_t s = d->sh;
  for (int64_t t = 0; t < k->taps; t++) {
    int64_t dy = t / d->kw - d->ph, dx = t % d->kw - d->pw;
    /* phase planes: input row 2r + dy is row r + floor(dy / 2) of phase (dy & 1) */
    k->off[t] = !k->phases ? dy * d->w + dx
                           : ((dy & 1) * 2 + (dx & 1)) * k->P + (dy - (dy & 1)) / 2 * d->ow + (dx - (dx & 1)) / 2;
    for (int64_t v = 0; v < k->vecs; v++) {
      uint16_t m = 0;
      for (int i = 0; i < k->vl; i++) {
        int64_t p = v * k->vl + i, ih = p / d->ow * s + dy, iw = p % d->ow * s + dx;
        if (p < k->P && ih >= 0 && ih < d->h && iw >= 0 && iw < d->w) m |= (uint16_t)(1u << i);
      }
      k->mask[v * k->taps + t] = m;
    }
  }
  *out = k;
  return NNP_OK;
}

/* The portable kernel and test oracle: explicit bounds per input (not the mask table,
 * so that a wrong mask shows as a difference against it). */
void nnp_dconv_tasks_generic(const nnp_dconv *k, const float *x, float *y, const nnp_epilogue *ep, int64_t t0,
                             int64_t t1) {
  const nnp_conv2d_desc *d = &k->d;
  const int64_t P = k->P, C = k->cg, span = (int64_t)k->nv * k->vl, HW = d->h * d->w;
  for (int64_t t = t0; t < t1; t++) {
    int64_t n, b, g;
    nnp_dconv_task(k, t, &n, &b, &g);
    int64_t m0, c0;
    int mr;
    nnp_dconv_block(k, b, &m0, &mr, &c0);
    const float *xn = x + (n * d->c + c0) * HW;
    float *yn = y + n * d->m * P;
    nnp_epilogue loc, *lp = NULL;
    if (ep) { /* the epilogue of image n: residual shaped like Y */
      loc = *ep;
      if (loc.residual) loc.residual += n * d->m * P;
      loc.ld_res = P;
      lp = &loc;
    }
    int64_t p0 = g * span, p1 = p0 + span < P ? p0 + span : P;
    for (int i = 0; i < mr; i++) {
      int64_t m = m0 + i;
      for (int64_t p = p0; p < p1; p++) {
        int64_t oh = p / d->ow, ow = p % d->ow;
        float acc = 0.0f;
        for (int64_t tap = 0; tap < k->taps; tap++) {
          int64_t ih = oh * d->sh + tap / d->kw - d->ph, iw = ow * d->sw + tap % d->kw - d->pw;
          if (ih < 0 || ih >= d->h || iw < 0 || iw >= d->w) continue;
          const float *wp = k->w + (b * k->taps + tap) * C * k->mb + i;
          for (int64_t c = 0; c < C; c++) acc += wp[c * k->mb] * xn[c * HW + ih * d->w + iw];
        }
        yn[m * P + p] = nnp_epilogue_apply(lp, m, p, acc);
      }
    }
  }
}

typedef struct dconv_job {
  const nnp_dconv *k;
  const float *x, *xv; /* X as the generic kernel reads it, and as the vector kernels do */
  float *y;
  const nnp_epilogue *ep;
} dconv_job;

static void dconv_range(void *p, int64_t b, int64_t e) {
  const dconv_job *j = p;
  switch (j->k->isa) {
    case NNP_DCONV_AVX512: nnp_dconv_tasks_avx512(j->k, j->xv, j->y, j->ep, b, e); break;
    case NNP_DCONV_AVX2: nnp_dconv_tasks_avx2(j->k, j->xv, j->y, j->ep, b, e); break;
    default: nnp_dconv_tasks_generic(j->k, j->x, j->y, j->ep, b, e); break;
  }
}

size_t nnp_dconv_scratch_floats(const nnp_dconv *k) {
  return k->phases && k->isa != NNP_DCONV_GENERIC ? (size_t)(k->d.n * k->d.c * k->cstride) : 0;
}

/* Input planes [b, e) of all images into their four phase planes (nnp_dconv.phases):
 * phase 2a + b' holds x[2r + a][2c + b'], zero past the input's edge. Row by row,
 * without a bounds test per element (a first version with one took as long as the
 * convolution it saved on a 112x112 plane). */
static void phase_range(void *p, int64_t b, int64_t e) {
  const dconv_job *j = p;
  const nnp_conv2d_desc *d = &j->k->d;
  const int64_t P = j->k->P, pairs = d->w / 2;
  for (int64_t pl = b; pl < e; pl++) {
    const float *xp = j->x + pl * d->h * d->w;
    float *dst = (float *)j->xv + pl * j->k->cstride;
    for (int64_t r = 0; r < d->oh; r++)
      for (int64_t a = 0; a < 2; a++) {
        float *ev = dst + 2 * a * P + r * d->ow, *od = ev + P;
        const int64_t ih = 2 * r + a;
        if (ih >= d->h) { /* an odd height's last odd row */
          memset(ev, 0, (size_t)d->ow * sizeof(float));
          memset(od, 0, (size_t)d->ow * sizeof(float));
          continue;
        }
        const float *src = xp + ih * d->w;
        for (int64_t c = 0; c < pairs; c++) ev[c] = src[2 * c], od[c] = src[2 * c + 1];
        if (d->w % 2) ev[pairs] = src[d->w - 1], od[pairs] = 0.0f;
      }
  }
}

void nnp_dconv_run(const nnp_dconv *k, const float *x, float *y, const nnp_epilogue *ep, float *scratch,
                   nnp_threadpool *tp) {
  dconv_job j = {.k = k, .x = x, .xv = x, .y = y, .ep = ep};
  if (nnp_dconv_scratch_floats(k)) {
    j.xv = scratch;
    nnp_threadpool_run(tp, phase_range, &j, k->d.n * k->d.c);
  }
  nnp_threadpool_run(tp, dconv_range, &j, k->d.n * k->blocks * k->groups);
}
