/* Sliding-window geometry shared by Conv, ConvTranspose, MaxPool and AveragePool.
 *
 * These ops read the same attributes (kernel_shape, strides, dilations, pads, auto_pad)
 * and, except ConvTranspose, size their output by the same rule, so the parsing, the
 * bounds and the output-size arithmetic live here once: a hostile-model check fixed in
 * one op is fixed in all of them.
 *
 * Geometry is normalised to NNP_WINDOW_AXES spatial axes: an op of spatial rank nsp < 3
 * uses the last nsp slots and the leading slots get the identity geometry (size 1,
 * kernel 1, stride 1, dilation 1, no padding). One 3-axis kernel then serves 1D, 2D and
 * 3D, and only the parsing knows the op's real rank. Slot 2 is always the innermost
 * (contiguous) axis. */
#ifndef NNP_OPS_SPATIAL_H
#define NNP_OPS_SPATIAL_H

#include <stdbool.h>
#include <stdint.h>

#include "ops/checked_math.h"
#include "ops/op.h"

#define NNP_WINDOW_AXES 3

/* Upper bound for kernel, stride, dilation and pad attribute values. Anything larger is
 * hostile, and the bound keeps every product of the geometry arithmetic in the int64
 * range the overflow checks expect. */
#define NNP_WINDOW_ATTR_MAX ((int64_t)1 << 31)

typedef struct nnp_window {
  int nsp;                        /* spatial rank of the op: 1..NNP_WINDOW_AXES */
  int64_t in[NNP_WINDOW_AXES];    /* input spatial sizes */
  int64_t out[NNP_WINDOW_AXES];   /* output spatial sizes */
  int64_t k[NNP_WINDOW_AXES];     /* kernel sizes */
  int64_t s[NNP_WINDOW_AXES];     /* strides */
  int64_t d[NNP_WINDOW_AXES];     /* dilations */
  int64_t pb[NNP_WINDOW_AXES];    /* padding at the beginning of each axis */
  int64_t pe[NNP_WINDOW_AXES];    /* padding at the end of each axis */
} nnp_window;

typedef enum nnp_auto_pad {
  NNP_AUTO_PAD_NOTSET,     /* explicit 'pads' (or none) */
  NNP_AUTO_PAD_SAME_UPPER, /* out = ceil(in / s), odd padding goes at the end */
  NNP_AUTO_PAD_SAME_LOWER, /* out = ceil(in / s), odd padding goes at the beginning */
  NNP_AUTO_PAD_VALID       /* no padding */
} nnp_auto_pad;

/* Reads an INTS attribute with one value per spatial axis (or 2 per axis for pads) into
 * out[0..n); absent (or empty) -> def everywhere. Values must lie in [lo, hi]. */
nnp_status nnp_spatial_ints(const nnp_node *node, const char *name, int n, int64_t def,
                            int64_t lo, int64_t hi, int64_t *out);

/* Reads 'auto_pad' ("" counts as NOTSET); any other value is NNP_ERR_UNSUPPORTED. */
nnp_status nnp_read_auto_pad(const nnp_node *node, nnp_auto_pad *mode);

/* Sets up w for an op of spatial rank nsp: input sizes and kernel sizes (nsp values
 * each) go to the last nsp slots, every other field gets the identity geometry and every
 * output size is 1 until the op computes it. */
void nnp_window_init(nnp_window *w, int nsp, const int64_t *in_sizes, const int64_t *kernel);

/* Reads 'strides' and 'dilations' (default 1, range [1, NNP_WINDOW_ATTR_MAX]) and
 * 'pads' (all begins, then all ends; default 0, range [0, NNP_WINDOW_ATTR_MAX]), in that
 * order, into the op's slots of w. */
nnp_status nnp_window_read_strides_dilations_pads(const nnp_node *node, nnp_window *w);

/* The extent (k-1)*d+1 a kernel of k taps covers with dilation d; true on overflow. */
static inline bool nnp_kernel_extent_overflows(int64_t k, int64_t d, int64_t *extent) {
  int64_t t;
  return nnp_mul_overflows(k - 1, d, &t) || nnp_add_overflows(t, 1, extent);
}

/* Output size of slot `axis` for a forward sliding window (Conv and pooling) whose
 * kernel covers `extent` input positions, written to w->out[axis]:
 *   NOTSET: out = floor((in + pb + pe - extent) / s) + 1; with ceil_mode the division
 *           rounds up, but a last window that would start past the input and the
 *           beginning padding, (out-1)*s >= in + pb, is dropped.
 *   VALID:  the same with pb = pe = 0 (ceil_mode ignored).
 *   SAME_*: out = ceil(in / s); the padding total = max(0, (out-1)*s + extent - in) is
 *           split SAME_UPPER pb = total/2, SAME_LOWER pb = total - total/2, and written
 *           to w->pb / w->pe.
 * Fails when the padded input is smaller than the extent or the arithmetic overflows. */
nnp_status nnp_window_out_size(nnp_window *w, int axis, int64_t extent, nnp_auto_pad mode,
                               bool ceil_mode);

/* [*lo, *hi): the indices j in [0, count) with 0 <= start + j*step < limit (step > 0),
 * an empty range (lo == hi) if there are none. Kernels precompute these per output
 * position (the taps inside the input) or per tap (the outputs it reaches), so their
 * inner loops carry no bounds tests. */
void nnp_in_bounds_range(int64_t start, int64_t step, int64_t count, int64_t limit,
                         int64_t *lo, int64_t *hi);

/* Declares the const locals 3-axis kernels index with, read from a const nnp_window *:
 * sizes ID/IH/IW (input) and OD/OH/OW (output), strides sd/sh/sw, dilations dd/dh/dw and
 * beginning pads pd/ph/pw (suffixes: depth, height, width = slots 0, 1, 2). Copies in
 * locals can stay in registers across the kernels' stores; reads through the struct
 * pointer could not wherever the output might alias it (int8, uint8 or int64 stores). */
#define NNP_WINDOW_LOCALS(w)                                                            \
  const int64_t ID = (w)->in[0], IH = (w)->in[1], IW = (w)->in[2];                      \
  const int64_t OD = (w)->out[0], OH = (w)->out[1], OW = (w)->out[2];                   \
  const int64_t sd = (w)->s[0], sh = (w)->s[1], sw = (w)->s[2];                         \
  const int64_t dd = (w)->d[0], dh = (w)->d[1], dw = (w)->d[2];                         \
  const int64_t pd = (w)->pb[0], ph = (w)->pb[1], pw = (w)->pb[2]

#endif
