/* The streaming client of nnperf llm load: libcurl multi, one thread, one clock. */
#include "llm/llm_client.h"

#include <curl/curl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llm/llm_metrics_scrape.h"
#include "nnperf/alloc.h"

volatile sig_atomic_t nnp_llm_interrupted = 0;

/* An error answer is read up to this much (its start goes into the reason); more aborts. */
#define ERROR_BODY_MAX (1u << 20)

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

nnp_status nnp_llm_client_global_init(void) {
  static int done;
  if (done) return NNP_OK;
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return nnp_error(NNP_ERR_INTERNAL, "libcurl: global init failed");
  done = 1;
  return NNP_OK;
}

/* One request in flight. */
typedef struct call {
  CURL *easy;
  struct curl_slist *hdrs;
  char *body;
  nnp_oai_stream stream;
  nnp_llm_request *rec;
  nnp_oai_timings *timings;
  long code;
  size_t error_bytes;
  char excerpt[120];
  char errbuf[CURL_ERROR_SIZE];
  int used;
} call;

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *userdata) {
  call *c = userdata;
  size_t n = size * nmemb;
  double t = now_s();
  if (c->code == 0) curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &c->code);
  if (c->code != 200) {
    size_t have = strlen(c->excerpt), room = sizeof c->excerpt - 1 - have;
    for (size_t i = 0; i < n && room > 0; i++, room--)
      c->excerpt[have++] = (ptr[i] >= 0x20 && ptr[i] < 0x7f) ? ptr[i] : ' ';
    c->excerpt[have] = '\0';
    c->error_bytes += n;
    return c->error_bytes > ERROR_BODY_MAX ? 0 : n;
  }
  return nnp_oai_stream_feed(&c->stream, ptr, n, t) < 0 ? 0 : n;
}

static void fail_req(nnp_llm_request *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail_req(nnp_llm_request *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->error, sizeof r->error, fmt, ap);
  va_end(ap);
  r->ok = false;
}

/* Decides how a finished transfer ended: ok, or failed with "cause: detail" (the cause,
 * before the colon, is what the failure table groups by). */
static void judge(call *c, CURLcode rc, double timeout_s) {
  nnp_llm_request *r = c->rec;
  int stream_ok = c->code == 200 && rc == CURLE_OK ? nnp_oai_stream_finish(&c->stream) == 0 : 1;
  int nt = r->n_tokens;
  const char *curl_why = c->errbuf[0] ? c->errbuf : curl_easy_strerror(rc);
  r->ok = true;
  if (c->code != 0 && c->code != 200 && (rc == CURLE_OK || rc == CURLE_WRITE_ERROR))
    fail_req(r, "http: HTTP %ld%s%.100s", c->code, c->excerpt[0] ? ": " : "", c->excerpt);
  else if (c->stream.sse.failed)
    fail_req(r, "%s", c->stream.sse.why);
  else if (rc == CURLE_OPERATION_TIMEDOUT)
    fail_req(r, "timeout: no complete answer within %g s (%d tokens came)", timeout_s, nt);
  else if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST)
    fail_req(r, "connect: %.150s", curl_why);
  else if (rc == CURLE_GOT_NOTHING || rc == CURLE_PARTIAL_FILE || rc == CURLE_RECV_ERROR)
    fail_req(r, "cut-short: connection closed after %d tokens (%.100s)", nt, curl_why);
  else if (rc != CURLE_OK)
    fail_req(r, "transport: %.150s", curl_why);
  else if (!stream_ok)
    fail_req(r, "%s", c->stream.sse.why);
  else if (nt == 0)
    fail_req(r, "no-tokens: the answer ended without any output token");
  else if (!c->stream.done && !c->stream.finished)
    fail_req(r, "cut-short: stream ended after %d tokens without [DONE] or a finish_reason", nt);
  *c->timings = c->stream.timings;
}

/* The /metrics sampler: one GET at a time on the same multi handle as the requests. */
typedef struct scrape {
  CURL *easy;
  char *buf;
  size_t len;
  double next_t, interval;
  char url[300];
  nnp_llm_server_gauges *g;
} scrape;

#define SCRAPE_MAX (512u * 1024u)

static size_t on_scrape(char *ptr, size_t size, size_t nmemb, void *userdata) {
  scrape *s = userdata;
  size_t n = size * nmemb;
  if (s->len + n >= SCRAPE_MAX) return 0;
  memcpy(s->buf + s->len, ptr, n);
  s->len += n;
  return n;
}

/* Everything one run needs while it goes. */
typedef struct run_ctx {
  const nnp_llm_endpoint *e;
  const nnp_llm_load_plan *p;
  nnp_llm_load_out *out;
  CURLM *multi;
  call *calls;
  int n_calls;
  scrape sc;
  double deadline;
} run_ctx;

static nnp_status setup_easy(run_ctx *x, call *c) {
  const nnp_llm_endpoint *e = x->e;
  char url[300];
  snprintf(url, sizeof url, "%s%s", e->base_url, e->chat ? "/v1/chat/completions" : "/v1/completions");
  c->hdrs = curl_slist_append(NULL, "Content-Type: application/json");
  c->hdrs = c->hdrs ? curl_slist_append(c->hdrs, "Accept: text/event-stream") : NULL;
  c->hdrs = c->hdrs ? curl_slist_append(c->hdrs, "Expect:") : NULL;
  if (c->hdrs && e->api_key && *e->api_key) {
    char auth[600];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", e->api_key);
    c->hdrs = curl_slist_append(c->hdrs, auth);
  }
  if (!c->hdrs || !(c->easy = curl_easy_init())) return nnp_error(NNP_ERR_NOMEM, "libcurl: out of memory");
  CURL *h = c->easy;
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, c->hdrs);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, c->body);
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(c->body));
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, c);
  curl_easy_setopt(h, CURLOPT_PRIVATE, c);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c->errbuf);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(e->timeout_s * 1000));
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(e->timeout_s < 10 ? e->timeout_s * 1000 : 10000));
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
  return NNP_OK;
}

static nnp_status launch(run_ctx *x, int i, double due) {
  call *c = NULL;
  for (int k = 0; k < x->n_calls && !c; k++)
    if (!x->calls[k].used) c = &x->calls[k];
  if (!c) return nnp_error(NNP_ERR_INTERNAL, "llm load: no free request slot");
  memset(c, 0, sizeof *c);
  c->used = 1;
  c->rec = &x->out->reqs[i];
  c->timings = &x->out->timings[i];
  const nnp_llm_load_plan *p = x->p;
  int req = p->first_request + i;
  nnp_llm_body_spec b = {x->e->chat, x->e->model, nnp_len_dist_draw(&p->prompt_len, p->seed, req),
                         nnp_len_dist_draw(&p->gen_len, p->seed ^ 0x5bd1e995u, req), p->shared_prefix,
                         x->e->n_vocab, p->seed, req, p->cache_prompt};
  c->rec->prompt_tokens = b.prompt_len;
  nnp_oai_stream_init(&c->stream, c->rec);
  NNP_TRY(nnp_llm_body(&b, &c->body));
  NNP_TRY(setup_easy(x, c));
  c->rec->t_due = due;
  c->rec->t_sent = now_s();
  if (curl_multi_add_handle(x->multi, c->easy) != CURLM_OK)
    return nnp_error(NNP_ERR_INTERNAL, "libcurl: could not add a request");
  return NNP_OK;
}

static void release(run_ctx *x, call *c) {
  curl_multi_remove_handle(x->multi, c->easy);
  curl_easy_cleanup(c->easy);
  curl_slist_free_all(c->hdrs);
  nnp_free(c->body);
  nnp_oai_stream_free(&c->stream);
  c->used = 0;
}

static void scrape_start(run_ctx *x, double t) {
  scrape *s = &x->sc;
  if (s->interval <= 0 || s->easy || t < s->next_t) return;
  s->next_t = t + s->interval;
  s->len = 0;
  if (!(s->easy = curl_easy_init())) return;
  curl_easy_setopt(s->easy, CURLOPT_URL, s->url);
  curl_easy_setopt(s->easy, CURLOPT_WRITEFUNCTION, on_scrape);
  curl_easy_setopt(s->easy, CURLOPT_WRITEDATA, s);
  curl_easy_setopt(s->easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(s->easy, CURLOPT_TIMEOUT_MS, 2000L);
  curl_easy_setopt(s->easy, CURLOPT_PROTOCOLS_STR, "http,https");
  if (curl_multi_add_handle(x->multi, s->easy) != CURLM_OK) {
    curl_easy_cleanup(s->easy);
    s->easy = NULL;
  }
}

static void scrape_done(run_ctx *x, CURLcode rc) {
  scrape *s = &x->sc;
  long code = 0;
  curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &code);
  if (rc == CURLE_OK && code == 200) nnp_llm_gauges_add(&x->out->gauges, s->buf, s->len);
  curl_multi_remove_handle(x->multi, s->easy);
  curl_easy_cleanup(s->easy);
  s->easy = NULL;
}

/* Reads finished transfers; returns how many requests ended. */
static int collect(run_ctx *x) {
  int ended = 0, left;
  CURLMsg *m;
  while ((m = curl_multi_info_read(x->multi, &left))) {
    if (m->msg != CURLMSG_DONE) continue;
    if (m->easy_handle == x->sc.easy) {
      scrape_done(x, m->data.result);
      continue;
    }
    call *c = NULL;
    curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&c);
    c->rec->t_done = now_s();
    judge(c, m->data.result, x->e->timeout_s);
    release(x, c);
    ended++;
  }
  return ended;
}

/* Stops what is in flight and what was not sent: the run was interrupted or ran too long. */
static void abandon(run_ctx *x, int first, int next, int count, const char *why) {
  double t = now_s();
  for (int k = 0; k < x->n_calls; k++) {
    if (!x->calls[k].used) continue;
    x->calls[k].rec->t_done = t;
    fail_req(x->calls[k].rec, "%s after %d tokens", why, x->calls[k].rec->n_tokens);
    release(x, &x->calls[k]);
  }
  for (int i = next; i < count; i++) {
    nnp_llm_request *r = &x->out->reqs[first + i];
    r->t_due = r->t_sent = r->t_done = t;
    fail_req(r, "%s before it was sent", why);
  }
}

/* Runs requests first..first+count: closed loop (arrivals NULL: each of `limit` streams
 * sends its next request when its last ends) or open loop (arrival offsets from the
 * phase's start; at most `limit` in flight when limit > 0). */
static nnp_status run_phase(run_ctx *x, int first, int count, int limit, const double *arrivals) {
  int next = 0, done = 0, inflight = 0;
  double t0 = now_s();
  while (done < count) {
    double t = now_s();
    if (nnp_llm_interrupted || t > x->deadline) {
      abandon(x, first, next, count, nnp_llm_interrupted ? "interrupted: stopped by a signal" : "stopped: the run hit --max-duration");
      return NNP_OK;
    }
    while (next < count && (limit <= 0 || inflight < limit)) {
      double due = arrivals ? t0 + arrivals[next] : t;
      if (due > t) break;
      NNP_TRY(launch(x, first + next, due));
      next++;
      inflight++;
    }
    scrape_start(x, t);
    int running;
    curl_multi_perform(x->multi, &running);
    int ended = collect(x);
    done += ended;
    inflight -= ended;
    if (ended) continue; /* a closed loop's stream sends its next request at once */
    double wait = 0.05;
    if (arrivals && next < count && (limit <= 0 || inflight < limit)) {
      double until = t0 + arrivals[next] - now_s();
      if (until < wait) wait = until > 0 ? until : 0;
    }
    curl_multi_poll(x->multi, NULL, 0, (int)(wait * 1000), NULL);
  }
  return NNP_OK;
}

static nnp_status run_all(run_ctx *x) {
  const nnp_llm_load_plan *p = x->p;
  int w = p->warmup_requests, n = p->num_requests;
  int limit = p->concurrency > 0 ? p->concurrency : p->max_concurrency;
  for (int i = 0; i < w; i++) x->out->reqs[i].warmup = true;
  /* warm-ups: closed loop at the run's concurrency (open loop: its cap, else 1) */
  NNP_TRY(run_phase(x, 0, w, limit > 0 ? limit : 1, NULL));
  if (p->concurrency > 0) return run_phase(x, w, n, p->concurrency, NULL);
  double *arr = nnp_malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
  if (!arr) return nnp_error(NNP_ERR_NOMEM, "out of memory for the arrival schedule");
  nnp_llm_arrivals(p->rate, p->burstiness, n, p->seed, arr);
  x->out->t_start = now_s();
  nnp_status st = run_phase(x, w, n, p->max_concurrency, arr);
  nnp_free(arr);
  return st;
}

static nnp_status check_plan(const nnp_llm_endpoint *e, const nnp_llm_load_plan *p) {
  if (p->num_requests < 1 || p->num_requests > 1000000 || p->warmup_requests < 0 || p->warmup_requests > 100000)
    return nnp_error(NNP_ERR_INVALID, "llm load: --num-requests must be 1..1000000, --warmup-requests 0..100000");
  if (p->concurrency <= 0 && !(p->rate > 0))
    return nnp_error(NNP_ERR_INVALID, "llm load: give a concurrency or a request rate");
  if (!(e->timeout_s > 0)) return nnp_error(NNP_ERR_INVALID, "llm load: --timeout must be > 0");
  return NNP_OK;
}

nnp_status nnp_llm_load_run(const nnp_llm_endpoint *e, const nnp_llm_load_plan *p, nnp_llm_load_out *out) {
  memset(out, 0, sizeof *out);
  NNP_TRY(check_plan(e, p));
  NNP_TRY(nnp_llm_client_global_init());
  int total = p->warmup_requests + p->num_requests;
  run_ctx x = {.e = e, .p = p, .out = out};
  x.n_calls = p->concurrency > 0 ? p->concurrency : p->max_concurrency > 0 ? p->max_concurrency : p->num_requests;
  if (x.n_calls < 1) x.n_calls = 1;
  out->reqs = nnp_calloc((size_t)total, sizeof *out->reqs);
  out->timings = nnp_calloc((size_t)total, sizeof *out->timings);
  x.calls = nnp_calloc((size_t)x.n_calls, sizeof *x.calls);
  x.sc.buf = p->metrics_interval_s > 0 ? nnp_malloc(SCRAPE_MAX) : NULL;
  x.multi = curl_multi_init();
  nnp_status st = NNP_OK;
  if (!out->reqs || !out->timings || !x.calls || !x.multi || (p->metrics_interval_s > 0 && !x.sc.buf)) {
    st = nnp_error(NNP_ERR_NOMEM, "out of memory for %d requests", total);
  } else {
    out->n = total;
    snprintf(x.sc.url, sizeof x.sc.url, "%s/metrics", e->base_url);
    x.sc.interval = p->metrics_interval_s;
    x.deadline = now_s() + (p->max_duration_s > 0 ? p->max_duration_s : 1e18);
    out->t_start = now_s();
    st = run_all(&x);
    for (int k = 0; k < x.n_calls; k++)
      if (x.calls[k].used) release(&x, &x.calls[k]);
    if (x.sc.easy) scrape_done(&x, CURLE_ABORTED_BY_CALLBACK);
  }
  for (int i = 0; i < out->n; i++)
    if (out->reqs[i].n_tokens > 0 && (out->t_first_token == 0 || out->reqs[i].token_t[0] < out->t_first_token))
      out->t_first_token = out->reqs[i].token_t[0];
  if (x.multi) curl_multi_cleanup(x.multi);
  nnp_free(x.calls);
  nnp_free(x.sc.buf);
  return st;
}

void nnp_llm_load_out_free(nnp_llm_load_out *o) {
  if (!o) return;
  for (int i = 0; o->reqs && i < o->n; i++) nnp_llm_request_free(&o->reqs[i]);
  nnp_free(o->reqs);
  nnp_free(o->timings);
  memset(o, 0, sizeof *o);
}

typedef struct get_buf {
  char *p;
  size_t len, max;
} get_buf;

static size_t on_get(char *ptr, size_t size, size_t nmemb, void *userdata) {
  get_buf *b = userdata;
  size_t n = size * nmemb;
  if (b->len + n >= b->max) return 0;
  memcpy(b->p + b->len, ptr, n);
  b->len += n;
  b->p[b->len] = '\0';
  return n;
}

nnp_status nnp_llm_http_get(const char *base_url, const char *path, const char *api_key, double timeout_s,
                            size_t max_bytes, long *http_code, char **body) {
  NNP_TRY(nnp_llm_client_global_init());
  *body = NULL;
  *http_code = 0;
  get_buf b = {nnp_malloc(max_bytes + 1), 0, max_bytes + 1};
  CURL *h = curl_easy_init();
  char url[400], auth[600], err[CURL_ERROR_SIZE] = "";
  struct curl_slist *hdrs = NULL;
  if (api_key && *api_key) {
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", api_key);
    hdrs = curl_slist_append(NULL, auth);
  }
  if (!b.p || !h) {
    nnp_free(b.p);
    curl_easy_cleanup(h);
    curl_slist_free_all(hdrs);
    return nnp_error(NNP_ERR_NOMEM, "libcurl: out of memory");
  }
  b.p[0] = '\0';
  snprintf(url, sizeof url, "%s%s", base_url, path);
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_get);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, err);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(timeout_s * 1000));
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  CURLcode rc = curl_easy_perform(h);
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, http_code);
  curl_easy_cleanup(h);
  curl_slist_free_all(hdrs);
  if (rc != CURLE_OK) {
    nnp_free(b.p);
    return nnp_error(NNP_ERR_IO, "GET %s: %s", url, err[0] ? err : curl_easy_strerror(rc));
  }
  *body = b.p;
  return NNP_OK;
}
