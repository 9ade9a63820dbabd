/* Packing, the generic dot product and the thread split of kernels/qgemv.h. */
#include "kernels/qgemv.h"

#include "kernels/dispatch.h"

#define QGEMV_VEC 16 /* int16 lanes of one YMM */
#define QGEMV_BLOCK 4

int64_t nnp_qgemv_kpad(int64_t K) { return (K + QGEMV_VEC - 1) / QGEMV_VEC * QGEMV_VEC; }

void nnp_qgemv_pack_w(int64_t N, int64_t K, const int8_t *W, int64_t swn, int64_t swk, const int32_t *w_zp,
                      int16_t *dst) {
  int64_t kp = nnp_qgemv_kpad(K);
  for (int64_t n = 0; n < N; n++)
    for (int64_t k = 0; k < kp; k++) dst[n * kp + k] = k < K ? (int16_t)(W[n * swn + k * swk] - w_zp[n]) : 0;
}

void nnp_qgemv_widen_x(int64_t R, int64_t K, const uint8_t *X, int32_t x_zp, int16_t *dst) {
  int64_t kp = nnp_qgemv_kpad(K);
  for (int64_t r = 0; r < R; r++)
    for (int64_t k = 0; k < kp; k++) dst[r * kp + k] = k < K ? (int16_t)((int32_t)X[r * K + k] - x_zp) : 0;
}

static void dot4_generic(int64_t kpad, const int16_t *x, const int16_t *w, int64_t ldw, int nw, int32_t acc[4]) {
  for (int j = 0; j < nw; j++) {
    int32_t s = 0;
    for (int64_t k = 0; k < kpad; k++) s += (int32_t)x[k] * w[j * ldw + k];
    acc[j] = s;
  }
}

typedef struct qgemv_job {
  int64_t R, N, kpad;
  const int16_t *x, *w;
  const nnp_qgemv_out *out;
  bool generic;
} qgemv_job;

static void store(const qgemv_job *j, int64_t r, int64_t n, int32_t acc) {
  const nnp_qgemv_out *o = j->out;
  if (o->u8) {
    o->u8[r * j->N + n] = nnp_qrequant(acc, o->ep, n);
  } else {
    int32_t s = acc + (o->bias ? o->bias[n] : 0);
    o->f32[r * j->N + n] = (float)s * o->scale[n];
  }
}

/* Output-channel blocks [b, e) of QGEMV_BLOCK channels each. */
static void qgemv_range(void *p, int64_t b, int64_t e) {
  const qgemv_job *j = p;
  for (int64_t blk = b; blk < e; blk++) {
    int64_t n0 = blk * QGEMV_BLOCK;
    int nw = (int)(j->N - n0 < QGEMV_BLOCK ? j->N - n0 : QGEMV_BLOCK);
    const int16_t *w = j->w + n0 * j->kpad;
    for (int64_t r = 0; r < j->R; r++) {
      int32_t acc[QGEMV_BLOCK] = {0};
      const int16_t *x = j->x + r * j->kpad;
      if (!j->generic && nw == QGEMV_BLOCK) nnp_qgemv_dot4_avx2(j->kpad, x, w, j->kpad, acc);
      else dot4_generic(j->kpad, x, w, j->kpad, nw, acc);
      for (int c = 0; c < nw; c++) store(j, r, n0 + c, acc[c]);
    }
  }
}

void nnp_qgemv(int64_t R, int64_t N, int64_t kpad, const int16_t *x, const int16_t *w, const nnp_qgemv_out *out,
               nnp_threadpool *tp, bool generic) {
  if (R <= 0 || N <= 0) return;
  qgemv_job j = {.R = R, .N = N, .kpad = kpad, .x = x, .w = w, .out = out,
                 .generic = nnp_dispatch_portable(NNP_KF_QGEMV, generic)};
  nnp_threadpool_run(tp, qgemv_range, &j, (N + QGEMV_BLOCK - 1) / QGEMV_BLOCK);
}
