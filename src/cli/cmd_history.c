/* nnperf history: the runs nnperf bench stored, listed, shown and exported. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_result.h"
#include "llm/llm_load_result.h"
#include "load/load_table.h"
#include "nnperf/alloc.h"
#include "nnperf/history.h"
#include "nnperf/report.h"
#include "util/atomic_file.h"

static const char history_help[] =
    "usage: nnperf history [list]              every stored run: id, date, model, rows\n"
    "       nnperf history show ID             a run's table and environment\n"
    "       nnperf history export ID [-o F]    a run as result JSON (stdout, or file F)\n\n"
    "nnperf bench, load, coldstart, llm bench and llm load store every run (environment,\n"
    "rows, raw samples or each request's token times)\n"
    "unless --no-history.\n"
    "  --history DB   the database (default $NNPERF_HISTORY, else\n"
    "                 $XDG_DATA_HOME/nnperf/history.db or ~/.local/share/nnperf/history.db)\n\n"
    "Run ids work wherever a result file does: nnperf report ID, nnperf compare ID1 ID2.\n";

static int print_entry(void *ud, const nnp_history_entry *e) {
  int *count = ud;
  if (!(*count)++)
    printf("%-5s %-20s %-9s %-5s %-4s %-6s %s\n", "id", "date (UTC)", "kind", "rows", "ok", "noisy", "model");
  printf("%-5lld %-20s %-9s %-5d %-4d %-6s %s\n", (long long)e->id, e->timestamp, e->kind, e->n_rows, e->n_ok,
         e->noisy ? "yes" : "", e->model);
  return 0;
}

int nnp_cmd_history(int argc, char **argv) {
  const char *db = NULL, *out = NULL, *action = NULL, *arg = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(history_help, stdout);
      return CLI_OK;
    }
    if (!strcmp(a, "--history") || !strcmp(a, "-o") || !strcmp(a, "--output")) {
      if (i + 1 >= argc) return cli_usage_error("history", "%s needs a value", a);
      if (!strcmp(a, "--history")) db = argv[++i];
      else out = argv[++i];
    } else if (a[0] == '-') {
      return cli_usage_error("history", "unknown option '%s'", a);
    } else if (!action) {
      action = a;
    } else if (!arg) {
      arg = a;
    } else {
      return cli_usage_error("history", "unexpected argument '%s'", a);
    }
  }
  if (!action) action = "list";
  int list = !strcmp(action, "list"), show = !strcmp(action, "show"), export = !strcmp(action, "export");
  if (!list && !show && !export) return cli_usage_error("history", "unknown action '%s' (list, show, export)", action);
  long long id = 0;
  if (!list && (!arg || !cli_history_id(arg, &id))) return cli_usage_error("history", "%s needs a run id", action);
  if (list && arg) return cli_usage_error("history", "list takes no argument");
  if (out && !export) return cli_usage_error("history", "-o goes with export");

  char path[1024];
  if (db) snprintf(path, sizeof path, "%s", db);
  else if (nnp_history_default_path(path, sizeof path) != NNP_OK) return cli_fail(NULL);
  nnp_history *h;
  if (nnp_history_open(path, &h) != NNP_OK) return cli_fail(NULL);
  int rc = CLI_OK;
  if (list) {
    int count = 0;
    if (nnp_history_list(h, print_entry, &count) != NNP_OK) rc = cli_fail(NULL);
    else if (!count) printf("no runs in %s yet (nnperf bench, load and coldstart store every run)\n", path);
  } else if (show) {
    nnp_bench_result r;
    if (nnp_history_load(h, id, &r) != NNP_OK) rc = cli_fail(NULL);
    else {
      printf("run %lld  %s  %s\n%s\n", id, r.env.timestamp, r.model, r.command_line);
      printf("machine: %s, %d CPUs allowed, %s, %s%s\n\n", r.env.cpu_model, r.env.cpus_allowed, r.env.os,
             r.env.build_flags, r.noisy ? "  [noisy run]" : "");
      if (r.load) nnp_load_print_table(stdout, &r);
      else if (r.llm_load) nnp_llm_load_print_table(stdout, r.llm_load);
      else if (r.coldstart) nnp_coldstart_print_table(stdout, &r);
      else nnp_report_table(stdout, &r);
      nnp_bench_result_free(&r);
    }
  } else {
    char *json = NULL;
    size_t len = 0;
    if (nnp_history_export_json(h, id, &json, &len) != NNP_OK) rc = cli_fail(NULL);
    else if (!out) {
      if (fwrite(json, 1, len, stdout) != len) rc = cli_fail("stdout");
    } else {
      nnp_atomic_file af;
      if (nnp_atomic_open(&af, out) != NNP_OK) rc = cli_fail(NULL);
      else {
        fwrite(json, 1, len, af.f);
        if (nnp_atomic_commit(&af) != NNP_OK) rc = cli_fail(NULL);
      }
    }
    nnp_free(json);
  }
  nnp_history_close(h);
  return rc;
}
