/* The blocked-layout pass (src/ir/passes/blocked_layout.c): on a small hand-built graph
 * with ragged channel counts (20, 24, 8), a depthwise conv, two MaxPools, a residual read inside the
 * region, and a blocked value read twice outside it:
 *  - the rewrite: every conv is a BlockedConv, one ToBlocked per value entering the
 *    region, one FromBlocked per value leaving it (the value read twice gets one); a
 *    MaxPool on a blocked value joins the region, one on the graph input does not; so
 *    does a GlobalAveragePool (its output NCHW, no FromBlocked for its input);
 *  - the numbers: bit-identical to the pass off on the reference kernels (BlockedConv's
 *    reference is FusedConv's), within 1e-4 on the fast kernels, at batch 1 and at
 *    batch 3 with batch lanes and 2 threads;
 *  - the pass is on by default (NNP_PASS_DEFAULT) and --no-blocked-layout takes it off;
 *  - a channel Concat of blocked values whose inputs but the last are whole blocks joins
 *    the region (no reorders around it), one whose first input is ragged does not, one
 *    with an unblocked last input joins through that input's ToBlocked;
 *  - a BatchNormalization of a blocked value joins as BlockedBatchNorm, with the Relu that
 *    alone reads it fused (that Relu's step gone); an AveragePool as BlockedAveragePool;
 *  - the same graph with a 3-channel X: conv1 reads X as NCHW in place (no ToBlocked),
 *    with the same numbers;
 *  - on AVX2-only CPUs the pass blocks grouped convs whose groups are whole blocks alone:
 *    the graph above keeps every conv NCHW, a 16-wide grouped conv and the SE scale after
 *    it are blocked (one ToBlocked, one FromBlocked), an 8-wide one is not, with the
 *    reference kernels' numbers. */
#include <stdio.h>
#include <string.h>

#include "nnperf/alloc.h"
#include "nnperf/bench.h"
#include "nnperf/engine.h"
#include "kernels/cpu.h"
#include "kernels/dispatch.h"
#include "nnperf/passes.h"
#include "ops/op.h"
#include "test.h"
#include "ir_builder.h"

enum { NOUT = 16 }; /* graph outputs */

static void add_ints_attr(nnp_node *n, const char *name, int64_t a0, int64_t a1) {
  nnp_attr *a;
  nnp_node_add_attr(n, name, &a);
  a->type = NNP_ATTR_INTS;
  a->count = 2;
  a->ints = nnp_malloc(2 * sizeof(int64_t));
  a->ints[0] = a0;
  a->ints[1] = a1;
}

static void add_int_attr(nnp_node *n, const char *name, int64_t v) {
  nnp_attr *a;
  nnp_node_add_attr(n, name, &a);
  a->type = NNP_ATTR_INT;
  a->i = v;
}

/* X[N,xc,9,9] -> conv1 3x3 (24) -> Relu -> A
 *             A -> depthwise 3x3 (24) -> + A -> C            (residual inside the region)
 *             C -> conv3 1x1 (8) -> D                         (output)
 *             C -> Relu -> E, C -> Sigmoid -> F               (C leaves the region twice)
 *             A -> MaxPool 3x3 s2 p1 -> P -> conv4 1x1 (8) -> G   (the pool joins the region)
 *             X -> MaxPool 2x2 s2 -> H                       (stays NCHW: X is not blocked)
 *             P -> GlobalAveragePool -> K                    (reads P blocked, writes NCHW)
 *             H -> GlobalAveragePool -> L                    (stays NCHW: H is not blocked)
 *             K -> conv5 1x1 (24) -> S; Mul(S, P) -> M        (a squeeze-and-excitation scale,
 *             Mul(P, K) -> Q                                  blocked S and plain S: BlockedChannelMul)
 *             P -> conv6 1x1 (16) -> T; Concat(T, P) -> U     (16 + 24: joins, its last block ragged)
 *             U -> conv7 1x1 (8) -> V; Concat(P, T) -> W      (24 first: stays NCHW)
 *             C -> BatchNormalization -> Relu -> Z            (BlockedBatchNorm, the Relu fused)
 *             P -> BatchNormalization -> J                    (J an output: no Relu to fuse)
 *             P -> Sigmoid -> SP; Concat(T, SP) -> O          (SP enters through a ToBlocked)
 *             A -> AveragePool 3x3 s2 p1 (end pad 2) -> AP     (BlockedAveragePool)
 * Outputs D, E, F, G, H, K, L, M, Q, U, V, W, Z, J, O, AP. xc = 20, or 3 (conv1 then reads X as NCHW in place: no ToBlocked). */
static nnp_graph *build(int64_t xc) {
  rs = 12345;
  nnp_graph *g;
  nnp_graph_create(&g);
  g->opset = 13;
  int x, a0, a, b, c, d, e, f, pv, gv, h, kv, lv, sv, mv, qv, tv, uv, vv, wv, bn1, zv, jv, spv, ov, apv;
  nnp_graph_value(g, "X", &x);
  g->values[x].dtype = NNP_F32;
  g->values[x].rank = 4;
  const int64_t xd[4] = {-1, xc, 9, 9};
  for (int i = 0; i < 4; i++) g->values[x].dims[i].value = xd[i];
  g->values[x].dims[0].symbol = nnp_strdup("N");
  nnp_graph_add_input(g, x);
  const int64_t w1d[4] = {24, xc, 3, 3}, b1d[1] = {24}, w2d[4] = {24, 1, 3, 3}, w3d[4] = {8, 24, 1, 1}, b3d[1] = {8};
  int w1 = add_f32_init(g, "W1", 4, w1d, 0), b1 = add_f32_init(g, "B1", 1, b1d, 0);
  int w2 = add_f32_init(g, "W2", 4, w2d, 0), b2 = add_f32_init(g, "B2", 1, b1d, 0);
  int w3 = add_f32_init(g, "W3", 4, w3d, 0), b3 = add_f32_init(g, "B3", 1, b3d, 0);
  int w4 = add_f32_init(g, "W4", 4, w3d, 0);
  const int64_t w5d[4] = {24, 24, 1, 1};
  int w5 = add_f32_init(g, "W5", 4, w5d, 0);
  const int64_t w6d[4] = {16, 24, 1, 1}, w7d[4] = {8, 40, 1, 1};
  int w6 = add_f32_init(g, "W6", 4, w6d, 0), w7 = add_f32_init(g, "W7", 4, w7d, 0);
  const int64_t cd[1] = {24};
  int bn_p[4];
  for (int k = 0; k < 4; k++) { /* scale, B, mean, var (var positive) */
    static const char *pn[4] = {"BNS", "BNB", "BNM", "BNV"};
    bn_p[k] = add_f32_init(g, pn[k], 1, cd, k == 3 ? 0.5f : 0);
  }
  const char *names[] = {"A0", "A", "B", "C", "D", "E", "F", "P", "G", "H", "K", "L", "S", "M", "Q", "T", "U",
                         "V", "W", "BN1", "Z", "J", "SP", "O", "AP"};
  int *vals[] = {&a0, &a, &b, &c, &d, &e, &f, &pv, &gv, &h, &kv, &lv, &sv, &mv, &qv, &tv, &uv, &vv, &wv, &bn1, &zv,
                 &jv, &spv, &ov, &apv};
  for (int i = 0; i < 25; i++) nnp_graph_value(g, names[i], vals[i]);
  int ni;
  nnp_graph_add_node(g, "conv1", "Conv", "", 3, (int[]){x, w1, b1}, 1, &a0, &ni);
  add_pads(&g->nodes[ni]);
  nnp_graph_add_node(g, "relu1", "Relu", "", 1, &a0, 1, &a, NULL);
  nnp_graph_add_node(g, "dw", "Conv", "", 3, (int[]){a, w2, b2}, 1, &b, &ni);
  add_pads(&g->nodes[ni]);
  add_int_attr(&g->nodes[ni], "group", 24);
  nnp_graph_add_node(g, "add", "Add", "", 2, (int[]){b, a}, 1, &c, NULL);
  nnp_graph_add_node(g, "conv3", "Conv", "", 3, (int[]){c, w3, b3}, 1, &d, NULL);
  nnp_graph_add_node(g, "relu_e", "Relu", "", 1, &c, 1, &e, NULL);
  nnp_graph_add_node(g, "sig_f", "Sigmoid", "", 1, &c, 1, &f, NULL);
  nnp_graph_add_node(g, "pool", "MaxPool", "", 1, &a, 1, &pv, &ni);
  add_ints_attr(&g->nodes[ni], "kernel_shape", 3, 3);
  add_ints_attr(&g->nodes[ni], "strides", 2, 2);
  add_pads(&g->nodes[ni]);
  nnp_graph_add_node(g, "conv4", "Conv", "", 2, (int[]){pv, w4}, 1, &gv, NULL);
  nnp_graph_add_node(g, "pool_x", "MaxPool", "", 1, &x, 1, &h, &ni);
  add_ints_attr(&g->nodes[ni], "kernel_shape", 2, 2);
  add_ints_attr(&g->nodes[ni], "strides", 2, 2);
  nnp_graph_add_node(g, "gap_p", "GlobalAveragePool", "", 1, &pv, 1, &kv, NULL);
  nnp_graph_add_node(g, "gap_h", "GlobalAveragePool", "", 1, &h, 1, &lv, NULL);
  nnp_graph_add_node(g, "conv5", "Conv", "", 2, (int[]){kv, w5}, 1, &sv, NULL);
  nnp_graph_add_node(g, "scale_s", "Mul", "", 2, (int[]){sv, pv}, 1, &mv, NULL);
  nnp_graph_add_node(g, "scale_k", "Mul", "", 2, (int[]){pv, kv}, 1, &qv, NULL);
  nnp_graph_add_node(g, "conv6", "Conv", "", 2, (int[]){pv, w6}, 1, &tv, NULL);
  nnp_graph_add_node(g, "cat_tp", "Concat", "", 2, (int[]){tv, pv}, 1, &uv, &ni);
  add_int_attr(&g->nodes[ni], "axis", 1);
  nnp_graph_add_node(g, "conv7", "Conv", "", 2, (int[]){uv, w7}, 1, &vv, NULL);
  nnp_graph_add_node(g, "cat_pt", "Concat", "", 2, (int[]){pv, tv}, 1, &wv, &ni);
  add_int_attr(&g->nodes[ni], "axis", 1);
  const int bn_in[2][5] = {{c, bn_p[0], bn_p[1], bn_p[2], bn_p[3]}, {pv, bn_p[0], bn_p[1], bn_p[2], bn_p[3]}};
  nnp_graph_add_node(g, "bn_c", "BatchNormalization", "", 5, bn_in[0], 1, &bn1, NULL);
  nnp_graph_add_node(g, "relu_bn", "Relu", "", 1, &bn1, 1, &zv, NULL);
  nnp_graph_add_node(g, "bn_p", "BatchNormalization", "", 5, bn_in[1], 1, &jv, NULL);
  nnp_graph_add_node(g, "sig_p", "Sigmoid", "", 1, &pv, 1, &spv, NULL);
  nnp_graph_add_node(g, "cat_tsp", "Concat", "", 2, (int[]){tv, spv}, 1, &ov, &ni);
  add_int_attr(&g->nodes[ni], "axis", 1);
  nnp_graph_add_node(g, "avg_a", "AveragePool", "", 1, &a, 1, &apv, &ni);
  add_ints_attr(&g->nodes[ni], "kernel_shape", 3, 3);
  add_ints_attr(&g->nodes[ni], "strides", 2, 2);
  {
    nnp_attr *pa;
    nnp_node_add_attr(&g->nodes[ni], "pads", &pa);
    pa->type = NNP_ATTR_INTS;
    pa->count = 4;
    pa->ints = nnp_malloc(4 * sizeof(int64_t));
    pa->ints[0] = pa->ints[1] = 1;
    pa->ints[2] = pa->ints[3] = 2;
  }
  int outs[NOUT] = {d, e, f, gv, h, kv, lv, mv, qv, uv, vv, wv, zv, jv, ov, apv};
  for (int i = 0; i < NOUT; i++) {
    g->values[outs[i]].is_output = true;
    nnp_graph_add_output(g, outs[i]);
  }
  CHECK_OK(nnp_graph_toposort(g));
  for (int i = 0; i < g->n_nodes; i++) g->nodes[i].op = nnp_op_lookup("", g->nodes[i].op_type);
  return g;
}

enum { MAXOUT = 3 * 3 * 24 * 81 };

typedef struct result {
  float out[NOUT][MAXOUT];
  int64_t n[NOUT];
  int to, from, bconv, bpool, bavg, bgap, bmul, bbn, steps, lanes;
} result;

static void run(const nnp_graph *g, unsigned passes, bool fast, int64_t batch, int threads, bool lanes, result *r) {
  memset(r, 0, sizeof *r);
  nnp_plan_options o;
  nnp_plan_options_default(&o);
  o.passes = passes;
  o.fast_kernels = fast;
  o.threads = threads;
  o.batch_lanes = lanes;
  o.n_dims = 1;
  o.dims[0].symbol = "N";
  o.dims[0].value = batch;
  nnp_plan *p = NULL;
  CHECK_OK(nnp_plan_compile(g, &o, &p));
  if (!p) return;
  nnp_fill_seeded(nnp_plan_input(p, 0), 99);
  CHECK_OK(nnp_plan_run(p));
  const nnp_graph *pg = nnp_plan_graph(p);
  for (int i = 0; i < pg->n_nodes; i++) {
    const char *t = pg->nodes[i].op_type;
    r->to += !strcmp(t, "ToBlocked");
    r->from += !strcmp(t, "FromBlocked");
    r->bconv += !strcmp(t, "BlockedConv");
    r->bpool += !strcmp(t, "BlockedMaxPool");
    r->bgap += !strcmp(t, "BlockedGlobalAveragePool");
    r->bmul += !strcmp(t, "BlockedChannelMul");
    r->bbn += !strcmp(t, "BlockedBatchNorm");
    r->bavg += !strcmp(t, "BlockedAveragePool");
  }
  r->steps = nnp_plan_num_steps(p);
  r->lanes = nnp_plan_batch_lanes(p);
  for (int k = 0; k < nnp_plan_num_outputs(p) && k < NOUT; k++) {
    const nnp_tensor *y = nnp_plan_output(p, k);
    r->n[k] = nnp_tensor_numel(y);
    CHECK(r->n[k] <= MAXOUT);
    if (r->n[k] <= MAXOUT) memcpy(r->out[k], y->data, (size_t)r->n[k] * sizeof(float));
  }
  nnp_plan_destroy(p);
}

static double max_err(const result *a, const result *b) {
  double m = 0;
  for (int k = 0; k < NOUT; k++) {
    if (a->n[k] != b->n[k]) return 1e30;
    for (int64_t i = 0; i < a->n[k]; i++) {
      double e = fabs((double)a->out[k][i] - b->out[k][i]) / (1 + fabs((double)b->out[k][i]));
      if (!(e <= m)) m = e;
    }
  }
  return m;
}

static result want, got;

/* AVX2: the pass blocks grouped convs whose groups are whole blocks alone
 * (nnp_bconv_avx2_pays). X[N,32,9,9] -> conv_a 1x1 (32) -> Relu -> A
 *   A -> grouped 3x3 (32, 2 groups of 16) -> B     (blocked: enters through a ToBlocked)
 *   B -> GlobalAveragePool -> K; Mul(B, K) -> M    (SE scale: joins the region)
 *   M -> conv_c 1x1 (16) -> D                       (dense: stays NCHW, M leaves once)
 *   A -> grouped 3x3 (32, 4 groups of 8) -> E       (groups not whole blocks: NCHW)
 * Outputs D, E. */
static nnp_graph *build_grouped(void) {
  rs = 777;
  nnp_graph *g;
  nnp_graph_create(&g);
  g->opset = 13;
  int x, a0, a, b, k, m, d, e, ni;
  nnp_graph_value(g, "X", &x);
  g->values[x].dtype = NNP_F32;
  g->values[x].rank = 4;
  const int64_t xd[4] = {-1, 32, 9, 9};
  for (int i = 0; i < 4; i++) g->values[x].dims[i].value = xd[i];
  g->values[x].dims[0].symbol = nnp_strdup("N");
  nnp_graph_add_input(g, x);
  const int64_t wad[4] = {32, 32, 1, 1}, wbd[4] = {32, 16, 3, 3}, wcd[4] = {16, 32, 1, 1}, wed[4] = {32, 8, 3, 3};
  const int64_t bd[1] = {32};
  int wa = add_f32_init(g, "WA", 4, wad, 0), wb = add_f32_init(g, "WB", 4, wbd, 0), bb = add_f32_init(g, "BB", 1, bd, 0);
  int wc = add_f32_init(g, "WC", 4, wcd, 0), we = add_f32_init(g, "WE", 4, wed, 0);
  const char *names[] = {"A0", "A", "B", "K", "M", "D", "E"};
  int *vals[] = {&a0, &a, &b, &k, &m, &d, &e};
  for (int i = 0; i < 7; i++) nnp_graph_value(g, names[i], vals[i]);
  nnp_graph_add_node(g, "conv_a", "Conv", "", 2, (int[]){x, wa}, 1, &a0, NULL);
  nnp_graph_add_node(g, "relu_a", "Relu", "", 1, &a0, 1, &a, NULL);
  nnp_graph_add_node(g, "grouped16", "Conv", "", 3, (int[]){a, wb, bb}, 1, &b, &ni);
  add_pads(&g->nodes[ni]);
  add_int_attr(&g->nodes[ni], "group", 2);
  nnp_graph_add_node(g, "gap_b", "GlobalAveragePool", "", 1, &b, 1, &k, NULL);
  nnp_graph_add_node(g, "scale", "Mul", "", 2, (int[]){b, k}, 1, &m, NULL);
  nnp_graph_add_node(g, "conv_c", "Conv", "", 2, (int[]){m, wc}, 1, &d, NULL);
  nnp_graph_add_node(g, "grouped8", "Conv", "", 2, (int[]){a, we}, 1, &e, &ni);
  add_pads(&g->nodes[ni]);
  add_int_attr(&g->nodes[ni], "group", 4);
  const int outs[2] = {d, e};
  for (int i = 0; i < 2; i++) {
    g->values[outs[i]].is_output = true;
    nnp_graph_add_output(g, outs[i]);
  }
  CHECK_OK(nnp_graph_toposort(g));
  for (int i = 0; i < g->n_nodes; i++) g->nodes[i].op = nnp_op_lookup("", g->nodes[i].op_type);
  return g;
}

/* On AVX2: build()'s graph keeps every conv NCHW (none is grouped), build_grouped()'s
 * blocks one, with the same numbers as the reference kernels without the pass. */
static void test_avx2_selection(void) {
  nnp_graph *g = build(20);
  run(g, NNP_PASS_ALL, true, 1, 2, true, &got);
  CHECK_MSG(got.bconv == 0 && got.to == 0 && got.from == 0, "dense graph on AVX2: %d BlockedConv, %d + %d reorders",
            got.bconv, got.to, got.from);
  nnp_graph_destroy(g);
  g = build_grouped();
  for (int64_t batch = 1; batch <= 3; batch += 2)
    for (int threads = 1; threads <= 2; threads++) {
      run(g, NNP_PASS_ALL, true, batch, threads, true, &got);
      CHECK_MSG(got.bconv == 1 && got.to == 1 && got.from == 1 && got.bgap == 1 && got.bmul == 1,
                "grouped graph on AVX2: %d BlockedConv, %d ToBlocked, %d FromBlocked, %d gap, %d mul", got.bconv,
                got.to, got.from, got.bgap, got.bmul);
      run(g, NNP_PASS_DEFAULT & ~NNP_PASS_BLOCKED_LAYOUT, false, batch, 1, false, &want);
      const double err = max_err(&got, &want);
      CHECK_MSG(err < 1e-4, "grouped graph on AVX2, batch %lld, %d threads: error %g", (long long)batch, threads, err);
    }
  nnp_graph_destroy(g);
}

/* The rewrite and the numbers for X with xc channels: to_blocked ToBlocked nodes expected. */
static void test_graph(int64_t xc, int to_blocked) {
  nnp_graph *g = build(xc);
  run(g, NNP_PASS_DEFAULT & ~NNP_PASS_BLOCKED_LAYOUT, false, 1, 1, true, &want);
  CHECK(want.to == 0 && want.from == 0 && want.bconv == 0);
  run(g, NNP_PASS_ALL, false, 1, 1, true, &got);
  CHECK_MSG(got.bconv == 7, "X %lld channels: %d BlockedConv", (long long)xc, got.bconv);
  CHECK_MSG(got.bmul == 2, "%d BlockedChannelMul (M and Q)", got.bmul);
  CHECK_MSG(got.bpool == 1, "%d BlockedMaxPool (pool on A only)", got.bpool);
  CHECK_MSG(got.bgap == 1, "%d BlockedGlobalAveragePool (on P only)", got.bgap);
  /* ... and K's, the input of conv5 */
  /* ... and SP's, the unblocked input of O's Concat */
  CHECK_MSG(got.to == to_blocked + 2, "X %lld channels: %d ToBlocked, want %d", (long long)xc, got.to, to_blocked + 2);
  CHECK_MSG(got.from == 13, "%d FromBlocked (C once for its readers, D, G, M, Q, U, V, P and T, Z, J, O, AP)",
            got.from);
  CHECK_MSG(got.bbn == 2 && got.bavg == 1, "%d BlockedBatchNorm, %d BlockedAveragePool", got.bbn, got.bavg);
  /* the reorders added; Z's Relu is fused either way (into BlockedBatchNorm, or without the
   * pass into FusedBatchNorm) */
  CHECK_MSG(got.steps == want.steps + 13 + to_blocked + 2, "steps %d vs %d without the pass", got.steps, want.steps);
  /* the numbers: the reference path is exact */
  CHECK_MSG(max_err(&got, &want) == 0, "reference kernels differ by %g", max_err(&got, &want));

  /* fast kernels (the AVX-512 tile where there is one), batch 1 and 3, 1 and 2 threads,
   * batch 3 image by image (lanes: BlockedConv and the reorders are per image) and layer
   * at a time */
  for (int64_t batch = 1; batch <= 3; batch += 2)
    for (int threads = 1; threads <= 2; threads++)
      for (int lanes = 0; lanes < (batch > 1 ? 2 : 1); lanes++) {
        run(g, NNP_PASS_DEFAULT, true, batch, threads, lanes, &want);
        run(g, NNP_PASS_ALL, true, batch, threads, lanes, &got);
        CHECK(got.bconv == 7 && got.bpool == 1 && got.bavg == 1 && got.bgap == 1 && got.bmul == 2 && got.bbn == 2 &&
              got.to == to_blocked + 2);
        CHECK_MSG((got.lanes > 0) == (lanes && batch > 1), "batch %lld: %d lanes", (long long)batch, got.lanes);
        double e = max_err(&got, &want);
        CHECK_MSG(e < 1e-4, "X %lld channels, fast kernels, batch %lld, %d threads, lanes %d: error %g", (long long)xc,
                  (long long)batch, threads, lanes, e);
        /* and against the reference kernels without the pass (the oracle) */
        run(g, NNP_PASS_DEFAULT, false, batch, 1, false, &want);
        e = max_err(&got, &want);
        CHECK_MSG(e < 1e-4, "fast blocked vs reference, batch %lld: error %g", (long long)batch, e);
      }
  nnp_graph_destroy(g);
}

int main(void) {
  CHECK(NNP_PASS_DEFAULT & NNP_PASS_BLOCKED_LAYOUT);
  nnp_plan_options o;
  nnp_plan_options_default(&o);
  CHECK(o.passes & NNP_PASS_BLOCKED_LAYOUT);
  unsigned bits = 0;
  CHECK_OK(nnp_passes_parse("default,blocked-layout", &bits));
  CHECK(bits == NNP_PASS_ALL);

  /* without the vector tiles (AVX-512 or AVX2) the pass converts nothing (the blocked
   * layout would run the generic C kernel): nothing else to test here */
  const nnp_isa isa = nnp_dispatch_isa(NNP_KF_BLOCKED_CONV);
  if (isa != NNP_ISA_AVX512 && isa != NNP_ISA_AVX2) {
    nnp_graph *g = build(20);
    run(g, NNP_PASS_ALL, true, 1, 1, true, &got);
    CHECK(got.bconv == 0 && got.bpool == 0 && got.bgap == 0 && got.bmul == 0 && got.to == 0 && got.from == 0);
    printf("no vector blocked tiles (%s): the pass is a no-op\n", nnp_cpu_kernel_isa());
    nnp_graph_destroy(g);
    TEST_MAIN_END();
  }
  if (isa == NNP_ISA_AVX2) {
    test_avx2_selection();
    TEST_MAIN_END();
  }
  test_graph(20, 1); /* X enters the region through one ToBlocked, shared by conv1 only */
  test_graph(3, 0);  /* conv1 reads the 3 planes of X in place */
  TEST_MAIN_END();
}
