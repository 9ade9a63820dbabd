/* Block splitting and the scalar bodies of the INT8 elementwise kernels (qeltwise.h). */
#include "kernels/qeltwise.h"

typedef enum { K_QUANT, K_DEQUANT, K_QADD } kind;

typedef struct qew_job {
  kind k;
  const void *a;
  const uint8_t *b;
  void *y;
  int64_t n;
  float scale;
  int32_t zp;
  const nnp_qadd_params *p;
  bool generic;
} qew_job;

static void qew_range(void *arg, int64_t b0, int64_t b1) {
  const qew_job *j = arg;
  int64_t i0 = b0 * NNP_QELTWISE_BLOCK, i1 = b1 * NNP_QELTWISE_BLOCK;
  if (i1 > j->n) i1 = j->n;
  int64_t n = i1 - i0;
  switch (j->k) {
    case K_QUANT: {
      const float *x = (const float *)j->a + i0;
      uint8_t *y = (uint8_t *)j->y + i0;
      if (!j->generic) nnp_quantize_u8_avx2(x, y, n, j->scale, j->zp);
      else
        for (int64_t i = 0; i < n; i++) y[i] = nnp_quantize_one(x[i], j->scale, j->zp);
      break;
    }
    case K_DEQUANT: {
      const uint8_t *x = (const uint8_t *)j->a + i0;
      float *y = (float *)j->y + i0;
      if (!j->generic) nnp_dequantize_u8_avx2(x, y, n, j->scale, j->zp);
      else
        for (int64_t i = 0; i < n; i++) y[i] = nnp_dequantize_one(x[i], j->scale, j->zp);
      break;
    }
    case K_QADD: {
      const uint8_t *a = (const uint8_t *)j->a + i0, *b = j->b + i0;
      uint8_t *y = (uint8_t *)j->y + i0;
      if (!j->generic) nnp_qadd_u8_avx2(a, b, y, n, j->p);
      else
        for (int64_t i = 0; i < n; i++) y[i] = nnp_qadd_one(a[i], b[i], j->p);
      break;
    }
  }
}

static void run(qew_job *j, nnp_threadpool *tp) {
  if (j->n <= 0) return;
  nnp_threadpool_run(tp, qew_range, j, (j->n + NNP_QELTWISE_BLOCK - 1) / NNP_QELTWISE_BLOCK);
}

void nnp_quantize_u8(const float *x, uint8_t *y, int64_t n, float scale, int32_t zp, nnp_threadpool *tp,
                     bool generic) {
  qew_job j = {.k = K_QUANT, .a = x, .y = y, .n = n, .scale = scale, .zp = zp, .generic = generic};
  run(&j, tp);
}

void nnp_dequantize_u8(const uint8_t *x, float *y, int64_t n, float scale, int32_t zp, nnp_threadpool *tp,
                       bool generic) {
  qew_job j = {.k = K_DEQUANT, .a = x, .y = y, .n = n, .scale = scale, .zp = zp, .generic = generic};
  run(&j, tp);
}

void nnp_qadd_u8(const uint8_t *a, const uint8_t *b, uint8_t *y, int64_t n, const nnp_qadd_params *p,
                 nnp_threadpool *tp, bool generic) {
  qew_job j = {.k = K_QADD, .a = a, .b = b, .y = y, .n = n, .p = p, .generic = generic};
  run(&j, tp);
}
