/* Direct ("implicit GEMM") convolution for stride-1 "same" convolutions (resnet18's
 * 3x3 pad 1 layers): the input planes are read in place, no im2col matrix.
 *
 * Why it works without im2col: when the output plane equals the input plane (stride 1,
 * dilation 1, kh = 2 ph + 1, kw = 2 pw + 1), output position p = oh * W + ow reads, for
 * tap (kh, kw), input position p + (kh - ph) * W + (kw - pw) of each channel. So 16
 * consecutive output positions (one ZMM, across row ends too: a 7x7 plane is 4 vectors,
 * not 7 rows of 7) read 16 consecutive inputs per channel and tap. The inputs that
 * fall in the padding (or wrap to the neighbouring row) are masked to zero; the masks
 * depend only on the vector and the tap, so they are computed once at prepare time.
 *
 * Weights are packed once into blocks of MB output channels: block b, tap t, input
 * channel c holds MB floats (w[b*MB + i][c][t]), zero for the channels past M. A
 * micro-kernel keeps MB channels x NV vectors of output in registers over all C x taps
 * (tap outer, so a vector's mask stays in a register over the channel loop) and applies
 * the fused epilogue (kernels/epilogue.h) as it stores: y is written once.
 *
 * Work is cut into tasks (image, channel block, group of NV vectors); tasks in [t0, t1)
 * run on one thread, results do not depend on the split.
 * dconv.c holds the plan and the generic C kernel (the test oracle of the vector ones),
 * dconv_avx2.c (8 lanes) and dconv_avx512.c (16 lanes) the vector kernels. */
#ifndef NNP_KERNELS_DCONV_H
#define NNP_KERNELS_DCONV_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/conv.h"
#include "kernels/epilogue.h"
#include "nnperf/status.h"
#include "util/threadpool.h"

typedef enum nnp_dconv_isa { NNP_DCONV_GENERIC, NNP_DCONV_AVX2, NNP_DCONV_AVX512 } nnp_dconv_isa;

typedef struct nnp_dconv {
  nnp_conv2d_desc d;
  nnp_dconv_isa isa;
  int mb, nv, vl;        /* channels per block, vectors per group, lanes per vector */
  int64_t P, taps;       /* positions per plane, kh * kw */
  int64_t blocks, vecs, groups; /* groups: of NV vectors (tasks), not the conv's groups */
  int64_t cg, mg, gblocks; /* per conv group: input and output channels, channel blocks */
  bool phases;             /* stride 2: the vector kernels read X as four phase planes */
  int64_t cstride;         /* floats between two input channels as the vector kernels read them */
  bool by_blocks;        /* task order: channel block outer (see nnp_dconv_task) */
  float *w;              /* [blocks][taps][c][mb] */
  uint16_t *mask;        /* [vecs][taps]: lane i of vector v reads a real input */
  int64_t *off;          /* [taps]: input offset of tap t from the output position */
} nnp_dconv;

/* Whether the shape is one the direct kernel computes (stride-1 "same"; grouped too,
 * except depthwise, which has its own kernel; and stride 2 with pad = kernel / 2, whose
 * input the AVX2 and generic kernels read as four phase planes, even/odd rows x
 * columns, each the output plane's size, deinterleaved once per run: a tap then reads
 * consecutive inputs again). The AVX-512 tile handles group 1, stride 1 only:
 * nnp_dconv_prepare refuses the rest for it. */
bool nnp_conv2d_direct_applies(const nnp_conv2d_desc *d);
/* Whether it is chosen over im2col + GEMM by default (measured: see docs/kernels.md). */
bool nnp_conv2d_direct_pays(const nnp_conv2d_desc *d);

/* Packs w (m x c/group x kh x kw) for isa. d must satisfy nnp_conv2d_direct_applies;
 * group > 1 only for NNP_DCONV_GENERIC and NNP_DCONV_AVX2. */
nnp_status nnp_dconv_prepare(const nnp_conv2d_desc *d, const float *w, nnp_dconv_isa isa, nnp_dconv **out);
void nnp_dconv_destroy(nnp_dconv *k);
/* Scratch nnp_dconv_run needs (the phase planes of a stride-2 layer; 0 otherwise), floats. */
size_t nnp_dconv_scratch_floats(const nnp_dconv *k);
/* Y = epilogue(conv(X)) (ep as in nnp_conv2d_run); y must not alias x unless the layer
 * has phase planes (X is read whole into scratch before Y is written). */
void nnp_dconv_run(const nnp_dconv *k, const float *x, float *y, const nnp_epilogue *ep, float *scratch,
                   nnp_threadpool *tp);

/* Task t: image n, channel block b, vector group g. Channel block outer where the
 * weights outweigh one image's input (each thread then streams only its share of the
 * weights: resnet18's 512-channel 7x7 layers), vector group outer otherwise (each
 * thread reads only its rows of the input). */
static inline void nnp_dconv_task(const nnp_dconv *k, int64_t t, int64_t *n, int64_t *b, int64_t *g) {
  int64_t per = k->blocks * k->groups, r = t % per;
  *n = t / per;
  if (k->by_blocks) {
    *b = r / k->groups;
    *g = r % k->groups;
  } else {
    *g = r / k->blocks;
    *b = r % k->blocks;
  }
}

/* Channel block b: its first output channel, how many of its mb rows are real (a block
 * never spans two conv groups: RegNet's 16-channel groups are four AVX2 blocks each) and
 * the first input channel of its group. */
static inline void nnp_dconv_block(const nnp_dconv *k, int64_t b, int64_t *m0, int *mr, int64_t *c0) {
  const int64_t g = b / k->gblocks, bb = b % k->gblocks, left = k->mg - bb * k->mb;
  *m0 = g * k->mg + bb * k->mb;
  *mr = (int)(left < k->mb ? left : k->mb);
  *c0 = g * k->cg;
}

void nnp_dconv_tasks_generic(const nnp_dconv *k, const float *x, float *y, const nnp_epilogue *ep, int64_t t0,
                             int64_t t1);
void nnp_dconv_tasks_avx2(const nnp_dconv *k, const float *x, float *y, const nnp_epilogue *ep, int64_t t0,
                          int64_t t1);
void nnp_dconv_tasks_avx512(const nnp_dconv *k, const float *x, float *y, const nnp_epilogue *ep, int64_t t0,
                            int64_t t1);

#endif
