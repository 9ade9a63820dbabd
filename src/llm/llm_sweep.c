/* The LLM sweep (llm_sweep.h). */
#include "llm/llm_sweep.h"

#include <stdio.h>
#include <string.h>

#include "bench/orchestrator.h"
#include "llm/gguf.h"
#include "llm/llm_backends.h"
#include "llm/llm_worker.h"
#include "nnperf/alloc.h"

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

typedef struct row_ctx {
  const nnp_llm_sweep_spec *s;
  const nnp_llm_sweep_hooks *hooks;
  const nnp_gguf_info *info;
  int index, total;
} row_ctx;

static void row_progress(void *ud, const char *phase, int done, int total) {
  row_ctx *c = ud;
  if (c->hooks && c->hooks->progress) c->hooks->progress(c->hooks->ud, c->index + 1, c->total, "", phase, done, total);
}

/* One row: unavailable, refused before it starts (prompt beyond the context), or run. */
static void run_one(row_ctx *c, const nnp_llm_backend *b, int threads, int plen, int conc, nnp_llm_row *row) {
  const nnp_llm_sweep_spec *s = c->s;
  char opts[256], argbuf[4200], version[256] = "", wt[32];
  const char *argv[NNP_LLM_WORKER_ARGS], *pythonpath = NULL;
  backend_options(s->options, b->name, opts, sizeof opts);
  snprintf(wt, sizeof wt, "%s", b->weight_type[0] ? b->weight_type : c->info->weight_type);
  nnp_llm_row_request q = {.argv = argv, .backend = b->name, .model_path = s->model, .options = opts,
                           .weight_type = wt, .threads = threads, .prompt_len = plen, .gen_len = s->gen_len,
                           .concurrency = conc, .requests = round_up(s->requests, conc),
                           .warmup = round_up(s->warmup > conc ? s->warmup : conc, conc), .seed = s->seed,
                           .timeout_s = s->timeout_s, .mem_limit = s->mem_limit};
  nnp_status avail = b->probe(version, sizeof version);
  if (avail == NNP_OK) avail = b->worker(argv, argbuf, sizeof argbuf, &pythonpath);
  q.pythonpath = pythonpath;
  nnp_llm_row_init(&q, row);
  if (avail != NNP_OK) { /* recorded, never faked: the reason and the install hint */
    row->status = NNP_ROW_UNAVAILABLE;
    snprintf(row->reason, sizeof row->reason, "%s (install: %s)", nnp_last_error(), b->install_hint);
    return;
  }
  if (c->info->n_ctx_train > 0 && plen + s->gen_len > c->info->n_ctx_train) {
    row->status = NNP_ROW_FAILED;
    snprintf(row->reason, sizeof row->reason,
             "a prompt of %d tokens plus %d generated exceeds the model's context of %lld tokens", plen, s->gen_len,
             (long long)c->info->n_ctx_train);
    return;
  }
  if (nnp_llm_run_row(&q, row, row_progress, c) != NNP_OK) {
    nnp_llm_row_init(&q, row);
    row->status = NNP_ROW_FAILED;
    snprintf(row->reason, sizeof row->reason, "%s", nnp_last_error());
  }
  if (!row->backend_version[0]) snprintf(row->backend_version, sizeof row->backend_version, "%s", version);
}

static nnp_status grow(nnp_llm_result *r) {
  if (r->n_rows < r->cap_rows) return NNP_OK;
  int cap = r->cap_rows ? r->cap_rows * 2 : 8;
  nnp_llm_row *g = nnp_realloc(r->rows, sizeof *g * (size_t)cap);
  if (!g) return nnp_error(NNP_ERR_NOMEM, "out of memory");
  r->rows = g;
  r->cap_rows = cap;
  return NNP_OK;
}

nnp_status nnp_llm_sweep_run(const nnp_llm_sweep_spec *s, nnp_llm_result *r, const nnp_llm_sweep_hooks *hooks) {
  nnp_gguf_info info;
  NNP_TRY(nnp_gguf_read_info(s->model, &info));
  for (int k = 0; k < s->n_backends; k++)
    if (!nnp_llm_backend_find(s->backends[k]))
      return nnp_error(NNP_ERR_INVALID, "unknown LLM backend '%s' (nnperf backends lists them)", s->backends[k]);
  r->seed = s->seed;
  r->requests = s->requests;
  r->warmup = s->warmup;
  row_ctx c = {.s = s, .hooks = hooks, .info = &info,
               .total = s->n_threads * s->n_prompt_lens * s->n_concurrency * s->n_backends};
  for (int ti = 0; ti < s->n_threads; ti++)
    for (int pi = 0; pi < s->n_prompt_lens; pi++)
      for (int ci = 0; ci < s->n_concurrency; ci++)
        for (int bi = 0; bi < s->n_backends && !nnp_bench_interrupted; bi++) {
          NNP_TRY(grow(r));
          c.index = r->n_rows;
          run_one(&c, nnp_llm_backend_find(s->backends[bi]), s->threads[ti], s->prompt_lens[pi], s->concurrency[ci],
                  &r->rows[r->n_rows]);
          r->n_rows++;
          nnp_llm_compare_tokens(r);
          if (hooks && hooks->row_done) hooks->row_done(hooks->ud, r, r->n_rows - 1);
        }
  return NNP_OK;
}

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
