/* Accuracy of quantized variants against FP32 on held-out data. See quant_eval.h. */
#define _POSIX_C_SOURCE 200809L
#include "quant/quant_eval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nnperf/alloc.h"
#include "nnperf/passes.h"
#include "quant/qdq.h"
#include "util/regular_file.h"

#define LABELS_MAX_BYTES (1 << 20)
#define LABELS_MAX 100000

void nnp_labels_free(nnp_labels *l) {
  for (int i = 0; i < l->n; i++) nnp_free(l->files[i]);
  nnp_free(l->files);
  nnp_free(l->cls);
  memset(l, 0, sizeof *l);
}

nnp_status nnp_labels_load(const char *path, nnp_labels *out) {
  memset(out, 0, sizeof *out);
  char *text;
  size_t size;
  NNP_TRY(nnp_read_file(path, LABELS_MAX_BYTES, (void **)&text, &size));
  char *buf = nnp_realloc(text, size + 1);
  if (!buf) {
    nnp_free(text);
    return nnp_error(NNP_ERR_NOMEM, "out of memory reading %s", path);
  }
  buf[size] = 0;
  if (memchr(buf, 0, size)) {
    nnp_free(buf);
    return nnp_error(NNP_ERR_FORMAT, "%s: labels file holds a NUL byte", path);
  }
  nnp_status s = NNP_OK;
  int line_no = 0, cap = 0;
  for (char *line = buf, *next; s == NNP_OK && line && *line; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = 0;
    line_no++;
    char *p = line;
    while (*p == ' ' || *p == '\t' || *p == '\r') p++;
    if (!*p || *p == '#') continue;
    char *file = p;
    while (*p && *p != ' ' && *p != '\t') p++;
    if (*p) *p++ = 0;
    char *end;
    long cls = strtol(p, &end, 10);
    if (end == p || cls < 0 || cls > 1000000 || (*end && *end != ' ' && *end != '\t' && *end != '\r')) {
      s = nnp_error(NNP_ERR_FORMAT, "%s:%d: want 'FILE CLASS [name]' with CLASS a class index", path, line_no);
      break;
    }
    if (out->n == LABELS_MAX) {
      s = nnp_error(NNP_ERR_LIMIT, "%s: more than %d labels", path, LABELS_MAX);
      break;
    }
    if (out->n == cap) {
      int nc = cap ? cap * 2 : 32;
      char **nf = nnp_realloc(out->files, (size_t)nc * sizeof *nf);
      if (nf) out->files = nf;
      int *ncl = nf ? nnp_realloc(out->cls, (size_t)nc * sizeof *ncl) : NULL;
      if (ncl) out->cls = ncl;
      if (!nf || !ncl) {
        s = nnp_error(NNP_ERR_NOMEM, "out of memory reading %s", path);
        break;
      }
      cap = nc;
    }
    out->files[out->n] = nnp_strdup(file);
    if (!out->files[out->n]) {
      s = nnp_error(NNP_ERR_NOMEM, "out of memory reading %s", path);
      break;
    }
    out->cls[out->n++] = (int)cls;
  }
  nnp_free(buf);
  if (s == NNP_OK && out->n == 0) s = nnp_error(NNP_ERR_FORMAT, "%s: no labels", path);
  if (s != NNP_OK) nnp_labels_free(out);
  return s;
}

int nnp_labels_find(const nnp_labels *l, const char *file) {
  for (int i = 0; l && i < l->n; i++)
    if (!strcmp(l->files[i], file)) return l->cls[i];
  return -1;
}

void nnp_eval_set_free(nnp_eval_set *e) {
  for (int i = 0; e->inputs && i < e->n; i++) nnp_tensor_free(&e->inputs[i]);
  nnp_free(e->inputs);
  nnp_free(e->label);
  nnp_free(e->ref);
  nnp_free(e->ref_top1);
  memset(e, 0, sizeof *e);
}

static int64_t argmax(const float *v, int64_t n) {
  int64_t best = 0;
  for (int64_t k = 1; k < n; k++)
    if (v[k] > v[best]) best = k;
  return best;
}

static const char *base_name(const char *path) {
  const char *b = strrchr(path, '/');
  return b ? b + 1 : path;
}

/* The first output of p after a run, checked to be float32 with numel elements
 * (numel 0: any size, returned in *numel). */
static nnp_status first_output(nnp_plan *p, int64_t *numel, const float **out) {
  const nnp_tensor *y = nnp_plan_output(p, 0);
  if (!y || y->dtype != NNP_F32) return nnp_error(NNP_ERR_UNSUPPORTED, "the model's first output is not float32");
  int64_t n = nnp_tensor_numel(y);
  if (*numel && n != *numel)
    return nnp_error(NNP_ERR_SHAPE, "output has %lld elements, FP32 had %lld", (long long)n, (long long)*numel);
  if (n <= 0) return nnp_error(NNP_ERR_SHAPE, "the model's first output is empty");
  *numel = n;
  *out = y->data;
  return NNP_OK;
}

nnp_status nnp_eval_set_load(const nnp_graph *fp32, const nnp_plan_options *po, const nnp_calib_set *val,
                             const nnp_labels *labels, nnp_eval_set *out) {
  memset(out, 0, sizeof *out);
  if (val->n < 1) return nnp_error(NNP_ERR_INVALID, "the validation set is empty");
  out->inputs = nnp_calloc((size_t)val->n, sizeof *out->inputs);
  out->label = nnp_calloc((size_t)val->n, sizeof *out->label);
  out->ref_top1 = nnp_calloc((size_t)val->n, sizeof *out->ref_top1);
  if (!out->inputs || !out->label || !out->ref_top1) {
    nnp_eval_set_free(out);
    return nnp_error(NNP_ERR_NOMEM, "out of memory for the validation set");
  }
  out->n = val->n;
  nnp_plan *p = NULL;
  nnp_status s = nnp_plan_compile(fp32, po, &p);
  for (int i = 0; s == NNP_OK && i < val->n; i++) {
    s = nnp_calib_load(val, i, &out->inputs[i]);
    if (s == NNP_OK) s = nnp_plan_set_input(p, 0, &out->inputs[i]);
    if (s == NNP_OK) s = nnp_plan_run(p);
    const float *y;
    if (s == NNP_OK) s = first_output(p, &out->numel, &y);
    if (s != NNP_OK) break;
    if (!out->ref) {
      out->ref = nnp_malloc((size_t)val->n * (size_t)out->numel * sizeof *out->ref);
      if (!out->ref) {
        s = nnp_error(NNP_ERR_NOMEM, "out of memory for the FP32 outputs");
        break;
      }
    }
    memcpy(out->ref + (size_t)i * (size_t)out->numel, y, (size_t)out->numel * sizeof *y);
    out->ref_top1[i] = (int)argmax(y, out->numel);
    out->label[i] = nnp_labels_find(labels, base_name(val->paths[i]));
    if (out->label[i] >= 0) {
      out->n_labelled++;
      out->ref_correct += out->ref_top1[i] == out->label[i];
    }
  }
  nnp_plan_destroy(p);
  if (s != NNP_OK) nnp_eval_set_free(out);
  return s;
}

nnp_status nnp_eval_plan(nnp_plan *p, const nnp_eval_set *e, nnp_eval_result *r) {
  memset(r, 0, sizeof *r);
  r->cos_min = 1;
  double cos_sum = 0;
  for (int i = 0; i < e->n; i++) {
    NNP_TRY(nnp_plan_set_input(p, 0, &e->inputs[i]));
    NNP_TRY(nnp_plan_run(p));
    int64_t numel = e->numel;
    const float *y;
    NNP_TRY(first_output(p, &numel, &y));
    const float *ref = e->ref + (size_t)i * (size_t)numel;
    double dot = 0, na = 0, nb = 0;
    for (int64_t k = 0; k < numel; k++) {
      dot += (double)ref[k] * y[k];
      na += (double)ref[k] * ref[k];
      nb += (double)y[k] * y[k];
    }
    /* two all-zero outputs are the same output; one zero and one not share nothing */
    double cs = na > 0 && nb > 0 ? dot / sqrt(na * nb) : na == nb ? 1 : 0;
    if (!isfinite(cs)) cs = 0;
    int top1 = (int)argmax(y, numel);
    r->n++;
    r->agree += top1 == e->ref_top1[i];
    cos_sum += cs;
    if (cs < r->cos_min) r->cos_min = cs;
    if (e->label[i] >= 0) {
      r->labelled++;
      r->correct += top1 == e->label[i];
    }
  }
  r->cos_mean = r->n ? cos_sum / r->n : 0;
  return NNP_OK;
}

nnp_status nnp_eval_qdq(const nnp_graph *fp32, const nnp_calib_table *t, const char *const *keep, int n_keep,
                        const nnp_plan_options *po, const nnp_eval_set *e, nnp_eval_result *r, nnp_graph **qdq_out) {
  if (qdq_out) *qdq_out = NULL;
  nnp_graph *q = NULL;
  NNP_TRY(nnp_graph_clone(fp32, false, &q));
  nnp_qdq_report rep;
  nnp_plan *p = NULL;
  nnp_status s = nnp_qdq_rewrite(q, t, keep, n_keep, &rep);
  if (s == NNP_OK) s = nnp_plan_compile(q, po, &p);
  if (s == NNP_OK) s = nnp_eval_plan(p, e, r);
  nnp_plan_destroy(p);
  if (s == NNP_OK && qdq_out) *qdq_out = q;
  else nnp_graph_destroy(q);
  return s;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

nnp_status nnp_time_interleaved(nnp_plan *a, nnp_plan *b, const nnp_tensor *x, int reps, double *p50_a,
                                double *p50_b) {
  if (reps < 1) return nnp_error(NNP_ERR_INVALID, "timing needs at least one run");
  double *ta = nnp_malloc((size_t)reps * sizeof *ta), *tb = nnp_malloc((size_t)reps * sizeof *tb);
  nnp_status s = ta && tb ? NNP_OK : nnp_error(NNP_ERR_NOMEM, "out of memory for timings");
  if (s == NNP_OK) s = nnp_plan_set_input(a, 0, x);
  if (s == NNP_OK) s = nnp_plan_set_input(b, 0, x);
  if (s == NNP_OK) s = nnp_plan_run(a); /* warm-up: first-touch page faults, caches */
  if (s == NNP_OK) s = nnp_plan_run(b);
  for (int i = 0; s == NNP_OK && i < reps; i++) {
    double t0 = now_ms();
    s = nnp_plan_run(a);
    double t1 = now_ms();
    if (s == NNP_OK) s = nnp_plan_run(b);
    double t2 = now_ms();
    ta[i] = t1 - t0;
    tb[i] = t2 - t1;
  }
  if (s == NNP_OK) {
    *p50_a = median(ta, reps);
    *p50_b = median(tb, reps);
  }
  nnp_free(ta);
  nnp_free(tb);
  return s;
}
