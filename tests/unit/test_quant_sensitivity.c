/* Sensitivity analysis and the accuracy-budget search on a small synthetic CNN
 * (Conv c1 -> Relu -> Conv c2 -> Relu -> Conv c3), calibrated with min-max on seeded
 * .npy tensors, evaluated on other seeded .npy tensors:
 *  - the input of c2 is given a 60x too wide range, so c2 is by far the most sensitive
 *    layer and must rank first, and keeping it FP32 must win back cosine;
 *  - keeping c1 in FP32 gives exactly FP32's c1 output (bit for bit), quantizing it
 *    does not;
 *  - the budget search starts from all INT8, keeps layers in ranking order, and stops at
 *    the first step within the budget (every earlier step over it);
 *  - labels files parse, and malformed ones are refused. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nnperf/alloc.h"
#include "nnperf/engine.h"
#include "nnperf/npy.h"
#include "ops/op.h"
#include "quant/qdq.h"
#include "quant/quant_eval.h"
#include "quant/sensitivity.h"
#include "test.h"
#include "ir_builder.h"


static int add_weight(nnp_graph *g, const char *name, int64_t co, int64_t ci, int64_t k) {
  int v;
  nnp_graph_value(g, name, &v);
  nnp_value *val = &g->values[v];
  val->kind = NNP_VALUE_INITIALIZER;
  val->dtype = NNP_F32;
  val->rank = 4;
  val->init = nnp_calloc(1, sizeof *val->init);
  *val->init = (nnp_tensor){NNP_F32, 4, {co, ci, k, k}, NULL};
  for (int i = 0; i < 4; i++) val->dims[i].value = val->init->dims[i];
  nnp_tensor_alloc(val->init);
  float *d = val->init->data;
  for (int64_t i = 0; i < nnp_tensor_numel(val->init); i++) d[i] = frand() * 0.4f;
  return v;
}

/* X[1,4,8,8] -> c1 (3x3) -> Y1 -> Relu -> Z1 -> c2 (3x3) -> Y2 -> Relu -> Z2 -> c3 (1x1) -> O[1,5,4,4] */
static nnp_graph *make_graph(void) {
  nnp_graph *g;
  if (nnp_graph_create(&g) != NNP_OK) return NULL;
  g->opset = 13;
  int x, y1, z1, y2, z2, o;
  nnp_graph_value(g, "X", &x);
  g->values[x].kind = NNP_VALUE_INPUT;
  g->values[x].dtype = NNP_F32;
  g->values[x].rank = 4;
  int64_t xd[4] = {1, 4, 8, 8};
  for (int i = 0; i < 4; i++) g->values[x].dims[i].value = xd[i];
  nnp_graph_add_input(g, x);
  int w1 = add_weight(g, "W1", 6, 4, 3), w2 = add_weight(g, "W2", 6, 6, 3), w3 = add_weight(g, "W3", 5, 6, 1);
  nnp_graph_value(g, "Y1", &y1);
  nnp_graph_value(g, "Z1", &z1);
  nnp_graph_value(g, "Y2", &y2);
  nnp_graph_value(g, "Z2", &z2);
  nnp_graph_value(g, "O", &o);
  int i1[2] = {x, w1}, i2[1] = {y1}, i3[2] = {z1, w2}, i4[1] = {y2}, i5[2] = {z2, w3};
  nnp_graph_add_node(g, "c1", "Conv", "", 2, i1, 1, &y1, NULL);
  nnp_graph_add_node(g, "r1", "Relu", "", 1, i2, 1, &z1, NULL);
  nnp_graph_add_node(g, "c2", "Conv", "", 2, i3, 1, &y2, NULL);
  nnp_graph_add_node(g, "r2", "Relu", "", 1, i4, 1, &z2, NULL);
  nnp_graph_add_node(g, "c3", "Conv", "", 2, i5, 1, &o, NULL);
  g->values[o].is_output = true;
  nnp_graph_add_output(g, o);
  if (nnp_graph_toposort(g) != NNP_OK) return NULL;
  for (int i = 0; i < g->n_nodes; i++) g->nodes[i].op = nnp_op_lookup("", g->nodes[i].op_type);
  return g;
}

static void write_npys(const char *dir, const char *prefix, int n) {
  static float x[256];
  char path[512];
  for (int k = 0; k < n; k++) {
    for (int i = 0; i < 256; i++) x[i] = frand() * 2;
    nnp_tensor t = {NNP_F32, 4, {1, 4, 8, 8}, x};
    snprintf(path, sizeof path, "%s/%s%02d.npy", dir, prefix, k);
    CHECK_OK(nnp_npy_write(path, &t));
  }
}

static void remove_dir(const char *dir, const char *prefix, int n) {
  char path[512];
  for (int k = 0; k < n; k++) {
    snprintf(path, sizeof path, "%s/%s%02d.npy", dir, prefix, k);
    unlink(path);
  }
  rmdir(dir);
}

/* Value `name` of graph g run (no passes, a buffer per value) on input x, copied out. */
static bool run_value(const nnp_graph *g, const nnp_tensor *x, const char *name, float *out, int64_t n) {
  nnp_plan_options po;
  nnp_plan_options_default(&po);
  po.passes = 0;
  po.memory_plan = false;
  nnp_plan *p = NULL;
  int v = nnp_graph_find_value(g, name);
  bool ok = v >= 0 && nnp_plan_compile(g, &po, &p) == NNP_OK && nnp_plan_set_input(p, 0, x) == NNP_OK &&
            nnp_plan_run(p) == NNP_OK;
  const nnp_tensor *t = ok ? nnp_plan_value(p, v) : NULL;
  ok = ok && t && t->dtype == NNP_F32 && nnp_tensor_numel(t) == n;
  if (ok) memcpy(out, t->data, (size_t)n * sizeof *out);
  nnp_plan_destroy(p);
  return ok;
}

static void test_labels(void) {
  char path[] = "/tmp/nnp_labels_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  const char good[] = "# comment\n\nbaboon.jpg 372 baboon\n  orange.jpg\t950 orange\r\n";
  CHECK(write(fd, good, sizeof good - 1) == (ssize_t)(sizeof good - 1));
  close(fd);
  nnp_labels l;
  CHECK_OK(nnp_labels_load(path, &l));
  CHECK(l.n == 2 && nnp_labels_find(&l, "baboon.jpg") == 372 && nnp_labels_find(&l, "orange.jpg") == 950);
  CHECK(nnp_labels_find(&l, "apple.jpg") == -1);
  nnp_labels_free(&l);
  const char *bad[] = {"a.jpg x\n", "a.jpg -3\n", "a.jpg\n", "# only a comment\n", "a.jpg 12abc\n"};
  for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
    FILE *f = fopen(path, "w");
    fputs(bad[k], f);
    fclose(f);
    CHECK_MSG(nnp_labels_load(path, &l) == NNP_ERR_FORMAT, "labels '%s' accepted", bad[k]);
  }
  unlink(path);
}

static void test_sensitivity_and_budget(void) {
  nnp_graph *g = make_graph();
  CHECK(g != NULL);
  if (!g) return;
  char cdir[] = "/tmp/nnp_sens_calib_XXXXXX", vdir[] = "/tmp/nnp_sens_val_XXXXXX";
  CHECK(mkdtemp(cdir) && mkdtemp(vdir));
  write_npys(cdir, "c", 8);
  write_npys(vdir, "v", 24);
  nnp_calib_options co;
  nnp_calib_options_default(&co);
  nnp_calib_set cs, vs;
  CHECK_OK(nnp_calib_open(cdir, &co, &cs));
  CHECK_OK(nnp_calib_open(vdir, &co, &vs));
  nnp_calib_table t;
  CHECK_OK(nnp_calibrate(g, &cs, NNP_CALIBRATOR_MINMAX, 0, &t));
  /* c2's input range made 60x too wide: its INT8 steps are 60x too coarse */
  for (int i = 0; i < t.n; i++)
    if (!strcmp(t.entries[i].name, "Z1")) t.entries[i].hi *= 60;
  nnp_plan_options po;
  nnp_plan_options_default(&po);
  nnp_eval_set es;
  CHECK_OK(nnp_eval_set_load(g, &po, &vs, NULL, &es));
  CHECK(es.n == 24 && es.numel == 80 && es.n_labelled == 0);

  nnp_sensitivity sn;
  CHECK_OK(nnp_sensitivity_run(g, &t, &po, &es, NULL, NULL, &sn));
  CHECK(sn.n == 3);
  if (sn.n == 3) {
    CHECK_MSG(!strcmp(sn.layers[0].name, "c2"), "most sensitive: %s", sn.layers[0].name);
    /* alone: c2 costs more cosine than the others; except: keeping c2 wins back most */
    CHECK(sn.layers[0].alone.cos_mean < sn.layers[1].alone.cos_mean);
    CHECK(sn.layers[0].except.cos_mean > sn.all_int8.cos_mean);
    for (int i = 1; i < 3; i++) CHECK(sn.layers[0].except.cos_mean > sn.layers[i].except.cos_mean);
    for (int i = 0; i < 3; i++) CHECK(sn.layers[i].alone.n == 24 && sn.layers[i].except.n == 24);
    for (int i = 0; i + 1 < 3; i++)
      CHECK(sn.layers[i].alone.cos_mean <= sn.layers[i + 1].alone.cos_mean);
  }
  CHECK(sn.all_int8.cos_mean < 0.9999 && sn.all_int8.cos_mean > 0.5);

  /* keeping c1 FP32 gives FP32's c1 output exactly; quantizing it does not */
  static float y_fp[6 * 36], y_keep[6 * 36], y_q[6 * 36];
  const char *c1 = "c1";
  nnp_graph *qk = NULL, *qa = NULL;
  nnp_eval_result r;
  CHECK_OK(nnp_eval_qdq(g, &t, &c1, 1, &po, &es, &r, &qk));
  CHECK_OK(nnp_eval_qdq(g, &t, NULL, 0, &po, &es, &r, &qa));
  if (qk && qa) {
    CHECK(run_value(g, &es.inputs[0], "Y1", y_fp, 216));
    CHECK(run_value(qk, &es.inputs[0], "Y1", y_keep, 216));
    CHECK(run_value(qa, &es.inputs[0], "Y1", y_q, 216));
    CHECK(memcmp(y_fp, y_keep, sizeof y_fp) == 0);
    CHECK(memcmp(y_fp, y_q, sizeof y_fp) != 0);
  }
  nnp_graph_destroy(qk);
  nnp_graph_destroy(qa);

  /* budget search: 0% (no top-1 change allowed) */
  for (int pass = 0; pass < 2; pass++) {
    double budget = pass == 0 ? 0.0 : 100.0;
    nnp_budget_result br;
    nnp_graph *chosen = NULL;
    CHECK_OK(nnp_budget_search(g, &t, &po, &es, &sn, budget, pass == 0 ? 3 : 0, NULL, NULL, &br, &chosen));
    CHECK(br.met && br.n_steps >= 1 && chosen != NULL);
    CHECK(br.steps[0].n_kept == 0 && br.steps[0].r.agree == sn.all_int8.agree);
    for (int k = 0; k < br.n_steps; k++) {
      CHECK(br.steps[k].n_kept == k);
      bool within = nnp_agreement_loss_pct(&br.steps[k].r) <= budget;
      CHECK_MSG(within == (k == br.n_steps - 1), "step %d within %d of %d", k, within, br.n_steps);
    }
    if (pass == 0) CHECK(br.steps[0].p50_ms > 0 && br.steps[0].fp32_p50_ms > 0);
    if (pass == 1) CHECK(br.n_steps == 1 && br.steps[0].p50_ms == 0);
    /* the chosen model keeps exactly the first n_kept ranked layers FP32 */
    int n_kept = br.steps[br.n_steps - 1].n_kept, convs_on_dq = 0;
    for (int i = 0; chosen && i < chosen->n_nodes; i++) {
      const nnp_node *n = &chosen->nodes[i];
      if (strcmp(n->op_type, "Conv")) continue;
      int prod = chosen->values[n->inputs[1]].producer;
      convs_on_dq += prod >= 0 && !strcmp(chosen->nodes[prod].op_type, "DequantizeLinear");
    }
    CHECK(convs_on_dq == 3 - n_kept);
    nnp_graph_destroy(chosen);
    nnp_budget_result_free(&br);
  }
  CHECK(nnp_budget_search(g, &t, &po, &es, &sn, 101, 0, NULL, NULL, &(nnp_budget_result){0}, &qk) == NNP_ERR_INVALID);

  nnp_sensitivity_free(&sn);
  nnp_eval_set_free(&es);
  nnp_calib_table_free(&t);
  nnp_calib_close(&cs);
  nnp_calib_close(&vs);
  remove_dir(cdir, "c", 8);
  remove_dir(vdir, "v", 24);
  nnp_graph_destroy(g);
}

int main(void) {
  rs = 7;
  test_labels();
  test_sensitivity_and_budget();
  TEST_MAIN_END();
}
