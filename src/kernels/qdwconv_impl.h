/* The body of the INT8 depthwise convolution (kernels/qdwconv.h), compiled twice: by
 * qdwconv.c for the generic path and by qdwconv_avx2.c with -mavx2, where the compiler
 * vectorizes the int32 multiply-add loops with vpmulld. The includer defines QDW_RANGE
 * (the function's name) and QDW_REQUANT(acc, n, ep, row, y). */
#include <string.h>

#include "kernels/qdwconv.h"
#include "nnperf/alloc.h"

#ifndef NNP_KERNELS_QDWCONV_IMPL_H
#define NNP_KERNELS_QDWCONV_IMPL_H
typedef struct qdw_job {
  const nnp_qdw_desc *d;
  const uint8_t *x;
  int32_t xzp;
  const int16_t *w;
  uint8_t *y;
  const nnp_qepilogue *ep;
} qdw_job;

/* The int16-pair flat path's pieces, shared by qdwconv_avx2.c and qdwconv_avx512vnni.c
 * (which differ only in vector width). The taps' offsets in the bordered plane (row
 * pitch W), 2 * np of them: an odd last tap pairs with a zero weight at offset 0. */
static inline void qdw_pair_offsets(const nnp_qdw_desc *d, int64_t W, int64_t np, int64_t *offs) {
  const int64_t khw = d->kh * d->kw;
  for (int64_t t = 0; t < 2 * np; t++) offs[t] = t < khw ? (t / d->kw) * W + t % d->kw : 0;
}

/* Channel m's plane into the border of zero points of xp (row pitch W), its weights as
 * int16 pairs in wp (w0 low, w1 high, one int32 each); returns the sum of its weights,
 * for the x zero point's term: sum (x - zp) w = sum x w - zp sum w. */
static inline int32_t qdw_pair_channel(const qdw_job *j, int64_t m, int64_t W, uint8_t *xp, int32_t *wp) {
  const nnp_qdw_desc *d = j->d;
  const int64_t khw = d->kh * d->kw, np = (khw + 1) / 2;
  const uint8_t *x = j->x + m * d->h * d->w;
  for (int64_t r = 0; r < d->h; r++) memcpy(xp + (r + d->ph) * W + d->pw, x + r * d->w, (size_t)d->w);
  const int16_t *wm = j->w + m * khw;
  int32_t wsum = 0;
  for (int64_t t = 0; t < khw; t++) wsum += wm[t];
  for (int64_t p = 0; p < np; p++) {
    int16_t w0 = wm[2 * p], w1 = 2 * p + 1 < khw ? wm[2 * p + 1] : 0;
    wp[p] = (int32_t)((uint32_t)(uint16_t)w0 | ((uint32_t)(uint16_t)w1 << 16));
  }
  return wsum;
}

/* Channel m's requantized flat rows q (pitch W) into Y, without the W - ow extra columns. */
static inline void qdw_flat_store(const qdw_job *j, int64_t m, int64_t W, const uint8_t *q) {
  const nnp_qdw_desc *d = j->d;
  uint8_t *y = j->y + m * d->oh * d->ow;
  for (int64_t oy = 0; oy < d->oh; oy++) memcpy(y + oy * d->ow, q + oy * W, (size_t)d->ow);
}

#endif

enum { CHUNK = 256 }; /* output columns accumulated at once (a row longer is done in parts) */

/* Valid taps [lo, hi) of output o along an axis: 0 <= o*s - p + k*dil < n. */
static void valid_taps(int64_t o, int64_t s, int64_t p, int64_t k, int64_t dil, int64_t n, int64_t *lo, int64_t *hi) {
  int64_t start = o * s - p;
  *lo = 0;
  while (*lo < k && start + *lo * dil < 0) ++*lo;
  *hi = k;
  while (*hi > *lo && start + (*hi - 1) * dil >= n) --*hi;
}

/* Stride 1, no dilation: each channel's plane is copied into a border of zero points
 * (which contribute 0) of width W = w + 2pw, so that every tap is one shift of the flat
 * plane: acc[oy*W + ox] += (xp[oy*W + ox + ky*W + kx] - zp) * w for all oy*W outputs at
 * once (the columns ox >= ow are computed and dropped): long loops, no edges, no tails.
 * false: no memory for the buffers (the row path runs instead). */
#ifndef QDW_FLAT_DEFINED /* the includer may bring its own */
static bool QDW_FLAT(const qdw_job *j, int64_t c0, int64_t c1) {
  const nnp_qdw_desc *d = j->d;
  const int64_t W = d->w + 2 * d->pw, H = d->h + 2 * d->ph, khw = d->kh * d->kw, n = d->oh * W;
  uint8_t *xp = nnp_malloc((size_t)(H * W + 16));
  int32_t *acc = nnp_malloc((size_t)n * sizeof(int32_t));
  if (!xp || !acc) {
    nnp_free(xp);
    nnp_free(acc);
    return false;
  }
  memset(xp, j->xzp, (size_t)(H * W + 16));
  for (int64_t m = c0; m < c1; m++) {
    const uint8_t *x = j->x + m * d->h * d->w;
    for (int64_t r = 0; r < d->h; r++) memcpy(xp + (r + d->ph) * W + d->pw, x + r * d->w, (size_t)d->w);
    memset(acc, 0, (size_t)n * sizeof(int32_t));
    const int16_t *wm = j->w + m * khw;
    for (int64_t ky = 0; ky < d->kh; ky++)
      for (int64_t kx = 0; kx < d->kw; kx++) /* reads up to (oh-1+kh-1)*W + W-1 + kw-1 < H*W + kw */
        if (wm[ky * d->kw + kx]) QDW_ACC_ROW(acc, xp + ky * W + kx, 0, n, 1, j->xzp, wm[ky * d->kw + kx]);
    uint8_t *y = j->y + m * d->oh * d->ow;
    for (int64_t oy = 0; oy < d->oh; oy++) QDW_REQUANT(acc + oy * W, d->ow, j->ep, m, y + oy * d->ow);
  }
  nnp_free(xp);
  nnp_free(acc);
  return true;
}
#endif

void QDW_RANGE(void *p, int64_t c0, int64_t c1);
void QDW_RANGE(void *p, int64_t c0, int64_t c1) {
  const qdw_job *j = p;
  const nnp_qdw_desc *d = j->d;
  if (d->sh == 1 && d->sw == 1 && d->dh == 1 && d->dw == 1 && d->kw <= 16 && d->oh == d->h + 2 * d->ph - d->kh + 1 &&
      d->ow == d->w + 2 * d->pw - d->kw + 1 && QDW_FLAT(j, c0, c1))
    return;
  const int64_t khw = d->kh * d->kw;
  int32_t acc[CHUNK];
  /* per kx, the outputs o with 0 <= o*sw - pw + kx*dw < w (no division in the loops) */
  enum { KMAX = 16 };
  int64_t klo[KMAX], khi[KMAX];
  for (int64_t kx = 0; kx < d->kw && kx < KMAX; kx++) {
    int64_t first = d->pw - kx * d->dw, last = d->w - 1 + d->pw - kx * d->dw;
    klo[kx] = first > 0 ? (first + d->sw - 1) / d->sw : 0;
    khi[kx] = last < 0 ? 0 : last / d->sw + 1;
  }
  for (int64_t m = c0; m < c1; m++) {
    const uint8_t *xp = j->x + m * d->h * d->w;
    const int16_t *wm = j->w + m * khw;
    uint8_t *yp = j->y + m * d->oh * d->ow;
    for (int64_t oy = 0; oy < d->oh; oy++) {
      int64_t t0, t1;
      valid_taps(oy, d->sh, d->ph, d->kh, d->dh, d->h, &t0, &t1);
      for (int64_t x0 = 0; x0 < d->ow; x0 += CHUNK) {
        int64_t n = d->ow - x0 < CHUNK ? d->ow - x0 : CHUNK;
        memset(acc, 0, (size_t)n * sizeof(int32_t));
        for (int64_t ky = t0; ky < t1; ky++) {
          const uint8_t *row = xp + (oy * d->sh - d->ph + ky * d->dh) * d->w;
          for (int64_t kx = 0; kx < d->kw; kx++) {
            const int32_t wv = wm[ky * d->kw + kx];
            int64_t lo, hi;
            if (kx < KMAX) {
              lo = klo[kx];
              hi = khi[kx];
            } else {
              int64_t first = d->pw - kx * d->dw, last = d->w - 1 + d->pw - kx * d->dw;
              lo = first > 0 ? (first + d->sw - 1) / d->sw : 0;
              hi = last < 0 ? 0 : last / d->sw + 1;
            }
            if (hi <= lo || wv == 0) continue;
            lo = lo > x0 ? lo - x0 : 0;
            hi = hi - x0 < n ? hi - x0 : n;
            const uint8_t *src = row + (x0 * d->sw - d->pw + kx * d->dw);
            QDW_ACC_ROW(acc, src, lo, hi, d->sw, j->xzp, wv);
          }
        }
        QDW_REQUANT(acc, n, j->ep, m, yp + oy * d->ow + x0);
      }
    }
  }
}

