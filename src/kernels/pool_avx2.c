/* float32 MaxPool 2-D on AVX2 (this file gets -mavx2 -mfma): the outputs whose window
 * lies wholly inside the row, eight at a time with the running max in a register over
 * every tap; the rest (the borders, a ragged end) as the portable rows (kernels/pool.c).
 *
 * Why: the portable rows make one pass over the output row per tap (nine loads and
 * stores of every output for 3x3), and a stride-2 tap compiles to scalar loads there;
 * squeezenet1_0's three 3x3 stride-2 pools took 2.4 ms of its 24 at one thread
 * (docs/kernels.md). Same results bit for bit: each vector starts from the window's
 * first tap and takes `v > best ? v : best` (vmaxps(v, best)) tap by tap in (kh, kw)
 * order, as the reference: a NaN first tap stays, a later NaN never wins, ties keep
 * the first tap. */
#include <immintrin.h>

#include "kernels/pool.h"

/* Eight consecutive outputs of stride S from column c of row r: r[c], r[c+S], ... */
static inline __m256 load_strided(const float *r, const int S) {
  if (S == 1) return _mm256_loadu_ps(r);
  const __m256 a = _mm256_loadu_ps(r), b = _mm256_loadu_ps(r + 8);
  const __m256 ev = _mm256_shuffle_ps(a, b, 0x88); /* a0 a2 b0 b2 | a4 a6 b4 b6 */
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), 0xD8));
}

/* Outputs [o0, o1) of one output row whose windows need no column check: every tap's
 * loads stay within the input row (stride 2 reads 16 floats per tap). */
static inline __attribute__((always_inline)) int64_t vector_outputs(const nnp_pool2d_desc *d, const float *xp,
                                                                    int64_t ihs, int64_t h0, int64_t h1,
                                                                    int64_t o0, int64_t o1, float *yr,
                                                                    const int S) {
  int64_t o = o0;
  for (; o + 8 <= o1; o += 8) {
    const int64_t c = o * S - d->pw;
    __m256 best = load_strided(xp + (ihs + h0) * d->w + c, S);
    for (int64_t kh = h0; kh < h1; kh++) {
      const float *r = xp + (ihs + kh) * d->w + c;
      for (int64_t kw = 0; kw < d->kw; kw++) best = _mm256_max_ps(load_strided(r + kw, S), best);
    }
    _mm256_storeu_ps(yr + o, best);
  }
  return o;
}

void nnp_maxpool_row_avx2(const nnp_pool2d_desc *d, const float *xp, int64_t oh, float *yr) {
  int64_t h0, h1;
  nnp_pool_taps(oh, d->sh, d->ph, d->kh, d->h, &h0, &h1);
  const int64_t S = d->sw, L = S == 1 ? 8 : 16; /* floats one strided load reads */
  if (h0 >= h1 || (S != 1 && S != 2)) {
    nnp_maxpool_row_portable(d, xp, oh, yr);
    return;
  }
  /* a vector of outputs o..o+7 reads columns o*S - pw .. o*S - pw + kw - 1 + L - 1:
   * it starts at o >= lo (no left padding) and o <= last (no read past the row) */
  const int64_t lo = (d->pw + S - 1) / S, room = d->w - d->kw - L + 1 + d->pw;
  const int64_t last = room >= 0 ? room / S : -1;
  int64_t o1 = last + 8 < d->ow ? last + 8 : d->ow;
  if (lo >= o1 || last < lo) {
    nnp_maxpool_row_portable(d, xp, oh, yr);
    return;
  }
  const int64_t ihs = oh * d->sh - d->ph;
  const int64_t done = S == 1 ? vector_outputs(d, xp, ihs, h0, h1, lo, o1, yr, 1)
                              : vector_outputs(d, xp, ihs, h0, h1, lo, o1, yr, 2);
  nnp_maxpool_outputs_portable(d, xp, oh, 0, lo, yr);
  nnp_maxpool_outputs_portable(d, xp, oh, done, d->ow, yr);
}
