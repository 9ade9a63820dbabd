/* nnperf load: latency and throughput under a load scenario (docs/load.md). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_result.h"
#include "cli/load_args.h"
#include "load/load_table.h"
#include "load/scenarios.h"
#include "load/sweep_load.h"
#include "nnperf/report.h"
#include "nnperf/report_html.h"
#include "nnperf/sweep.h"

static const char help[] =
    "usage: nnperf load MODEL [options]\n\n"
    "Offers MODEL (an .onnx file or zoo:NAME) to --instances worker processes of one backend\n"
    "under a load scenario, as MLPerf LoadGen does, and reports latency percentiles measured\n"
    "from each query's *scheduled* arrival (time spent queued counts) and the achieved rate.\n\n"
    "  --backend B            native (default), ort-cpu, openvino, fault, ...\n"
    "  --backend-options O    K=V,... for the backend (e.g. mode=none,sleep_ms=5 for fault)\n"
    "  --scenario S           single-stream | multi-stream | server (default) | offline\n"
    "  --qps X                server: Poisson arrival rate (default 10)\n"
    "  --seed N               seed of the arrivals and the inputs (default 1)\n"
    "  --instances N          concurrent worker processes (default 1)\n"
    "  --threads N            intra-op threads per worker (default 1)\n"
    "  --duration T           each run's schedule spans T (default 10s; 500ms, 2s, ...)\n"
    "  --queries N            at most N queries per run (offline: exactly N)\n"
    "  --max-batch N          offline: queries per request, dynamic batching (default 8)\n"
    "  --streams N            multi-stream: queries per interval (default 4); server and offline:\n"
    "                         requests each instance runs at once (default 1, at most 16): one\n"
    "                         process serving N queries concurrently (threads on one loaded\n"
    "                         session for ort-cpu, N infer requests for openvino, the model\n"
    "                         loaded once per stream for C backends)\n"
    "  --interval T           multi-stream: interval (default 50ms)\n"
    "  --p99 T                latency bound: queries above it are late; target of --find-max-qps\n"
    "  --find-max-qps         server: highest QPS with P99 <= --p99 and nothing dropped\n"
    "  --confirm N            confirmation runs of the found QPS (default 2)\n"
    "  --sweep                server: latency vs QPS from 10% to 120% of the offline capacity\n"
    "  --json PATH            write the result (docs/result-schema.md, load section)\n"
    "  --html PATH            the HTML report (latency-vs-QPS curve), as nnperf report writes it\n"
    "  --history DB           history database (default $NNPERF_HISTORY or\n"
    "                         ~/.local/share/nnperf/history.db)   --no-history  do not store the run\n"
    "  --mem-limit MiB        memory limit per worker   --timeout S  start-up/drain limit (600)\n"
    "  --pin                  pin each worker to CPUs 0..threads-1\n\n"
    "examples:\n"
    "  nnperf load zoo:mobilenet_v2 --backend ort-cpu --qps 20 --duration 10s\n"
    "  nnperf load zoo:tiny --backend native --find-max-qps --p99 10ms --instances 2\n"
    "  nnperf load zoo:mobilenet_v2 --backend ort-cpu --qps 100 --streams 2\n";

typedef struct load_outputs {
  const char *json, *html, *history;
  int no_history;
} load_outputs;

/* Runs the load sweep (one row, load/sweep_load.h) and writes what was asked for. */
static int run_load(const nnp_load_target_options *to, const nnp_sweep_load_args *args, const char *command_line,
                    const load_outputs *out) {
  char opts[1100];
  snprintf(opts, sizeof opts, "%s:%s", to->backend, to->options ? to->options : "");
  nnp_sweep_spec spec;
  nnp_sweep_spec_default(&spec);
  spec.workload = &nnp_sweep_load;
  spec.workload_args = args;
  spec.model = to->model;
  spec.command_line = command_line;
  spec.backends[0] = to->backend;
  spec.n_backends = 1;
  spec.threads[0] = to->threads;
  spec.n_threads = 1;
  spec.backend_options = opts;
  spec.seed = to->seed;
  spec.timeout_s = to->timeout_s;
  spec.mem_limit_bytes = to->mem_limit;
  spec.pin = to->pin;
  spec.processes = 1;
  /* the common result document: the same writer, history and HTML report as bench */
  nnp_bench_result doc;
  nnp_sweep_outcome outcome;
  if (nnp_sweep_run(&spec, &doc, &outcome) != NNP_OK) {
    nnp_bench_result_free(&doc);
    return cli_fail(to->model);
  }
  int rc = CLI_OK;
  if (doc.n_rows != 1 || !doc.load) { /* cut short by a signal, or no memory for the section */
    fprintf(stderr, "nnperf: error: %s\n", outcome.interrupted ? "interrupted by the user" : "load: out of memory");
    nnp_bench_result_free(&doc);
    return CLI_FAIL;
  }
  bool ok = doc.rows[0].status == NNP_ROW_OK;
  nnp_load_print_table(stdout, &doc);
  if (out->json && nnp_report_write_json(&doc, out->json) != NNP_OK) rc = cli_fail(out->json);
  if (out->html && nnp_report_write_html(&doc, out->html) != NNP_OK) rc = cli_fail(out->html);
  /* a failed run is reported in one line and not stored: its points are partial */
  if (ok && !out->no_history) cli_store_history(&doc, out->history, 0);
  if (!ok) {
    fprintf(stderr, "nnperf: error: %s\n", doc.rows[0].reason);
    rc = CLI_FAIL;
  }
  nnp_bench_result_free(&doc);
  return rc;
}

int nnp_cmd_load(int argc, char **argv) {
  char command_line[2048];
  cli_join_args(argc, argv, command_line, sizeof command_line);
  nnp_load_config cfg = {.scenario = NNP_LOAD_SERVER, .qps = 10, .seed = 1, .duration_s = 10, .max_batch = 8,
                         .streams = 1, .interval_s = 0.05, .confirm = 2};
  nnp_load_target_options to = {.model = NULL, .backend = "native", .threads = 1, .seed = 1, .timeout_s = 600};
  long long instances = 1, v;
  int streams = 0; /* 0: the scenario's default */
  int find_max = 0, sweep = 0, no_history = 0;
  const char *json = NULL, *html = NULL, *history = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(help, stdout);
      return CLI_OK;
    }
    if (!strcmp(a, "--find-max-qps")) { find_max = 1; continue; }
    if (!strcmp(a, "--sweep")) { sweep = 1; continue; }
    if (!strcmp(a, "--pin")) { to.pin = 1; continue; }
    if (!strcmp(a, "--no-history")) { no_history = 1; continue; }
    if (a[0] != '-') {
      if (to.model) return cli_usage_error("load", "more than one model given ('%s')", a);
      to.model = a;
      continue;
    }
    if (i + 1 >= argc) return cli_usage_error("load", "%s needs a value", a);
    const char *val = argv[++i];
    int rc;
    if (cli_load_target_option("load", a, val, &to, &rc)) {
      if (rc != CLI_OK) return rc;
    } else if (!strcmp(a, "--scenario")) {
      if (!nnp_load_scenario_parse(val, &cfg.scenario))
        return cli_usage_error("load", "--scenario wants single-stream, multi-stream, server or offline, not '%s'", val);
    } else if (!strcmp(a, "--qps")) {
      char *end;
      cfg.qps = strtod(val, &end);
      if (end == val || *end || !(cfg.qps > 0) || cfg.qps > 1e6) return cli_usage_error("load", "--qps wants a rate > 0, not '%s'", val);
    } else if (!strcmp(a, "--instances")) {
      if (!cli_want_int(val, 1, NNP_LOAD_MAX_INSTANCES, &instances))
        return cli_usage_error("load", "--instances wants 1..%d, not '%s'", NNP_LOAD_MAX_INSTANCES, val);
    } else if (!strcmp(a, "--duration")) {
      if (!cli_parse_duration(val, &cfg.duration_s)) return cli_usage_error("load", "--duration wants a time like 10s, not '%s'", val);
    } else if (!strcmp(a, "--queries")) {
      if (!cli_want_int(val, 1, 10000000, &v)) return cli_usage_error("load", "--queries wants 1..10000000, not '%s'", val);
      cfg.max_queries = v;
    } else if (!strcmp(a, "--max-batch")) {
      if (!cli_want_int(val, 1, 4096, &v)) return cli_usage_error("load", "--max-batch wants 1..4096, not '%s'", val);
      cfg.max_batch = (int)v;
    } else if (!strcmp(a, "--streams")) {
      if (!cli_want_int(val, 1, 4096, &v)) return cli_usage_error("load", "--streams wants 1..4096, not '%s'", val);
      streams = (int)v;
    } else if (!strcmp(a, "--interval")) {
      if (!cli_parse_duration(val, &cfg.interval_s)) return cli_usage_error("load", "--interval wants a time like 50ms, not '%s'", val);
    } else if (!strcmp(a, "--p99")) {
      if (!cli_parse_duration(val, &cfg.bound_s)) return cli_usage_error("load", "--p99 wants a time like 10ms, not '%s'", val);
    } else if (!strcmp(a, "--confirm")) {
      if (!cli_want_int(val, 0, 20, &v)) return cli_usage_error("load", "--confirm wants 0..20, not '%s'", val);
      cfg.confirm = (int)v;
    } else if (!strcmp(a, "--json")) json = val;
    else if (!strcmp(a, "--html")) html = val;
    else if (!strcmp(a, "--history")) history = val;
    else if (!strcmp(a, "--mem-limit")) {
      if (!cli_want_int(val, 1, 1 << 30, &v)) return cli_usage_error("load", "--mem-limit wants MiB, not '%s'", val);
      to.mem_limit = v << 20;
    } else return cli_usage_error("load", "unknown option '%s'", a);
  }
  if (!to.model) to.model = "zoo:mobilenet_v2";
  cfg.seed = to.seed;
  if ((find_max || sweep) && cfg.scenario != NNP_LOAD_SERVER)
    return cli_usage_error("load", "--find-max-qps and --sweep are server-scenario searches");
  if (find_max && cfg.bound_s <= 0) return cli_usage_error("load", "--find-max-qps needs --p99 T");
  if (find_max && sweep) return cli_usage_error("load", "choose one of --find-max-qps and --sweep");
  if (cfg.scenario == NNP_LOAD_SINGLE_STREAM && (instances != 1 || streams > 1))
    return cli_usage_error("load", "single-stream has one query in flight: --instances 1, no --streams");
  /* multi-stream: queries per interval (default 4); server and offline: requests each
   * worker runs at once (default 1), a shared instance serving several queries */
  if (cfg.scenario != NNP_LOAD_MULTI_STREAM && streams > NNP_LOAD_MAX_STREAMS)
    return cli_usage_error("load", "--streams wants 1..%d per instance for %s", NNP_LOAD_MAX_STREAMS,
                           nnp_load_scenario_name(cfg.scenario));
  cfg.streams = streams ? streams : cfg.scenario == NNP_LOAD_MULTI_STREAM ? 4 : 1;

  cli_stop_on_signals();
  nnp_sweep_load_args args = {.cfg = cfg, .instances = (int)instances,
                              .search = find_max ? NNP_LOAD_FIND_MAX_QPS : sweep ? NNP_LOAD_QPS_SWEEP : NNP_LOAD_MEASURE};
  load_outputs out = {.json = json, .html = html, .history = history, .no_history = no_history};
  return run_load(&to, &args, command_line, &out);
}
