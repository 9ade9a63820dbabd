/* Elementwise INT8 glue of a quantized graph, on uint8 tensors with per-tensor scales and
 * zero points: QuantizeLinear (float -> uint8), DequantizeLinear (uint8 -> float) and the
 * quantized residual add y = Q(act(DQ(a) + DQ(b))) that replaces DequantizeLinear x2 ->
 * Add [-> Relu] -> QuantizeLinear (ops/qlinear_add.c).
 *
 * Every kernel performs the float32 operations of the reference kernels (ops/quant.c,
 * the FusedElementwise Add/Relu) in the same order, so the AVX2 paths equal the scalar
 * functions below bit for bit (division, not a multiply by the reciprocal; rounding half
 * to even; NaN saturating to the low bound). Split across the pool in blocks of
 * NNP_QELTWISE_BLOCK elements. */
#ifndef NNP_KERNELS_QELTWISE_H
#define NNP_KERNELS_QELTWISE_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/threadpool.h"

#define NNP_QELTWISE_BLOCK 16384

typedef struct nnp_qadd_params {
  float a_scale, b_scale, y_scale;
  int32_t a_zp, b_zp, y_zp;
  /* a Relu (lo 0, hi +inf) or Clip between the Add and the QuantizeLinear; without one
   * act is false and lo/hi are ignored */
  bool act;
  float lo, hi;
} nnp_qadd_params;

/* QuantizeLinear's saturating store to uint8 of an already rounded value (ops/quant.c). */
static inline uint8_t nnp_q8_sat(float r) {
  if (!(r >= 0.0f)) r = 0.0f;
  if (r > 255.0f) r = 255.0f;
  return (uint8_t)r;
}

static inline uint8_t nnp_quantize_one(float x, float scale, int32_t zp) {
  return nnp_q8_sat(rintf(rintf(x / scale) + (float)zp));
}

static inline float nnp_dequantize_one(uint8_t q, float scale, int32_t zp) {
  return (float)((int64_t)q - zp) * scale;
}

static inline uint8_t nnp_qadd_one(uint8_t a, uint8_t b, const nnp_qadd_params *p) {
  float s = nnp_dequantize_one(a, p->a_scale, p->a_zp) + nnp_dequantize_one(b, p->b_scale, p->b_zp);
  if (p->act) { /* the reference Relu / Clip: NaN passes through both */
    s = s < p->lo ? p->lo : s;
    s = s > p->hi ? p->hi : s;
  }
  return nnp_quantize_one(s, p->y_scale, p->y_zp);
}

/* generic: the scalar functions above (tests, NNP_CPU_FEATURES=generic, no AVX2). */
void nnp_quantize_u8(const float *x, uint8_t *y, int64_t n, float scale, int32_t zp, nnp_threadpool *tp,
                     bool generic);
void nnp_dequantize_u8(const uint8_t *x, float *y, int64_t n, float scale, int32_t zp, nnp_threadpool *tp,
                       bool generic);
void nnp_qadd_u8(const uint8_t *a, const uint8_t *b, uint8_t *y, int64_t n, const nnp_qadd_params *p,
                 nnp_threadpool *tp, bool generic);

/* The AVX2 bodies over [0, n) (qeltwise_avx2.c); the caller splits and checks the CPU. */
void nnp_quantize_u8_avx2(const float *x, uint8_t *y, int64_t n, float scale, int32_t zp);
void nnp_dequantize_u8_avx2(const uint8_t *x, float *y, int64_t n, float scale, int32_t zp);
void nnp_qadd_u8_avx2(const uint8_t *a, const uint8_t *b, uint8_t *y, int64_t n, const nnp_qadd_params *p);

#endif
