/* nnperf llm load's driver: which server, which rows, in which order (llm_load_driver.h). */
#include "llm/llm_load_driver.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/footprint.h"
#include "bench/orchestrator.h"
#include "llm/llama_server.h"
#include "nnperf/alloc.h"

typedef struct server_cfg {
  int slots, cont_batching;
  const char *kv_type;
  int repack;       /* weight repacking (llama-server --repack / --no-repack) */
} server_cfg;

typedef struct driver {
  const nnp_llm_load_spec *s;
  nnp_llm_load_result *r;
  nnp_llama_server srv;
  server_cfg cur;
  int fresh;        /* the server was just started: the next row records load and cold start */
  nnp_llm_endpoint ep;
  int next_request; /* prompt index of the next row's first request: rows never share prompts */
} driver;

/* n_vocab (llama-server's /v1/models meta) and the first model id, where the server says. */
static void ask_models(driver *d) {
  long code = 0;
  char *body = NULL;
  if (nnp_llm_http_get(d->ep.base_url, "/v1/models", d->ep.api_key, 10, 1 << 20, &code, &body) != NNP_OK) {
    nnp_clear_error();
    return;
  }
  json_t *j = code == 200 ? json_loads(body, 0, NULL) : NULL;
  json_t *m0 = json_array_get(json_object_get(j, "data"), 0);
  json_t *nv = json_object_get(json_object_get(m0, "meta"), "n_vocab");
  if (d->ep.n_vocab <= 0 && json_is_integer(nv) && json_integer_value(nv) > 1 && json_integer_value(nv) < 100000000)
    d->ep.n_vocab = (int)json_integer_value(nv);
  json_t *id = json_object_get(m0, "id");
  static char name[128];
  if (d->s->endpoint && !d->ep.model && json_is_string(id)) {
    snprintf(name, sizeof name, "%s", json_string_value(id));
    d->ep.model = name;
  }
  json_decref(j);
  nnp_free(body);
}

/* Asks the server once; a server that does not say gets ids below 1000, which every
 * real vocabulary holds. */
static void settle_vocab(driver *d) {
  if (d->ep.n_vocab <= 0) ask_models(d);
  if (d->ep.n_vocab <= 0) d->ep.n_vocab = 1000;
}

static nnp_status ensure_server(driver *d, server_cfg c) {
  const nnp_llm_load_spec *s = d->s;
  if (s->endpoint) return NNP_OK;
  if (d->srv.pid > 0 && c.slots == d->cur.slots && c.cont_batching == d->cur.cont_batching && c.repack == d->cur.repack &&
      !strcmp(c.kv_type ? c.kv_type : "", d->cur.kv_type ? d->cur.kv_type : ""))
    return NNP_OK;
  nnp_llama_server_stop(&d->srv);
  nnp_llama_server_opts o = {.binary = s->server_bin, .model = s->model, .threads = s->threads,
                             .parallel = c.slots, .cont_batching = c.cont_batching, .kv_type = c.kv_type,
                             .repack = c.repack, .ctx_per_slot = nnp_len_dist_max(&s->prompt_len) + nnp_len_dist_max(&s->gen_len) + 16,
                             .ready_timeout_s = 300};
  fprintf(stderr, "llm load: starting llama-server (%d slot%s%s%s, repack %s)\n", c.slots, c.slots == 1 ? "" : "s",
          c.kv_type ? ", KV " : "", c.kv_type ? c.kv_type : "", c.repack ? "on" : "off");
  NNP_TRY(nnp_llama_server_start(&o, &d->srv));
  d->cur = c;
  d->fresh = 1;
  snprintf(d->ep.base_url, sizeof d->ep.base_url, "%s", d->srv.url);
  settle_vocab(d);
  return NNP_OK;
}

static nnp_llm_load_plan base_plan(const driver *d) {
  const nnp_llm_load_spec *s = d->s;
  nnp_llm_load_plan p = {.burstiness = s->burstiness > 0 ? s->burstiness : 1, .num_requests = s->num_requests,
                         .warmup_requests = s->warmup_requests, .prompt_len = s->prompt_len, .gen_len = s->gen_len,
                         .shared_prefix = s->shared_prefix, .cache_prompt = s->cache_prompt, .seed = s->seed,
                         .first_request = d->next_request, .metrics_interval_s = s->metrics_interval_s,
                         .max_duration_s = s->max_duration_s, .max_concurrency = s->max_concurrency};
  return p;
}

static nnp_status add_row(driver *d, nnp_llm_load_row **out) {
  nnp_llm_load_result *r = d->r;
  nnp_llm_load_row *g = nnp_realloc(r->rows, sizeof *g * (size_t)(r->n_rows + 1));
  if (!g) return nnp_error(NNP_ERR_NOMEM, "out of memory for result rows");
  r->rows = g;
  *out = &g[r->n_rows++];
  memset(*out, 0, sizeof **out);
  nnp_row_extras_init(&(*out)->ext); /* unknown until a server's footprint is read */
  return NNP_OK;
}

/* The CNN rows' footprint and energy for a row served by the llama-server started here:
 * the files that process mapped (libllama, ggml, the server binary; the GGUF is the
 * model's), and the joules of the run per output token it delivered. An --endpoint is no
 * process of this run: its footprint is unknown and this machine's counter is not its. */
static void server_footprint_energy(const driver *d, const nnp_llm_load_out *o, const nnp_energy *e, double joules,
                                    nnp_row_extras *x) {
  nnp_row_extras_init(x);
  if (d->s->endpoint) {
    snprintf(x->energy_source, sizeof x->energy_source, "not measured (--endpoint: the server is not a process "
                                                         "of this run)");
    return;
  }
  if (nnp_footprint_runtime_pid((int)d->srv.pid, d->s->model, NULL, &x->runtime_bytes, &x->runtime_files) != NNP_OK) {
    x->runtime_bytes = x->runtime_files = -1;
    nnp_clear_error();
  }
  x->model_bytes = nnp_file_bytes(d->s->model);
  long long tokens = 0;
  for (int i = 0; i < o->n; i++) tokens += o->reqs[i].n_tokens;
  x->energy_j = joules >= 0 && tokens > 0 ? joules / (double)tokens : -1;
  snprintf(x->energy_source, sizeof x->energy_source, "%s", e->source);
}

/* Runs one plan on the current server into a new row labelled label. */
static nnp_status run_row(driver *d, nnp_llm_load_plan *p, const char *scenario, const char *label,
                          nnp_llm_load_row **row_out) {
  if (p->warmup_requests < 0) {
    int c = p->concurrency > 0 ? p->concurrency : p->max_concurrency;
    p->warmup_requests = c > 0 ? c : 1;
  }
  fprintf(stderr, "llm load: %s: %d requests (+%d warm-up)\n", label, p->num_requests, p->warmup_requests);
  nnp_llm_load_out o;
  nnp_energy energy;
  nnp_energy_start(&energy, "/sys/class/powercap");
  NNP_TRY(nnp_llm_load_run(&d->ep, p, &o));
  double joules = nnp_energy_joules(&energy);
  d->next_request += p->warmup_requests + p->num_requests;
  nnp_llm_load_row *row;
  nnp_status st = add_row(d, &row);
  if (st == NNP_OK) {
    snprintf(row->label, sizeof row->label, "%s", label);
    snprintf(row->scenario, sizeof row->scenario, "%s", scenario);
    row->concurrency = p->concurrency;
    row->rate = p->concurrency > 0 ? 0 : p->rate;
    row->burstiness = p->burstiness;
    row->max_concurrency = p->concurrency > 0 ? 0 : p->max_concurrency;
    row->slots = d->s->endpoint ? -1 : d->cur.slots;
    row->cont_batching = d->s->endpoint ? -1 : d->cur.cont_batching;
    row->cache_prompt = p->cache_prompt;
    row->shared_prefix = p->shared_prefix;
    snprintf(row->kv_type, sizeof row->kv_type, "%s", d->s->endpoint ? "" : d->cur.kv_type ? d->cur.kv_type : "f16");
    snprintf(row->server_args, sizeof row->server_args, "%s", d->s->endpoint ? "" : d->srv.args);
    if (!d->s->endpoint) {
      snprintf(row->repack, sizeof row->repack, "%s", d->cur.repack ? "on" : "off");
      if (d->cur.repack == d->s->repack)
        snprintf(row->note, sizeof row->note, "%s", d->s->repack_why ? d->s->repack_why : "");
      else
        snprintf(row->note, sizeof row->note, "repack %s (explain rung, against the run's repack %s)",
                 d->cur.repack ? "on" : "off", d->s->repack ? "on" : "off");
    }
    row->load_s = row->cold_start_s = -1;
    if (d->fresh) {
      row->load_s = d->srv.t_ready - d->srv.t_spawn;
      row->cold_start_s = o.t_first_token > 0 ? o.t_first_token - d->srv.t_spawn : -1;
      d->fresh = 0;
    }
    server_footprint_energy(d, &o, &energy, joules, &row->ext);
    st = nnp_llm_load_row_fill(row, &o, &d->r->slo, d->s->seed);
    row->reqs = o.reqs; /* the row keeps the raw records (result document, compare) */
    row->n_reqs = o.n;
    o.reqs = NULL;
    o.n = 0;
    if (row_out) *row_out = row;
  }
  nnp_llm_load_out_free(&o);
  return st;
}

static int max_concurrency_of(const nnp_llm_load_spec *s) {
  int n = 0;
  for (int i = 0; i < s->n_concurrency; i++)
    if (s->concurrency[i] > n) n = s->concurrency[i];
  if (s->max_concurrency > n) n = s->max_concurrency;
  return n > 0 ? n : 4;
}

static server_cfg default_cfg(const nnp_llm_load_spec *s) {
  server_cfg c = {s->parallel > 0 ? s->parallel : max_concurrency_of(s), s->cont_batching, s->kv_type, s->repack};
  return c;
}

static nnp_status run_closed(driver *d) {
  NNP_TRY(ensure_server(d, default_cfg(d->s)));
  for (int i = 0; i < d->s->n_concurrency && !nnp_llm_interrupted; i++) {
    nnp_llm_load_plan p = base_plan(d);
    p.concurrency = d->s->concurrency[i];
    char label[64];
    snprintf(label, sizeof label, "concurrency %d", p.concurrency);
    NNP_TRY(run_row(d, &p, "closed", label, NULL));
  }
  return NNP_OK;
}

static nnp_status run_open(driver *d) {
  NNP_TRY(ensure_server(d, default_cfg(d->s)));
  for (int i = 0; i < d->s->n_rates && !nnp_llm_interrupted; i++) {
    nnp_llm_load_plan p = base_plan(d);
    p.rate = d->s->rates[i];
    char label[64];
    snprintf(label, sizeof label, "rate %g/s", p.rate);
    NNP_TRY(run_row(d, &p, "open", label, NULL));
  }
  return NNP_OK;
}

static int slo_holds(const nnp_llm_load_row *row, const nnp_llm_slo *slo, int pct) {
  const nnp_llm_metrics *m = &row->m;
  if (m->n_failed > 0 || m->n_ok == 0) return 0;
  if (slo->ttft_s > 0 && nnp_llm_stat_pct(&m->ttft, pct) > slo->ttft_s) return 0;
  if (slo->tpot_s > 0 && m->tpot.n > 0 && nnp_llm_stat_pct(&m->tpot, pct) > slo->tpot_s) return 0;
  if (slo->e2e_s > 0 && nnp_llm_stat_pct(&m->e2e, pct) > slo->e2e_s) return 0;
  return 1;
}

/* --find-max-rate: double the rate from --rate-lo until the SLO breaks, then bisect until
 * the bracket is within 10%; each probe is an open-loop row with fresh prompts. */
static nnp_status find_max_rate(driver *d) {
  const nnp_llm_load_spec *s = d->s;
  NNP_TRY(ensure_server(d, default_cfg(s)));
  double pass = 0, fail = -1, rate = s->rate_lo > 0 ? s->rate_lo : 0.5;
  for (int k = 0; k < (s->max_probes > 0 ? s->max_probes : 10) && !nnp_llm_interrupted; k++) {
    nnp_llm_load_plan p = base_plan(d);
    p.rate = rate;
    char label[64];
    snprintf(label, sizeof label, "probe %g/s", rate);
    nnp_llm_load_row *row = NULL;
    NNP_TRY(run_row(d, &p, "probe", label, &row));
    row->slo_passed = slo_holds(row, &s->slo, s->slo_percentile);
    fprintf(stderr, "llm load: %s %s the SLO at P%d\n", label, row->slo_passed ? "meets" : "misses",
            s->slo_percentile);
    if (nnp_llm_interrupted) break; /* an interrupted probe says nothing about the rate */
    if (row->slo_passed) pass = rate;
    else fail = rate;
    if (fail > 0 && (fail - pass) / fail < 0.1) break;
    rate = fail < 0 ? rate * 2 : (pass + fail) / 2;
  }
  d->r->max_rate = pass;
  return NNP_OK;
}

/* A rung whose server did not start: a row with nothing measured and the reason, so the
 * other rungs still run and the table says what is missing. */
static nnp_status rung_not_run(driver *d, const char *label) {
  char why[200];
  snprintf(why, sizeof why, "%s", nnp_last_error());
  fprintf(stderr, "llm load: rung '%s' not run: %s\n", label, why);
  nnp_clear_error();
  nnp_llm_load_row *row;
  NNP_TRY(add_row(d, &row));
  snprintf(row->label, sizeof row->label, "%s", label);
  snprintf(row->scenario, sizeof row->scenario, "rung");
  row->slots = row->cont_batching = row->cache_prompt = -1;
  row->load_s = row->cold_start_s = -1;
  snprintf(row->note, sizeof row->note, "not run: the server did not start");
  row->n_causes = 1;
  snprintf(row->causes[0].cause, sizeof row->causes[0].cause, "server");
  snprintf(row->causes[0].example, sizeof row->causes[0].example, "%s", why);
  return NNP_OK;
}

/* The explain rungs, each a row at the same offered load (closed loop, N streams). */
static nnp_status run_rungs(driver *d) {
  const nnp_llm_load_spec *s = d->s;
  int n = max_concurrency_of(s), plen = nnp_len_dist_max(&s->prompt_len);
  int prefix = s->shared_prefix > 0 ? s->shared_prefix : plen * 3 / 4;
  struct rung {
    const char *label;
    server_cfg cfg;
    int shared_prefix, cache_prompt;
  } rungs[] = {
      {"batching off (1 slot)", {1, 1, NULL, s->repack}, 0, -1},
      {"batching on (N slots)", {n, 1, NULL, s->repack}, 0, -1},
      {"prefix cache off", {n, 1, NULL, s->repack}, prefix, 0},
      {"prefix cache on", {n, 1, NULL, s->repack}, prefix, 1},
      {"KV cache q8_0", {n, 1, "q8_0", s->repack}, 0, -1},
      /* against rung 2: ggml's repacked (interleaved) weights off; only where the run
       * repacks, since where it does not (an AMX CPU) turning repack on can crash */
      {"repack off", {n, 1, NULL, 0}, 0, -1},
  };
  size_t n_rungs = sizeof rungs / sizeof *rungs - (s->repack ? 0 : 1);
  for (size_t i = 0; i < n_rungs && !nnp_llm_interrupted; i++) {
    if (ensure_server(d, rungs[i].cfg) != NNP_OK) {
      NNP_TRY(rung_not_run(d, rungs[i].label)); /* e.g. q8_0 KV on a head size it cannot block */
      continue;
    }
    nnp_llm_load_plan p = base_plan(d);
    p.concurrency = n;
    p.shared_prefix = rungs[i].shared_prefix;
    p.cache_prompt = rungs[i].cache_prompt;
    char label[64];
    snprintf(label, sizeof label, "%s", rungs[i].label);
    if (strstr(label, "(N slots)")) snprintf(label, sizeof label, "batching on (%d slots)", n);
    NNP_TRY(run_row(d, &p, "rung", label, NULL));
  }
  return NNP_OK;
}

nnp_status nnp_llm_load_execute(const nnp_llm_load_spec *s, nnp_llm_load_result *r) {
  if (s->explain && s->endpoint)
    return nnp_error(NNP_ERR_INVALID, "llm load: --explain needs --backend llama-server (it restarts the server per rung)");
  if (s->find_max_rate && !(s->slo.ttft_s > 0 || s->slo.tpot_s > 0 || s->slo.e2e_s > 0))
    return nnp_error(NNP_ERR_INVALID, "llm load: --find-max-rate needs --slo ttft=...,tpot=...");
  driver d = {.s = s, .r = r};
  d.ep.chat = s->chat;
  d.ep.model = s->model_name;
  d.ep.api_key = s->api_key;
  d.ep.timeout_s = s->timeout_s;
  d.ep.n_vocab = s->n_vocab;
  r->max_rate = -1;
  if (s->endpoint) {
    snprintf(d.ep.base_url, sizeof d.ep.base_url, "%s", s->endpoint);
    ask_models(&d);
    settle_vocab(&d);
  }
  nnp_status st;
  if (s->explain) st = run_rungs(&d);
  else if (s->find_max_rate) st = find_max_rate(&d);
  else if (s->n_rates > 0) st = run_open(&d);
  else st = run_closed(&d);
  nnp_llama_server_stop(&d.srv);
  r->n_vocab = d.ep.n_vocab;
  return st;
}
