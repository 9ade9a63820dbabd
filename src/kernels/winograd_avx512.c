/* The Winograd F(2x2, 3x3) transforms on AVX-512F (kernels/winograd.h): one 16-channel
 * block of one 4x4 input tile or 2x2 output tile per iteration, 16 vectors in registers.
 * This file alone is compiled with -mavx512f; it runs only where the dispatch table (kernels/dispatch.h) picks AVX-512. */
#include "kernels/winograd.h"

#if defined(__AVX512F__)
#include <immintrin.h>

#include "kernels/act_avx512.h"

bool nnp_wino_avx512_built(void) { return true; }

#define INLINE static inline __attribute__((always_inline))

/* B^T d B with B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1], stored at position i * 4 + j. */
INLINE void input_tile(const nnp_wino_geom *g, __m512 d[4][4], float *v) {
  __m512 t[4][4];
#pragma GCC unroll 4
  for (int j = 0; j < 4; j++) {
    t[0][j] = _mm512_sub_ps(d[0][j], d[2][j]);
    t[1][j] = _mm512_add_ps(d[1][j], d[2][j]);
    t[2][j] = _mm512_sub_ps(d[2][j], d[1][j]);
    t[3][j] = _mm512_sub_ps(d[1][j], d[3][j]);
  }
#pragma GCC unroll 4
  for (int i = 0; i < 4; i++) {
    _mm512_store_ps(v + (i * 4 + 0) * g->vs, _mm512_sub_ps(t[i][0], t[i][2]));
    _mm512_store_ps(v + (i * 4 + 1) * g->vs, _mm512_add_ps(t[i][1], t[i][2]));
    _mm512_store_ps(v + (i * 4 + 2) * g->vs, _mm512_sub_ps(t[i][2], t[i][1]));
    _mm512_store_ps(v + (i * 4 + 3) * g->vs, _mm512_sub_ps(t[i][1], t[i][3]));
  }
}

void nnp_wino_input_row_avx512(const nnp_wino_geom *g, const float *x, float *v, int64_t cb, int64_t t, int64_t vr) {
  const float *plane = x + cb * g->h * g->w * NNP_BLOCK;
  float *vrow = v + (cb * g->vh + vr) * g->tw * NNP_BLOCK;
  const int64_t ih0 = 2 * t - g->ph;
  const bool rows_in = ih0 >= 0 && ih0 + 3 < g->h;
  for (int64_t u = 0; u < g->tw; u++) {
    const int64_t iw0 = 2 * u - g->pw;
    __m512 d[4][4];
    if (rows_in && iw0 >= 0 && iw0 + 3 < g->w) { /* inside: 16 plain loads */
      const float *p = plane + (ih0 * g->w + iw0) * NNP_BLOCK;
#pragma GCC unroll 4
      for (int i = 0; i < 4; i++)
#pragma GCC unroll 4
        for (int j = 0; j < 4; j++) d[i][j] = _mm512_loadu_ps(p + (i * g->w + j) * NNP_BLOCK);
    } else { /* padding (and past the last row or column of an odd plane) reads zeros */
#pragma GCC unroll 4
      for (int i = 0; i < 4; i++) {
        const int64_t ih = ih0 + i;
#pragma GCC unroll 4
        for (int j = 0; j < 4; j++) {
          const int64_t iw = iw0 + j;
          d[i][j] = ih >= 0 && ih < g->h && iw >= 0 && iw < g->w
                        ? _mm512_loadu_ps(plane + (ih * g->w + iw) * NNP_BLOCK)
                        : _mm512_setzero_ps();
        }
      }
    }
    input_tile(g, d, vrow + u * NNP_BLOCK);
  }
}

/* nnp_act16, plus sigmoid in scalar (as blocked_conv_avx512.c) */
INLINE __m512 act16(const nnp_epilogue *ep, __m512 v) {
  if (ep->act != NNP_ACT_SIGMOID) return nnp_act16(ep, v);
  float t[NNP_BLOCK];
  _mm512_storeu_ps(t, v);
  for (int l = 0; l < NNP_BLOCK; l++) t[l] = nnp_act_apply(ep, t[l]);
  return _mm512_loadu_ps(t);
}

/* A^T M A with A^T = [1 1 1 0; 0 1 -1 -1], then bias, residual (read before y is written:
 * y may be r), activation and the lanes past m forced to 0, for the outputs inside the
 * plane. */
void nnp_wino_output_row_avx512(const nnp_wino_geom *g, const nnp_epilogue *ep, const float *bias, const float *m,
                                float *y, const float *r, int64_t ob, int64_t t, int64_t vr) {
  const float *mrow = m + (ob * g->vh + vr) * g->tw * NNP_BLOCK;
  const __m512 b = _mm512_load_ps(bias + ob * NNP_BLOCK);
  const int64_t valid = g->m - ob * NNP_BLOCK;
  const __mmask16 keep = valid < NNP_BLOCK ? (__mmask16)((1u << valid) - 1u) : (__mmask16)0xffff;
  const int64_t rows = 2 * t + 1 < g->oh ? 2 : 1;
  for (int64_t u = 0; u < g->tw; u++) {
    __m512 s[2][4];
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++) {
      const float *p = mrow + u * NNP_BLOCK + j * g->ms;
      const __m512 m0 = _mm512_load_ps(p), m1 = _mm512_load_ps(p + 4 * g->ms);
      const __m512 m2 = _mm512_load_ps(p + 8 * g->ms), m3 = _mm512_load_ps(p + 12 * g->ms);
      s[0][j] = _mm512_add_ps(_mm512_add_ps(m0, m1), m2);
      s[1][j] = _mm512_sub_ps(_mm512_sub_ps(m1, m2), m3);
    }
    const int64_t cols = 2 * u + 1 < g->ow ? 2 : 1;
    for (int64_t i = 0; i < rows; i++) {
      const __m512 yv[2] = {_mm512_add_ps(_mm512_add_ps(s[i][0], s[i][1]), s[i][2]),
                            _mm512_sub_ps(_mm512_sub_ps(s[i][1], s[i][2]), s[i][3])};
      const int64_t o = ((ob * g->oh + 2 * t + i) * g->ow + 2 * u) * NNP_BLOCK;
      for (int64_t j = 0; j < cols; j++) {
        __m512 v = _mm512_add_ps(yv[j], b);
        if (r) v = _mm512_add_ps(v, _mm512_loadu_ps(r + o + j * NNP_BLOCK));
        _mm512_storeu_ps(y + o + j * NNP_BLOCK, _mm512_maskz_mov_ps(keep, act16(ep, v)));
      }
    }
  }
}
#else
/* Built without AVX-512 support in the compiler: never selected (nnp_wino_fits asks). */
bool nnp_wino_avx512_built(void) { return false; }
void nnp_wino_input_row_avx512(const nnp_wino_geom *g, const float *x, float *v, int64_t cb, int64_t t, int64_t vr) {
  (void)g, (void)x, (void)v, (void)cb, (void)t, (void)vr;
}
void nnp_wino_output_row_avx512(const nnp_wino_geom *g, const nnp_epilogue *ep, const float *bias, const float *m,
                                float *y, const float *r, int64_t ob, int64_t t, int64_t vr) {
  (void)g, (void)ep, (void)bias, (void)m, (void)y, (void)r, (void)ob, (void)t, (void)vr;
}
#endif
