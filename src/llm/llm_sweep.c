/* The LLM sweep (llm_sweep.h). */
#include "llm/llm_sweep.h"

#include <stdio.h>
#include <string.h>

#include "bench/orchestrator.h"
#include "llm/gguf.h"
#include "llm/llm_repack.h"
#include "llm/llm_backends.h"
#include "llm/llm_worker.h"
#include "nnperf/alloc.h"
#include "nnperf/sweep.h"

void nnp_llm_sweep_spec_default(nnp_llm_sweep_spec *s) {
  memset(s, 0, sizeof *s);
  s->prompt_lens[0] = 128;
  s->n_prompt_lens = 1;
  s->concurrency[0] = 1;
  s->n_concurrency = 1;
  s->gen_len = 32;
  s->requests = 8;
  s->warmup = 2;
  s->seed = 1;
  s->timeout_s = 900;
}

/* This backend's part of "B:K=V,...;B2:..." into out. */
static void backend_options(const char *all, const char *backend, char *out, size_t n) {
  out[0] = 0;
  size_t bl = strlen(backend);
  for (const char *p = all; p && *p;) {
    const char *end = strchr(p, ';');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len > bl && !strncmp(p, backend, bl) && p[bl] == ':') snprintf(out, n, "%.*s", (int)(len - bl - 1), p + bl + 1);
    p = end ? end + 1 : NULL;
  }
}

static int round_up(int v, int m) { return (v + m - 1) / m * m; }

/* The workload's state: the spec, the model's header, the result being filled. */
typedef struct llm_state {
  const nnp_llm_sweep_spec *s;
  const nnp_sweep_spec *sweep;
  nnp_gguf_info info;
  nnp_bench_result *res;
  int n_rows;
  /* the row under way, for the progress callback */
  nnp_sweep_progress_fn progress;
  void *ud;
  int index;
  const char *label;
} llm_state;

/* Row index -> its axes: threads, prompt length, concurrency, backend (innermost). */
static void row_axes(const llm_state *st, int index, int *threads, int *plen, int *conc, const nnp_llm_backend **b) {
  const nnp_llm_sweep_spec *s = st->s;
  int bi = index % s->n_backends;
  index /= s->n_backends;
  int ci = index % s->n_concurrency;
  index /= s->n_concurrency;
  int pi = index % s->n_prompt_lens;
  int ti = index / s->n_prompt_lens;
  *threads = s->threads[ti], *plen = s->prompt_lens[pi], *conc = s->concurrency[ci];
  *b = nnp_llm_backend_find(s->backends[bi]);
}

/* The worker request of row index (argv filled later, by the backend). */
static nnp_llm_row_request row_request(const llm_state *st, int index, char *opts, size_t nopts, char *wt, size_t nwt,
                                       const nnp_llm_backend **b) {
  const nnp_llm_sweep_spec *s = st->s;
  int threads, plen, conc;
  row_axes(st, index, &threads, &plen, &conc, b);
  backend_options(s->options, (*b)->name, opts, nopts);
  size_t used = strlen(opts);
  if (!strcmp((*b)->name, "llama.cpp") && !strstr(opts, "repack=") && used + 10 < nopts) {
    /* weight repacking unless given: on, except on an AMX CPU (llm_repack.h) */
    int on = 0;
    char why[160];
    nnp_llm_repack_decide("auto", nnp_llm_cpu_reports_amx(), &on, why, sizeof why);
    snprintf(opts + used, nopts - used, "%srepack=%d", used ? "," : "", on);
  }
  snprintf(wt, nwt, "%s", (*b)->weight_type[0] ? (*b)->weight_type : st->info.weight_type);
  return (nnp_llm_row_request){.backend = (*b)->name, .model_path = s->model, .options = opts, .weight_type = wt,
                               .threads = threads, .prompt_len = plen, .gen_len = s->gen_len, .concurrency = conc,
                               .requests = round_up(s->requests, conc),
                               .warmup = round_up(s->warmup > conc ? s->warmup : conc, conc), .seed = s->seed,
                               .timeout_s = s->timeout_s, .mem_limit = s->mem_limit};
}

void nnp_llm_mirror_row(const nnp_llm_row *w, nnp_bench_row *row) {
  memset(row, 0, sizeof *row);
  snprintf(row->backend, sizeof row->backend, "%s", w->backend);
  snprintf(row->backend_version, sizeof row->backend_version, "%s", w->backend_version);
  row->precision = NNP_FP32; /* not an axis of LLM rows: the weight type is (w->weight_type) */
  row->threads = w->threads;
  row->batch = w->concurrency;
  snprintf(row->scenario, sizeof row->scenario, "llm p%d g%d c%d", w->prompt_len, w->gen_len, w->concurrency);
  snprintf(row->label, sizeof row->label, "%s", w->label);
  row->status = w->status;
  snprintf(row->reason, sizeof row->reason, "%s", w->reason);
  snprintf(row->note, sizeof row->note, "%s", w->note);
  row->exit_status = w->exit_status, row->term_signal = w->term_signal;
  row->spawn_to_ready_s = w->spawn_to_ready_s, row->load_s = w->load_s, row->cold_start_s = w->cold_start_s;
  row->parse_s = row->compile_s = row->first_s = -1;
  row->n_processes = w->status == NNP_ROW_OK ? 1 : 0;
  row->peak_rss_bytes = w->peak_rss_bytes, row->vmhwm_bytes = w->vmhwm_bytes;
  snprintf(row->hw_class, sizeof row->hw_class, "%s", w->hw_class);
  snprintf(row->node, sizeof row->node, "%s", w->node);
  snprintf(row->job_id, sizeof row->job_id, "%s", w->job_id);
  row->host_env = w->host_env;
  row->ext = w->ext; /* footprint and energy (per output token) */
}

static void row_progress(void *ud, const char *phase, int done, int total) {
  llm_state *st = ud;
  if (st->progress) st->progress(st->ud, st->index + 1, st->n_rows, st->label, phase, done, total);
}

/* Row index: unavailable, refused before it starts (prompt beyond the context), or run. */
static void run_one(llm_state *st, int index, nnp_llm_row *row) {
  const nnp_llm_backend *b;
  char opts[256], argbuf[4200], version[256] = "", wt[32];
  const char *argv[NNP_LLM_WORKER_ARGS], *pythonpath = NULL;
  nnp_llm_row_request q = row_request(st, index, opts, sizeof opts, wt, sizeof wt, &b);
  q.argv = argv;
  nnp_status avail = b->probe(version, sizeof version);
  if (avail == NNP_OK) avail = b->worker(argv, argbuf, sizeof argbuf, &pythonpath);
  q.pythonpath = pythonpath;
  nnp_llm_row_init(&q, row);
  st->label = row->label; /* for the progress callback while the worker runs */
  if (avail != NNP_OK) { /* recorded, never faked: the reason and the install hint */
    row->status = NNP_ROW_UNAVAILABLE;
    snprintf(row->reason, sizeof row->reason, "%s (install: %s)", nnp_last_error(), b->install_hint);
    return;
  }
  int64_t ctx = st->info.n_ctx_train;
  if (ctx > 0 && q.prompt_len + q.gen_len > ctx) {
    row->status = NNP_ROW_FAILED;
    snprintf(row->reason, sizeof row->reason,
             "a prompt of %d tokens plus %d generated exceeds the model's context of %lld tokens", q.prompt_len,
             q.gen_len, (long long)ctx);
    return;
  }
  if (nnp_llm_run_row(&q, row, row_progress, st) != NNP_OK) {
    char why[512];
    snprintf(why, sizeof why, "%s", nnp_last_error());
    nnp_llm_row_free(row);
    nnp_llm_row_init(&q, row);
    row->status = NNP_ROW_FAILED;
    snprintf(row->reason, sizeof row->reason, "%s", why);
  }
  if (!row->backend_version[0]) snprintf(row->backend_version, sizeof row->backend_version, "%s", version);
}

/* A resumed document must have measured rows the way this sweep would. */
static nnp_status check_resume_section(const llm_state *st) {
  const nnp_bench_result *done = st->sweep->resume;
  if (!done) return NNP_OK;
  const char *name = st->sweep->resume_name ? st->sweep->resume_name : "the resumed result";
  if (!done->llm) return nnp_error(NNP_ERR_INVALID, "--resume %s: not an nnperf llm bench result", name);
  if (done->llm->requests != st->s->requests || done->llm->warmup != st->s->warmup)
    return nnp_error(NNP_ERR_INVALID, "--resume %s: it ran %d requests after %d warm-up per row, this command %d after %d: "
                     "resume with the same options", name, done->llm->requests, done->llm->warmup, st->s->requests,
                     st->s->warmup);
  return NNP_OK;
}

static nnp_status open_state(llm_state *st, const nnp_sweep_spec *spec, nnp_bench_result *res);

/* The runner does not close a workload whose open failed: the state is freed here then. */
static nnp_status llm_open(const nnp_sweep_spec *spec, nnp_bench_result *res, void **state) {
  if (!spec->workload_args) return nnp_error(NNP_ERR_INVALID, "llm sweep: no LLM spec (workload_args)");
  llm_state *st = nnp_calloc(1, sizeof *st);
  if (!st) return nnp_error(NNP_ERR_NOMEM, "llm sweep: out of memory");
  nnp_status rc = open_state(st, spec, res);
  if (rc != NNP_OK) {
    nnp_free(st);
    return rc;
  }
  *state = st;
  return NNP_OK;
}

static nnp_status open_state(llm_state *st, const nnp_sweep_spec *spec, nnp_bench_result *res) {
  const nnp_llm_sweep_spec *s = spec->workload_args;
  st->s = s, st->sweep = spec, st->res = res;
  NNP_TRY(nnp_gguf_read_info(s->model, &st->info));
  for (int k = 0; k < s->n_backends; k++)
    if (!nnp_llm_backend_find(s->backends[k]))
      return nnp_error(NNP_ERR_INVALID, "unknown LLM backend '%s' (nnperf backends lists them)", s->backends[k]);
  NNP_TRY(check_resume_section(st));
  st->n_rows = s->n_threads * s->n_prompt_lens * s->n_concurrency * s->n_backends;
  res->accuracy_rtol = -1; /* no tolerance: LLM rows are judged by token agreement */
  res->llm = nnp_calloc(1, sizeof *res->llm);
  if (!res->llm) return nnp_error(NNP_ERR_NOMEM, "llm sweep: out of memory");
  res->llm->rows = st->n_rows ? nnp_calloc((size_t)st->n_rows, sizeof *res->llm->rows) : NULL;
  if (st->n_rows && !res->llm->rows) return nnp_error(NNP_ERR_NOMEM, "llm sweep: no memory for %d rows", st->n_rows);
  res->llm->cap_rows = st->n_rows;
  res->llm->seed = s->seed, res->llm->requests = s->requests, res->llm->warmup = s->warmup;
  res->llm->allow_mixed = spec->allow_mixed;
  return NNP_OK;
}

void nnp_llm_sync_header(nnp_bench_result *res) {
  nnp_llm_result *l = res->llm;
  snprintf(l->model, sizeof l->model, "%s", res->model);
  snprintf(l->nnperf_version, sizeof l->nnperf_version, "%s", res->nnperf_version);
  snprintf(l->command_line, sizeof l->command_line, "%s", res->command_line);
  l->env = res->env;
  l->seed = res->seed;
  l->allow_mixed = res->allow_mixed;
  l->noisy = res->noisy;
}

static int llm_n_rows(void *state) { return ((llm_state *)state)->n_rows; }

static nnp_status llm_plan_row(void *state, int index, nnp_bench_row *row) {
  llm_state *st = state;
  const nnp_llm_backend *b;
  char opts[256], wt[32];
  nnp_llm_row_request q = row_request(st, index, opts, sizeof opts, wt, sizeof wt, &b);
  nnp_llm_row planned;
  nnp_llm_row_init(&q, &planned);
  nnp_llm_mirror_row(&planned, row);
  return NNP_OK;
}

static nnp_status llm_run_row(void *state, int index, nnp_bench_row *row, nnp_sweep_progress_fn progress, void *ud) {
  llm_state *st = state;
  nnp_llm_row *w = &st->res->llm->rows[index];
  nnp_llm_row_free(w); /* a row measured before and dropped as cut short */
  st->progress = progress, st->ud = ud, st->index = index;
  run_one(st, index, w);
  st->label = NULL;
  nnp_llm_mirror_row(w, row);
  return NNP_OK;
}

/* Deep copy of a resumed row (its requests' token times). */
static nnp_status copy_llm_row(const nnp_llm_row *from, nnp_llm_row *to) {
  *to = *from;
  to->reqs = NULL;
  to->n_reqs = 0;
  if (!from->n_reqs) return NNP_OK;
  to->reqs = nnp_calloc((size_t)from->n_reqs, sizeof *to->reqs);
  if (!to->reqs) return nnp_error(NNP_ERR_NOMEM, "resume: no memory for the requests of %s", from->label);
  for (int i = 0; i < from->n_reqs; i++, to->n_reqs++) {
    nnp_llm_request *q = &to->reqs[i];
    *q = from->reqs[i];
    q->token_t = NULL;
    q->cap_tokens = 0;
    if (!q->n_tokens) continue;
    q->token_t = nnp_malloc(sizeof *q->token_t * (size_t)q->n_tokens);
    if (!q->token_t) return nnp_error(NNP_ERR_NOMEM, "resume: no memory for the requests of %s", from->label);
    memcpy(q->token_t, from->reqs[i].token_t, sizeof *q->token_t * (size_t)q->n_tokens);
    q->cap_tokens = q->n_tokens;
  }
  return NNP_OK;
}

/* The resumed document's LLM row that row index was kept from: the one with its key
 * (the same position for llm bench --resume; anywhere for a sweep plan's folder). */
static const nnp_llm_row *resumed_llm_row(const llm_state *st, const nnp_bench_result *res, int index) {
  const nnp_bench_result *done = st->sweep->resume;
  char key[NNP_SWEEP_KEY_MAX];
  if (nnp_sweep_row_key(&res->rows[index], key, sizeof key) != NNP_OK) return NULL;
  int from = nnp_sweep_find_row(done, key);
  return from >= 0 && from < done->llm->n_rows ? &done->llm->rows[from] : NULL;
}

/* A kept row's measurements come from the resumed document's section (the runner copied
 * only its bench-row mirror). Called for every row, in order. */
static void llm_finish_row(void *state, nnp_bench_result *res, int index, bool kept) {
  llm_state *st = state;
  nnp_llm_row *w = &res->llm->rows[index];
  if (kept) {
    const nnp_llm_row *from = resumed_llm_row(st, res, index);
    nnp_llm_row_free(w);
    if (!from) {
      w->status = NNP_ROW_FAILED; /* the mirror without its LLM row: say so rather than vanish */
      snprintf(w->reason, sizeof w->reason, "resume: the resumed document has no LLM row for %s", res->rows[index].label);
    } else if (copy_llm_row(from, w) != NNP_OK) {
      w->status = NNP_ROW_FAILED; /* out of memory: the row says so rather than vanish */
      snprintf(w->reason, sizeof w->reason, "%s", nnp_last_error());
    }
  }
  res->llm->n_rows = index + 1;
  nnp_llm_compare_tokens(res->llm);
  nnp_llm_sync_header(res);
}

static void llm_close(void *state) { nnp_free(state); }

const nnp_sweep_workload nnp_llm_workload = {.kind = NNP_LLM_RESULT_KIND, .open = llm_open, .n_rows = llm_n_rows,
                                             .plan_row = llm_plan_row, .run_row = llm_run_row,
                                             .resume_row = NULL, .finish_row = llm_finish_row,
                                             .close = llm_close};

static const nnp_llm_request *find_request(const nnp_llm_row *w, int id) {
  for (int i = 0; i < w->n_reqs; i++)
    if (w->reqs[i].id == id && !w->reqs[i].warmup && w->reqs[i].ok) return &w->reqs[i];
  return NULL;
}

/* Token and first-token agreement of w against ref, over the requests both ran. */
static void compare_row(nnp_llm_row *w, const nnp_llm_row *ref) {
  int equal = 0, positions = 0, first_equal = 0, pairs = 0;
  w->first_divergence = -1;
  for (int i = 0; i < w->n_reqs; i++) {
    const nnp_llm_request *a = &w->reqs[i], *b = find_request(ref, a->id);
    if (a->warmup || !a->ok || !b || !a->n_kept || !b->n_kept) continue;
    int n = a->n_kept < b->n_kept ? a->n_kept : b->n_kept, div = -1;
    for (int k = 0; k < n; k++) {
      equal += a->tokens[k] == b->tokens[k];
      if (div < 0 && a->tokens[k] != b->tokens[k]) div = k;
    }
    positions += n;
    first_equal += a->tokens[0] == b->tokens[0];
    pairs++;
    if (a->id == 0) w->first_divergence = div;
  }
  w->compared = pairs > 0;
  w->token_agreement = positions ? (double)equal / positions : 0;
  w->first_token_agreement = pairs ? (double)first_equal / pairs : 0;
  snprintf(w->reference, sizeof w->reference, "%s", ref->label);
}

void nnp_llm_compare_tokens(nnp_llm_result *r) {
  for (int i = 0; i < r->n_rows; i++) {
    nnp_llm_row *w = &r->rows[i];
    w->compared = false;
    w->reference[0] = 0;
    if (w->status != NNP_ROW_OK) continue;
    for (int j = 0; j < r->n_rows; j++) {
      const nnp_llm_row *ref = &r->rows[j];
      if (ref->status != NNP_ROW_OK || strcmp(ref->backend, "llama.cpp") || ref->prompt_len != w->prompt_len ||
          ref->gen_len != w->gen_len)
        continue;
      if (ref != w) compare_row(w, ref);
      break;
    }
  }
}
