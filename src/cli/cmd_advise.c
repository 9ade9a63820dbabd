/* nnperf advise: the seed's progressive selection flow as one command. Each step is a
 * sweep of the sweep library (nnperf/sweep.h: the same worker isolation, statistics and
 * accuracy check against native fp32 as nnperf bench), its rows judged in memory; the
 * INT8 step exports its model through the quantize library (src/quant). The first
 * configuration that meets the targets ends the flow. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/orchestrator.h"
#include "cli/cli.h"
#include "nnperf/backend.h"
#include "nnperf/bench.h"
#include "nnperf/npy.h"
#include "nnperf/onnx.h"
#include "nnperf/sweep.h"
#include "quant/calib_data.h"
#include "quant/calibrate.h"
#include "quant/qdq.h"
#include "nnperf/zoo.h"

#define MAX_CANDIDATES 32
/* A row with fewer steady-state samples is shown but never ranked: its P99 is the
 * largest of a handful of samples (with one or two, P50 equals P99), not a tail. */
#define MIN_RANK_SAMPLES 10
#define N_STEPS 5

static const char advise_help[] =
    "usage: nnperf advise MODEL --p99 TIME [options]\n\n"
    "Finds the first configuration that meets a latency (and memory) target at an accuracy\n"
    "tolerance, walking the steps from a general framework to specialised ones:\n"
    "  1 baseline        torch-eager if available, else the native engine with no graph passes\n"
    "  2 onnxruntime     ort-cpu\n"
    "  3 hardware        tensorrt, ort-trt (where available), openvino, xnnpack, native optimised\n"
    "  4 static shape    the fastest accurate backend so far with every input dimension fixed\n"
    "  5 int8            an INT8 QDQ export (nnperf quantize) run by ort-cpu, openvino, native\n"
    "Every step is an nnperf bench run (fresh worker processes, raw samples); its outputs are\n"
    "compared with native fp32 on the same seeded inputs. The flow stops at the first\n"
    "configuration that meets every target; the evidence table shows every row measured.\n\n"
    "targets:\n"
    "  --p99 TIME             P99 latency target, e.g. 10ms, 500us, 0.2s (a bare number is ms)\n"
    "  --max-mem SIZE         peak memory of the worker process, e.g. 512M, 2G (default: none)\n"
    "  --accuracy-tol TOL     max relative output error vs native fp32, e.g. 1% or 0.01\n"
    "                         (default 1%, for fp32/fp16 rows); int8 rows are judged by\n"
    "                         bench's int8 tolerance (output cosine >= 0.99, top-1 over 10+\n"
    "                         rows >= 90%), and by TOL too when it is given\n\n"
    "configuration:\n"
    "  --threads N            intra-op threads (default: all allowed CPUs, as bench)\n"
    "  --batch N              batch size (default 1)\n"
    "  --steps LIST           steps to run, e.g. 2,3 (default 1,2,3,4,5)\n"
    "  --calib DIR            INT8 calibration data (images or .npy); default: seeded random\n"
    "                         inputs, which says nothing about real-data accuracy\n\n"
    "how long each step measures (short by default: this is a search, not the final number):\n"
    "  --iterations N         steady-state iterations per row (default 200)\n"
    "  --max-time S           cap on the steady state per row (default 3)\n"
    "  --warmup N             warm-up iterations (default 5)\n"
    "  --processes N          worker processes per row (default 1)\n\n"
    "output:\n"
    "  --json FILE            the targets, every step's rows and the recommendation\n"
    "  --quiet                no progress on stderr\n\n"
    "exit status: 0 a configuration meets the targets, 1 none does (the best candidate is\n"
    "named) or the model is at fault, 2 bad command line\n\n"
    "examples:\n"
    "  nnperf advise zoo:resnet18 --p99 20ms\n"
    "  nnperf advise model.onnx --p99 5ms --max-mem 512M --accuracy-tol 0.5% --json advice.json\n";

typedef struct candidate {
  int step;
  char label[96];
  char backend[32];
  char status[16];   /* ok, failed, unavailable, ... */
  char why[600];     /* empty when it meets the targets */
  double p50_s, p99_s;
  int64_t mem_bytes; /* -1 when not measured */
  double max_rel;    /* NAN when not compared */
  int accuracy_ok, meets;
  int few_samples;   /* too few samples to rank (MIN_RANK_SAMPLES) */
  char command[1400]; /* nnperf bench ... that reproduces the row with its accuracy check */
} candidate;

typedef struct step_info {
  const char *name;
  int ran;
  char note[512]; /* what was run, or why not */
} step_info;

typedef struct advise_ctx {
  const char *model;      /* as the user gave it (zoo:NAME or a path) */
  char model_path[4096];  /* a file the workers can open */
  char tmpdir[256];
  double p99_s, tol;
  bool tol_given;         /* --accuracy-tol given: it then bounds int8 rows too */
  int64_t max_mem;        /* 0: no memory target */
  long long threads, batch, iterations, warmup, processes;
  double max_time;
  const char *calib;
  int quiet;
  int noisy;              /* a step's bench run found the machine busy or the rows noisy */
  char static_dims[128];
  candidate cand[MAX_CANDIDATES];
  int n_cand;
  step_info steps[N_STEPS];
} advise_ctx;

static int parse_time_s(const char *s, double *out) {
  char *end;
  double v = strtod(s, &end);
  if (end == s || !(v > 0)) return 0;
  double scale = 1e-3;
  if (!*end || !strcmp(end, "ms")) scale = 1e-3;
  else if (!strcmp(end, "us")) scale = 1e-6;
  else if (!strcmp(end, "s")) scale = 1;
  else return 0;
  *out = v * scale;
  return 1;
}

static int parse_size(const char *s, int64_t *out) {
  char *end;
  double v = strtod(s, &end);
  if (end == s || !(v > 0)) return 0;
  double scale = 1;
  if (*end == 'K' || *end == 'k') scale = 1024.0, end++;
  else if (*end == 'M' || *end == 'm') scale = 1024.0 * 1024, end++;
  else if (*end == 'G' || *end == 'g') scale = 1024.0 * 1024 * 1024, end++;
  if (*end == 'i') end++;
  if (*end == 'B') end++;
  if (*end) return 0;
  *out = (int64_t)(v * scale);
  return 1;
}

static int parse_tol(const char *s, double *out) {
  char *end;
  double v = strtod(s, &end);
  if (end == s || !(v >= 0)) return 0;
  if (!strcmp(end, "%")) v /= 100;
  else if (*end) return 0;
  *out = v;
  return 1;
}

static int parse_count(const char *s, long long lo, long long hi, long long *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) return 0;
  *out = v;
  return 1;
}

static void say(const advise_ctx *c, const char *fmt, ...) {
  if (c->quiet) return;
  va_list ap;
  va_start(ap, fmt);
  fputs("nnperf advise: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

static int available(const char *name, char *why, size_t n) {
  const nnp_backend_entry *e = nnp_backend_find(name);
  char version[256];
  if (!e) {
    snprintf(why, n, "not built into this nnperf");
    return 0;
  }
  if (nnp_backend_probe(e, version, sizeof version) == NNP_OK) return 1;
  snprintf(why, n, "%s", nnp_last_error());
  return 0;
}

/* The model as a file the workers can open (zoo models are written to a temp folder),
 * and the fixed dims of its first input at --batch, for the static-shape step. */
static nnp_status prepare_model(advise_ctx *c) {
  snprintf(c->tmpdir, sizeof c->tmpdir, "/tmp/nnperf-advise-XXXXXX");
  if (!mkdtemp(c->tmpdir)) {
    c->tmpdir[0] = 0;
    return nnp_error(NNP_ERR_IO, "cannot create a temporary folder: %s", strerror(errno));
  }
  if (!strncmp(c->model, "zoo:", 4)) {
    nnp_graph *g = NULL;
    nnp_zoo_options zo;
    nnp_zoo_options_default(&zo);
    NNP_TRY(nnp_zoo_build(c->model + 4, &zo, &g));
    snprintf(c->model_path, sizeof c->model_path, "%s/%s.onnx", c->tmpdir, c->model + 4);
    nnp_status s = nnp_onnx_save(g, c->model_path);
    nnp_graph_destroy(g);
    NNP_TRY(s);
  } else {
    snprintf(c->model_path, sizeof c->model_path, "%s", c->model);
  }
  cli_model_opts mo;
  cli_model_opts_init(&mo);
  mo.model = c->model_path;
  mo.batch = c->batch;
  nnp_graph *g = NULL;
  NNP_TRY(cli_load_graph(&mo, &g));
  cli_apply_batch(&mo, g);
  nnp_tensor t;
  memset(&t, 0, sizeof t);
  nnp_status s = g->n_inputs > 0 ? nnp_resolve_input_shape(g, &mo.plan, 0, &t)
                                 : nnp_error(NNP_ERR_INVALID, "model has no inputs");
  if (s == NNP_OK) {
    size_t used = 0;
    for (int d = 0; d < t.rank && used + 24 < sizeof c->static_dims; d++)
      used += (size_t)snprintf(c->static_dims + used, sizeof c->static_dims - used, "%s%lld", d ? "x" : "",
                               (long long)t.dims[d]);
  }
  nnp_graph_destroy(g);
  return s;
}

/* What one step measures beyond the shared settings. */
typedef struct step_spec {
  const char *backends;     /* comma list, native first (the accuracy reference) */
  bool no_passes;           /* the native engine with every graph pass off */
  const char *static_shape; /* DIMS of the first input, or NULL */
  const char *int8_model;   /* with it: precisions fp32,int8, the int8 rows run this file */
  double max_time;          /* cap on each row's steady state; 0: --max-time */
} step_spec;

/* One step: a sweep of the bench workload with advise's short loop, in this process
 * (the same worker isolation, statistics and accuracy check as nnperf bench). */
static nnp_status run_sweep(const advise_ctx *c, const step_spec *st, nnp_bench_result *res) {
  nnp_sweep_spec s;
  nnp_sweep_spec_default(&s);
  s.model = c->model_path;
  char list[256];
  snprintf(list, sizeof list, "%s", st->backends);
  for (char *tok = strtok(list, ","); tok && s.n_backends < NNP_SWEEP_MAX_AXIS; tok = strtok(NULL, ","))
    s.backends[s.n_backends++] = tok;
  s.n_batches = 1;
  s.batches[0] = c->batch;
  if (c->threads > 0) s.n_threads = 1, s.threads[0] = (int)c->threads;
  s.loop.iterations = (int)c->iterations;
  s.loop.min_time_s = 0;
  s.loop.warmup_min = (int)c->warmup;
  if (s.loop.warmup_max < s.loop.warmup_min) s.loop.warmup_max = s.loop.warmup_min;
  s.loop.max_time_s = st->max_time > 0 ? st->max_time : c->max_time;
  s.processes = (int)c->processes;
  if (st->no_passes) s.plan.passes = 0;
  s.static_shape = st->static_shape;
  if (st->int8_model) {
    s.n_precisions = 2;
    s.precisions[0] = NNP_FP32, s.precisions[1] = NNP_INT8;
    s.int8_model = st->int8_model;
  }
  nnp_sweep_outcome o;
  return nnp_sweep_run(&s, res, &o);
}

static const nnp_bench_row *find_row(const nnp_bench_result *r, const char *backend, nnp_precision p) {
  for (int i = 0; i < r->n_rows; i++)
    if (!strcmp(r->rows[i].backend, backend) && r->rows[i].precision == p) return &r->rows[i];
  return NULL;
}

static void appendf(char *buf, size_t n, const char *fmt, ...) {
  size_t used = strlen(buf);
  if (used >= n) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + used, n - used, fmt, ap);
  va_end(ap);
}

/* Judges one row against the targets; the reference row (native fp32) is exact by definition. */
static candidate *add_candidate(advise_ctx *c, int step, const nnp_bench_row *row, const char *command) {
  if (c->n_cand >= MAX_CANDIDATES) return NULL;
  candidate *k = &c->cand[c->n_cand++];
  memset(k, 0, sizeof *k);
  k->step = step;
  snprintf(k->label, sizeof k->label, "%s", row->label);
  snprintf(k->backend, sizeof k->backend, "%s", row->backend);
  snprintf(k->command, sizeof k->command, "%s", command);
  k->p50_s = k->p99_s = NAN;
  k->max_rel = NAN;
  k->mem_bytes = row->vmhwm_bytes > row->peak_rss_bytes ? row->vmhwm_bytes : row->peak_rss_bytes;
  if (row->status == NNP_ROW_UNAVAILABLE) {
    snprintf(k->status, sizeof k->status, "skipped");
    snprintf(k->why, sizeof k->why, "unavailable: %s", row->reason);
    return k;
  }
  if (row->status != NNP_ROW_OK) {
    snprintf(k->status, sizeof k->status, "failed");
    snprintf(k->why, sizeof k->why, "failed: %s", row->reason);
    return k;
  }
  snprintf(k->status, sizeof k->status, "ok");
  k->p50_s = row->stats.p50;
  k->p99_s = row->stats.p99;
  int is_ref = !strcmp(row->backend, "native") && row->precision == NNP_FP32 && !row->acc.compared;
  if (is_ref) k->max_rel = 0;
  else if (row->acc.compared) k->max_rel = row->acc.max_rel;
  /* int8 and mixed rows must be within bench's own tolerance, which judges them by output
   * cosine and top-1 (src/bench/accuracy.h): advise never recommends a row that bench marks
   * FAIL tol. A max_rel bound fits quantization badly (its worst element is off by several
   * percent of the output range in a well-calibrated model, so the default 1% rejected
   * every INT8 row): it applies to int8 rows only when the user gave --accuracy-tol. */
  const int quant = !is_ref && row->acc.compared && row->precision >= NNP_INT8;
  const int quant_fail = quant && !row->acc.within_tol, judge_max_rel = !quant || c->tol_given;
  k->accuracy_ok = !isnan(k->max_rel) && (!judge_max_rel || k->max_rel <= c->tol) && !quant_fail;
  if (k->p99_s > c->p99_s)
    appendf(k->why, sizeof k->why, "%sP99 %.3f ms > %.3f ms", k->why[0] ? "; " : "", k->p99_s * 1e3, c->p99_s * 1e3);
  k->few_samples = row->n_samples < MIN_RANK_SAMPLES;
  if (k->few_samples)
    appendf(k->why, sizeof k->why, "%stoo few samples to rank (%d < %d): rerun with a longer --max-time",
            k->why[0] ? "; " : "", row->n_samples, MIN_RANK_SAMPLES);
  if (c->max_mem > 0 && k->mem_bytes > c->max_mem)
    appendf(k->why, sizeof k->why, "%smemory %.1f MiB > %.1f MiB", k->why[0] ? "; " : "", k->mem_bytes / 1048576.0,
            c->max_mem / 1048576.0);
  if (isnan(k->max_rel))
    appendf(k->why, sizeof k->why, "%saccuracy not checked (no native fp32 reference outputs)", k->why[0] ? "; " : "");
  else if (judge_max_rel && !(k->max_rel <= c->tol))
    appendf(k->why, sizeof k->why, "%saccuracy: max rel error %.3g > tolerance %.3g", k->why[0] ? "; " : "",
            k->max_rel, c->tol);
  if (quant_fail) {
    appendf(k->why, sizeof k->why, "%saccuracy: cosine %.5f", k->why[0] ? "; " : "", row->acc.cosine);
    if (row->acc.top1 >= 0) appendf(k->why, sizeof k->why, ", top-1 %.0f%%", row->acc.top1 * 100);
    appendf(k->why, sizeof k->why, " outside bench's int8 tolerance (%s)", row->acc.criterion);
  }
  k->meets = !k->why[0];
  return k;
}

/* The command that reproduces a row, with native first so its accuracy is checked too. */
static void bench_command(const advise_ctx *c, const char *backend, const char *extra, char *out, size_t n) {
  snprintf(out, n, "nnperf bench %s --backends %s%s --batch %lld", c->model,
           strcmp(backend, "native") ? "native," : "", backend, c->batch);
  if (c->threads > 0) appendf(out, n, " --threads %lld", c->threads);
  if (extra && *extra) appendf(out, n, " %s", extra);
}

/* Runs one bench step and judges the rows of `judge` (in that order). Returns the index of
 * the first candidate that meets the targets, or -1. */
/* The steady state that gives every judged row of res that the time cap cut below
 * MIN_RANK_SAMPLES samples enough of them (1.5x their P50 each, at most 60 s); 0 when
 * no row was cut short. A row with few samples because --iterations asked for few is
 * left as it is: it is shown, not ranked. */
static double longer_max_time(const advise_ctx *c, const nnp_bench_result *res, const char *const *judge, int n_judge,
                              nnp_precision p) {
  double need = 0;
  for (int j = 0; j < n_judge; j++) {
    const nnp_bench_row *row = find_row(res, judge[j], p);
    if (!row || row->status != NNP_ROW_OK || !row->time_capped || row->n_samples >= MIN_RANK_SAMPLES) continue;
    double t = 1.5 * MIN_RANK_SAMPLES * row->stats.p50;
    if (t > need) need = t;
  }
  if (need <= c->max_time) return 0;
  return need < 60 ? need : 60;
}

static int bench_step(advise_ctx *c, int step, const step_spec *sp, const char *const *judge, int n_judge,
                      nnp_precision p, const char *cmd_extra) {
  const char *backends = sp->backends;
  step_info *si = &c->steps[step - 1];
  si->ran = 1;
  nnp_bench_result res;
  memset(&res, 0, sizeof res);
  say(c, "step %d (%s): bench --backends %s%s%s", step, si->name, backends, cmd_extra && *cmd_extra ? " " : "",
      cmd_extra ? cmd_extra : "");
  snprintf(si->note, sizeof si->note, "bench --backends %s%s%s", backends, cmd_extra && *cmd_extra ? " " : "",
           cmd_extra ? cmd_extra : "");
  nnp_status st = run_sweep(c, sp, &res);
  double longer = st == NNP_OK && !nnp_bench_interrupted ? longer_max_time(c, &res, judge, n_judge, p) : 0;
  if (longer > 0) { /* a slow row got too few samples to rank: the step again, longer */
    say(c, "step %d: a row got fewer than %d samples in %g s: measuring again for up to %.1f s per row", step,
        MIN_RANK_SAMPLES, c->max_time, longer);
    step_spec again = *sp;
    again.max_time = longer;
    nnp_bench_result_free(&res);
    st = run_sweep(c, &again, &res);
  }
  if (st != NNP_OK) {
    snprintf(si->note, sizeof si->note, "failed: %s", nnp_last_error());
    say(c, "step %d: %s", step, si->note);
    nnp_bench_result_free(&res);
    return -1;
  }
  if (res.noisy) c->noisy = 1;
  if (nnp_bench_interrupted) appendf(si->note, sizeof si->note, " (interrupted after %d rows)", res.n_rows);
  int met = -1;
  for (int j = 0; j < n_judge; j++) {
    const nnp_bench_row *row = find_row(&res, judge[j], p);
    if (!row) continue;
    char cmd[1400];
    bench_command(c, judge[j], cmd_extra, cmd, sizeof cmd);
    candidate *k = add_candidate(c, step, row, cmd);
    if (k && k->meets && met < 0) met = (int)(k - c->cand);
  }
  nnp_bench_result_free(&res);
  return met;
}

/* The fastest (lowest P99) accurate ok candidate so far; -1 if none. */
static int best_accurate(const advise_ctx *c) {
  int best = -1;
  for (int i = 0; i < c->n_cand; i++) {
    const candidate *k = &c->cand[i];
    if (strcmp(k->status, "ok") || !k->accuracy_ok || k->few_samples) continue;
    if (best < 0 || k->p99_s < c->cand[best].p99_s) best = i;
  }
  return best;
}

/* Seeded calibration inputs (the bench inputs' generator, other seeds) when no --calib. */
static nnp_status seeded_calibration(const advise_ctx *c, char *dir, size_t n) {
  snprintf(dir, n, "%s/calib", c->tmpdir);
  if (mkdir(dir, 0700) != 0) return nnp_error(NNP_ERR_IO, "cannot create %s: %s", dir, strerror(errno));
  int rank = 0;
  int64_t dims[NNP_MAX_RANK];
  if (!cli_parse_dims(c->static_dims, &rank, dims)) return nnp_error(NNP_ERR_INVALID, "no input shape");
  for (int k = 0; k < 8; k++) {
    nnp_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = NNP_F32;
    t.rank = rank;
    memcpy(t.dims, dims, sizeof dims);
    NNP_TRY(nnp_tensor_alloc(&t));
    nnp_fill_seeded(&t, 1000 + (uint64_t)k);
    char path[600];
    snprintf(path, sizeof path, "%s/seeded%d.npy", dir, k);
    nnp_status s = nnp_npy_write(path, &t);
    nnp_tensor_free(&t);
    NNP_TRY(s);
  }
  return NNP_OK;
}

static void fmt_ms(double s, char *out, size_t n) {
  if (isnan(s)) snprintf(out, n, "-");
  else snprintf(out, n, "%.3f", s * 1e3);
}

/* The command line that reproduces candidate k, as it can be run: an INT8 row's starts
 * with the quantize step that writes the model it runs. */
static void print_reproduce(const advise_ctx *c, const candidate *k) {
  if (k->step == 5) {
    printf("reproduce: nnperf quantize %s --calib %s -o model-int8.onnx && %s\n", c->model,
           c->calib ? c->calib : "CALIB_DIR", k->command);
    if (!c->calib)
      printf("(CALIB_DIR: a folder of calibration images or .npy inputs; advise calibrated on seeded random inputs)\n");
  } else {
    printf("reproduce: %s\n", k->command);
  }
}

static void print_table(const advise_ctx *c, int rec, int best) {
  printf("targets: P99 <= %.3f ms", c->p99_s * 1e3);
  if (c->max_mem > 0) printf(", peak memory <= %.1f MiB", c->max_mem / 1048576.0);
  printf(", max relative error vs native fp32 <= %.3g%s; batch %lld", c->tol,
         c->tol_given ? " (int8 rows too, and bench's int8 tolerance)" : " (int8 rows: bench's int8 tolerance)", c->batch);
  if (c->threads > 0) printf(", %lld threads", c->threads);
  printf("\n\n%-4s %-15s %-24s %10s %10s %9s %10s %-5s %s\n", "step", "name", "row", "P50 ms", "P99 ms", "mem MiB",
         "max rel", "meets", "why not");
  for (int st = 1; st <= N_STEPS; st++) {
    const step_info *si = &c->steps[st - 1];
    if (!si->ran) {
      printf("%-4d %-15s %s\n", st, si->name, si->note);
      continue;
    }
    int any = 0;
    for (int i = 0; i < c->n_cand; i++) {
      const candidate *k = &c->cand[i];
      if (k->step != st) continue;
      any = 1;
      char p50[32], p99[32], mem[32], rel[32];
      fmt_ms(k->p50_s, p50, sizeof p50);
      fmt_ms(k->p99_s, p99, sizeof p99);
      if (k->mem_bytes > 0) snprintf(mem, sizeof mem, "%.1f", k->mem_bytes / 1048576.0);
      else snprintf(mem, sizeof mem, "-");
      if (isnan(k->max_rel)) snprintf(rel, sizeof rel, "-");
      else snprintf(rel, sizeof rel, "%.3g", k->max_rel);
      printf("%-4d %-15s %-24s %10s %10s %9s %10s %-5s %s\n", st, si->name, k->label, p50, p99, mem, rel,
             k->meets ? "yes" : strcmp(k->status, "ok") ? "-" : "no", k->why);
    }
    if (!any) printf("%-4d %-15s %s\n", st, si->name, si->note);
  }
  printf("\nP99 from a short run is indicative (fewer than 1000 samples); memory is the worker process's peak\n"
         "RSS (a Python worker's includes the interpreter and framework).\n");
  if (c->noisy)
    printf("NOISY: bench found the machine busy or rows with a high spread in some step; the ranking may\n"
           "be noise: rerun on a quiet machine.\n");
  printf("\n");
  if (rec >= 0) {
    const candidate *k = &c->cand[rec];
    printf("recommendation: %s (step %d, %s): P99 %.3f ms, max rel error %.3g\n", k->label, k->step,
           c->steps[k->step - 1].name, k->p99_s * 1e3, k->max_rel);
    print_reproduce(c, k);
  } else {
    printf("no configuration meets the targets.\n");
    if (best >= 0) {
      const candidate *k = &c->cand[best];
      printf("best candidate: %s (step %d): P99 %.3f ms, max rel error %.3g; %s\n", k->label, k->step,
             k->p99_s * 1e3, k->max_rel, k->why);
      print_reproduce(c, k);
    }
  }
}

static json_t *num_or_null(double v) { return isnan(v) ? json_null() : json_real(v); }

static int write_json(const advise_ctx *c, int rec, int best, const char *path) {
  json_t *root = json_object();
  json_object_set_new(root, "model", json_string(c->model));
  json_t *t = json_object();
  json_object_set_new(t, "p99_s", json_real(c->p99_s));
  json_object_set_new(t, "max_mem_bytes", c->max_mem > 0 ? json_integer(c->max_mem) : json_null());
  json_object_set_new(t, "accuracy_tol", json_real(c->tol));
  json_object_set_new(t, "accuracy_tol_bounds_int8", json_boolean(c->tol_given));
  json_object_set_new(t, "batch", json_integer(c->batch));
  json_object_set_new(t, "threads", c->threads > 0 ? json_integer(c->threads) : json_null());
  json_object_set_new(root, "targets", t);
  json_object_set_new(root, "noisy", json_boolean(c->noisy));
  json_t *steps = json_array();
  for (int st = 1; st <= N_STEPS; st++) {
    const step_info *si = &c->steps[st - 1];
    json_t *o = json_object();
    json_object_set_new(o, "step", json_integer(st));
    json_object_set_new(o, "name", json_string(si->name));
    json_object_set_new(o, "ran", json_boolean(si->ran));
    json_object_set_new(o, "note", json_string(si->note));
    json_t *rows = json_array();
    for (int i = 0; i < c->n_cand; i++) {
      const candidate *k = &c->cand[i];
      if (k->step != st) continue;
      json_t *r = json_object();
      json_object_set_new(r, "label", json_string(k->label));
      json_object_set_new(r, "backend", json_string(k->backend));
      json_object_set_new(r, "status", json_string(k->status));
      json_object_set_new(r, "p50_s", num_or_null(k->p50_s));
      json_object_set_new(r, "p99_s", num_or_null(k->p99_s));
      json_object_set_new(r, "peak_mem_bytes", k->mem_bytes > 0 ? json_integer(k->mem_bytes) : json_null());
      json_object_set_new(r, "max_rel", num_or_null(k->max_rel));
      json_object_set_new(r, "accuracy_ok", json_boolean(k->accuracy_ok));
      json_object_set_new(r, "meets", json_boolean(k->meets));
      json_object_set_new(r, "why_not", json_string(k->why));
      json_object_set_new(r, "command", json_string(k->command));
      json_array_append_new(rows, r);
    }
    json_object_set_new(o, "rows", rows);
    json_array_append_new(steps, o);
  }
  json_object_set_new(root, "steps", steps);
  json_t *recj = json_null(), *bestj = json_null();
  if (rec >= 0) {
    recj = json_object();
    json_object_set_new(recj, "label", json_string(c->cand[rec].label));
    json_object_set_new(recj, "step", json_integer(c->cand[rec].step));
    json_object_set_new(recj, "command", json_string(c->cand[rec].command));
  }
  if (best >= 0) {
    bestj = json_object();
    json_object_set_new(bestj, "label", json_string(c->cand[best].label));
    json_object_set_new(bestj, "step", json_integer(c->cand[best].step));
    json_object_set_new(bestj, "why_not", json_string(c->cand[best].why));
    json_object_set_new(bestj, "command", json_string(c->cand[best].command));
  }
  json_object_set_new(root, "recommendation", recj);
  json_object_set_new(root, "best_candidate", bestj);
  int rc = json_dump_file(root, path, JSON_INDENT(2));
  json_decref(root);
  if (rc) return nnp_error(NNP_ERR_IO, "cannot write %s", path), 0;
  return 1;
}

static void remove_tmpdir(const advise_ctx *c) {
  if (!c->tmpdir[0]) return;
  static const char *const files[] = {"step.json", "int8.onnx"};
  char path[600];
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    snprintf(path, sizeof path, "%s/%s", c->tmpdir, files[i]);
    unlink(path);
  }
  for (int k = 0; k < 8; k++) {
    snprintf(path, sizeof path, "%s/calib/seeded%d.npy", c->tmpdir, k);
    unlink(path);
  }
  snprintf(path, sizeof path, "%s/calib", c->tmpdir);
  rmdir(path);
  if (!strncmp(c->model, "zoo:", 4)) unlink(c->model_path);
  rmdir(c->tmpdir);
}

/* nnperf quantize's default export, through the quantize library: the entropy
 * calibrator over calib, BatchNormalization folded first, every layer it can quantize
 * in QDQ, written to out. */
static nnp_status quantize_int8(const advise_ctx *c, const char *calib, const char *out) {
  cli_model_opts mo;
  cli_model_opts_init(&mo);
  mo.model = c->model_path;
  nnp_graph *g = NULL, *gq = NULL;
  NNP_TRY(cli_load_graph(&mo, &g));
  cli_apply_batch(&mo, g);
  nnp_calib_options co;
  nnp_calib_options_default(&co);
  nnp_calib_table table = {0};
  nnp_tensor shape;
  memset(&shape, 0, sizeof shape);
  int folded = 0;
  nnp_status s = g->n_inputs == 1 ? nnp_resolve_input_shape(g, &mo.plan, 0, &shape)
                                  : nnp_error(NNP_ERR_UNSUPPORTED, "quantize needs a model with one input, this one has %d",
                                              g->n_inputs);
  if (s == NNP_OK && shape.rank == 4) co.height = (int)shape.dims[2], co.width = (int)shape.dims[3];
  if (s == NNP_OK) s = nnp_qdq_fold_batchnorm(g, &folded);
  nnp_calib_set set;
  if (s == NNP_OK && (s = nnp_calib_open(calib, &co, &set)) == NNP_OK) {
    s = nnp_calibrate(g, &set, NNP_CALIBRATOR_ENTROPY, 99.99, &table);
    nnp_calib_close(&set);
  }
  nnp_qdq_report rep;
  if (s == NNP_OK) s = cli_load_graph(&mo, &gq);
  if (s == NNP_OK) s = nnp_qdq_rewrite(gq, &table, NULL, 0, &rep);
  if (s == NNP_OK) s = nnp_onnx_save(gq, out);
  nnp_calib_table_free(&table);
  nnp_graph_destroy(gq);
  nnp_graph_destroy(g);
  return s;
}

/* Step 5: an INT8 QDQ export (on --calib, else seeded random inputs) run by ort-cpu,
 * openvino and native beside fp32. */
static int step_int8(advise_ctx *c) {
  step_info *si = &c->steps[4];
  char calib[400], qpath[400];
  snprintf(qpath, sizeof qpath, "%s/int8.onnx", c->tmpdir);
  nnp_status s = NNP_OK;
  if (c->calib) snprintf(calib, sizeof calib, "%s", c->calib);
  else s = seeded_calibration(c, calib, sizeof calib);
  if (s == NNP_OK) {
    say(c, "step 5 (int8): nnperf quantize --calib %s%s", calib, c->calib ? "" : " (seeded random inputs)");
    s = quantize_int8(c, calib, qpath);
    if (s != NNP_OK) s = nnp_error_context(s, "nnperf quantize could not export an INT8 model of %s", c->model);
  }
  if (s != NNP_OK) {
    si->ran = 0;
    snprintf(si->note, sizeof si->note, "skipped: %s", nnp_last_error());
    say(c, "step 5: %s", si->note);
    return -1;
  }
  const char *j[] = {"ort-cpu", "openvino", "native"};
  step_spec sp = {.backends = "native,ort-cpu,openvino", .int8_model = qpath};
  int met = bench_step(c, 5, &sp, j, 3, NNP_INT8, "--precision fp32,int8 --int8-model model-int8.onnx");
  if (!c->calib) appendf(si->note, sizeof si->note, " (calibrated on seeded random inputs)");
  return met;
}

/* The steps; returns the index of the recommended candidate or -1. */
static int advise_flow(advise_ctx *c, const int *want) {
  char why[512];
  int met = -1;
  /* 1 baseline: the general framework the model comes from, else the engine with nothing on */
  if (want[0]) {
    if (available("torch-eager", why, sizeof why)) {
      const char *j[] = {"torch-eager"};
      step_spec sp = {.backends = "native,torch-eager"};
      met = bench_step(c, 1, &sp, j, 1, NNP_FP32, "");
    } else {
      say(c, "step 1: torch-eager unavailable (%s): baseline is native without graph passes", why);
      const char *j[] = {"native"};
      step_spec sp = {.backends = "native", .no_passes = true};
      met = bench_step(c, 1, &sp, j, 1, NNP_FP32, "--no-passes");
    }
  }
  if (met >= 0 || nnp_bench_interrupted) return met;
  if (want[1]) {
    const char *j[] = {"ort-cpu"};
    step_spec sp = {.backends = "native,ort-cpu"};
    met = bench_step(c, 2, &sp, j, 1, NNP_FP32, "");
  }
  if (met >= 0 || nnp_bench_interrupted) return met;
  if (want[2]) { /* unavailable ones become rows with the reason: listed as skipped */
    const char *j[] = {"tensorrt", "ort-trt", "openvino", "xnnpack", "native"};
    step_spec sp = {.backends = "native,tensorrt,ort-trt,openvino,xnnpack"};
    met = bench_step(c, 3, &sp, j, 5, NNP_FP32, "");
  }
  if (met >= 0 || nnp_bench_interrupted) return met;
  if (want[3]) {
    int b = best_accurate(c);
    const char *backend = b >= 0 ? c->cand[b].backend : "native";
    char shape[160], backends[64];
    snprintf(shape, sizeof shape, "static:%s", c->static_dims);
    snprintf(backends, sizeof backends, "%s%s", strcmp(backend, "native") ? "native," : "", backend);
    const char *j[] = {backend};
    char extra[200];
    snprintf(extra, sizeof extra, "--shape %s", shape);
    step_spec sp = {.backends = backends, .static_shape = c->static_dims};
    met = bench_step(c, 4, &sp, j, 1, NNP_FP32, extra);
  }
  if (met >= 0 || nnp_bench_interrupted) return met;
  if (want[4]) met = step_int8(c);
  return met;
}

int nnp_cmd_advise(int argc, char **argv) {
  static advise_ctx ctx; /* large: candidates and commands */
  advise_ctx *c = &ctx;
  memset(c, 0, sizeof *c);
  c->tol = 0.01;
  c->batch = 1;
  c->iterations = 200;
  c->warmup = 5;
  c->processes = 1;
  c->max_time = 3;
  c->p99_s = -1;
  const char *json_path = NULL;
  int want[N_STEPS] = {1, 1, 1, 1, 1};
  static const char *const names[N_STEPS] = {"baseline", "onnxruntime", "hardware", "static shape", "int8"};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(advise_help, stdout);
      return CLI_OK;
    }
    static const char *const value_options[] = {"--p99", "--max-mem", "--accuracy-tol", "--threads", "--batch",
                                                "--steps", "--calib", "--iterations", "--max-time", "--warmup",
                                                "--processes", "--json"};
    int takes_value = 0;
    for (size_t k = 0; k < sizeof value_options / sizeof *value_options; k++) takes_value |= !strcmp(a, value_options[k]);
    if (takes_value && !v) return cli_usage_error("advise", "%s needs a value", a);
    if (takes_value) i++;
    if (!strcmp(a, "--p99")) {
      if (!parse_time_s(v, &c->p99_s)) return cli_usage_error("advise", "--p99 wants a time like 10ms, 500us or 0.2s, not '%s'", v);
    } else if (!strcmp(a, "--max-mem")) {
      if (!parse_size(v, &c->max_mem)) return cli_usage_error("advise", "--max-mem wants a size like 512M or 2G, not '%s'", v);
    } else if (!strcmp(a, "--accuracy-tol")) {
      if (!parse_tol(v, &c->tol)) return cli_usage_error("advise", "--accuracy-tol wants 1%% or 0.01, not '%s'", v);
      c->tol_given = true;
    } else if (!strcmp(a, "--threads")) {
      if (!parse_count(v, 1, 1024, &c->threads)) return cli_usage_error("advise", "--threads wants 1..1024");
    } else if (!strcmp(a, "--batch")) {
      if (!parse_count(v, 1, 1 << 20, &c->batch)) return cli_usage_error("advise", "--batch wants a count >= 1");
    } else if (!strcmp(a, "--iterations")) {
      if (!parse_count(v, 1, 100000000, &c->iterations)) return cli_usage_error("advise", "--iterations wants a count >= 1");
    } else if (!strcmp(a, "--warmup")) {
      if (!parse_count(v, 0, 1000000, &c->warmup)) return cli_usage_error("advise", "--warmup wants a count >= 0");
    } else if (!strcmp(a, "--processes")) {
      if (!parse_count(v, 1, NNP_MAX_PROCESSES, &c->processes))
        return cli_usage_error("advise", "--processes wants 1..%d", NNP_MAX_PROCESSES);
    } else if (!strcmp(a, "--max-time")) {
      char *end;
      c->max_time = strtod(v, &end);
      if (end == v || *end || !(c->max_time >= 0.001)) return cli_usage_error("advise", "--max-time wants seconds > 0");
    } else if (!strcmp(a, "--steps")) {
      memset(want, 0, sizeof want);
      for (const char *p = v; *p; p++) {
        if (*p >= '1' && *p <= '0' + N_STEPS && (p[1] == ',' || !p[1])) want[*p - '1'] = 1;
        else if (*p != ',') return cli_usage_error("advise", "--steps wants numbers 1..%d like 2,3, not '%s'", N_STEPS, v);
      }
    } else if (!strcmp(a, "--calib")) c->calib = v;
    else if (!strcmp(a, "--json")) json_path = v;
    else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) c->quiet = 1;
    else if (a[0] == '-') return cli_usage_error("advise", "unknown option '%s'", a);
    else if (!c->model) c->model = a;
    else return cli_usage_error("advise", "more than one model given");
  }
  if (!c->model) return cli_usage_error("advise", "no model given (an .onnx file or zoo:NAME)");
  if (c->p99_s <= 0) return cli_usage_error("advise", "--p99 is required, e.g. --p99 10ms");
  if (strncmp(c->model, "zoo:", 4) && access(c->model, R_OK) != 0)
    return cli_usage_error("advise", "model '%s' not found or not readable: %s", c->model, strerror(errno));
  if (c->calib && access(c->calib, R_OK) != 0)
    return cli_usage_error("advise", "--calib '%s' not found or not readable: %s", c->calib, strerror(errno));
  for (int st = 0; st < N_STEPS; st++) {
    c->steps[st].name = names[st];
    snprintf(c->steps[st].note, sizeof c->steps[st].note, "%s", want[st] ? "not run: an earlier step met the targets"
                                                                         : "not run: left out by --steps");
  }
  if (prepare_model(c) != NNP_OK) {
    int rc = cli_fail(c->model);
    remove_tmpdir(c);
    return rc;
  }
  int rec = advise_flow(c, want);
  int best = rec >= 0 ? rec : best_accurate(c);
  if (best < 0) /* nothing accurate: the fastest ok row, so the reader sees how far off it is */
    for (int i = 0; i < c->n_cand; i++)
      if (!strcmp(c->cand[i].status, "ok") && !c->cand[i].few_samples &&
          (best < 0 || c->cand[i].p99_s < c->cand[best].p99_s))
        best = i;
  if (nnp_bench_interrupted) /* Ctrl-C: what was measured is shown, the search is not complete */
    for (int st = 0; st < N_STEPS; st++)
      if (want[st] && !c->steps[st].ran) snprintf(c->steps[st].note, sizeof c->steps[st].note, "not run: interrupted");
  print_table(c, rec, best);
  int rc = rec >= 0 ? CLI_OK : CLI_FAIL;
  if (nnp_bench_interrupted) {
    fprintf(stderr, "nnperf advise: interrupted: the steps marked 'not run: interrupted' did not run\n");
    rc = 130;
  }
  if (json_path && !write_json(c, rec, best, json_path)) rc = cli_fail("--json");
  remove_tmpdir(c);
  return rc;
}
