/* Resize (opsets 10-19) and the deprecated Upsample (opsets 7-9), one kernel for both.
 *
 * Supported: modes nearest (any dtype), linear and cubic (Resize-11+; both
 * float32/float64/float16/bfloat16, computed in double, N-D: separable over every resized
 * axis, cubic with cubic_coeff_a and exclude_outside); every coordinate_transformation_mode (half_pixel,
 * pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nn, tf_crop_and_resize
 * with extrapolation_value, half_pixel_symmetric); every nearest_mode; opset 18's axes and
 * keep_aspect_ratio_policy. Rejected at load time: antialias=1 when a linear or cubic
 * resize actually downsamples, and cubic in Upsample and Resize-10 (their specs have only
 * nearest and linear).
 *
 * exclude_outside only changes results for cubic (or antialiased) filters: a linear or
 * nearest tap outside the input takes the edge value, and renormalising the remaining
 * weight gives the same edge value, so for those modes it is accepted and needs no code.
 * For cubic, taps outside [0, n) get weight 0 and the rest are divided by their sum.
 *
 * Cubic follows the ONNX reference: for source coordinate x with f = floor(x) and
 * r = x - f, the taps are f-1 .. f+2 with weights W(1+r), W(r), W(1-r), W(2-r) of the
 * Keys kernel W(t) = (A+2)|t|^3 - (A+3)|t|^2 + 1 for |t| <= 1 and
 * A|t|^3 - 5A|t|^2 + 8A|t| - 4A for 1 < |t| < 2; indices clamp to the edge (the
 * reference's edge padding). The reference takes r = 1 (taps f-2 .. f+1) when x is whole;
 * that gives the same single non-zero weight 1 on tap f.
 *
 * Where the ONNX text and the ONNX reference implementation (which produced the
 * conformance data) disagree we follow the reference: align_corners divides by
 * (input * scale - 1) with the unrounded output length when scales are given.
 *
 * Before opset 11 (Resize-10, Upsample) there is no coordinate_transformation_mode or
 * nearest_mode: coordinates are asymmetric (x / scale) and nearest rounds down when
 * upsampling and up when downsampling, as onnxruntime does.
 *
 * The kernel precomputes, per output axis and index, the input offsets and weights of its
 * taps (one for nearest, up to two for linear, up to four for cubic; taps that clamp to the
 * same index are merged and zero weights dropped) in the scratch buffer, then walks output
 * rows: the taps of the outer axes combine into weighted source rows (at most
 * taps^(rank-1), kept in scratch too), and the innermost axis is interpolated along them. */
#include <math.h>
#include <string.h>

#include "ops/op_util.h"

typedef enum rs_mode { RS_NEAREST, RS_LINEAR, RS_CUBIC } rs_mode;
typedef enum rs_coord {
  CT_HALF_PIXEL,
  CT_PYTORCH_HALF_PIXEL,
  CT_ALIGN_CORNERS,
  CT_ASYMMETRIC,
  CT_TF_HALF_PIXEL_FOR_NN,
  CT_TF_CROP_AND_RESIZE,
  CT_HALF_PIXEL_SYMMETRIC
} rs_coord;
typedef enum rs_nearest {
  NM_ROUND_PREFER_FLOOR,
  NM_ROUND_PREFER_CEIL,
  NM_FLOOR,
  NM_CEIL,
  NM_LEGACY /* before opset 11: floor when upsampling, ceil when downsampling */
} rs_nearest;

typedef struct rs_plan {
  rs_mode mode;
  rs_coord coord;
  rs_nearest nearest;
  double extrapolation;
  double cubic_a;      /* cubic_coeff_a */
  int exclude_outside; /* cubic: drop taps outside the input and renormalise */
  int ntap;            /* tap slots per output index: 1, 2 or 4 by mode */
  int rank;
  int64_t in[NNP_MAX_RANK], out[NNP_MAX_RANK];
  double scale[NNP_MAX_RANK]; /* output / input, as the coordinate transform uses it */
  double len[NNP_MAX_RANK];   /* unrounded output length (input * scale) */
  double roi_lo[NNP_MAX_RANK], roi_hi[NNP_MAX_RANK];
} rs_plan;

/* One tap of one output index along one axis: element offset (premultiplied by the input
 * stride) and weight. Each output index owns plan.ntap consecutive slots; the used taps come
 * first and unused slots have off -1, so off -1 in the first slot marks an extrapolated
 * index (tf_crop_and_resize outside the input). */
typedef struct rs_tap {
  int64_t off;
  double w;
} rs_tap;

/* An output extent beyond this is hostile; it also keeps the double->int64 cast safe. */
#define RS_MAX_EXTENT 4.0e15

static const char *const coord_names[] = {"half_pixel", "pytorch_half_pixel", "align_corners",
                                          "asymmetric", "tf_half_pixel_for_nn",
                                          "tf_crop_and_resize", "half_pixel_symmetric"};
static const char *const nearest_names[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};

static int name_index(const char *s, const char *const *names, int n) {
  for (int i = 0; i < n; i++)
    if (strcmp(s, names[i]) == 0) return i;
  return -1;
}

/* Reads a known float input (scales, roi) as doubles; count 0 means absent or empty. */
static nnp_status read_floats(const nnp_op_ctx *c, int i, const char *what, double *v, int max, int *count) {
  const nnp_tensor *t = nnp_in(c, i);
  *count = 0;
  if (!t || nnp_tensor_numel(t) == 0) return NNP_OK;
  if (!t->data)
    return nnp_error(NNP_ERR_UNSUPPORTED, "input '%s' must be known when the model is loaded", what);
  if (!nnp_dtype_is_float(t->dtype))
    return nnp_error(NNP_ERR_SHAPE, "input '%s' must be a float tensor, not %s", what, nnp_dtype_name(t->dtype));
  int64_t n = nnp_tensor_numel(t);
  if (n > max) return nnp_error(NNP_ERR_SHAPE, "input '%s' has %lld values, expected %d", what, (long long)n, max);
  for (int64_t k = 0; k < n; k++) v[k] = nnp_tensor_get_f64(t, k);
  *count = (int)n;
  return NNP_OK;
}

/* Interpolation mode, its taps and cubic coefficient, and the input types it takes. */
static nnp_status rs_read_mode(const nnp_op_ctx *c, int is_upsample, const nnp_tensor *x, rs_plan *p) {
  const char *mode = nnp_attr_string(c->node, "mode", "nearest");
  if (strcmp(mode, "nearest") == 0) p->mode = RS_NEAREST;
  else if (strcmp(mode, "linear") == 0 || (is_upsample && strcmp(mode, "bilinear") == 0)) p->mode = RS_LINEAR;
  else if (strcmp(mode, "cubic") == 0 && !is_upsample && c->opset >= 11) p->mode = RS_CUBIC;
  else if (strcmp(mode, "cubic") == 0)
    return nnp_error(NNP_ERR_UNSUPPORTED, "attribute 'mode' value 'cubic' needs Resize from opset 11");
  else return nnp_error(NNP_ERR_UNSUPPORTED, "attribute 'mode' value '%s' is not supported", mode);
  p->ntap = p->mode == RS_NEAREST ? 1 : p->mode == RS_LINEAR ? 2 : 4;
  p->cubic_a = -0.75;
  p->exclude_outside = 0;
  if (p->mode == RS_CUBIC) {
    p->cubic_a = nnp_attr_float(c->node, "cubic_coeff_a", -0.75f);
    p->exclude_outside = nnp_attr_int(c->node, "exclude_outside", 0) != 0;
    if (!isfinite(p->cubic_a)) return nnp_error(NNP_ERR_SHAPE, "attribute 'cubic_coeff_a' must be finite");
  }

  if (!nnp_dtype_size(x->dtype))
    return nnp_error(NNP_ERR_UNSUPPORTED, "input of type %s is not supported", nnp_dtype_name(x->dtype));
  if (p->mode != RS_NEAREST && !nnp_dtype_is_float(x->dtype))
    return nnp_error(NNP_ERR_UNSUPPORTED, "mode '%s' on input of type %s is not supported", mode,
                     nnp_dtype_name(x->dtype));
  return NNP_OK;
}

/* Coordinate transformation and nearest rounding (fixed in the legacy signatures). */
static nnp_status rs_read_coord(const nnp_op_ctx *c, int is_upsample, rs_plan *p) {
  const int legacy = is_upsample || c->opset < 11;
  if (legacy) {
    p->coord = CT_ASYMMETRIC;
    p->nearest = NM_LEGACY;
  } else {
    const char *ct = nnp_attr_string(c->node, "coordinate_transformation_mode", "half_pixel");
    int k = name_index(ct, coord_names, (int)(sizeof coord_names / sizeof *coord_names));
    if (k < 0)
      return nnp_error(NNP_ERR_UNSUPPORTED, "attribute 'coordinate_transformation_mode' value '%s' is not supported", ct);
    p->coord = (rs_coord)k;
    const char *nm = nnp_attr_string(c->node, "nearest_mode", "round_prefer_floor");
    k = name_index(nm, nearest_names, (int)(sizeof nearest_names / sizeof *nearest_names));
    if (k < 0) return nnp_error(NNP_ERR_UNSUPPORTED, "attribute 'nearest_mode' value '%s' is not supported", nm);
    p->nearest = (rs_nearest)k;
  }
  p->extrapolation = nnp_attr_float(c->node, "extrapolation_value", 0.0f);
  return NNP_OK;
}

/* Opset 18: scales, sizes and roi may cover a subset of axes. */
static nnp_status rs_read_axes(const nnp_op_ctx *c, int is_upsample, int r, int *axes, int *na) {
  *na = r;
  for (int i = 0; i < r; i++) axes[i] = i;
  const int64_t *av;
  int nav = is_upsample ? -1 : nnp_attr_ints(c->node, "axes", &av);
  if (nav >= 0) {
    if (nav > r) return nnp_error(NNP_ERR_SHAPE, "attribute 'axes' has %d values for rank %d", nav, r);
    unsigned seen = 0;
    for (int k = 0; k < nav; k++) {
      NNP_TRY(nnp_norm_axis(av[k], r, "attribute 'axes' value", &axes[k]));
      if (seen & (1u << axes[k])) return nnp_error(NNP_ERR_SHAPE, "attribute 'axes' repeats axis %d", axes[k]);
      seen |= 1u << axes[k];
    }
    *na = nav;
  }
  return NNP_OK;
}

typedef struct rs_targets {
  double scales[NNP_MAX_RANK], roi[2 * NNP_MAX_RANK];
  int64_t sizes[NNP_MAX_RANK];
  int ns, nz, nr; /* how many of each were given */
} rs_targets;

/* Where scales / sizes / roi come from in each signature. */
static nnp_status rs_read_targets(const nnp_op_ctx *c, int is_upsample, rs_plan *p, int na, rs_targets *t) {
  const int legacy = is_upsample || c->opset < 11;
  double *scales = t->scales, *roi = t->roi;
  int64_t *sizes = t->sizes;
  int ns = 0, nz = 0, nr = 0;
  if (is_upsample && c->opset < 9) {
    const float *f;
    ns = nnp_attr_floats(c->node, "scales", &f);
    if (ns < 0) return nnp_error(NNP_ERR_SHAPE, "attribute 'scales' is required before opset 9");
    if (ns > NNP_MAX_RANK)
      return nnp_error(NNP_ERR_SHAPE, "attribute 'scales' has %d values for rank %d", ns, p->rank);
    for (int k = 0; k < ns; k++) scales[k] = f[k];
  } else if (legacy) {
    NNP_TRY(read_floats(c, 1, "scales", scales, NNP_MAX_RANK, &ns));
    if (ns == 0) return nnp_error(NNP_ERR_SHAPE, "input 'scales' is required");
  } else {
    NNP_TRY(read_floats(c, 2, "scales", scales, NNP_MAX_RANK, &ns));
    const nnp_tensor *st = nnp_in(c, 3);
    if (st && nnp_tensor_numel(st) > 0) NNP_TRY(nnp_input_ints(c, 3, sizes, NNP_MAX_RANK, &nz));
    if (ns && nz) return nnp_error(NNP_ERR_SHAPE, "only one of inputs 'scales' and 'sizes' may be given");
    if (!ns && !nz) return nnp_error(NNP_ERR_SHAPE, "one of inputs 'scales' and 'sizes' is required");
    if (p->coord == CT_TF_CROP_AND_RESIZE) {
      NNP_TRY(read_floats(c, 1, "roi", roi, 2 * NNP_MAX_RANK, &nr));
      if (nr != 2 * na)
        return nnp_error(NNP_ERR_SHAPE, "input 'roi' has %d values, expected %d for tf_crop_and_resize", nr, 2 * na);
    }
  }
  if (ns && ns != na) return nnp_error(NNP_ERR_SHAPE, "'scales' has %d values, expected %d", ns, na);
  if (nz && nz != na) return nnp_error(NNP_ERR_SHAPE, "input 'sizes' has %d values, expected %d", nz, na);

  t->ns = ns, t->nz = nz, t->nr = nr;
  return NNP_OK;
}

/* Output extents from per-axis scales. */
static nnp_status rs_apply_scales(rs_plan *p, const int *axes, int na, const double *scales) {
  for (int k = 0; k < na; k++) {
    const int a = axes[k];
    const double s = scales[k];
    if (!(s > 0) || !isfinite(s))
      return nnp_error(NNP_ERR_SHAPE, "'scales' value %g for axis %d must be positive", s, a);
    double o = (double)p->in[a] * s;
    if (p->coord == CT_TF_CROP_AND_RESIZE) o *= p->roi_hi[a] - p->roi_lo[a];
    if (!(o < RS_MAX_EXTENT))
      return nnp_error(NNP_ERR_LIMIT, "'scales' value %g for axis %d gives a too large output", s, a);
    p->out[a] = o > 0 ? (int64_t)floor(o) : 0;
    p->scale[a] = s;
    p->len[a] = (double)p->in[a] * s;
  }
  return NNP_OK;
}

/* Output extents from per-axis sizes, under keep_aspect_ratio_policy. */
static nnp_status rs_apply_sizes(const nnp_op_ctx *c, rs_plan *p, const int *axes, int na, const int64_t *sizes) {
  const char *pol = nnp_attr_string(c->node, "keep_aspect_ratio_policy", "stretch");
  const int stretch = strcmp(pol, "stretch") == 0, not_larger = strcmp(pol, "not_larger") == 0;
  if (!stretch && !not_larger && strcmp(pol, "not_smaller") != 0)
    return nnp_error(NNP_ERR_UNSUPPORTED, "attribute 'keep_aspect_ratio_policy' value '%s' is not supported", pol);
  double common = not_larger ? INFINITY : 0.0;
  for (int k = 0; k < na; k++) {
    const int a = axes[k];
    if (sizes[k] < 0 || (double)sizes[k] >= RS_MAX_EXTENT)
      return nnp_error(NNP_ERR_SHAPE, "input 'sizes' value %lld for axis %d is out of range",
                       (long long)sizes[k], a);
    if (p->in[a] == 0 && sizes[k] > 0)
      return nnp_error(NNP_ERR_SHAPE, "cannot resize axis %d of size 0 to %lld", a, (long long)sizes[k]);
    p->out[a] = sizes[k];
    if (p->in[a] > 0) {
      const double s = (double)sizes[k] / (double)p->in[a];
      p->scale[a] = s;
      if (not_larger ? s < common : s > common) common = s;
    }
  }
  if (!stretch && isfinite(common) && common > 0) {
    /* One scale for all listed axes; the output rounds to nearest (half up). */
    for (int k = 0; k < na; k++) {
      const int a = axes[k];
      const double o = floor(common * (double)p->in[a] + 0.5);
      if (!(o < RS_MAX_EXTENT)) return nnp_error(NNP_ERR_LIMIT, "resized axis %d is too large", a);
      p->out[a] = (int64_t)o;
      p->scale[a] = common;
    }
  }
  for (int k = 0; k < na; k++) {
    const int a = axes[k];
    /* sizes/in*in need not round back to sizes exactly; the output length is exact. */
    p->len[a] = stretch ? (double)p->out[a] : p->scale[a] * (double)p->in[a];
    if (p->out[a] > 0 && p->scale[a] <= 0)
      return nnp_error(NNP_ERR_SHAPE, "cannot resize axis %d of size 0", a);
  }
  return NNP_OK;
}

static nnp_status rs_plan_make(const nnp_op_ctx *c, int is_upsample, rs_plan *p) {
  const nnp_tensor *x = c->in[0];
  if (!x) return nnp_error(NNP_ERR_SHAPE, "input 0 is missing");
  if (!nnp_out(c, 0)) return nnp_error(NNP_ERR_SHAPE, "output 0 is omitted");
  const int r = x->rank;
  if (r < 1) return nnp_error(NNP_ERR_SHAPE, "input must have rank >= 1, not be a scalar");
  p->rank = r;
  for (int i = 0; i < r; i++) p->in[i] = x->dims[i];
  NNP_TRY(rs_read_mode(c, is_upsample, x, p));
  NNP_TRY(rs_read_coord(c, is_upsample, p));
  int axes[NNP_MAX_RANK], na;
  NNP_TRY(rs_read_axes(c, is_upsample, r, axes, &na));
  rs_targets tg;
  NNP_TRY(rs_read_targets(c, is_upsample, p, na, &tg));
  const double *roi = tg.roi;
  const int nr = tg.nr;
  for (int i = 0; i < r; i++) {
    p->out[i] = p->in[i];
    p->scale[i] = 1.0;
    p->len[i] = (double)p->in[i];
    p->roi_lo[i] = 0.0;
    p->roi_hi[i] = 1.0;
  }
  for (int k = 0; k < nr / 2; k++) {
    p->roi_lo[axes[k]] = roi[k];
    p->roi_hi[axes[k]] = roi[k + na];
    if (!isfinite(roi[k]) || !isfinite(roi[k + na]))
      return nnp_error(NNP_ERR_SHAPE, "input 'roi' has a non-finite value");
  }

  if (tg.ns) NNP_TRY(rs_apply_scales(p, axes, na, tg.scales));
  else if (tg.nz) NNP_TRY(rs_apply_sizes(c, p, axes, na, tg.sizes));
  for (int a = 0; a < r; a++)
    if (p->in[a] == 0 && p->out[a] > 0)
      return nnp_error(NNP_ERR_SHAPE, "cannot resize axis %d of size 0 to %lld", a, (long long)p->out[a]);

  if (p->mode != RS_NEAREST && nnp_attr_int(c->node, "antialias", 0) != 0)
    for (int a = 0; a < r; a++)
      if (p->scale[a] < 1.0)
        return nnp_error(NNP_ERR_UNSUPPORTED, "attribute 'antialias' = 1 with downsampling is not supported");
  return NNP_OK;
}

/* Input coordinate of output index o along axis a; *oob set when tf_crop_and_resize
 * puts it outside the input. */
static double rs_source_coord(const rs_plan *p, int a, int64_t o, int *oob) {
  const double s = p->scale[a], in = (double)p->in[a], len = p->len[a], x = (double)o;
  *oob = 0;
  switch (p->coord) {
    case CT_HALF_PIXEL: return (x + 0.5) / s - 0.5;
    case CT_PYTORCH_HALF_PIXEL: return p->out[a] > 1 ? (x + 0.5) / s - 0.5 : 0.0;
    case CT_ALIGN_CORNERS: return len == 1.0 ? 0.0 : x * (in - 1) / (len - 1);
    case CT_ASYMMETRIC: return x / s;
    case CT_TF_HALF_PIXEL_FOR_NN: return (x + 0.5) / s;
    case CT_HALF_PIXEL_SYMMETRIC: {
      const double adj = (double)p->out[a] / len;
      return in / 2 * (1 - adj) + (x + 0.5) / s - 0.5;
    }
    case CT_TF_CROP_AND_RESIZE: {
      const double lo = p->roi_lo[a], hi = p->roi_hi[a];
      double v = p->out[a] == 1 ? (hi - lo) * (in - 1) / 2 : x * (hi - lo) * (in - 1) / ((double)p->out[a] - 1);
      v += lo * (in - 1);
      if (!(v >= 0 && v <= in - 1)) *oob = 1;
      return v;
    }
  }
  return x;
}

static int64_t clamp_index(double v, int64_t n) {
  if (!(v > 0)) return 0;
  if (v >= (double)(n - 1)) return n - 1;
  return (int64_t)v;
}

/* Weights of taps f-1 .. f+2 for fraction r in (0, 1), as the ONNX reference writes them. */
static void cubic_coeffs(double r, double A, double c[4]) {
  const double r1 = r + 1, s = 1 - r, s1 = s + 1;
  c[0] = ((A * r1 - 5 * A) * r1 + 8 * A) * r1 - 4 * A;
  c[1] = ((A + 2) * r - (A + 3)) * r * r + 1;
  c[2] = ((A + 2) * s - (A + 3)) * s * s + 1;
  c[3] = ((A * s1 - 5 * A) * s1 + 8 * A) * s1 - 4 * A;
}

/* Fills the p->ntap tap slots t of output index o along axis a (input stride st). */
static void rs_fill_taps(const rs_plan *p, int a, int64_t o, int64_t st, rs_tap *t) {
  const int64_t n = p->in[a];
  for (int j = 0; j < p->ntap; j++) {
    t[j].off = -1;
    t[j].w = 0;
  }
  int oob;
  const double v = rs_source_coord(p, a, o, &oob);
  if (oob) return;
  /* x is clamped to [-1, n] first: indices clamp to the edge anyway, and this keeps the
   * float->int conversions in range. */
  const double xc = v < -1 ? -1 : v > (double)n ? (double)n : v;
  const double f = floor(xc), ratio = xc - f;
  if (p->mode == RS_NEAREST) {
    int up;
    switch (p->nearest) {
      case NM_ROUND_PREFER_FLOOR: up = ratio > 0.5; break;
      case NM_ROUND_PREFER_CEIL: up = ratio >= 0.5; break;
      case NM_FLOOR: up = 0; break;
      case NM_CEIL: up = ratio > 0; break;
      default: up = p->scale[a] < 1.0 && ratio > 0; break;
    }
    t[0].off = clamp_index(f + up, n) * st;
    t[0].w = 1;
    return;
  }
  if (p->mode == RS_LINEAR) {
    const int64_t i0 = clamp_index(f, n), i1 = clamp_index(f + 1, n);
    t[0].off = i0 * st;
    if (i0 == i1 || ratio == 0) {
      t[0].w = 1;
    } else {
      t[0].w = 1 - ratio;
      t[1].off = i1 * st;
      t[1].w = ratio;
    }
    return;
  }
  /* Cubic. A whole coordinate takes its own value; spelt out so that no rounding residue
   * of the polynomials leaves stray taps. */
  double w[4] = {0, 1, 0, 0};
  if (ratio != 0) cubic_coeffs(ratio, p->cubic_a, w);
  const int64_t i0 = (int64_t)f - 1;
  if (p->exclude_outside) {
    double sum = 0;
    for (int j = 0; j < 4; j++) {
      if (i0 + j < 0 || i0 + j >= n) w[j] = 0;
      sum += w[j];
    }
    if (sum != 0)
      for (int j = 0; j < 4; j++) w[j] /= sum;
  }
  /* Clamp to the edge; taps are in index order, so those landing on one index are
   * neighbours and merge. Zero weights are dropped, but one tap always stays. */
  int k = 0;
  for (int j = 0; j < 4; j++) {
    const int64_t off = (i0 + j < 0 ? 0 : i0 + j >= n ? n - 1 : i0 + j) * st;
    if (k > 0 && t[k - 1].off == off) {
      t[k - 1].w += w[j];
    } else if (w[j] != 0) {
      t[k].off = off;
      t[k].w = w[j];
      k++;
    }
  }
  if (k == 0) t[0].off = clamp_index(f, n) * st;
}

/* Fills tab (rank tables of out[a] * ntap taps, contiguous) for plan p and input strides xs. */
static void rs_build_taps(const rs_plan *p, const int64_t *xs, rs_tap **tab, rs_tap *mem) {
  for (int a = 0; a < p->rank; a++) {
    tab[a] = mem;
    for (int64_t o = 0; o < p->out[a]; o++) rs_fill_taps(p, a, o, xs[a], &mem[o * p->ntap]);
    mem += p->out[a] * p->ntap;
  }
}

/* Most taps rs_fill_taps gives any output index along axis a. */
static int rs_axis_taps(const rs_plan *p, int a) {
  if (p->mode == RS_NEAREST || p->in[a] <= 1) return 1;
  /* Unresized, with coordinates x = o exactly: one tap each. */
  if (p->out[a] == p->in[a] && p->scale[a] == 1.0 && p->len[a] == (double)p->in[a] &&
      p->coord != CT_TF_HALF_PIXEL_FOR_NN && p->coord != CT_TF_CROP_AND_RESIZE)
    return 1;
  return p->in[a] < p->ntap ? (int)p->in[a] : p->ntap;
}

/* Scratch layout: the tap tables, then (linear and cubic) room for the weighted source rows
 * of one output row: `corners` offsets and as many weights. */
typedef struct rs_scratch {
  size_t tap_count, corners, bytes;
} rs_scratch;

static rs_scratch rs_scratch_size(const rs_plan *p) {
  rs_scratch s = {0, 0, 0};
  for (int a = 0; a < p->rank; a++) s.tap_count += (size_t)p->out[a] * (size_t)p->ntap;
  if (p->mode != RS_NEAREST) {
    s.corners = 1;
    for (int a = 0; a < p->rank - 1; a++) s.corners *= (size_t)rs_axis_taps(p, a);
  }
  s.bytes = s.tap_count * sizeof(rs_tap) + s.corners * (sizeof(int64_t) + sizeof(double));
  return s;
}

/* Number of used taps in the ntap slots at t (0: extrapolated). */
static inline int rs_tap_count(const rs_tap *t, int ntap) {
  int m = 0;
  while (m < ntap && t[m].off >= 0) m++;
  return m;
}

/* Linear / cubic kernel for element type T, computed in double; LOAD/STORE convert. The
 * taps of the outer axes multiply out into nc weighted source rows (coff, cw), and each
 * output element of the row sums its innermost taps along every one of them. */
#define RS_WEIGHTED_KERNEL(NAME, T, LOAD, STORE)                                                  \
  static void NAME(const rs_plan *p, rs_tap *const *tab, int64_t *coff, double *cw, const T *x,  \
                   T *y) {                                                                        \
    const int last = p->rank - 1, nt = p->ntap;                                                   \
    const int64_t n = p->out[last];                                                               \
    const rs_tap *tl = tab[last];                                                                 \
    const T ext = STORE(p->extrapolation);                                                        \
    int64_t idx[NNP_MAX_RANK] = {0};                                                              \
    for (;;) {                                                                                    \
      size_t nc = 1;                                                                              \
      int oob = 0;                                                                                \
      coff[0] = 0;                                                                                \
      cw[0] = 1;                                                                                  \
      for (int a = 0; a < last && !oob; a++) {                                                    \
        const rs_tap *t = &tab[a][idx[a] * nt];                                                   \
        const int m = rs_tap_count(t, nt);                                                        \
        if (m == 0) oob = 1;                                                                      \
        for (int j = m - 1; j >= 0; j--) /* slot 0 last: it updates in place */                   \
          for (size_t k = 0; k < nc; k++) {                                                       \
            coff[(size_t)j * nc + k] = coff[k] + t[j].off;                                        \
            cw[(size_t)j * nc + k] = cw[k] * t[j].w;                                              \
          }                                                                                       \
        nc *= (size_t)m;                                                                          \
      }                                                                                           \
      if (oob) {                                                                                  \
        for (int64_t o = 0; o < n; o++) y[o] = ext;                                               \
      } else {                                                                                    \
        for (int64_t o = 0; o < n; o++) {                                                         \
          const rs_tap *t = &tl[o * nt];                                                          \
          const int m = rs_tap_count(t, nt);                                                      \
          if (m == 0) {                                                                           \
            y[o] = ext;                                                                           \
            continue;                                                                             \
          }                                                                                       \
          double acc = 0;                                                                         \
          for (size_t k = 0; k < nc; k++) {                                                       \
            const T *row = x + coff[k];                                                           \
            double v = 0;                                                                         \
            for (int j = 0; j < m; j++) v += t[j].w * (double)LOAD(row[t[j].off]);                \
            acc += cw[k] * v;                                                                     \
          }                                                                                       \
          y[o] = STORE(acc);                                                                      \
        }                                                                                         \
      }                                                                                           \
      y += n;                                                                                     \
      int k = last - 1;                                                                           \
      for (; k >= 0; k--) {                                                                       \
        if (++idx[k] < p->out[k]) break;                                                          \
        idx[k] = 0;                                                                               \
      }                                                                                           \
      if (k < 0) break;                                                                           \
    }                                                                                             \
  }

#define RS_ID_(v) (v)
#define RS_TO_F32_(v) ((float)(v))
#define RS_TO_F16_(v) nnp_f32_to_f16((float)(v))
#define RS_TO_BF16_(v) nnp_f32_to_bf16((float)(v))
RS_WEIGHTED_KERNEL(rs_weighted_f32, float, RS_ID_, RS_TO_F32_)
RS_WEIGHTED_KERNEL(rs_weighted_f64, double, RS_ID_, RS_ID_)
RS_WEIGHTED_KERNEL(rs_weighted_f16, uint16_t, nnp_f16_to_f32, RS_TO_F16_)
RS_WEIGHTED_KERNEL(rs_weighted_bf16, uint16_t, nnp_bf16_to_f32, RS_TO_BF16_)
#undef RS_ID_
#undef RS_TO_F32_
#undef RS_TO_F16_
#undef RS_TO_BF16_

/* Nearest: one tap per output index, copied as bytes (any dtype). */
static void rs_nearest_kernel(const rs_plan *p, rs_tap *const *tab, size_t es, const void *ext,
                              const char *x, char *y) {
  const int last = p->rank - 1;
  const int64_t n = p->out[last];
  const rs_tap *tl = tab[last];
  int64_t idx[NNP_MAX_RANK] = {0};
  for (;;) {
    int64_t base = 0;
    for (int a = 0; a < last && base >= 0; a++) {
      const int64_t off = tab[a][idx[a]].off;
      base = off < 0 ? -1 : base + off;
    }
    if (base < 0) {
      for (int64_t o = 0; o < n; o++) memcpy(y + (size_t)o * es, ext, es);
    } else {
      const char *row = x + (size_t)base * es;
#define RS_NEAREST_ROW_(ES)                                                        \
  for (int64_t o = 0; o < n; o++) {                                                \
    const int64_t off = tl[o].off;                                                 \
    memcpy(y + o * (ES), off < 0 ? (const char *)ext : row + off * (ES), (ES));    \
  }                                                                                \
  break;
      switch (es) {
        case 1: RS_NEAREST_ROW_(1)
        case 2: RS_NEAREST_ROW_(2)
        case 4: RS_NEAREST_ROW_(4)
        case 8: RS_NEAREST_ROW_(8)
        default:
          for (int64_t o = 0; o < n; o++) {
            const int64_t off = tl[o].off;
            memcpy(y + (size_t)o * es, off < 0 ? (const char *)ext : row + (size_t)off * es, es);
          }
          break;
      }
#undef RS_NEAREST_ROW_
    }
    y += (size_t)n * es;
    int k = last - 1;
    for (; k >= 0; k--) {
      if (++idx[k] < p->out[k]) break;
      idx[k] = 0;
    }
    if (k < 0) break;
  }
}

static nnp_status rs_infer(nnp_op_ctx *c, int is_upsample) {
  rs_plan p;
  NNP_TRY(rs_plan_make(c, is_upsample, &p));
  const nnp_tensor *x = c->in[0];
  size_t nb;
  NNP_TRY(nnp_shape_nbytes(x->dtype, p.rank, p.out, &nb));
  nnp_set_shape(c->out[0], x->dtype, p.rank, p.out);
  if (nb) c->scratch_needed = rs_scratch_size(&p).bytes;
  return NNP_OK;
}

static nnp_status rs_ref(nnp_op_ctx *c, int is_upsample) {
  rs_plan p;
  NNP_TRY(rs_plan_make(c, is_upsample, &p));
  const nnp_tensor *x = c->in[0];
  nnp_tensor *y = c->out[0];
  if (nnp_tensor_numel(y) == 0) return NNP_OK;
  const rs_scratch sz = rs_scratch_size(&p);
  if (!c->scratch || c->scratch_size < sz.bytes)
    return nnp_error(NNP_ERR_INTERNAL, "scratch of %zu bytes is too small", c->scratch_size);
  int64_t xs[NNP_MAX_RANK];
  nnp_contiguous_strides(x->rank, x->dims, xs);
  rs_tap *tab[NNP_MAX_RANK];
  rs_tap *mem = c->scratch;
  rs_build_taps(&p, xs, tab, mem);
  if (p.mode == RS_NEAREST) {
    unsigned char ext[16] = {0};
    nnp_tensor et = {.dtype = x->dtype, .rank = 0, .data = ext};
    nnp_tensor_set_f64(&et, 0, p.extrapolation);
    rs_nearest_kernel(&p, tab, nnp_dtype_size(x->dtype), ext, x->data, y->data);
    return NNP_OK;
  }
  /* The row buffers were sized from rs_axis_taps; check the tables keep to it. */
  for (int a = 0; a < p.rank - 1; a++) {
    const int most = rs_axis_taps(&p, a);
    for (int64_t o = 0; o < p.out[a]; o++)
      if (rs_tap_count(&tab[a][o * p.ntap], p.ntap) > most)
        return nnp_error(NNP_ERR_INTERNAL, "axis %d: more resize taps than planned", a);
  }
  int64_t *coff = (int64_t *)(mem + sz.tap_count);
  double *cw = (double *)(coff + sz.corners);
  switch (x->dtype) {
    case NNP_F32: rs_weighted_f32(&p, tab, coff, cw, x->data, y->data); break;
    case NNP_F64: rs_weighted_f64(&p, tab, coff, cw, x->data, y->data); break;
    case NNP_F16: rs_weighted_f16(&p, tab, coff, cw, x->data, y->data); break;
    case NNP_BF16: rs_weighted_bf16(&p, tab, coff, cw, x->data, y->data); break;
    default: return nnp_error(NNP_ERR_INTERNAL, "interpolating resize of %s", nnp_dtype_name(x->dtype));
  }
  return NNP_OK;
}

static nnp_status infer_resize(nnp_op_ctx *c) { return rs_infer(c, 0); }
static nnp_status ref_resize(nnp_op_ctx *c) { return rs_ref(c, 0); }
static nnp_status infer_upsample(nnp_op_ctx *c) { return rs_infer(c, 1); }
static nnp_status ref_upsample(nnp_op_ctx *c) { return rs_ref(c, 1); }

const nnp_op_info nnp_op_resize = {.name = "Resize", .min_inputs = 1, .max_inputs = 4, .min_outputs = 1,
                                    .max_outputs = 1, .infer = infer_resize, .ref = ref_resize};
const nnp_op_info nnp_op_upsample = {.name = "Upsample", .min_inputs = 1, .max_inputs = 2, .min_outputs = 1,
                                      .max_outputs = 1, .infer = infer_upsample, .ref = ref_upsample};
