/* Graph passes and the memory planner: each pass on a small hand-built model, asserting the
 * graph change (step count, op types) and that outputs match the unoptimised plan
 * (bit-identical, except BatchNorm folding, which changes rounding); the planner on random
 * lifetimes and on zoo models (no two live buffers overlap, except an in-place pair). */
#include <stdint.h>
#include <string.h>

#include "engine/memory_plan.h"
#include "kernels/dispatch.h"
#include "nnperf/alloc.h"
#include "nnperf/bench.h"
#include "nnperf/engine.h"
#include "nnperf/onnx.h"
#include "nnperf/passes.h"
#include "nnperf/zoo.h"
#include "onnx/onnx.pb-c.h"
#include "test.h"

#define F32 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define I64 ONNX__TENSOR_PROTO__DATA_TYPE__INT64

#include "model_builder.h"

static nnp_graph *load(Onnx__ModelProto *m) {
  size_t n;
  uint8_t *buf = mb_pack(m, &n);
  nnp_graph *g = NULL;
  nnp_status s = nnp_onnx_load_buffer(buf, n, NULL, NULL, &g);
  CHECK_MSG(s == NNP_OK, "load: %s", nnp_last_error());
  return g;
}

/* Deterministic weights in [-1, 1). */
static float *weights(size_t n, uint64_t seed) {
  float *w = mb_alloc(n * sizeof *w);
  for (size_t i = 0; i < n; i++) w[i] = (float)((nnp_mix64(seed * 1000003u + i) >> 40) / (double)(1 << 24)) * 2 - 1;
  return w;
}

typedef struct result {
  int steps;
  char ops[16][24]; /* op type of each step */
  char kernels[16][32]; /* its fast kernel, or "reference" */
  float out[4096];
  size_t n_out;
  int inplace;
} result;

/* Reference kernels unless a test asks for the fast ones: a pass must not change a
 * single bit of what the reference kernels compute (the fast kernels are checked against
 * the reference ones within tolerance in tests/kernels/). */
static bool g_fast_kernels = false;

/* Compiles g with the given passes and memory plan, runs it on seeded inputs. */
static void run(const nnp_graph *g, unsigned passes, bool memory_plan, result *r) {
  memset(r, 0, sizeof *r);
  nnp_plan_options o;
  nnp_plan_options_default(&o);
  o.passes = passes;
  o.memory_plan = memory_plan;
  o.fast_kernels = g_fast_kernels;
  nnp_plan *p = NULL;
  nnp_status s = nnp_plan_compile(g, &o, &p);
  CHECK_MSG(s == NNP_OK, "compile: %s", nnp_last_error());
  if (s != NNP_OK) return;
  for (int i = 0; i < nnp_plan_num_inputs(p); i++) nnp_fill_seeded(nnp_plan_input(p, i), 7 + (uint64_t)i);
  CHECK_OK(nnp_plan_run(p));
  r->steps = nnp_plan_num_steps(p);
  for (int k = 0; k < r->steps && k < 16; k++) {
    snprintf(r->ops[k], sizeof r->ops[k], "%s", nnp_plan_step_node(p, k)->op_type);
    const char *kn = nnp_plan_step_kernel(p, k);
    snprintf(r->kernels[k], sizeof r->kernels[k], "%s", kn ? kn : "reference");
  }
  const nnp_tensor *y = nnp_plan_output(p, 0);
  r->n_out = (size_t)nnp_tensor_numel(y);
  if (r->n_out > 4096) r->n_out = 4096;
  memcpy(r->out, y->data, r->n_out * sizeof(float));
  r->inplace = nnp_plan_memory_stats(p)->inplace;
  nnp_plan_destroy(p);
}

static bool identical(const result *a, const result *b) {
  return a->n_out == b->n_out && a->n_out > 0 && memcmp(a->out, b->out, a->n_out * sizeof(float)) == 0;
}

static double max_diff(const result *a, const result *b) {
  double m = a->n_out == b->n_out ? 0 : 1e30;
  for (size_t i = 0; i < a->n_out && i < b->n_out; i++) {
    double d = a->out[i] > b->out[i] ? a->out[i] - b->out[i] : b->out[i] - a->out[i];
    if (d > m) m = d;
  }
  return m;
}

static const int64_t x_dims[] = {1, 3, 8, 8}, w_dims[] = {4, 3, 3, 3}, b_dims[] = {4};

/* x -> Conv -> <act> -> y, every act kind; Clip with constant bounds (opset 13). */
static void test_fuse_activation(void) {
  const char *acts[] = {"Relu", "Clip", "HardSwish", "Sigmoid"}; /* Silu: test_fuse_gated_pattern */
  for (int a = 0; a < 4; a++) {
    Onnx__ModelProto *m = mb_model(13);
    mb_input(m, "x", F32, 4, x_dims);
    mb_init_f32(m, "w", 4, w_dims, weights(108, 1));
    mb_init_f32(m, "b", 1, b_dims, weights(4, 2));
    mb_node(m, "Conv", "conv", "x,w,b", "c");
    if (a == 1) {
      float lo = -0.25f, hi = 0.5f;
      mb_init_f32(m, "lo", 0, NULL, &lo);
      mb_init_f32(m, "hi", 0, NULL, &hi);
      mb_node(m, "Clip", "act", "c,lo,hi", "y");
    } else {
      mb_node(m, acts[a], "act", "c", "y");
    }
    mb_output(m, "y", F32);
    nnp_graph *g = load(m);
    if (!g) continue;
    result base, opt;
    run(g, 0, false, &base);
    run(g, NNP_PASS_FUSE_ACTIVATION, false, &opt);
    CHECK_MSG(base.steps == 2 && opt.steps == 1, "%s: steps %d -> %d", acts[a], base.steps, opt.steps);
    CHECK_MSG(!strcmp(opt.ops[0], "FusedConv"), "%s: step is %s", acts[a], opt.ops[0]);
    CHECK_MSG(identical(&base, &opt), "%s: outputs differ by %g", acts[a], max_diff(&base, &opt));
    /* the fused op through the fast kernels' epilogue (kernels/conv.h) */
    g_fast_kernels = true;
    result fast;
    run(g, NNP_PASS_FUSE_ACTIVATION, false, &fast);
    g_fast_kernels = false;
    CHECK_MSG(max_diff(&base, &fast) < 1e-5, "%s: fast FusedConv differs by %g", acts[a], max_diff(&base, &fast));
    CHECK(g->n_nodes == 2); /* the caller's graph is untouched */
    nnp_graph_destroy(g);
    mb_reset();
  }
}

/* x -> Conv -> c; G(c) -> h; Mul(c, h) -> y: HardSwish as written below opset 14 (G =
 * HardSigmoid), SiLU as torch exports it (G = Sigmoid). Fused only with HardSwish's
 * constants (alpha 1/6, beta 0.5), either Mul operand order, and when nothing else reads
 * c or h; variants 0..1 and 5..6 (Sigmoid) fuse, 2..4 and 7 (Sigmoid read outside) must not. */
static void test_fuse_gated_pattern(void) {
  for (int v = 0; v < 8; v++) {
    Onnx__ModelProto *m = mb_model(13);
    mb_input(m, "x", F32, 4, x_dims);
    mb_init_f32(m, "w", 4, w_dims, weights(108, 1));
    mb_init_f32(m, "b", 1, b_dims, weights(4, 2));
    mb_node(m, "Conv", "conv", "x,w,b", "c");
    if (v >= 5) {
      mb_node(m, "Sigmoid", "sig", "c", "h");
    } else {
      Onnx__NodeProto *h = mb_node(m, "HardSigmoid", "hs", "c", "h");
      mb_attr_float(h, "alpha", v == 2 ? 0.2f : 1.0f / 6.0f); /* 2: ONNX's default alpha, not HardSwish */
      mb_attr_float(h, "beta", 0.5f);
    }
    mb_node(m, "Mul", "mul", v == 1 || v == 6 ? "h,c" : "c,h", "y");
    mb_output(m, "y", F32);
    if (v == 3 || v == 7) mb_output(m, "h", F32); /* 3, 7: the gate is read outside */
    if (v == 4) {                       /* 4: c has a third reader */
      mb_node(m, "Relu", "other", "c", "z");
      mb_output(m, "z", F32);
    }
    nnp_graph *g = load(m);
    if (!g) continue;
    result base, opt;
    run(g, 0, false, &base);
    run(g, NNP_PASS_FUSE_ACTIVATION, false, &opt);
    const bool fuse = v < 2 || v == 5 || v == 6;
    CHECK_MSG(fuse ? opt.steps == 1 && !strcmp(opt.ops[0], "FusedConv") : opt.steps == base.steps,
              "variant %d: steps %d -> %d, first %s", v, base.steps, opt.steps, opt.ops[0]);
    CHECK_MSG(identical(&base, &opt), "variant %d: outputs differ by %g", v, max_diff(&base, &opt));
    g_fast_kernels = true;
    result fast;
    run(g, NNP_PASS_FUSE_ACTIVATION, false, &fast);
    g_fast_kernels = false;
    CHECK_MSG(max_diff(&base, &fast) < 1e-5, "variant %d: fast kernels differ by %g", v, max_diff(&base, &fast));
    nnp_graph_destroy(g);
    mb_reset();
  }
}

/* x [1,3,8,8] -> Pad(pads) -> AveragePool 3x3 (variant attributes) or Conv 3x3 -> y: a
 * spatial zero Pad is folded into its reader (noops), which then counts the zeros
 * (count_include_pad 1). Variants: 0 pool, 1 pool with its own pads and
 * count_include_pad 1, 2 conv with pads of its own, 3 asymmetric pads into a pool at
 * stride 2; must not fold: 4 a pool that does not count pads but has its own, 5 pads on
 * the channel axis, 6 a non-zero pad value, 7 ceil_mode, 8 reflect mode. */
static void test_fold_pad(void) {
  static const int64_t pads[9][8] = {{0, 0, 1, 1, 0, 0, 1, 1}, {0, 0, 1, 0, 0, 0, 0, 1}, {0, 0, 2, 1, 0, 0, 0, 1},
                                     {0, 0, 0, 1, 0, 0, 2, 0}, {0, 0, 1, 1, 0, 0, 1, 1}, {0, 1, 1, 1, 0, 0, 1, 1},
                                     {0, 0, 1, 1, 0, 0, 1, 1}, {0, 0, 1, 1, 0, 0, 1, 1}, {0, 0, 1, 1, 0, 0, 1, 1}};
  for (int v = 0; v < 9; v++) {
    Onnx__ModelProto *m = mb_model(13);
    mb_input(m, "x", F32, 4, x_dims);
    const int64_t pd[1] = {8};
    Onnx__TensorProto *pt = mb_tensor("pads", I64, 1, pd);
    mb_raw_data(pt, sizeof pads[v], pads[v]);
    mb_init(m, pt);
    float value = v == 6 ? 0.5f : 0.0f;
    mb_init_f32(m, "value", 0, NULL, &value);
    Onnx__NodeProto *p = mb_node(m, "Pad", "pad", "x,pads,value", "p");
    if (v == 8) mb_attr_string(p, "mode", "reflect");
    static const int64_t k3[2] = {3, 3}, s2[2] = {2, 2}, own[4] = {1, 0, 0, 1};
    if (v == 2) {
      mb_init_f32(m, "w", 4, w_dims, weights(108, 1));
      mb_attr_ints(mb_node(m, "Conv", "conv", "p,w", "y"), "pads", 4, own);
    } else {
      Onnx__NodeProto *a = mb_node(m, "AveragePool", "avg", "p", "y");
      mb_attr_ints(a, "kernel_shape", 2, k3);
      if (v == 3) mb_attr_ints(a, "strides", 2, s2);
      if (v == 1 || v == 4) mb_attr_ints(a, "pads", 4, own);
      if (v == 1) mb_attr_int(a, "count_include_pad", 1);
      if (v == 7) mb_attr_int(a, "ceil_mode", 1);
    }
    mb_output(m, "y", F32);
    nnp_graph *g = load(m);
    if (!g) continue;
    result base, opt;
    run(g, 0, false, &base);
    run(g, NNP_PASS_NOOPS, false, &opt);
    const bool fold = v <= 3;
    CHECK_MSG(fold ? base.steps == 2 && opt.steps == 1 : opt.steps == base.steps, "variant %d: steps %d -> %d", v,
              base.steps, opt.steps);
    /* the fused pool sums the same taps in the same order; the conv as well */
    CHECK_MSG(max_diff(&base, &opt) < 1e-6 && base.n_out == opt.n_out, "variant %d: outputs differ by %g", v,
              max_diff(&base, &opt));
    g_fast_kernels = true;
    result fast;
    run(g, NNP_PASS_NOOPS, false, &fast);
    g_fast_kernels = false;
    CHECK_MSG(max_diff(&base, &fast) < 1e-5, "variant %d: fast kernels differ by %g", v, max_diff(&base, &fast));
    nnp_graph_destroy(g);
    mb_reset();
  }
}

/* x [2,5,24] -> the nine ops torch exports nn.LayerNorm as (ReduceMean, Sub, Pow 2,
 * ReduceMean, Add eps, Sqrt, Div, Mul Scale, Add B) -> y: one FusedLayerNorm step.
 * Variants: 0 all nine, 1 no B, 2 no Scale or B, 3 eps and Scale as the first operands;
 * must not fuse: 4 the means over axis 1, 5 d read outside (a graph output), 6 Pow 3. */
static void test_fuse_layernorm(void) {
  static const int64_t xd[3] = {2, 5, 24}, cd[1] = {24}, last[1] = {-1}, mid[1] = {1};
  for (int v = 0; v < 7; v++) {
    Onnx__ModelProto *m = mb_model(13);
    mb_input(m, "x", F32, 3, xd);
    float two = v == 6 ? 3.0f : 2.0f, eps = 1e-5f;
    mb_init_f32(m, "two", 0, NULL, &two);
    mb_init_f32(m, "eps", 0, NULL, &eps);
    mb_init_f32(m, "gamma", 1, cd, weights(24, 3));
    mb_init_f32(m, "beta", 1, cd, weights(24, 4));
    mb_attr_ints(mb_node(m, "ReduceMean", "r1", "x", "m"), "axes", 1, v == 4 ? mid : last);
    mb_node(m, "Sub", "sub", "x,m", "d");
    mb_node(m, "Pow", "pow", "d,two", "p");
    mb_attr_ints(mb_node(m, "ReduceMean", "r2", "p", "var"), "axes", 1, v == 4 ? mid : last);
    mb_node(m, "Add", "add_eps", v == 3 ? "eps,var" : "var,eps", "e");
    mb_node(m, "Sqrt", "sqrt", "e", "s");
    mb_node(m, "Div", "div", "d,s", v == 2 ? "y" : "n");
    if (v != 2) mb_node(m, "Mul", "mul", v == 3 ? "gamma,n" : "n,gamma", v == 1 ? "y" : "g");
    if (v != 1 && v != 2) mb_node(m, "Add", "add_b", "g,beta", "y");
    mb_output(m, "y", F32);
    if (v == 5) mb_output(m, "d", F32);
    nnp_graph *g = load(m);
    if (!g) continue;
    result base, opt;
    run(g, 0, false, &base);
    run(g, NNP_PASS_FUSE_ELEMENTWISE, false, &opt);
    const bool fuse = v <= 3;
    CHECK_MSG(fuse ? opt.steps == 1 && !strcmp(opt.ops[0], "FusedLayerNorm") : strcmp(opt.ops[0], "FusedLayerNorm"),
              "variant %d: steps %d -> %d, first %s", v, base.steps, opt.steps, opt.ops[0]);
    /* the same float operations; only the double sums' order differs */
    CHECK_MSG(base.n_out == opt.n_out && max_diff(&base, &opt) < 1e-6, "variant %d: outputs differ by %g", v,
              max_diff(&base, &opt));
    g_fast_kernels = true;
    result fast;
    run(g, NNP_PASS_FUSE_ELEMENTWISE, false, &fast);
    g_fast_kernels = false;
    CHECK_MSG(max_diff(&base, &fast) < 1e-5, "variant %d: fast kernels differ by %g", v, max_diff(&base, &fast));
    nnp_graph_destroy(g);
    mb_reset();
  }
}

/* Mul/Add of x [2,4,3,5] with a per-channel s ([2,4,1,1], [1,4,1,1], [4,1,1]), in both
 * input orders: the fast per-channel kernel (ops/fast_eltwise.c) must give the reference
 * broadcast's bits. */
static void test_channel_broadcast(void) {
  static const int64_t xd[] = {2, 4, 3, 5}, s_n[] = {2, 4, 1, 1}, s_1[] = {1, 4, 1, 1}, s_c[] = {4, 1, 1};
  static const int64_t r_1[] = {5}, r_4[] = {1, 1, 1, 5}, r_3[] = {1, 1, 5}; /* ... and along the last axis */
  const int64_t *sd[] = {s_n, s_1, s_c, r_1, r_4, r_3};
  const int sr[] = {4, 4, 3, 1, 4, 3};
  for (int v = 0; v < 24; v++) {
    Onnx__ModelProto *m = mb_model(13);
    mb_input(m, "x", F32, 4, xd);
    mb_input(m, "s", F32, sr[v % 6], sd[v % 6]);
    mb_node(m, v / 12 ? "Add" : "Mul", "op", v / 6 % 2 ? "s,x" : "x,s", "y");
    mb_output(m, "y", F32);
    nnp_graph *g = load(m);
    if (!g) continue;
    result ref, fast;
    run(g, 0, false, &ref);
    g_fast_kernels = true;
    run(g, 0, false, &fast);
    g_fast_kernels = false;
    CHECK_MSG(ref.n_out == 120 && identical(&ref, &fast), "channel broadcast case %d: outputs differ by %g", v,
              max_diff(&ref, &fast));
    CHECK_MSG(strstr(fast.kernels[0], v % 6 < 3 ? ".channel" : ".row") != NULL, "broadcast case %d ran %s", v,
              fast.kernels[0]);
    nnp_graph_destroy(g);
    mb_reset();
  }
}

/* BatchNormalization with constant per-channel parameters and no conv before it (no pass
 * folds it): the fast per-channel kernel (ops/fast_eltwise.c) within float rounding of the
 * reference, which keeps its coefficients in double. */
/* A model: input x [2, 5, 3, 4] -> BatchNormalization (constant per-channel parameters,
 * positive variance) -> value named y */
static Onnx__ModelProto *bn_model(const char *y) {
  static const int64_t xd[] = {2, 5, 3, 4}, cd[] = {5};
  Onnx__ModelProto *m = mb_model(15);
  mb_input(m, "x", F32, 4, xd);
  float *var = weights(5, 14);
  for (int i = 0; i < 5; i++) var[i] = var[i] * var[i] + 0.1f;
  mb_init_f32(m, "scale", 1, cd, weights(5, 11));
  mb_init_f32(m, "bias", 1, cd, weights(5, 12));
  mb_init_f32(m, "mean", 1, cd, weights(5, 13));
  mb_init_f32(m, "var", 1, cd, var);
  mb_node(m, "BatchNormalization", "bn", "x,scale,bias,mean,var", y);
  return m;
}

static void test_fast_batch_norm(void) {
  Onnx__ModelProto *m = bn_model("y");
  mb_output(m, "y", F32);
  nnp_graph *g = load(m);
  if (g) {
    result ref, fast;
    run(g, 0, false, &ref);
    g_fast_kernels = true;
    run(g, 0, false, &fast);
    g_fast_kernels = false;
    CHECK_MSG(ref.n_out == 120 && max_diff(&ref, &fast) < 1e-5, "fast BatchNormalization differs by %g",
              max_diff(&ref, &fast));
    nnp_graph_destroy(g);
  }
  mb_reset();
}

/* x -> BatchNormalization -> b -> Relu -> y (DenseNet's pre-activation pair): one
 * FusedBatchNorm step, the reference's bits, the fast kernel within float rounding; not
 * fused when b is also a graph output (variant 1) or the activation is a Clip (variant 2). */
static void test_fuse_bn_relu(void) {
  for (int v = 0; v < 3; v++) {
    Onnx__ModelProto *m = bn_model("b");
    if (v == 2) {
      float lo = 0, hi = 6;
      mb_init_f32(m, "lo", 0, NULL, &lo);
      mb_init_f32(m, "hi", 0, NULL, &hi);
      mb_node(m, "Clip", "act", "b,lo,hi", "y");
    } else {
      mb_node(m, "Relu", "act", "b", "y");
    }
    mb_output(m, "y", F32);
    if (v == 1) mb_output(m, "b", F32);
    nnp_graph *g = load(m);
    if (g) {
      result base, opt, fast;
      run(g, 0, false, &base);
      run(g, NNP_PASS_FUSE_ACTIVATION, false, &opt);
      const bool fuse = v == 0;
      CHECK_MSG(base.steps == 2 && opt.steps == (fuse ? 1 : 2), "variant %d: steps %d -> %d", v, base.steps, opt.steps);
      CHECK_MSG(!strcmp(opt.ops[0], fuse ? "FusedBatchNorm" : "BatchNormalization"), "variant %d: step is %s", v,
                opt.ops[0]);
      CHECK_MSG(identical(&base, &opt), "variant %d: outputs differ by %g", v, max_diff(&base, &opt));
      g_fast_kernels = true;
      run(g, NNP_PASS_FUSE_ACTIVATION, false, &fast);
      g_fast_kernels = false;
      CHECK_MSG(!fuse || !strcmp(fast.kernels[0], "eltwise.batchnorm.relu"), "fast kernel %s", fast.kernels[0]);
      CHECK_MSG(base.n_out == 120 && max_diff(&base, &fast) < 1e-5, "variant %d: fast differs by %g", v,
                max_diff(&base, &fast));
      nnp_graph_destroy(g);
    }
    mb_reset();
  }
}

/* x -> Gemm(transB) -> Sigmoid -> y. */
static void test_fuse_gemm(void) {
  const int64_t xd[] = {3, 5}, wd[] = {4, 5}, cd[] = {4};
  Onnx__ModelProto *m = mb_model(13);
  mb_input(m, "x", F32, 2, xd);
  mb_init_f32(m, "w", 2, wd, weights(20, 3));
  mb_init_f32(m, "c", 1, cd, weights(4, 4));
  mb_attr_int(mb_node(m, "Gemm", "fc", "x,w,c", "h"), "transB", 1);
  mb_node(m, "Sigmoid", "act", "h", "y");
  mb_output(m, "y", F32);
  nnp_graph *g = load(m);
  result base, opt;
  run(g, 0, false, &base);
  run(g, NNP_PASS_DEFAULT, true, &opt);
  CHECK(opt.steps == 1 && !strcmp(opt.ops[0], "FusedGemm"));
  CHECK(identical(&base, &opt));
  nnp_graph_destroy(g);
  mb_reset();
}

/* a = Conv(x), r = Conv(x); y = Relu(a + r) -> Conv + FusedConv(residual, Relu). A
 * broadcasting Add (bias of shape [4,1,1]) must stay unfused. */
static void test_fuse_residual(void) {
  Onnx__ModelProto *m = mb_model(13);
  mb_input(m, "x", F32, 4, x_dims);
  mb_init_f32(m, "w1", 4, w_dims, weights(108, 5));
  mb_init_f32(m, "w2", 4, w_dims, weights(108, 6));
  mb_node(m, "Conv", "conv1", "x,w1", "a");
  mb_node(m, "Conv", "conv2", "x,w2", "r");
  mb_node(m, "Add", "add", "r,a", "s");
  mb_node(m, "Relu", "relu", "s", "y");
  mb_output(m, "y", F32);
  nnp_graph *g = load(m);
  result base, opt, only_res;
  run(g, 0, false, &base);
  run(g, NNP_PASS_FUSE_RESIDUAL | NNP_PASS_FUSE_ACTIVATION, true, &opt);
  run(g, NNP_PASS_FUSE_RESIDUAL, true, &only_res);
  CHECK_MSG(base.steps == 4 && opt.steps == 2, "steps %d -> %d", base.steps, opt.steps);
  CHECK(!strcmp(opt.ops[1], "FusedConv") || !strcmp(opt.ops[0], "FusedConv"));
  CHECK(only_res.steps == 3);
  CHECK_MSG(identical(&base, &opt), "differ by %g", max_diff(&base, &opt));
  CHECK(identical(&base, &only_res));
  nnp_graph_destroy(g);
  mb_reset();

  const int64_t bd[] = {4, 1, 1};
  m = mb_model(13);
  mb_input(m, "x", F32, 4, x_dims);
  mb_init_f32(m, "w1", 4, w_dims, weights(108, 5));
  mb_init_f32(m, "bias", 3, bd, weights(4, 8));
  mb_node(m, "Conv", "conv1", "x,w1", "a");
  mb_node(m, "Add", "add", "a,bias", "y");
  mb_output(m, "y", F32);
  g = load(m);
  run(g, 0, false, &base);
  /* without the blocked layout, whose two reorders would add steps around the conv */
  run(g, NNP_PASS_DEFAULT & ~NNP_PASS_BLOCKED_LAYOUT, true, &opt);
  CHECK_MSG(opt.steps == 2, "broadcast Add fused: %d steps", opt.steps);
  CHECK(identical(&base, &opt));
  nnp_graph_destroy(g);
  mb_reset();
}

/* x -> MatMul(w) -> Add(bias) -> Add(r) -> y becomes one FusedMatMul(x, w, bias, r), the
 * same bits on the reference kernels and on the fast ones; a [5, 6] "bias" (not one value
 * per column) or a run-time B leaves the MatMul alone. */
static void matmul_bias_graph(const int64_t *bias_dims, int bias_rank, bool const_w, result *base, result *opt,
                              bool fast) {
  const int64_t xd[] = {2, 5, 8}, wd[] = {8, 6}, rd[] = {2, 5, 6};
  Onnx__ModelProto *m = mb_model(13);
  mb_input(m, "x", F32, 3, xd);
  mb_input(m, "r", F32, 3, rd);
  if (const_w) mb_init_f32(m, "w", 2, wd, weights(48, 11));
  else mb_input(m, "w", F32, 2, wd);
  mb_init_f32(m, "bias", bias_rank, bias_dims, weights(30, 12));
  mb_node(m, "MatMul", "mm", "x,w", "h");
  mb_node(m, "Add", "add_bias", "h,bias", "s");
  mb_node(m, "Add", "add_res", "r,s", "y");
  mb_output(m, "y", F32);
  nnp_graph *g = load(m);
  g_fast_kernels = fast;
  run(g, 0, false, base);
  run(g, NNP_PASS_DEFAULT, true, opt);
  g_fast_kernels = false;
  nnp_graph_destroy(g);
  mb_reset();
}

static void test_fuse_matmul_bias(void) {
  const int64_t row[] = {6}, full[] = {5, 6};
  result base, opt;
  for (int fast = 0; fast < 2; fast++) {
    matmul_bias_graph(row, 1, true, &base, &opt, fast);
    CHECK_MSG(base.steps == 3 && opt.steps == 1 && !strcmp(opt.ops[0], "FusedMatMul"), "%s: steps %d -> %d (%s)",
              fast ? "fast" : "reference", base.steps, opt.steps, opt.ops[0]);
    CHECK_MSG(identical(&base, &opt), "%s: FusedMatMul differs by %g", fast ? "fast" : "reference",
              max_diff(&base, &opt));
    /* the name says the tile that runs (the dispatch's ISA) */
    const char *want = nnp_dispatch_portable(NNP_KF_GEMM, false)              ? "matmul.packed.generic"
                       : nnp_dispatch_isa(NNP_KF_GEMM) == NNP_ISA_AVX512 ? "matmul.packed.avx512"
                                                                          : "matmul.packed.avx2";
    if (fast) CHECK_MSG(!strcmp(opt.kernels[0], want), "FusedMatMul ran %s, not %s", opt.kernels[0], want);
  }
  matmul_bias_graph(full, 2, true, &base, &opt, false);
  CHECK_MSG(opt.steps == 3 && identical(&base, &opt), "a [5, 6] bias: %d steps", opt.steps);
  matmul_bias_graph(row, 1, false, &base, &opt, false);
  CHECK_MSG(opt.steps == 3 && identical(&base, &opt), "a run-time B: %d steps", opt.steps);
}

/* Conv -> BatchNormalization folds into one Conv (rounding differences only). */
static void test_fold_batchnorm(void) {
  Onnx__ModelProto *m = mb_model(13);
  mb_input(m, "x", F32, 4, x_dims);
  mb_init_f32(m, "w", 4, w_dims, weights(108, 9));
  float var[4] = {0.5f, 1.0f, 2.0f, 0.1f};
  mb_init_f32(m, "scale", 1, b_dims, weights(4, 10));
  mb_init_f32(m, "beta", 1, b_dims, weights(4, 11));
  mb_init_f32(m, "mean", 1, b_dims, weights(4, 12));
  mb_init_f32(m, "var", 1, b_dims, var);
  mb_node(m, "Conv", "conv", "x,w", "c");
  mb_attr_float(mb_node(m, "BatchNormalization", "bn", "c,scale,beta,mean,var", "y"), "epsilon", 1e-3f);
  mb_output(m, "y", F32);
  nnp_graph *g = load(m);
  result base, opt;
  run(g, 0, false, &base);
  run(g, NNP_PASS_FOLD_BATCHNORM, false, &opt);
  CHECK(base.steps == 2 && opt.steps == 1 && !strcmp(opt.ops[0], "Conv"));
  CHECK_MSG(max_diff(&base, &opt) < 1e-5, "differ by %g", max_diff(&base, &opt));
  nnp_graph_destroy(g);
  mb_reset();
}

/* Identity and Dropout vanish; Reshape(Reshape(x)) becomes one Reshape; a dead branch
 * (Sigmoid nobody reads) is dropped; a large constant subgraph (Transpose of a 100x100
 * initializer, above the compiler's own folding size) is folded. */
static void test_noops_dead_fold(void) {
  const int64_t xd[] = {2, 6}, s1[] = {2}, s2[] = {1};
  int64_t shape1[] = {3, 4}, shape2[] = {12};
  Onnx__ModelProto *m = mb_model(13);
  mb_input(m, "x", F32, 2, xd);
  Onnx__TensorProto *t1 = mb_tensor("s1", I64, 1, s1);
  mb_raw_data(t1, sizeof shape1, shape1);
  mb_init(m, t1);
  Onnx__TensorProto *t2 = mb_tensor("s2", I64, 1, s2);
  mb_raw_data(t2, sizeof shape2, shape2);
  mb_init(m, t2);
  mb_node(m, "Identity", "id", "x", "a");
  mb_node(m, "Relu", "relu", "a", "b");
  mb_node(m, "Dropout", "drop", "b", "c");
  mb_node(m, "Reshape", "r1", "c,s1", "d");
  mb_node(m, "Reshape", "r2", "d,s2", "y");
  mb_node(m, "Sigmoid", "dead", "b", "unused");
  mb_output(m, "y", F32);
  nnp_graph *g = load(m);
  result base, noops, all;
  run(g, 0, false, &base);
  run(g, NNP_PASS_NOOPS, false, &noops);
  run(g, NNP_PASS_NOOPS | NNP_PASS_DEAD_NODES, true, &all);
  CHECK_MSG(base.steps == 6 && noops.steps == 3 && all.steps == 2, "steps %d, %d, %d", base.steps, noops.steps,
            all.steps);
  CHECK(identical(&base, &noops) && identical(&base, &all));
  nnp_graph_destroy(g);
  mb_reset();

  const int64_t cd[] = {100, 100}, xd2[] = {1, 100};
  m = mb_model(13);
  mb_input(m, "x", F32, 2, xd2);
  mb_init_f32(m, "c", 2, cd, weights(10000, 13));
  mb_node(m, "Transpose", "t", "c", "ct");
  mb_node(m, "MatMul", "mm", "x,ct", "y");
  mb_output(m, "y", F32);
  g = load(m);
  result folded;
  run(g, 0, false, &base);
  run(g, NNP_PASS_FOLD_CONSTANTS, false, &folded);
  CHECK_MSG(base.steps == 2 && folded.steps == 1, "steps %d -> %d", base.steps, folded.steps);
  CHECK(identical(&base, &folded));
  nnp_graph_destroy(g);
  mb_reset();
}

/* y = Tanh(c - Relu(x * 0.75 + b)) / d: one FusedElementwise (Sub and Div with the chain as
 * the second operand, a scalar operand); a broadcast [1,16] operand ends the chain. */
static void test_fuse_elementwise(void) {
  const int64_t xd[] = {4, 16}, rowd[] = {1, 16};
  float scale = 0.75f;
  Onnx__ModelProto *m = mb_model(13);
  mb_input(m, "x", F32, 2, xd);
  mb_input(m, "b", F32, 2, xd);
  mb_input(m, "c", F32, 2, xd);
  mb_init_f32(m, "s", 0, NULL, &scale);
  mb_init_f32(m, "row", 2, rowd, weights(16, 21));
  mb_node(m, "Mul", "mul", "x,s", "t1");
  mb_node(m, "Add", "add", "t1,b", "t2");
  mb_node(m, "Relu", "relu", "t2", "t3");
  mb_node(m, "Sub", "sub", "c,t3", "t4");
  mb_node(m, "Tanh", "tanh", "t4", "t5");
  mb_node(m, "Div", "div", "t5,c", "t6");
  mb_node(m, "Mul", "bmul", "t6,row", "y");
  mb_output(m, "y", F32);
  nnp_graph *g = load(m);
  result base, opt;
  run(g, 0, false, &base);
  run(g, NNP_PASS_FUSE_ELEMENTWISE, true, &opt);
  CHECK_MSG(base.steps == 7 && opt.steps == 2, "steps %d -> %d", base.steps, opt.steps);
  CHECK(!strcmp(opt.ops[0], "FusedElementwise") && !strcmp(opt.ops[1], "Mul"));
  CHECK_MSG(identical(&base, &opt), "differ by %g", max_diff(&base, &opt));
  nnp_graph_destroy(g);
  mb_reset();
}

/* Internal ops come from the passes only: a model naming one is rejected. */
static void test_internal_ops_rejected(void) {
  const char *domains[] = {"com.nnperf", ""};
  for (int d = 0; d < 2; d++) {
    Onnx__ModelProto *m = mb_model(13);
    mb_opset(m, "com.nnperf", 1);
    mb_input(m, "x", F32, 4, x_dims);
    mb_init_f32(m, "w", 4, w_dims, weights(108, 1));
    Onnx__NodeProto *n = mb_node(m, "FusedConv", "f", "x,w", "y");
    n->domain = mb_str(domains[d]);
    mb_output(m, "y", F32);
    size_t sz;
    uint8_t *buf = mb_pack(m, &sz);
    nnp_graph *g = NULL;
    nnp_status s = nnp_onnx_load_buffer(buf, sz, NULL, NULL, &g);
    if (s == NNP_OK) {
      nnp_plan *p = NULL;
      s = nnp_plan_compile(g, NULL, &p);
      nnp_plan_destroy(p);
    }
    CHECK_MSG(s != NNP_OK, "FusedConv in domain '%s' was accepted", domains[d]);
    nnp_graph_destroy(g);
    mb_reset();
  }
}

/* Elementwise chains run in place; planning never changes results. */
static void test_inplace(void) {
  const int64_t xd[] = {4, 16};
  Onnx__ModelProto *m = mb_model(13);
  mb_input(m, "x", F32, 2, xd);
  mb_node(m, "Sigmoid", "s0", "x", "a");
  mb_node(m, "Relu", "s1", "a", "b");
  mb_node(m, "Tanh", "s2", "b", "c");
  mb_node(m, "Mul", "s3", "c,a2", "y");
  mb_node(m, "Neg", "s4", "x", "a2");
  mb_output(m, "y", F32);
  nnp_graph *g = load(m);
  result base, planned;
  run(g, 0, false, &base);
  run(g, 0, true, &planned); /* no passes: the elementwise chain stays unfused */
  CHECK_MSG(planned.inplace >= 2, "%d in-place", planned.inplace);
  CHECK(identical(&base, &planned));
  nnp_graph_destroy(g);
  mb_reset();
}

/* Random lifetimes: no two intersecting lifetimes share bytes (except in-place pairs). */
static void test_planner_random(void) {
  for (int trial = 0; trial < 200; trial++) {
    nnp_mem_item items[40];
    int n = 1 + (int)(nnp_mix64((uint64_t)trial) % 40);
    for (int i = 0; i < n; i++) {
      uint64_t r = nnp_mix64((uint64_t)trial * 977 + (uint64_t)i);
      items[i].size = 1 + r % 5000;
      items[i].first = (int)((r >> 20) % 30);
      items[i].last = items[i].first + (int)((r >> 30) % 8);
      items[i].inplace_of = -1;
      /* in-place onto an earlier item dying where this one starts, at least as large */
      for (int j = 0; j < i && (r >> 40) % 3 == 0; j++)
        if (items[j].last == items[i].first && items[j].size >= items[i].size) {
          bool used = false;
          for (int k = 0; k < i; k++) used |= items[k].inplace_of == j;
          if (!used) {
            items[i].inplace_of = j;
            break;
          }
        }
    }
    nnp_mem_stats st;
    CHECK_OK(nnp_memory_plan(items, n, &st));
    CHECK(st.planned >= st.lower_bound && st.planned <= st.naive);
    for (int i = 0; i < n; i++) {
      CHECK(items[i].offset % NNP_ARENA_ALIGN == 0 && items[i].offset + items[i].size <= st.planned);
      for (int j = 0; j < i; j++) {
        bool live_together = items[i].first <= items[j].last && items[j].first <= items[i].last;
        bool overlap = items[i].offset < items[j].offset + items[j].size && items[j].offset < items[i].offset + items[i].size;
        bool chained = false; /* same in-place chain: share by design */
        int a = i, b = j;
        while (items[a].inplace_of >= 0) a = items[a].inplace_of;
        while (items[b].inplace_of >= 0) b = items[b].inplace_of;
        chained = a == b;
        CHECK_MSG(!(live_together && overlap && !chained), "trial %d: items %d and %d overlap", trial, i, j);
      }
    }
  }
}

/* Zoo models: brute force over every pair of runtime intermediates of the compiled plan.
 * Reports the planned/naive/lower-bound numbers and checks the goals. */
static void test_planner_zoo(void) {
  const char *names[] = {"tiny", "mobilenet_v2", "resnet18", "efficientnet_lite0"};
  for (int z = 0; z < 4; z++) {
    nnp_zoo_options zo;
    nnp_zoo_options_default(&zo);
    nnp_graph *g = NULL;
    CHECK_OK(nnp_zoo_build(names[z], &zo, &g));
    if (!g) continue;
    nnp_plan *p = NULL;
    CHECK_OK(nnp_plan_compile(g, NULL, &p));
    if (!p) {
      nnp_graph_destroy(g);
      continue;
    }
    const nnp_graph *eg = nnp_plan_graph(p);
    int ns = nnp_plan_num_steps(p);
    int *first = malloc(sizeof(int) * (size_t)eg->n_values), *last = malloc(sizeof(int) * (size_t)eg->n_values);
    for (int v = 0; v < eg->n_values; v++) first[v] = last[v] = -1;
    for (int s = 0; s < ns; s++) {
      const nnp_node *n = nnp_plan_step_node(p, s);
      for (int k = 0; k < n->n_inputs; k++)
        if (n->inputs[k] >= 0 && first[n->inputs[k]] >= 0) last[n->inputs[k]] = s;
      for (int k = 0; k < n->n_outputs; k++)
        if (n->outputs[k] >= 0) first[n->outputs[k]] = last[n->outputs[k]] = s;
    }
    for (int k = 0; k < eg->n_outputs; k++)
      if (first[eg->outputs[k]] >= 0) last[eg->outputs[k]] = ns;
    int bad = 0;
    for (int a = 0; a < eg->n_values; a++) {
      if (first[a] < 0) continue;
      const nnp_tensor *ta = nnp_plan_value(p, a);
      const char *pa = ta->data;
      for (int b = 0; b < a; b++) {
        if (first[b] < 0 || first[a] > last[b] || first[b] > last[a]) continue;
        const nnp_tensor *tb = nnp_plan_value(p, b);
        const char *pb = tb->data;
        if (!(pa < pb + nnp_tensor_nbytes(tb) && pb < pa + nnp_tensor_nbytes(ta))) continue;
        /* allowed: an in-place pair, one dying at the step that makes the other */
        bool inplace = pa == pb && (last[a] == first[b] || last[b] == first[a]);
        if (inplace) {
          int later = first[a] > first[b] ? a : b, earlier = later == a ? b : a;
          const nnp_node *n = nnp_plan_step_node(p, first[later]);
          bool reads = false;
          for (int k = 0; k < n->n_inputs; k++) reads |= n->inputs[k] == earlier;
          bool fused = !strncmp(n->op_type, "Fused", 5);
          inplace = reads && !fused;
        }
        if (!inplace) bad++;
      }
    }
    CHECK_MSG(bad == 0, "%s: %d overlapping live buffer pairs", names[z], bad);
    const nnp_plan_memory *mem = nnp_plan_memory_stats(p);
    printf("%-20s planned %zu naive %zu lower bound %zu (%.3fx bound, %.3fx naive, %d in-place)\n", names[z],
           mem->planned, mem->naive, mem->lower_bound, (double)mem->planned / (double)mem->lower_bound,
           (double)mem->planned / (double)mem->naive, mem->inplace);
    if (z > 0) { /* the goals, on the three ImageNet models */
      CHECK(mem->planned <= mem->lower_bound * 11 / 10);
      CHECK(mem->planned * 2 <= mem->naive);
    }
    free(first);
    free(last);
    nnp_plan_destroy(p);
    nnp_graph_destroy(g);
  }
}

/* Whole zoo:tiny with every pass and the planner against the naive plan. */
static void test_zoo_tiny_end_to_end(void) {
  nnp_zoo_options zo;
  nnp_zoo_options_default(&zo);
  nnp_graph *g = NULL;
  CHECK_OK(nnp_zoo_build("tiny", &zo, &g));
  if (!g) return;
  result base, opt;
  run(g, 0, false, &base);
  run(g, NNP_PASS_DEFAULT, true, &opt);
  CHECK(opt.steps < base.steps);
  CHECK_MSG(max_diff(&base, &opt) < 1e-4, "differ by %g", max_diff(&base, &opt));
  nnp_graph_destroy(g);
}

/* Every allocation of a compile with all passes and the planner may fail: the failure
 * must come back as NNP_ERR_NOMEM with nothing leaked (the ASan build checks leaks). */
static void test_alloc_failures(void) {
  nnp_zoo_options zo;
  nnp_zoo_options_default(&zo);
  nnp_graph *g = NULL;
  CHECK_OK(nnp_zoo_build("tiny", &zo, &g));
  if (!g) return;
  nnp_alloc_fail_after(0);
  nnp_plan *p = NULL;
  CHECK_OK(nnp_plan_compile(g, NULL, &p));
  nnp_plan_destroy(p);
  long total = nnp_alloc_count();
  int bad = 0;
  for (long k = 1; k <= total; k++) {
    nnp_alloc_fail_after(k);
    p = NULL;
    nnp_status s = nnp_plan_compile(g, NULL, &p);
    nnp_alloc_fail_after(0);
    if (s != NNP_OK && s != NNP_ERR_NOMEM) {
      if (bad++ < 3) fprintf(stderr, "allocation %ld failed: %s: %s\n", k, nnp_status_name(s), nnp_last_error());
    }
    nnp_plan_destroy(p);
  }
  CHECK_MSG(bad == 0, "%d failure points reported something other than out of memory", bad);
  printf("alloc failures: %ld allocation points of a zoo:tiny compile handled\n", total);
  nnp_graph_destroy(g);
}

static void test_pass_names(void) {
  unsigned bits;
  CHECK_OK(nnp_passes_parse("fold-batchnorm,fuse-residual", &bits));
  CHECK(bits == (NNP_PASS_FOLD_BATCHNORM | NNP_PASS_FUSE_RESIDUAL));
  CHECK_OK(nnp_passes_parse("all", &bits));
  CHECK(bits == NNP_PASS_ALL);
  CHECK(nnp_passes_parse("fuse-everything", &bits) != NNP_OK);
  for (int k = 0; k < NNP_PASS_COUNT; k++) CHECK(nnp_pass_bit(nnp_pass_name(1u << k)) == 1u << k);
}

int main(void) {
  test_pass_names();
  test_fuse_activation();
  test_fuse_gated_pattern();
  test_fold_pad();
  test_fuse_layernorm();
  test_channel_broadcast();
  test_fast_batch_norm();
  test_fuse_bn_relu();
  test_fuse_gemm();
  test_fuse_residual();
  test_fuse_matmul_bias();
  test_fold_batchnorm();
  test_noops_dead_fold();
  test_internal_ops_rejected();
  test_fuse_elementwise();
  test_inplace();
  test_planner_random();
  test_planner_zoo();
  test_zoo_tiny_end_to_end();
  test_alloc_failures();
  TEST_MAIN_END();
}
