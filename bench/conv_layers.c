/* bench_conv_layers: best-of-N time of the fast conv2d kernel (kernels/conv.h) on layer
 * shapes taken from mobilenet_v2, efficientnet_lite0 and resnet18, with the fused
 * bias + ReLU6 epilogue the models use. Short runs, best of many: on a shared machine
 * the minimum is the least disturbed run, so two builds run back to back compare.
 * Prints ms, GFLOP/s and the share of the measured AVX2 FMA peak (bench/fma_peak.h) per
 * layer, the best CPU time (all threads: the work, which a loaded machine disturbs less
 * than the wall time), and resnet18's conv time: every conv layer of the model (stem, 3x3, strided,
 * 1x1 downsample) times its count. Asserts nothing.
 * Usage: bench_conv_layers [threads] [batch] [filter: only layers whose name has it]
 *                          [auto|direct|im2col: the dense algorithm where the direct kernel applies;
 *                           winograd: NCHW Winograd wherever it applies (AVX2 CPUs);
 *                           blocked: the NCHW16c kernel (kernels/blocked_conv.h) the models run by default]
 * BENCH_CONV_ACT=silu in the environment fuses SiLU (EfficientNet's activation, an exp per
 * output) in place of ReLU6 in the NCHW kernels' epilogue. BENCH_CONV_RESIDUAL=1 adds a
 * residual of the output's shape, in its own buffer, before the activation (ResNet's
 * bottleneck-closing 1x1 convs: the residual's rows are read once, from L2 or L3). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/timing_loop.h"
#include "fma_peak.h"
#include "kernels/blocked_conv.h"
#include "kernels/conv.h"
#include "nnperf/alloc.h"
#include "util/threadpool.h"

/* CPU time of the whole process (every thread): unlike wall time, it does not count
 * the time a thread waits descheduled, so on a loaded machine it is the steadier
 * measure of a kernel's work (not of its latency). */
static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* BENCH_CONV_COLD=1: every run starts with X, Y and the residual out of the caches, as
 * in a model whose earlier steps went through more data than L3 holds: a buffer of
 * twice the L3 size is written before each run (the run's time alone is measured). */
enum { EVICT_BYTES = 64 << 20 };
static void evict_caches(unsigned char *buf, size_t n) {
  for (size_t i = 0; i < n; i += 64) buf[i] = (unsigned char)(buf[i] + 1);
}

typedef struct layer {
  const char *what;
  int64_t c, h, m, k, s, group;
  int rn18;   /* times the layer occurs in resnet18 (0: not a resnet18 layer) */
  int64_t kw; /* a 1 x kw kernel (inception_v3's 1x7), k = 1; 0: k x k */
} layer;

static const layer layers[] = {
    {"mbv2 dw3x3 s1 32ch 112", 32, 112, 32, 3, 1, 32, 0, 0},
    {"mbv2 dw3x3 s2 96ch 112", 96, 112, 96, 3, 2, 96, 0, 0},
    {"mbv2 dw3x3 s1 144ch 56", 144, 56, 144, 3, 1, 144, 0, 0},
    {"mbv2 dw3x3 s1 384ch 14", 384, 14, 384, 3, 1, 384, 0, 0},
    {"mbv2 dw3x3 s1 960ch 7", 960, 7, 960, 3, 1, 960, 0, 0},
    {"effl0 dw5x5 s1 480ch 14", 480, 14, 480, 5, 1, 480, 0, 0},
    {"effb3 dw3x3 s2 144ch 112", 144, 112, 144, 3, 2, 144, 0, 0},
    {"effb3 dw5x5 s2 192ch 56", 192, 56, 192, 5, 2, 192, 0, 0},
    {"effb3 dw5x5 s1 288ch 28", 288, 28, 288, 5, 1, 288, 0, 0},
    {"effb3 dw3x3 s1 40ch 112", 40, 112, 40, 3, 1, 40, 0, 0},
    {"mbv2 1x1 16->96 112", 16, 112, 96, 1, 1, 1, 0, 0},
    {"mv3 1x1 16->64 112", 16, 112, 64, 1, 1, 1, 0, 0},
    {"mv3 1x1 16->16 112", 16, 112, 16, 1, 1, 1, 0, 0},
    {"effb3 1x1 24->144 112", 24, 112, 144, 1, 1, 1, 0, 0},
    {"effb3 1x1 40->24 112", 40, 112, 24, 1, 1, 1, 0, 0},
    {"effb3 1x1 32->192 56", 32, 56, 192, 1, 1, 1, 0, 0},
    {"mbv2 1x1 144->24 56", 144, 56, 24, 1, 1, 1, 0, 0},
    {"mbv2 1x1 384->64 14", 384, 14, 64, 1, 1, 1, 0, 0},
    {"mbv2 1x1 160->960 7", 160, 7, 960, 1, 1, 1, 0, 0},
    {"mbv2 1x1 320->1280 7", 320, 7, 1280, 1, 1, 1, 0, 0},
    {"effl0 1x1 240->40 28", 240, 28, 40, 1, 1, 1, 0, 0},
    {"regy16 1x1 336->336 14", 336, 14, 336, 1, 1, 1, 0, 0},
    {"incv3 1x7 192->192 17", 192, 17, 192, 1, 1, 1, 0, 7},
    {"incv3 1x7 160->160 17", 160, 17, 160, 1, 1, 1, 0, 7},
    {"incv3 5x5 48->64 35", 48, 35, 64, 5, 1, 1, 0, 0},
    {"regy16 1x1 888->888 7", 888, 7, 888, 1, 1, 1, 0, 0},
    {"effl0 1x1 672->112 14", 672, 14, 112, 1, 1, 1, 0, 0},
    {"effl0 1x1 112->672 14", 112, 14, 672, 1, 1, 1, 0, 0},
    {"effl0 1x1 1152->192 7", 1152, 7, 192, 1, 1, 1, 0, 0},
    {"effl0 1x1 192->1152 7", 192, 7, 1152, 1, 1, 1, 0, 0},
    {"effl0 1x1 1152->320 7", 1152, 7, 320, 1, 1, 1, 0, 0},
    {"regx400 g3x3 64ch/16 28", 64, 28, 64, 3, 1, 4, 0, 0},
    {"regx400 g3x3 160ch/16 14", 160, 14, 160, 3, 1, 10, 0, 0},
    {"regx400 g3x3 400ch/16 7", 400, 7, 400, 3, 1, 25, 0, 0},
    {"regy800 g3x3 s2 64ch/16 112", 64, 112, 64, 3, 2, 4, 0, 0},
    {"regy800 g3x3 s2 144ch/16 56", 144, 56, 144, 3, 2, 9, 0, 0},
    {"regy800 g3x3 s2 320ch/16 28", 320, 28, 320, 3, 2, 20, 0, 0},
    {"regy800 g3x3 s2 784ch/16 14", 784, 14, 784, 3, 2, 49, 0, 0},
    {"regy16 g3x3 336ch/24 14", 336, 14, 336, 3, 1, 14, 0, 0},
    {"regy16 g3x3 s2 888ch/24 14", 888, 14, 888, 3, 2, 37, 0, 0},
    {"regy16 g3x3 120ch/24 28", 120, 28, 120, 3, 1, 5, 0, 0},
    {"rnx50 g3x3 s2 256ch/8 56", 256, 56, 256, 3, 2, 32, 0, 0},
    {"rnx50 g3x3 128ch/4 56", 128, 56, 128, 3, 1, 32, 0, 0},
    {"rnx50 g3x3 256ch/8 28", 256, 28, 256, 3, 1, 32, 0, 0},
    {"rnx50 g3x3 512ch/16 14", 512, 14, 512, 3, 1, 32, 0, 0},
    {"rnx50 g3x3 1024ch/32 7", 1024, 7, 1024, 3, 1, 32, 0, 0},
    {"mbv2 conv3x3 s2 3->32 224", 3, 224, 32, 3, 2, 1, 0, 0},
    {"mv3 conv3x3 s2 3->16 224", 3, 224, 16, 3, 2, 1, 0, 0},
    {"effb3 conv3x3 s2 3->40 224", 3, 224, 40, 3, 2, 1, 0, 0},
    {"rn18 stem 7x7 s2 3->64 224", 3, 224, 64, 7, 2, 1, 1, 0},
    {"rn18 conv3x3 64ch 56", 64, 56, 64, 3, 1, 1, 4, 0},
    {"rn18 3x3 s2 64->128 56", 64, 56, 128, 3, 2, 1, 1, 0},
    {"rn18 1x1 s2 64->128 56", 64, 56, 128, 1, 2, 1, 1, 0},
    {"rn18 conv3x3 128ch 28", 128, 28, 128, 3, 1, 1, 3, 0},
    {"rn18 3x3 s2 128->256 28", 128, 28, 256, 3, 2, 1, 1, 0},
    {"rn18 1x1 s2 128->256 28", 128, 28, 256, 1, 2, 1, 1, 0},
    {"rn18 conv3x3 256ch 14", 256, 14, 256, 3, 1, 1, 3, 0},
    {"rn18 3x3 s2 256->512 14", 256, 14, 512, 3, 2, 1, 1, 0},
    {"rn18 1x1 s2 256->512 14", 256, 14, 512, 1, 2, 1, 1, 0},
    {"rn50 1x1 s2 256->512 56", 256, 56, 512, 1, 2, 1, 0, 0},
    {"regx4 1x1 s2 32->32 112", 32, 112, 32, 1, 2, 1, 0, 0},
    {"rn18 conv3x3 512ch 7", 512, 7, 512, 3, 1, 1, 3, 0},
    {"sqz10 3x3 16->64 54", 16, 54, 64, 3, 1, 1, 0, 0},
    {"sqz10 3x3 48->192 27", 48, 27, 192, 3, 1, 1, 0, 0},
    {"sqz10 3x3 64->256 13", 64, 13, 256, 3, 1, 1, 0, 0},
    {"dn121 3x3 128->32 56", 128, 56, 32, 3, 1, 1, 0, 0},
    {"dn121 3x3 128->32 14", 128, 14, 32, 3, 1, 1, 0, 0},
    {"dn121 3x3 128->32 7", 128, 7, 32, 3, 1, 1, 0, 0},
    {"incv3 3x3 64->96 35", 64, 35, 96, 3, 1, 1, 0, 0},
    {"incv3 3x3 32->32 147", 32, 147, 32, 3, 1, 1, 0, 0},
    {"incv3 3x3 32->64 147", 32, 147, 64, 3, 1, 1, 0, 0},
    {"incv3 3x3 384->384 8", 384, 8, 384, 3, 1, 1, 0, 0},
    {"incv3 3x3 s2 288->384 35", 288, 35, 384, 3, 2, 1, 0, 0},
    {"incv3 1x1 768->192 17", 768, 17, 192, 1, 1, 1, 0, 0},
    {"regx400 1x1 400->400 7", 400, 7, 400, 1, 1, 1, 0, 0},
    {"regx400 1x1 32->32 112", 32, 112, 32, 1, 1, 1, 0, 0},
    {"sqz10 1x1 96->16 54", 96, 54, 16, 1, 1, 1, 0, 0},
    {"sqz10 1x1 128->32 54", 128, 54, 32, 1, 1, 1, 0, 0},
    {"sqz10 1x1 512->64 13", 512, 13, 64, 1, 1, 1, 0, 0},
    {"incv3 1x1 288->64 35", 288, 35, 64, 1, 1, 1, 0, 0},
    {"incv3 1x1 2048->448 8", 2048, 8, 448, 1, 1, 1, 0, 0},
    {"mv3 se 1x1 960->240 1", 960, 1, 240, 1, 1, 1, 0, 0},
    {"mv3 se 1x1 240->960 1", 240, 1, 960, 1, 1, 1, 0, 0},
    {"effb0 se 1x1 1152->48 1", 1152, 1, 48, 1, 1, 1, 0, 0},
    {"effb0 se 1x1 48->1152 1", 48, 1, 1152, 1, 1, 1, 0, 0},
    {"rn50 1x1 64->256 56", 64, 56, 256, 1, 1, 1, 0, 0},
    {"rn50 1x1 256->64 56", 256, 56, 64, 1, 1, 1, 0, 0},
    {"rn50 1x1 128->512 28", 128, 28, 512, 1, 1, 1, 0, 0},
    {"rn50 1x1 512->128 28", 512, 28, 128, 1, 1, 1, 0, 0},
    {"rn50 1x1 256->1024 14", 256, 14, 1024, 1, 1, 1, 0, 0},
    {"rn50 1x1 1024->256 14", 1024, 14, 256, 1, 1, 1, 0, 0},
    {"rn50 1x1 512->2048 7", 512, 7, 2048, 1, 1, 1, 0, 0},
    {"rn50 1x1 2048->512 7", 2048, 7, 512, 1, 1, 1, 0, 0},
};

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 2;
  int64_t batch = argc > 2 ? atoll(argv[2]) : 1;
  const char *how = argc > 4 ? argv[4] : "auto";
  const bool blocked = !strcmp(how, "blocked");
  nnp_conv_pick pick = !strcmp(how, "direct")     ? NNP_CONV_PICK_DIRECT
                       : !strcmp(how, "im2col")   ? NNP_CONV_PICK_GEMM
                       : !strcmp(how, "winograd") ? NNP_CONV_PICK_WINOGRAD
                                                  : NNP_CONV_PICK_AUTO;
  if (threads < 1 || batch < 1 || (pick == NNP_CONV_PICK_AUTO && strcmp(how, "auto") && !blocked)) {
    fprintf(stderr, "usage: bench_conv_layers [threads >= 1] [batch >= 1] [filter] [auto|direct|im2col|winograd|blocked]\n");
    return 2;
  }
  nnp_threadpool *tp = NULL;
  if (threads > 1 && nnp_threadpool_create(threads, &tp) != NNP_OK) return 1;
  const char *filter = argc > 3 ? argv[3] : "";
  const size_t evict_bytes = EVICT_BYTES;
  unsigned char *evict = getenv("BENCH_CONV_COLD") && !strcmp(getenv("BENCH_CONV_COLD"), "1") ? nnp_calloc(1, evict_bytes) : NULL;
  double peak = nnp_bench_fma_peak(tp, threads, false);
  printf("algorithm %s; threads %d batch %lld: best of 30 (at least 0.2 s) per layer; measured AVX2 FMA peak %.1f GFLOP/s\n",
         how, threads, (long long)batch, peak);
  printf("  %-28s %10s %9s %7s %10s %s\n", "layer", "ms", "GFLOP/s", "of peak", "cpu ms", "kernel");
  double total = 0, total_cpu = 0, rn18_s = 0, rn18_flops = 0;
  for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++) {
    const layer *l = &layers[i];
    if (!strstr(l->what, filter)) continue;
    const int64_t kw = l->kw ? l->kw : l->k, taps = l->k * kw;
    int64_t p = l->k / 2, o = (l->h + 2 * p - l->k) / l->s + 1; /* kw: "same" too, one stride */
    nnp_conv2d_desc d = {.n = batch, .c = l->c, .h = l->h, .w = l->h, .m = l->m, .oh = o, .ow = o, .kh = l->k,
                         .kw = kw, .sh = l->s, .sw = l->s, .ph = p, .pw = kw / 2, .dh = 1, .dw = 1, .group = l->group};
    /* blocked: x and y are N x C/16 x H x W x 16 (the padded lanes are part of the tensor) */
    int64_t cx = blocked ? nnp_blocks(l->c) * NNP_BLOCK : l->c, cy = blocked ? nnp_blocks(l->m) * NNP_BLOCK : l->m;
    int64_t nx = batch * cx * l->h * l->h, ny = batch * cy * o * o, nw = l->m * (l->c / l->group) * taps;
    float *x = nnp_aligned_alloc((size_t)nx * 4), *y = nnp_aligned_alloc((size_t)ny * 4);
    float *w = nnp_malloc((size_t)nw * 4), *bias = nnp_malloc((size_t)l->m * 4);
    const bool with_res = getenv("BENCH_CONV_RESIDUAL") && !strcmp(getenv("BENCH_CONV_RESIDUAL"), "1") && !blocked;
    float *res = with_res ? nnp_aligned_alloc((size_t)ny * 4) : NULL;
    for (int64_t j = 0; res && j < ny; j++) res[j] = (float)(j % 13) * 0.01f;
    for (int64_t j = 0; j < nx; j++) x[j] = (float)(j % 17) * 0.01f - 0.08f;
    for (int64_t j = 0; j < nw; j++) w[j] = (float)(j % 11) * 0.02f - 0.1f;
    for (int64_t j = 0; j < l->m; j++) bias[j] = 0.01f * (float)j;
    nnp_conv2d_kernel *k = NULL;
    nnp_bconv_kernel *bk = NULL;
    if (!x || !y || !w || !bias || (with_res && !res) ||
        (blocked ? nnp_bconv_prepare(&d, w, bias, NNP_ACT_CLIP, 0.0f, 6.0f, false, &bk)
                 : nnp_conv2d_prepare_pick(&d, w, false, pick, &k)) != NNP_OK) {
      fprintf(stderr, "bench_conv_layers: preparing '%s' failed\n", l->what);
      return 1;
    }
    void *scratch = nnp_aligned_alloc((k ? nnp_conv2d_scratch_bytes(k) : nnp_bconv_scratch_bytes(bk)) + 64);
    nnp_epilogue ep = {.bias = bias, .bias_kind = NNP_BIAS_ROW, .act = NNP_ACT_CLIP, .act_min = 0.0f, .act_max = 6.0f};
    if (getenv("BENCH_CONV_ACT") && !strcmp(getenv("BENCH_CONV_ACT"), "silu")) ep.act = NNP_ACT_SILU;
    if (res) {
      ep.residual = res;
      ep.ld_res = o * o;
    }
    double best = 1e30, best_cpu = 1e30, t_start = nnp_now();
    for (int rep = 0; rep < 30 || nnp_now() - t_start < 0.2; rep++) {
      if (evict) evict_caches(evict, evict_bytes);
      double t0 = nnp_now(), c0 = cpu_s();
      if (bk) nnp_bconv_run(bk, x, y, NULL, scratch, tp);
      else nnp_conv2d_run(k, x, y, &ep, scratch, tp);
      double dt = nnp_now() - t0, dc = cpu_s() - c0;
      if (dt < best) best = dt;
      if (dc < best_cpu) best_cpu = dc;
    }
    double flops = 2.0 * (double)(batch * l->m * o * o) * (double)(l->c / l->group) * (double)taps;
    printf("  %-28s %10.4f %9.1f %6.0f%% %10.4f %s\n", l->what, best * 1e3, flops / best * 1e-9,
           peak > 0 ? 100.0 * flops / best * 1e-9 / peak : 0.0, best_cpu * 1e3,
           bk ? "blocked" : nnp_conv2d_kernel_name(k));
    total += best;
    total_cpu += best_cpu;
    rn18_s += l->rn18 * best;
    rn18_flops += l->rn18 * flops;
    nnp_aligned_free(scratch);
    nnp_conv2d_destroy(k);
    nnp_bconv_destroy(bk);
    nnp_aligned_free(x);
    nnp_aligned_free(y);
    nnp_aligned_free(res);
    nnp_free(w);
    nnp_free(bias);
  }
  printf("  %-28s %10.4f %9s %7s %10.4f\n", "sum", total * 1e3, "", "", total_cpu * 1e3);
  if (rn18_s > 0)
    printf("  %-28s %10.4f %9.1f %6.0f%% (every conv layer x its count, batch %lld)\n", "resnet18 convs", rn18_s * 1e3,
           rn18_flops / rn18_s * 1e-9, peak > 0 ? 100.0 * rn18_flops / rn18_s * 1e-9 / peak : 0.0, (long long)batch);
  nnp_threadpool_destroy(tp);
  nnp_free(evict);
  return 0;
}
