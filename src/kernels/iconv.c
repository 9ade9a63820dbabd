#include "kernels/iconv.h"

#include <stdint.h>
#include <string.h>

#include "kernels/dispatch.h"
#include "kernels/gemm.h"
#include "kernels/strided_copy.h"
#include "nnperf/alloc.h"

struct nnp_iconv {
  nnp_conv2d_desc d;
  int64_t s;          /* the stride, both ways */
  int64_t R, Cc, PP;  /* a phase plane: R rows of Cc floats, PP = R * Cc */
  int64_t K;          /* c * kh * kw */
  int32_t *off;       /* [K]: where tap k of output (0, 0) reads, from the image's phases */
};

enum { MR = NNP_SGEMM_MR, NR = NNP_SGEMM_NR };

/* An image's phase planes: s * s per input channel, R x Cc floats each. */
static int64_t phase_geometry(const nnp_conv2d_desc *d, int64_t *R, int64_t *Cc) {
  const int64_t s = d->sh;
  /* every 16-wide tile of an output row reads 16 floats per tap: columns up to the width
   * rounded to 16, plus the taps' reach */
  *R = d->oh + (d->kh - 1) / s;
  *Cc = (d->ow + NR - 1) / NR * NR + (d->kw - 1) / s;
  return d->c * s * s * *R * *Cc;
}

bool nnp_iconv_pays(const nnp_conv2d_desc *d, bool generic) {
  if (generic || nnp_dispatch_isa(NNP_KF_GEMM) != NNP_ISA_AVX2) return false;
  const bool s_ok = d->sh == d->sw && (d->sh == 1 || d->sh == 2);
  if (!(d->group == 1 && d->c <= 4 && s_ok && d->dh == 1 && d->dw == 1 && d->kh <= 7 && d->kw <= 7 &&
        d->c * d->kh * d->kw <= 256 && d->ow >= NR))
    return false;
  int64_t R, Cc;
  return phase_geometry(d, &R, &Cc) <= INT32_MAX; /* the offsets are int32 */
}

nnp_status nnp_iconv_prepare(const nnp_conv2d_desc *d, nnp_iconv **out) {
  *out = NULL;
  nnp_iconv *k = nnp_calloc(1, sizeof *k);
  if (!k) return nnp_error(NNP_ERR_NOMEM, "out of memory planning an implicit-GEMM conv");
  k->d = *d;
  k->s = d->sh;
  k->K = d->c * d->kh * d->kw;
  if (phase_geometry(d, &k->R, &k->Cc) > INT32_MAX) {
    nnp_iconv_destroy(k);
    return nnp_error(NNP_ERR_SHAPE, "conv2d: an input of %lld x %lld x %lld is too large for the implicit-GEMM "
                                    "kernel's 32-bit offsets", (long long)d->c, (long long)d->h, (long long)d->w);
  }
  k->PP = k->R * k->Cc;
  k->off = nnp_malloc((size_t)k->K * sizeof *k->off);
  if (!k->off) {
    nnp_iconv_destroy(k);
    return nnp_error(NNP_ERR_NOMEM, "out of memory planning an implicit-GEMM conv");
  }
  for (int64_t c = 0; c < d->c; c++) /* k = (c * kh + i) * kw + j: im2col's row order */
    for (int64_t i = 0; i < d->kh; i++)
      for (int64_t j = 0; j < d->kw; j++) {
        const int64_t phase = (i % k->s) * k->s + j % k->s;
        k->off[(c * d->kh + i) * d->kw + j] =
            (int32_t)((c * k->s * k->s + phase) * k->PP + (i / k->s) * k->Cc + j / k->s);
      }
  *out = k;
  return NNP_OK;
}

void nnp_iconv_destroy(nnp_iconv *k) {
  if (!k) return;
  nnp_free(k->off);
  nnp_free(k);
}

size_t nnp_iconv_scratch_floats(const nnp_iconv *k) {
  return (size_t)(k->d.n * k->d.c * k->s * k->s * k->PP);
}

typedef struct iconv_job {
  const nnp_iconv *k;
  const float *a, *x;
  float *y, *ph;
  const nnp_epilogue *ep;
} iconv_job;

/* Phase row r of phase row-parity pa of input plane pl (task pl * s * R + pa * R + r):
 * phase (pa, pb)[r][cc] = X[s r + pa - ph][s cc + pb - pw], zero outside X. */
static void split_range(void *p, int64_t b, int64_t e) {
  const iconv_job *j = p;
  const nnp_iconv *k = j->k;
  const nnp_conv2d_desc *d = &k->d;
  const int64_t s = k->s;
  for (int64_t t = b; t < e; t++) {
    const int64_t pl = t / (s * k->R), pa = t / k->R % s, r = t % k->R, ih = s * r + pa - d->ph;
    for (int64_t pb = 0; pb < s; pb++) {
      float *dst = j->ph + (pl * s * s + pa * s + pb) * k->PP + r * k->Cc;
      if (ih < 0 || ih >= d->h) {
        memset(dst, 0, (size_t)k->Cc * sizeof(float));
        continue;
      }
      /* columns cc with 0 <= s cc + pb - pw < W */
      const int64_t o = pb - d->pw;
      int64_t lo = o >= 0 ? 0 : (-o + s - 1) / s, hi = d->w - o <= 0 ? 0 : (d->w - o + s - 1) / s;
      if (hi > k->Cc) hi = k->Cc;
      if (lo > hi) lo = hi;
      const float *src = j->x + (pl * d->h + ih) * d->w + o;
      memset(dst, 0, (size_t)lo * sizeof(float));
      if (s == 1) memcpy(dst + lo, src + lo, (size_t)(hi - lo) * sizeof(float));
      else
        nnp_copy_every_other(dst + lo, src + 2 * lo, hi - lo);
      memset(dst + hi, 0, (size_t)(k->Cc - hi) * sizeof(float));
    }
  }
}

/* Output rows (task n * OH + oh) [b, e): row panel by row panel of M, then every row and
 * 16-wide column tile, so that each of the panel's six output planes is written for the
 * whole range of rows in one go. Row by row with the panels innermost, all M planes were
 * written at once, a row (7 lines at 112 wide) each: with Y out of cache (a model's
 * first layer, at batch 1 as at 16) more streams than the hardware prefetcher follows.
 * One thread, bench_conv_layers "s2 3->", alternated, min of 5: the 3x3 stems (3 -> 16,
 * 32, 40 at 224) 0.75-0.91x with BENCH_CONV_COLD=1, 0.98-1.00x in cache, 0.74-0.80x at
 * batch 16 (min of 2); the 7x7 stem 3 -> 64 0.97x cold, 1.03x in cache (0.97x on two
 * threads). The range's phase rows are reread per panel (from L2): a 7x7 stem's K of
 * 147 makes that its cost in cache. The same tiles: the same bits. */
static void rows_range(void *p, int64_t b, int64_t e) {
  const iconv_job *j = p;
  const nnp_iconv *k = j->k;
  const nnp_conv2d_desc *d = &k->d;
  const int64_t P = d->oh * d->ow;
  for (int64_t i0 = 0; i0 < d->m; i0 += MR) {
    const int mr = (int)(d->m - i0 < MR ? d->m - i0 : MR);
    for (int64_t t = b; t < e; t++) {
      const int64_t n = t / d->oh, oh = t % d->oh;
      const float *row = j->ph + n * d->c * k->s * k->s * k->PP + oh * k->Cc;
      nnp_epilogue loc;
      const nnp_epilogue *ep = NULL;
      if (j->ep) { /* image n's residual */
        loc = *j->ep;
        if (loc.residual) loc.residual += n * d->m * P;
        loc.ld_res = P;
        ep = &loc;
      }
      for (int64_t j0 = 0; j0 < d->ow; j0 += NR) {
        const int nr = (int)(d->ow - j0 < NR ? d->ow - j0 : NR);
        nnp_sgemm_tile_off_avx2(k->K, j->a + i0 * k->K, row + j0, k->off, j->y + (n * d->m + i0) * P + oh * d->ow + j0,
                                P, mr, nr, ep, i0, oh * d->ow + j0);
      }
    }
  }
}

void nnp_iconv_run(const nnp_iconv *k, const float *a, const float *x, float *y, const nnp_epilogue *ep,
                   float *scratch, nnp_threadpool *tp) {
  const nnp_conv2d_desc *d = &k->d;
  iconv_job j = {.k = k, .a = a, .x = x, .y = y, .ph = scratch, .ep = ep};
  nnp_threadpool_run(tp, split_range, &j, d->n * d->c * k->s * k->R);
  nnp_threadpool_run(tp, rows_range, &j, d->n * d->oh);
}
