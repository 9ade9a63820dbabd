/* The native engine's bf16 precision (engine/bf16.h): the rounding is nnp_f32_to_bf16's,
 * bit for bit, specials included; a bf16 plan of one Conv equals the fp32 plan run on
 * operands rounded beforehand, bit for bit (so weights and activations are both rounded,
 * and nothing else changes); the caller's weights stay untouched; on a whole network
 * (zoo tiny) bf16 differs from fp32 by bf16's rounding only (cosine >= 0.999). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "engine/bf16.h"
#include "ir_builder.h"
#include "nnperf/engine.h"
#include "nnperf/zoo.h"
#include "ops/op.h"
#include "test.h"

static float widen(float f) { return nnp_bf16_to_f32(nnp_f32_to_bf16(f)); }

static void test_rounding(void) {
  static const uint32_t special[] = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7f800001u,
                                     0xffbfffffu, 0x7f7fffffu, 0x00000001u, 0x3f808000u, 0x3f818000u, 0x3f807fffu,
                                     0x3f808001u, 0x7f7f8000u, 0x807fffffu};
  enum { N = 1 << 16 };
  static float x[N], want[N];
  uint64_t s = 1;
  for (int i = 0; i < N; i++) {
    uint32_t u = i < (int)(sizeof special / sizeof *special) ? special[i] : (uint32_t)((s = s * 6364136223846793005ull + 1) >> 32);
    memcpy(&x[i], &u, 4);
    want[i] = widen(x[i]);
  }
  nnp_bf16_round(x, N);
  int bad = 0;
  for (int i = 0; i < N; i++) bad += memcmp(&x[i], &want[i], 4) != 0 && !(isnan(x[i]) && isnan(want[i]));
  CHECK_MSG(bad == 0, "%d of %d values round differently from nnp_f32_to_bf16", bad, N);
  float tie = 1.00390625f, up = 1.01171875f; /* 1 + 2^-8 rounds to 1 (even), 1 + 3*2^-8 up to 1 + 2^-6 */
  nnp_bf16_round(&tie, 1);
  nnp_bf16_round(&up, 1);
  CHECK(tie == 1.0f && up == 1.015625f);
}

/* X(1x8x10x10) -> Conv 16x8x3x3 (pads 1, bias) -> Y; rounded: W and X rounded to bf16. */
static nnp_graph *conv_graph(bool rounded) {
  nnp_graph *g;
  nnp_graph_create(&g);
  g->opset = 13;
  int x, y;
  nnp_graph_value(g, "X", &x);
  g->values[x].dtype = NNP_F32;
  g->values[x].rank = 4;
  int64_t xd[4] = {1, 8, 10, 10}, wd[4] = {16, 8, 3, 3}, bd[1] = {16};
  for (int i = 0; i < 4; i++) g->values[x].dims[i].value = xd[i];
  nnp_graph_add_input(g, x);
  rs = 7;
  int w = add_f32_init(g, "W", 4, wd, 0), b = add_f32_init(g, "B", 1, bd, 0);
  if (rounded) nnp_bf16_round(g->values[w].init->data, 16 * 8 * 9);
  nnp_graph_value(g, "Y", &y);
  int in[3] = {x, w, b}, ni;
  nnp_graph_add_node(g, "conv", "Conv", "", 3, in, 1, &y, &ni);
  add_pads(&g->nodes[ni]);
  nnp_graph_add_output(g, y);
  g->nodes[ni].op = nnp_op_lookup("", "Conv");
  nnp_graph_toposort(g);
  return g;
}

static void run(nnp_graph *g, bool bf16, bool fast, int threads, const float *x, bool round_x, float *out, size_t n) {
  nnp_plan_options o;
  nnp_plan_options_default(&o);
  o.bf16 = bf16, o.fast_kernels = fast, o.threads = threads;
  nnp_plan *p = NULL;
  CHECK_OK(nnp_plan_compile(g, &o, &p));
  if (!p) return;
  nnp_tensor *in = nnp_plan_input(p, 0);
  memcpy(in->data, x, sizeof(float) * (size_t)nnp_tensor_numel(in));
  if (round_x) nnp_bf16_round(in->data, (size_t)nnp_tensor_numel(in));
  CHECK_OK(nnp_plan_run(p));
  memcpy(out, nnp_plan_output(p, 0)->data, sizeof(float) * n);
  nnp_plan_destroy(p);
}

static void test_conv_exact(void) {
  enum { NX = 8 * 100, NY = 16 * 100 };
  float x[NX], a[NY], b[NY];
  rs = 99;
  for (int i = 0; i < NX; i++) x[i] = frand() * 3;
  nnp_graph *g = conv_graph(false), *gr = conv_graph(true);
  int wv = nnp_graph_find_value(g, "W");
  float w_before[16 * 8 * 9];
  memcpy(w_before, g->values[wv].init->data, sizeof w_before);
  for (int fast = 0; fast <= 1; fast++)
    for (int threads = 1; threads <= 2; threads++) {
      run(g, true, fast, threads, x, false, a, NY);
      run(gr, false, fast, threads, x, true, b, NY);
      CHECK_MSG(!memcmp(a, b, sizeof a), "fast %d threads %d: bf16 plan != fp32 plan on rounded operands", fast, threads);
    }
  CHECK_MSG(!memcmp(w_before, g->values[wv].init->data, sizeof w_before), "the caller's weights were rounded");
  run(g, false, true, 1, x, false, b, NY);
  CHECK_MSG(memcmp(a, b, sizeof a) != 0, "bf16 and fp32 plans agree to the bit: nothing was rounded");
  nnp_graph_destroy(g);
  nnp_graph_destroy(gr);
}

static void test_network(void) {
  nnp_graph *g = NULL;
  CHECK_OK(nnp_zoo_build("tiny", NULL, &g));
  if (!g) return;
  nnp_plan_options o;
  nnp_plan_options_default(&o);
  nnp_plan *p = NULL;
  CHECK_OK(nnp_plan_compile(g, &o, &p));
  if (!p) return;
  int64_t nx = nnp_tensor_numel(nnp_plan_input(p, 0)), ny = nnp_tensor_numel(nnp_plan_output(p, 0));
  float *x = nnp_malloc(sizeof(float) * (size_t)nx), *a = nnp_malloc(sizeof(float) * (size_t)ny),
        *b = nnp_malloc(sizeof(float) * (size_t)ny);
  rs = 5;
  for (int64_t i = 0; i < nx; i++) x[i] = frand();
  nnp_plan_destroy(p);
  run(g, false, true, 2, x, false, a, (size_t)ny);
  run(g, true, true, 2, x, false, b, (size_t)ny);
  double dot = 0, na = 0, nb = 0;
  int same = 0;
  for (int64_t i = 0; i < ny; i++) dot += (double)a[i] * b[i], na += (double)a[i] * a[i], nb += (double)b[i] * b[i];
  for (int64_t i = 0; i < ny; i++) same += a[i] == b[i];
  double cosine = dot / sqrt(na * nb);
  printf("zoo tiny: bf16 vs fp32 cosine %.6f, %d of %lld outputs identical\n", cosine, same, (long long)ny);
  CHECK_MSG(cosine >= 0.999 && cosine < 1.0, "cosine %.7f", cosine);
  CHECK(same < ny);
  nnp_free(x), nnp_free(a), nnp_free(b);
  nnp_graph_destroy(g);
}

int main(void) {
  test_rounding();
  test_conv_exact();
  test_network();
  TEST_MAIN_END();
}
