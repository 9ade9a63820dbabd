/* FusedElementwise programs on AVX2 + FMA (kernels/ewprog.h). This file alone gets
 * -mavx2 -mfma. */
#include "kernels/ewprog.h"

#include <immintrin.h>
#include <string.h>

#include "ops/internal_ops.h"

bool nnp_ewprog_covered(const int64_t *op, int n) {
  for (int k = 0; k < n; k++)
    if (op[2 * k] == NNP_EW_TANH) return false;
  return true;
}

#if defined(__AVX2__) && defined(__FMA__)
enum { BLK = 1024 }; /* floats per block: 4 KiB of y and of each operand, in L1 */

/* e^x, Cephes' expf: x = n ln2 + r, |r| <= ln2 / 2, e^r by a degree-5 polynomial, 2^n
 * in the exponent bits. Inputs clamped to +-88.38 (e^x stays finite). */
static inline __m256 exp8(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-88.3762626647949f)), _mm256_set1_ps(88.3762626647949f));
  __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                             _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(_mm256_mul_ps(p, r), r, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

static inline __m256 sigmoid8(__m256 a) {
  const __m256 one = _mm256_set1_ps(1.0f);
  return _mm256_div_ps(one, _mm256_add_ps(one, exp8(_mm256_sub_ps(_mm256_setzero_ps(), a))));
}

/* One instruction over y[0..len) (len a multiple of 8; b at the same offset, or its one
 * element). The formulas are the reference kernel's (ops/fused_elementwise.c). */
static void apply(int64_t op, float lo, float hi, const float *b, bool bs, float *y, int64_t len) {
  const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f), vlo = _mm256_set1_ps(lo),
               vhi = _mm256_set1_ps(hi), sixth = _mm256_set1_ps(1.0f / 6.0f), half = _mm256_set1_ps(0.5f);
  for (int64_t i = 0; i < len; i += 8) {
    const __m256 a = _mm256_loadu_ps(y + i);
    const __m256 bv = !b ? zero : bs ? _mm256_set1_ps(b[0]) : _mm256_loadu_ps(b + i);
    __m256 r;
    switch (op) {
      case NNP_EW_ADD: r = _mm256_add_ps(a, bv); break;
      case NNP_EW_SUB: r = _mm256_sub_ps(a, bv); break;
      case NNP_EW_RSUB: r = _mm256_sub_ps(bv, a); break;
      case NNP_EW_MUL: r = _mm256_mul_ps(a, bv); break;
      case NNP_EW_DIV: r = _mm256_div_ps(a, bv); break;
      case NNP_EW_RDIV: r = _mm256_div_ps(bv, a); break;
      case NNP_EW_RELU: r = _mm256_blendv_ps(a, zero, _mm256_cmp_ps(a, zero, _CMP_LT_OQ)); break;
      case NNP_EW_SIGMOID: r = sigmoid8(a); break;
      case NNP_EW_NEG: r = _mm256_sub_ps(zero, a); break;
      case NNP_EW_CLIP: { /* (a < lo ? lo : a) > hi ? hi : (a < lo ? lo : a) */
        const __m256 c = _mm256_blendv_ps(a, vlo, _mm256_cmp_ps(a, vlo, _CMP_LT_OQ));
        r = _mm256_blendv_ps(c, vhi, _mm256_cmp_ps(c, vhi, _CMP_GT_OQ));
        break;
      }
      case NNP_EW_HARD_SWISH: { /* a * clamp(a / 6 + 0.5, 0, 1), a * (1/6) + 0.5 unfused as there */
        __m256 t = _mm256_add_ps(_mm256_mul_ps(a, sixth), half);
        t = _mm256_blendv_ps(t, zero, _mm256_cmp_ps(t, zero, _CMP_LT_OQ));
        t = _mm256_blendv_ps(t, one, _mm256_cmp_ps(t, one, _CMP_GT_OQ));
        r = _mm256_mul_ps(a, t);
        break;
      }
      default: r = a; break; /* not reached: nnp_ewprog_covered */
    }
    _mm256_storeu_ps(y + i, r);
  }
}

void nnp_ewprog_run_avx2(const nnp_ewprog *p, const float *x, float *y, int64_t i0, int64_t i1) {
  float tail[8], xt[8];
  for (int64_t s = i0; s < i1; s += BLK) {
    const int64_t len = i1 - s < BLK ? i1 - s : BLK, vlen = len / 8 * 8;
    if (y + s != x + s) memcpy(y + s, x + s, (size_t)vlen * sizeof(float));
    for (int k = 0; k < p->n; k++)
      apply(p->op[2 * k], p->params[2 * k], p->params[2 * k + 1], p->b[k] && !p->b_scalar[k] ? p->b[k] + s : p->b[k],
            p->b_scalar[k], y + s, vlen);
    if (vlen == len) continue;
    /* the last 1..7 elements through a padded copy of 8 (operands too) */
    const int64_t r = len - vlen, at = s + vlen;
    memset(xt, 0, sizeof xt);
    memcpy(xt, x + at, (size_t)r * sizeof(float));
    for (int k = 0; k < p->n; k++) {
      float bt[8] = {0};
      const float *bk = p->b[k];
      if (bk && !p->b_scalar[k]) memcpy(bt, bk + at, (size_t)r * sizeof(float)), bk = bt;
      apply(p->op[2 * k], p->params[2 * k], p->params[2 * k + 1], bk, p->b_scalar[k], xt, 8);
    }
    memcpy(tail, xt, sizeof tail);
    memcpy(y + at, tail, (size_t)r * sizeof(float));
  }
}
#else
void nnp_ewprog_run_avx2(const nnp_ewprog *p, const float *x, float *y, int64_t i0, int64_t i1) {
  (void)p, (void)x, (void)y, (void)i0, (void)i1; /* never selected without AVX2 (ops/fast_fused_eltwise.c) */
}
#endif
