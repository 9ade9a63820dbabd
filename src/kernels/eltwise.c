/* One loop per activation, so that the compiler vectorises each (a switch inside the
 * loop would not be). Clip keeps the reference's compare order: NaN stays NaN. */
#include "kernels/eltwise.h"

typedef struct elt_job {
  const float *a, *b;
  float *y;
  int64_t n;
  const nnp_epilogue *ep;
  int op; /* -1: activation only */
} elt_job;

static void act_block(const nnp_epilogue *ep, const float *x, float *y, int64_t n) {
  switch (ep ? ep->act : NNP_ACT_NONE) {
    case NNP_ACT_RELU:
      for (int64_t i = 0; i < n; i++) y[i] = x[i] < 0.0f ? 0.0f : x[i];
      break;
    case NNP_ACT_CLIP: {
      const float lo = ep->act_min, hi = ep->act_max;
      for (int64_t i = 0; i < n; i++) {
        float v = x[i] < lo ? lo : x[i];
        y[i] = v > hi ? hi : v;
      }
      break;
    }
    case NNP_ACT_HARDSWISH:
      for (int64_t i = 0; i < n; i++) {
        float t = x[i] + 3.0f;
        t = t < 0.0f ? 0.0f : (t > 6.0f ? 6.0f : t);
        y[i] = x[i] * t * (1.0f / 6.0f);
      }
      break;
    case NNP_ACT_SIGMOID:
      for (int64_t i = 0; i < n; i++) y[i] = 1.0f / (1.0f + expf(-x[i]));
      break;
    case NNP_ACT_SILU:
      for (int64_t i = 0; i < n; i++) y[i] = x[i] / (1.0f + nnp_exp_poly(0.0f - x[i])); /* the epilogues' SiLU */
      break;
    default:
      if (x != y)
        for (int64_t i = 0; i < n; i++) y[i] = x[i];
  }
}

static void elt_range(void *p, int64_t b, int64_t e) {
  const elt_job *j = p;
  for (int64_t blk = b; blk < e; blk++) {
    int64_t i0 = blk * NNP_ELTWISE_BLOCK, len = j->n - i0 < NNP_ELTWISE_BLOCK ? j->n - i0 : NNP_ELTWISE_BLOCK;
    const float *a = j->a + i0;
    float *y = j->y + i0;
    if (j->op == NNP_BINOP_ADD) {
      const float *bb = j->b + i0;
      for (int64_t i = 0; i < len; i++) y[i] = a[i] + bb[i];
      a = y;
    } else if (j->op == NNP_BINOP_MUL) {
      const float *bb = j->b + i0;
      for (int64_t i = 0; i < len; i++) y[i] = a[i] * bb[i];
      a = y;
    }
    act_block(j->ep, a, y, len);
  }
}

void nnp_eltwise_act(const float *x, float *y, int64_t n, const nnp_epilogue *ep, nnp_threadpool *tp) {
  elt_job j = {.a = x, .y = y, .n = n, .ep = ep, .op = -1};
  nnp_threadpool_run(tp, elt_range, &j, (n + NNP_ELTWISE_BLOCK - 1) / NNP_ELTWISE_BLOCK);
}

typedef struct hsig_job {
  const float *x;
  float *y;
  int64_t n;
  float alpha, beta;
} hsig_job;

/* The reference's expression (ops/unary.c: alpha * x + beta, then v < 0 ? 0 : v > 1 ? 1
 * : v, NaN through), compiled the same way: the same bits. */
static void hsig_range(void *p, int64_t b, int64_t e) {
  const hsig_job *j = p;
  const float alpha = j->alpha, beta = j->beta;
  for (int64_t blk = b; blk < e; blk++) {
    const int64_t i0 = blk * NNP_ELTWISE_BLOCK, len = j->n - i0 < NNP_ELTWISE_BLOCK ? j->n - i0 : NNP_ELTWISE_BLOCK;
    const float *x = j->x + i0;
    float *y = j->y + i0;
    for (int64_t i = 0; i < len; i++) {
      const float v = alpha * x[i] + beta;
      y[i] = v < 0 ? 0.0f : (v > 1 ? 1.0f : v);
    }
  }
}

void nnp_eltwise_hard_sigmoid(const float *x, float *y, int64_t n, float alpha, float beta, nnp_threadpool *tp) {
  hsig_job j = {.x = x, .y = y, .n = n, .alpha = alpha, .beta = beta};
  nnp_threadpool_run(tp, hsig_range, &j, (n + NNP_ELTWISE_BLOCK - 1) / NNP_ELTWISE_BLOCK);
}

void nnp_eltwise_binary(nnp_binop op, const float *a, const float *b, float *y, int64_t n, const nnp_epilogue *ep,
                        nnp_threadpool *tp) {
  elt_job j = {.a = a, .b = b, .y = y, .n = n, .ep = ep, .op = (int)op};
  nnp_threadpool_run(tp, elt_range, &j, (n + NNP_ELTWISE_BLOCK - 1) / NNP_ELTWISE_BLOCK);
}

typedef struct chan_job {
  const float *x, *s;
  float *y;
  int64_t C, hw;
  int s_per_image, op;
} chan_job;

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
/* AVX2 and baseline builds, picked by the loader (as gap_range in pool.c): eight floats a
 * multiply instead of four, the same products. */
__attribute__((target_clones("avx2", "default")))
#endif
static void chan_range(void *p, int64_t b, int64_t e) {
  const chan_job *j = p;
  for (int64_t plane = b; plane < e; plane++) {
    const float v = j->s[j->s_per_image ? plane : plane % j->C];
    const float *x = j->x + plane * j->hw;
    float *y = j->y + plane * j->hw;
    /* x op v per element, as the reference broadcast computes a[i] op b[i] */
    if (j->op == NNP_BINOP_MUL)
      for (int64_t i = 0; i < j->hw; i++) y[i] = x[i] * v;
    else
      for (int64_t i = 0; i < j->hw; i++) y[i] = x[i] + v;
  }
}

void nnp_eltwise_channel_binary(nnp_binop op, const float *x, const float *s, float *y, int64_t planes, int64_t C,
                                int64_t hw, int s_per_image, nnp_threadpool *tp) {
  chan_job j = {.x = x, .s = s, .y = y, .C = C, .hw = hw, .s_per_image = s_per_image, .op = (int)op};
  nnp_threadpool_run(tp, chan_range, &j, planes);
}

typedef struct row_job {
  const float *x, *v;
  float *y;
  int64_t rows, n, per_task; /* rows per task: about NNP_ELTWISE_BLOCK elements */
  int op;
} row_job;

static void row_range(void *p, int64_t b, int64_t e) {
  const row_job *j = p;
  const int64_t r1 = e * j->per_task < j->rows ? e * j->per_task : j->rows;
  for (int64_t r = b * j->per_task; r < r1; r++) {
    const float *x = j->x + r * j->n;
    float *y = j->y + r * j->n;
    /* x op v per element, as the reference broadcast computes a[i] op b[i] */
    if (j->op == NNP_BINOP_MUL)
      for (int64_t i = 0; i < j->n; i++) y[i] = x[i] * j->v[i];
    else
      for (int64_t i = 0; i < j->n; i++) y[i] = x[i] + j->v[i];
  }
}

void nnp_eltwise_row_binary(nnp_binop op, const float *x, const float *v, float *y, int64_t rows, int64_t n,
                            nnp_threadpool *tp) {
  row_job j = {.x = x, .v = v, .y = y, .rows = rows, .n = n, .op = (int)op};
  j.per_task = n >= NNP_ELTWISE_BLOCK ? 1 : NNP_ELTWISE_BLOCK / (n > 0 ? n : 1);
  nnp_threadpool_run(tp, row_range, &j, (rows + j.per_task - 1) / j.per_task);
}

typedef struct affine_job {
  const float *x, *a, *b;
  float *y;
  int64_t C, hw;
  bool relu;
} affine_job;

static void affine_range(void *p, int64_t b, int64_t e) {
  const affine_job *j = p;
  for (int64_t plane = b; plane < e; plane++) {
    const float a = j->a[plane % j->C], c = j->b[plane % j->C];
    const float *x = j->x + plane * j->hw;
    float *y = j->y + plane * j->hw;
    if (!j->relu) {
      for (int64_t i = 0; i < j->hw; i++) y[i] = x[i] * a + c;
      continue;
    }
    for (int64_t i = 0; i < j->hw; i++) {
      const float v = x[i] * a + c;
      y[i] = v < 0 ? 0.0f : v; /* Relu's reference: a NaN stays */
    }
  }
}

void nnp_eltwise_channel_affine(const float *x, const float *a, const float *b, float *y, int64_t planes, int64_t C,
                                int64_t hw, bool relu, nnp_threadpool *tp) {
  affine_job j = {.x = x, .a = a, .b = b, .y = y, .C = C, .hw = hw, .relu = relu};
  nnp_threadpool_run(tp, affine_range, &j, planes);
}
