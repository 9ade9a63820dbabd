/* Fast conv2d (depthwise, 1x1 GEMM, im2col GEMM, direct; AVX-512, AVX2 and generic)
 * against a naive direct convolution, over random shapes: odd sizes, strides 1..3, pads,
 * dilations, groups, every epilogue, threads 1..4, and in-place (Y aliasing X). Then the
 * AVX-512 depthwise kernel against the generic one, plane range by plane range. */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "conv_naive.h"
#include "kernel_test_util.h"
#include "kernels/conv.h"
#include "kernels/cpu.h"
#include "kernels/dconv.h"
#include "kernels/dispatch.h"
#include "kernels/dwconv.h"
#include "nnperf/alloc.h"
#include "test.h"

static void run_case(const nnp_conv2d_desc *d, int trial, nnp_threadpool *const *pools, bool res_in_y) {
  int kind = d->group == d->c && d->group == d->m ? 0 : 1;
  int64_t nx = d->n * d->c * d->h * d->w, ny = d->n * d->m * d->oh * d->ow, nw = d->m * (d->c / d->group) * d->kh * d->kw;
  float *x = nnp_malloc((size_t)nx * 4), *w = nnp_malloc((size_t)nw * 4), *bias = nnp_malloc((size_t)d->m * 4);
  float *res = nnp_malloc((size_t)ny * 4), *want = nnp_malloc((size_t)ny * 4);
  float *got = nnp_malloc((size_t)(ny > nx ? ny : nx) * 4);
  kt_fill(x, nx);
  kt_fill(w, nw);
  kt_fill(bias, d->m);
  kt_fill(res, ny);
  nnp_epilogue ep = {.act = trial % 6, .act_min = -0.2f, .act_max = 0.9f};
  if (trial % 3 != 2) {
    ep.bias = bias;
    ep.bias_kind = NNP_BIAS_ROW;
  }
  if (trial % 2 || res_in_y) ep.residual = res;
  kt_conv_naive(d, x, w, &ep, want);
  /* in-place only where Y has X's size */
  bool inplace = nx == ny && trial % 4 == 3 && !res_in_y;
  for (int generic = 0; generic < 2; generic++) {
    if (!generic && !nnp_cpu_has_avx2_fma()) continue;
    nnp_conv2d_kernel *k = NULL;
    CHECK_OK(nnp_conv2d_prepare(d, w, generic, &k));
    if (!k) continue;
    if (kind == 0) CHECK(nnp_conv2d_algo(k) == NNP_CONV_DEPTHWISE);
    void *scratch = nnp_aligned_alloc(nnp_conv2d_scratch_bytes(k) + 64);
    for (int t = 0; t < 4; t++) {
      float *yp = got;
      memset(got, 0xff, (size_t)ny * 4);
      if (inplace) memcpy(got, x, (size_t)nx * 4);
      if (res_in_y) { /* the residual is the output itself (an Add fused in place) */
        memcpy(got, res, (size_t)ny * 4);
        ep.residual = got;
      }
      nnp_conv2d_run(k, inplace ? got : x, yp, &ep, scratch, pools[t]);
      double err = kt_max_err(got, want, ny);
      CHECK_MSG(err < 1e-4,
                "trial %d n%lld c%lld %lldx%lld -> m%lld %lldx%lld k%lldx%lld s%lld,%lld p%lld,%lld d%lld g%lld "
                "act %d res %d (in y %d) inplace %d %s threads %d algo %d: err %g",
                trial, (long long)d->n, (long long)d->c, (long long)d->h, (long long)d->w, (long long)d->m,
                (long long)d->oh, (long long)d->ow, (long long)d->kh, (long long)d->kw, (long long)d->sh, (long long)d->sw,
                (long long)d->ph, (long long)d->pw, (long long)d->dh, (long long)d->group, ep.act, ep.residual != NULL,
                res_in_y, inplace, generic ? "generic" : "fast", t + 1, (int)nnp_conv2d_algo(k), err);
    }
    nnp_aligned_free(scratch);
    nnp_conv2d_destroy(k);
  }
  nnp_free(x);
  nnp_free(w);
  nnp_free(bias);
  nnp_free(res);
  nnp_free(want);
  nnp_free(got);
}

static void one_case(int trial, nnp_threadpool *const *pools) {
  nnp_conv2d_desc d = {0};
  int kind = trial % 3; /* 0 depthwise, 1 pointwise, 2 general / grouped */
  d.n = kt_int(1, 3);
  d.kh = kind == 1 ? 1 : (trial % 2 ? 3 : 5);
  d.kw = kind == 1 ? 1 : (trial % 4 == 0 ? d.kh : kt_int(1, 4));
  d.sh = kind == 1 ? 1 : kt_int(1, 3);
  d.sw = kind == 1 ? 1 : kt_int(1, 2);
  if (kind == 0 && trial % 4 == 0) d.sh = d.sw; /* square 3x3 / 5x5, stride 1 or 2: the compiled-for-size paths */
  /* dilation: general convolutions, and depthwise ones (taps that straddle the padding) */
  d.dh = (kind == 2 && trial % 5 == 0) || (kind == 0 && trial % 7 == 0) ? 2 : 1;
  d.dw = (kind == 2 && trial % 5 == 0) || (kind == 0 && trial % 7 == 0) ? 2 : 1;
  d.ph = kind == 1 ? 0 : kt_int(0, d.kh / 2 + 1);
  d.pw = kind == 1 ? 0 : kt_int(0, d.kw / 2);
  d.h = kt_int((d.kh - 1) * d.dh + 1, 19);
  /* depthwise: also rows wide enough for vectors with no tap in the padding */
  d.w = kt_int((d.kw - 1) * d.dw + 1, kind == 0 && trial % 2 ? 61 : 23);
  if (kind == 0 && trial % 6 == 3) { /* planes over 16 KiB (wide rows, many whole vectors) */
    d.h = kt_int(34, 48);
    d.w = kt_int(100, 130);
  }
  if (kind == 1 && trial % 6 == 1) { /* P a multiple of 16: the 1x1 conv reads X in place as B */
    d.h = 2 * kt_int(1, 4);
    d.w = 8 * kt_int(1, 3);
  }
  if (kind == 0) {
    d.c = d.m = d.group = kt_int(1, 11);
  } else {
    d.group = kind == 2 && trial % 4 == 1 ? kt_int(2, 3) : 1;
    d.c = d.group * kt_int(1, 9);
    d.m = d.group * kt_int(1, 14);
  }
  d.oh = (d.h + 2 * d.ph - ((d.kh - 1) * d.dh + 1)) / d.sh + 1;
  d.ow = (d.w + 2 * d.pw - ((d.kw - 1) * d.dw + 1)) / d.sw + 1;
  if (d.oh < 1 || d.ow < 1) return;
  run_case(&d, trial, pools, false);
}

/* The direct kernel (kernels/dconv.h) on one stride-1 "same" shape: every ISA this CPU
 * runs (generic, AVX2, AVX-512; under NNP_CPU_FEATURES=avx2 the AVX-512 one is skipped)
 * on 1 and 3 threads, then through nnp_conv2d_prepare_pick (in place where C == M).
 * Epilogue variant ev: 0 none (NULL), 1 bias, 2 bias + relu, 3 clip, 4 bias + hardswish,
 * 5 bias + sigmoid, 6 bias + residual + relu, 7 residual as the output itself. */
static void direct_case(const nnp_conv2d_desc *d, int ev, nnp_threadpool *const *pools) {
  int64_t nx = d->n * d->c * d->h * d->w, ny = d->n * d->m * d->oh * d->ow, nw = d->m * (d->c / d->group) * d->kh * d->kw;
  float *x = nnp_malloc((size_t)nx * 4), *w = nnp_malloc((size_t)nw * 4), *bias = nnp_malloc((size_t)d->m * 4);
  float *res = nnp_malloc((size_t)ny * 4), *want = nnp_malloc((size_t)ny * 4);
  float *got = nnp_malloc((size_t)(ny > nx ? ny : nx) * 4);
  kt_fill(x, nx);
  kt_fill(w, nw);
  kt_fill(bias, d->m);
  kt_fill(res, ny);
  static const int acts[8] = {NNP_ACT_NONE, NNP_ACT_NONE, NNP_ACT_RELU, NNP_ACT_CLIP,
                              NNP_ACT_HARDSWISH, NNP_ACT_SIGMOID, NNP_ACT_SILU, NNP_ACT_NONE};
  nnp_epilogue ep = {.act = acts[ev], .act_min = -0.2f, .act_max = 0.9f};
  if (ev != 0 && ev != 3 && ev != 7) {
    ep.bias = bias;
    ep.bias_kind = NNP_BIAS_ROW;
  }
  if (ev >= 6) ep.residual = res;
  kt_conv_naive(d, x, w, &ep, want);
  const nnp_epilogue *epp = ev == 0 ? NULL : &ep;
  static const char *isa_name[3] = {"generic", "avx2", "avx512"};
  bool have[3] = {true, nnp_cpu_has_avx2_fma(), nnp_cpu_has_avx512f()};
  for (int isa = 0; isa < 3; isa++) {
    if (!have[isa] || (isa == NNP_DCONV_AVX512 && (d->group > 1 || d->sh > 1))) continue; /* group 1, stride 1 */
    nnp_dconv *k = NULL;
    CHECK_OK(nnp_dconv_prepare(d, w, (nnp_dconv_isa)isa, &k));
    if (!k) continue;
    float *scratch = nnp_malloc((nnp_dconv_scratch_floats(k) + 1) * 4);
    for (int t = 0; t < 3; t += 2) { /* 1 and 3 threads */
      memset(got, 0xff, (size_t)ny * 4);
      if (ev == 7) { /* the residual is the output itself (an Add fused in place) */
        memcpy(got, res, (size_t)ny * 4);
        ep.residual = got;
      }
      nnp_dconv_run(k, x, got, epp, scratch, pools[t]);
      if (ev == 7) ep.residual = res;
      double err = kt_max_err(got, want, ny);
      CHECK_MSG(err < 1e-4, "direct %s n%lld c%lld %lldx%lld -> m%lld k%lldx%lld p%lld,%lld epilogue %d threads %d: err %g",
                isa_name[isa], (long long)d->n, (long long)d->c, (long long)d->h, (long long)d->w, (long long)d->m,
                (long long)d->kh, (long long)d->kw, (long long)d->ph, (long long)d->pw, ev, t + 1, err);
    }
    nnp_free(scratch);
    nnp_dconv_destroy(k);
  }
  /* through the conv2d entry: the algorithm taken, its scratch, in place */
  for (int generic = 0; generic < 2; generic++) {
    if (!generic && !nnp_cpu_has_avx2_fma()) continue;
    nnp_conv2d_kernel *k = NULL;
    CHECK_OK(nnp_conv2d_prepare_pick(d, w, generic, NNP_CONV_PICK_DIRECT, &k));
    if (!k) continue;
    nnp_conv_algo want_algo = d->c == d->group && d->m == d->group ? NNP_CONV_DEPTHWISE /* group == C == M */
                              : d->kh * d->kw == 1 ? NNP_CONV_GEMM_1X1
                                                   : NNP_CONV_DIRECT;
    if ((d->group > 1 || d->sh > 1) && !generic && nnp_cpu_has_avx512f()) want_algo = NNP_CONV_IM2COL; /* AVX2 tile */
    CHECK(nnp_conv2d_algo(k) == want_algo);
    void *scratch = nnp_aligned_alloc(nnp_conv2d_scratch_bytes(k) + 64);
    bool inplace = nx == ny && ev != 7;
    memset(got, 0xff, (size_t)ny * 4);
    if (inplace) memcpy(got, x, (size_t)nx * 4);
    nnp_conv2d_run(k, inplace ? got : x, got, epp, scratch, pools[1]);
    double err = kt_max_err(got, want, ny);
    CHECK_MSG(err < 1e-4, "conv2d direct %s n%lld c%lld %lldx%lld -> m%lld k%lld epilogue %d inplace %d: err %g",
              generic ? "generic" : "fast", (long long)d->n, (long long)d->c, (long long)d->h, (long long)d->w,
              (long long)d->m, (long long)d->kh, ev, inplace, err);
    nnp_aligned_free(scratch);
    nnp_conv2d_destroy(k);
  }
  nnp_free(x);
  nnp_free(w);
  nnp_free(bias);
  nnp_free(res);
  nnp_free(want);
  nnp_free(got);
}

/* Random direct shapes: channels ragged against the blocks (4 AVX2, 8 AVX-512) and
 * around them, planes 1x1 to 30x30 with ragged widths (vectors across row ends, a last
 * vector part past the plane), 3x3 pad 1 mostly, 1x1 pad 0 and 5x5 pad 2, batch 1 and 2,
 * every epilogue variant. */
static void direct_cases(nnp_threadpool *const *pools) {
  static const int64_t chans[] = {1, 3, 4, 5, 8, 9, 17, 33, 64};
  for (int trial = 0; trial < 160; trial++) {
    nnp_conv2d_desc d = {.dh = 1, .dw = 1, .sh = 1, .sw = 1, .group = 1};
    d.n = kt_int(1, 2);
    d.c = trial % 3 ? chans[kt_int(0, 8)] : kt_int(1, 40);
    d.m = trial % 4 ? chans[kt_int(0, 8)] : kt_int(1, 40);
    d.kh = d.kw = trial % 10 == 3 ? 1 : trial % 10 == 7 ? 5 : 3;
    d.ph = d.pw = d.kh / 2;
    d.h = trial % 8 == 0 ? 1 : kt_int(1, 30);
    d.w = trial % 8 == 0 ? 1 : trial % 5 == 1 ? kt_int(1, 4) : kt_int(1, 30);
    d.oh = d.h;
    d.ow = d.w;
    CHECK(nnp_conv2d_direct_applies(&d));
    direct_case(&d, trial % 8, pools);
  }
  /* grouped (RegNet, ResNeXt): output channels per group ragged against the blocks, a
   * block never spans two groups; depthwise is not the direct kernel's */
  for (int trial = 0; trial < 60; trial++) {
    nnp_conv2d_desc d = {.dh = 1, .dw = 1, .sh = 1, .sw = 1, .kh = 3, .kw = 3, .ph = 1, .pw = 1};
    d.n = kt_int(1, 2);
    d.group = kt_int(2, 5);
    d.c = d.group * kt_int(1, 17);
    d.m = d.group * (trial % 3 ? kt_int(1, 9) : 16);
    if (d.c == d.group && d.m == d.group) d.m *= 2;
    d.h = d.oh = kt_int(1, 16);
    d.w = d.ow = kt_int(1, 16);
    CHECK(nnp_conv2d_direct_applies(&d));
    direct_case(&d, trial % 8, pools);
  }
  /* stride 2 with pad = kernel / 2 (RegNet's first grouped block per stage, grouped or
   * not here): the vector kernels read phase planes; odd and even planes, in place */
  for (int trial = 0; trial < 60; trial++) {
    nnp_conv2d_desc d = {.dh = 1, .dw = 1, .sh = 2, .sw = 2};
    d.kh = d.kw = trial % 5 == 4 ? 5 : 3;
    d.ph = d.pw = d.kh / 2;
    d.n = kt_int(1, 2);
    d.group = trial % 2 ? kt_int(2, 4) : 1;
    d.c = d.group * kt_int(1, 17);
    d.m = d.group * (trial % 3 ? kt_int(1, 9) : 16);
    if (d.c == d.group && d.m == d.group) d.m *= 2;
    d.h = kt_int(1, 23);
    d.w = kt_int(1, 23);
    d.oh = (d.h - 1) / 2 + 1;
    d.ow = (d.w - 1) / 2 + 1;
    CHECK(nnp_conv2d_direct_applies(&d));
    direct_case(&d, trial % 8, pools);
  }
  nnp_conv2d_desc dw = {.n = 1, .c = 4, .m = 4, .group = 4, .h = 8, .w = 8, .oh = 8, .ow = 8, .kh = 3, .kw = 3,
                        .ph = 1, .pw = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1};
  CHECK(!nnp_conv2d_direct_applies(&dw));
  /* pad 0 (stride 1) and stride 3 are neither shape: the direct kernel does not apply */
  nnp_conv2d_desc no = {.n = 1, .c = 4, .h = 8, .w = 8, .m = 4, .oh = 6, .ow = 6, .kh = 3, .kw = 3, .sh = 1, .sw = 1,
                        .dh = 1, .dw = 1, .group = 1};
  CHECK(!nnp_conv2d_direct_applies(&no));
  no.ph = no.pw = 1;
  no.sh = no.sw = 3;
  no.oh = no.ow = 3;
  CHECK(!nnp_conv2d_direct_applies(&no));
  no.sh = no.sw = 2; /* stride 2, pad 1: the phase-plane shape */
  no.oh = no.ow = 4;
  CHECK(nnp_conv2d_direct_applies(&no));
}

/* The AVX-512 (and AVX2) depthwise kernel (called directly, as conv.c's thread pool does) against
 * the generic one on the shapes it specialises: 3x3 and 5x5, stride 1 and 2, padding
 * 0..2, rows a multiple of 16 wide and ragged (1..40), tiny planes (1x1, 2x3), 1..5 or
 * 8..40 channels, every
 * epilogue (the residual also as Y itself), a random plane range [b, e) of n x c
 * (planes outside it must stay untouched), and a few shapes it hands to the AVX2
 * kernel (dilation 2, 7x7, mixed strides). */
static const float dw_untouched = 1234.5f;

/* n floats placed against an inaccessible page: right after it (front) or ending where
 * it starts. ASan does not see AVX-512 masked loads (GCC 12 leaves them uninstrumented),
 * but an unmasked lane outside the buffer faults here; masked-off lanes do not fault. */
typedef struct guarded {
  void *base;
  size_t len;
  float *p;
} guarded;

static float *guarded_alloc(guarded *g, int64_t n, bool front) {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE), bytes = (size_t)n * sizeof(float);
  const size_t data = (bytes + page - 1) / page * page;
  g->len = data + 2 * page;
  g->base = mmap(NULL, g->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(g->base != MAP_FAILED);
  char *b = g->base;
  mprotect(b, page, PROT_NONE);
  mprotect(b + page + data, page, PROT_NONE);
  g->p = (float *)(front ? b + page : b + page + data - bytes);
  return g->p;
}

static void guarded_free(guarded *g) { munmap(g->base, g->len); }

typedef void (*dw_planes_fn)(const nnp_conv2d_desc *, const float *, const float *, float *, const nnp_epilogue *,
                             int64_t, int64_t);

static void dw_fast_case(int trial, dw_planes_fn fast, const char *isa) {
  nnp_conv2d_desc d = {.n = kt_int(1, 2), .dh = 1, .dw = 1};
  d.kh = d.kw = trial % 2 ? 5 : 3;
  d.sh = d.sw = trial / 2 % 2 ? 2 : 1;
  d.ph = d.pw = kt_int(0, 2);
  switch (trial % 5) {
    case 0: d.w = 16 * kt_int(1, 3); break; /* whole vectors */
    case 1: d.w = kt_int(1, 40); break;     /* ragged */
    case 2: d.w = kt_int(17, 40); break;
    case 3: /* tiny planes: 1x1 and 2x3, padded so there is an output */
      d.w = trial % 3 ? 1 : 3;
      d.ph = d.pw = d.kh / 2;
      break;
    default: d.w = kt_int(40, 70); break; /* several blocks, interior ones too */
  }
  d.h = trial % 5 == 3 ? (d.w == 1 ? 1 : 2) : kt_int(1, 13);
  if (trial % 23 == 7) d.dh = d.dw = 2; /* not covered: the AVX2 kernel runs */
  if (trial % 29 == 11) d.kh = d.kw = 7;
  if (trial % 31 == 13) d.sw = 3 - d.sh;
  /* enough input for one output in both directions */
  const int64_t ekh = (d.kh - 1) * d.dh + 1, ekw = (d.kw - 1) * d.dw + 1;
  if (d.h + 2 * d.ph < ekh) d.ph = (ekh - d.h + 1) / 2;
  if (d.w + 2 * d.pw < ekw) d.pw = (ekw - d.w + 1) / 2;
  /* a third of the trials with 8..40 channels: the AVX2 channel-vector path for planes
   * up to 14 wide (dwconv_c8_avx2.h) takes groups of eight, the rest of a range or of
   * C goes to the row path */
  d.c = d.m = d.group = trial % 3 == 2 ? kt_int(8, 40) : kt_int(1, 5);
  d.oh = (d.h + 2 * d.ph - ekh) / d.sh + 1;
  d.ow = (d.w + 2 * d.pw - ekw) / d.sw + 1;
  const int64_t planes = d.n * d.c, nx = planes * d.h * d.w, ny = planes * d.oh * d.ow, nw = d.c * d.kh * d.kw;
  const int64_t b = kt_int(0, planes - 1), e = kt_int(b + 1, planes);
  guarded gx, gres, ggot; /* X against a guard page at either end, the residual and Y at their ends */
  float *x = guarded_alloc(&gx, nx, trial % 3 == 0), *w = nnp_malloc((size_t)nw * 4);
  float *bias = nnp_malloc((size_t)d.c * 4), *res = guarded_alloc(&gres, ny, false);
  float *want = nnp_malloc((size_t)ny * 4), *got = guarded_alloc(&ggot, ny, false);
  kt_fill(x, nx);
  kt_fill(w, nw);
  kt_fill(bias, d.c);
  kt_fill(res, ny);
  /* none, bias, relu, clip, hardswish, sigmoid, residual, residual in Y + SiLU */
  const int variant = trial / 4 % 8;
  nnp_epilogue ep = {.bias = bias, .bias_kind = NNP_BIAS_ROW, .act_min = -0.2f, .act_max = 0.9f};
  static const int acts[] = {0, NNP_ACT_NONE, NNP_ACT_RELU, NNP_ACT_CLIP, NNP_ACT_HARDSWISH, NNP_ACT_SIGMOID,
                             NNP_ACT_NONE, NNP_ACT_SILU};
  ep.act = acts[variant];
  if (variant == 6) {
    ep.bias_kind = NNP_BIAS_NONE;
    ep.residual = res;
  }
  const bool res_in_y = variant == 7;
  for (int pass = 0; pass < 2; pass++) { /* 0: generic into want, 1: AVX-512 into got */
    float *out = pass ? got : want;
    for (int64_t i = 0; i < ny; i++) out[i] = dw_untouched;
    if (res_in_y) { /* the plane range's residual is the output itself */
      memcpy(out + b * d.oh * d.ow, res + b * d.oh * d.ow, (size_t)((e - b) * d.oh * d.ow) * 4);
      ep.residual = out;
    }
    const nnp_epilogue *ep_p = variant == 0 ? NULL : &ep;
    if (pass) fast(&d, x, w, out, ep_p, b, e);
    else nnp_dwconv_planes_generic(&d, x, w, out, ep_p, b, e);
  }
  double err = kt_max_err(got, want, ny);
  int64_t touched = 0; /* outside [b, e) */
  for (int64_t i = 0; i < ny; i++)
    if ((i < b * d.oh * d.ow || i >= e * d.oh * d.ow) && got[i] != dw_untouched) touched++;
  CHECK_MSG(err < 1e-4 && touched == 0,
            "%s dw trial %d n%lld c%lld %lldx%lld k%lldx%lld s%lld,%lld p%lld d%lld planes [%lld,%lld) variant %d: "
            "err %g, %lld outputs outside the range written",
            isa, trial, (long long)d.n, (long long)d.c, (long long)d.h, (long long)d.w, (long long)d.kh, (long long)d.kw,
            (long long)d.sh, (long long)d.sw, (long long)d.ph, (long long)d.dh, (long long)b, (long long)e, variant, err,
            (long long)touched);
  guarded_free(&gx);
  nnp_free(w);
  nnp_free(bias);
  guarded_free(&gres);
  nnp_free(want);
  guarded_free(&ggot);
}

static void dw_avx512_vs_generic(void) {
  if (!nnp_cpu_has_avx512f()) {
    printf("skip: AVX-512 depthwise vs generic: %s\n",
           nnp_cpu_get()->forced_avx2 ? "NNP_CPU_FEATURES=avx2 turns AVX-512 off" : "this CPU has no AVX-512F + VL");
    return;
  }
  const int trials = 1600;
  for (int trial = 0; trial < trials; trial++) dw_fast_case(trial, nnp_dwconv_planes_avx512, "avx512");
  printf("AVX-512 depthwise vs generic: %d shapes\n", trials);
}

/* The AVX2 kernel on the same shapes: its register-tiled 3x3 / 5x5 path (strides 1 and
 * 2) and the padded path it keeps for the rest (dilation, 7x7, mixed strides). */
static void dw_avx2_vs_generic(void) {
  if (!nnp_cpu_has_avx2_fma()) {
    printf("skip: AVX2 depthwise vs generic: no AVX2 + FMA\n");
    return;
  }
  const int trials = 1600;
  for (int trial = 0; trial < trials; trial++) dw_fast_case(trial, nnp_dwconv_planes_avx2, "avx2");
  printf("AVX2 depthwise vs generic: %d shapes\n", trials);
}

/* Whether the fast (not generic) conv2d kernel prepared for d has `name` in its name:
 * a test counts the shapes a kernel took, or it could pass without running it. */
static int takes_kernel(const nnp_conv2d_desc *d, const char *name) {
  static const float zeros[300 * 300]; /* weights for the name only: stems and one-pixel 1x1 convs fit */
  CHECK(d->m * (d->c / d->group) * d->kh * d->kw <= 300 * 300);
  nnp_conv2d_kernel *k = NULL;
  CHECK_OK(nnp_conv2d_prepare(d, zeros, false, &k));
  const int took = k && strstr(nnp_conv2d_kernel_name(k), name) != NULL;
  nnp_conv2d_destroy(k);
  return took;
}

/* Stems (kernels/iconv.h: 1..4 input channels, stride 1 or 2, kernels up to 7x7, any
 * padding, output rows of 16 and more, ragged ones too; M not a multiple of the row
 * panel; batch 1..2; every epilogue, the residual as Y too), through run_case. Counts
 * the shapes the implicit-GEMM kernel took: where the dispatch table runs the AVX2 GEMM
 * tile it must have taken some, or this test would not be testing it. */
static int stem_case(int trial, nnp_threadpool *const *pools) {
  nnp_conv2d_desc d = {.n = kt_int(1, 2), .c = kt_int(1, 4), .m = kt_int(1, 40), .dh = 1, .dw = 1, .group = 1};
  d.kh = kt_int(1, 7);
  d.kw = trial % 3 ? d.kh : kt_int(1, 7);
  d.sh = d.sw = trial % 4 ? 2 : 1;
  d.ph = kt_int(0, d.kh / 2);
  d.pw = kt_int(0, d.kw / 2);
  d.h = kt_int(d.kh, 40);
  d.w = kt_int(d.sw * 16 + d.kw, 80);
  d.oh = (d.h + 2 * d.ph - d.kh) / d.sh + 1;
  d.ow = (d.w + 2 * d.pw - d.kw) / d.sw + 1;
  const int implicit = takes_kernel(&d, "implicit");
  run_case(&d, trial, pools, trial % 7 == 3);
  return implicit;
}

/* 1x1 convs on a one-pixel plane (squeeze-and-excitation; conv.c's gemv path, the
 * product transposed): K and M ragged against the 16-column panels, K beyond one K
 * block (300), batch 1..3, every epilogue (bias off in a third: the bias kinds swap),
 * the residual as Y too, in place where C == M, threads 1..4, through run_case. Counts
 * the shapes the fast path ran as a GEMV (conv.c's gemv_pays: M padded to 16 columns at
 * most a quarter more than to 6 rows); the others run the six-row narrow panels. */
static int se_case(int trial, nnp_threadpool *const *pools) {
  static const int64_t ks[] = {1, 5, 16, 33, 300}, ms[] = {1, 4, 15, 16, 17, 72, 130};
  nnp_conv2d_desc d = {.n = kt_int(1, 3), .h = 1, .w = 1, .oh = 1, .ow = 1, .kh = 1, .kw = 1, .sh = 1, .sw = 1,
                       .dh = 1, .dw = 1, .group = 1};
  d.c = ks[trial % 5];
  d.m = trial % 9 == 4 ? d.c : ms[trial % 7];
  if (d.c == 1 && d.m == 1) d.m = 2; /* one channel in and out is a depthwise conv */
  const int gemv = takes_kernel(&d, "gemv1x1");
  run_case(&d, trial, pools, trial % 5 == 2);
  return gemv;
}

/* 1x1 convs at strides 2 and 3 with no padding (conv.c's strided path: X's strided
 * pixels copied, then the stride-1 1x1 conv image by image): the two strides apart,
 * sizes not a multiple of the stride, groups, batch 1..3, planes that come out one
 * pixel (the copy then runs the GEMV), every epilogue, the residual as Y, threads 1..4,
 * through run_case. Every third shape gives Y X's size (M = C * sh * sw on planes the
 * strides divide), so that run_case runs four of them in place (trials 3, 15, 39, 51):
 * output image n may overwrite only input images up to n, all copied by then. Returns
 * whether the shape took the strided kernel (all of them must); *in_place counts the
 * shapes run_case runs in place. */
static int strided_1x1_case(int trial, nnp_threadpool *const *pools, int *in_place) {
  nnp_conv2d_desc d = {.n = kt_int(1, 3), .kh = 1, .kw = 1, .dh = 1, .dw = 1};
  d.sh = 2 + trial % 2;
  d.sw = trial % 5 == 1 ? 1 : 2 + trial % 3 % 2;
  d.group = trial % 4 == 1 ? 2 : 1;
  d.m = d.group * kt_int(1, 20);
  d.c = d.group * kt_int(1, 20);
  if (d.c == d.group && d.m == d.group) d.m = 2 * d.group; /* not depthwise: its own kernel */
  d.h = trial % 7 == 5 ? kt_int(1, d.sh) : kt_int(1, 30);
  d.w = trial % 7 == 5 ? kt_int(1, d.sw) : kt_int(1, 40);
  if (trial % 3 == 0) { /* Y of X's size: M = C * sh * sw, H and W multiples of the strides */
    d.group = 1;
    d.m = d.c * d.sh * d.sw;
    d.h = d.sh * kt_int(1, 8);
    d.w = d.sw * kt_int(1, 12);
  }
  d.oh = (d.h - 1) / d.sh + 1;
  d.ow = (d.w - 1) / d.sw + 1;
  const int strided = takes_kernel(&d, "strided1x1");
  /* run_case's own rule for running in place */
  *in_place += d.c * d.h * d.w == d.m * d.oh * d.ow && trial % 4 == 3 && trial % 5 != 2;
  run_case(&d, trial, pools, trial % 5 == 2);
  return strided;
}

int main(void) {
  printf("kernel ISA: %s\n", nnp_cpu_kernel_isa());
  nnp_threadpool *pools[4] = {NULL};
  for (int t = 1; t < 4; t++) CHECK_OK(nnp_threadpool_create(t + 1, &pools[t]));
  for (int trial = 0; trial < 400; trial++) one_case(trial, pools);
  direct_cases(pools);
  int implicit = 0;
  for (int trial = 0; trial < 60; trial++) implicit += stem_case(trial, pools);
  if (nnp_dispatch_isa(NNP_KF_GEMM) == NNP_ISA_AVX2) CHECK_MSG(implicit > 20, "implicit-GEMM stems: %d of 60", implicit);
  else printf("skip: implicit-GEMM stems: the GEMM tile here is not AVX2 (%d of 60 took it)\n", implicit);
  int gemv = 0;
  for (int trial = 0; trial < 63; trial++) gemv += se_case(trial, pools);
  /* M = 15, 16, 72, 130 and C = M = 300 take it (35 of the 63); 1, 2, 4, 5, 17, 33 not */
  if (!nnp_dispatch_portable(NNP_KF_GEMM, false))
    CHECK_MSG(gemv == 35, "1x1 convs on a one-pixel plane run as a GEMV: %d of 63", gemv);
  else printf("skip: one-pixel 1x1 convs as a GEMV: the GEMM here is the portable one (%d of 63 took it)\n", gemv);
  int strided = 0, strided_in_place = 0;
  for (int trial = 0; trial < 60; trial++) strided += strided_1x1_case(trial, pools, &strided_in_place);
  CHECK_MSG(strided == 60, "1x1 convs at a stride above 1 take the strided kernel: %d of 60", strided);
  CHECK_MSG(strided_in_place == 4, "strided 1x1 shapes run in place: %d, not 4", strided_in_place);
  /* Shapes like resnet18's, scaled down, large enough for every dense path: im2col
   * fused into the GEMM in several column blocks per thread (K = 144: 28 panels a
   * block), the two-pass path with the GEMM's row-major tile order (M > N) and K
   * blocks (K > 256), stride 2 (the stem), 1x1 stride 2, ragged panels (7x7: 49
   * columns); batch 2, the residual as the output itself, threads 1..4. */
  static const struct { int64_t c, h, m, k, s; } big[] = {
      {16, 30, 20, 3, 1}, {3, 40, 16, 7, 2}, {40, 7, 100, 3, 1}, {64, 14, 70, 3, 2},
      {24, 20, 30, 1, 2}, {8, 46, 12, 3, 1},  {130, 9, 14, 3, 1},
  };
  for (int i = 0; i < (int)(sizeof big / sizeof big[0]); i++)
    for (int res_in_y = 0; res_in_y < 2; res_in_y++) {
      int64_t p = big[i].k / 2;
      nnp_conv2d_desc d = {.n = 2, .c = big[i].c, .h = big[i].h, .w = big[i].h, .m = big[i].m, .kh = big[i].k,
                           .kw = big[i].k, .sh = big[i].s, .sw = big[i].s, .ph = p, .pw = p, .dh = 1, .dw = 1,
                           .group = 1};
      d.oh = d.ow = (d.h + 2 * p - d.kh) / d.sh + 1;
      run_case(&d, 1000 + 2 * i + res_in_y, pools, res_in_y);
    }
  for (int t = 1; t < 4; t++) nnp_threadpool_destroy(pools[t]);
  dw_avx512_vs_generic();
  dw_avx2_vs_generic();
  TEST_MAIN_END();
}
