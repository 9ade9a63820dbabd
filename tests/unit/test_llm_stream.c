/* nnperf llm load's stream reader, arrivals and lengths: the SSE framing (CRLF, split
 * reads, multi-line data, comments), token counting with usage's surplus, the bounds, and
 * the seeded workload draws. */
#include <string.h>

#include "llm/llm_client.h"
#include "llm/llm_metrics_scrape.h"
#include "llm/llm_workload.h"
#include "llm/oai_stream.h"
#include "test.h"

/* Feeds text in pieces of `step` bytes at times 1, 2, 3, ... */
static int feed(nnp_oai_stream *s, const char *text, size_t step) {
  size_t n = strlen(text);
  double t = 1;
  for (size_t off = 0; off < n; off += step, t += 1)
    if (nnp_oai_stream_feed(s, text + off, n - off < step ? n - off : step, t)) return -1;
  return nnp_oai_stream_finish(s);
}

static void test_tokens_and_usage(void) {
  const char *body = "data: {\"choices\":[{\"text\":\"a\",\"finish_reason\":null}]}\r\n\r\n"
                     ": keep-alive comment\n"
                     "data: {\"choices\":[{\"text\":\"\",\"finish_reason\":null}]}\n\n"
                     "data: {\"choices\":[{\"text\":\"b\",\"finish_reason\":\"length\"}],"
                     "\"timings\":{\"prompt_n\":8,\"prompt_ms\":4,\"predicted_n\":5,\"predicted_ms\":20}}\n\n"
                     "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":5}}\n\n"
                     "data: [DONE]\n\n";
  for (size_t step = 1; step <= 64; step *= 4) {
    nnp_llm_request r = {0};
    nnp_oai_stream s;
    nnp_oai_stream_init(&s, &r);
    CHECK(feed(&s, body, step) == 0);
    /* 2 chunks with text + 1 empty chunk + 2 more from usage = 5 tokens */
    CHECK_MSG(r.n_tokens == 5, "step %zu: %d tokens", step, r.n_tokens);
    for (int i = 1; i < r.n_tokens; i++) CHECK(r.token_t[i] >= r.token_t[i - 1]);
    CHECK(s.done && s.finished && r.prompt_tokens == 8);
    CHECK(s.timings.valid && s.timings.predicted_n == 5 && s.timings.prompt_ms == 4);
    nnp_oai_stream_free(&s);
    nnp_llm_request_free(&r);
  }
}

static void test_malformed(void) {
  const char *bad[] = {"data: {nope\n\n", "data: [1,2]\n\n", "data: {\"choices\": 3}\n\n",
                       "data: {\"error\":{\"message\":\"overloaded\"}}\n\n"};
  const char *why[] = {"malformed event", "malformed event", "malformed event", "server error: overloaded"};
  for (int k = 0; k < 4; k++) {
    nnp_llm_request r = {0};
    nnp_oai_stream s;
    nnp_oai_stream_init(&s, &r);
    CHECK(feed(&s, bad[k], 7) == -1);
    CHECK_MSG(strstr(s.sse.why, why[k]) != NULL, "%s -> %s", bad[k], s.sse.why);
    nnp_oai_stream_free(&s);
    nnp_llm_request_free(&r);
  }
  /* a line over the bound fails instead of growing */
  static char big[NNP_SSE_MAX_LINE + 100];
  memset(big, 'x', sizeof big - 1);
  nnp_llm_request r = {0};
  nnp_oai_stream s;
  nnp_oai_stream_init(&s, &r);
  CHECK(nnp_oai_stream_feed(&s, big, sizeof big - 1, 1) == -1 && strstr(s.sse.why, "longer than 64 KiB"));
  nnp_oai_stream_free(&s);
}

static void test_workload(void) {
  double a[2000], b[2000];
  nnp_llm_arrivals(4.0, 1.0, 2000, 7, a);
  nnp_llm_arrivals(4.0, 1.0, 2000, 7, b);
  CHECK(memcmp(a, b, sizeof a) == 0);                       /* seeded: repeatable */
  CHECK_MSG(a[1999] > 450 && a[1999] < 550, "2000 Poisson arrivals at 4/s end at %g s", a[1999]);
  nnp_llm_arrivals(4.0, 0.25, 2000, 7, b);                  /* burstier, same mean rate */
  CHECK_MSG(b[1999] > 400 && b[1999] < 600, "gamma 0.25 ends at %g s", b[1999]);
  nnp_len_dist d;
  CHECK(nnp_len_dist_parse("uniform:10:20", "--prompt-len", &d) == NNP_OK);
  int lo = 99, hi = 0;
  for (int i = 0; i < 500; i++) {
    int x = nnp_len_dist_draw(&d, 3, i);
    lo = x < lo ? x : lo;
    hi = x > hi ? x : hi;
  }
  CHECK_MSG(lo == 10 && hi == 20, "uniform:10:20 drew %d..%d", lo, hi);
  CHECK(nnp_len_dist_parse("0", "--gen-len", &d) != NNP_OK);
  CHECK(nnp_len_dist_parse("uniform:5:2", "--gen-len", &d) != NNP_OK);
}

/* llama-server's busy-slots-per-decode is an average since the server started: a row that
 * follows a concurrency-1 row on the same server must get its own share (4 slots), not the
 * mixed average (2.0) the raw gauge reports. */
static void test_gauges_per_row(void) {
  nnp_llm_server_gauges g;
  memset(&g, 0, sizeof g);
  const char *first = "# HELP x\nllamacpp:requests_processing 0\nllamacpp:n_decode_total 100\n"
                      "llamacpp:n_busy_slots_per_decode 1\nllamacpp:prompt_tokens_cached_total 7\n";
  const char *last = "llamacpp:requests_processing 4\nllamacpp:n_decode_total 150\n"
                     "llamacpp:n_busy_slots_per_decode 2\nllamacpp:prompt_tokens_cached_total 19\n";
  nnp_llm_gauges_add(&g, first, strlen(first));
  CHECK(g.busy_slots_per_decode < 0); /* no decode yet in this row */
  nnp_llm_gauges_add(&g, last, strlen(last));
  CHECK_NEAR(g.busy_slots_per_decode, 4.0, 1e-9);
  CHECK_NEAR(g.prompt_cached_tokens, 12.0, 1e-9);
  CHECK(g.samples == 2 && g.processing_max == 4);
}

int main(void) {
  test_gauges_per_row();
  test_tokens_and_usage();
  test_malformed();
  test_workload();
  TEST_MAIN_END();
}
