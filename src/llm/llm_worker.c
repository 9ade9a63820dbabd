/* Parent side of an LLM row (llm_worker.h). */
#define _GNU_SOURCE /* strsignal */
#include "llm/llm_worker.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/footprint.h"
#include "bench/orchestrator.h"
#include "bench/worker_proc.h"
#include "nnperf/alloc.h"

#define LINE_MAX_BYTES 262144 /* a req line: 4096 token times of ~9 characters */
#define MAX_REQS 100000

typedef struct reader {
  nnp_llm_row *row;
  const nnp_llm_row_request *req;
  double t_spawn;
  int cap_reqs, got_done, got_error;
  char error_kind[32];
  char *line;
  size_t len;
  int protocol_error;
  nnp_llm_progress_fn progress;
  void *progress_ud;
} reader;

static void write_spec(FILE *f, const nnp_llm_row_request *q) {
  fprintf(f, "nnperf-llm-spec 1\nbackend %s\nmodel %s\nthreads %d\nprompt_len %d\ngen_len %d\nconcurrency %d\n",
          q->backend, q->model_path, q->threads, q->prompt_len, q->gen_len, q->concurrency);
  fprintf(f, "requests %d\nwarmup %d\nseed %llu\n", q->requests, q->warmup, (unsigned long long)q->seed);
  if (q->options && q->options[0]) fprintf(f, "options %s\n", q->options);
  fprintf(f, "run\n");
}

static nnp_status spawn(const nnp_llm_row_request *q, nnp_worker_proc *p) {
  nnp_worker_cmd cmd = {.exe = q->argv[0], .argv = q->argv, .pythonpath = q->pythonpath};
  nnp_status s = nnp_worker_start(&cmd, p);
  if (s != NNP_OK) return nnp_error_context(s, "the %s worker", q->backend);
  if (p->in) {
    write_spec(p->in, q);
    fclose(p->in); /* a worker that died early shows up in its outcome, not as an error here */
    p->in = NULL;
  }
  return NNP_OK;
}

static nnp_llm_request *new_request(reader *rd) {
  nnp_llm_row *r = rd->row;
  if (r->n_reqs == rd->cap_reqs) {
    if (r->n_reqs >= MAX_REQS) return NULL;
    int cap = rd->cap_reqs ? rd->cap_reqs * 2 : 32;
    nnp_llm_request *g = nnp_realloc(r->reqs, sizeof *g * (size_t)cap);
    if (!g) return NULL;
    r->reqs = g;
    rd->cap_reqs = cap;
  }
  nnp_llm_request *q = &r->reqs[r->n_reqs++];
  memset(q, 0, sizeof *q);
  return q;
}

/* "req ID WARMUP PROMPT_TOKENS T_SENT T_DONE N dt1 .. dtN" (token times after T_SENT) */
static int parse_req(reader *rd, char *s) {
  char *end;
  long id = strtol(s, &end, 10);
  int warm = (int)strtol(end, &end, 10), ptok = (int)strtol(end, &end, 10);
  double t_sent = strtod(end, &end), t_done = strtod(end, &end);
  long n = strtol(end, &end, 10);
  if (id < 0 || n < 0 || n > 1 << 20 || t_sent <= 0) return 0;
  nnp_llm_request *q = new_request(rd);
  if (!q) return 0;
  q->prompt_tokens = ptok;
  q->warmup = warm != 0;
  q->t_due = q->t_sent = t_sent;
  q->t_done = t_done;
  q->ok = true;
  q->id = (int)id;
  for (long k = 0; k < n; k++) {
    char *e2;
    double dt = strtod(end, &e2);
    if (e2 == end || dt < 0) return 0;
    end = e2;
    if (nnp_llm_request_add_token(q, t_sent + dt) != NNP_OK) return 0;
  }
  return 1;
}

/* "toks ID t1 t2 ...": the kept greedy tokens of the request just read. */
static int parse_toks(reader *rd, char *s) {
  nnp_llm_row *r = rd->row;
  char *end;
  long id = strtol(s, &end, 10);
  if (!r->n_reqs || r->reqs[r->n_reqs - 1].id != id) return 0;
  nnp_llm_request *q = &r->reqs[r->n_reqs - 1];
  q->n_kept = 0;
  for (int k = 0; k < NNP_LLM_KEEP_TOKENS; k++) {
    char *e2;
    long t = strtol(end, &e2, 10);
    if (e2 == end) break;
    end = e2;
    q->tokens[q->n_kept++] = (int32_t)t;
  }
  return 1;
}

static int handle_line(reader *rd, char *line, nnp_llm_progress_fn progress, void *ud) {
  nnp_llm_row *r = rd->row;
  char *rest = strchr(line, ' ');
  rest = rest ? rest + 1 : line + strlen(line);
  if (!strncmp(line, "ready ", 6)) {
    r->spawn_to_ready_s = atof(rest) - rd->t_spawn;
    if (progress) progress(ud, "load", 0, 0);
  } else if (!strncmp(line, "version ", 8)) {
    snprintf(r->backend_version, sizeof r->backend_version, "%s", rest);
  } else if (!strncmp(line, "load ", 5)) {
    r->load_s = atof(rest);
  } else if (!strncmp(line, "kv ", 3)) {
    r->kv_cache_bytes = atoll(rest);
  } else if (!strncmp(line, "kvsource ", 9)) {
    snprintf(r->kv_source, sizeof r->kv_source, "%s", rest);
  } else if (!strncmp(line, "weights ", 8)) {
    snprintf(r->weight_type, sizeof r->weight_type, "%s", rest);
  } else if (!strncmp(line, "footprint ", 10) || !strncmp(line, "energy ", 7)) {
    nnp_row_extras_record(&r->ext, line); /* the CNN workers' records: per output token here */
  } else if (!strncmp(line, "note ", 5)) {
    snprintf(r->note, sizeof r->note, "%s", rest);
  } else if (!strncmp(line, "req ", 4)) {
    if (!parse_req(rd, rest)) return 0;
    const nnp_llm_request *q = &r->reqs[r->n_reqs - 1];
    if (r->n_reqs == 1 && q->n_tokens) r->cold_start_s = q->token_t[0] - rd->t_spawn;
    if (progress) progress(ud, q->warmup ? "warm-up" : "measure", r->n_reqs, rd->req->warmup + rd->req->requests);
  } else if (!strncmp(line, "toks ", 5)) {
    if (!parse_toks(rd, rest)) return 0;
  } else if (!strncmp(line, "overhead ", 9)) {
    char *end;
    double s = strtod(rest, &end);
    long tokens = strtol(end, NULL, 10);
    r->harness_overhead_s = tokens > 0 ? s / (double)tokens : -1;
  } else if (!strncmp(line, "memory ", 7)) {
    r->vmhwm_bytes = atoll(rest);
  } else if (!strcmp(line, "done")) {
    rd->got_done = 1;
  } else if (!strncmp(line, "error ", 6)) {
    rd->got_error = 1;
    char *msg = strchr(rest, ' ');
    snprintf(rd->error_kind, sizeof rd->error_kind, "%.*s", (int)(msg ? msg - rest : (long)strlen(rest)), rest);
    snprintf(r->reason, sizeof r->reason, "%s", msg ? msg + 1 : rest);
  }
  return 1;
}

/* Splits the stdout bytes into lines (bounded: an endless line is a protocol error). */
static bool feed(void *ud, const char *buf, size_t n) {
  reader *rd = ud;
  for (size_t i = 0; i < n && !rd->protocol_error; i++) {
    if (buf[i] != '\n') {
      if (rd->len >= LINE_MAX_BYTES) {
        rd->protocol_error = 1;
        snprintf(rd->row->reason, sizeof rd->row->reason, "worker protocol error: a line longer than %d bytes",
                 LINE_MAX_BYTES);
        return false;
      }
      rd->line[rd->len++] = buf[i];
      continue;
    }
    rd->line[rd->len] = 0;
    rd->len = 0;
    if (!handle_line(rd, rd->line, rd->progress, rd->progress_ud)) {
      rd->protocol_error = 1;
      snprintf(rd->row->reason, sizeof rd->row->reason, "worker protocol error: malformed record '%.80s'", rd->line);
    }
  }
  return !rd->protocol_error;
}

static void set_outcome(nnp_llm_row *r, const reader *rd, const nnp_worker_exit *x) {
  char errline[600];
  nnp_worker_last_line(x->stderr_tail, errline, sizeof errline);
  if (x->end == NNP_WORKER_INTERRUPTED) {
    r->status = NNP_ROW_FAILED;
    snprintf(r->reason, sizeof r->reason, "interrupted by the user");
  } else if (x->end == NNP_WORKER_OVER_MEMORY) {
    r->status = NNP_ROW_OOM;
    snprintf(r->reason, sizeof r->reason, "worker exceeded the memory limit of %lld MiB (resident %lld MiB)",
             rd->req->mem_limit >> 20, (long long)(x->rss_seen >> 20));
  } else if (x->end == NNP_WORKER_TIMED_OUT) {
    r->status = NNP_ROW_TIMEOUT;
    snprintf(r->reason, sizeof r->reason, "worker exceeded the %.0f s time limit and was killed (after %d requests)",
             rd->req->timeout_s, r->n_reqs);
  } else if (rd->protocol_error) {
    r->status = NNP_ROW_FAILED;
  } else if (rd->got_done && r->exit_status == 0) {
    r->status = NNP_ROW_OK;
  } else if (rd->got_error) {
    r->status = !strcmp(rd->error_kind, "unsupported") ? NNP_ROW_UNSUPPORTED
                : !strcmp(rd->error_kind, "nomem")     ? NNP_ROW_OOM
                                                       : NNP_ROW_FAILED;
  } else if (r->term_signal) {
    r->status = r->term_signal == SIGKILL ? NNP_ROW_OOM : NNP_ROW_CRASHED;
    snprintf(r->reason, sizeof r->reason, "worker killed by signal %d (%s)%s%s", r->term_signal,
             strsignal(r->term_signal), errline[0] ? ": " : "", errline);
  } else {
    r->status = NNP_ROW_CRASHED;
    snprintf(r->reason, sizeof r->reason, "worker exited with status %d without a result%s%s", r->exit_status,
             errline[0] ? ": " : "", errline);
  }
}

void nnp_llm_row_init(const nnp_llm_row_request *q, nnp_llm_row *r) {
  memset(r, 0, sizeof *r);
  snprintf(r->backend, sizeof r->backend, "%s", q->backend);
  snprintf(r->options, sizeof r->options, "%s", q->options ? q->options : "");
  snprintf(r->weight_type, sizeof r->weight_type, "%s", q->weight_type ? q->weight_type : "");
  r->threads = q->threads;
  r->prompt_len = q->prompt_len;
  r->gen_len = q->gen_len;
  r->concurrency = q->concurrency;
  snprintf(r->label, sizeof r->label, "%s t%d p%d g%d c%d", q->backend, q->threads, q->prompt_len, q->gen_len,
           q->concurrency);
  r->spawn_to_ready_s = r->load_s = r->cold_start_s = r->harness_overhead_s = -1;
  r->peak_rss_bytes = r->vmhwm_bytes = r->kv_cache_bytes = -1;
  r->first_divergence = -1;
  r->exit_status = -1;
  snprintf(r->kv_source, sizeof r->kv_source, "model dimensions");
  nnp_row_extras_init(&r->ext);
  r->ext.model_bytes = nnp_file_bytes(q->model_path); /* the GGUF every LLM backend here loads */
}

nnp_status nnp_llm_run_row(const nnp_llm_row_request *q, nnp_llm_row *row, nnp_llm_progress_fn progress, void *ud) {
  nnp_llm_row_init(q, row);
  reader rd = {.row = row, .req = q, .progress = progress, .progress_ud = ud};
  rd.line = nnp_malloc(LINE_MAX_BYTES + 1);
  if (!rd.line) return nnp_error(NNP_ERR_NOMEM, "out of memory");
  nnp_worker_proc wp;
  nnp_status st = spawn(q, &wp);
  if (st != NNP_OK) {
    nnp_free(rd.line);
    return st;
  }
  rd.t_spawn = wp.t_spawn;
  nnp_worker_exit x;
  nnp_worker_wait(&wp, q->timeout_s, q->mem_limit, feed, &rd, &x);
  row->peak_rss_bytes = x.peak_rss_bytes;
  row->exit_status = x.exit_status;
  row->term_signal = x.term_signal;
  set_outcome(row, &rd, &x);
  nnp_free(rd.line);
  if (row->status == NNP_ROW_OK) {
    nnp_llm_metrics_compute(row->reqs, row->n_reqs, NULL, q->seed, &row->m);
    nnp_llm_row_rates(row);
  }
  return NNP_OK;
}

void nnp_llm_row_rates(nnp_llm_row *row) {
  double pre_tokens = 0, pre_s = 0, dec_tokens = 0, dec_s = 0;
  for (int i = 0; i < row->n_reqs;) {
    int j = i; /* a round: the requests sent at the same instant */
    double first = 0, last = 0, ptok = 0, gtok = 0;
    for (; j < row->n_reqs && row->reqs[j].t_sent == row->reqs[i].t_sent; j++) {
      const nnp_llm_request *q = &row->reqs[j];
      if (!q->n_tokens) continue;
      if (q->token_t[0] > first) first = q->token_t[0];
      if (q->token_t[q->n_tokens - 1] > last) last = q->token_t[q->n_tokens - 1];
      ptok += q->prompt_tokens;
      gtok += q->n_tokens - 1;
    }
    if (!row->reqs[i].warmup && first > 0) {
      pre_tokens += ptok;
      pre_s += first - row->reqs[i].t_sent;
      dec_tokens += gtok;
      dec_s += last - first;
    }
    i = j;
  }
  row->prefill_tok_per_s = pre_s > 0 ? pre_tokens / pre_s : 0;
  row->decode_tok_per_s = dec_s > 0 ? dec_tokens / dec_s : 0;
}

void nnp_llm_row_free(nnp_llm_row *r) {
  if (!r) return;
  for (int i = 0; i < r->n_reqs; i++) nnp_llm_request_free(&r->reqs[i]);
  nnp_free(r->reqs);
  r->reqs = NULL;
  r->n_reqs = 0;
}

void nnp_llm_result_free(nnp_llm_result *r) {
  if (!r) return;
  /* every allocated row: rows past n_rows are zeroed (calloc) or one the sweep measured
   * and then dropped as cut short (Ctrl-C), which still owns its requests */
  for (int i = 0; i < r->cap_rows; i++) nnp_llm_row_free(&r->rows[i]);
  nnp_free(r->rows);
  r->rows = NULL;
  r->n_rows = r->cap_rows = 0;
}
