/* nnperf coldstart: fresh process -> model loaded -> first result, over many processes. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_result.h"
#include "cli/load_args.h"
#include "load/worker_pool.h"
#include "load/load_table.h"
#include "load/target.h"
#include "nnperf/alloc.h"
#include "nnperf/report.h"
#include "nnperf/report_html.h"

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
    "                         prints both and the ratio of their P50 cold starts (one --json\n"
    "                         document holds every series)\n"
    "  --html PATH            the HTML report, as nnperf report writes it\n"
    "  --history DB           history database (default $NNPERF_HISTORY)  --no-history  do not store\n";

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

/* --cache DIR: after the no-cache series, one start that fills DIR (cold cache) and the
 * warm series, into c. Returns CLI_OK or the failure's exit status. */
static int with_cache(const nnp_load_target_options *to, const char *cache, long long runs, nnp_coldstart_section *c) {
  char opts[2048];
  int w = snprintf(opts, sizeof opts, "%s%scache_dir=%s", to->options ? to->options : "",
                   to->options && to->options[0] ? "," : "", cache);
  if (w < 0 || (size_t)w >= sizeof opts) return cli_usage_error("coldstart", "--cache path too long");
  snprintf(c->cache_dir, sizeof c->cache_dir, "%s", cache);
  nnp_load_target_options co = *to;
  co.options = opts;
  nnp_load_target t;
  if (nnp_load_target_open(&co, &t) != NNP_OK) return cli_fail(to->model);
  c->cold.s = nnp_calloc(1, sizeof *c->cold.s);
  c->warm.s = nnp_calloc((size_t)runs, sizeof *c->warm.s);
  char version[128] = "";
  int rc = CLI_OK;
  int nc = c->cold.s && c->warm.s ? run_series(&t, to->timeout_s, 1, c->cold.s, version, sizeof version, c->cold.note,
                                               sizeof c->cold.note, to->model)
                                  : -1;
  int nw = nc == 1 ? run_series(&t, to->timeout_s, runs, c->warm.s, version, sizeof version, c->warm.note,
                                sizeof c->warm.note, to->model)
                   : -1;
  if (nc != 1 || nw <= 0) rc = c->cold.s && c->warm.s ? CLI_FAIL : cli_fail("coldstart");
  c->cold.n = nc > 0 ? nc : 0;
  c->warm.n = nw > 0 ? nw : 0;
  nnp_load_target_close(&t);
  return rc;
}

int nnp_cmd_coldstart(int argc, char **argv) {
  char command_line[2048];
  cli_join_args(argc, argv, command_line, sizeof command_line);
  nnp_load_target_options to = {.backend = "native", .threads = 1, .seed = 1, .timeout_s = 600};
  long long runs = 20;
  const char *json = NULL, *cache = NULL, *html = NULL, *history = NULL;
  int no_history = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(help, stdout);
      return CLI_OK;
    }
    if (!strcmp(a, "--no-history")) {
      no_history = 1;
      continue;
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
    else if (!strcmp(a, "--html")) html = val;
    else if (!strcmp(a, "--history")) history = val;
    else if (!strcmp(a, "--cache")) cache = val;
    else if (!strcmp(a, "--runs")) {
      runs = strtoll(val, &end, 10);
      if (end == val || *end || runs < 1 || runs > 1000) return cli_usage_error("coldstart", "--runs wants 1..1000, not '%s'", val);
    } else return cli_usage_error("coldstart", "unknown option '%s'", a);
  }
  if (!to.model) to.model = "zoo:mobilenet_v2";
  if (cache && strcmp(to.backend, "native"))
    return cli_usage_error("coldstart", "--cache is for the native backend (its plan cache), not '%s'", to.backend);
  cli_stop_on_signals();

  nnp_load_target t;
  if (nnp_load_target_open(&to, &t) != NNP_OK) return cli_fail(to.model);
  nnp_coldstart_section *cs = nnp_calloc(1, sizeof *cs);
  nnp_coldstart_sample *s = nnp_calloc((size_t)runs, sizeof *s);
  char version[128] = "", wnote[256] = "", note[600];
  int rc = CLI_OK;
  int done = s && cs ? run_series(&t, to.timeout_s, runs, s, version, sizeof version, wnote, sizeof wnote, to.model) : -1;
  if (done < 0) rc = s && cs ? CLI_FAIL : cli_fail("coldstart");
  snprintf(note, sizeof note, "no plan cache: every start parses and compiles the model%s%s", wnote[0] ? "; " : "",
           wnote);
  if (cs) {
    cs->plain.n = done > 0 ? done : 0;
    cs->plain.s = s;
    snprintf(cs->plain.note, sizeof cs->plain.note, "%s", note);
  } else {
    nnp_free(s);
  }
  if (rc == CLI_OK && done > 0 && cache && !nnp_bench_interrupted) rc = with_cache(&to, cache, runs, cs);
  nnp_load_meta meta = {.command_line = command_line, .model = to.model, .backend = to.backend,
                        .backend_version = version, .options = to.options ? to.options : "", .note = note,
                        .instances = 1, .threads = to.threads};
  if (rc == CLI_OK && done > 0) {
    nnp_bench_result doc;
    const nnp_coldstart_sample *f = &s[0];
    nnp_load_startup first = {f->spawn_to_ready_s, f->load_s, f->first_s, f->cold_start_s};
    if (nnp_load_doc_init(&doc, &meta, &t, to.seed, &first, NULL) != NNP_OK) rc = cli_fail("coldstart");
    else {
      doc.coldstart = cs; /* the document owns the section now */
      cs = NULL;
      nnp_coldstart_print_table(stdout, &doc);
      if (json && nnp_report_write_json(&doc, json) != NNP_OK) rc = cli_fail(json);
      if (html && nnp_report_write_html(&doc, html) != NNP_OK) rc = cli_fail(html);
      if (!no_history) cli_store_history(&doc, history, 0);
    }
    nnp_bench_result_free(&doc);
  }
  nnp_coldstart_section_free(cs);
  nnp_free(cs);
  nnp_load_target_close(&t);
  return rc;
}
