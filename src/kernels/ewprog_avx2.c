/* FusedElementwise programs on AVX2 + FMA (kernels/ewprog.h). This file alone gets
 * -mavx2 -mfma. */
#include "kernels/ewprog.h"

#include <immintrin.h>
#include <string.h>

#include "ops/internal_ops.h"

#if defined(__AVX2__) && defined(__FMA__)
#include "kernels/exp_avx2.h"
#endif

bool nnp_ewprog_covered(const int64_t *op, int n) {
  for (int k = 0; k < n; k++)
    if (op[2 * k] == NNP_EW_TANH) return false;
  return true;
}

bool nnp_ewprog_is_gelu(const int64_t *op, int n) {
  return n == 5 && (op[0] == NNP_EW_DIV || op[0] == NNP_EW_MUL) && op[2] == NNP_EW_ERF && op[4] == NNP_EW_ADD &&
         op[6] == NNP_EW_MUL && op[8] == NNP_EW_MUL;
}

#if defined(__AVX2__) && defined(__FMA__)
static inline __m256 sigmoid8(__m256 a) {
  const __m256 one = _mm256_set1_ps(1.0f);
  return _mm256_div_ps(one, _mm256_add_ps(one, nnp_exp8(_mm256_sub_ps(_mm256_setzero_ps(), a))));
}

/* erf(x) by Abramowitz and Stegun 7.1.26 (absolute error under 1.5e-7; erff's own is
 * about 1e-7): 1 - t (a1 + t (a2 + ...)) e^(-x^2), t = 1 / (1 + p |x|), the sign put
 * back. GELU adds 1 to it, so the absolute error is what counts there. Here x = |a|
 * and t are given (erf8 divides, erf8_rcp estimates). */
static inline __m256 erf8_of(__m256 sign, __m256 x, __m256 t) {
  __m256 p = _mm256_set1_ps(1.061405429f);
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-1.453152027f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(1.421413741f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-0.284496736f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.254829592f));
  const __m256 e = nnp_exp8(_mm256_sub_ps(_mm256_setzero_ps(), _mm256_mul_ps(x, x)));
  const __m256 y = _mm256_fnmadd_ps(_mm256_mul_ps(p, t), e, _mm256_set1_ps(1.0f));
  return _mm256_or_ps(y, sign);
}

static inline __m256 erf8(__m256 a) {
  const __m256 sign = _mm256_and_ps(a, _mm256_set1_ps(-0.0f)), x = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a);
  const __m256 one = _mm256_set1_ps(1.0f);
  return erf8_of(sign, x, _mm256_div_ps(one, _mm256_fmadd_ps(_mm256_set1_ps(0.3275911f), x, one)));
}

/* One instruction on one vector. The formulas are the reference kernel's
 * (ops/fused_elementwise.c). */
static inline __m256 step8(int64_t op, __m256 a, __m256 bv, float lo, float hi) {
  const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f);
  switch (op) {
    case NNP_EW_ADD: return _mm256_add_ps(a, bv);
    case NNP_EW_SUB: return _mm256_sub_ps(a, bv);
    case NNP_EW_RSUB: return _mm256_sub_ps(bv, a);
    case NNP_EW_MUL: return _mm256_mul_ps(a, bv);
    case NNP_EW_DIV: return _mm256_div_ps(a, bv);
    case NNP_EW_RDIV: return _mm256_div_ps(bv, a);
    case NNP_EW_RELU: return _mm256_blendv_ps(a, zero, _mm256_cmp_ps(a, zero, _CMP_LT_OQ));
    case NNP_EW_SIGMOID: return sigmoid8(a);
    case NNP_EW_ERF: return erf8(a);
    case NNP_EW_NEG: return _mm256_sub_ps(zero, a);
    case NNP_EW_CLIP: { /* (a < lo ? lo : a) > hi ? hi : (a < lo ? lo : a) */
      const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
      const __m256 c = _mm256_blendv_ps(a, vlo, _mm256_cmp_ps(a, vlo, _CMP_LT_OQ));
      return _mm256_blendv_ps(c, vhi, _mm256_cmp_ps(c, vhi, _CMP_GT_OQ));
    }
    case NNP_EW_HARD_SWISH: { /* a * clamp(a / 6 + 0.5, 0, 1), a * (1/6) + 0.5 unfused as there */
      __m256 t = _mm256_add_ps(_mm256_mul_ps(a, _mm256_set1_ps(1.0f / 6.0f)), _mm256_set1_ps(0.5f));
      t = _mm256_blendv_ps(t, zero, _mm256_cmp_ps(t, zero, _CMP_LT_OQ));
      t = _mm256_blendv_ps(t, one, _mm256_cmp_ps(t, one, _CMP_GT_OQ));
      return _mm256_mul_ps(a, t);
    }
    default: return a; /* not reached: nnp_ewprog_covered */
  }
}

/* The whole chain on the 8 elements at `at` (operands b[k] + at, or their one element):
 * the value stays in a register from the load of x to the store of y. Every operand is
 * read before y is written, so y may alias x or an operand. */
static inline __m256 chain8(const nnp_ewprog *p, const float *const *b, __m256 a, int64_t at) {
  for (int k = 0; k < p->n; k++) {
    const __m256 bv = !b[k] ? _mm256_setzero_ps() : p->b_scalar[k] ? _mm256_set1_ps(b[k][0]) : _mm256_loadu_ps(b[k] + at);
    a = step8(p->op[2 * k], a, bv, p->params[2 * k], p->params[2 * k + 1]);
  }
  return a;
}

/* SiLU, x * sigmoid(x) (the EfficientNet family's activation): the
 * program Sigmoid, Mul(x), with no interpreter in the loop. Same operations in the same
 * order as chain8, so the same bits. */
static bool is_silu(const nnp_ewprog *p, const float *x) {
  return p->n == 2 && p->op[0] == NNP_EW_SIGMOID && p->op[2] == NNP_EW_MUL && p->b[1] == x && !p->b_scalar[1];
}

static void run_silu(const float *x, float *y, int64_t i0, int64_t vend) {
  for (int64_t i = i0; i < vend; i += 8) {
    const __m256 a = _mm256_loadu_ps(x + i);
    _mm256_storeu_ps(y + i, _mm256_mul_ps(sigmoid8(a), a));
  }
}

/* erf8 with the division as a reciprocal estimate (12 bits) and one Newton step */
static inline __m256 erf8_rcp(__m256 a) {
  const __m256 sign = _mm256_and_ps(a, _mm256_set1_ps(-0.0f)), x = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a);
  const __m256 d = _mm256_fmadd_ps(_mm256_set1_ps(0.3275911f), x, _mm256_set1_ps(1.0f));
  const __m256 t = _mm256_rcp_ps(d);
  return erf8_of(sign, x, _mm256_mul_ps(t, _mm256_fnmadd_ps(d, t, _mm256_set1_ps(2.0f))));
}

static inline __m256 gelu8(__m256 x, __m256 s, __m256 a, __m256 h) {
  return _mm256_mul_ps(_mm256_mul_ps(_mm256_add_ps(erf8_rcp(_mm256_mul_ps(x, s)), a), x), h);
}

void nnp_gelu_run_avx2(const float *x, float *y, int64_t i0, int64_t i1, float s, float a, float h) {
  const __m256 vs = _mm256_set1_ps(s), va = _mm256_set1_ps(a), vh = _mm256_set1_ps(h);
  int64_t i = i0;
  for (; i + 8 <= i1; i += 8) _mm256_storeu_ps(y + i, gelu8(_mm256_loadu_ps(x + i), vs, va, vh));
  if (i == i1) return;
  float t[8] = {0};
  memcpy(t, x + i, (size_t)(i1 - i) * sizeof(float));
  _mm256_storeu_ps(t, gelu8(_mm256_loadu_ps(t), vs, va, vh));
  memcpy(y + i, t, (size_t)(i1 - i) * sizeof(float));
}

/* Why registers, not passes: the first version copied x to y and made one pass per
 * instruction over 1024-element blocks (a store and reload per instruction); SiLU then
 * took about 1 ns per element, more than the depthwise conv before it (docs/kernels.md). */
void nnp_ewprog_run_avx2(const nnp_ewprog *p, const float *x, float *y, int64_t i0, int64_t i1) {
  const int64_t vend = i0 + (i1 - i0) / 8 * 8;
  if (is_silu(p, x)) run_silu(x, y, i0, vend);
  else
    for (int64_t i = i0; i < vend; i += 8) _mm256_storeu_ps(y + i, chain8(p, p->b, _mm256_loadu_ps(x + i), i));
  if (vend == i1) return;
  /* the last 1..7 elements through padded copies of 8 (operands too) */
  const int64_t r = i1 - vend;
  float xt[8] = {0}, bt[8 * NNP_EWPROG_MAX_INSTR] = {0}, yt[8];
  const float *bk[NNP_EWPROG_MAX_INSTR];
  memcpy(xt, x + vend, (size_t)r * sizeof(float));
  for (int k = 0; k < p->n; k++) {
    bk[k] = p->b[k];
    if (bk[k] && !p->b_scalar[k]) memcpy(bt + 8 * k, bk[k] + vend, (size_t)r * sizeof(float)), bk[k] = bt + 8 * k;
  }
  _mm256_storeu_ps(yt, chain8(p, bk, _mm256_loadu_ps(xt), 0));
  memcpy(y + vend, yt, (size_t)r * sizeof(float));
}
#else
void nnp_ewprog_run_avx2(const nnp_ewprog *p, const float *x, float *y, int64_t i0, int64_t i1) {
  (void)p, (void)x, (void)y, (void)i0, (void)i1; /* never selected without AVX2 (ops/fast_fused_eltwise.c) */
}
void nnp_gelu_run_avx2(const float *x, float *y, int64_t i0, int64_t i1, float s, float a, float h) {
  (void)x, (void)y, (void)i0, (void)i1, (void)s, (void)a, (void)h; /* never selected without AVX2 */
}
#endif
