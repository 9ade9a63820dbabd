#include "kernels/conv.h"

#include <string.h>

#include "kernels/dispatch.h"
#include "kernels/dconv.h"
#include "kernels/dwconv.h"
#include "kernels/iconv.h"
#include "kernels/strided_copy.h"
#include "kernels/winograd_nchw.h"
#include "kernels/gemm.h"
#include "nnperf/alloc.h"

struct nnp_conv2d_kernel {
  nnp_conv2d_desc d;
  nnp_conv_algo algo;
  bool generic;
  int64_t mg, cg, ckk, P;  /* per group: output channels, input channels, K; positions */
  float *wpack;           /* GEMM: group g's packed A at g * a_floats; depthwise: W copy */
  nnp_dconv *dc;          /* direct: its packed weights and masks */
  nnp_wnc *wnc;           /* Winograd: its transformed, packed weights */
  nnp_iconv *ic;          /* im2col stems run as an implicit GEMM (kernels/iconv.h): its plan */
  /* depthwise: the kernel for this CPU (generic, AVX2 or AVX-512), chosen once */
  void (*dw)(const nnp_conv2d_desc *, const float *, const float *, float *, const nnp_epilogue *, int64_t, int64_t);
  size_t a_floats, b_floats;
  /* A 1x1 conv on a one-pixel plane (squeeze-and-excitation's two convs): a matrix times
   * one vector, run as the one-row product y^T = x^T W^T (nnp_sgemm_packed_ex's GEMV:
   * each weight loaded once, 8 or 16 outputs per FMA). As M panels of six rows by one
   * column, the same weights took six-lane masked loads and a quarter of the FMA issue
   * width: 2x ONNX Runtime's time on MobileNetV3's 960 -> 240 layer. wpack then holds
   * W^T packed as B (K x M), b_floats the packed x. Only where M's 16-column panels pad
   * it by at most a quarter more than the 6-row panels would (gemv_pays): a squeeze conv
   * to 6 or 10 channels read its 16-wide panels, 2.7x and 1.6x the weights' bytes, cold,
   * and took 1.6-1.9x the time of the row panels (EfficientNet-B0, one thread). */
  bool gemv;
  /* im2col of a stride-2 conv from phase planes (see phased_applies): floats of one
   * phase plane, and which of the four phases (pa * 2 + pb) any tap reads */
  int64_t phase_h, phase_w;
  bool phase_used[4], phased;
  /* A 1x1 conv at a stride above 1 with no padding (the downsampling shortcuts of
   * ResNet, ResNeXt and RegNet): image by image, X's pixels at the stride are copied
   * into the scratch (C x OH x OW), and sub, the stride-1 1x1 conv of one image, runs
   * on the copy (strided_1x1_run).
   * Through im2col each panel row was sixteen loads at the stride: 53-63% of the FMA
   * peak at batch 1 and 28-45% at batch 16 where the stride-1 1x1s reach 85%
   * (bench_conv_layers 1 1|16 "1x1 s2", one thread), and at batch 16 regnet_x_400mf's
   * four shortcuts took 10.8 ms against ONNX Runtime's 4.9. */
  nnp_conv2d_kernel *sub;
};

nnp_conv_algo nnp_conv2d_algo(const nnp_conv2d_kernel *k) { return k->algo; }
bool nnp_conv2d_kernel_generic(const nnp_conv2d_kernel *k) { return k->generic; }

const char *nnp_conv2d_kernel_name(const nnp_conv2d_kernel *k) {
  /* the ISA that runs: the GEMM tile and the depthwise kernel take AVX-512 where CPUID has it */
  static const char *names[3][3] = {{"conv2d.depthwise.avx512", "conv2d.gemm1x1.avx512", "conv2d.im2col.avx512"},
                                    {"conv2d.depthwise.avx2", "conv2d.gemm1x1.avx2", "conv2d.im2col.avx2"},
                                    {"conv2d.depthwise.generic", "conv2d.gemm1x1.generic", "conv2d.im2col.generic"}};
  if (k->algo == NNP_CONV_WINOGRAD) return "conv2d.winograd.avx2";
  if (k->sub)
    return k->generic                                           ? "conv2d.strided1x1.generic"
           : nnp_dispatch_isa(NNP_KF_GEMM) == NNP_ISA_AVX512 ? "conv2d.strided1x1.avx512"
                                                              : "conv2d.strided1x1.avx2";
  if (k->ic) return "conv2d.implicit.avx2";
  if (k->gemv) return nnp_dispatch_isa(NNP_KF_GEMM) == NNP_ISA_AVX512 ? "conv2d.gemv1x1.avx512" : "conv2d.gemv1x1.avx2";
  if (k->algo == NNP_CONV_DIRECT)
    return k->dc->isa == NNP_DCONV_AVX512 ? "conv2d.direct.avx512"
           : k->dc->isa == NNP_DCONV_AVX2 ? "conv2d.direct.avx2"
                                          : "conv2d.direct.generic";
  nnp_isa isa = nnp_dispatch_isa(k->algo == NNP_CONV_DEPTHWISE ? NNP_KF_DEPTHWISE : NNP_KF_GEMM);
  return names[k->generic ? 2 : isa == NNP_ISA_AVX512 ? 0 : 1][k->algo];
}

void nnp_conv2d_destroy(nnp_conv2d_kernel *k) {
  if (!k) return;
  nnp_aligned_free(k->wpack);
  nnp_dconv_destroy(k->dc);
  nnp_wnc_destroy(k->wnc);
  nnp_iconv_destroy(k->ic);
  nnp_conv2d_destroy(k->sub);
  nnp_free(k);
}

nnp_status nnp_conv2d_prepare(const nnp_conv2d_desc *d, const float *w, bool generic, nnp_conv2d_kernel **out) {
  return nnp_conv2d_prepare_pick(d, w, generic, NNP_CONV_PICK_AUTO, out);
}

/* NCHW Winograd runs where the dispatch table says AVX2 (on AVX-512 CPUs dense 3x3
 * layers take the blocked layout and its own Winograd, kernels/winograd.h); AUTO where
 * it pays, WINOGRAD wherever its shape applies (tests), never when another algorithm
 * is forced. */
static bool winograd_picked(const nnp_conv2d_desc *d, nnp_conv_pick pick) {
  if (nnp_dispatch_isa(NNP_KF_WINOGRAD) != NNP_ISA_AVX2 || !nnp_wnc_avx2_built()) return false;
  if (pick == NNP_CONV_PICK_WINOGRAD) return nnp_wnc_applies(d);
  return pick == NNP_CONV_PICK_AUTO && nnp_wnc_pays(d);
}

/* ---- stride 2: im2col from phase planes ----
 * A stride-2 convolution's im2col read every input row at stride 2, sixteen scalar loads
 * per panel row (resnet50's stem, its three 3x3 and three 1x1 stride-2 convs ran at 59-66
 * GFLOP/s on AVX2 where its stride-1 1x1s ran at 80-90; squeezenet1_0's 7x7 stem spent
 * a quarter of its time in im2col). Splitting each input plane once into its four phase
 * planes, phase (a, b) holding x[2r + a][2c + b], makes every tap a stride-1 read of one
 * phase plane: tap (kh, kw) of output (oh, ow) reads phase ((kh - ph) & 1, (kw - pw) & 1)
 * at (oh + (kh - ph - a) / 2, ow + (kw - pw - b) / 2). Only phases some tap reads are
 * split. Same values as im2col. The split is one more pass over X, so it pays where
 * im2col's share is large: taps >= 9 (each input is copied kh * kw / 4 times) and at
 * most 128 outputs per group (the GEMM's work per copied value). Measured on AVX2, layers
 * alone, 1 thread (bench_conv_layers): 7x7 stem 3 -> 64 3.60 -> 3.03 ms, 3x3 stem
 * 3 -> 32 0.489 -> 0.415, 3x3 64 -> 128 at 56x56 1.475 -> 1.435; 3x3 128 -> 256 and
 * 256 -> 512 unchanged or 1% slower, 1x1 64 -> 128 and 256 -> 512 2-6% slower. */
static void plan_phases(nnp_conv2d_kernel *k) {
  const nnp_conv2d_desc *d = &k->d;
  k->phased = d->sh == 2 && d->sw == 2 && d->dh == 1 && d->dw == 1 && d->kh * d->kw >= 9 && k->mg <= 128;
  if (!k->phased) return;
  k->phase_h = (d->h + 1) / 2;
  k->phase_w = (d->w + 1) / 2;
  for (int64_t kh = 0; kh < d->kh && kh < 2; kh++)
    for (int64_t kw = 0; kw < d->kw && kw < 2; kw++)
      k->phase_used[((kh - d->ph) & 1) * 2 + ((kw - d->pw) & 1)] = true;
}

/* See the kernel's gemv field: M in 16-column panels against M in 6-row panels. */
static bool gemv_pays(int64_t m) {
  const int64_t by_cols = (m + NNP_SGEMM_NR - 1) / NNP_SGEMM_NR * NNP_SGEMM_NR;
  const int64_t by_rows = (m + NNP_SGEMM_MR - 1) / NNP_SGEMM_MR * NNP_SGEMM_MR;
  return 4 * by_cols <= 5 * by_rows;
}

/* A 1x1 conv with no padding at either end (OH and OW as the strides give them): every
 * output reads one input pixel. At stride 1 the GEMM reads X as B; above, see the
 * kernel's sub field. */
static bool unpadded_1x1(const nnp_conv2d_desc *d) {
  return d->kh == 1 && d->kw == 1 && d->ph == 0 && d->pw == 0 && d->oh == (d->h - 1) / d->sh + 1 &&
         d->ow == (d->w - 1) / d->sw + 1;
}

/* Not depthwise: its own kernel reads any stride. */
static bool strided_1x1(const nnp_conv2d_desc *d) {
  return unpadded_1x1(d) && (d->sh > 1 || d->sw > 1) && !(d->group == d->c && d->group == d->m);
}

/* k->sub: the same conv at stride 1 on the OH x OW copy. */
static nnp_status prepare_strided_1x1(nnp_conv2d_kernel *k, const float *w, bool generic, nnp_conv_pick pick) {
  nnp_conv2d_desc s = k->d;
  s.h = s.oh;
  s.w = s.ow;
  s.sh = s.sw = 1;
  s.n = 1; /* run image by image (strided_1x1_run) */
  k->algo = NNP_CONV_GEMM_1X1;
  nnp_status st = nnp_conv2d_prepare_pick(&s, w, generic, pick, &k->sub);
  if (st == NNP_OK) k->generic = nnp_conv2d_kernel_generic(k->sub);
  return st;
}

nnp_status nnp_conv2d_prepare_pick(const nnp_conv2d_desc *d, const float *w, bool generic, nnp_conv_pick pick,
                                   nnp_conv2d_kernel **out) {
  *out = NULL;
  if (d->group < 1 || d->c % d->group || d->m % d->group)
    return nnp_error(NNP_ERR_SHAPE, "conv2d: group %lld does not divide %lld inputs and %lld outputs",
                     (long long)d->group, (long long)d->c, (long long)d->m);
  nnp_conv2d_kernel *k = nnp_calloc(1, sizeof *k);
  if (!k) return nnp_error(NNP_ERR_NOMEM, "out of memory packing conv weights");
  k->d = *d;
  k->cg = d->c / d->group;
  k->mg = d->m / d->group;
  k->ckk = k->cg * d->kh * d->kw;
  k->P = d->oh * d->ow;
  if (strided_1x1(d)) {
    nnp_status st = prepare_strided_1x1(k, w, generic, pick);
    if (st != NNP_OK) {
      nnp_conv2d_destroy(k);
      return st;
    }
    *out = k;
    return NNP_OK;
  }
  if (d->group == d->c && d->group == d->m) k->algo = NNP_CONV_DEPTHWISE;
  else if (unpadded_1x1(d) && d->sh == 1 && d->sw == 1)
    k->algo = NNP_CONV_GEMM_1X1;
  else if (!generic && winograd_picked(d, pick))
    k->algo = NNP_CONV_WINOGRAD;
  else if (((d->group == 1 && d->sh == 1) || generic || nnp_dispatch_isa(NNP_KF_DIRECT_CONV) < NNP_ISA_AVX512) && /* AVX-512: group 1, stride 1 */
           (pick == NNP_CONV_PICK_DIRECT ? nnp_conv2d_direct_applies(d)
                                         : (pick == NNP_CONV_PICK_AUTO || pick == NNP_CONV_PICK_WINOGRAD) && nnp_conv2d_direct_pays(d)))
    k->algo = NNP_CONV_DIRECT;
  else k->algo = NNP_CONV_IM2COL;
  k->generic = nnp_dispatch_portable(k->algo == NNP_CONV_DEPTHWISE ? NNP_KF_DEPTHWISE
                                     : k->algo == NNP_CONV_DIRECT  ? NNP_KF_DIRECT_CONV
                                                                   : NNP_KF_GEMM,
                                     generic);
  if (k->algo == NNP_CONV_DEPTHWISE) {
    size_t n = (size_t)(d->c * d->kh * d->kw);
    k->wpack = nnp_aligned_alloc(n * sizeof(float));
    if (!k->wpack) goto oom;
    memcpy(k->wpack, w, n * sizeof(float));
    k->dw = k->generic ? nnp_dwconv_planes_generic
            : nnp_dispatch_isa(NNP_KF_DEPTHWISE) == NNP_ISA_AVX512 ? nnp_dwconv_planes_avx512
                                    : nnp_dwconv_planes_avx2;
  } else if (k->algo == NNP_CONV_WINOGRAD) {
    nnp_status s = nnp_wnc_prepare(d, w, false, 0, &k->wnc);
    if (s != NNP_OK) {
      nnp_conv2d_destroy(k);
      return s;
    }
  } else if (k->algo == NNP_CONV_DIRECT) {
    nnp_isa table = nnp_dispatch_isa(NNP_KF_DIRECT_CONV);
    nnp_dconv_isa isa = k->generic                  ? NNP_DCONV_GENERIC
                        : table == NNP_ISA_AVX512 ? NNP_DCONV_AVX512
                                                  : NNP_DCONV_AVX2;
    nnp_status s = nnp_dconv_prepare(d, w, isa, &k->dc);
    if (s != NNP_OK) {
      nnp_conv2d_destroy(k);
      return s;
    }
  } else if (k->algo == NNP_CONV_GEMM_1X1 && k->P == 1 && d->group == 1 && !k->generic && gemv_pays(k->mg)) {
    k->gemv = true;
    k->b_floats = nnp_sgemm_packed_a_floats(1, k->ckk);
    k->wpack = nnp_aligned_alloc(nnp_sgemm_packed_b_floats(k->ckk, k->mg) * sizeof(float));
    if (!k->wpack) goto oom;
    nnp_sgemm_pack_b(k->ckk, k->mg, w, 1, k->ckk, k->wpack); /* B(k, m) = W(m, k) */
  } else {
    k->a_floats = nnp_sgemm_packed_a_floats(k->mg, k->ckk);
    k->b_floats = nnp_sgemm_packed_b_floats(k->ckk, k->P);
    k->wpack = nnp_aligned_alloc((size_t)d->group * k->a_floats * sizeof(float));
    if (!k->wpack) goto oom;
    for (int64_t g = 0; g < d->group; g++)
      nnp_sgemm_pack_a(k->mg, k->ckk, w + g * k->mg * k->ckk, k->ckk, 1, k->wpack + (size_t)g * k->a_floats);
    if (k->algo == NNP_CONV_IM2COL && nnp_iconv_pays(d, k->generic)) {
      nnp_status s = nnp_iconv_prepare(d, &k->ic);
      if (s != NNP_OK) {
        nnp_conv2d_destroy(k);
        return s;
      }
    } else if (k->algo == NNP_CONV_IM2COL) {
      plan_phases(k);
    }
  }
  *out = k;
  return NNP_OK;
oom:
  nnp_conv2d_destroy(k);
  return nnp_error(NNP_ERR_NOMEM, "out of memory packing conv weights");
}

/* The phase planes follow the column matrix in the scratch. */
static size_t phase_floats(const nnp_conv2d_kernel *k) {
  return k->phased ? (size_t)(k->d.n * k->d.c * 4 * k->phase_h * k->phase_w) : 0;
}

/* A strided 1x1 conv's copy of one image heads the scratch; sub's scratch follows, 64-byte aligned. */
static size_t strided_copy_bytes(const nnp_conv2d_kernel *k) {
  return ((size_t)(k->d.c * k->P) * sizeof(float) + 63) / 64 * 64;
}

size_t nnp_conv2d_scratch_bytes(const nnp_conv2d_kernel *k) {
  if (k->sub) return strided_copy_bytes(k) + nnp_conv2d_scratch_bytes(k->sub);
  if (k->algo == NNP_CONV_WINOGRAD) return nnp_wnc_scratch_bytes(k->wnc); /* V and M of an image */
  if (k->ic) return nnp_iconv_scratch_floats(k->ic) * sizeof(float);       /* the phase planes */
  if (k->algo == NNP_CONV_DIRECT && nnp_dconv_scratch_floats(k->dc)) /* its phase planes */
    return nnp_dconv_scratch_floats(k->dc) * sizeof(float);
  if (k->algo == NNP_CONV_DEPTHWISE || k->algo == NNP_CONV_DIRECT) /* a copy of X, used only when Y aliases X */
    return (size_t)(k->d.n * k->d.c * k->d.h * k->d.w) * sizeof(float);
  return (k->b_floats + phase_floats(k)) * sizeof(float);
}

/* ---- im2col into the packed-B layout ---- */

/* Column panels [q0, q1) of the im2col matrix of x (the group's first input channel),
 * panel q written at dst + (q - q0) * NR * K, row k = (ic*KH + kh)*KW + kw.
 * A panel's 16 output positions fall in at most a few output rows ("segments"); within
 * a segment and one (kh, kw) the inputs are one input row read at stride sw, valid over
 * one interval of columns and zero (padding) outside it. So the bounds are worked out
 * once per segment and (kh, kw), and each input channel is then a plain (strided) copy:
 * the per-element bounds checks of the first version made im2col half the time of
 * resnet18's 7x7 stride-2 stem. */
/* Copies of at most a panel's 16 floats: a memcpy call of a variable size cost more than
 * the copy (libc's memmove was a fifth of resnet18's 64-channel 3x3 conv); constant-size
 * memcpys compile to plain vector moves. */
static inline void copy_short(float *d, const float *s, int64_t n) {
  if (n == NNP_SGEMM_NR) {
    memcpy(d, s, NNP_SGEMM_NR * sizeof(float));
    return;
  }
  int64_t c = 0;
  for (; c + 4 <= n; c += 4) memcpy(d + c, s + c, 4 * sizeof(float));
  for (; c < n; c++) d[c] = s[c];
}

/* Where tap (kh, kw) of a segment (output row oh, positions ow0.. of len) reads: valid
 * positions [lo, hi) (zero outside), src = the input of position lo in channel 0, cs
 * floats between channels, step floats between positions. lo == hi: all padding. */
typedef struct tap_src {
  const float *src;
  int64_t lo, hi, cs, step;
} tap_src;

static inline tap_src tap_plain(const nnp_conv2d_kernel *k, const float *x, int64_t oh, int64_t ow0, int64_t len,
                                int64_t kh, int64_t kw) {
  const nnp_conv2d_desc *d = &k->d;
  tap_src t = {.cs = d->h * d->w, .step = d->sw};
  const int64_t ih = oh * d->sh - d->ph + kh * d->dh, iw0 = ow0 * d->sw - d->pw + kw * d->dw;
  if (ih < 0 || ih >= d->h) return t;
  /* input column of segment position c: iw0 + c * sw */
  t.lo = iw0 >= 0 ? 0 : (-iw0 + d->sw - 1) / d->sw;
  t.hi = iw0 >= d->w ? 0 : (d->w - 1 - iw0) / d->sw + 1;
  if (t.hi > len) t.hi = len;
  if (t.lo >= t.hi) t.lo = t.hi = 0;
  else t.src = x + ih * d->w + iw0 + t.lo * d->sw;
  return t;
}

/* A phased kernel (plan_phases): x holds each channel's four phase planes; tap (kh, kw)
 * reads phase ((kh - ph) & 1, (kw - pw) & 1) at stride 1. */
static inline tap_src tap_phased(const nnp_conv2d_kernel *k, const float *x, int64_t oh, int64_t ow0, int64_t len,
                                 int64_t kh, int64_t kw) {
  const nnp_conv2d_desc *d = &k->d;
  tap_src t = {.cs = 4 * k->phase_h * k->phase_w, .step = 1};
  const int64_t pa = (kh - d->ph) & 1, pb = (kw - d->pw) & 1;
  const int64_t r = oh + (kh - d->ph - pa) / 2, first = ow0 + (kw - d->pw - pb) / 2;
  if (r < 0 || r >= (d->h - pa + 1) / 2) return t;
  t.lo = first >= 0 ? 0 : -first;
  t.hi = (d->w - pb + 1) / 2 - first; /* the phase row's width */
  if (t.hi > len) t.hi = len;
  if (t.lo >= t.hi) t.lo = t.hi = 0;
  else t.src = x + (pa * 2 + pb) * k->phase_h * k->phase_w + r * k->phase_w + first + t.lo;
  return t;
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
/* The copies are wider with AVX-512 (one 64-byte move per panel row instead of four);
 * the values moved are the same on every path. */
__attribute__((target_clones("avx512f", "default")))
#endif
static void im2col_panels(const nnp_conv2d_kernel *k, const float *x, float *dst0, int64_t q0, int64_t q1) {
  const nnp_conv2d_desc *d = &k->d;
  const int64_t K = k->ckk, P = k->P, KK = d->kh * d->kw;
  enum { NR = NNP_SGEMM_NR };
  for (int64_t q = q0; q < q1; q++) {
    float *dst = dst0 + (q - q0) * NR * K;
    int cols = (int)(P - q * NR < NR ? P - q * NR : NR);
    if (cols < NR) /* the ragged last panel: columns past P are zero */
      for (int64_t r = 0; r < K; r++) memset(dst + r * NR + cols, 0, (size_t)(NR - cols) * sizeof(float));
    for (int c0 = 0; c0 < cols;) { /* one segment: positions c0.. in output row oh */
      int64_t p0 = q * NR + c0, oh = p0 / d->ow, ow0 = p0 % d->ow;
      int len = (int)(d->ow - ow0 < cols - c0 ? d->ow - ow0 : cols - c0);
      for (int64_t kh = 0; kh < d->kh; kh++)
        for (int64_t kw = 0; kw < d->kw; kw++) {
          float *drow = dst + (kh * d->kw + kw) * NR + c0; /* channel ic adds ic * KK * NR */
          const tap_src t = k->phased ? tap_phased(k, x, oh, ow0, len, kh, kw) : tap_plain(k, x, oh, ow0, len, kh, kw);
          if (t.lo == 0 && t.hi == NR) { /* a whole panel inside the row: the common case */
            if (t.step == 1)
              for (int64_t ic = 0; ic < k->cg; ic++) memcpy(drow + ic * KK * NR, t.src + ic * t.cs, NR * sizeof(float));
            else if (t.step == 2) /* a constant stride vectorizes (strided stems) */
              for (int64_t ic = 0; ic < k->cg; ic++)
                for (int c = 0; c < NR; c++) drow[ic * KK * NR + c] = t.src[ic * t.cs + c * 2];
            else
              for (int64_t ic = 0; ic < k->cg; ic++)
                for (int c = 0; c < NR; c++) drow[ic * KK * NR + c] = t.src[ic * t.cs + c * t.step];
            continue;
          }
          for (int64_t ic = 0; ic < k->cg; ic++) {
            float *dr = drow + ic * KK * NR;
            for (int64_t c = 0; c < t.lo; c++) dr[c] = 0.0f;
            if (t.hi == t.lo) {} /* all padding: t.src is NULL */
            else if (t.step == 1) copy_short(dr + t.lo, t.src + ic * t.cs, t.hi - t.lo);
            else
              for (int64_t c = 0; c < t.hi - t.lo; c++) dr[t.lo + c] = t.src[ic * t.cs + c * t.step];
            for (int64_t c = t.hi; c < len; c++) dr[c] = 0.0f;
          }
        }
      c0 += len;
    }
  }
}

/* Input planes [b, e) (of all images) into their phase planes: phase (a, b') of plane pl
 * at dst + (pl * 4 + a * 2 + b') * phase_h * phase_w, row r = x[2r + a][2c + b'], only
 * the phases some tap reads. */
typedef struct copy_job { /* a pass that reads X (or its phase planes) into a buffer */
  const nnp_conv2d_kernel *k;
  const float *x;
  float *dst;
} copy_job;

static void phase_range(void *p, int64_t b, int64_t e) {
  const copy_job *j = p;
  const nnp_conv2d_kernel *k = j->k;
  const int64_t H = k->d.h, W = k->d.w, PP = k->phase_h * k->phase_w, PW = k->phase_w;
  for (int64_t pl = b; pl < e; pl++)
    for (int64_t a = 0; a < 2; a++) {
      float *ev = k->phase_used[a * 2] ? j->dst + (pl * 4 + a * 2) * PP : NULL;
      float *od = k->phase_used[a * 2 + 1] ? j->dst + (pl * 4 + a * 2 + 1) * PP : NULL;
      for (int64_t r = 0; 2 * r + a < H; r++) {
        const float *src = j->x + (pl * H + 2 * r + a) * W;
        if (ev) nnp_copy_every_other(ev + r * PW, src, (W + 1) / 2);
        if (od) nnp_copy_every_other(od + r * PW, src + 1, W / 2);
      }
    }
}

/* the whole matrix, one 16-column panel per task */

static void im2col_range(void *p, int64_t b, int64_t e) {
  const copy_job *j = p;
  im2col_panels(j->k, j->x, j->dst + b * NNP_SGEMM_NR * j->k->ckk, b, e);
}

/* ---- im2col fused into the GEMM ----
 * Writing the whole column matrix first and reading it back in the GEMM moved it through
 * memory twice: resnet18's 64-channel 56x56 3x3 conv has a 7.2 MB column matrix (K = 576,
 * N = 3136), its 7x7 stem 7.4 MB. Instead each thread builds G column panels at a time
 * in its own slot of the scratch (at most 256 KiB: L2) and runs its GEMM rows over them
 * while they are hot; one thread-pool run per convolution instead of two per image.
 * Threads split the output by columns (no duplicated work). */
typedef struct fused_job {
  const nnp_conv2d_kernel *k;
  const float *x; /* the input, or its phase planes (phased kernels) */
  int64_t plane;  /* floats between two input channels of x */
  float *y, *scratch;
  const nnp_epilogue *ep;
  int64_t tm, tn, G; /* threads over row panels x column panels; panels per im2col block */
} fused_job;

/* The epilogue of group g of image n (conv.h: indexed like one image's output). */
static const nnp_epilogue *group_epilogue(const nnp_conv2d_kernel *k, const nnp_epilogue *ep, int64_t n, int64_t g,
                                          nnp_epilogue *loc) {
  if (!ep) return NULL;
  *loc = *ep;
  if (loc->bias_kind == NNP_BIAS_ROW) loc->bias = ep->bias + g * k->mg;
  if (loc->residual) loc->residual = ep->residual + (n * k->d.m + g * k->mg) * k->P;
  loc->ld_res = k->P;
  return loc;
}

static void fused_range(void *p, int64_t b, int64_t e) {
  const fused_job *j = p;
  const nnp_conv2d_kernel *k = j->k;
  const nnp_conv2d_desc *d = &k->d;
  const int64_t mp = (k->mg + NNP_SGEMM_MR - 1) / NNP_SGEMM_MR, np = (k->P + NNP_SGEMM_NR - 1) / NNP_SGEMM_NR;
  for (int64_t t = b; t < e; t++) { /* one index per thread */
    float *slot = j->scratch + t * j->G * NNP_SGEMM_NR * k->ckk;
    int64_t it = t / j->tn, jt = t % j->tn;
    int64_t ip0 = it * mp / j->tm, ip1 = (it + 1) * mp / j->tm, jq0 = jt * np / j->tn, jq1 = (jt + 1) * np / j->tn;
    for (int64_t n = 0; n < d->n; n++)
      for (int64_t g = 0; g < d->group; g++) {
        const float *xg = j->x + (n * d->c + g * k->cg) * j->plane;
        float *yg = j->y + (n * d->m + g * k->mg) * k->P;
        nnp_epilogue loc;
        const nnp_epilogue *lp = group_epilogue(k, j->ep, n, g, &loc);
        for (int64_t q = jq0; q < jq1; q += j->G) {
          int64_t q1 = q + j->G < jq1 ? q + j->G : jq1;
          if (k->algo == NNP_CONV_GEMM_1X1) /* X's planes are B's rows: plain copies, no row segments */
            nnp_sgemm_pack_b_panels(k->ckk, k->P - q * NNP_SGEMM_NR, xg + q * NNP_SGEMM_NR, d->h * d->w, 1, slot, 0,
                                    q1 - q);
          else im2col_panels(k, xg, slot, q, q1);
          nnp_sgemm_packed_block(k->mg, k->P, k->ckk, k->wpack + (size_t)g * k->a_floats, slot, yg, k->P, lp, ip0,
                                 ip1, q, q1, k->generic);
        }
      }
  }
}

/* The fused path's plan for `threads` threads; false where it does not pay or apply.
 * Threads split the columns, so each streams all of A once per block of G panels: only
 * where A (the packed weights) stays in L2 next to the slot: at most 768 KiB of a
 * 1 MiB L2 (resnet18's 128-channel 3x3, A = 590 KB, measured 12% faster fused than
 * with the 512 KiB first chosen), i.e. not for resnet18's 256- and
 * 512-channel layers, whose column matrices are small anyway (<= 1.8 MB) while A is
 * 2.4 to 9.4 MB; those take the two-pass path, whose GEMM splits the larger operand.
 * The scratch, sized for the whole column matrix, holds one slot of G panels per thread
 * when G <= panels / threads. */
static bool plan_fused(const nnp_conv2d_kernel *k, int threads, fused_job *j) {
  const int64_t np = (k->P + NNP_SGEMM_NR - 1) / NNP_SGEMM_NR;
  const int64_t a_bytes = (int64_t)k->a_floats * (int64_t)sizeof(float);
  if (np < threads || a_bytes > (768 << 10) || k->mg > k->P) return false;
  j->tm = 1;
  j->tn = threads;
  int64_t panel_bytes = k->ckk * NNP_SGEMM_NR * (int64_t)sizeof(float);
  int64_t G = (256 << 10) / panel_bytes;
  if (G < 1) G = 1;
  if (G > np / threads) G = np / threads;
  j->G = G;
  return true;
}

/* Input planes [b, e) at the strides into dst: plane pl's output-sized copy at pl * P. */
static void strided_range(void *p, int64_t b, int64_t e) {
  const copy_job *j = p;
  const nnp_conv2d_desc *d = &j->k->d;
  for (int64_t pl = b; pl < e; pl++)
    for (int64_t r = 0; r < d->oh; r++) {
      const float *src = j->x + (pl * d->h + r * d->sh) * d->w;
      float *dst = j->dst + (pl * d->oh + r) * d->ow;
      if (d->sw == 2) nnp_copy_every_other(dst, src, d->ow);
      else if (d->sw == 1) memcpy(dst, src, (size_t)d->ow * sizeof(float));
      else
        for (int64_t c = 0; c < d->ow; c++) dst[c] = src[c * d->sw];
    }
}

static void pack_range(void *p, int64_t b, int64_t e) {
  const copy_job *j = p;
  nnp_sgemm_pack_b_panels(j->k->ckk, j->k->P, j->x, j->k->d.h * j->k->d.w, 1, j->dst, b, e);
}

typedef struct dw_job {
  const nnp_conv2d_kernel *k;
  const float *x;
  float *y;
  const nnp_epilogue *ep;
} dw_job;

static void dw_range(void *p, int64_t b, int64_t e) {
  const dw_job *j = p;
  j->k->dw(&j->k->d, j->x, j->k->wpack, j->y, j->ep, b, e);
}

/* k->gemv: image n's y^T (1 x M) = x^T (1 x K) W^T, x packed as a one-row A first (so
 * Y may alias X). Image n's epilogue (group_epilogue: one group, a one-pixel plane) with
 * the bias kinds swapped: the conv's per-channel (row) bias is the product's per-column
 * one, and its residual's channels are the product's one row. Each output is one chain
 * of FMAs in k order with the same epilogue, as in the six-row tile it replaces. */
static void gemv_run(const nnp_conv2d_kernel *k, const float *x, float *y, const nnp_epilogue *ep, float *scratch,
                     nnp_threadpool *tp) {
  const nnp_conv2d_desc *d = &k->d;
  for (int64_t n = 0; n < d->n; n++) {
    nnp_epilogue loc;
    const nnp_epilogue *lp = group_epilogue(k, ep, n, 0, &loc); /* &loc, or NULL */
    if (lp)
      loc.bias_kind = loc.bias_kind == NNP_BIAS_ROW   ? NNP_BIAS_COL
                      : loc.bias_kind == NNP_BIAS_COL ? NNP_BIAS_ROW
                                                      : NNP_BIAS_NONE;
    nnp_sgemm_pack_a(1, d->c, x + n * d->c, 1, 1, scratch);
    nnp_sgemm_packed_ex(1, d->m, d->c, scratch, k->wpack, y + n * d->m, d->m, lp, tp, false);
  }
}

/* k->sub: image by image, its copy then its conv, so that the copy is still in L2 when
 * the GEMM reads it (a whole batch's copy first went through L3: regnet_x_400mf's
 * 32 -> 32 shortcut at batch 16 took 7.4 ms instead of 4.5). Y aliasing X is safe:
 * then Y's image has X's image's size, and output image n overwrites only input images
 * up to n, all copied already. */
static void strided_1x1_run(const nnp_conv2d_kernel *k, const float *x, float *y, const nnp_epilogue *ep,
                            void *scratch, nnp_threadpool *tp) {
  const nnp_conv2d_desc *d = &k->d;
  for (int64_t n = 0; n < d->n; n++) {
    copy_job j = {.k = k, .x = x + n * d->c * d->h * d->w, .dst = scratch};
    nnp_threadpool_run(tp, strided_range, &j, d->c);
    nnp_epilogue loc;
    nnp_conv2d_run(k->sub, scratch, y + n * d->m * k->P, group_epilogue(k, ep, n, 0, &loc),
                   (char *)scratch + strided_copy_bytes(k), tp);
  }
}

void nnp_conv2d_run(const nnp_conv2d_kernel *k, const float *x, float *y, const nnp_epilogue *ep, void *scratch,
                    nnp_threadpool *tp) {
  const nnp_conv2d_desc *d = &k->d;
  const int64_t in_plane = d->h * d->w, P = k->P;
  if (k->algo == NNP_CONV_DEPTHWISE) {
    if (x == y) { /* in-place: later output rows still read input rows already overwritten */
      memcpy(scratch, x, nnp_conv2d_scratch_bytes(k));
      x = scratch;
    }
    dw_job j = {.k = k, .x = x, .y = y, .ep = ep};
    nnp_threadpool_run(tp, dw_range, &j, d->n * d->c);
    return;
  }
  if (k->algo == NNP_CONV_WINOGRAD) {
    nnp_wnc_run(k->wnc, x, y, ep, scratch, tp);
    return;
  }
  if (k->algo == NNP_CONV_DIRECT) {
    const bool phases = nnp_dconv_scratch_floats(k->dc) > 0; /* X is read whole into them first */
    if (x == y && !phases) { /* in-place: every output reads a 3x3 window of inputs of every channel */
      memcpy(scratch, x, nnp_conv2d_scratch_bytes(k));
      x = scratch;
    }
    nnp_dconv_run(k->dc, x, y, ep, phases ? scratch : NULL, tp);
    return;
  }
  if (k->ic) {
    nnp_iconv_run(k->ic, k->wpack, x, y, ep, scratch, tp);
    return;
  }
  if (k->gemv) {
    gemv_run(k, x, y, ep, scratch, tp);
    return;
  }
  if (k->sub) {
    strided_1x1_run(k, x, y, ep, scratch, tp);
    return;
  }
  float *bp = scratch;
  /* a plane of one or two pixels (squeeze-and-excitation layers) is read in place too */
  const bool in_place = k->algo == NNP_CONV_GEMM_1X1 && x != y; /* B may be X itself */
  const bool narrow = in_place && nnp_sgemm_narrow_in_place(P, k->generic);
  const bool direct_ok = in_place && (P % NNP_SGEMM_NR == 0 || narrow);
  const float *src = x; /* what im2col reads: X, or its phase planes */
  int64_t src_plane = in_plane;
  if (k->phased) {
    float *phases = (float *)scratch + k->b_floats;
    copy_job pj = {.k = k, .x = x, .dst = phases};
    nnp_threadpool_run(tp, phase_range, &pj, d->n * d->c);
    src = phases;
    src_plane = 4 * k->phase_h * k->phase_w;
  }
  fused_job fj = {.k = k, .x = src, .plane = src_plane, .y = y, .scratch = scratch, .ep = ep};
  /* Y aliasing X: the whole input must be read before any output is written */
  if (!direct_ok && x != y && plan_fused(k, nnp_threadpool_threads(tp), &fj)) {
    nnp_threadpool_run(tp, fused_range, &fj, nnp_threadpool_threads(tp));
    return;
  }
  for (int64_t n = 0; n < d->n; n++)
    for (int64_t g = 0; g < d->group; g++) {
      const float *xg = src + (n * d->c + g * k->cg) * src_plane;
      float *yg = y + (n * d->m + g * k->mg) * P;
      /* In place (Y aliases X: a 1x1 conv with C == M) B is packed before Y is written;
       * otherwise a 1x1 conv reads X directly as B. */
      /* Only with 64-byte-aligned rows (P % 16 == 0): a 7x7 or 14x14 plane's rows straddle
       * cache lines, and reading them in place measured slower than packing. */
      const bool direct = direct_ok;
      if (direct) { /* X is already the K x P matrix B: only its ragged last panel is packed */
        int64_t full = P / NNP_SGEMM_NR * NNP_SGEMM_NR;
        if (full < P && !narrow) nnp_sgemm_pack_b_panels(k->ckk, P - full, xg + full, P, 1, bp, 0, 1);
      } else if (k->algo == NNP_CONV_GEMM_1X1) {
        copy_job j = {.k = k, .x = xg, .dst = bp};
        nnp_threadpool_run(tp, pack_range, &j, (P + NNP_SGEMM_NR - 1) / NNP_SGEMM_NR);
      } else {
        copy_job j = {.k = k, .x = xg, .dst = bp};
        nnp_threadpool_run(tp, im2col_range, &j, (P + NNP_SGEMM_NR - 1) / NNP_SGEMM_NR);
      }
      nnp_epilogue loc;
      const nnp_epilogue *lp = group_epilogue(k, ep, n, g, &loc);
      if (direct)
        nnp_sgemm_direct_b_ex(k->mg, P, k->ckk, k->wpack + (size_t)g * k->a_floats, xg, P, narrow ? NULL : bp, yg, P, lp, tp,
                              k->generic);
      else
        nnp_sgemm_packed_ex(k->mg, P, k->ckk, k->wpack + (size_t)g * k->a_floats, bp, yg, P, lp, tp, k->generic);
    }
}
