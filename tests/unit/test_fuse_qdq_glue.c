/* fuse-qdq's glue rewrites (ir/passes/fuse_qdq_glue.c) on a hand-built QOperator/QDQ
 * graph of the ResNet pattern:
 *
 *   X -> Q -> QLinearConv(c1) -> DQ -> MaxPool -> Q -> m
 *   m -> QLinearConv(c2) -> DQ --+
 *   m -> DQ ---------------------+-> Add -> Relu -> Q -> r
 *   r -> QLinearConv(c3) -> DQ --+
 *   r -> DQ ---------------------+-> Add -> Q -> DQ -> O          (no Relu)
 *
 * With fuse-qdq the MaxPool runs on uint8 after its Q and both Adds become QLinearAdd, so
 * every tensor from the first Q to the last DQ is uint8; since max commutes with the
 * monotone quantization and QLinearAdd performs the unfused float32 operations, the
 * output must equal the unfused graph's bit for bit: 1..4 threads (and, by ctest, the
 * VNNI, AVX2 and generic kernels), several seeded inputs whose ranges saturate the quantizers. */
#include <math.h>
#include <string.h>

#include "nnperf/alloc.h"
#include "nnperf/engine.h"
#include "nnperf/passes.h"
#include "kernels/cpu.h"
#include "ops/op.h"
#include "test.h"

static uint64_t rs = 7;
static uint32_t next(void) {
  rs = rs * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rs >> 33);
}

static int add_init(nnp_graph *g, const char *name, nnp_dtype dt, int rank, const int64_t *dims) {
  int v;
  nnp_graph_value(g, name, &v);
  nnp_value *val = &g->values[v];
  val->kind = NNP_VALUE_INITIALIZER;
  val->dtype = dt;
  val->rank = rank;
  val->init = nnp_calloc(1, sizeof *val->init);
  val->init->dtype = dt;
  val->init->rank = rank;
  for (int i = 0; i < rank; i++) val->dims[i].value = val->init->dims[i] = dims[i];
  nnp_tensor_alloc(val->init);
  return v;
}

static int scalar_f32(nnp_graph *g, const char *name, float x) {
  int v = add_init(g, name, NNP_F32, 0, NULL);
  *(float *)g->values[v].init->data = x;
  return v;
}

static int scalar_u8(nnp_graph *g, const char *name, uint8_t x) {
  int v = add_init(g, name, NNP_U8, 0, NULL);
  *(uint8_t *)g->values[v].init->data = x;
  return v;
}

static int value(nnp_graph *g, const char *name) {
  int v;
  nnp_graph_value(g, name, &v);
  return v;
}

static void ints_attr(nnp_graph *g, int node, const char *name, int n, int64_t x) {
  nnp_attr *a;
  nnp_node_add_attr(&g->nodes[node], name, &a);
  a->type = NNP_ATTR_INTS;
  a->count = (size_t)n;
  a->ints = nnp_malloc((size_t)n * sizeof(int64_t));
  for (int k = 0; k < n; k++) a->ints[k] = x;
}

enum { C = 6, H = 9, W = 9 };

/* QLinearConv 3x3 pad 1, C -> C, from uint8 `in` (scale xs, zp xz) to a new uint8 value. */
static int qconv(nnp_graph *g, const char *name, int in, int xs, int xz, float ys, uint8_t yz) {
  char b[64];
  int64_t wd[4] = {C, C, 3, 3}, cd[1] = {C};
  snprintf(b, sizeof b, "%s.w", name);
  int w = add_init(g, b, NNP_I8, 4, wd);
  for (int i = 0; i < C * C * 9; i++) ((int8_t *)g->values[w].init->data)[i] = (int8_t)(next() % 255 - 127);
  snprintf(b, sizeof b, "%s.ws", name);
  int ws = add_init(g, b, NNP_F32, 1, cd);
  snprintf(b, sizeof b, "%s.wz", name);
  int wz = add_init(g, b, NNP_I8, 1, cd);
  for (int i = 0; i < C; i++) ((float *)g->values[ws].init->data)[i] = 0.002f + 0.001f * (float)i;
  snprintf(b, sizeof b, "%s.ys", name);
  int ysv = scalar_f32(g, b, ys);
  snprintf(b, sizeof b, "%s.yz", name);
  int yzv = scalar_u8(g, b, yz);
  snprintf(b, sizeof b, "%s.out", name);
  int y = value(g, b);
  int ins[8] = {in, xs, xz, w, ws, wz, ysv, yzv}, n;
  nnp_graph_add_node(g, name, "QLinearConv", "", 8, ins, 1, &y, &n);
  ints_attr(g, n, "pads", 4, 1);
  return y;
}

static int node1(nnp_graph *g, const char *name, const char *op, int n_in, const int *in) {
  char b[64];
  snprintf(b, sizeof b, "%s.out", name);
  int y = value(g, b);
  nnp_graph_add_node(g, name, op, "", n_in, in, 1, &y, NULL);
  return y;
}

static nnp_graph *make_graph(void) {
  nnp_graph *g;
  nnp_graph_create(&g);
  g->opset = 13;
  int x = value(g, "X");
  g->values[x].dtype = NNP_F32;
  g->values[x].rank = 4;
  int64_t xd[4] = {1, C, H, W};
  for (int i = 0; i < 4; i++) g->values[x].dims[i].value = xd[i];
  nnp_graph_add_input(g, x);
  int s0 = scalar_f32(g, "s0", 0.02f), z0 = scalar_u8(g, "z0", 128);
  int s1 = scalar_f32(g, "s1", 0.05f), z1 = scalar_u8(g, "z1", 100);
  int sm = scalar_f32(g, "sm", 0.045f), zm = scalar_u8(g, "zm", 90);
  int s2 = scalar_f32(g, "s2", 0.03f), z2 = scalar_u8(g, "z2", 120);
  int sr = scalar_f32(g, "sr", 0.04f), zr = scalar_u8(g, "zr", 10); /* not 0: the Relu matters */
  int s3 = scalar_f32(g, "s3", 0.06f), z3 = scalar_u8(g, "z3", 130);
  int so = scalar_f32(g, "so", 0.07f), zo = scalar_u8(g, "zo", 140);
  int in[3] = {x, s0, z0};
  int xq = node1(g, "qx", "QuantizeLinear", 3, in);
  int c1 = qconv(g, "c1", xq, s0, z0, 0.05f, 100);
  in[0] = c1, in[1] = s1, in[2] = z1;
  int c1f = node1(g, "dq_c1", "DequantizeLinear", 3, in);
  int mpi;
  char b[64];
  snprintf(b, sizeof b, "mp.out");
  int mp = value(g, b);
  nnp_graph_add_node(g, "mp", "MaxPool", "", 1, &c1f, 1, &mp, &mpi);
  ints_attr(g, mpi, "kernel_shape", 2, 3);
  ints_attr(g, mpi, "strides", 2, 2);
  ints_attr(g, mpi, "pads", 4, 1);
  in[0] = mp, in[1] = sm, in[2] = zm;
  int m = node1(g, "q_mp", "QuantizeLinear", 3, in);
  int c2 = qconv(g, "c2", m, sm, zm, 0.03f, 120);
  in[0] = c2, in[1] = s2, in[2] = z2;
  int c2f = node1(g, "dq_c2", "DequantizeLinear", 3, in);
  in[0] = m, in[1] = sm, in[2] = zm;
  int mf = node1(g, "dq_m", "DequantizeLinear", 3, in);
  int ad[2] = {c2f, mf};
  int a1 = node1(g, "add1", "Add", 2, ad);
  int r1 = node1(g, "relu1", "Relu", 1, &a1);
  in[0] = r1, in[1] = sr, in[2] = zr;
  int r = node1(g, "q_r", "QuantizeLinear", 3, in);
  int c3 = qconv(g, "c3", r, sr, zr, 0.06f, 130);
  in[0] = c3, in[1] = s3, in[2] = z3;
  int c3f = node1(g, "dq_c3", "DequantizeLinear", 3, in);
  in[0] = r, in[1] = sr, in[2] = zr;
  int rf = node1(g, "dq_r", "DequantizeLinear", 3, in);
  int ad2[2] = {rf, c3f}; /* the residual first this time */
  int a2 = node1(g, "add2", "Add", 2, ad2);
  in[0] = a2, in[1] = so, in[2] = zo;
  int oq = node1(g, "q_o", "QuantizeLinear", 3, in);
  in[0] = oq;
  int o = node1(g, "dq_o", "DequantizeLinear", 3, in);
  nnp_graph_add_output(g, o);
  nnp_graph_toposort(g);
  for (int i = 0; i < g->n_nodes; i++) g->nodes[i].op = nnp_op_lookup("", g->nodes[i].op_type);
  return g;
}

enum { NIN = C * H * W, NOUT = C * 5 * 5 };

/* The kernels' ISA is fixed per process (kernels/cpu.c caches CPUID): ctest runs this test
 * as is and under NNP_CPU_FEATURES=avx2 and =generic (tests/CMakeLists.txt). */
static nnp_status run(const nnp_graph *g, unsigned passes, int threads, const float *x, float *out, int *qadd,
                      int *u8pool, int *float_glue) {
  nnp_plan_options po;
  nnp_plan_options_default(&po);
  po.passes = passes;
  po.threads = threads;
  nnp_plan *p;
  NNP_TRY(nnp_plan_compile(g, &po, &p));
  nnp_status s;
  *qadd = *u8pool = *float_glue = 0;
  for (int i = 0; i < nnp_plan_num_steps(p); i++) {
    const char *op = nnp_plan_step_node(p, i)->op_type, *k = nnp_plan_step_kernel(p, i);
    *qadd += !strcmp(op, "QLinearAdd") && k && strstr(k, "qlinearadd.");
    *u8pool += !strcmp(op, "MaxPool") && k && !strcmp(k, "pool.max2d.u8");
    *float_glue += !strcmp(op, "Add") || !strcmp(op, "Relu") || !strcmp(op, "FusedElementwise");
  }
  nnp_tensor xt = {NNP_F32, 4, {1, C, H, W}, (void *)x};
  s = nnp_plan_set_input(p, 0, &xt);
  if (s == NNP_OK) s = nnp_plan_run(p);
  if (s == NNP_OK) memcpy(out, nnp_plan_output(p, 0)->data, sizeof(float) * NOUT);
  nnp_plan_destroy(p);
  return s;
}

int main(void) {
  nnp_graph *g = make_graph();
  float x[NIN], want[NOUT], got[NOUT];
  for (int trial = 0; trial < 4; trial++) {
    float span = trial == 3 ? 8.0f : 2.0f; /* the last input saturates the first quantizer */
    for (int i = 0; i < NIN; i++) x[i] = ((float)(next() % 20001) / 10000.0f - 1.0f) * span;
    int qadd, u8pool, glue;
    CHECK_OK(run(g, NNP_PASS_DEFAULT & ~NNP_PASS_FUSE_QDQ, 1, x, want, &qadd, &u8pool, &glue));
    CHECK_MSG(qadd == 0 && u8pool == 0 && glue > 0, "unfused: qadd %d u8pool %d glue %d", qadd, u8pool, glue);
    int distinct = 0;
    for (int i = 1; i < NOUT; i++) distinct += want[i] != want[0];
    CHECK_MSG(distinct > NOUT / 2, "the output is nearly constant (%d distinct): a weak test", distinct);
    for (int threads = 1; threads <= 4; threads++) {
        memset(got, 0, sizeof got);
        CHECK_OK(run(g, NNP_PASS_DEFAULT, threads, x, got, &qadd, &u8pool, &glue));
        CHECK_MSG(qadd == 2 && u8pool == 1 && glue == 0, "fused: qadd %d u8pool %d float glue %d", qadd, u8pool,
                  glue);
        int bad = -1;
        for (int i = 0; i < NOUT && bad < 0; i++)
          if (memcmp(&got[i], &want[i], sizeof(float))) bad = i;
        CHECK_MSG(bad < 0, "trial %d %s threads %d: O[%d] = %g, unfused %g", trial, nnp_cpu_kernel_isa(), threads, bad,
                  bad < 0 ? 0.0 : got[bad], bad < 0 ? 0.0 : want[bad]);
      }
  }
  nnp_graph_destroy(g);
  TEST_MAIN_END();
}
