/* nnperf coldstart: fresh process -> model loaded -> first result, over many processes. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/load_args.h"
#include "load/pool.h"
#include "load/report.h"
#include "load/target.h"
#include "nnperf/alloc.h"

static const char help[] =
    "usage: nnperf coldstart MODEL [options]\n\n"
    "Starts --runs fresh worker processes one after another; each loads MODEL and answers one\n"
    "inference. Reports P50/P99 of process start -> ready, model load, first inference, and\n"
    "process start -> first result. Every start compiles from scratch: nnperf has no plan\n"
    "cache yet, so these are true cold starts.\n\n"
    "  --backend B            native (default), ort-cpu, openvino, ...\n"
    "  --backend-options O    K=V,... for the backend\n"
    "  --runs N               fresh processes (default 20)\n"
    "  --threads N            intra-op threads (default 1)\n"
    "  --seed N               seed of the inputs (default 1)\n"
    "  --json PATH            write the result (docs/result-schema.md, coldstart section)\n"
    "  --timeout S            limit per process (default 600)\n";

static void on_signal(int sig) {
  (void)sig;
  nnp_bench_interrupted = 1;
}

int nnp_cmd_coldstart(int argc, char **argv) {
  char command_line[2048];
  cli_join_args(argc, argv, command_line, sizeof command_line);
  nnp_load_target_options to = {.backend = "native", .threads = 1, .seed = 1, .timeout_s = 600};
  long long runs = 20;
  const char *json = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(help, stdout);
      return CLI_OK;
    }
    if (a[0] != '-') {
      if (to.model) return cli_usage_error("coldstart", "more than one model given ('%s')", a);
      to.model = a;
      continue;
    }
    if (i + 1 >= argc) return cli_usage_error("coldstart", "%s needs a value", a);
    const char *val = argv[++i];
    char *end;
    int rc;
    if (cli_load_target_option("coldstart", a, val, &to, &rc)) {
      if (rc != CLI_OK) return rc;
    } else if (!strcmp(a, "--json")) json = val;
    else if (!strcmp(a, "--runs")) {
      runs = strtoll(val, &end, 10);
      if (end == val || *end || runs < 1 || runs > 1000) return cli_usage_error("coldstart", "--runs wants 1..1000, not '%s'", val);
    } else return cli_usage_error("coldstart", "unknown option '%s'", a);
  }
  if (!to.model) to.model = "zoo:mobilenet_v2";
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);

  nnp_load_target t;
  if (nnp_load_target_open(&to, &t) != NNP_OK) return cli_fail(to.model);
  nnp_coldstart_sample *s = nnp_calloc((size_t)runs, sizeof *s);
  static nnp_load_pool pool;
  char version[128] = "", note[256] = "";
  int done = 0, rc = CLI_OK;
  for (; s && done < runs && !nnp_bench_interrupted; done++) {
    if (nnp_load_pool_start(&t.req, 1, to.timeout_s, &pool) != NNP_OK) {
      rc = cli_fail(to.model);
      break;
    }
    const nnp_load_worker *w = &pool.w[0];
    s[done] = (nnp_coldstart_sample){w->spawn_to_ready_s, w->load_s, w->first_s, w->cold_start_s};
    snprintf(version, sizeof version, "%s", w->version);
    snprintf(note, sizeof note, "no plan cache exists yet: every start parses and compiles the model%s%s",
             w->note[0] ? "; " : "", w->note);
    nnp_load_pool_stop(&pool);
  }
  if (!s) rc = cli_fail("coldstart");
  nnp_load_meta meta = {.command_line = command_line, .model = to.model, .backend = to.backend,
                        .backend_version = version, .options = to.options ? to.options : "", .note = note,
                        .instances = 1, .threads = to.threads};
  if (rc == CLI_OK && done > 0) {
    nnp_coldstart_print_table(stdout, &meta, s, done);
    if (json && nnp_coldstart_write_json(json, &meta, s, done) != NNP_OK) rc = cli_fail(json);
  }
  nnp_free(s);
  nnp_load_target_close(&t);
  return rc;
}
