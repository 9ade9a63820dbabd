/* nnperf llm load: LLM serving under load against llama-server (started here) or any
 * OpenAI-compatible endpoint (docs/llm-load.md). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/load_args.h"
#include "cli/cli_result.h"
#include "llm/gguf.h"
#include "llm/llama_server.h"
#include "llm/llm_load_driver.h"
#include "llm/llm_repack.h"

static const char help[] =
    "usage: nnperf llm load [MODEL.gguf] (--backend llama-server | --endpoint URL) [options]\n\n"
    "Drives an LLM server through the OpenAI-compatible streaming API (stream:true) and reports\n"
    "TTFT, TPOT, ITL and E2E (P50/P90/P99 with intervals, from each request's scheduled\n"
    "arrival), request and token throughput, goodput and failed requests by cause.\n\n"
    "  --backend llama-server  start llama.cpp's server on a free loopback port (default; MODEL\n"
    "                          defaults to the bundled SmolLM2-135M), stop it at the end\n"
    "  --endpoint URL          an existing server, e.g. http://127.0.0.1:8000\n"
    "  --api completions|chat  which API (default completions: prompts are token-id arrays)\n"
    "  --model-name NAME       the request's \"model\" (endpoint default: its first /v1/models id)\n"
    "  --api-key-env NAME      bearer key read from environment variable NAME (never stored)\n"
    "  --concurrency LIST      closed loop: streams, e.g. 1,4 (default 1)\n"
    "  --request-rate LIST     open loop: requests/s, seeded gamma arrivals\n"
    "  --burstiness B          gamma shape of the gaps (1 = Poisson, default)\n"
    "  --max-concurrency C     open loop: at most C requests in flight\n"
    "  --num-requests N        measured requests per row (default 32)\n"
    "  --warmup-requests N     before each row (default: its concurrency)\n"
    "  --prompt-len D          N, uniform:LO:HI or normal:MEAN:SD (default 64)\n"
    "  --gen-len D             output tokens (same forms; default 32; ignore_eos is sent)\n"
    "  --slo ttft=T,tpot=T[,e2e=T]   goodput bounds (e.g. ttft=500ms,tpot=50ms)\n"
    "  --slo-percentile P      50, 90, 95 or 99 (default 99): what --find-max-rate holds\n"
    "  --find-max-rate         highest open-loop rate meeting --slo (doubling, then bisection)\n"
    "  --rate-lo R             first probe rate (default 0.5)   --max-probes N (default 10)\n"
    "  --explain               rungs at one offered load: 1 slot vs N slots, prefix cache off/on\n"
    "                          (shared-prefix prompts), KV cache f16 vs q8_0\n"
    "  --threads N             llama-server threads (default 2)   --parallel N  slots\n"
    "  --kv-type T             llama-server KV cache type (f16 default, q8_0, ...)\n"
    "  --no-cont-batching      llama-server without continuous batching\n"
    "  --repack auto|on|off    llama-server weight repacking (default auto: on unless the CPU has\n"
    "                          AMX, where ggml's AMX repack path can crash; each row's note says why)\n"
    "  --shared-prefix N       prompt tokens every request shares   --cache-prompt on|off\n"
    "  --vocab N               prompt token ids below N (default: the server's n_vocab, else 1000)\n"
    "  --timeout S             per request (default 60)   --max-duration S  per row (default 600)\n"
    "  --metrics-interval S    sample llama-server /metrics (default 0.5; 0 = off)\n"
    "  --seed N                prompts, lengths and arrivals (default 1)\n"
    "  --server-bin PATH       llama-server binary (default: scripts/install-llm.sh's build)\n"
    "  --json F  --csv F  --html F   results (kind \"llm-load\", docs/result-schema.md)\n"
    "  --no-history            do not store the run in the history (nnperf history, compare @ID)\n"
    "  --history-db FILE       history database (default $NNPERF_HISTORY or ~/.local/share/nnperf)\n\n"
    "exit status: 0 when requests succeeded, 1 when none did or the server failed, 2 bad usage\n";

static void on_signal(int sig) {
  (void)sig;
  nnp_llm_interrupted = 1;
}

static int parse_list_int(const char *s, int *out, int max) {
  int n = 0;
  const char *p = s;
  while (*p && n < max) {
    char *e;
    long v = strtol(p, &e, 10);
    if (e == p || v < 1 || v > 4096 || (*e && *e != ',')) return -1;
    out[n++] = (int)v;
    p = *e ? e + 1 : e;
  }
  return *p ? -1 : n;
}

static int parse_list_rate(const char *s, double *out, int max) {
  int n = 0;
  const char *p = s;
  while (*p && n < max) {
    char *e;
    double v = strtod(p, &e);
    if (e == p || !(v > 0 && v < 1e6) || (*e && *e != ',')) return -1;
    out[n++] = v;
    p = *e ? e + 1 : e;
  }
  return *p ? -1 : n;
}

static int parse_slo(const char *s, nnp_llm_slo *slo) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", s);
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(t, '=');
    double v;
    if (!eq || !cli_parse_duration(eq + 1, &v) || !(v > 0)) return 0;
    *eq = '\0';
    if (!strcmp(t, "ttft")) slo->ttft_s = v;
    else if (!strcmp(t, "tpot")) slo->tpot_s = v;
    else if (!strcmp(t, "e2e")) slo->e2e_s = v;
    else return 0;
  }
  return 1;
}

typedef struct outputs {
  const char *json, *csv, *html, *backend, *api, *key_env, *repack, *history_db;
  int no_history;
} outputs;

static int num_opt(const char *a, const char *v, double lo, double hi, double *out) {
  char *e;
  double x = strtod(v, &e);
  if (e == v || *e || !(x >= lo && x <= hi)) {
    cli_usage_error("llm load", "%s '%s': expected a number in [%g, %g]", a, v, lo, hi);
    return 0;
  }
  *out = x;
  return 1;
}

/* One option with a value at argv[*i]; 1 consumed, 0 unknown, -1 bad value (reported). */
static int value_option(nnp_llm_load_spec *s, outputs *o, const char *a, const char *v) {
  double x;
#define NUM(name, lo, hi, dst)                    \
  if (!strcmp(a, name)) {                         \
    if (!num_opt(a, v, lo, hi, &x)) return -1;    \
    dst;                                          \
    return 1;                                     \
  }
  NUM("--burstiness", 0.01, 100, s->burstiness = x)
  NUM("--max-concurrency", 1, 4096, s->max_concurrency = (int)x)
  NUM("--num-requests", 1, 1000000, s->num_requests = (int)x)
  NUM("--warmup-requests", 0, 100000, s->warmup_requests = (int)x)
  NUM("--slo-percentile", 50, 99, s->slo_percentile = (int)x)
  NUM("--rate-lo", 1e-3, 1e6, s->rate_lo = x)
  NUM("--max-probes", 1, 30, s->max_probes = (int)x)
  NUM("--threads", 1, 1024, s->threads = (int)x)
  NUM("--parallel", 1, 4096, s->parallel = (int)x)
  NUM("--shared-prefix", 0, 1 << 20, s->shared_prefix = (int)x)
  NUM("--vocab", 2, 1e8, s->n_vocab = (int)x)
  NUM("--timeout", 1e-3, 86400, s->timeout_s = x)
  NUM("--max-duration", 1e-3, 86400 * 7, s->max_duration_s = x)
  NUM("--metrics-interval", 0, 3600, s->metrics_interval_s = x)
  NUM("--seed", 0, 1e18, s->seed = (uint64_t)x)
#undef NUM
  const char **str[] = {&o->json, &o->csv, &o->html, &o->backend, &o->api, &o->key_env, &s->endpoint,
                        &s->model_name, &s->kv_type, &s->server_bin, &o->repack, &o->history_db};
  const char *names[] = {"--json", "--csv", "--html", "--backend", "--api", "--api-key-env", "--endpoint",
                         "--model-name", "--kv-type", "--server-bin", "--repack", "--history-db"};
  for (size_t k = 0; k < sizeof names / sizeof *names; k++)
    if (!strcmp(a, names[k])) {
      *str[k] = v;
      return 1;
    }
  if (!strcmp(a, "--concurrency")) {
    s->n_concurrency = parse_list_int(v, s->concurrency, NNP_LLM_MAX_POINTS);
    return s->n_concurrency > 0 ? 1 : (cli_usage_error("llm load", "--concurrency '%s': a list of 1..4096", v), -1);
  }
  if (!strcmp(a, "--request-rate")) {
    s->n_rates = parse_list_rate(v, s->rates, NNP_LLM_MAX_POINTS);
    return s->n_rates > 0 ? 1 : (cli_usage_error("llm load", "--request-rate '%s': a list of rates > 0", v), -1);
  }
  if (!strcmp(a, "--slo")) return parse_slo(v, &s->slo) ? 1 : (cli_usage_error("llm load", "--slo '%s': expected ttft=T,tpot=T,e2e=T", v), -1);
  if (!strcmp(a, "--cache-prompt")) {
    s->cache_prompt = !strcmp(v, "on") ? 1 : !strcmp(v, "off") ? 0 : -2;
    return s->cache_prompt >= 0 ? 1 : (cli_usage_error("llm load", "--cache-prompt: on or off"), -1);
  }
  nnp_len_dist *len = !strcmp(a, "--prompt-len") ? &s->prompt_len : !strcmp(a, "--gen-len") ? &s->gen_len : NULL;
  if (len) return nnp_len_dist_parse(v, a, len) == NNP_OK ? 1 : (cli_usage_error("llm load", "%s", nnp_last_error()), -1);
  return 0;
}

static int parse_args(int argc, char **argv, nnp_llm_load_spec *s, outputs *o) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(help, stdout);
      return -1;
    }
    if (!strcmp(a, "--find-max-rate")) s->find_max_rate = 1;
    else if (!strcmp(a, "--explain")) s->explain = 1;
    else if (!strcmp(a, "--no-cont-batching")) s->cont_batching = 0;
    else if (!strcmp(a, "--no-history")) o->no_history = 1;
    else if (a[0] != '-') {
      if (s->model) return cli_usage_error("llm load", "more than one model given ('%s')", a);
      s->model = a;
    } else {
      if (i + 1 >= argc) return cli_usage_error("llm load", "%s needs a value", a);
      int rc = value_option(s, o, a, argv[++i]);
      if (rc < 0) return CLI_USAGE;
      if (rc == 0) return cli_usage_error("llm load", "unknown option '%s' (see --help)", a);
    }
  }
  if (strcmp(o->backend, "llama-server") || (o->api && strcmp(o->api, "chat") && strcmp(o->api, "completions")))
    return cli_usage_error("llm load", "--backend must be llama-server and --api chat or completions");
  if (s->find_max_rate && (s->n_rates || s->explain))
    return cli_usage_error("llm load", "--find-max-rate searches the rate itself: no --request-rate or --explain");
  if (s->endpoint && strncmp(s->endpoint, "http://", 7) && strncmp(s->endpoint, "https://", 8))
    return cli_usage_error("llm load", "--endpoint '%s': expected http://HOST:PORT", s->endpoint);
  return 0;
}

/* "http://h:p/", "http://h:p/v1" -> "http://h:p" (the client adds /v1/...). */
static void trim_endpoint(char *url) {
  size_t n = strlen(url);
  while (n && url[n - 1] == '/') url[--n] = '\0';
  if (n >= 3 && !strcmp(url + n - 3, "/v1")) url[n - 3] = '\0';
}

static void default_model(char *buf, size_t cap) {
  const char *cache = getenv("NNP_CACHE"), *home = getenv("HOME");
  if (cache && *cache) snprintf(buf, cap, "%s/models/SmolLM2-135M-Instruct.Q4_1.gguf", cache);
  else snprintf(buf, cap, "%s/.cache/nnperf/models/SmolLM2-135M-Instruct.Q4_1.gguf", home ? home : "");
}

static int write_outputs(const nnp_llm_load_result *r, const outputs *o) {
  if (o->json && nnp_llm_load_write_json(r, o->json) != NNP_OK) return cli_fail("writing --json");
  if (o->csv && nnp_llm_load_write_csv(r, o->csv) != NNP_OK) return cli_fail("writing --csv");
  if (o->html && nnp_llm_load_write_html(r, o->html) != NNP_OK) return cli_fail("writing --html");
  return CLI_OK;
}

/* The run in the history, as every measuring command stores its runs (nnperf history,
 * compare @ID). The section is r's: only the mirror rows are freed here. */
static void store_history(nnp_llm_load_result *r, const outputs *o) {
  nnp_bench_result b;
  memset(&b, 0, sizeof b);
  b.llm_load = r;
  snprintf(b.model, sizeof b.model, "%s", r->model);
  snprintf(b.command_line, sizeof b.command_line, "%s", r->command_line);
  snprintf(b.nnperf_version, sizeof b.nnperf_version, "%s", r->nnperf_version);
  b.env = r->env;
  b.seed = r->seed;
  b.accuracy_rtol = -1;
  if (nnp_llm_load_mirror(&b) == NNP_OK) cli_store_history(&b, o->history_db, 0);
  else fprintf(stderr, "nnperf: warning: run not stored in the history: %s\n", nnp_last_error());
  b.llm_load = NULL;
  nnp_bench_result_free(&b);
}

/* --repack for llama-server: auto (on unless the CPU has AMX), on or off. */
static int choose_repack(nnp_llm_load_spec *s, const outputs *o, char *why, size_t cap) {
  if (o->repack && s->endpoint)
    return cli_usage_error("llm load", "--repack '%s': only for --backend llama-server (an endpoint's server is its own)",
                           o->repack);
  if (nnp_llm_repack_decide(o->repack, nnp_llm_cpu_reports_amx(), &s->repack, why, cap) != NNP_OK)
    return cli_usage_error("llm load", "%s", nnp_last_error());
  s->repack_why = why;
  return 0;
}

/* The result's header: the run's parameters, owned by r. */
static void fill_header(const nnp_llm_load_spec *s, const char *command_line, nnp_llm_load_result *r) {
  snprintf(r->command_line, sizeof r->command_line, "%s", command_line);
  snprintf(r->model, sizeof r->model, "%s", s->model ? s->model : "");
  snprintf(r->backend, sizeof r->backend, "%s", s->endpoint ? "endpoint" : "llama-server");
  snprintf(r->endpoint, sizeof r->endpoint, "%s", s->endpoint ? s->endpoint : "");
  snprintf(r->api, sizeof r->api, "%s", s->chat ? "chat" : "completions");
  snprintf(r->nnperf_version, sizeof r->nnperf_version, "0.1.0");
  nnp_gguf_info g;
  if (s->model && !s->endpoint && nnp_gguf_read_info(s->model, &g) == NNP_OK)
    snprintf(r->weight_type, sizeof r->weight_type, "%s", g.weight_type);
  nnp_clear_error(); /* an unreadable model is llama-server's error to report, with its log */
  r->threads = s->threads, r->num_requests = s->num_requests, r->warmup_requests = s->warmup_requests;
  r->timeout_s = s->timeout_s, r->seed = s->seed, r->slo = s->slo, r->slo_percentile = s->slo_percentile;
  nnp_len_dist_format(&s->prompt_len, r->prompt_len, sizeof r->prompt_len);
  nnp_len_dist_format(&s->gen_len, r->gen_len, sizeof r->gen_len);
  nnp_env_capture(&r->env);
}

/* The spec's settings that follow from others; 0, or the usage error's status. */
static int settle_spec(nnp_llm_load_spec *s, const outputs *o, char *endpoint, size_t ecap, char *model_buf,
                       size_t mcap) {
  s->chat = o->api && !strcmp(o->api, "chat");
  /* closed loop at 1 stream unless a rate, a search or the rungs say otherwise (their slot
   * count then defaults to 4, or --parallel / --max-concurrency) */
  if (s->n_concurrency == 0 && s->n_rates == 0 && !s->find_max_rate && !s->explain) s->concurrency[s->n_concurrency++] = 1;
  if (s->slo_percentile != 50 && s->slo_percentile != 90 && s->slo_percentile != 95 && s->slo_percentile != 99)
    return cli_usage_error("llm load", "--slo-percentile: 50, 90, 95 or 99");
  if (o->key_env) {
    s->api_key = getenv(o->key_env);
    if (!s->api_key || !*s->api_key)
      return cli_usage_error("llm load", "--api-key-env %s: that environment variable is not set", o->key_env);
  }
  if (s->endpoint) {
    snprintf(endpoint, ecap, "%s", s->endpoint);
    trim_endpoint(endpoint);
    s->endpoint = endpoint;
  } else if (!s->model) {
    default_model(model_buf, mcap);
    s->model = model_buf;
  }
  return 0;
}

int nnp_cmd_llm_load(int argc, char **argv) {
  char command_line[1024], model_buf[512], endpoint[256], repack_why[160];
  memcpy(command_line, "nnperf llm ", 11); /* argv[0] is "load": the command as typed */
  cli_join_args(argc, argv, command_line + 11, sizeof command_line - 11);
  memmove(command_line + 11, command_line + 11 + 7, strlen(command_line + 11 + 7) + 1); /* its "nnperf " */
  nnp_llm_load_spec s = {.threads = 2, .cont_batching = 1, .num_requests = 32, .warmup_requests = -1,
                         .seed = 1, .timeout_s = 60, .max_duration_s = 600, .metrics_interval_s = 0.5,
                         .slo_percentile = 99, .cache_prompt = -1, .burstiness = 1};
  nnp_len_dist_parse("64", "--prompt-len", &s.prompt_len);
  nnp_len_dist_parse("32", "--gen-len", &s.gen_len);
  outputs o = {.backend = "llama-server"};
  int rc = parse_args(argc, argv, &s, &o);
  if (rc) return rc < 0 ? CLI_OK : rc;
  if ((rc = settle_spec(&s, &o, endpoint, sizeof endpoint, model_buf, sizeof model_buf)) ||
      (rc = choose_repack(&s, &o, repack_why, sizeof repack_why)))
    return rc;
  nnp_llm_load_result r;
  memset(&r, 0, sizeof r);
  fill_header(&s, command_line, &r);
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  signal(SIGPIPE, SIG_IGN);
  nnp_status st = nnp_llm_load_execute(&s, &r);
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  int ok = 0;
  for (int i = 0; i < r.n_rows; i++) ok += r.rows[i].m.n_ok;
  if (r.n_rows) nnp_llm_load_print_table(stdout, &r);
  int out_rc = r.n_rows ? write_outputs(&r, &o) : CLI_OK;
  if (r.n_rows && !o.no_history) store_history(&r, &o);
  nnp_llm_load_result_free(&r);
  if (st != NNP_OK) return cli_fail("llm load");
  if (nnp_llm_interrupted) {
    fprintf(stderr, "nnperf: llm load interrupted\n");
    return 130;
  }
  if (out_rc != CLI_OK) return out_rc;
  if (ok == 0) {
    fprintf(stderr, "nnperf: error: llm load: no request succeeded (failures by cause above)\n");
    return CLI_FAIL;
  }
  return CLI_OK;
}
