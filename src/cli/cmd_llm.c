/* nnperf llm: LLM inference rows. `llm bench` here; `llm load` (serving) in
 * cmd_llm_load.c. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/orchestrator.h"
#include "bench/resume.h"
#include "cli/cli_result.h"
#include "cli/cli.h"
#include "llm/llm_backends.h"
#include "llm/llm_report.h"
#include "llm/llm_sweep.h"
#include "nnperf/result.h"
#include "nnperf/sweep.h"
#include "util/writable.h"

static const char llm_help[] =
    "usage: nnperf llm bench [MODEL.gguf] [options]\n\n"
    "Measures LLM inference on every available LLM backend under one methodology: each\n"
    "backend x threads x prompt length x concurrency runs in a fresh worker process; warm-up\n"
    "requests first, then measured requests, each a seeded random prompt (identical across\n"
    "backends, unique per request: no prompt-cache hit) and exactly --gen-len greedy tokens\n"
    "(end-of-sequence ignored). Every output token's arrival time is recorded; TTFT, TPOT,\n"
    "ITL and E2E (P50/P90/P99 with bootstrap intervals), prefill and decode tokens/s\n"
    "(llama-bench's pp and tg), peak memory, KV-cache bytes, load time and cold start come\n"
    "from those records. Greedy tokens are compared with the llama.cpp row.\n\n"
    "MODEL: a GGUF file (default: the bundled SmolLM2-135M-Instruct Q4_1, installed by\n"
    "scripts/install-llm.sh)\n\n"
    "what to run (comma lists make a sweep over the cross product):\n"
    "  --backends LIST      llama.cpp, torch, vllm (default: all; unavailable ones are rows with\n"
    "                       their reason)\n"
    "  --prompt-len LIST    prompt tokens (default 128)\n"
    "  --gen-len N          generated tokens per request (default 32)\n"
    "  --concurrency LIST   requests decoded together in one batch (default 1)\n"
    "  --threads LIST       threads (default: all allowed CPUs)\n"
    "  --backend-options B:K=V,...[;B2:...]   e.g. llama.cpp:repack=1,n_batch=512\n\n"
    "how to measure:\n"
    "  --requests N         measured requests per row (default 8; rounded up to the concurrency)\n"
    "  --warmup N           warm-up requests per row (default 2, at least the concurrency)\n"
    "  --seed N             prompt seed (default 1)\n"
    "  --timeout S          wall-clock limit per worker (default 900)\n"
    "  --mem-limit MIB      resident-memory limit per worker\n\n"
    "what to show:\n"
    "  --json FILE          full result with every request's token times (rewritten after each row)\n"
    "  --csv FILE           one line per row\n"
    "  --html FILE          HTML report: TTFT/TPOT distributions, decode tokens/s against concurrency\n"
    "  --allow-mixed        rank rows of different weight types against each other\n"
    "  --resume FILE        continue the interrupted run whose --json FILE this is: its finished\n"
    "                       rows are kept, the rest run (same options required)\n"
    "  --no-history         do not store the run in the history database (nnperf history)\n"
    "  --history-db FILE    history database (default $NNPERF_HISTORY or ~/.local/share/nnperf)\n"
    "  --quiet              no table, no progress\n\n"
    "exit status: 0 all rows ok or unavailable, 1 a bad model or a failed row (still recorded),\n"
    "2 bad command line\n\n"
    "examples:\n"
    "  nnperf llm bench\n"
    "  nnperf llm bench model.gguf --backends llama.cpp --concurrency 1,4 --threads 2 --json r.json\n"
    "  nnperf compare old.json r.json         (or history ids: nnperf compare @3 @5)\n";

typedef struct llm_cli {
  nnp_llm_sweep_spec spec;
  const char *json, *csv, *html, *resume_path, *history_db;
  int quiet, allow_mixed, no_history;
  char command_line[1024];
} llm_cli;

static int parse_ints(const char *opt, char *v, int *out, int *n, int lo, int hi) {
  *n = 0;
  for (char *tok = strtok(v, ","); tok; tok = strtok(NULL, ",")) {
    char *end;
    errno = 0;
    long x = strtol(tok, &end, 10);
    if (errno || end == tok || *end || x < lo || x > hi || *n == NNP_LLM_MAX_LIST)
      return cli_usage_error("llm bench", "%s wants up to %d integers in %d..%d, not '%s'", opt, NNP_LLM_MAX_LIST, lo,
                             hi, tok);
    out[(*n)++] = (int)x;
  }
  return *n ? 0 : cli_usage_error("llm bench", "%s is empty", opt);
}

static int parse_one(const char *opt, const char *v, long lo, long hi, long *out) {
  char *end;
  errno = 0;
  long x = strtol(v, &end, 10);
  if (errno || end == v || *end || x < lo || x > hi)
    return cli_usage_error("llm bench", "%s wants an integer in %ld..%ld, not '%s'", opt, lo, hi, v);
  *out = x;
  return 0;
}

/* Options that take a number or a list; returns 1 consumed, 0 not one of them, -1 bad. */
static int numeric_option(llm_cli *c, const char *a, char *v) {
  nnp_llm_sweep_spec *s = &c->spec;
  long x = 0;
  if (!strcmp(a, "--prompt-len")) return parse_ints(a, v, s->prompt_lens, &s->n_prompt_lens, 1, 1 << 20) ? -1 : 1;
  if (!strcmp(a, "--concurrency")) return parse_ints(a, v, s->concurrency, &s->n_concurrency, 1, 64) ? -1 : 1;
  if (!strcmp(a, "--threads")) return parse_ints(a, v, s->threads, &s->n_threads, 1, 1024) ? -1 : 1;
  struct {
    const char *name;
    long lo, hi;
  } one[] = {{"--gen-len", 1, 4096}, {"--requests", 1, 100000}, {"--warmup", 0, 100000}, {"--seed", 0, 1L << 40},
             {"--timeout", 1, 1 << 20}, {"--mem-limit", 1, 1 << 30}};
  for (size_t k = 0; k < sizeof one / sizeof *one; k++) {
    if (strcmp(a, one[k].name)) continue;
    if (parse_one(a, v, one[k].lo, one[k].hi, &x)) return -1;
    if (k == 0) s->gen_len = (int)x;
    else if (k == 1) s->requests = (int)x;
    else if (k == 2) s->warmup = (int)x;
    else if (k == 3) s->seed = (uint64_t)x;
    else if (k == 4) s->timeout_s = (double)x;
    else s->mem_limit = (long long)x << 20;
    return 1;
  }
  return 0;
}

static int parse_backends(llm_cli *c, char *v) {
  nnp_llm_sweep_spec *s = &c->spec;
  s->n_backends = 0;
  for (char *tok = strtok(v, ","); tok; tok = strtok(NULL, ",")) {
    if (!nnp_llm_backend_find(tok))
      return cli_usage_error("llm bench", "unknown LLM backend '%s' (llama.cpp, torch, vllm)", tok);
    if (s->n_backends == NNP_LLM_MAX_LIST) return cli_usage_error("llm bench", "too many backends");
    s->backends[s->n_backends++] = tok;
  }
  return s->n_backends ? 0 : cli_usage_error("llm bench", "--backends is empty");
}

static int parse_args(llm_cli *c, int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(llm_help, stdout);
      return 1;
    }
    if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) c->quiet = 1;
    else if (!strcmp(a, "--allow-mixed")) c->allow_mixed = 1;
    else if (!strcmp(a, "--no-history")) c->no_history = 1;
    else if (a[0] == '-' && !v) return cli_usage_error("llm bench", "%s needs a value (or is unknown)", a) ? -1 : -1;
    else if (a[0] == '-') {
      int used = numeric_option(c, a, v);
      if (used < 0) return -1;
      i++;
      if (used) continue;
      if (!strcmp(a, "--backends") || !strcmp(a, "--backend")) {
        if (parse_backends(c, v)) return -1;
      } else if (!strcmp(a, "--json")) c->json = v;
      else if (!strcmp(a, "--csv")) c->csv = v;
      else if (!strcmp(a, "--html")) c->html = v;
      else if (!strcmp(a, "--backend-options")) c->spec.options = v;
      else if (!strcmp(a, "--resume")) c->resume_path = v;
      else if (!strcmp(a, "--history-db")) c->history_db = v;
      else return cli_usage_error("llm bench", "unknown option '%s'", a) ? -1 : -1;
    } else if (!c->spec.model) c->spec.model = a;
    else return cli_usage_error("llm bench", "more than one model given ('%s')", a) ? -1 : -1;
  }
  return 0;
}

static void defaults(llm_cli *c) {
  nnp_llm_sweep_spec *s = &c->spec;
  if (!s->model) s->model = nnp_llm_default_model();
  if (!s->n_backends)
    for (int k = 0; k < nnp_llm_backend_count(); k++) s->backends[s->n_backends++] = nnp_llm_backend_get(k)->name;
  if (!s->n_threads) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    s->threads[0] = n > 0 ? (int)n : 1;
    s->n_threads = 1;
  }
}

static void progress(void *ud, int row, int rows, const char *label, const char *phase, int done, int total) {
  llm_cli *c = ud;
  if (c->quiet || !isatty(2)) return;
  if (total > 0) fprintf(stderr, "\r\033[K[row %d/%d] %s: %-8s request %d/%d", row, rows, label, phase, done, total);
  else fprintf(stderr, "\r\033[K[row %d/%d] %s: %-8s", row, rows, label, phase);
  fflush(stderr);
}

/* After each row: the whole document so far, atomically (an interrupted run keeps it). */
static void row_done(void *ud, const nnp_bench_result *r, int index, bool kept) {
  llm_cli *c = ud;
  (void)index, (void)kept;
  if (c->json && nnp_result_write_file(r, c->json) != NNP_OK) fprintf(stderr, "nnperf: --json: %s\n", nnp_last_error());
}

static int check_outputs(const llm_cli *c) {
  const char *out[][2] = {{"--json", c->json}, {"--csv", c->csv}, {"--html", c->html}};
  for (int k = 0; k < 3; k++)
    if (out[k][1] && nnp_check_writable(out[k][1]) != NNP_OK)
      return cli_usage_error("llm bench", "%s: %s", out[k][0], nnp_last_error());
  return 0;
}

static int write_outputs(const llm_cli *c, const nnp_bench_result *res) {
  int rc = CLI_OK;
  const nnp_llm_result *r = res->llm;
  if (c->json && nnp_result_write_file(res, c->json) != NNP_OK) rc = cli_fail("--json");
  if (c->csv && nnp_llm_write_csv(r, c->csv) != NNP_OK) rc = cli_fail("--csv");
  if (c->html && nnp_llm_write_html(r, c->html) != NNP_OK) rc = cli_fail("--html");
  if (!c->quiet) nnp_llm_report_table(stdout, r);
  return rc;
}

static int run_sweep(llm_cli *c, nnp_bench_result *res) {
  nnp_bench_result done;
  memset(&done, 0, sizeof done);
  if (c->resume_path && nnp_resume_load(c->resume_path, &done) != NNP_OK) return cli_fail(NULL);
  nnp_sweep_spec spec;
  nnp_sweep_spec_default(&spec);
  spec.workload = &nnp_llm_workload;
  spec.workload_args = &c->spec;
  spec.model = c->spec.model;
  spec.command_line = c->command_line;
  spec.seed = c->spec.seed;
  spec.processes = 1;
  spec.allow_mixed = c->allow_mixed;
  spec.resume = c->resume_path ? &done : NULL;
  spec.resume_name = c->resume_path;
  spec.progress = progress, spec.row_done = row_done, spec.ud = c;
  cli_stop_on_signals();
  nnp_sweep_outcome o;
  nnp_status st = nnp_sweep_run(&spec, res, &o);
  nnp_bench_result_free(&done);
  if (!c->quiet && isatty(2)) fprintf(stderr, "\r\033[K");
  if (st != NNP_OK || !res->llm) return cli_fail(NULL);
  nnp_llm_sync_header(res); /* the noisy flag is known only now */
  if (o.interrupted && c->json) fprintf(stderr, "nnperf: continue with the same command and --resume %s\n", c->json);
  return CLI_OK;
}

static int llm_bench(int argc, char **argv) {
  llm_cli c;
  memset(&c, 0, sizeof c);
  nnp_llm_sweep_spec_default(&c.spec);
  size_t used = 0;
  for (int i = 0; i < argc && used < sizeof c.command_line; i++)
    used += (size_t)snprintf(c.command_line + used, sizeof c.command_line - used, "%s%s",
                             i ? " " : "nnperf llm ", argv[i]);
  int p = parse_args(&c, argc, argv);
  if (p) return p > 0 ? CLI_OK : CLI_USAGE;
  defaults(&c);
  if (check_outputs(&c)) return CLI_USAGE;
  if (access(c.spec.model, R_OK) != 0) {
    fprintf(stderr, "nnperf: error: %s: %s%s\n", c.spec.model, strerror(errno),
            c.spec.model == nnp_llm_default_model() ? " (the default model: run scripts/install-llm.sh)" : "");
    return CLI_FAIL;
  }
  nnp_bench_result res;
  memset(&res, 0, sizeof res);
  int rc = run_sweep(&c, &res);
  if (rc != CLI_OK) {
    nnp_bench_result_free(&res);
    return rc;
  }
  rc = write_outputs(&c, &res);
  for (int i = 0; i < res.n_rows; i++)
    if (res.rows[i].status != NNP_ROW_OK && res.rows[i].status != NNP_ROW_UNAVAILABLE) rc = CLI_FAIL;
  if (!c.no_history && res.n_rows > 0) cli_store_history(&res, c.history_db, c.quiet);
  if (nnp_bench_interrupted) rc = 130;
  nnp_bench_result_free(&res);
  return rc;
}

int nnp_cmd_llm(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    fputs(llm_help, argc < 2 ? stderr : stdout);
    fputs("\nnnperf llm load: LLM serving under load (nnperf llm load --help)\n", argc < 2 ? stderr : stdout);
    return argc < 2 ? CLI_USAGE : CLI_OK;
  }
  if (!strcmp(argv[1], "bench")) return llm_bench(argc - 1, argv + 1);
  if (!strcmp(argv[1], "load")) return nnp_cmd_llm_load(argc - 1, argv + 1);
  return cli_usage_error("llm", "unknown subcommand '%s' (bench, load)", argv[1]);
}
