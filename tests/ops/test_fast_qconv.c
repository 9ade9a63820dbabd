/* QLinearConv's INT8 fast path (ops/fast_qconv.c, kernels/qgemm.h) against the reference
 * QLinearConv (ops/quant.c), byte for byte: random shapes, kernel sizes, strides, pads,
 * dilations, zero points (activation and per-channel weight), with and without bias,
 * for the AVX2 and the generic tiles and 1..3 threads; and the cases it must decline
 * (groups, int8 activations, run-time weights). */
#include "ops/op_eval.h"
#include "kernels/cpu.h"
#include "kernels/qgemm.h"
#include "op_test_util.h"
#include "ops/fast_ops.h"
#include "ops/op_util.h"
#include "util/threadpool.h"

static uint64_t rs = 0x2545F4914F6CDD1Dull;
static uint32_t rnd(void) {
  rs ^= rs << 13;
  rs ^= rs >> 7;
  rs ^= rs << 17;
  return (uint32_t)(rs >> 16);
}
static int64_t rint_in(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint32_t)(hi - lo + 1)); }

/* Prepares and runs the fast kernel on in[]; *declined when prepare leaves run NULL. */
static nnp_status run_fast(test_node *t, const nnp_tensor *const *in, int n_in, bool generic, nnp_threadpool *tp,
                           nnp_tensor *y, bool *declined) {
  nnp_tensor o[1];
  NNP_TRY(nnp_op_infer(t->n, 13, n_in, in, 1, o, NULL));
  *y = o[0];
  NNP_TRY(nnp_tensor_alloc(y));
  nnp_tensor *outs[1] = {y};
  nnp_op_ctx ctx = {.node = t->n, .opset = 13, .n_in = n_in, .in = in, .n_out = 1, .out = outs, .pool = tp};
  nnp_fast_kernel k;
  NNP_TRY(nnp_prepare_qlinear_conv(&ctx, generic, &k));
  *declined = k.run == NULL;
  if (!k.run) return NNP_OK;
  void *scratch = nnp_aligned_alloc(k.scratch_needed + 64);
  ctx.scratch = scratch;
  ctx.scratch_size = k.scratch_needed;
  nnp_status s = k.run(k.state, &ctx);
  nnp_aligned_free(scratch);
  k.destroy(k.state);
  return s;
}

static void one_case(int trial, nnp_threadpool *const *pools) {
  int64_t N = rint_in(1, 2), C = rint_in(1, 20), H = rint_in(1, 14), W = rint_in(1, 14), M = rint_in(1, 40);
  if (trial % 3 == 1) W = rint_in(16, 40); /* rows of >= 16 outputs: im2col's contiguous path */
  int64_t kh = rint_in(1, 3) * 2 - 1, kw = trial % 5 == 0 ? 1 : kh; /* 1, 3, 5; sometimes 1 x kh */
  if (trial % 4 == 0) kh = kw = 1;
  int64_t sh = rint_in(1, 2), sw = sh, dh = trial % 6 == 5 ? 2 : 1, ph = rint_in(0, kh / 2 + dh - 1), pw = ph;
  bool noattr = trial % 7 == 6; /* no attributes: stride 1, no padding, no dilation (the defaults) */
  if (noattr) {
    sh = sw = dh = 1;
    ph = pw = 0;
  }
  if ((H + 2 * ph - dh * (kh - 1) - 1) < 0 || (W + 2 * pw - dh * (kw - 1) - 1) < 0) {
    H += dh * kh;
    W += dh * kw;
  }
  bool dw = trial % 4 == 3; /* depthwise: group = C = M (kernels/qdwconv.h) */
  if (dw) {
    M = C = rint_in(1, 24);
    if (trial % 8 == 3) kw = kh; /* square kernels most of the time */
  }
  int64_t xd[4] = {N, C, H, W}, wd[4] = {M, dw ? 1 : C, kh, kw}, md[1] = {M}, sd[1] = {0};
  nnp_tensor X = test_tensor(NNP_U8, 4, xd, NULL), Wt = test_tensor(NNP_I8, 4, wd, NULL);
  for (int64_t i = 0; i < nnp_tensor_numel(&X); i++) ((uint8_t *)X.data)[i] = (uint8_t)rnd();
  for (int64_t i = 0; i < nnp_tensor_numel(&Wt); i++) ((int8_t *)Wt.data)[i] = (int8_t)rnd();
  float xs = 0.01f + (float)(rnd() % 100) / 1000.0f, ys = 0.05f + (float)(rnd() % 100) / 50.0f;
  uint8_t xz = (uint8_t)rnd(), yz = (uint8_t)rnd();
  float *ws = nnp_malloc((size_t)M * sizeof(float));
  int8_t *wz = nnp_malloc((size_t)M);
  int32_t *bias = nnp_malloc((size_t)M * sizeof(int32_t));
  for (int64_t m = 0; m < M; m++) {
    ws[m] = 0.001f + (float)(rnd() % 100) / 10000.0f;
    wz[m] = trial % 3 == 0 ? (int8_t)rnd() : 0;
    bias[m] = (int32_t)rint_in(-20000, 20000);
  }
  nnp_tensor XS = test_tensor(NNP_F32, 0, sd, &xs), XZ = test_tensor(NNP_U8, 0, sd, &xz);
  nnp_tensor WS = test_tensor(NNP_F32, 1, md, ws), WZ = test_tensor(NNP_I8, 1, md, wz);
  nnp_tensor YS = test_tensor(NNP_F32, 0, sd, &ys), YZ = test_tensor(NNP_U8, 0, sd, &yz);
  nnp_tensor B = test_tensor(NNP_I32, 1, md, bias), Yref;
  test_node t = test_node_new("QLinearConv");
  const int64_t pads[4] = {ph, pw, ph, pw}, strides[2] = {sh, sw}, dil[2] = {dh, dh};
  if (dw) test_attr_int(&t, "group", C);
  if (trial % 9 == 4) { /* a fused Relu / Clip of fuse-qdq: nnperf_clamp [qmin, qmax] */
    const int64_t cl[2] = {rint_in(0, 100), rint_in(150, 255)};
    test_attr_ints(&t, "nnperf_clamp", 2, cl);
  }
  if (!noattr) {
    test_attr_ints(&t, "pads", 4, pads);
    test_attr_ints(&t, "strides", 2, strides);
    test_attr_ints(&t, "dilations", 2, dil);
  }
  const nnp_tensor *in[9] = {&X, &XS, &XZ, &Wt, &WS, &WZ, &YS, &YZ, &B};
  int n_in = trial % 2 ? 9 : 8;
  CHECK_OK(nnp_op_eval(t.n, 13, n_in, in, 1, &Yref));
  for (int generic = 0; generic < 2; generic++) {
    if (!generic && !nnp_cpu_has_avx2_fma()) continue;
    for (int th = 0; th < 3; th++) {
      nnp_tensor Y = {0};
      bool declined = true;
      CHECK_OK(run_fast(&t, in, n_in, generic, pools[th], &Y, &declined));
      CHECK_MSG(!declined, "trial %d: the fast path declined", trial);
      int64_t n = nnp_tensor_numel(&Yref), bad = -1;
      for (int64_t i = 0; !declined && Y.data && i < n && bad < 0; i++)
        if (((uint8_t *)Y.data)[i] != ((uint8_t *)Yref.data)[i]) bad = i;
      CHECK_MSG(bad < 0,
                "trial %d N=%lld C=%lld H=%lld W=%lld M=%lld k=%lldx%lld s=%lld p=%lld d=%lld bias=%d %s threads=%d: "
                "y[%lld] = %d, want %d",
                trial, (long long)N, (long long)C, (long long)H, (long long)W, (long long)M, (long long)kh,
                (long long)kw, (long long)sh, (long long)ph, (long long)dh, n_in == 9, generic ? "generic" : nnp_qgemm_isa_name(nnp_qgemm_best_isa()),
                th + 1, (long long)bad, bad < 0 ? 0 : ((uint8_t *)Y.data)[bad],
                bad < 0 ? 0 : ((uint8_t *)Yref.data)[bad]);
      nnp_tensor_free(&Y);
    }
  }
  nnp_tensor_free(&Yref);
  test_node_free(&t);
  nnp_free(ws);
  nnp_free(wz);
  nnp_free(bias);
  nnp_tensor *all[] = {&X, &Wt, &XS, &XZ, &WS, &WZ, &YS, &YZ, &B};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) nnp_tensor_free(all[i]);
}

/* Groups, and weights known only at run time, fall back to the reference kernel. */
static void declines(void) {
  int64_t xd[4] = {1, 4, 5, 5}, wd[4] = {4, 2, 3, 3}, md[1] = {4}, sd[1] = {0};
  float one = 1.0f, ws[4] = {1, 1, 1, 1};
  uint8_t z = 0;
  int8_t wz[4] = {0};
  nnp_tensor X = test_tensor(NNP_U8, 4, xd, NULL), Wt = test_tensor(NNP_I8, 4, wd, NULL);
  nnp_tensor XS = test_tensor(NNP_F32, 0, sd, &one), XZ = test_tensor(NNP_U8, 0, sd, &z);
  nnp_tensor WS = test_tensor(NNP_F32, 1, md, ws), WZ = test_tensor(NNP_I8, 1, md, wz);
  test_node t = test_node_new("QLinearConv");
  test_attr_int(&t, "group", 2);
  const nnp_tensor *in[8] = {&X, &XS, &XZ, &Wt, &WS, &WZ, &XS, &XZ};
  nnp_tensor Y = {0};
  bool declined = false;
  CHECK_OK(run_fast(&t, in, 8, false, NULL, &Y, &declined));
  CHECK_MSG(declined, "group 2 must decline");
  nnp_tensor_free(&Y);
  test_node_free(&t);
  nnp_tensor *all[] = {&X, &Wt, &XS, &XZ, &WS, &WZ};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) nnp_tensor_free(all[i]);
}

int main(void) {
  nnp_threadpool *pools[3] = {NULL};
  for (int t = 1; t < 3; t++) CHECK_OK(nnp_threadpool_create(t + 1, &pools[t]));
  for (int trial = 0; trial < 120; trial++) one_case(trial, pools);
  declines();
  for (int t = 1; t < 3; t++) nnp_threadpool_destroy(pools[t]);
  TEST_MAIN_END();
}
