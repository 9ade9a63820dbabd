/* nnperf bench: every backend x configuration, one methodology, one table. */
#define _GNU_SOURCE /* sched_getaffinity */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sched.h>

#include "bench/accuracy.h"
#include "bench/orchestrator.h"
#include "bench/resume.h"
#include "bench/timing_loop.h"
#include "cli/cli.h"
#include "cli/cli_result.h"
#include "nnperf/alloc.h"
#include "nnperf/bench.h"
#include "nnperf/backend.h"
#include "nnperf/history.h"
#include "nnperf/report_html.h"
#include "nnperf/onnx.h"
#include "nnperf/report.h"
#include "nnperf/zoo.h"
#include "util/writable.h"
#include "zoo/zoo_file.h"

#define DEFAULT_MODEL "zoo:mobilenet_v2"
#define MAX_LIST 16

/* The lower of a and b, NaN if either is (a NaN cosine is the worst agreement). */
static double lower(double a, double b) { return a != a || b != b ? NAN : a < b ? a : b; }

static const char bench_help[] =
    "usage: nnperf bench [MODEL] [options]\n\n"
    "Measures MODEL (an .onnx file or zoo:NAME; default " DEFAULT_MODEL ", 224x224) on every\n"
    "available backend under one methodology: each backend x configuration runs in a fresh\n"
    "worker process; load, first (cold) inference, warm-up and steady state are timed\n"
    "separately; each steady-state iteration is one synchronous inference timed with\n"
    "CLOCK_MONOTONIC; statistics come from the raw samples; outputs for the same seeded\n"
    "inputs are compared with the reference row (native fp32).\n\n"
    "what to run (comma lists make a sweep over the cross product):\n"
    "  --backends LIST        backends to run (default: all available; see nnperf backends)\n"
    "  --batch LIST           batch sizes, e.g. 1,16 (default 1,16 for the default model, else 1)\n"
    "  --precision LIST       fp32, fp16, int8, mixed (default fp32)\n"
    "  --threads LIST         intra-op threads, the same for every backend (default: all allowed\n"
    "                         CPUs); rows with other thread counts are not ranked against each other\n"
    "  --shape static:DIMS    fixed input shape, e.g. static:1x3x224x224 (overrides --batch)\n"
    "  --shape dynamic:DIMS   a dynamic-shape scenario for the first input: each iteration draws its\n"
    "                         shape, e.g. dynamic:Nx3x[160..320]x[160..320] (N = each --batch); the\n"
    "                         backend's per-shape work is timed with the inference\n"
    "  --backend-options B:K=V,...  options passed to backend B\n"
    "  --cache DIR            native plan cache folder: each native row gets a twin row 'native ... cache'\n"
    "                         run with the cache warm (filled first), so cold start shows both ways\n"
    "  --torch-model MODULE:FACTORY  the PyTorch rows run the nn.Module FACTORY() returns\n"
    "                         (MODULE: an importable name or a .py file) instead of the ONNX model\n"
    "  --int8-model FILE      the --precision int8 rows run FILE (an INT8 QDQ export of MODEL, e.g.\n"
    "                         from nnperf quantize) as given; accuracy is still against native fp32\n"
    "                         on MODEL\n"
    "%s"
    "\nhow to measure:\n"
    "  --warmup N             minimum warm-up iterations (default 20; ends when stable, max 200\n"
    "                         iterations or 10 s)\n"
    "  --iterations N         minimum steady-state iterations (default 200)\n"
    "  --min-time S           minimum steady-state seconds (default 2); the longer of the two wins\n"
    "  --max-time S           cap on the steady state per row (default 60; capped rows say so)\n"
    "  --processes N          worker processes per row, each measuring 1/N of the steady state\n"
    "                         (default 3): the confidence intervals then include the spread\n"
    "                         between processes, not only within one\n"
    "  --timeout S            wall-clock limit per worker (default 600)\n"
    "  --mem-limit MIB        address-space limit per worker (default none)\n"
    "  --pin                  pin workers to CPUs 0..threads-1\n"
    "  --seed N               seed of the inputs and the bootstrap (default 1)\n\n"
    "what to show:\n"
    "  --baseline LABEL       row the 'vs' column is relative to (default: first ok row)\n"
    "  --allow-mixed          rank rows that differ in precision or threads (shown as columns)\n"
    "  --json FILE            full result with raw samples (rewritten after every row)\n"
    "  --resume FILE          continue the interrupted run whose --json FILE this is: its finished\n"
    "                         rows are kept, not re-run, the rest run; the options must be the same\n"
    "                         (writes FILE again unless --json says otherwise)\n"
    "  --csv FILE             one line per row\n"
    "  --html FILE            the HTML report of the run (as nnperf report writes it)\n"
    "  --no-history           do not store the run in the history database (nnperf history)\n"
    "  --history DB           history database (default $NNPERF_HISTORY or\n"
    "                         ~/.local/share/nnperf/history.db)\n"
    "  --quiet                no table, no progress\n\n"
    "exit status: 0 all rows ok or unavailable, 1 a row failed (still recorded), 2 bad command line\n\n"
    "examples:\n"
    "  nnperf bench\n"
    "  nnperf bench resnet18.onnx --batch 1,8 --threads 2 --json out.json\n"
    "  nnperf bench zoo:resnet18 --backends native --iterations 50 --min-time 0\n";

static int split_list(char *s, char **out, int max) {
  int n = 0;
  for (char *tok = strtok(s, ","); tok && n < max; tok = strtok(NULL, ",")) out[n++] = tok;
  return n;
}

static int parse_int(const char *s, long long lo, long long hi, long long *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) return 0;
  *out = v;
  return 1;
}

static int parse_double(const char *s, double lo, double *out) {
  char *end;
  double v = strtod(s, &end);
  if (end == s || *end || !(v >= lo)) return 0;
  *out = v;
  return 1;
}

/* Dims joined by 'x': N (the batch), a positive integer, or [LO..HI] with 1 <= LO <= HI. */
static int valid_dynamic(const char *s) {
  int rank = 0, ranged = 0;
  while (*s) {
    long long lo, hi;
    char *end;
    if (*s == 'N') s++;
    else if (*s == '[') {
      if (sscanf(s, "[%lld..%lld]", &lo, &hi) != 2 || lo < 1 || hi < lo || hi > 1 << 20) return 0;
      s = strchr(s, ']') + 1;
      ranged = 1;
    } else {
      lo = strtoll(s, &end, 10);
      if (end == s || lo < 1) return 0;
      s = end;
    }
    rank++;
    if (*s == 'x' && s[1]) s++;
    else if (*s) return 0;
  }
  return rank > 0 && rank <= NNP_MAX_RANK && ranged;
}

/* The dynamic spec with N replaced by the batch. */
static void resolve_dynamic(const char *spec, long long batch, char *out, size_t n) {
  size_t used = 0;
  for (; *spec && used + 24 < n; spec++) {
    if (*spec == 'N') used += (size_t)snprintf(out + used, n - used, "%lld", batch);
    else out[used++] = *spec;
  }
  out[used] = 0;
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

static void on_signal(int sig) {
  (void)sig;
  nnp_bench_interrupted = 1;
}

typedef struct progress_ctx {
  int tty, row, rows;
  const char *label;
} progress_ctx;

static void progress(void *ud, const char *phase, int done, int total) {
  progress_ctx *p = ud;
  if (!p->tty) return;
  if (total > 0)
    fprintf(stderr, "\r\033[K[%d/%d] %-28s %-8s %d/%d", p->row, p->rows, p->label, phase, done, total);
  else
    fprintf(stderr, "\r\033[K[%d/%d] %-28s %-8s", p->row, p->rows, p->label, phase);
  fflush(stderr);
}

static int allowed_cpus(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
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

int nnp_cmd_bench(int argc, char **argv) {
  cli_model_opts mo;
  cli_model_opts_init(&mo);
  char *backends_arg = NULL, *batch_arg = NULL, *precision_arg = NULL, *options_arg = NULL;
  const char *cache_arg = NULL; /* --cache DIR: the native plan cache (cache_dir=) */
  char *torch_model_arg = NULL; /* --torch-model: passed to the torch rows as model=... */
  const char *int8_model = NULL; /* --int8-model: the file the int8 rows run (nnperf advise's INT8 step) */
  const char *resume_path = NULL;
  const char *json_path = NULL, *csv_path = NULL, *baseline = "", *static_shape = NULL, *dynamic_shape = NULL;
  long long mem_mib = 0, seed = 1, processes = 3;
  char *threads_arg = NULL;
  double timeout_s = 600;
  int quiet = 0, pin = 0, allow_mixed = 0, no_history = 0;
  const char *history_path = NULL, *html_path = NULL;
  nnp_loop_spec loop;
  nnp_loop_spec_default(&loop);
  char command_line[1024]; /* recorded before list options are split in place */
  size_t used_cl = 0;
  for (int i = 0; i < argc && used_cl < sizeof command_line; i++)
    used_cl += (size_t)snprintf(command_line + used_cl, sizeof command_line - used_cl, "%s%s", i ? " " : "nnperf ",
                                argv[i]);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    long long x;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      printf(bench_help, cli_model_options_help);
      return CLI_OK;
    }
    if (!strcmp(a, "--shape") && v && !strncmp(v, "static:", 7)) {
      static_shape = v + 7;
      i++;
      continue;
    }
    if (!strcmp(a, "--shape") && v && !strncmp(v, "dynamic:", 8)) {
      dynamic_shape = v + 8;
      if (!valid_dynamic(dynamic_shape))
        return cli_usage_error("bench", "--shape dynamic: wants dims like Nx3x[160..320]x[160..320], not '%s'", v);
      i++;
      continue;
    }
    if (!strcmp(a, "--batch")) { /* a list here, unlike other commands */
      if (!v) return cli_usage_error("bench", "--batch needs a value");
      batch_arg = argv[++i];
      continue;
    }
    int used = cli_model_option(&mo, "bench", argc, argv, &i);
    if (used < 0) return CLI_USAGE;
    if (used) continue;
    static const char *const value_options[] = {"--backends", "--backend", "--precision", "--backend-options",
                                                "--threads", "--warmup", "--iterations", "--min-time",
                                                "--max-time", "--timeout", "--mem-limit", "--seed", "--json",
                                                "--csv", "--baseline", "--shape", "--processes", "--history", "--html",
                                                "--torch-model", "--resume", "--int8-model", "--cache"};
    int takes_value = 0;
    for (size_t k = 0; k < sizeof value_options / sizeof *value_options; k++) takes_value |= !strcmp(a, value_options[k]);
    if (takes_value && !v) return cli_usage_error("bench", "%s needs a value", a);
    if (!strcmp(a, "--backends") || !strcmp(a, "--backend")) backends_arg = argv[++i];
    else if (!strcmp(a, "--precision")) precision_arg = argv[++i];
    else if (!strcmp(a, "--backend-options")) options_arg = argv[++i];
    else if (!strcmp(a, "--torch-model")) torch_model_arg = argv[++i];
    else if (!strcmp(a, "--int8-model")) int8_model = argv[++i];
    else if (!strcmp(a, "--cache")) cache_arg = argv[++i];
    else if (!strcmp(a, "--threads")) threads_arg = argv[++i];
    else if (!strcmp(a, "--warmup")) {
      if (!parse_int(argv[++i], 0, 1000000, &x)) return cli_usage_error("bench", "--warmup wants a count >= 0");
      loop.warmup_min = (int)x;
      if (loop.warmup_max < loop.warmup_min) loop.warmup_max = loop.warmup_min;
    } else if (!strcmp(a, "--iterations")) {
      if (!parse_int(argv[++i], 1, 100000000, &x)) return cli_usage_error("bench", "--iterations wants a count >= 1");
      loop.iterations = (int)x;
    } else if (!strcmp(a, "--min-time")) {
      if (!parse_double(argv[++i], 0, &loop.min_time_s)) return cli_usage_error("bench", "--min-time wants seconds >= 0");
    } else if (!strcmp(a, "--max-time")) {
      if (!parse_double(argv[++i], 0.001, &loop.max_time_s)) return cli_usage_error("bench", "--max-time wants seconds > 0");
    } else if (!strcmp(a, "--timeout")) {
      if (!parse_double(argv[++i], 0.1, &timeout_s)) return cli_usage_error("bench", "--timeout wants seconds > 0");
    } else if (!strcmp(a, "--mem-limit")) {
      if (!parse_int(argv[++i], 1, 1 << 30, &mem_mib)) return cli_usage_error("bench", "--mem-limit wants MiB >= 1");
    } else if (!strcmp(a, "--processes")) {
      if (!parse_int(argv[++i], 1, NNP_MAX_PROCESSES, &processes))
        return cli_usage_error("bench", "--processes wants 1..%d", NNP_MAX_PROCESSES);
    } else if (!strcmp(a, "--seed")) {
      if (!parse_int(argv[++i], 0, (1LL << 62), &seed)) return cli_usage_error("bench", "--seed wants an integer >= 0");
    } else if (!strcmp(a, "--json")) json_path = argv[++i];
    else if (!strcmp(a, "--csv")) csv_path = argv[++i];
    else if (!strcmp(a, "--resume")) resume_path = argv[++i];
    else if (!strcmp(a, "--baseline")) baseline = argv[++i];
    else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) quiet = 1;
    else if (!strcmp(a, "--pin")) pin = 1;
    else if (!strcmp(a, "--allow-mixed")) allow_mixed = 1;
    else if (!strcmp(a, "--no-history")) no_history = 1;
    else if (!strcmp(a, "--history")) history_path = argv[++i];
    else if (!strcmp(a, "--html")) html_path = argv[++i];
    else if (a[0] == '-') return cli_usage_error("bench", "unknown option '%s'", a);
    else if (!mo.model) mo.model = a;
    else return cli_usage_error("bench", "more than one model given");
  }
  if (static_shape && dynamic_shape) return cli_usage_error("bench", "give either --shape static: or dynamic:, not both");
  int default_model = !mo.model;
  if (!mo.model) mo.model = DEFAULT_MODEL;
  if (strncmp(mo.model, "zoo:", 4) && access(mo.model, R_OK) != 0)
    return cli_usage_error("bench", "model '%s' not found or not readable: %s", mo.model, strerror(errno));
  /* the result files are written after the last row: refuse a destination that cannot be
   * written before measuring anything, not after the whole sweep */
  const char *outputs[][2] = {{"--json", json_path}, {"--csv", csv_path}, {"--html", html_path}};
  for (int k = 0; k < 3; k++)
    if (outputs[k][1] && nnp_check_writable(outputs[k][1]) != NNP_OK) {
      fprintf(stderr, "nnperf bench: %s: %s\n", outputs[k][0], nnp_last_error());
      return CLI_USAGE;
    }
  if (int8_model && access(int8_model, R_OK) != 0)
    return cli_usage_error("bench", "--int8-model '%s' not found or not readable: %s", int8_model, strerror(errno));
  long long thread_counts[MAX_LIST] = {allowed_cpus()};
  int n_threads = 1;
  if (threads_arg) {
    char *names[MAX_LIST];
    n_threads = split_list(threads_arg, names, MAX_LIST);
    for (int k = 0; k < n_threads; k++)
      if (!parse_int(names[k], 1, 1024, &thread_counts[k]))
        return cli_usage_error("bench", "--threads wants counts 1..1024, not '%s'", names[k]);
    if (!n_threads) return cli_usage_error("bench", "--threads is empty");
  }

  /* backends */
  const nnp_backend_entry *backends[MAX_LIST];
  int n_backends = 0;
  if (backends_arg) {
    char *names[MAX_LIST];
    int n = split_list(backends_arg, names, MAX_LIST);
    for (int k = 0; k < n; k++) {
      const nnp_backend_entry *e = nnp_backend_find(names[k]);
      if (!e) return cli_usage_error("bench", "unknown backend '%s' (nnperf backends lists them)", names[k]);
      backends[n_backends++] = e;
    }
    if (!n_backends) return cli_usage_error("bench", "--backends is empty");
  } else {
    for (int k = 0; k < nnp_backend_count() && n_backends < MAX_LIST; k++)
      if (!nnp_backend_get(k)->hidden) backends[n_backends++] = nnp_backend_get(k);
  }
  /* --cache DIR: each native row gets a twin that runs with the plan cache, right after
   * it, so the table shows cold start without and with a warm cache side by side */
  int with_cache[MAX_LIST] = {0};
  if (cache_arg)
    for (int k = 0; k < n_backends; k++)
      if (!strcmp(backends[k]->name, "native") && n_backends < MAX_LIST) {
        memmove(&backends[k + 2], &backends[k + 1], sizeof *backends * (size_t)(n_backends - k - 1));
        memmove(&with_cache[k + 2], &with_cache[k + 1], sizeof *with_cache * (size_t)(n_backends - k - 1));
        backends[k + 1] = backends[k];
        with_cache[k + 1] = 1;
        n_backends++;
        k++;
      }
  /* availability, asked once per backend */
  int available[MAX_LIST];
  char unavailable_why[MAX_LIST][256];
  for (int k = 0; k < n_backends; k++) {
    char version[256];
    available[k] = nnp_backend_probe(backends[k], version, sizeof version) == NNP_OK;
    snprintf(unavailable_why[k], sizeof unavailable_why[k], "%s", available[k] ? "" : nnp_last_error());
  }
  /* precisions */
  nnp_precision precisions[MAX_LIST] = {NNP_FP32};
  int n_prec = 1;
  if (precision_arg) {
    char *names[MAX_LIST];
    n_prec = split_list(precision_arg, names, MAX_LIST);
    for (int k = 0; k < n_prec; k++)
      if (!nnp_precision_parse(names[k], &precisions[k]))
        return cli_usage_error("bench", "unknown precision '%s' (fp32, fp16, int8, mixed)", names[k]);
    if (!n_prec) return cli_usage_error("bench", "--precision is empty");
  }
  /* batches */
  long long batches[MAX_LIST] = {1, 16};
  int n_batch = default_model ? 2 : 1;
  if (batch_arg) {
    char *names[MAX_LIST];
    n_batch = split_list(batch_arg, names, MAX_LIST);
    for (int k = 0; k < n_batch; k++)
      if (!parse_int(names[k], 1, 1 << 20, &batches[k]))
        return cli_usage_error("bench", "--batch wants positive integers, not '%s'", names[k]);
    if (!n_batch) return cli_usage_error("bench", "--batch is empty");
  }
  int64_t static_dims[NNP_MAX_RANK];
  int static_rank = 0;
  if (static_shape) {
    if (!cli_parse_dims(static_shape, &static_rank, static_dims))
      return cli_usage_error("bench", "--shape static: wants DIMS like 1x3x224x224, not '%s'", static_shape);
    for (int d = 0; d < static_rank; d++)
      if (static_dims[d] <= 0) return cli_usage_error("bench", "--shape dimensions must be positive");
    n_batch = 1;
    batches[0] = static_rank ? static_dims[0] : 1;
  }

  /* the model: loaded once here for its input signature; each worker loads it itself */
  char model_path[4096], tmpdir[256];
  if (nnp_zoo_model_file(mo.model, "bench", model_path, sizeof model_path, tmpdir, sizeof tmpdir) != NNP_OK)
    return cli_fail(NULL);
  nnp_graph *g = NULL;
  if (nnp_onnx_load(model_path, NULL, &g) != NNP_OK) {
    nnp_zoo_model_file_remove(model_path, tmpdir);
    return cli_fail(NULL);
  }
  if (g->n_inputs > NNP_PLAN_MAX_BINDINGS) {
    nnp_error(NNP_ERR_LIMIT, "model has %d inputs; nnperf bench handles up to %d", g->n_inputs, NNP_PLAN_MAX_BINDINGS);
    nnp_graph_destroy(g);
    return cli_fail(NULL);
  }

  nnp_bench_result res;
  memset(&res, 0, sizeof res);
  snprintf(res.model, sizeof res.model, "%s", mo.model);
  snprintf(res.nnperf_version, sizeof res.nnperf_version, "0.1.0");
  snprintf(res.command_line, sizeof res.command_line, "%s", command_line);
  nnp_env_capture(&res.env);
  res.loop = loop;
  res.seed = (uint64_t)seed;
  /* one max_rel tolerance when one precision judged by max_rel is measured; otherwise each
   * row's precision sets its criterion (int8/mixed: cosine, no max_rel bound) */
  if (n_prec == 1) {
    nnp_accuracy_criterion only = nnp_accuracy_default_criterion(precisions[0]);
    res.accuracy_rtol = isfinite(only.rtol) ? only.rtol : -1;
  } else {
    res.accuracy_rtol = -1;
  }
  snprintf(res.baseline, sizeof res.baseline, "%s", baseline);
  res.allow_mixed = allow_mixed;
  int total_rows = n_backends * n_prec * n_batch * n_threads;
  /* --resume: the finished rows of the earlier run, checked against this configuration */
  nnp_bench_result done;
  memset(&done, 0, sizeof done);
  int resume_error = 0;
  if (resume_path) {
    if (nnp_resume_load(resume_path, &done) != NNP_OK) {
      nnp_graph_destroy(g);
      nnp_zoo_model_file_remove(model_path, tmpdir);
      return cli_fail(NULL);
    }
    nnp_status cs = nnp_resume_check_run(&done, &res, resume_path);
    if (cs == NNP_OK && done.n_rows > total_rows)
      cs = nnp_error(NNP_ERR_INVALID, "--resume %s: it has %d rows, this command makes %d: resume with the same options",
                     resume_path, done.n_rows, total_rows);
    if (cs != NNP_OK) {
      fprintf(stderr, "nnperf bench: %s\n", nnp_last_error());
      nnp_bench_result_free(&done);
      nnp_graph_destroy(g);
      nnp_zoo_model_file_remove(model_path, tmpdir);
      return CLI_USAGE;
    }
    if (!json_path) json_path = resume_path;
    res.noisy = done.noisy;
  }
  res.rows = nnp_calloc((size_t)total_rows, sizeof *res.rows);
  res.cap_rows = total_rows;

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);

  progress_ctx pc = {.tty = !quiet && isatty(2), .rows = total_rows};
  char self[4096]; /* this binary: the C worker is `nnperf __worker` */
  ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
  self[sl > 0 ? sl : 0] = 0;
  int rc = CLI_OK;
  for (int bi = 0; bi < n_batch && !nnp_bench_interrupted && !resume_error; bi++) {
    /* inputs for this batch: seeded, identical for every backend */
    cli_model_opts bo = mo;
    bo.batch = batches[bi];
    if (static_shape && g->n_inputs >= 1) {
      bo.batch = 0;
      bo.plan.shapes[bo.plan.n_shapes].input = g->values[g->inputs[0]].name;
      bo.plan.shapes[bo.plan.n_shapes].rank = static_rank;
      memcpy(bo.plan.shapes[bo.plan.n_shapes].dims, static_dims, sizeof static_dims);
      bo.plan.n_shapes++;
    }
    cli_apply_batch(&bo, g);
    nnp_tensor inputs[NNP_PLAN_MAX_BINDINGS];
    const char *names[NNP_PLAN_MAX_BINDINGS];
    int n_in = 0;
    char scenario[160] = "static:";
    nnp_status st = NNP_OK;
    char dyn_dims[160] = "";
    if (dynamic_shape) {
      resolve_dynamic(dynamic_shape, batches[bi], dyn_dims, sizeof dyn_dims);
      snprintf(scenario, sizeof scenario, "dynamic:%s", dyn_dims);
    }
    for (int i = 0; i < g->n_inputs && st == NNP_OK; i++) {
      if (dynamic_shape && i == 0) { /* drawn per iteration by the worker */
        memset(&inputs[i], 0, sizeof inputs[i]);
        names[i] = g->values[g->inputs[i]].name;
        n_in++;
        continue;
      }
      st = nnp_resolve_input_shape(g, &bo.plan, i, &inputs[i]);
      if (st == NNP_OK) st = nnp_tensor_alloc(&inputs[i]);
      if (st != NNP_OK) break;
      nnp_fill_seeded(&inputs[i], (uint64_t)seed + (uint64_t)i);
      names[i] = g->values[g->inputs[i]].name;
      n_in++;
      if (dynamic_shape) continue;
      char dims[128];
      size_t len = strlen(scenario);
      snprintf(scenario + len, sizeof scenario - len, "%s%s", i ? "," : "",
               nnp_shape_str(inputs[i].rank, inputs[i].dims, dims, sizeof dims));
    }
    if (st != NNP_OK) {
      for (int i = 0; i < n_in; i++) nnp_tensor_free(&inputs[i]);
      rc = cli_fail(mo.model);
      break;
    }
    for (int ti = 0; ti < n_threads && !nnp_bench_interrupted && !resume_error; ti++)
    for (int pi = 0; pi < n_prec && !nnp_bench_interrupted && !resume_error; pi++) {
      long long threads = thread_counts[ti];
      for (int k = 0; k < n_backends && !nnp_bench_interrupted && !resume_error; k++) {
        nnp_bench_row *row = &res.rows[res.n_rows];
        const char *opts = "";
        char optbuf[512] = "";
        if (options_arg) { /* B:K=V,... for the matching backend */
          size_t bl = strlen(backends[k]->name);
          if (!strncmp(options_arg, backends[k]->name, bl) && options_arg[bl] == ':') {
            snprintf(optbuf, sizeof optbuf, "%s", options_arg + bl + 1);
            opts = optbuf;
          }
        }
        /* --passes / --no-PASS / --no-memory-plan reach the native engine as its options */
        if (!strcmp(backends[k]->name, "native") && (mo.plan.passes != NNP_PASS_DEFAULT || !mo.plan.memory_plan)) {
          size_t ol = strlen(optbuf);
          snprintf(optbuf + ol, sizeof optbuf - ol, "%spasses=0x%x,memory_plan=%d", ol ? "," : "",
                   mo.plan.passes, mo.plan.memory_plan ? 1 : 0);
          opts = optbuf;
        }
        if (with_cache[k]) {
          size_t ol = strlen(optbuf);
          snprintf(optbuf + ol, sizeof optbuf - ol, "%scache_dir=%s", ol ? "," : "", cache_arg);
          opts = optbuf;
        }
        if (torch_model_arg && !strncmp(backends[k]->name, "torch", 5)) {
          size_t ol = strlen(optbuf);
          snprintf(optbuf + ol, sizeof optbuf - ol, "%smodel=%s", ol ? "," : "", torch_model_arg);
          opts = optbuf;
        }
        nnp_row_request req = {.worker_exe = self, .backend = backends[k]->name, .model_path = model_path,
                               .options = opts, .precision = precisions[pi], .threads = (int)threads,
                               .batch = batches[bi], .scenario = scenario, .n_inputs = n_in, .inputs = inputs,
                               .input_names = names, .dyn_input = dynamic_shape ? 0 : -1,
                               .dyn_dims = dyn_dims, .loop = loop, .seed = (uint64_t)seed, .timeout_s = timeout_s,
                               .mem_limit = mem_mib << 20, .pin_cpus = pin ? (int)threads : 0};
        /* --int8-model: the worker runs the QDQ file as given (fp32 I/O, int8 inside); the
         * row is recorded as int8 so that it is never the reference and gets int8's tolerance */
        int int8_row = int8_model && precisions[pi] == NNP_INT8;
        if (int8_row) {
          req.model_path = int8_model;
          req.precision = NNP_FP32;
        }
        const char *ext_argv[] = {nnp_external_python_for(backends[k]), "-m", "nnperf_worker", NULL};
        if (backends[k]->kind == NNP_BACKEND_EXTERNAL) {
          req.external_argv = ext_argv;
          req.pythonpath = nnp_external_pythonpath();
        }
        pc.row = res.n_rows + 1;
        nnp_row_init(&req, row);
        char label[96];
        snprintf(label, sizeof label, "%s%s", row->label, with_cache[k] ? " cache" : "");
        pc.label = label;
        progress(&pc, "start", 0, 0);
        int kept = res.n_rows < done.n_rows; /* finished in the run being resumed */
        if (kept) {
          nnp_bench_row *old = &done.rows[res.n_rows];
          if (nnp_resume_check_row(old, row, res.n_rows, (int)processes, resume_path) != NNP_OK) {
            fprintf(stderr, "nnperf bench: %s\n", nnp_last_error());
            resume_error = 1;
            break;
          }
          *row = *old;
          memset(old, 0, sizeof *old);
          /* rows still to run compare their outputs with the reference row's */
          if (row->status == NNP_ROW_OK && !strcmp(row->backend, "native") && row->precision == NNP_FP32 &&
              done.n_rows < total_rows && nnp_resume_fetch_outputs(&req, row) != NNP_OK)
            fprintf(stderr, "nnperf bench: --resume: no reference outputs from %s: %s\n", row->label, nnp_last_error());
        } else if (!available[k]) { /* recorded, never faked: the reason and the install hint */
          row->status = NNP_ROW_UNAVAILABLE;
          snprintf(row->reason, sizeof row->reason, "%s (install: %s)", unavailable_why[k], backends[k]->install_hint);
        } else if ((with_cache[k] && prime_plan_cache(&req) != NNP_OK) ||
                   nnp_run_row_processes(&req, processes, row, progress, &pc) != NNP_OK) {
          nnp_bench_row_free(row);
          nnp_row_init(&req, row);
          row->status = NNP_ROW_FAILED;
          snprintf(row->reason, sizeof row->reason, "%s", nnp_last_error());
        }
        if (int8_row) {
          row->precision = NNP_INT8;
          snprintf(row->label, sizeof row->label, "%s int8 t%d b%lld", row->backend, row->threads,
                   (long long)row->batch);
          snprintf(label, sizeof label, "%s", row->label);
        }
        if (with_cache[k]) snprintf(row->label, sizeof row->label, "%s", label); /* the run re-inits it */
        /* A row cut short by Ctrl-C or SIGTERM is not a result: it is left out (not
         * recorded as failed), so that --resume runs it again. */
        if (!kept && nnp_bench_interrupted && available[k] &&
            !(row->status == NNP_ROW_OK && row->n_processes == (int)processes)) {
          nnp_bench_row_free(row);
          memset(row, 0, sizeof *row);
          break;
        }
        /* labels name rows (baseline, accuracy reference): keep them unique */
        int same = 0;
        size_t ll = strlen(label);
        for (int r = 0; r < res.n_rows; r++) {
          const char *other = res.rows[r].label;
          if (!strncmp(other, label, ll) && (other[ll] == 0 || !strncmp(other + ll, " #", 2))) same++;
        }
        if (same) snprintf(row->label, sizeof row->label, "%s #%d", label, same + 1);
        res.n_rows++;
        /* accuracy against the reference: the first ok native fp32 row of this batch */
        for (int r = 0; r < res.n_rows - 1; r++) {
          nnp_bench_row *ref = &res.rows[r];
          if (ref->status == NNP_ROW_OK && !strcmp(ref->backend, "native") && ref->precision == NNP_FP32 &&
              ref->batch == row->batch && !strcmp(ref->scenario, row->scenario) && ref->n_outputs) {
            if (row->status == NNP_ROW_OK && row->n_outputs == ref->n_outputs) {
              nnp_accuracy_criterion crit = nnp_accuracy_default_criterion(row->precision);
              nnp_accuracy_compare(row->first_outputs, ref->first_outputs, ref->n_outputs, &crit, &row->acc);
              /* static shapes: the last inference saw the same inputs, so it must agree as
               * well (a backend whose results drift over iterations fails here) */
              if (!dynamic_shape) {
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
            break;
          }
        }
        /* --int8-model: another backend's int8 row against nnperf's own int8 outputs on the
         * same QDQ file (top-1, cosine), beside its accuracy against native fp32 */
        if (int8_row && row->status == NNP_ROW_OK && strcmp(row->backend, "native") != 0)
          for (int r = 0; r < res.n_rows - 1; r++) {
            nnp_bench_row *ref = &res.rows[r];
            if (ref->status == NNP_ROW_OK && !strcmp(ref->backend, "native") && ref->precision == NNP_INT8 &&
                ref->batch == row->batch && !strcmp(ref->scenario, row->scenario) && ref->n_outputs &&
                ref->n_outputs == row->n_outputs) {
              nnp_accuracy_criterion crit = nnp_accuracy_default_criterion(NNP_INT8);
              nnp_accuracy_compare(row->first_outputs, ref->first_outputs, ref->n_outputs, &crit, &row->int8_agree);
              snprintf(row->int8_agree.reference, sizeof row->int8_agree.reference, "%s", ref->label);
              break;
            }
          }
        if (row->status != NNP_ROW_OK && row->status != NNP_ROW_UNAVAILABLE) rc = CLI_FAIL;
        if (!kept && row->status == NNP_ROW_OK && row->stats.cv > 0.1) res.noisy = true;
        double spread = kept ? 0 : process_spread(row); /* a kept row has its note already */
        if (row->status == NNP_ROW_OK && spread > 0.05) { /* the processes disagree: say so */
          res.noisy = true;
          size_t nl = strlen(row->note);
          snprintf(row->note + nl, sizeof row->note - nl, "%sthe medians of its %d processes differ by %.0f%%",
                   nl ? "; " : "", row->n_processes, spread * 100);
        }
        if (json_path && !kept && nnp_report_write_json(&res, json_path) != NNP_OK) { /* kept: nothing new */
          cli_fail("--json");
          rc = CLI_FAIL;
        }
      }
    }
    for (int i = 0; i < n_in; i++) nnp_tensor_free(&inputs[i]);
  }
  if (pc.tty) fprintf(stderr, "\r\033[K");
  if (nnp_env_is_busy(&res.env)) res.noisy = true;
  /* a configuration that does not match --resume's file leaves that file as it was */
  if (json_path && !resume_error && nnp_report_write_json(&res, json_path) != NNP_OK) rc = cli_fail("--json");
  if (csv_path && !resume_error && nnp_report_write_csv(&res, csv_path) != NNP_OK) rc = cli_fail("--csv");
  if (html_path && !resume_error && nnp_report_write_html(&res, html_path) != NNP_OK) rc = cli_fail("--html");
  if (!quiet && !resume_error) nnp_report_table(stdout, &res);
  /* every run goes to the history, unless asked not to */
  if (!no_history && !resume_error && res.n_rows > 0) cli_store_history(&res, history_path, quiet);
  if (nnp_bench_interrupted) {
    fprintf(stderr, "nnperf: interrupted: %d of %d rows finished%s%s\n", res.n_rows, total_rows,
            json_path ? ", saved to " : "", json_path ? json_path : "");
    if (json_path) fprintf(stderr, "nnperf: continue with the same command and --resume %s\n", json_path);
    rc = 130;
  }
  if (resume_error) rc = CLI_USAGE;
  nnp_bench_result_free(&done);
  nnp_bench_result_free(&res);
  nnp_graph_destroy(g);
  nnp_zoo_model_file_remove(model_path, tmpdir);
  return rc;
}
