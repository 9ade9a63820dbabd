/* Packed INT8 GEMM: the AVX2 (vpmaddwd), AVX-512 VNNI (vpdpwssd, where the CPU has it)
 * and generic tiles, and the u8 x s8 layout (vpdpbusd and its generic tile, symmetric
 * weights) against a plain int64
 * reference plus the shared requantize, bit for bit, over random odd shapes, zero points,
 * fused clamps and thread counts 1..4; then the corners where u8 x s8 vpmaddubsw would
 * saturate its int16 pair sums (all 255 x all -128 / 127, and zero-point-shifted
 * operands at +-255), which the chosen int16 path must compute exactly. */
#include <string.h>

#include "kernel_test_util.h"
#include "kernels/cpu.h"
#include "kernels/qgemm.h"
#include "nnperf/alloc.h"
#include "test.h"

typedef struct qcase {
  int64_t M, N, K;
  int8_t *A;
  uint8_t *B;
  int32_t *azp, *bias;
  float *mult;
  int32_t bzp;
  nnp_qepilogue ep;
} qcase;

static void reference(const qcase *q, uint8_t *want, int64_t *raw) {
  for (int64_t i = 0; i < q->M; i++)
    for (int64_t j = 0; j < q->N; j++) {
      int64_t s = 0;
      for (int64_t k = 0; k < q->K; k++)
        s += (int64_t)(q->A[i * q->K + k] - (q->azp ? q->azp[i] : 0)) * (int64_t)(q->B[k * q->N + j] - q->bzp);
      if (raw) raw[i * q->N + j] = s;
      want[i * q->N + j] = nnp_qrequant((int32_t)s, &q->ep, i);
    }
}

/* Runs both tiles with 1..4 threads; every output byte must equal the reference. */
static void run_case(const char *what, const qcase *q, nnp_threadpool *const *pools) {
  int64_t M = q->M, N = q->N, K = q->K;
  uint8_t *want = nnp_malloc((size_t)(M * N)), *got = nnp_malloc((size_t)(M * N));
  reference(q, want, NULL);
  int16_t *ap = nnp_aligned_alloc(nnp_qgemm_packed_a_elems(M, K) * sizeof(int16_t));
  int16_t *bp = nnp_aligned_alloc(nnp_qgemm_packed_b_elems(K, N) * sizeof(int16_t));
  nnp_qgemm_pack_a(M, K, q->A, K, q->azp, ap);
  nnp_qgemm_pack_b(K, N, q->B, N, 1, q->bzp, bp);
  for (int isa = NNP_QGEMM_GENERIC; isa <= NNP_QGEMM_VNNI; isa++) {
    if (isa == NNP_QGEMM_AVX2 && !nnp_cpu_has_avx2_fma()) continue;
    if (isa == NNP_QGEMM_VNNI && !nnp_cpu_has_avx512_vnni()) continue;
    for (int t = 0; t < 4; t++) {
      memset(got, 0xa5, (size_t)(M * N));
      nnp_qgemm_packed_isa(M, N, K, ap, bp, got, N, &q->ep, pools[t], (nnp_qgemm_isa)isa);
      int64_t bad = -1;
      for (int64_t i = 0; i < M * N && bad < 0; i++)
        if (got[i] != want[i]) bad = i;
      CHECK_MSG(bad < 0, "%s M=%lld N=%lld K=%lld %s threads=%d: C[%lld] = %d, want %d", what, (long long)M,
                (long long)N, (long long)K, nnp_qgemm_isa_name((nnp_qgemm_isa)isa), t + 1, (long long)bad,
                bad < 0 ? 0 : got[bad], bad < 0 ? 0 : want[bad]);
    }
  }
  nnp_aligned_free(ap);
  nnp_aligned_free(bp);
  /* the u8 x s8 layout (vpdpbusd) where the weights are symmetric: raw bytes, the B zero
   * point folded into the bias as -bzp * rowsum(A) */
  bool sym = true;
  for (int64_t i = 0; i < M; i++) sym = sym && (!q->azp || q->azp[i] == 0);
  if (sym) {
    int8_t *a4 = nnp_aligned_alloc(nnp_qgemm4_packed_a_bytes(M, K));
    uint8_t *b4 = nnp_aligned_alloc(nnp_qgemm4_packed_b_bytes(K, N));
    int32_t *bias = nnp_malloc((size_t)M * sizeof(int32_t));
    for (int64_t i = 0; i < M; i++) {
      int64_t sum = 0;
      for (int64_t k = 0; k < K; k++) sum += q->A[i * K + k];
      bias[i] = (q->ep.bias ? q->ep.bias[i] : 0) - (int32_t)(q->bzp * sum);
    }
    nnp_qepilogue ep = q->ep;
    ep.bias = bias;
    nnp_qgemm4_pack_a(M, K, q->A, K, a4);
    nnp_qgemm4_pack_b(K, N, q->B, N, 1, (uint8_t)q->bzp, b4);
    for (int vnni = 0; vnni < 2; vnni++) {
      if (vnni && !nnp_cpu_has_avx512_vnni()) continue;
      for (int t = 0; t < 4; t++) {
        memset(got, 0xa5, (size_t)(M * N));
        nnp_qgemm4_packed(M, N, K, a4, b4, got, N, &ep, pools[t], vnni);
        int64_t bad = -1;
        for (int64_t i = 0; i < M * N && bad < 0; i++)
          if (got[i] != want[i]) bad = i;
        CHECK_MSG(bad < 0, "%s M=%lld N=%lld K=%lld u8 %s threads=%d: C[%lld] = %d, want %d", what, (long long)M,
                  (long long)N, (long long)K, vnni ? "vnni" : "generic", t + 1, (long long)bad,
                  bad < 0 ? 0 : got[bad], bad < 0 ? 0 : want[bad]);
      }
    }
    nnp_aligned_free(a4);
    nnp_aligned_free(b4);
    nnp_free(bias);
  }
  nnp_free(want);
  nnp_free(got);
}

static qcase alloc_case(int64_t M, int64_t N, int64_t K) {
  qcase q = {.M = M, .N = N, .K = K};
  q.A = nnp_malloc((size_t)(M * K) + 1);
  q.B = nnp_malloc((size_t)(K * N) + 1);
  q.azp = nnp_calloc((size_t)M, sizeof(int32_t));
  q.bias = nnp_calloc((size_t)M, sizeof(int32_t));
  q.mult = nnp_calloc((size_t)M, sizeof(float));
  q.ep = (nnp_qepilogue){.bias = q.bias, .mult = q.mult, .zp = 0, .qmin = 0, .qmax = 255};
  return q;
}

static void free_case(qcase *q) {
  nnp_free(q->A);
  nnp_free(q->B);
  nnp_free(q->azp);
  nnp_free(q->bias);
  nnp_free(q->mult);
}

static void random_case(int trial, nnp_threadpool *const *pools) {
  int64_t M = kt_int(1, 40), N = kt_int(1, 70), K = kt_int(1, 90);
  if (trial % 7 == 0) {
    M = kt_int(30, 130);
    N = kt_int(30, 200);
    K = kt_int(100, 1200);
  }
  qcase q = alloc_case(M, N, K);
  for (int64_t i = 0; i < M * K; i++) q.A[i] = (int8_t)(kt_next() & 0xff);
  for (int64_t i = 0; i < K * N; i++) q.B[i] = (uint8_t)(kt_next() & 0xff);
  q.bzp = (int32_t)kt_int(0, 255);
  bool wzp = trial % 3 == 0; /* asymmetric weights sometimes; symmetric (0) otherwise */
  for (int64_t i = 0; i < M; i++) {
    if (wzp) q.azp[i] = (int32_t)kt_int(-128, 127);
    q.bias[i] = (int32_t)kt_int(-50000, 50000);
    /* scale so that outputs spread over the byte range (some clamp) */
    q.mult[i] = (float)kt_int(1, 1000) / (1000.0f * 16.0f * (float)K * 64.0f) * 255.0f;
  }
  q.ep.zp = (int32_t)kt_int(0, 255);
  if (trial % 4 == 1) q.ep.qmin = q.ep.zp; /* fused Relu */
  if (trial % 4 == 2) {                   /* fused Clip */
    q.ep.qmin = (int32_t)kt_int(0, 100);
    q.ep.qmax = (int32_t)kt_int(150, 255);
  }
  char what[32];
  snprintf(what, sizeof what, "random %d", trial);
  run_case(what, &q, pools);
  free_case(&q);
}

/* Every A = a, every B = b, zero points given: each int16 pair sum is 2*(a-azp)(b-bzp),
 * which vpmaddubsw would clip to [-32768, 32767] for |product| > 16383. The requantize
 * maps the exact sum to a mid-range byte, so a clipped sum lands far from it. */
static void corner(int8_t a, int32_t azp, uint8_t b, int32_t bzp, int64_t K, nnp_threadpool *const *pools) {
  int64_t M = 7, N = 19;
  qcase q = alloc_case(M, N, K);
  memset(q.A, (uint8_t)a, (size_t)(M * K));
  memset(q.B, b, (size_t)(K * N));
  q.bzp = bzp;
  int64_t exact = (int64_t)(a - azp) * (b - bzp) * K;
  for (int64_t i = 0; i < M; i++) {
    q.azp[i] = azp;
    q.mult[i] = 100.0f / (float)(exact < 0 ? -exact : exact);
  }
  q.ep.zp = 128; /* the exact result is 128 +- 100 */
  uint8_t *want = nnp_malloc((size_t)(M * N));
  int64_t *raw = nnp_malloc((size_t)(M * N) * sizeof(int64_t));
  reference(&q, want, raw);
  CHECK(raw[0] == exact);
  CHECK(want[0] == (exact < 0 ? 28 : 228));
  /* what a saturating int16 pair sum would give: half (or less) of the exact result */
  int64_t pair = 2 * (int64_t)(a - azp) * (b - bzp), clipped = pair > 32767 ? 32767 : pair < -32768 ? -32768 : pair;
  if (clipped != pair) CHECK(nnp_qrequant((int32_t)(clipped * (K / 2)), &q.ep, 0) != want[0]);
  char what[64];
  snprintf(what, sizeof what, "corner a=%d azp=%d b=%d bzp=%d", a, azp, b, bzp);
  run_case(what, &q, pools);
  nnp_free(want);
  nnp_free(raw);
  free_case(&q);
}

int main(void) {
  printf("kernel ISA: %s\n", nnp_cpu_kernel_isa());
  nnp_threadpool *pools[4] = {NULL};
  for (int t = 1; t < 4; t++) CHECK_OK(nnp_threadpool_create(t + 1, &pools[t]));
  for (int trial = 0; trial < 120; trial++) random_case(trial, pools);
  int64_t Ks[] = {2, 3, 64, 577, 4608};
  for (size_t i = 0; i < sizeof Ks / sizeof Ks[0]; i++) {
    corner(-128, 0, 255, 0, Ks[i], pools);  /* 2*255*-128 = -65280: vpmaddubsw clips */
    corner(127, 0, 255, 0, Ks[i], pools);   /* 2*255*127 = 64770 */
    corner(-128, 127, 255, 0, Ks[i], pools); /* (w - w_zp) = -255: 2*255*-255 = -130050 */
    corner(127, -128, 0, 255, Ks[i], pools); /* (255) x (-255) */
    corner(-128, 127, 0, 255, Ks[i], pools); /* (-255) x (-255) = +65025 per product */
  }
  for (int t = 1; t < 4; t++) nnp_threadpool_destroy(pools[t]);
  TEST_MAIN_END();
}
