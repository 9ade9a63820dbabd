/* fuse-qdq on fully connected layers (ir/passes/fuse_qdq_gemm.c, ops/qgemm.c): nnperf's
 * QDQ export of
 *   X (3 x 40) -> Gemm(W1 24 x 40, transB, bias) -> Relu -> MatMul(W2 24 x 7) -> O
 * gives DQ -> Gemm -> Relu -> Q -> DQ -> MatMul (float output). With fuse-qdq both
 * become QGemm steps on the INT8 kernels: the Gemm with a uint8 output (the Relu as its
 * clamp), the MatMul with a float32 output. The outputs must match the unfused QDQ graph
 * to within float rounding and one activation quantum, the fast kernel must equal the
 * reference QGemm bit for bit, at 1..3 threads; a 3-D MatMul input is left unfused.
 * A network head, Conv -> Clip(0, 6) -> GlobalAveragePool -> Flatten -> Gemm, exports
 * with a Q/DQ pair on the pool's input, so the head Conv fuses into a QLinearConv too. */
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

enum { R = 3, K = 40, H = 24, NO = 7 };

static nnp_graph *make_graph(void) {
  nnp_graph *g;
  nnp_graph_create(&g);
  g->opset = 13;
  int x, y, r, o;
  nnp_graph_value(g, "X", &x);
  g->values[x].dtype = NNP_F32;
  g->values[x].rank = 2;
  g->values[x].dims[0].value = R;
  g->values[x].dims[1].value = K;
  nnp_graph_add_input(g, x);
  int64_t w1d[2] = {H, K}, bd[1] = {H}, w2d[2] = {H, NO};
  int w1 = add_f32_init(g, "W1", 2, w1d, 0), b1 = add_f32_init(g, "B1", 1, bd, 0), w2 = add_f32_init(g, "W2", 2, w2d, 0);
  nnp_graph_value(g, "Y", &y);
  nnp_graph_value(g, "Rl", &r);
  nnp_graph_value(g, "O", &o);
  int i1[3] = {x, w1, b1}, i2[1] = {y}, i3[2] = {r, w2}, ni;
  nnp_graph_add_node(g, "fc1", "Gemm", "", 3, i1, 1, &y, &ni);
  nnp_attr *a;
  nnp_node_add_attr(&g->nodes[ni], "transB", &a);
  a->type = NNP_ATTR_INT;
  a->i = 1;
  nnp_graph_add_node(g, "relu", "Relu", "", 1, i2, 1, &r, NULL);
  nnp_graph_add_node(g, "fc2", "MatMul", "", 2, i3, 1, &o, NULL);
  g->values[o].is_output = true;
  nnp_graph_add_output(g, o);
  nnp_graph_toposort(g);
  for (int i = 0; i < g->n_nodes; i++) g->nodes[i].op = nnp_op_lookup("", g->nodes[i].op_type);
  return g;
}

/* X (1 x R x K) -> MatMul(W 40 x 7): a 3-D A, which QGemm does not take */
static nnp_graph *make_graph_3d(void) {
  nnp_graph *g;
  nnp_graph_create(&g);
  g->opset = 13;
  int x, o;
  nnp_graph_value(g, "X", &x);
  g->values[x].dtype = NNP_F32;
  g->values[x].rank = 3;
  g->values[x].dims[0].value = 1;
  g->values[x].dims[1].value = R;
  g->values[x].dims[2].value = K;
  nnp_graph_add_input(g, x);
  int64_t wd[2] = {K, NO};
  int w = add_f32_init(g, "W", 2, wd, 0);
  nnp_graph_value(g, "O", &o);
  int in[2] = {x, w};
  nnp_graph_add_node(g, "mm", "MatMul", "", 2, in, 1, &o, NULL);
  g->values[o].is_output = true;
  nnp_graph_add_output(g, o);
  nnp_graph_toposort(g);
  for (int i = 0; i < g->n_nodes; i++) g->nodes[i].op = nnp_op_lookup("", g->nodes[i].op_type);
  return g;
}

static int add_node1(nnp_graph *g, const char *name, const char *op, int n_in, const int *in) {
  int o, ni;
  nnp_graph_value(g, name, &o);
  nnp_graph_add_node(g, name, op, "", n_in, in, 1, &o, &ni);
  return o;
}

/* X (1 x 4 x 6 x 6) -> Conv 3x3 (8) -> Clip(0, 6) -> GlobalAveragePool -> Flatten -> Gemm (5) */
static nnp_graph *make_head(void) {
  nnp_graph *g;
  nnp_graph_create(&g);
  g->opset = 13;
  int x;
  nnp_graph_value(g, "X", &x);
  g->values[x].dtype = NNP_F32;
  g->values[x].rank = 4;
  const int64_t xd[4] = {1, 4, 6, 6}, wd[4] = {8, 4, 3, 3}, fd[2] = {5, 8}, one[1] = {1};
  for (int i = 0; i < 4; i++) g->values[x].dims[i].value = xd[i];
  nnp_graph_add_input(g, x);
  int w = add_f32_init(g, "W", 4, wd, 0), fw = add_f32_init(g, "FW", 2, fd, 0);
  int lo = add_f32_init(g, "lo", 0, one, 0), hi = add_f32_init(g, "hi", 0, one, 0);
  *(float *)g->values[lo].init->data = 0.0f;
  *(float *)g->values[hi].init->data = 0.25f; /* below the Conv's range: the clamp matters */
  int i1[2] = {x, w};
  int c = add_node1(g, "conv", "Conv", 2, i1);
  add_pads(&g->nodes[g->n_nodes - 1]);
  int i2[3] = {c, lo, hi};
  int a = add_node1(g, "clip", "Clip", 3, i2);
  int p = add_node1(g, "gap", "GlobalAveragePool", 1, &a);
  int f = add_node1(g, "flat", "Flatten", 1, &p);
  int i3[2] = {f, fw};
  int o = add_node1(g, "fc", "Gemm", 2, i3);
  nnp_attr *at;
  nnp_node_add_attr(&g->nodes[g->n_nodes - 1], "transB", &at);
  at->type = NNP_ATTR_INT;
  at->i = 1;
  g->values[o].is_output = true;
  nnp_graph_add_output(g, o);
  nnp_graph_toposort(g);
  for (int i = 0; i < g->n_nodes; i++) g->nodes[i].op = nnp_op_lookup("", g->nodes[i].op_type);
  return g;
}

static int qdq_producer_index(const nnp_graph *g, int v) {
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i].n_outputs; k++)
      if (g->nodes[i].outputs[k] == v) return i;
  return -1;
}

static float input[R * K];

/* Runs g; copies the output; counts QGemm steps on the fast kernel. */
static nnp_status run(const nnp_graph *g, unsigned passes, bool fast, int threads, float *out, int *qsteps) {
  nnp_plan_options po;
  nnp_plan_options_default(&po);
  po.passes = passes;
  po.fast_kernels = fast;
  po.threads = threads;
  nnp_plan *p;
  NNP_TRY(nnp_plan_compile(g, &po, &p));
  *qsteps = 0;
  for (int i = 0; i < nnp_plan_num_steps(p); i++) {
    const char *k = nnp_plan_step_kernel(p, i);
    if (k && !strncmp(k, "qgemm.", 6)) ++*qsteps;
  }
  nnp_tensor x = {NNP_F32, 2, {R, K}, input};
  nnp_status s = nnp_plan_set_input(p, 0, &x);
  if (s == NNP_OK) s = nnp_plan_run(p);
  if (s == NNP_OK) memcpy(out, nnp_plan_output(p, 0)->data, sizeof(float) * R * NO);
  nnp_plan_destroy(p);
  return s;
}

int main(void) {
  rs = 41;
  for (int i = 0; i < R * K; i++) input[i] = frand() * 3;
  nnp_graph *g = make_graph();
  char dir[] = "/tmp/nnp_fqgemm_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  const int64_t xdims[2] = {R, K};
  CHECK_OK(ir_write_calib_npy(dir, 4, 2, xdims, input, 3));
  nnp_calib_options co;
  nnp_calib_options_default(&co);
  nnp_calib_set set;
  nnp_calib_table tab;
  CHECK_OK(nnp_calib_open(dir, &co, &set));
  CHECK_OK(nnp_calibrate(g, &set, NNP_CALIBRATOR_MINMAX, 0, &tab));
  nnp_qdq_report rep;
  CHECK_OK(nnp_qdq_rewrite(g, &tab, NULL, 0, &rep));
  CHECK(rep.quantized == 2);

  nnp_graph *c;
  CHECK_OK(nnp_graph_clone(g, false, &c));
  nnp_pass_report pr;
  CHECK_OK(nnp_passes_run(c, NNP_PASS_FUSE_QDQ | NNP_PASS_DEAD_NODES, NULL, &pr));
  CHECK_MSG(count_op(c, "QGemm") == 2 && count_op(c, "Gemm") == 0 && count_op(c, "MatMul") == 0 &&
            count_op(c, "Relu") == 0, "QGemm %d Gemm %d MatMul %d Relu %d", count_op(c, "QGemm"),
            count_op(c, "Gemm"), count_op(c, "MatMul"), count_op(c, "Relu"));
  /* left: the Q of X and the Q between the layers; no DQ at all (the weights' DQs died) */
  CHECK_MSG(count_op(c, "QuantizeLinear") == 1 && count_op(c, "DequantizeLinear") == 0, "Q %d DQ %d",
            count_op(c, "QuantizeLinear"), count_op(c, "DequantizeLinear"));
  nnp_graph_destroy(c);

  float want[R * NO], ref[R * NO], got[R * NO];
  int steps = 0;
  CHECK_OK(run(g, NNP_PASS_DEFAULT & ~NNP_PASS_FUSE_QDQ, true, 1, want, &steps));
  CHECK(steps == 0);
  CHECK_OK(run(g, NNP_PASS_DEFAULT, false, 1, ref, &steps)); /* the reference QGemm */
  CHECK(steps == 0);
  double dot = 0, na = 0, nb = 0, md = 0, mx = 0;
  for (int i = 0; i < R * NO; i++) {
    dot += (double)want[i] * ref[i];
    na += (double)want[i] * want[i];
    nb += (double)ref[i] * ref[i];
    md = fmax(md, fabs(want[i] - ref[i]));
    mx = fmax(mx, fabs(want[i]));
  }
  printf("QGemm vs unfused QDQ: cosine %.7f, max diff %.4g of max |y| %.4g\n", dot / sqrt(na * nb), md, mx);
  CHECK_MSG(dot / sqrt(na * nb) > 0.9999, "cosine %g", dot / sqrt(na * nb));
  CHECK_MSG(md < 0.05 * mx, "max diff %g of %g", md, mx);
  for (int t = 1; t <= 3; t++) {
    CHECK_OK(run(g, NNP_PASS_DEFAULT, true, t, got, &steps));
    CHECK_MSG(steps == 2, "%d QGemm steps on the fast kernel (%d threads)", steps, t);
    CHECK_MSG(!memcmp(got, ref, sizeof got), "fast QGemm differs from the reference QGemm (%d threads)", t);
  }
  nnp_calib_table_free(&tab);
  nnp_calib_close(&set);

  /* 3-D A: calibrated on 1 x R x K tensors, exported, left as DQ -> MatMul, and it runs */
  nnp_graph *g3 = make_graph_3d();
  const int64_t x3dims[3] = {1, R, K};
  CHECK_OK(ir_write_calib_npy(dir, 4, 3, x3dims, NULL, 3));
  CHECK_OK(nnp_calib_open(dir, &co, &set));
  CHECK_OK(nnp_calibrate(g3, &set, NNP_CALIBRATOR_MINMAX, 0, &tab));
  CHECK_OK(nnp_qdq_rewrite(g3, &tab, NULL, 0, &rep));
  CHECK(rep.quantized == 1);
  nnp_plan_options po;
  nnp_plan_options_default(&po);
  nnp_plan *p3;
  CHECK_OK(nnp_plan_compile(g3, &po, &p3));
  int q3 = 0;
  for (int i = 0; i < nnp_plan_num_steps(p3); i++) q3 += !strcmp(nnp_plan_step_node(p3, i)->op_type, "QGemm");
  CHECK_MSG(q3 == 0, "a 3-D MatMul became %d QGemm", q3);
  nnp_tensor x3 = {NNP_F32, 3, {1, R, K}, input};
  CHECK_OK(nnp_plan_set_input(p3, 0, &x3));
  CHECK_OK(nnp_plan_run(p3));
  nnp_plan_destroy(p3);
  nnp_graph_destroy(g3);
  nnp_calib_table_free(&tab);
  nnp_calib_close(&set);

  /* the head: everything INT8 after fuse-qdq, and close to the unfused QDQ graph */
  nnp_graph *gh = make_head();
  float hx[144];
  for (int i = 0; i < 144; i++) hx[i] = frand() * 2;
  const int64_t hdims[4] = {1, 4, 6, 6};
  CHECK_OK(ir_write_calib_npy(dir, 4, 4, hdims, hx, 2));
  CHECK_OK(nnp_calib_open(dir, &co, &set));
  CHECK_OK(nnp_calibrate(gh, &set, NNP_CALIBRATOR_MINMAX, 0, &tab));
  CHECK_OK(nnp_qdq_rewrite(gh, &tab, NULL, 0, &rep));
  CHECK(rep.quantized == 2);
  int gap = -1;
  for (int i = 0; i < gh->n_nodes; i++)
    if (!strcmp(gh->nodes[i].op_type, "GlobalAveragePool")) gap = i;
  int gin = gap >= 0 ? qdq_producer_index(gh, gh->nodes[gap].inputs[0]) : -1;
  CHECK_MSG(gin >= 0 && !strcmp(gh->nodes[gin].op_type, "DequantizeLinear"), "the pool reads %s",
            gin >= 0 ? gh->nodes[gin].op_type : "?");
  nnp_graph *ch;
  CHECK_OK(nnp_graph_clone(gh, false, &ch));
  CHECK_OK(nnp_passes_run(ch, NNP_PASS_FUSE_QDQ | NNP_PASS_DEAD_NODES, NULL, &pr));
  CHECK_MSG(count_op(ch, "QLinearConv") == 1 && count_op(ch, "Conv") == 0 && count_op(ch, "Clip") == 0,
            "QLinearConv %d Conv %d Clip %d", count_op(ch, "QLinearConv"), count_op(ch, "Conv"), count_op(ch, "Clip"));
  nnp_graph_destroy(ch);
  float hw[5], hg[5];
  for (int fused = 0; fused < 2; fused++) {
    nnp_plan_options ho;
    nnp_plan_options_default(&ho);
    ho.passes = fused ? NNP_PASS_DEFAULT : NNP_PASS_DEFAULT & ~NNP_PASS_FUSE_QDQ;
    nnp_plan *ph;
    CHECK_OK(nnp_plan_compile(gh, &ho, &ph));
    int qg = 0; /* the Flatten's 2-D output is known once shapes are compiled */
    for (int i = 0; i < nnp_plan_num_steps(ph); i++) qg += !strcmp(nnp_plan_step_node(ph, i)->op_type, "QGemm");
    CHECK_MSG(qg == fused, "%d QGemm steps (fused %d)", qg, fused);
    nnp_tensor xt = {NNP_F32, 4, {1, 4, 6, 6}, hx};
    CHECK_OK(nnp_plan_set_input(ph, 0, &xt));
    CHECK_OK(nnp_plan_run(ph));
    memcpy(fused ? hg : hw, nnp_plan_output(ph, 0)->data, sizeof hw);
    nnp_plan_destroy(ph);
  }
  double hd = 0, hm = 0;
  for (int i = 0; i < 5; i++) hd = fmax(hd, fabs(hw[i] - hg[i])), hm = fmax(hm, fabs(hw[i]));
  printf("head: fused vs unfused QDQ max diff %.4g of max |y| %.4g\n", hd, hm);
  CHECK_MSG(hd <= 0.02 * hm + 1e-6, "head: max diff %g of %g", hd, hm);
  nnp_graph_destroy(gh);
  nnp_calib_table_free(&tab);
  nnp_calib_close(&set);
  ir_remove_calib_npy(dir, 4);
  nnp_graph_destroy(g);
  TEST_MAIN_END();
}
