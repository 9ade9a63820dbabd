/* nnperf bench: every backend x configuration, one methodology, one table. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/accuracy.h"
#include "bench/orchestrator.h"
#include "bench/resume.h"
#include "bench/sweep_inputs.h"
#include "cli/cli.h"
#include "cli/cli_result.h"
#include "report/progress_text.h"
#include "nnperf/alloc.h"
#include "nnperf/bench.h"
#include "nnperf/backend.h"
#include "nnperf/history.h"
#include "nnperf/report_html.h"
#include "nnperf/onnx.h"
#include "nnperf/report.h"
#include "nnperf/sweep.h"
#include "nnperf/zoo.h"
#include "util/writable.h"

#define DEFAULT_MODEL "zoo:mobilenet_v2"
#define MAX_LIST 16

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
    "                         also torch-compile: a twin row 'torch-compile ... cache' with Inductor's\n"
    "                         cache DIR/inductor filled first (warm), beside the cold-cache row\n"
    "  --device D             cpu (default) or cuda[:N]: where the torch rows run (the other rows stay\n"
    "                         on the CPU; native fp32 is the reference); without a GPU they are\n"
    "                         'unavailable'\n"
    "  --realistic            each row gets a twin 'realistic': per iteration a fresh input is written\n"
    "                         into a host buffer (and copied to the device) inside the timed region\n"
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
    "exit status: 0 all rows ok (an unavailable backend is said on stderr); 1 a row failed (still\n"
    "recorded), bad input (a missing model), or nothing asked for could run; 2 bad command line\n\n"
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
  if (end == s || !(v >= lo)) return 0;
  if (*end) return 0;
  *out = v;
  return 1;
}

/* What the command line asks for beyond the sweep spec: where the results go. */
typedef struct bench_args {
  cli_model_opts mo;
  nnp_sweep_spec spec;
  char *backends_arg, *batch_arg, *precision_arg, *threads_arg;
  const char *resume_path, *json_path, *csv_path, *html_path, *history_path;
  long long mem_mib, seed, processes;
  int quiet, no_history;
  char command_line[1024];
} bench_args;

typedef struct progress_ctx {
  int tty;
  double t0; /* the sweep's start, for the time left */
  int kept;  /* rows taken from --resume so far: they took no time, so they count neither way */
} progress_ctx;

static void progress(void *ud, int row, int n_rows, const char *label, const char *phase, int done, int total) {
  progress_ctx *p = ud;
  if (!p->tty) return;
  char text[128];
  nnp_progress_text(text, sizeof text, phase, done, total, cli_now() - p->t0, row - 1 - p->kept, n_rows - p->kept);
  fprintf(stderr, "\r\033[K[%d/%d] %-28s %s", row, n_rows, label, text);
  fflush(stderr);
}

/* Options of the timing loop and the worker limits; 1 consumed, 0 not one of them,
 * CLI_USAGE-negated on a bad value. */
static int loop_option(bench_args *b, const char *a, const char *v) {
  nnp_loop_spec *loop = &b->spec.loop;
  long long x;
  if (!strcmp(a, "--warmup")) {
    if (!parse_int(v, 0, 1000000, &x)) return -cli_usage_error("bench", "--warmup wants a count >= 0, not '%s'", v);
    loop->warmup_min = (int)x;
    if (loop->warmup_max < loop->warmup_min) loop->warmup_max = loop->warmup_min;
  } else if (!strcmp(a, "--iterations")) {
    if (!parse_int(v, 1, 100000000, &x)) return -cli_usage_error("bench", "--iterations wants a count >= 1, not '%s'", v);
    loop->iterations = (int)x;
  } else if (!strcmp(a, "--min-time")) {
    if (!parse_double(v, 0, &loop->min_time_s)) return -cli_usage_error("bench", "--min-time wants seconds >= 0, not '%s'", v);
  } else if (!strcmp(a, "--max-time")) {
    if (!parse_double(v, 0.001, &loop->max_time_s)) return -cli_usage_error("bench", "--max-time wants seconds > 0, not '%s'", v);
  } else if (!strcmp(a, "--timeout")) {
    if (!parse_double(v, 0.1, &b->spec.timeout_s)) return -cli_usage_error("bench", "--timeout wants seconds > 0, not '%s'", v);
  } else if (!strcmp(a, "--mem-limit")) {
    if (!parse_int(v, 1, 1 << 30, &b->mem_mib)) return -cli_usage_error("bench", "--mem-limit wants MiB >= 1, not '%s'", v);
  } else if (!strcmp(a, "--processes")) {
    if (!parse_int(v, 1, NNP_MAX_PROCESSES, &b->processes))
      return -cli_usage_error("bench", "--processes wants 1..%d, not '%s'", NNP_MAX_PROCESSES, v);
  } else if (!strcmp(a, "--seed")) {
    if (!parse_int(v, 0, (1LL << 62), &b->seed)) return -cli_usage_error("bench", "--seed wants an integer >= 0, not '%s'", v);
  } else {
    return 0;
  }
  return 1;
}

/* Options that take a string value; 1 consumed, 0 not one of them. */
static int string_option(bench_args *b, const char *a, char *v) {
  nnp_sweep_spec *s = &b->spec;
  if (!strcmp(a, "--backends") || !strcmp(a, "--backend")) b->backends_arg = v;
  else if (!strcmp(a, "--precision")) b->precision_arg = v;
  else if (!strcmp(a, "--backend-options")) s->backend_options = v;
  else if (!strcmp(a, "--torch-model")) s->torch_model = v;
  else if (!strcmp(a, "--int8-model")) s->int8_model = v;
  else if (!strcmp(a, "--cache")) s->cache_dir = v;
  else if (!strcmp(a, "--device")) s->device = v;
  else if (!strcmp(a, "--threads")) b->threads_arg = v;
  else if (!strcmp(a, "--json")) b->json_path = v;
  else if (!strcmp(a, "--csv")) b->csv_path = v;
  else if (!strcmp(a, "--resume")) b->resume_path = v;
  else if (!strcmp(a, "--baseline")) s->baseline = v;
  else if (!strcmp(a, "--history")) b->history_path = v;
  else if (!strcmp(a, "--html")) b->html_path = v;
  else return 0;
  return 1;
}

/* One option at argv[*i]; CLI_OK, CLI_USAGE, or -1 after --help was printed. */
static int bench_option(bench_args *b, int argc, char **argv, int *i) {
  const char *a = argv[*i];
  char *v = *i + 1 < argc ? argv[*i + 1] : NULL;
  if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
    printf(bench_help, cli_model_options_help);
    return -1;
  }
  if (!strcmp(a, "--shape") && v && (!strncmp(v, "static:", 7) || !strncmp(v, "dynamic:", 8))) {
    ++*i;
    if (v[0] == 's') b->spec.static_shape = v + 7;
    else if (!nnp_dynamic_spec_valid(b->spec.dynamic_shape = v + 8))
      return cli_usage_error("bench", "--shape dynamic: wants dims like Nx3x[160..320]x[160..320], not '%s'", v);
    return CLI_OK;
  }
  if (!strcmp(a, "--batch")) { /* a list here, unlike other commands */
    if (!v) return cli_usage_error("bench", "--batch needs a value");
    b->batch_arg = argv[++*i];
    return CLI_OK;
  }
  int used = cli_model_option(&b->mo, "bench", argc, argv, i);
  if (used < 0) return CLI_USAGE;
  if (used) return CLI_OK;
  static const char *const value_options[] = {"--backends", "--backend", "--precision", "--backend-options",
                                              "--threads", "--warmup", "--iterations", "--min-time",
                                              "--max-time", "--timeout", "--mem-limit", "--seed", "--json",
                                              "--csv", "--baseline", "--shape", "--processes", "--history", "--html",
                                              "--torch-model", "--resume", "--int8-model", "--cache", "--device"};
  int takes_value = 0;
  for (size_t k = 0; k < sizeof value_options / sizeof *value_options; k++) takes_value |= !strcmp(a, value_options[k]);
  if (takes_value && !v) return cli_usage_error("bench", "%s needs a value", a);
  int r = takes_value ? loop_option(b, a, v) : 0;
  if (r < 0) return -r;
  if (r || (takes_value && string_option(b, a, v))) {
    ++*i;
    return CLI_OK;
  }
  if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) b->quiet = 1;
  else if (!strcmp(a, "--pin")) b->spec.pin = true;
  else if (!strcmp(a, "--allow-mixed")) b->spec.allow_mixed = true;
  else if (!strcmp(a, "--realistic")) b->spec.realistic = true;
  else if (!strcmp(a, "--no-history")) b->no_history = 1;
  else if (a[0] == '-') return cli_usage_error("bench", "unknown option '%s'", a);
  else if (!b->mo.model) b->mo.model = a;
  else return cli_usage_error("bench", "more than one model given");
  return CLI_OK;
}

/* The comma lists into the spec's axes; CLI_OK or CLI_USAGE (message printed). */
static int parse_axes(bench_args *b, int default_model) {
  nnp_sweep_spec *s = &b->spec;
  char *names[MAX_LIST];
  long long x;
  if (b->threads_arg) {
    s->n_threads = split_list(b->threads_arg, names, MAX_LIST);
    for (int k = 0; k < s->n_threads; k++) {
      if (!parse_int(names[k], 1, 1024, &x)) return cli_usage_error("bench", "--threads wants counts 1..1024, not '%s'", names[k]);
      s->threads[k] = (int)x;
    }
    if (!s->n_threads) return cli_usage_error("bench", "--threads is empty");
  }
  if (b->backends_arg) {
    s->n_backends = split_list(b->backends_arg, names, MAX_LIST);
    for (int k = 0; k < s->n_backends; k++) {
      if (!nnp_backend_find(names[k]))
        return cli_usage_error("bench", "unknown backend '%s'; nnperf backends lists them", names[k]);
      s->backends[k] = names[k];
    }
    if (!s->n_backends) return cli_usage_error("bench", "--backends is empty");
  }
  if (b->precision_arg) {
    s->n_precisions = split_list(b->precision_arg, names, MAX_LIST);
    for (int k = 0; k < s->n_precisions; k++)
      if (!nnp_precision_parse(names[k], &s->precisions[k]))
        return cli_usage_error("bench", "unknown precision '%s' (fp32, fp16, int8, mixed)", names[k]);
    if (!s->n_precisions) return cli_usage_error("bench", "--precision is empty");
  }
  s->n_batches = default_model ? 2 : 1;
  s->batches[0] = 1, s->batches[1] = 16;
  if (b->batch_arg) {
    s->n_batches = split_list(b->batch_arg, names, MAX_LIST);
    for (int k = 0; k < s->n_batches; k++) {
      if (!parse_int(names[k], 1, 1 << 20, &x)) return cli_usage_error("bench", "--batch wants positive integers, not '%s'", names[k]);
      s->batches[k] = x;
    }
    if (!s->n_batches) return cli_usage_error("bench", "--batch is empty");
  }
  int64_t dims[NNP_MAX_RANK];
  int rank = 0;
  if (s->static_shape) {
    if (!cli_parse_dims(s->static_shape, &rank, dims))
      return cli_usage_error("bench", "--shape static: wants DIMS like 1x3x224x224, not '%s'", s->static_shape);
    for (int d = 0; d < rank; d++)
      if (dims[d] <= 0) return cli_usage_error("bench", "--shape dimensions must be positive");
  }
  return CLI_OK;
}

/* The checks that need no model: files, combinations; CLI_OK or CLI_USAGE. */
static int check_args(bench_args *b) {
  if (b->spec.static_shape && b->spec.dynamic_shape)
    return cli_usage_error("bench", "give either --shape static: or dynamic:, not both");
  const char *dev = b->spec.device;
  if (dev && strcmp(dev, "cpu") && strcmp(dev, "cuda") &&
      !(!strncmp(dev, "cuda:", 5) && dev[5] >= '0' && dev[5] <= '9' && strspn(dev + 5, "0123456789") == strlen(dev + 5)))
    return cli_usage_error("bench", "--device wants cpu, cuda or cuda:N, not '%s'", dev);
  if (b->spec.realistic && b->spec.dynamic_shape)
    return cli_usage_error("bench", "--realistic applies to static shapes (a dynamic scenario already writes each input)");
  const char *model = b->mo.model;
  if (strncmp(model, "zoo:", 4) && access(model, R_OK) != 0) { /* bad input: 1, like zoo:nope */
    nnp_error(NNP_ERR_IO, "model '%s' not found or not readable: %s", model, strerror(errno));
    return cli_fail(NULL);
  }
  /* the result files are written after the last row: refuse a destination that cannot be
   * written before measuring anything, not after the whole sweep */
  const char *outputs[][2] = {{"--json", b->json_path}, {"--csv", b->csv_path}, {"--html", b->html_path}};
  for (int k = 0; k < 3; k++)
    if (outputs[k][1] && nnp_check_writable(outputs[k][1]) != NNP_OK) {
      fprintf(stderr, "nnperf bench: %s: %s\n", outputs[k][0], nnp_last_error());
      return CLI_USAGE;
    }
  const char *int8 = b->spec.int8_model;
  if (int8 && access(int8, R_OK) != 0) {
    nnp_error(NNP_ERR_IO, "--int8-model '%s' not found or not readable: %s", int8, strerror(errno));
    return cli_fail(NULL);
  }
  return CLI_OK;
}

/* Parses argv into *b; CLI_OK to run, else the exit status (-1: --help, exit 0). */
static int parse_bench(int argc, char **argv, bench_args *b) {
  memset(b, 0, sizeof *b);
  cli_model_opts_init(&b->mo);
  nnp_sweep_spec_default(&b->spec);
  b->seed = 1, b->processes = 3;
  size_t used_cl = 0; /* recorded before list options are split in place */
  for (int i = 0; i < argc && used_cl < sizeof b->command_line; i++)
    used_cl += (size_t)snprintf(b->command_line + used_cl, sizeof b->command_line - used_cl, "%s%s",
                                i ? " " : "nnperf ", argv[i]);
  for (int i = 1; i < argc; i++) {
    int rc = bench_option(b, argc, argv, &i);
    if (rc) return rc;
  }
  int default_model = !b->mo.model;
  if (!b->mo.model) b->mo.model = DEFAULT_MODEL;
  int rc = check_args(b);
  if (rc == CLI_OK) rc = parse_axes(b, default_model);
  nnp_sweep_spec *s = &b->spec;
  s->model = b->mo.model;
  s->command_line = b->command_line;
  s->plan = b->mo.plan;
  s->seed = (uint64_t)b->seed;
  s->processes = (int)b->processes;
  s->mem_limit_bytes = b->mem_mib << 20;
  return rc;
}

typedef struct row_writer {
  const char *json_path;
  int failed;
} row_writer;

/* After every new row the whole document is rewritten atomically: an interrupted sweep
 * loses at most the row under way (kept rows add nothing new; they are counted for the
 * progress line, whose time left they would otherwise shorten). */
static void write_row(void *ud, const nnp_bench_result *res, int index, bool kept) {
  row_writer *w = ((void **)ud)[1];
  (void)index;
  if (kept) ((progress_ctx *)((void **)ud)[0])->kept++;
  if (w->json_path && !kept && nnp_report_write_json(res, w->json_path) != NNP_OK) {
    cli_fail("--json");
    w->failed = 1;
  }
}

static void relay_progress(void *ud, int row, int n_rows, const char *label, const char *phase, int done, int total) {
  progress(((void **)ud)[0], row, n_rows, label, phase, done, total);
}

/* Table, files and history of a finished (or interrupted) sweep; the exit status. */
static int bench_outputs(const bench_args *b, nnp_bench_result *res, const nnp_sweep_outcome *o, int rc) {
  if (b->json_path && nnp_report_write_json(res, b->json_path) != NNP_OK) rc = cli_fail("--json");
  if (b->csv_path && nnp_report_write_csv(res, b->csv_path) != NNP_OK) rc = cli_fail("--csv");
  if (b->html_path && nnp_report_write_html(res, b->html_path) != NNP_OK) rc = cli_fail("--html");
  if (!b->quiet && res->n_rows > 0) nnp_report_table(stdout, res); /* not an empty table */
  rc = cli_asked_could_run(res, b->backends_arg != NULL, rc);
  /* every run goes to the history, unless asked not to */
  if (!b->no_history && res->n_rows > 0) cli_store_history(res, b->history_path, b->quiet);
  if (o->interrupted) {
    fprintf(stderr, "nnperf: interrupted: %d of %d rows finished%s%s\n", res->n_rows, o->n_planned,
            b->json_path ? ", saved to " : "", b->json_path ? b->json_path : "");
    if (b->json_path) fprintf(stderr, "nnperf: continue with the same command and --resume %s\n", b->json_path);
    rc = 130;
  }
  return rc;
}

int nnp_cmd_bench(int argc, char **argv) {
  static bench_args args; /* large: the spec and the paths */
  bench_args *b = &args;
  int rc = parse_bench(argc, argv, b);
  if (rc) return rc < 0 ? CLI_OK : rc;
  /* --resume: the finished rows of the earlier run, checked against this one by the sweep */
  nnp_bench_result done;
  memset(&done, 0, sizeof done);
  if (b->resume_path) {
    if (nnp_resume_load(b->resume_path, &done) != NNP_OK) return cli_fail(NULL);
    b->spec.resume = &done;
    b->spec.resume_name = b->resume_path;
    if (!b->json_path) b->json_path = b->resume_path;
  }
  cli_stop_on_signals();
  progress_ctx pc = {.tty = !b->quiet && isatty(2), .t0 = cli_now()};
  row_writer w = {.json_path = b->json_path};
  void *ud[2] = {&pc, &w};
  b->spec.progress = relay_progress;
  b->spec.row_done = write_row;
  b->spec.ud = ud;
  nnp_bench_result res;
  nnp_sweep_outcome o;
  nnp_status st = nnp_sweep_run(&b->spec, &res, &o);
  if (pc.tty) fprintf(stderr, "\r\033[K");
  if (st != NNP_OK && o.resume_refused) { /* a mismatching --resume leaves that file as it was */
    fprintf(stderr, "nnperf bench: %s\n", nnp_last_error());
    rc = CLI_USAGE;
  } else if (st != NNP_OK) {
    rc = cli_fail(NULL);
  } else {
    rc = bench_outputs(b, &res, &o, o.any_failed || w.failed ? CLI_FAIL : CLI_OK);
  }
  nnp_bench_result_free(&done);
  nnp_bench_result_free(&res);
  return rc;
}
