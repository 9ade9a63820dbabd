/* nnperf-llama-worker: one LLM row on llama.cpp, in its own process (docs/llm.md).
 *
 * It reads a spec on stdin, loads the GGUF through llama.cpp's C API, and runs rounds of
 * `concurrency` requests: every request of a round is one sequence of the same llama_batch
 * (prompt processing in chunks of n_batch tokens, then one decode step per output token for
 * all sequences at once), generating exactly gen_len tokens by greedy argmax with
 * end-of-sequence ignored, so every backend generates the same count. Each token's arrival
 * time (CLOCK_MONOTONIC, after its logits are read) goes back to the parent, which computes
 * every metric; this process computes none.
 *
 * ggml's AMX weight repacking segfaults on the first decode on some AMX CPUs (llama.cpp
 * issue #20824), so the extra buffer types are off unless the row asks for them
 * (option repack=1): the same switch as llama-bench's --repack and llama-server's
 * --no-repack. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/footprint.h"
#include "llama.h"
#include "nnperf/llm.h"

#ifndef NNP_LLAMA_VERSION
#define NNP_LLAMA_VERSION "unknown"
#endif

#define MAX_GEN 4096
#define MAX_CONCURRENCY 64

typedef struct spec {
  char model[4096];
  int threads, prompt_len, gen_len, concurrency, requests, warmup, repack, n_batch, n_ubatch;
  unsigned long long seed;
} spec;

/* In the sanitizer build the worker links libllama and ggml, which are not instrumented and
 * keep allocations for the life of the process (backend registries, thread pools): leak
 * checking would turn every clean exit into a failure that is not nnperf's. ASan reads
 * this hook at start-up; other builds never call it. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "detect_leaks=0"; }

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int fail(const char *kind, const char *fmt, const char *arg) {
  printf("error %s ", kind);
  printf(fmt, arg);
  printf("\n");
  fflush(stdout);
  return 1;
}

/* key=value,... options of the row */
static int parse_options(spec *s, char *opts) {
  for (char *kv = strtok(opts, ","); kv; kv = strtok(NULL, ",")) {
    char *eq = strchr(kv, '=');
    if (!eq) return fail("failed", "backend option '%s' is not key=value", kv);
    *eq = 0;
    int v = atoi(eq + 1);
    if (!strcmp(kv, "repack")) s->repack = v != 0;
    else if (!strcmp(kv, "n_batch") && v > 0) s->n_batch = v;
    else if (!strcmp(kv, "n_ubatch") && v > 0) s->n_ubatch = v;
    else return fail("failed", "unknown llama.cpp option '%s' (repack, n_batch, n_ubatch)", kv);
  }
  return 0;
}

static int read_spec(spec *s) {
  char line[8192];
  memset(s, 0, sizeof *s);
  s->n_batch = 2048; /* llama-bench's defaults, so the crosscheck compares like with like */
  s->n_ubatch = 512;
  if (!fgets(line, sizeof line, stdin) || strncmp(line, "nnperf-llm-spec 1", 17))
    return fail("failed", "%s", "expected an nnperf-llm-spec 1 header on stdin");
  while (fgets(line, sizeof line, stdin)) {
    line[strcspn(line, "\n")] = 0;
    char *val = strchr(line, ' ');
    if (val) *val++ = 0;
    if (!strcmp(line, "run")) return 0;
    if (!val) continue;
    if (!strcmp(line, "model")) snprintf(s->model, sizeof s->model, "%s", val);
    else if (!strcmp(line, "threads")) s->threads = atoi(val);
    else if (!strcmp(line, "prompt_len")) s->prompt_len = atoi(val);
    else if (!strcmp(line, "gen_len")) s->gen_len = atoi(val);
    else if (!strcmp(line, "concurrency")) s->concurrency = atoi(val);
    else if (!strcmp(line, "requests")) s->requests = atoi(val);
    else if (!strcmp(line, "warmup")) s->warmup = atoi(val);
    else if (!strcmp(line, "seed")) s->seed = strtoull(val, NULL, 10);
    else if (!strcmp(line, "options") && parse_options(s, val)) return 1;
  }
  return fail("failed", "%s", "the spec ended without 'run'");
}

static int check_spec(const spec *s) {
  if (!s->model[0]) return fail("failed", "%s", "the spec names no model");
  if (s->threads < 1 || s->prompt_len < 1 || s->gen_len < 1 || s->gen_len > MAX_GEN || s->concurrency < 1 ||
      s->concurrency > MAX_CONCURRENCY || s->requests < 1 || s->warmup < 0)
    return fail("failed", "%s", "spec values out of range (threads, prompt_len, gen_len 1..4096, concurrency 1..64)");
  return 0;
}

static int argmax(const float *x, int n) {
  int best = 0;
  for (int i = 1; i < n; i++)
    if (x[i] > x[best]) best = i;
  return best;
}

typedef struct round_state {
  int32_t last[MAX_CONCURRENCY];  /* each sequence's last token */
  nnp_llm_request req[MAX_CONCURRENCY];
  double harness_s;               /* time spent outside llama_decode and argmax while decoding */
} round_state;

/* Adds token tok of sequence s, arrived at t. */
static int record(round_state *rs, int s, int32_t tok, double t) {
  nnp_llm_request *r = &rs->req[s];
  if (r->n_kept < NNP_LLM_KEEP_TOKENS) r->tokens[r->n_kept++] = tok;
  rs->last[s] = tok;
  return nnp_llm_request_add_token(r, t) == NNP_OK ? 0 : fail("nomem", "%s", "out of memory recording tokens");
}

/* Warm-up requests get prompts of their own (ids from 1000000), so the measured requests
 * 0, 1, 2, ... see the same prompts whatever the warm-up count or concurrency of the row. */
static int prompt_id(const spec *sp, int index) {
  return index < sp->warmup ? 1000000 + index : index - sp->warmup;
}

/* Prompt processing of all c sequences in chunks of n_batch tokens; each sequence's first
 * output token is read as soon as the chunk holding its last prompt token is decoded. */
static int prefill(struct llama_context *ctx, const spec *sp, int first_req, int c, int n_vocab, round_state *rs) {
  struct llama_batch b = llama_batch_init(sp->n_batch, 0, 1);
  int total = c * sp->prompt_len, done = 0, rc = 0;
  while (done < total && !rc) {
    b.n_tokens = 0;
    for (; done < total && b.n_tokens < sp->n_batch; done++) {
      int s = done / sp->prompt_len, pos = done % sp->prompt_len, k = b.n_tokens++;
      b.token[k] = nnp_llm_prompt_token(sp->seed, prompt_id(sp, first_req + s), pos, n_vocab);
      b.pos[k] = pos;
      b.n_seq_id[k] = 1;
      b.seq_id[k][0] = s;
      b.logits[k] = pos == sp->prompt_len - 1;
    }
    if (llama_decode(ctx, b) != 0) {
      rc = fail("failed", "%s", "llama_decode failed during prompt processing");
      break;
    }
    for (int k = 0; k < b.n_tokens && !rc; k++)
      if (b.logits[k]) rc = record(rs, b.seq_id[k][0], argmax(llama_get_logits_ith(ctx, k), n_vocab), now());
  }
  llama_batch_free(b);
  return rc;
}

/* gen_len - 1 decode steps, one token per sequence each. */
static int decode(struct llama_context *ctx, const spec *sp, int c, int n_vocab, round_state *rs) {
  struct llama_batch b = llama_batch_init(c, 0, 1);
  int rc = 0;
  double t_prev = now();
  for (int step = 1; step < sp->gen_len && !rc; step++) {
    double t0 = now();
    rs->harness_s += t0 - t_prev;
    b.n_tokens = c;
    for (int s = 0; s < c; s++) {
      b.token[s] = rs->last[s];
      b.pos[s] = sp->prompt_len + step - 1;
      b.n_seq_id[s] = 1;
      b.seq_id[s][0] = s;
      b.logits[s] = 1;
    }
    if (llama_decode(ctx, b) != 0) {
      rc = fail("failed", "%s", "llama_decode failed while generating");
      break;
    }
    int32_t tok[MAX_CONCURRENCY];
    for (int s = 0; s < c; s++) tok[s] = argmax(llama_get_logits_ith(ctx, s), n_vocab);
    double t = now();
    for (int s = 0; s < c && !rc; s++) rc = record(rs, s, tok[s], t);
    t_prev = now();
    rs->harness_s += t_prev - t;
  }
  llama_batch_free(b);
  return rc;
}

static void emit(const nnp_llm_request *r, int id) {
  printf("req %d %d %d %.9f %.9f %d", id, r->warmup ? 1 : 0, r->prompt_tokens, r->t_sent, r->t_done, r->n_tokens);
  for (int k = 0; k < r->n_tokens; k++) printf(" %.6f", r->token_t[k] - r->t_sent);
  printf("\ntoks %d", id);
  for (int k = 0; k < r->n_kept; k++) printf(" %d", r->tokens[k]);
  printf("\n");
}

static int run_round(struct llama_context *ctx, const spec *sp, int first_req, int n_vocab, round_state *rs) {
  int c = sp->concurrency;
  llama_memory_clear(llama_get_memory(ctx), true); /* no request sees another's cache */
  double t_sent = now();
  for (int s = 0; s < c; s++) {
    memset(&rs->req[s], 0, sizeof rs->req[s]);
    rs->req[s].t_due = rs->req[s].t_sent = t_sent;
    rs->req[s].prompt_tokens = sp->prompt_len;
    rs->req[s].warmup = first_req + s < sp->warmup;
    rs->req[s].ok = true;
  }
  int rc = prefill(ctx, sp, first_req, c, n_vocab, rs);
  if (!rc) rc = decode(ctx, sp, c, n_vocab, rs);
  double t_done = now();
  for (int s = 0; s < c; s++) {
    rs->req[s].t_done = t_done;
    if (!rc) emit(&rs->req[s], prompt_id(sp, first_req + s));
    nnp_llm_request_free(&rs->req[s]);
  }
  fflush(stdout);
  return rc;
}

static long long vmhwm_bytes(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long long kb = -1;
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "VmHWM:", 6)) kb = atoll(line + 6);
  if (f) fclose(f);
  return kb < 0 ? -1 : kb * 1024;
}

/* The CNN workers' footprint and energy records (docs/worker-protocol.md): the files this
 * process mapped (libllama, ggml, libc, ...) but the GGUF, which is the model's bytes; the
 * energy per output token of the measured rounds where a RAPL counter is readable. */
static void report_footprint_energy(const spec *sp, const nnp_energy *e, long long tokens) {
  int64_t bytes = -1;
  int files = -1;
  if (nnp_footprint_runtime(sp->model, NULL, &bytes, &files) != NNP_OK) bytes = -1, files = -1;
  printf("footprint %lld %d %lld\n", (long long)bytes, files, (long long)nnp_file_bytes(sp->model));
  double j = e ? nnp_energy_joules(e) : -1;
  if (j >= 0) printf("energy %.9g %lld %s\n", j, tokens, e->source);
  else printf("energy -1 0 %s\n", e ? e->source : "not measured (no measured round)");
}

static struct llama_context *open_context(struct llama_model *model, const spec *sp) {
  struct llama_context_params cp = llama_context_default_params();
  int per_seq = sp->prompt_len + sp->gen_len;
  cp.n_seq_max = (uint32_t)sp->concurrency;
  cp.n_ctx = (uint32_t)((per_seq * sp->concurrency + 255) / 256 * 256);
  cp.n_batch = (uint32_t)sp->n_batch;
  cp.n_ubatch = (uint32_t)sp->n_ubatch;
  cp.n_threads = cp.n_threads_batch = sp->threads;
  cp.no_perf = true;
  return llama_init_from_model(model, cp);
}

static void log_quiet(enum ggml_log_level level, const char *text, void *ud) {
  (void)ud;
  if (level == GGML_LOG_LEVEL_ERROR) fputs(text, stderr); /* errors reach the row's reason */
}

int main(void) {
  spec sp;
  if (read_spec(&sp) || check_spec(&sp)) return 1;
  printf("ready %.9f\nversion llama.cpp (vendored by llama-cpp-python %s)\n", now(), NNP_LLAMA_VERSION);
  fflush(stdout);
  llama_log_set(log_quiet, NULL);
  llama_backend_init();
  double t0 = now();
  struct llama_model_params mp = llama_model_default_params();
  mp.use_extra_bufts = sp.repack;
  struct llama_model *model = llama_model_load_from_file(sp.model, mp);
  if (!model) return fail("failed", "llama.cpp could not load %s", sp.model);
  int32_t n_ctx_train = llama_model_n_ctx_train(model);
  if (sp.prompt_len + sp.gen_len > n_ctx_train) {
    printf("error failed a prompt of %d tokens plus %d generated exceeds the model's context of %d tokens\n",
           sp.prompt_len, sp.gen_len, n_ctx_train);
    return 1;
  }
  struct llama_context *ctx = open_context(model, &sp);
  if (!ctx) return fail("failed", "llama.cpp could not create a context for %s", sp.model);
  printf("load %.9f %.9f\n", now() - t0, now());
  int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
  long long n_ctx = llama_n_ctx(ctx);
  long long width = llama_model_n_embd(model) / llama_model_n_head(model) * llama_model_n_head_kv(model);
  printf("kv %lld %lld\n", 2LL * llama_model_n_layer(model) * n_ctx * width * 2, n_ctx); /* f16 K and V */
  printf("note repack %s, n_batch %d, n_ubatch %d, %s\n", sp.repack ? "on" : "off", sp.n_batch, sp.n_ubatch,
         llama_print_system_info());
  static round_state rs;
  int rc = 0, total = sp.warmup + sp.requests;
  nnp_energy energy; /* over the rounds without a warm-up request: the steady state */
  long long measured_tokens = 0;
  for (int first = 0; first < total && !rc; first += sp.concurrency) {
    if (first >= sp.warmup && !measured_tokens) nnp_energy_start(&energy, "/sys/class/powercap");
    rc = run_round(ctx, &sp, first, n_vocab, &rs);
    if (first >= sp.warmup) measured_tokens += (long long)sp.concurrency * sp.gen_len;
  }
  if (!rc) {
    printf("overhead %.9f %d\nmemory %lld\n", rs.harness_s, total * (sp.gen_len - 1), vmhwm_bytes());
    report_footprint_energy(&sp, measured_tokens ? &energy : NULL, measured_tokens);
    printf("done\n");
  }
  fflush(stdout);
  llama_free(ctx);
  llama_model_free(model);
  llama_backend_free();
  return rc;
}
