/* The inference workload of the sweep library (nnperf/sweep.h): one row per backend x
 * precision x batch x threads, each measured by nnp_run_row_processes in fresh worker
 * processes, outputs compared with the reference row (the first ok native fp32 row of
 * the same batch and scenario). Row order: variant (when the spec has variants), then
 * batch, then threads, then precision, then backend, so the reference row of a batch
 * comes before the rows compared with it. */
#define _GNU_SOURCE /* sched_getaffinity */
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/accuracy.h"
#include "bench/orchestrator.h"
#include "bench/resume.h"
#include "bench/sweep_inputs.h"
#include "bench/timing_loop.h"
#include "nnperf/alloc.h"
#include "nnperf/backend.h"
#include "nnperf/onnx.h"
#include "nnperf/sweep.h"
#include "zoo/zoo_file.h"

/* each native / torch-compile row may get a warm-cache twin, and each of those a realistic one */
#define MAX_BACKENDS (4 * NNP_SWEEP_MAX_AXIS)

typedef struct inference_state {
  const nnp_sweep_spec *spec;
  char model_path[4096], tmpdir[256];
  nnp_graph *g;
  char self[4096]; /* this binary: the C worker is `nnperf __worker` */
  int n_backends;
  const nnp_backend_entry *backends[MAX_BACKENDS];
  int with_cache[MAX_BACKENDS], realistic[MAX_BACKENDS], available[MAX_BACKENDS];
  char unavailable_why[MAX_BACKENDS][256];
  int n_prec, n_batch, n_threads, n_variants, n_rows;
  nnp_precision precisions[NNP_SWEEP_MAX_AXIS];
  int64_t batches[NNP_SWEEP_MAX_AXIS];
  int threads[NNP_SWEEP_MAX_AXIS];
  nnp_sweep_inputs *inputs; /* one per batch */
  char inductor_root[64];   /* per-row Inductor caches of this sweep (inductor_row_dir); "" none yet */
} inference_state;

/* Where row index sits on the axes. */
typedef struct row_point {
  int k, pi, ti, bi, vi;
} row_point;

/* One row's worker request and the storage it points into. */
typedef struct row_call {
  nnp_row_request req;
  char opts[512];
  const char *ext_argv[4];
  int int8_row; /* --int8-model: the worker runs the QDQ file at fp32 I/O, the row is int8 */
  int cached;   /* the plan-cache twin */
  const char *variant; /* the spec's variant name, or NULL */
} row_call;

/* The backend whose rows may get a warm-cache twin (--cache): its cache, cold and warm. */
static int has_cache_twin(const char *backend) { return !strcmp(backend, "native") || !strcmp(backend, "torch-compile"); }

static int allowed_cpus(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

static row_point point_of(const inference_state *st, int index) {
  row_point p;
  p.k = index % st->n_backends;
  index /= st->n_backends;
  p.pi = index % st->n_prec;
  index /= st->n_prec;
  p.ti = index % st->n_threads;
  index /= st->n_threads;
  p.bi = index % st->n_batch;
  p.vi = index / st->n_batch;
  return p;
}

/* Backends by name (every visible one when none is named), each native one followed by
 * its plan-cache twin when spec->cache_dir is set, and whether each is available. */
static nnp_status open_backends(inference_state *st) {
  const nnp_sweep_spec *s = st->spec;
  if (s->n_backends > NNP_SWEEP_MAX_AXIS) return nnp_error(NNP_ERR_LIMIT, "sweep: more than %d backends", NNP_SWEEP_MAX_AXIS);
  for (int k = 0; k < s->n_backends; k++) {
    const nnp_backend_entry *e = nnp_backend_find(s->backends[k]);
    if (!e) return nnp_error(NNP_ERR_INVALID, "sweep: unknown backend '%s' (nnperf backends lists them)", s->backends[k]);
    st->backends[st->n_backends++] = e;
  }
  for (int k = 0; !s->n_backends && k < nnp_backend_count() && st->n_backends < NNP_SWEEP_MAX_AXIS; k++)
    if (!nnp_backend_get(k)->hidden) st->backends[st->n_backends++] = nnp_backend_get(k);
  /* --cache DIR: the twin runs right after its row (native, torch-compile), so the table
   * shows cold start without and with a warm cache side by side; --realistic: every row
   * is followed by its twin with fresh inputs per iteration */
  const nnp_backend_entry *named[MAX_BACKENDS];
  int n = st->n_backends;
  memcpy(named, st->backends, sizeof *named * (size_t)n);
  st->n_backends = 0;
  for (int k = 0; k < n; k++)
    for (int cached = 0; cached <= (s->cache_dir && has_cache_twin(named[k]->name)); cached++)
      for (int real = 0; real <= (int)s->realistic; real++) {
        st->backends[st->n_backends] = named[k];
        st->with_cache[st->n_backends] = cached;
        st->realistic[st->n_backends++] = real;
      }
  for (int k = 0; k < st->n_backends; k++) { /* asked once per backend */
    char version[256];
    st->available[k] = nnp_backend_probe(st->backends[k], version, sizeof version) == NNP_OK;
    snprintf(st->unavailable_why[k], sizeof st->unavailable_why[k], "%s", st->available[k] ? "" : nnp_last_error());
  }
  return NNP_OK;
}

/* The axes with their defaults; --shape static: makes one batch, its first dim. */
static nnp_status open_axes(inference_state *st, int *static_rank, int64_t *static_dims) {
  const nnp_sweep_spec *s = st->spec;
  st->n_prec = s->n_precisions ? s->n_precisions : 1;
  st->n_batch = s->n_batches ? s->n_batches : 1;
  st->n_threads = s->n_threads ? s->n_threads : 1;
  if (st->n_prec > NNP_SWEEP_MAX_AXIS || st->n_batch > NNP_SWEEP_MAX_AXIS || st->n_threads > NNP_SWEEP_MAX_AXIS)
    return nnp_error(NNP_ERR_LIMIT, "sweep: more than %d values on an axis", NNP_SWEEP_MAX_AXIS);
  for (int i = 0; i < st->n_prec; i++) st->precisions[i] = s->n_precisions ? s->precisions[i] : NNP_FP32;
  for (int i = 0; i < st->n_batch; i++) st->batches[i] = s->n_batches ? s->batches[i] : 1;
  for (int i = 0; i < st->n_threads; i++) st->threads[i] = s->n_threads ? s->threads[i] : allowed_cpus();
  *static_rank = -1; /* none; 0 is a scalar */
  if (s->static_shape) {
    int rank = 0;
    if (strcmp(s->static_shape, "scalar")) {
      long long d;
      char *end;
      for (const char *p = s->static_shape; *p; p = *end ? end + 1 : end) {
        d = strtoll(p, &end, 10);
        if (end == p || d <= 0 || rank == NNP_MAX_RANK || (*end && !strchr("xX,", *end)))
          return nnp_error(NNP_ERR_INVALID, "sweep: static shape '%s': wants positive DIMS like 1x3x224x224",
                           s->static_shape);
        static_dims[rank++] = d;
      }
    }
    *static_rank = rank;
    st->n_batch = 1;
    st->batches[0] = rank ? static_dims[0] : 1;
  }
  if (s->dynamic_shape && !nnp_dynamic_spec_valid(s->dynamic_shape))
    return nnp_error(NNP_ERR_INVALID, "sweep: dynamic shape '%s': wants dims like Nx3x[160..320]x[160..320]",
                     s->dynamic_shape);
  st->n_variants = s->n_variants > 0 ? s->n_variants : 1;
  if (s->n_variants > NNP_SWEEP_MAX_VARIANTS)
    return nnp_error(NNP_ERR_LIMIT, "sweep: more than %d variants", NNP_SWEEP_MAX_VARIANTS);
  st->n_rows = st->n_backends * st->n_prec * st->n_batch * st->n_threads * st->n_variants;
  return NNP_OK;
}

/* The model as a file the workers open, loaded once here for its input signature, and
 * the seeded inputs of every batch. An error names the model. */
static nnp_status open_model(inference_state *st, int static_rank, const int64_t *static_dims) {
  const nnp_sweep_spec *s = st->spec;
  NNP_TRY(nnp_zoo_model_file(s->model, "bench", st->model_path, sizeof st->model_path, st->tmpdir, sizeof st->tmpdir));
  NNP_TRY(nnp_onnx_load(st->model_path, NULL, &st->g));
  if (st->g->n_inputs > NNP_PLAN_MAX_BINDINGS)
    return nnp_error(NNP_ERR_LIMIT, "model has %d inputs; nnperf bench handles up to %d", st->g->n_inputs,
                     NNP_PLAN_MAX_BINDINGS);
  st->inputs = nnp_calloc((size_t)st->n_batch, sizeof *st->inputs);
  if (!st->inputs) return nnp_error(NNP_ERR_NOMEM, "sweep: no memory for the inputs");
  for (int b = 0; b < st->n_batch; b++) {
    nnp_status r = nnp_sweep_inputs_make(st->g, &s->plan, st->batches[b], static_rank, static_dims, s->dynamic_shape,
                                         s->seed, &st->inputs[b]);
    if (r != NNP_OK) return nnp_error_context(r, "%s", s->model);
  }
  return NNP_OK;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(path) != 0 && errno != ENOENT;
}

static void inference_close(void *state) {
  inference_state *st = state;
  if (!st) return;
  for (int b = 0; st->inputs && b < st->n_batch; b++) nnp_sweep_inputs_free(&st->inputs[b]);
  nnp_free(st->inputs);
  nnp_graph_destroy(st->g);
  if (st->inductor_root[0]) nftw(st->inductor_root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  if (st->model_path[0]) nnp_zoo_model_file_remove(st->model_path, st->tmpdir);
  nnp_free(st);
}

static nnp_status inference_open(const nnp_sweep_spec *spec, nnp_bench_result *res, void **state) {
  inference_state *st = nnp_calloc(1, sizeof *st);
  if (!st) return nnp_error(NNP_ERR_NOMEM, "sweep: no memory");
  st->spec = spec;
  ssize_t sl = readlink("/proc/self/exe", st->self, sizeof st->self - 1);
  st->self[sl > 0 ? sl : 0] = 0;
  int static_rank = -1;
  int64_t static_dims[NNP_MAX_RANK];
  nnp_status s = open_backends(st);
  if (s == NNP_OK) s = open_axes(st, &static_rank, static_dims);
  if (s == NNP_OK) s = open_model(st, static_rank, static_dims);
  if (s != NNP_OK) {
    inference_close(st);
    return s;
  }
  /* one max_rel tolerance when one precision judged by max_rel is measured; otherwise each
   * row's precision sets its criterion (int8/mixed: cosine, no max_rel bound) */
  res->accuracy_rtol = -1;
  if (st->n_prec == 1) {
    nnp_accuracy_criterion only = nnp_accuracy_default_criterion(st->precisions[0]);
    res->accuracy_rtol = isfinite(only.rtol) ? only.rtol : -1;
  }
  *state = st;
  return NNP_OK;
}

static int inference_n_rows(void *state) { return ((inference_state *)state)->n_rows; }

static void append_opt(row_call *c, const char *fmt, const char *a, unsigned x, int y) {
  size_t ol = strlen(c->opts);
  snprintf(c->opts + ol, sizeof c->opts - ol, "%s", ol ? "," : "");
  ol = strlen(c->opts);
  if (a) snprintf(c->opts + ol, sizeof c->opts - ol, fmt, a);
  else snprintf(c->opts + ol, sizeof c->opts - ol, fmt, x, y);
}

/* torch-compile rows without --cache: an empty Inductor cache folder per row under one
 * temporary folder, so the row's first process compiles cold (its phases and cold start
 * are the cold ones) and the others reuse it instead of compiling again; removed when the
 * sweep closes. None when it cannot be made (then each worker uses its own fresh one). */
static void inductor_row_dir(inference_state *st, int index, row_call *c) {
  if (!st->inductor_root[0]) {
    snprintf(st->inductor_root, sizeof st->inductor_root, "/tmp/nnperf-inductor-XXXXXX");
    if (!mkdtemp(st->inductor_root)) st->inductor_root[0] = 0;
  }
  char dir[128];
  snprintf(dir, sizeof dir, "%s/row%d", st->inductor_root, index);
  if (st->inductor_root[0]) append_opt(c, "cache_dir=%s", dir, 0, 0);
}

/* The worker request of row index: options for its backend (the spec's B:K=V..., the
 * native engine's passes, the plan cache, the torch module), inputs of its batch. */
static void build_call(inference_state *st, int index, row_call *c) {
  const nnp_sweep_spec *s = st->spec;
  row_point p = point_of(st, index);
  const nnp_backend_entry *e = st->backends[p.k];
  memset(c, 0, sizeof *c);
  size_t bl = strlen(e->name);
  if (s->backend_options && !strncmp(s->backend_options, e->name, bl) && s->backend_options[bl] == ':')
    snprintf(c->opts, sizeof c->opts, "%s", s->backend_options + bl + 1);
  if (!strcmp(e->name, "native") && (s->plan.passes != NNP_PASS_DEFAULT || !s->plan.memory_plan))
    append_opt(c, "passes=0x%x,memory_plan=%d", NULL, s->plan.passes, s->plan.memory_plan ? 1 : 0);
  c->cached = st->with_cache[p.k];
  int compile = !strcmp(e->name, "torch-compile");
  if (c->cached) append_opt(c, compile ? "cache_dir=%s/inductor" : "cache_dir=%s", s->cache_dir, 0, 0);
  else if (compile && !strstr(c->opts, "cache_dir=")) inductor_row_dir(st, index, c);
  if (s->torch_model && !strncmp(e->name, "torch", 5)) append_opt(c, "model=%s", s->torch_model, 0, 0);
  const nnp_sweep_variant *v = s->n_variants > 0 ? &s->variants[p.vi] : NULL;
  if (v && v->options && v->options[0]) append_opt(c, "%s", v->options, 0, 0);
  c->variant = v ? v->name : NULL;
  const nnp_sweep_inputs *in = &st->inputs[p.bi];
  int threads = v && v->threads > 0 ? v->threads : st->threads[p.ti];
  c->req = (nnp_row_request){.worker_exe = st->self, .backend = e->name, .model_path = st->model_path,
                             .options = c->opts, .precision = st->precisions[p.pi], .threads = threads,
                             .batch = st->batches[p.bi], .scenario = in->scenario, .n_inputs = in->n_inputs,
                             .inputs = in->inputs, .input_names = in->names, .dyn_input = s->dynamic_shape ? 0 : -1,
                             .dyn_dims = in->dyn_dims, .loop = s->loop, .seed = s->seed, .timeout_s = s->timeout_s,
                             .mem_limit = s->mem_limit_bytes, .pin_cpus = s->pin ? threads : 0,
                             .realistic = st->realistic[p.k],
                             .device = s->device && !strncmp(e->name, "torch", 5) ? s->device : "cpu"};
  c->int8_row = s->int8_model && st->precisions[p.pi] == NNP_INT8;
  if (c->int8_row) { /* as given: fp32 I/O, int8 inside; never the reference, int8's tolerance */
    c->req.model_path = s->int8_model;
    c->req.precision = NNP_FP32;
  }
  if (e->kind == NNP_BACKEND_EXTERNAL) {
    c->ext_argv[0] = nnp_external_python_for(e);
    c->ext_argv[1] = "-m";
    c->ext_argv[2] = "nnperf_worker";
    c->req.external_argv = c->ext_argv;
    c->req.pythonpath = nnp_external_pythonpath();
  }
}

/* The row's recorded configuration: an --int8-model row is int8, the twin says "cache", a
 * variant adds its name. */
static void final_labels(const row_call *c, nnp_bench_row *row) {
  if (c->int8_row) {
    row->precision = NNP_INT8;
    snprintf(row->label, sizeof row->label, "%s int8 t%d b%lld", row->backend, row->threads, (long long)row->batch);
  }
  size_t ll = strlen(row->label);
  snprintf(row->label + ll, sizeof row->label - ll, "%s%s%s", c->cached ? " cache" : "", c->variant ? " " : "",
           c->variant ? c->variant : "");
}

static nnp_status inference_plan_row(void *state, int index, nnp_bench_row *row) {
  row_call c;
  build_call(state, index, &c);
  nnp_row_init(&c.req, row);
  final_labels(&c, row);
  return NNP_OK;
}

/* One untimed inference with the cache option fills the plan cache, so that every
 * measured process of the cached row starts warm (its cold start is the warm-cache one;
 * the row before it, without the cache, holds the other). */
static nnp_status prime_plan_cache(const nnp_row_request *req) {
  nnp_bench_row primed;
  NNP_TRY(nnp_run_row_once(req, &primed));
  nnp_status st = primed.status == NNP_ROW_OK ? NNP_OK
                                               : nnp_error(NNP_ERR_INTERNAL, "filling the plan cache: %s", primed.reason);
  nnp_bench_row_free(&primed);
  return st;
}

/* The orchestrator's progress, told as the sweep's (row number and label added). */
typedef struct progress_relay {
  nnp_sweep_progress_fn fn;
  void *ud;
  int row, n_rows;
  const char *label;
} progress_relay;

static void relay_progress(void *ud, const char *phase, int done, int total) {
  progress_relay *r = ud;
  if (r->fn) r->fn(r->ud, r->row, r->n_rows, r->label, phase, done, total);
}

static nnp_status inference_run_row(void *state, int index, nnp_bench_row *row, nnp_sweep_progress_fn progress,
                                    void *ud) {
  inference_state *st = state;
  row_call c;
  build_call(st, index, &c);
  int k = point_of(st, index).k;
  nnp_row_init(&c.req, row);
  char label[96];
  snprintf(label, sizeof label, "%s%s%s%s", row->label, c.cached ? " cache" : "", c.variant ? " " : "",
           c.variant ? c.variant : "");
  progress_relay relay = {progress, ud, index + 1, st->n_rows, label};
  if (!st->available[k]) { /* recorded, never faked: the reason and the install hint */
    row->status = NNP_ROW_UNAVAILABLE;
    snprintf(row->reason, sizeof row->reason, "%s (install: %s)", st->unavailable_why[k], st->backends[k]->install_hint);
  } else if ((c.cached && prime_plan_cache(&c.req) != NNP_OK) ||
             nnp_run_row_processes(&c.req, st->spec->processes, row, relay_progress, &relay) != NNP_OK) {
    nnp_bench_row_free(row);
    nnp_row_init(&c.req, row);
    row->status = NNP_ROW_FAILED;
    snprintf(row->reason, sizeof row->reason, "%s", nnp_last_error());
  }
  final_labels(&c, row);
  return NNP_OK;
}

/* A kept reference row (ok native fp32) has no outputs in the document, yet the rows
 * still to run are compared with them: one inference gives them back (seeded inputs). */
static nnp_status inference_resume_row(void *state, int index, nnp_bench_row *row) {
  inference_state *st = state;
  const nnp_bench_result *done = st->spec->resume;
  if (row->status != NNP_ROW_OK || strcmp(row->backend, "native") || row->precision != NNP_FP32 ||
      done->n_rows >= st->n_rows)
    return NNP_OK;
  row_call c;
  build_call(st, index, &c);
  if (nnp_resume_fetch_outputs(&c.req, row) != NNP_OK)
    fprintf(stderr, "nnperf bench: --resume: no reference outputs from %s: %s\n", row->label, nnp_last_error());
  return NNP_OK;
}

/* The lower of a and b, NaN if either is (a NaN cosine is the worst agreement). */
static double lower(double a, double b) { return a != a || b != b ? NAN : a < b ? a : b; }

/* row against the reference's first outputs: the first inference, and for static shapes
 * the last one too (same inputs, so it must agree as well: a backend whose results drift
 * over iterations fails here), keeping the worse of both. */
static void compare_with_reference(nnp_bench_row *row, const nnp_bench_row *ref, int dynamic) {
  nnp_accuracy_criterion crit = nnp_accuracy_default_criterion(row->precision);
  nnp_accuracy_compare(row->first_outputs, ref->first_outputs, ref->n_outputs, &crit, &row->acc);
  if (!dynamic) {
    nnp_accuracy last;
    nnp_accuracy_compare(row->last_outputs, ref->first_outputs, ref->n_outputs, &crit, &last);
    nnp_accuracy first = row->acc;
    if (!(last.max_rel <= first.max_rel) && first.max_rel == first.max_rel) row->acc = last;
    /* the lower of both for the measures within_tol also judges (NaN stays) */
    row->acc.cosine = lower(first.cosine, last.cosine);
    row->acc.top1 = lower(first.top1, last.top1);
    row->acc.top5 = lower(first.top5, last.top5);
    row->acc.within_tol = row->acc.within_tol && last.within_tol;
  }
  snprintf(row->acc.reference, sizeof row->acc.reference, "%s", ref->label);
}

/* The first earlier ok native row of precision p with outputs, same batch and scenario. */
static const nnp_bench_row *find_reference(const nnp_bench_result *res, int index, nnp_precision p) {
  const nnp_bench_row *row = &res->rows[index];
  for (int r = 0; r < index; r++) {
    const nnp_bench_row *ref = &res->rows[r];
    if (ref->status == NNP_ROW_OK && !strcmp(ref->backend, "native") && ref->precision == p &&
        ref->batch == row->batch && !strcmp(ref->scenario, row->scenario) && ref->n_outputs)
      return ref;
  }
  return NULL;
}

/* (largest - smallest) / smallest of the per-process medians of a row; 0 for one process. */
static double process_spread(const nnp_bench_row *r) {
  double lo = 0, hi = 0;
  for (int p = 0, off = 0; p < r->n_processes; off += r->process_samples[p], p++) {
    int n = r->process_samples[p];
    if (n <= 0) return 0;
    double *tmp = malloc(sizeof(double) * (size_t)n);
    if (!tmp) return 0;
    double m = nnp_median(r->samples + off, n, tmp);
    free(tmp);
    if (p == 0 || m < lo) lo = m;
    if (p == 0 || m > hi) hi = m;
  }
  return lo > 0 ? (hi - lo) / lo : 0;
}

/* Labels name rows (baseline, accuracy reference): a repeated one gets " #2", " #3"... */
static void unique_label(nnp_bench_result *res, int index) {
  nnp_bench_row *row = &res->rows[index];
  char label[96];
  snprintf(label, sizeof label, "%s", row->label);
  int same = 0;
  size_t ll = strlen(label);
  for (int r = 0; r < index; r++) {
    const char *other = res->rows[r].label;
    if (!strncmp(other, label, ll) && (other[ll] == 0 || !strncmp(other + ll, " #", 2))) same++;
  }
  if (same) snprintf(row->label, sizeof row->label, "%s #%d", label, same + 1);
}

static void inference_finish_row(void *state, nnp_bench_result *res, int index, bool kept) {
  inference_state *st = state;
  nnp_bench_row *row = &res->rows[index];
  unique_label(res, index);
  const nnp_bench_row *ref = find_reference(res, index, NNP_FP32);
  if (ref && row->status == NNP_ROW_OK && row->n_outputs == ref->n_outputs)
    compare_with_reference(row, ref, st->spec->dynamic_shape != NULL);
  /* --int8-model: another backend's int8 row against nnperf's own int8 outputs on the
   * same QDQ file (top-1, cosine), beside its accuracy against native fp32 */
  row_call c;
  build_call(st, index, &c);
  const nnp_bench_row *ref8 = c.int8_row && row->status == NNP_ROW_OK && strcmp(row->backend, "native")
                                  ? find_reference(res, index, NNP_INT8) : NULL;
  if (ref8 && ref8->n_outputs == row->n_outputs) {
    nnp_accuracy_criterion crit = nnp_accuracy_default_criterion(NNP_INT8);
    nnp_accuracy_compare(row->first_outputs, ref8->first_outputs, ref8->n_outputs, &crit, &row->int8_agree);
    snprintf(row->int8_agree.reference, sizeof row->int8_agree.reference, "%s", ref8->label);
  }
  if (!kept && row->status == NNP_ROW_OK && row->stats.cv > 0.1) res->noisy = true;
  double spread = kept ? 0 : process_spread(row); /* a kept row has its note already */
  if (row->status == NNP_ROW_OK && spread > 0.05) { /* the processes disagree: say so */
    res->noisy = true;
    size_t nl = strlen(row->note);
    snprintf(row->note + nl, sizeof row->note - nl, "%sthe medians of its %d processes differ by %.0f%%",
             nl ? "; " : "", row->n_processes, spread * 100);
  }
}

const nnp_sweep_workload nnp_sweep_inference = {
    .kind = "bench",
    .open = inference_open,
    .n_rows = inference_n_rows,
    .plan_row = inference_plan_row,
    .run_row = inference_run_row,
    .resume_row = inference_resume_row,
    .finish_row = inference_finish_row,
    .close = inference_close,
};
