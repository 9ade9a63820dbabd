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
#include "nnperf/stats.h"

static const char help[] =
    "usage: nnperf coldstart MODEL [options]\n\n"
    "Starts --runs fresh worker processes one after another; each loads MODEL and answers one\n"
    "inference. Reports P50/P99 of process start -> ready, model load, first inference, and\n"
    "process start -> first result. Without --cache every start compiles from scratch.\n\n"
    "  --backend B            native (default), ort-cpu, openvino, ...\n"
    "  --backend-options O    K=V,... for the backend\n"
    "  --runs N               fresh processes (default 20)\n"
    "  --threads N            intra-op threads (default 1)\n"
    "  --seed N               seed of the inputs (default 1)\n"
    "  --json PATH            write the result (docs/result-schema.md, coldstart section)\n"
    "  --timeout S            limit per process (default 600)\n"
    "  --cache DIR            native only: --runs starts without the plan cache, one start\n"
    "                         that fills DIR (cold cache), then --runs with the warm cache;\n"
    "                         prints both and the ratio of their P50 cold starts. --json\n"
    "                         PATH gets the no-cache series, PATH.warm-cache.json the other\n";

static void on_signal(int sig) {
  (void)sig;
  nnp_bench_interrupted = 1;
}

/* Starts runs fresh workers one after another into s; returns how many finished, -1 on a
 * failure (already reported). */
static int run_series(nnp_load_target *t, double timeout_s, long long runs, nnp_coldstart_sample *s,
                      char *version, size_t vn, char *note, size_t nn, const char *model) {
  static nnp_load_pool pool;
  int done = 0;
  for (; done < runs && !nnp_bench_interrupted; done++) {
    if (nnp_load_pool_start(&t->req, 1, timeout_s, &pool) != NNP_OK) {
      cli_fail(model);
      return -1;
    }
    const nnp_load_worker *w = &pool.w[0];
    s[done] = (nnp_coldstart_sample){w->spawn_to_ready_s, w->load_s, w->first_s, w->cold_start_s};
    snprintf(version, vn, "%s", w->version);
    snprintf(note, nn, "%s", w->note);
    nnp_load_pool_stop(&pool);
  }
  return done;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double p50_cold(const nnp_coldstart_sample *s, int n) {
  double *v = nnp_calloc((size_t)n, sizeof *v);
  if (!v) return -1;
  for (int i = 0; i < n; i++) v[i] = s[i].cold_start_s;
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  double p = nnp_percentile_sorted(v, n, 0.5);
  nnp_free(v);
  return p;
}

/* --cache DIR: the no-cache series (already run), one cold-cache start, the warm series. */
static int with_cache(const nnp_load_target_options *to, const char *cache, long long runs, const char *json,
                      const nnp_load_meta *base_meta, const nnp_coldstart_sample *plain, int n_plain) {
  char opts[2048];
  int w = snprintf(opts, sizeof opts, "%s%scache_dir=%s", to->options ? to->options : "",
                   to->options && to->options[0] ? "," : "", cache);
  if (w < 0 || (size_t)w >= sizeof opts) return cli_usage_error("coldstart", "--cache path too long");
  nnp_load_target_options co = *to;
  co.options = opts;
  nnp_load_target t;
  if (nnp_load_target_open(&co, &t) != NNP_OK) return cli_fail(to->model);
  nnp_coldstart_sample cold, *warm = nnp_calloc((size_t)runs, sizeof *warm);
  char version[128] = "", wnote[256] = "", cnote[256] = "", note[600];
  int rc = CLI_OK;
  int nc = warm ? run_series(&t, to->timeout_s, 1, &cold, version, sizeof version, cnote, sizeof cnote, to->model) : -1;
  int nw = nc == 1 ? run_series(&t, to->timeout_s, runs, warm, version, sizeof version, wnote, sizeof wnote, to->model) : -1;
  if (nc != 1 || nw <= 0) rc = warm ? CLI_FAIL : cli_fail("coldstart");
  if (rc == CLI_OK) {
    nnp_load_meta m = *base_meta;
    m.options = opts;
    snprintf(note, sizeof note, "first start with the cache (%s): %.3f s cold start", cnote, cold.cold_start_s);
    m.note = note;
    nnp_coldstart_print_table(stdout, &m, &cold, 1);
    snprintf(note, sizeof note, "warm plan cache in %s%s%s", cache, wnote[0] ? "; " : "", wnote);
    nnp_coldstart_print_table(stdout, &m, warm, nw);
    double a = p50_cold(plain, n_plain), b = p50_cold(warm, nw);
    printf("cold start P50: %.4f s without the plan cache, %.4f s with a warm one: %.2fx\n", a, b, a > 0 ? b / a : 0);
    if (json) {
      char path[4200];
      snprintf(path, sizeof path, "%s.warm-cache.json", json);
      if (nnp_coldstart_write_json(path, &m, warm, nw) != NNP_OK) rc = cli_fail(path);
    }
  }
  nnp_free(warm);
  nnp_load_target_close(&t);
  return rc;
}

int nnp_cmd_coldstart(int argc, char **argv) {
  char command_line[2048];
  cli_join_args(argc, argv, command_line, sizeof command_line);
  nnp_load_target_options to = {.backend = "native", .threads = 1, .seed = 1, .timeout_s = 600};
  long long runs = 20;
  const char *json = NULL, *cache = NULL;
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
    else if (!strcmp(a, "--cache")) cache = val;
    else if (!strcmp(a, "--runs")) {
      runs = strtoll(val, &end, 10);
      if (end == val || *end || runs < 1 || runs > 1000) return cli_usage_error("coldstart", "--runs wants 1..1000, not '%s'", val);
    } else return cli_usage_error("coldstart", "unknown option '%s'", a);
  }
  if (!to.model) to.model = "zoo:mobilenet_v2";
  if (cache && strcmp(to.backend, "native"))
    return cli_usage_error("coldstart", "--cache is for the native backend (its plan cache), not '%s'", to.backend);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);

  nnp_load_target t;
  if (nnp_load_target_open(&to, &t) != NNP_OK) return cli_fail(to.model);
  nnp_coldstart_sample *s = nnp_calloc((size_t)runs, sizeof *s);
  char version[128] = "", wnote[256] = "", note[400];
  int rc = CLI_OK;
  int done = s ? run_series(&t, to.timeout_s, runs, s, version, sizeof version, wnote, sizeof wnote, to.model) : -1;
  if (done < 0) rc = s ? CLI_FAIL : cli_fail("coldstart");
  snprintf(note, sizeof note, "no plan cache: every start parses and compiles the model%s%s", wnote[0] ? "; " : "", wnote);
  nnp_load_meta meta = {.command_line = command_line, .model = to.model, .backend = to.backend,
                        .backend_version = version, .options = to.options ? to.options : "", .note = note,
                        .instances = 1, .threads = to.threads};
  if (rc == CLI_OK && done > 0) {
    nnp_coldstart_print_table(stdout, &meta, s, done);
    if (json && nnp_coldstart_write_json(json, &meta, s, done) != NNP_OK) rc = cli_fail(json);
    if (rc == CLI_OK && cache && !nnp_bench_interrupted) rc = with_cache(&to, cache, runs, json, &meta, s, done);
  }
  nnp_free(s);
  nnp_load_target_close(&t);
  return rc;
}
