/* nnperf sweep: a plan file (docs/sweep.md) run here, or submitted to Slurm, its status,
 * and its rows collected into one result. Every group of the plan becomes one
 * nnp_sweep_spec run by the sweep library; rows land in the plan's results folder. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cli_result.h"
#include "cluster/results_dir.h"
#include "cluster/slurm.h"
#include "cluster/plan_llm.h"
#include "cluster/sweep_collect.h"
#include "cluster/sweep_jobs.h"
#include "llm/llm_report.h"
#include "nnperf/report.h"
#include "nnperf/result.h"
#include "nnperf/sweep.h"
#include "nnperf/sweep_plan.h"

static const char sweep_help[] =
    "usage: nnperf sweep PLAN [--slurm] [--resume] [--results DIR] [--quiet]\n"
    "       nnperf sweep status PLAN [--results DIR]\n"
    "       nnperf sweep collect PLAN [-o FILE] [--results DIR] [--no-history] [--history DB] [--quiet]\n\n"
    "Runs a sweep plan (a JSON file: models x backends x precisions x batches x threads x shapes,\n"
    "loop settings, hardware classes, and LLM rows of GGUF models in its llm section; docs/sweep.md).\n"
    "  PLAN               run every row on this machine (hardware class 'local'), write each row to\n"
    "                     the results folder as it finishes, then print the collected table\n"
    "  PLAN --slurm       submit one --exclusive job per hardware class and model x shape group\n"
    "                     (sbatch; time and memory limits derived from the plan); each job runs\n"
    "                     nnperf on its node and writes its rows to the shared results folder\n"
    "  --resume           run (or submit) only the rows that are missing or failed\n"
    "  --results DIR      the results folder (default: the plan's \"results\", else PLAN-NAME.results\n"
    "                     beside the plan)\n"
    "  status PLAN        jobs (queued, running, done, failed with reason) and their rows\n"
    "  collect PLAN       every row of the folder in one result (each row keeps its hardware class,\n"
    "                     node, job id and host environment): table, -o FILE (default\n"
    "                     DIR/collected.json; LLM rows: FILE-llm.json), and the history database\n\n"
    "exit status: 0 done, 1 a row failed or Slurm refused, 2 bad command line or plan\n";

static volatile sig_atomic_t job_signal;
static void on_signal(int sig) {
  job_signal = sig;
  nnp_sweep_interrupt();
}

typedef struct sweep_args {
  const char *plan_path, *results, *out, *history, *cls;
  int slurm, resume, quiet, no_history, group;
} sweep_args;

typedef struct row_sink {
  const char *dir, *gid;
  nnp_results_host host;
  int failed_writes;
} row_sink;

/* The sweep library's row-finished callback: the row, with where it ran, to the folder. */
static void write_row(void *ud, const nnp_bench_result *res, int index, bool kept) {
  row_sink *s = ud;
  if (kept) return; /* finished by an earlier run: its file is there */
  if (nnp_results_write_row(s->dir, s->gid, res, index, &s->host) != NNP_OK) {
    fprintf(stderr, "nnperf sweep: %s\n", nnp_last_error());
    s->failed_writes++;
  }
}

/* Group g as a sweep spec: an inference group, or an LLM group of the LLM workload. */
static void group_spec(const nnp_sweep_plan *plan, int g, nnp_llm_sweep_spec *llm, nnp_sweep_spec *spec) {
  nnp_sweep_spec_default(spec);
  if (nnp_plan_group_is_llm(plan, g)) nnp_plan_llm_group_spec(plan, g, llm, spec);
  else nnp_plan_group_spec(plan, g, spec);
}

/* Runs group g of the plan for class cls here; with resume, only its rows not ok yet. */
static int run_group(const nnp_sweep_plan *plan, const char *dir, int g, const char *cls, int resume, int quiet) {
  char gid[17], node[64] = "";
  nnp_results_group_id(plan, g, gid);
  gethostname(node, sizeof node - 1);
  const char *job = getenv("SLURM_JOB_ID"), *slurm_node = getenv("SLURMD_NODENAME");
  row_sink sink = {.dir = dir, .gid = gid,
                   .host = {.hw_class = cls, .job_id = job ? job : "", .node = slurm_node ? slurm_node : node}};
  nnp_bench_result done, res;
  memset(&done, 0, sizeof done);
  if (resume && nnp_results_read(dir, cls, gid, 1, &done) != NNP_OK) return cli_fail(NULL);
  nnp_sweep_spec spec;
  nnp_llm_sweep_spec llm;
  group_spec(plan, g, &llm, &spec);
  spec.command_line = "nnperf sweep";
  spec.resume = done.n_rows ? &done : NULL;
  spec.resume_name = dir;
  spec.resume_by_key = true; /* the folder's ok rows, wherever they sit in the group's order */
  spec.row_done = write_row;
  spec.ud = &sink;
  nnp_sweep_outcome out;
  nnp_status st = nnp_sweep_run(&spec, &res, &out);
  int rc = st != NNP_OK ? cli_fail(NULL) : (out.any_failed || sink.failed_writes) ? CLI_FAIL : CLI_OK;
  if (!quiet && st == NNP_OK)
    fprintf(stderr, "nnperf sweep: %s (%s): %d rows run, %d kept\n", spec.model, cls, out.n_planned - out.n_kept,
            out.n_kept);
  if (out.interrupted) {
    fprintf(stderr, "nnperf sweep: %s: stopped by signal %d after %d of %d rows%s%s\n", spec.model, (int)job_signal,
            res.n_rows, out.n_planned, job && *job ? " in Slurm job " : "", job ? job : "");
    rc = 130;
  }
  nnp_bench_result_free(&res);
  nnp_bench_result_free(&done);
  return rc;
}

/* Writes, shows and stores one collected document (one kind of row); 1 when a row failed. */
static int collected_kind(nnp_bench_result *r, const char *out, const sweep_args *a) {
  int rc = CLI_OK;
  if (nnp_result_write_file(r, out) != NNP_OK) rc = cli_fail(NULL);
  if (!a->quiet && r->llm) nnp_llm_report_table(stdout, r->llm);
  else if (!a->quiet) nnp_report_table(stdout, r);
  if (!a->no_history && r->n_rows) cli_store_history(r, a->history, a->quiet);
  for (int i = 0; i < r->n_rows; i++)
    if (r->rows[i].status != NNP_ROW_OK && r->rows[i].status != NNP_ROW_UNAVAILABLE) rc = CLI_FAIL;
  if (!a->quiet) fprintf(stderr, "nnperf sweep: %d %srows collected into %s\n", r->n_rows, r->llm ? "LLM " : "", out);
  return rc;
}

/* Every row of the folder, labelled by model, in one result per kind: inference rows to
 * FILE (default DIR/collected.json), LLM rows to FILE with -llm before .json. */
static int cmd_collect(const nnp_sweep_plan *plan, const char *dir, const sweep_args *a) {
  nnp_bench_result cnn, llm;
  int rc = CLI_OK;
  if (nnp_sweep_collect(plan, dir, &cnn, &llm) != NNP_OK) {
    rc = cli_fail(NULL);
    nnp_bench_result_free(&cnn);
    nnp_bench_result_free(&llm);
    return rc;
  }
  char out[4200], out_llm[4300];
  snprintf(out, sizeof out, "%s", a->out ? a->out : "");
  if (!a->out) snprintf(out, sizeof out, "%s/collected.json", dir);
  size_t stem = strlen(out) > 5 && !strcmp(out + strlen(out) - 5, ".json") ? strlen(out) - 5 : strlen(out);
  snprintf(out_llm, sizeof out_llm, "%.*s-llm.json", (int)stem, out);
  if (cnn.n_rows || !llm.n_rows) rc = collected_kind(&cnn, out, a);
  if (llm.n_rows && llm.llm) {
    int r = collected_kind(&llm, out_llm, a);
    if (r != CLI_OK) rc = r;
  }
  nnp_bench_result_free(&cnn);
  nnp_bench_result_free(&llm);
  return rc;
}

static int parse_args(int argc, char **argv, sweep_args *a) {
  memset(a, 0, sizeof *a);
  a->group = -1;
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int value = !strcmp(s, "--results") || !strcmp(s, "-o") || !strcmp(s, "--history") || !strcmp(s, "--class") ||
                !strcmp(s, "--group");
    if (value && !v) return cli_usage_error("sweep", "%s needs a value", s);
    if (!strcmp(s, "--results")) a->results = argv[++i];
    else if (!strcmp(s, "-o")) a->out = argv[++i];
    else if (!strcmp(s, "--history")) a->history = argv[++i];
    else if (!strcmp(s, "--class")) a->cls = argv[++i];
    else if (!strcmp(s, "--group")) a->group = atoi(argv[++i]);
    else if (!strcmp(s, "--slurm")) a->slurm = 1;
    else if (!strcmp(s, "--resume")) a->resume = 1;
    else if (!strcmp(s, "--quiet") || !strcmp(s, "-q")) a->quiet = 1;
    else if (!strcmp(s, "--no-history")) a->no_history = 1;
    else if (s[0] == '-') return cli_usage_error("sweep", "unknown option '%s'", s);
    else if (!a->plan_path) a->plan_path = s;
    else return cli_usage_error("sweep", "more than one plan given");
  }
  if (!a->plan_path) return cli_usage_error("sweep", "no plan file given (nnperf sweep --help)");
  return CLI_OK;
}

static int run_local(const nnp_sweep_plan *plan, const char *dir, const sweep_args *a) {
  if (!a->resume && nnp_results_any(dir)) {
    fprintf(stderr, "nnperf sweep: results folder %s already holds rows: --resume continues them, or remove it\n", dir);
    return CLI_USAGE;
  }
  int rc = CLI_OK;
  for (int g = 0; g < nnp_plan_n_groups(plan) && rc != 130; g++) {
    int r = run_group(plan, dir, g, "local", a->resume, a->quiet);
    if (r != CLI_OK) rc = r;
  }
  if (rc == 130) return rc;
  int crc = cmd_collect(plan, dir, a);
  return rc != CLI_OK ? rc : crc;
}

static int run_slurm(const nnp_sweep_plan *plan, const char *dir, const sweep_args *a) {
  if (!a->resume && nnp_results_any(dir)) {
    fprintf(stderr, "nnperf sweep: results folder %s already holds rows: --resume continues them, or remove it\n", dir);
    return CLI_USAGE;
  }
  char self[4096];
  ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
  self[sl > 0 ? sl : 0] = 0;
  if (nnp_sweep_submit(plan, dir, a->resume, self, stdout) != NNP_OK) {
    fprintf(stderr, "nnperf sweep: %s\n", nnp_last_error());
    return CLI_FAIL;
  }
  return CLI_OK;
}

int nnp_cmd_sweep(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      fputs(sweep_help, stdout);
      return CLI_OK;
    }
  const char *sub = argc > 1 && (!strcmp(argv[1], "status") || !strcmp(argv[1], "collect") ||
                                 !strcmp(argv[1], "__job")) ? argv[1] : NULL;
  sweep_args a;
  int rc = parse_args(sub ? argc - 1 : argc, sub ? argv + 1 : argv, &a);
  if (rc != CLI_OK) return rc;
  nnp_sweep_plan *plan = calloc(1, sizeof *plan);
  char plan_abs[4096], dir[4096];
  if (!plan) return cli_fail(NULL);
  if (!realpath(a.plan_path, plan_abs)) snprintf(plan_abs, sizeof plan_abs, "%s", a.plan_path);
  if (nnp_plan_load(plan_abs, plan) != NNP_OK) {
    fprintf(stderr, "nnperf sweep: %s\n", nnp_last_error());
    free(plan);
    return CLI_USAGE;
  }
  if (a.results) snprintf(plan->results, sizeof plan->results, "%s", a.results);
  nnp_plan_results_dir(plan, dir, sizeof dir);
  if (a.results && a.results[0] != '/') { /* relative to where the command runs */
    char cwd[2048] = ".";
    if (getcwd(cwd, sizeof cwd)) snprintf(dir, sizeof dir, "%s/%s", cwd, a.results);
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  if (!sub) rc = a.slurm ? run_slurm(plan, dir, &a) : run_local(plan, dir, &a);
  else if (!strcmp(sub, "status")) rc = nnp_sweep_status(plan, dir, stdout) == NNP_OK ? CLI_OK : cli_fail(NULL);
  else if (!strcmp(sub, "collect")) rc = cmd_collect(plan, dir, &a);
  else if (!a.cls || a.group < 0 || a.group >= nnp_plan_n_groups(plan)) /* __job: inside a Slurm job */
    rc = cli_usage_error("sweep", "__job needs --class NAME and --group 0..%d", nnp_plan_n_groups(plan) - 1);
  else rc = run_group(plan, dir, a.group, a.cls, 1, a.quiet);
  free(plan);
  return rc;
}
