/* QDQ rewrite: activation parameters, Conv+BatchNormalization folding keeps the
 * outputs, and the rewritten graph (calibrated with min-max on seeded tensors) runs in
 * the native engine close to FP32, with the float weights replaced by int8 ones. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nnperf/alloc.h"
#include "nnperf/engine.h"
#include "nnperf/npy.h"
#include "ops/op.h"
#include "quant/qdq.h"
#include "test.h"
#include "ir_builder.h"

/* X[1,4,6,6] -> Conv(W1,B1) -> BN -> Relu -> Conv(W2) -> O[1,3,6,6] */
static nnp_graph *make_graph(void) {
  nnp_graph *g;
  nnp_graph_create(&g);
  g->opset = 13;
  int x, y, z, r, o;
  nnp_graph_value(g, "X", &x);
  g->values[x].dtype = NNP_F32;
  g->values[x].rank = 4;
  int64_t xd[4] = {1, 4, 6, 6};
  for (int i = 0; i < 4; i++) g->values[x].dims[i].value = xd[i];
  nnp_graph_add_input(g, x);
  int64_t w1d[4] = {5, 4, 3, 3}, cd[1] = {5}, w2d[4] = {3, 5, 1, 1};
  int w1 = add_f32_init(g, "W1", 4, w1d, 0), b1 = add_f32_init(g, "B1", 1, cd, 0);
  int sc = add_f32_init(g, "bn.scale", 1, cd, 0.5f), bb = add_f32_init(g, "bn.bias", 1, cd, 0);
  int mn = add_f32_init(g, "bn.mean", 1, cd, 0), vr = add_f32_init(g, "bn.var", 1, cd, 0.2f);
  int w2 = add_f32_init(g, "W2", 4, w2d, 0);
  nnp_graph_value(g, "Y", &y);
  nnp_graph_value(g, "Z", &z);
  nnp_graph_value(g, "R", &r);
  nnp_graph_value(g, "O", &o);
  int i1[3] = {x, w1, b1}, i2[5] = {y, sc, bb, mn, vr}, i3[1] = {z}, i4[2] = {r, w2};
  int ni;
  nnp_graph_add_node(g, "conv1", "Conv", "", 3, i1, 1, &y, &ni);
  add_pads(&g->nodes[ni]);
  nnp_graph_add_node(g, "bn", "BatchNormalization", "", 5, i2, 1, &z, NULL);
  nnp_graph_add_node(g, "relu", "Relu", "", 1, i3, 1, &r, NULL);
  nnp_graph_add_node(g, "conv2", "Conv", "", 2, i4, 1, &o, NULL);
  g->values[o].is_output = true;
  nnp_graph_add_output(g, o);
  nnp_graph_toposort(g);
  for (int i = 0; i < g->n_nodes; i++) g->nodes[i].op = nnp_op_lookup("", g->nodes[i].op_type);
  return g;
}

static float input[144];

/* Runs g on `input`; copies output 0 into out (n floats). */
static nnp_status run(const nnp_graph *g, float *out, int n) {
  nnp_plan_options po;
  nnp_plan_options_default(&po);
  nnp_plan *p;
  NNP_TRY(nnp_plan_compile(g, &po, &p));
  nnp_tensor x = {NNP_F32, 4, {1, 4, 6, 6}, input};
  nnp_status s = nnp_plan_set_input(p, 0, &x);
  if (s == NNP_OK) s = nnp_plan_run(p);
  if (s == NNP_OK) memcpy(out, nnp_plan_output(p, 0)->data, sizeof(float) * (size_t)n);
  nnp_plan_destroy(p);
  return s;
}

int main(void) {
  rs = 99;
  float s;
  uint8_t zp;
  nnp_qdq_act_params(0.0f, 2.55f, &s, &zp);
  CHECK(fabsf(s - 0.01f) < 1e-7f && zp == 0);
  nnp_qdq_act_params(-1.0f, 3.0f, &s, &zp);
  CHECK(fabsf(s - 4.0f / 255) < 1e-7f && zp == 64); /* 63.75 */
  nnp_qdq_act_params(0.5f, 1.0f, &s, &zp);            /* widened to include 0 */
  CHECK(fabsf(s - 1.0f / 255) < 1e-7f && zp == 0);
  nnp_qdq_act_params(0.0f, 0.0f, &s, &zp);
  CHECK(s == 1.0f && zp == 0);

  for (int i = 0; i < 144; i++) input[i] = frand() * 2;
  float ref[108], got[108];
  nnp_graph *g = make_graph();
  CHECK_OK(run(g, ref, 108));
  int folded = 0;
  CHECK_OK(nnp_qdq_fold_batchnorm(g, &folded));
  CHECK(folded == 1 && count_op(g, "BatchNormalization") == 0);
  CHECK_OK(run(g, got, 108));
  double md = 0;
  for (int i = 0; i < 108; i++) md = fmax(md, fabs(ref[i] - got[i]));
  CHECK_MSG(md < 1e-4, "BN folding changed the output by %g", md);

  /* calibrate (min-max) on a few seeded tensors, then rewrite */
  char dir[] = "/tmp/nnp_qdq_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  const int64_t xdims[4] = {1, 4, 6, 6};
  CHECK_OK(ir_write_calib_npy(dir, 4, 4, xdims, input, 2));
  nnp_calib_options co;
  nnp_calib_options_default(&co);
  nnp_calib_set set;
  nnp_calib_table tab;
  CHECK_OK(nnp_calib_open(dir, &co, &set));
  CHECK_OK(nnp_calibrate(g, &set, NNP_CALIBRATOR_MINMAX, 0, &tab));
  nnp_qdq_report rep;
  const char *keep[1] = {"conv2"};
  nnp_graph *g2 = make_graph();
  CHECK_OK(nnp_qdq_rewrite(g2, &tab, keep, 1, &rep)); /* conv2 stays FP32 */
  CHECK(rep.quantized == 1 && rep.skipped == 1 && rep.folded_bn == 1);
  nnp_graph_destroy(g2);
  CHECK_OK(nnp_qdq_rewrite(g, &tab, NULL, 0, &rep));
  CHECK(rep.quantized == 2 && rep.skipped == 0);
  CHECK(count_op(g, "QuantizeLinear") == 2 && count_op(g, "DequantizeLinear") == 5); /* 2 act, 2 weights, 1 bias */
  CHECK(nnp_graph_find_value(g, "W1_bnfolded_quantized") >= 0);
  int w2 = nnp_graph_find_value(g, "W2");
  CHECK(w2 >= 0 && g->values[w2].init == NULL); /* the float weight was dropped */
  CHECK_OK(run(g, got, 108));
  double dot = 0, na = 0, nb = 0;
  for (int i = 0; i < 108; i++) {
    dot += (double)ref[i] * got[i];
    na += (double)ref[i] * ref[i];
    nb += (double)got[i] * got[i];
  }
  double cs = dot / sqrt(na * nb);
  printf("QDQ vs FP32 cosine %.6f\n", cs);
  CHECK_MSG(cs > 0.999, "QDQ output cosine %g", cs);
  /* A near-dead channel (weights ~1e-10 and a bias of 5, as the pretrained
   * EfficientNet-Lite0 has after BatchNorm folding) keeps an int32 bias: its weight
   * scale is raised until the bias fits. With a float bias no INT8 kernel takes the
   * layer (fuse-qdq needs the int32 bias). */
  nnp_graph *g3 = make_graph();
  {
    int wv = nnp_graph_find_value(g3, "W1"), bv = nnp_graph_find_value(g3, "B1");
    float *w = g3->values[wv].init->data, *b = g3->values[bv].init->data;
    for (int k = 0; k < 36; k++) w[2 * 36 + k] *= 1e-9f;
    b[2] = 5.0f;
  }
  float ref3[108], got3[108];
  CHECK_OK(run(g3, ref3, 108));
  nnp_calib_table tab3;
  CHECK_OK(nnp_calibrate(g3, &set, NNP_CALIBRATOR_MINMAX, 0, &tab3));
  CHECK_OK(nnp_qdq_rewrite(g3, &tab3, NULL, 0, &rep));
  CHECK_MSG(count_op(g3, "DequantizeLinear") == 5, "near-dead channel: %d DequantizeLinear, the bias stayed float",
            count_op(g3, "DequantizeLinear"));
  CHECK_OK(run(g3, got3, 108));
  dot = na = nb = 0;
  for (int i = 0; i < 108; i++) {
    dot += (double)ref3[i] * got3[i];
    na += (double)ref3[i] * ref3[i];
    nb += (double)got3[i] * got3[i];
  }
  CHECK_MSG(dot / sqrt(na * nb) > 0.999, "near-dead channel: QDQ output cosine %g", dot / sqrt(na * nb));
  nnp_calib_table_free(&tab3);
  nnp_graph_destroy(g3);
  nnp_calib_table_free(&tab);
  nnp_calib_close(&set);
  ir_remove_calib_npy(dir, 4);
  g->opset = 12;
  CHECK(nnp_qdq_rewrite(g, &tab, NULL, 0, &rep) == NNP_ERR_UNSUPPORTED);
  nnp_graph_destroy(g);
  TEST_MAIN_END();
}
