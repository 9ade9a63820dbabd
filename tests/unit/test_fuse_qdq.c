/* The fuse-qdq pass: a QDQ graph (nnperf's own export of Conv -> BN -> Relu -> Conv ->
 * Relu -> Conv) compiles to QLinearConv steps running the INT8 kernels, with outputs that
 * match the unfused QDQ graph (run through the reference Q/DQ ops and float Conv) to within
 * one activation quantum per layer, and the Q/DQ glue between the int8 layers gone. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nnperf/alloc.h"
#include "nnperf/engine.h"
#include "nnperf/npy.h"
#include "nnperf/passes.h"
#include "ops/op.h"
#include "quant/qdq.h"
#include "test.h"
#include "ir_builder.h"

/* A Constant node holding one float: how PyTorch's exporter writes Clip's bounds. */
static int add_constant(nnp_graph *g, const char *name, float value) {
  int v;
  nnp_graph_value(g, name, &v);
  g->values[v].dtype = NNP_F32;
  int ni;
  nnp_graph_add_node(g, name, "Constant", "", 0, NULL, 1, &v, &ni);
  nnp_attr *a;
  nnp_node_add_attr(&g->nodes[ni], "value", &a);
  a->type = NNP_ATTR_TENSOR;
  a->tensor = nnp_calloc(1, sizeof *a->tensor);
  *a->tensor = (nnp_tensor){NNP_F32, 0, {0}, NULL};
  nnp_tensor_alloc(a->tensor);
  *(float *)a->tensor->data = value;
  return v;
}

/* X(1x4x8x8) -> conv1 3x3 -> BN -> Relu -> conv2 3x3 -> Relu -> conv3 1x1 -> O; with
 * clip6, conv2's Relu is Clip(0, 6) with Constant-node bounds (ReLU6 as exported). */
static nnp_graph *make_graph(bool clip6) {
  nnp_graph *g;
  nnp_graph_create(&g);
  g->opset = 13;
  int x, y, z, r, y2, r2, o;
  nnp_graph_value(g, "X", &x);
  g->values[x].dtype = NNP_F32;
  g->values[x].rank = 4;
  int64_t xd[4] = {1, 4, 8, 8};
  for (int i = 0; i < 4; i++) g->values[x].dims[i].value = xd[i];
  nnp_graph_add_input(g, x);
  int64_t w1d[4] = {20, 4, 3, 3}, cd[1] = {20}, w2d[4] = {13, 20, 3, 3}, c2d[1] = {13}, w3d[4] = {3, 13, 1, 1};
  int w1 = add_f32_init(g, "W1", 4, w1d, 0), b1 = add_f32_init(g, "B1", 1, cd, 0);
  int sc = add_f32_init(g, "bn.scale", 1, cd, 0.5f), bb = add_f32_init(g, "bn.bias", 1, cd, 0);
  int mn = add_f32_init(g, "bn.mean", 1, cd, 0), vr = add_f32_init(g, "bn.var", 1, cd, 0.2f);
  int w2 = add_f32_init(g, "W2", 4, w2d, 0), b2 = add_f32_init(g, "B2", 1, c2d, 0);
  int w3 = add_f32_init(g, "W3", 4, w3d, 0);
  nnp_graph_value(g, "Y", &y);
  nnp_graph_value(g, "Z", &z);
  nnp_graph_value(g, "R", &r);
  nnp_graph_value(g, "Y2", &y2);
  nnp_graph_value(g, "R2", &r2);
  nnp_graph_value(g, "O", &o);
  int i1[3] = {x, w1, b1}, i2[5] = {y, sc, bb, mn, vr}, i3[1] = {z}, i4[3] = {r, w2, b2}, i5[1] = {y2}, i6[2] = {r2, w3};
  int ni;
  nnp_graph_add_node(g, "conv1", "Conv", "", 3, i1, 1, &y, &ni);
  add_pads(&g->nodes[ni]);
  nnp_graph_add_node(g, "bn", "BatchNormalization", "", 5, i2, 1, &z, NULL);
  nnp_graph_add_node(g, "relu", "Relu", "", 1, i3, 1, &r, NULL);
  nnp_graph_add_node(g, "conv2", "Conv", "", 3, i4, 1, &y2, &ni);
  add_pads(&g->nodes[ni]);
  if (clip6) {
    int i5c[3] = {y2, add_constant(g, "clip.min", 0.0f), add_constant(g, "clip.max", 6.0f)};
    nnp_graph_add_node(g, "clip2", "Clip", "", 3, i5c, 1, &r2, NULL);
  } else {
    nnp_graph_add_node(g, "relu2", "Relu", "", 1, i5, 1, &r2, NULL);
  }
  nnp_graph_add_node(g, "conv3", "Conv", "", 2, i6, 1, &o, NULL);
  g->values[o].is_output = true;
  nnp_graph_add_output(g, o);
  nnp_graph_toposort(g);
  for (int i = 0; i < g->n_nodes; i++) g->nodes[i].op = nnp_op_lookup("", g->nodes[i].op_type);
  return g;
}

enum { NIN = 256, NOUT = 192 };
static float input[NIN];

/* Runs g with the given passes; copies output 0; counts QLinearConv steps on INT8 kernels. */
static nnp_status run(const nnp_graph *g, unsigned passes, bool generic, float *out, int *int8_steps) {
  nnp_plan_options po;
  nnp_plan_options_default(&po);
  po.passes = passes;
  if (generic) setenv("NNP_CPU_FEATURES", "generic", 1);
  nnp_plan *p;
  nnp_status s = nnp_plan_compile(g, &po, &p);
  unsetenv("NNP_CPU_FEATURES");
  NNP_TRY(s);
  *int8_steps = 0;
  for (int i = 0; i < nnp_plan_num_steps(p); i++) {
    const char *k = nnp_plan_step_kernel(p, i);
    if (k && !strncmp(k, "qlinearconv.", 12)) ++*int8_steps;
  }
  nnp_tensor x = {NNP_F32, 4, {1, 4, 8, 8}, input};
  s = nnp_plan_set_input(p, 0, &x);
  if (s == NNP_OK) s = nnp_plan_run(p);
  if (s == NNP_OK) memcpy(out, nnp_plan_output(p, 0)->data, sizeof(float) * NOUT);
  nnp_plan_destroy(p);
  return s;
}

int main(void) {
  rs = 99;
  for (int i = 0; i < NIN; i++) input[i] = frand() * 2;
  nnp_graph *g = make_graph(false);
  char dir[] = "/tmp/nnp_fqdq_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  const int64_t xdims[4] = {1, 4, 8, 8};
  CHECK_OK(ir_write_calib_npy(dir, 4, 4, xdims, input, 2));
  nnp_calib_options co;
  nnp_calib_options_default(&co);
  nnp_calib_set set;
  nnp_calib_table tab;
  CHECK_OK(nnp_calib_open(dir, &co, &set));
  CHECK_OK(nnp_calibrate(g, &set, NNP_CALIBRATOR_MINMAX, 0, &tab));
  nnp_qdq_report rep;
  CHECK_OK(nnp_qdq_rewrite(g, &tab, NULL, 0, &rep));
  CHECK(rep.quantized == 3);

  /* the pass alone: conv1 (+Relu, zero point 0) and conv2 (+Relu) fuse; conv3's float
   * output (a graph output, no Q) keeps its DQ -> Conv */
  nnp_graph *c;
  CHECK_OK(nnp_graph_clone(g, false, &c));
  nnp_pass_report pr;
  CHECK_OK(nnp_passes_run(c, NNP_PASS_FUSE_QDQ | NNP_PASS_DEAD_NODES, NULL, &pr));
  CHECK_MSG(pr.applied[8] == 2, "fuse-qdq applied %d", pr.applied[8]);
  CHECK(count_op(c, "QLinearConv") == 2 && count_op(c, "Relu") == 0 && count_op(c, "Conv") == 1);
  /* left: Q of X, DQ of conv2's output for conv3, conv3's weight DQ */
  CHECK_MSG(count_op(c, "QuantizeLinear") == 1 && count_op(c, "DequantizeLinear") == 2, "Q %d DQ %d",
            count_op(c, "QuantizeLinear"), count_op(c, "DequantizeLinear"));
  nnp_graph_destroy(c);

  float want[NOUT], got[NOUT];
  int steps = 0;
  CHECK_OK(run(g, NNP_PASS_DEFAULT & ~NNP_PASS_FUSE_QDQ, false, want, &steps));
  CHECK(steps == 0);
  for (int generic = 0; generic < 2; generic++) {
    CHECK_OK(run(g, NNP_PASS_DEFAULT, generic, got, &steps));
    CHECK_MSG(steps == 2, "%d QLinearConv steps on the INT8 kernels (generic %d)", steps, generic);
    double dot = 0, na = 0, nb = 0, md = 0, mx = 0;
    for (int i = 0; i < NOUT; i++) {
      dot += (double)want[i] * got[i];
      na += (double)want[i] * want[i];
      nb += (double)got[i] * got[i];
      md = fmax(md, fabs(want[i] - got[i]));
      mx = fmax(mx, fabs(want[i]));
    }
    double cs = dot / sqrt(na * nb);
    printf("fused vs unfused QDQ (generic %d): cosine %.7f, max diff %.4g of max |y| %.4g\n", generic, cs, md, mx);
    /* the fused graph rounds once per layer in int32 instead of in float: differences of
     * a quantum here and there, never a different result */
    CHECK_MSG(cs > 0.9999, "cosine %g", cs);
    CHECK_MSG(md < 0.05 * mx, "max diff %g of %g", md, mx);
  }
  /* ReLU6 with Constant-node bounds (not initializers: fuse-qdq runs before constant
   * folding) fuses as well, as a clamp */
  nnp_graph *g6 = make_graph(true);
  nnp_calib_table tab6;
  CHECK_OK(nnp_calibrate(g6, &set, NNP_CALIBRATOR_MINMAX, 0, &tab6));
  CHECK_OK(nnp_qdq_rewrite(g6, &tab6, NULL, 0, &rep));
  CHECK_OK(nnp_passes_run(g6, NNP_PASS_FUSE_QDQ | NNP_PASS_DEAD_NODES, NULL, &pr));
  CHECK_MSG(count_op(g6, "QLinearConv") == 2 && count_op(g6, "Clip") == 0,
            "Clip with Constant bounds: %d QLinearConv, %d Clip left", count_op(g6, "QLinearConv"),
            count_op(g6, "Clip"));
  nnp_calib_table_free(&tab6);
  nnp_graph_destroy(g6);
  nnp_calib_table_free(&tab);
  nnp_calib_close(&set);
  ir_remove_calib_npy(dir, 4);
  nnp_graph_destroy(g);
  TEST_MAIN_END();
}
