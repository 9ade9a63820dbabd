/* Calibrators: histograms, min-max / percentile / entropy ranges, calibration tables,
 * the FP32 calibration run and per-channel weight scales. See calibrate.h. */
#include "quant/calibrate.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnperf/alloc.h"
#include "ir/shape_infer.h"
#include "nnperf/engine.h"
#include "util/atomic_file.h"

static const char *const calibrator_names[] = {"minmax", "percentile", "entropy"};

const char *nnp_calibrator_name(nnp_calibrator c) {
  return (unsigned)c < 3 ? calibrator_names[c] : "?";
}

nnp_status nnp_calibrator_parse(const char *s, nnp_calibrator *out) {
  for (int i = 0; i < 3; i++)
    if (s && strcmp(s, calibrator_names[i]) == 0) {
      *out = (nnp_calibrator)i;
      return NNP_OK;
    }
  return nnp_error(NNP_ERR_INVALID, "unknown calibrator '%s' (minmax, percentile or entropy)", s ? s : "");
}

/* ---- histogram ------------------------------------------------------------------- */

void nnp_hist_init(nnp_hist *h) {
  memset(h, 0, sizeof *h);
  h->min = INFINITY;
  h->max = -INFINITY;
}

/* Doubles the range until it exceeds a, merging bin pairs each time. */
static void hist_grow(nnp_hist *h, double a) {
  if (h->range <= 0) {
    /* first non-zero value: start just above it, so it lands in the last bin */
    h->range = a * (1.0 + 1.0 / NNP_HIST_BINS);
    return;
  }
  while (a >= h->range) {
    for (int i = 0; i < NNP_HIST_BINS / 2; i++) h->bins[i] = h->bins[2 * i] + h->bins[2 * i + 1];
    memset(h->bins + NNP_HIST_BINS / 2, 0, sizeof(uint64_t) * NNP_HIST_BINS / 2);
    h->range *= 2;
  }
}

void nnp_hist_add(nnp_hist *h, const float *x, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    float v = x[i];
    if (!isfinite(v)) {
      h->nonfinite++;
      continue;
    }
    if (v < h->min) h->min = v;
    if (v > h->max) h->max = v;
    double a = fabs((double)v);
    if (a >= h->range && a > 0) hist_grow(h, a);
    int b = h->range > 0 ? (int)(a / h->range * NNP_HIST_BINS) : 0;
    if (b >= NNP_HIST_BINS) b = NNP_HIST_BINS - 1;
    h->bins[b]++;
    h->count++;
  }
}

double nnp_hist_percentile(const nnp_hist *h, double pct) {
  if (h->count == 0 || h->range <= 0) return 0;
  double want = pct / 100.0 * (double)h->count;
  uint64_t acc = 0;
  double bw = h->range / NNP_HIST_BINS;
  for (int i = 0; i < NNP_HIST_BINS; i++) {
    acc += h->bins[i];
    if ((double)acc >= want) return (i + 1) * bw;
  }
  return h->range;
}

/* KL(P || Q) of two unnormalised distributions over n bins; a bin where P has mass and
 * Q none costs as if Q held a tiny epsilon (TensorRT and MXNet smooth the same way). */
static double kl_divergence(const double *p, const double *q, int n) {
  double sp = 0, sq = 0;
  for (int i = 0; i < n; i++) {
    sp += p[i];
    sq += q[i];
  }
  if (sp <= 0 || sq <= 0) return INFINITY;
  double kl = 0;
  for (int i = 0; i < n; i++) {
    if (p[i] <= 0) continue;
    double pi = p[i] / sp, qi = q[i] > 0 ? q[i] / sq : 1e-12;
    kl += pi * log(pi / qi);
  }
  return kl;
}

double nnp_hist_entropy_threshold(const nnp_hist *h, int levels) {
  if (h->count == 0 || h->range <= 0) return 0;
  double bw = h->range / NNP_HIST_BINS;
  if (levels < 2 || levels > NNP_HIST_BINS) levels = NNP_ENTROPY_LEVELS;
  static _Thread_local double p[NNP_HIST_BINS], q[NNP_HIST_BINS];
  /* Bin 0 of a post-ReLU tensor holds every exact zero, often half the values. Merged
   * into a quantization group, that spike smears over the group's bins, which penalises
   * wide candidates and drives the threshold far too low. NVIDIA's pytorch-quantization
   * entropy calibrator sets bins[0] = bins[1] for this reason; so does nnperf. */
  static _Thread_local uint64_t hb[NNP_HIST_BINS];
  memcpy(hb, h->bins, sizeof hb);
  hb[0] = hb[1];
  /* outliers beyond candidate i: suffix sums */
  static _Thread_local double tail[NNP_HIST_BINS + 1];
  tail[NNP_HIST_BINS] = 0;
  for (int i = NNP_HIST_BINS - 1; i >= 0; i--) tail[i] = tail[i + 1] + (double)hb[i];
  int last = NNP_HIST_BINS;
  while (last > 0 && hb[last - 1] == 0) last--;
  /* All the mass fits into `levels` bins: no clipping, no rounding loss. */
  if (last <= levels) return levels * bw < h->range ? levels * bw : h->range;
  double best = INFINITY;
  int best_i = NNP_HIST_BINS;
  for (int i = levels; i <= NNP_HIST_BINS; i++) {
    /* P: the histogram clipped at i, with the clipped mass folded into its last bin */
    for (int k = 0; k < i; k++) p[k] = (double)hb[k];
    p[i - 1] += tail[i];
    /* Q: bins [0, i) merged into `levels` groups, each group's mass spread evenly over
     * its non-empty bins (an empty bin stays empty: quantization cannot create mass) */
    double per = (double)i / levels;
    for (int j = 0; j < levels; j++) {
      int start = (int)floor(j * per), stop = j == levels - 1 ? i : (int)floor((j + 1) * per);
      double total = 0;
      int nonzero = 0;
      for (int k = start; k < stop; k++) {
        total += (double)hb[k];
        nonzero += hb[k] != 0;
      }
      for (int k = start; k < stop; k++) q[k] = hb[k] != 0 ? total / nonzero : 0;
    }
    double kl = kl_divergence(p, q, i);
    if (kl < best) {
      best = kl;
      best_i = i;
    }
  }
  return best_i * bw;
}

void nnp_calib_range(const nnp_hist *h, nnp_calibrator c, double percentile, float *lo, float *hi) {
  double mn = h->count ? h->min : 0, mx = h->count ? h->max : 0;
  if (c != NNP_CALIBRATOR_MINMAX) {
    double t = c == NNP_CALIBRATOR_PERCENTILE ? nnp_hist_percentile(h, percentile)
                                              : nnp_hist_entropy_threshold(h, NNP_ENTROPY_LEVELS);
    if (mx > t) mx = t;
    if (mn < -t) mn = -t;
  }
  *lo = (float)mn;
  *hi = (float)mx;
}

/* ---- tables ----------------------------------------------------------------------- */

void nnp_calib_table_free(nnp_calib_table *t) {
  if (!t) return;
  for (int i = 0; i < t->n; i++) nnp_free(t->entries[i].name);
  nnp_free(t->entries);
  t->entries = NULL;
  t->n = 0;
}

const nnp_calib_entry *nnp_calib_table_find(const nnp_calib_table *t, const char *name) {
  for (int i = 0; i < t->n; i++)
    if (strcmp(t->entries[i].name, name) == 0) return &t->entries[i];
  return NULL;
}

static nnp_status table_add(nnp_calib_table *t, const char *name, float lo, float hi) {
  nnp_calib_entry *e = nnp_realloc(t->entries, sizeof *e * (size_t)(t->n + 1));
  if (!e) return nnp_error(NNP_ERR_NOMEM, "out of memory for the calibration table");
  t->entries = e;
  e[t->n].name = nnp_strdup(name);
  if (!e[t->n].name) return nnp_error(NNP_ERR_NOMEM, "out of memory for the calibration table");
  e[t->n].lo = lo;
  e[t->n].hi = hi;
  t->n++;
  return NNP_OK;
}

nnp_status nnp_calib_table_save(const nnp_calib_table *t, const char *path) {
  nnp_atomic_file af;
  NNP_TRY(nnp_atomic_open(&af, path));
  fprintf(af.f, "nnperf-calibration-table %d\ncalibrator %s\nsamples %d\n", NNP_CALIB_TABLE_VERSION,
          nnp_calibrator_name(t->calibrator), t->samples);
  for (int i = 0; i < t->n; i++)
    fprintf(af.f, "range %.9g %.9g %s\n", (double)t->entries[i].lo, (double)t->entries[i].hi, t->entries[i].name);
  return nnp_atomic_commit(&af);
}

#define TABLE_MAX_LINE 4096
#define TABLE_MAX_ENTRIES 1000000

nnp_status nnp_calib_table_load(const char *path, nnp_calib_table *out) {
  memset(out, 0, sizeof *out);
  FILE *f = fopen(path, "r");
  if (!f) return nnp_error(NNP_ERR_IO, "cannot open calibration table '%s': %s", path, strerror(errno));
  char *line = nnp_malloc(TABLE_MAX_LINE);
  if (!line) {
    fclose(f);
    return nnp_error(NNP_ERR_NOMEM, "out of memory reading '%s'", path);
  }
  nnp_status s = NNP_OK;
  int lineno = 0, version = -1;
  while (s == NNP_OK && fgets(line, TABLE_MAX_LINE, f)) {
    lineno++;
    size_t len = strlen(line);
    if (len && line[len - 1] == '\n') line[--len] = 0;
    else if (len == TABLE_MAX_LINE - 1) {
      s = nnp_error(NNP_ERR_FORMAT, "%s:%d: line too long", path, lineno);
      break;
    }
    if (lineno == 1) {
      if (sscanf(line, "nnperf-calibration-table %d", &version) != 1)
        s = nnp_error(NNP_ERR_FORMAT, "%s: not an nnperf calibration table (first line)", path);
      else if (version != NNP_CALIB_TABLE_VERSION)
        s = nnp_error(NNP_ERR_UNSUPPORTED, "%s: calibration table version %d, this nnperf reads %d", path, version,
                      NNP_CALIB_TABLE_VERSION);
      continue;
    }
    if (line[0] == 0 || line[0] == '#') continue;
    if (strncmp(line, "calibrator ", 11) == 0) {
      s = nnp_calibrator_parse(line + 11, &out->calibrator);
      if (s != NNP_OK) s = nnp_error_context(s, "%s:%d", path, lineno);
    } else if (strncmp(line, "samples ", 8) == 0) {
      if (sscanf(line + 8, "%d", &out->samples) != 1 || out->samples < 0)
        s = nnp_error(NNP_ERR_FORMAT, "%s:%d: bad sample count", path, lineno);
    } else if (strncmp(line, "range ", 6) == 0) {
      float lo, hi;
      int used = 0;
      if (sscanf(line + 6, "%f %f %n", &lo, &hi, &used) != 2 || used == 0 || line[6 + used] == 0 ||
          !isfinite(lo) || !isfinite(hi) || lo > hi)
        s = nnp_error(NNP_ERR_FORMAT, "%s:%d: expected 'range LO HI NAME' with finite LO <= HI", path, lineno);
      else if (out->n >= TABLE_MAX_ENTRIES)
        s = nnp_error(NNP_ERR_LIMIT, "%s: more than %d ranges", path, TABLE_MAX_ENTRIES);
      else
        s = table_add(out, line + 6 + used, lo, hi);
    } else {
      s = nnp_error(NNP_ERR_FORMAT, "%s:%d: unknown line '%.40s'", path, lineno, line);
    }
  }
  if (s == NNP_OK && version < 0) s = nnp_error(NNP_ERR_FORMAT, "%s: empty calibration table", path);
  nnp_free(line);
  fclose(f);
  if (s != NNP_OK) nnp_calib_table_free(out);
  return s;
}

/* ---- the calibration run ------------------------------------------------------------ */

static bool is_calibrated_op(const nnp_node *n) {
  if (n->domain && n->domain[0] && strcmp(n->domain, "ai.onnx") != 0) return false;
  return !strcmp(n->op_type, "Conv") || !strcmp(n->op_type, "Gemm") || !strcmp(n->op_type, "MatMul");
}

typedef struct observed {
  int value;
  nnp_hist h;
} observed;

/* Values to observe: input 0 and output 0 of every Conv/Gemm/MatMul, once each, and only
 * float activations (an initializer is a weight: it gets per-channel scales; a value of
 * another dtype is not quantized), the dtypes read from the graph's shape inference for
 * the input shape po gives. *obs is the caller's to free. */
static nnp_status pick_observed(const nnp_graph *g, const nnp_plan_options *po, observed **obs_out, int *n_out) {
  nnp_tensor in;
  nnp_graph_shapes *sh = NULL;
  NNP_TRY(nnp_graph_check_ops(g));
  NNP_TRY(nnp_resolve_input_shape(g, po, 0, &in));
  NNP_TRY(nnp_graph_shapes_infer(g, &in, &sh));
  observed *obs = nnp_calloc((size_t)(2 * g->n_nodes + 1), sizeof *obs);
  if (!obs) {
    nnp_graph_shapes_destroy(sh);
    return nnp_error(NNP_ERR_NOMEM, "out of memory for calibration statistics");
  }
  int n_obs = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const nnp_node *n = &g->nodes[i];
    if (!is_calibrated_op(n) || n->n_inputs < 1 || n->n_outputs < 1) continue;
    int vs[2] = {n->inputs[0], n->outputs[0]};
    for (int k = 0; k < 2; k++) {
      int v = vs[k];
      if (v < 0 || g->values[v].kind == NNP_VALUE_INITIALIZER) continue;
      const nnp_tensor *t = nnp_graph_shape(sh, v);
      if (!t || t->dtype != NNP_F32) continue;
      bool seen = false;
      for (int j = 0; j < n_obs && !seen; j++) seen = obs[j].value == v;
      if (seen) continue;
      obs[n_obs].value = v;
      nnp_hist_init(&obs[n_obs].h);
      n_obs++;
    }
  }
  nnp_graph_shapes_destroy(sh);
  *obs_out = obs;
  *n_out = n_obs;
  return NNP_OK;
}

nnp_status nnp_calibrate(const nnp_graph *g, const nnp_calib_set *set, nnp_calibrator c, double percentile,
                         nnp_calib_table *out) {
  memset(out, 0, sizeof *out);
  out->calibrator = c;
  if (g->n_inputs != 1)
    return nnp_error(NNP_ERR_UNSUPPORTED, "calibration needs a model with one input, this one has %d", g->n_inputs);
  if (c == NNP_CALIBRATOR_PERCENTILE && !(percentile > 0 && percentile <= 100))
    return nnp_error(NNP_ERR_INVALID, "percentile %g is not in (0, 100]", percentile);
  /* No graph passes (names and values stay the model's own: a fused Conv+Relu would hide
   * the Conv's output), one buffer per value and no batch lanes, so every value is still
   * there after the run. */
  nnp_plan_options po;
  nnp_plan_options_default(&po);
  po.passes = 0;
  po.memory_plan = false;
  po.batch_lanes = false; /* lanes would leave the batch plan's intermediates unwritten */
  int n_obs = 0;
  observed *obs = NULL;
  NNP_TRY(pick_observed(g, &po, &obs, &n_obs));
  nnp_plan *plan = NULL;
  nnp_status s = nnp_plan_compile(g, &po, &plan);
  for (int it = 0; s == NNP_OK && it < set->n; it++) {
    nnp_tensor x;
    s = nnp_calib_load(set, it, &x);
    if (s != NNP_OK) break;
    s = nnp_plan_set_input(plan, 0, &x);
    nnp_tensor_free(&x);
    if (s == NNP_OK) s = nnp_plan_run(plan);
    for (int j = 0; s == NNP_OK && j < n_obs; j++) {
      const nnp_tensor *t = nnp_plan_value(plan, obs[j].value);
      if (!t || !t->data) continue; /* evaluated at load time: no run-time value */
      nnp_hist_add(&obs[j].h, t->data, nnp_tensor_numel(t));
    }
    if (s != NNP_OK) s = nnp_error_context(s, "calibration sample '%s'", set->paths[it]);
  }
  out->samples = set->n;
  for (int j = 0; s == NNP_OK && j < n_obs; j++) {
    if (obs[j].h.count == 0) continue;
    float lo, hi;
    nnp_calib_range(&obs[j].h, c, percentile, &lo, &hi);
    s = table_add(out, g->values[obs[j].value].name, lo, hi);
  }
  nnp_plan_destroy(plan);
  nnp_free(obs);
  if (s != NNP_OK) nnp_calib_table_free(out);
  return s;
}

nnp_status nnp_weight_scales(const nnp_tensor *w, int axis, float *scales) {
  if (w->dtype != NNP_F32) return nnp_error(NNP_ERR_UNSUPPORTED, "weights must be float32, not %s", nnp_dtype_name(w->dtype));
  if (axis < 0 || axis >= w->rank) return nnp_error(NNP_ERR_INVALID, "axis %d out of range for rank %d", axis, w->rank);
  int64_t outer = 1, ch = w->dims[axis], inner = 1;
  for (int i = 0; i < axis; i++) outer *= w->dims[i];
  for (int i = axis + 1; i < w->rank; i++) inner *= w->dims[i];
  const float *x = w->data;
  for (int64_t c = 0; c < ch; c++) scales[c] = 0;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t c = 0; c < ch; c++)
      for (int64_t k = 0; k < inner; k++) {
        float a = fabsf(x[(o * ch + c) * inner + k]);
        if (a > scales[c]) scales[c] = a;
      }
  for (int64_t c = 0; c < ch; c++) scales[c] = scales[c] > 0 ? scales[c] / 127.0f : 1.0f;
  return NNP_OK;
}
