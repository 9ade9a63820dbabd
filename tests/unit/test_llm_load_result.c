/* The llm load result document (kind "llm-load"): one writer (src/llm/llm_load_json.c),
 * one reader (src/result/result_read_llm_load.c). A result with every field set reads
 * back into the same values, each row's requests with their token times, written again
 * it is byte-identical; malformed documents fail naming the field; and the --repack
 * decision (src/llm/llm_repack.c) on a CPU with and without AMX. */
#include <string.h>

#include "llm/llm_load_result.h"
#include "llm/llm_repack.h"
#include "nnperf/alloc.h"
#include "nnperf/result.h"
#include "test.h"

/* n requests, 1 warm-up first, gen tokens each 20 ms apart after a TTFT that grows with i;
 * request fail_at (if >= 0) failed after 2 tokens. */
static nnp_llm_request *make_requests(int n, int gen, double t0, int fail_at) {
  nnp_llm_request *q = nnp_calloc((size_t)n, sizeof *q);
  for (int i = 0; i < n; i++) {
    q[i].id = 100 + i;
    q[i].warmup = i == 0;
    q[i].prompt_tokens = 16;
    q[i].t_due = t0 + i * 0.5;
    q[i].t_sent = q[i].t_due + 0.001;
    int k_max = i == fail_at ? 2 : gen;
    for (int k = 0; k < k_max; k++) CHECK_OK(nnp_llm_request_add_token(&q[i], q[i].t_sent + 0.05 + 0.001 * i + 0.02 * k));
    q[i].t_done = q[i].token_t[q[i].n_tokens - 1] + 0.0005;
    q[i].ok = i != fail_at;
    if (i == fail_at) snprintf(q[i].error, sizeof q[i].error, "cut-short: stream closed after 2 tokens");
  }
  return q;
}

static void make_row(nnp_llm_load_row *w, const char *label, const char *scenario, int conc, int fail_at) {
  memset(w, 0, sizeof *w);
  snprintf(w->label, sizeof w->label, "%s", label);
  snprintf(w->scenario, sizeof w->scenario, "%s", scenario);
  w->concurrency = conc;
  w->rate = conc ? 0 : 2.5;
  w->burstiness = 1;
  w->slots = 4, w->cont_batching = 1, w->cache_prompt = -1;
  snprintf(w->kv_type, sizeof w->kv_type, "f16");
  snprintf(w->repack, sizeof w->repack, "on");
  snprintf(w->server_args, sizeof w->server_args, "-m m.gguf --repack --metrics");
  snprintf(w->note, sizeof w->note, "repack on (auto): the CPU has no AMX");
  w->load_s = conc == 1 ? 0.25 : -1;
  w->cold_start_s = conc == 1 ? 0.5 : -1;
  w->reqs = make_requests(9, 8, 1000.123456789, fail_at);
  w->n_reqs = 9;
  nnp_llm_load_out o = {.reqs = w->reqs, .n = w->n_reqs};
  nnp_llm_slo slo = {.ttft_s = 0.052, .tpot_s = 0};
  CHECK_OK(nnp_llm_load_row_fill(w, &o, &slo, 7));
  w->gauges.samples = conc == 1 ? 3 : 0;
  w->gauges.processing_max = 1, w->gauges.processing_mean = 0.75, w->gauges.busy_slots_per_decode = 1.25;
  w->gauges.kv_usage_max = -1, w->gauges.prompt_cached_tokens = 32;
  w->n_timed = 4, w->server_ttft_s = 0.04, w->client_ttft_s = 0.051;
  w->server_decode_tok_s = 51.5, w->client_decode_tok_s = 49.75;
  w->slo_passed = !strcmp(scenario, "probe");
}

static void make_result(nnp_bench_result *b) {
  memset(b, 0, sizeof *b);
  nnp_llm_load_result *l = b->llm_load = nnp_calloc(1, sizeof *b->llm_load);
  snprintf(l->command_line, sizeof l->command_line, "nnperf llm load --concurrency 1,4");
  snprintf(l->model, sizeof l->model, "/models/tiny \"q\".gguf");
  snprintf(l->weight_type, sizeof l->weight_type, "Q4_0");
  snprintf(l->backend, sizeof l->backend, "llama-server");
  snprintf(l->api, sizeof l->api, "completions");
  snprintf(l->nnperf_version, sizeof l->nnperf_version, "0.1.0");
  snprintf(l->prompt_len, sizeof l->prompt_len, "uniform:8:16");
  snprintf(l->gen_len, sizeof l->gen_len, "8");
  l->threads = 2, l->num_requests = 8, l->warmup_requests = -1, l->n_vocab = 49152, l->timeout_s = 30;
  l->seed = 42, l->slo.ttft_s = 0.052, l->slo_percentile = 90, l->max_rate = 2.5;
  nnp_env_capture(&l->env);
  l->rows = nnp_calloc(3, sizeof *l->rows);
  l->n_rows = 3;
  make_row(&l->rows[0], "concurrency 1", "closed", 1, -1);
  make_row(&l->rows[1], "concurrency 4", "closed", 4, 5);
  make_row(&l->rows[2], "probe 2.5/s", "probe", 0, -1);
  snprintf(b->model, sizeof b->model, "%s", l->model);
  snprintf(b->command_line, sizeof b->command_line, "%s", l->command_line);
  snprintf(b->nnperf_version, sizeof b->nnperf_version, "%s", l->nnperf_version);
  b->env = l->env, b->seed = l->seed;
  CHECK_OK(nnp_llm_load_mirror(b));
}

static char *to_json(const nnp_bench_result *r, size_t *len) {
  char *buf = NULL;
  FILE *f = open_memstream(&buf, len);
  nnp_result_write(f, r);
  fclose(f);
  return buf;
}

static void test_round_trip(void) {
  nnp_bench_result a, b;
  make_result(&a);
  size_t n1 = 0, n2 = 0;
  char *j1 = to_json(&a, &n1);
  CHECK(strstr(j1, "\"kind\": \"llm-load\"") != NULL);
  CHECK_OK(nnp_result_read_buffer(j1, n1, "a.json", &b));
  CHECK(!strcmp(nnp_result_kind(&b), "llm-load"));
  const nnp_llm_load_result *l = b.llm_load;
  CHECK(l != NULL && l->n_rows == 3);
  if (!l || l->n_rows != 3) return;
  CHECK(!strcmp(l->weight_type, "Q4_0") && !strcmp(l->model, a.llm_load->model) && l->seed == 42);
  CHECK(l->slo_percentile == 90 && l->max_rate == 2.5 && l->warmup_requests == -1);
  for (int i = 0; i < 3; i++) {
    const nnp_llm_load_row *x = &a.llm_load->rows[i], *y = &l->rows[i];
    CHECK(!strcmp(x->repack, y->repack) && !strcmp(x->note, y->note) && !strcmp(x->server_args, y->server_args));
    CHECK(y->n_reqs == 9);
    if (y->n_reqs != 9) continue;
    CHECK(y->reqs[0].warmup && !y->reqs[1].warmup);
    CHECK(y->m.n_ok == x->m.n_ok && y->m.n_failed == x->m.n_failed && y->n_causes == x->n_causes);
    CHECK_NEAR(y->m.ttft.p50, x->m.ttft.p50, 1e-10);
    CHECK_NEAR(y->m.tpot.p99, x->m.tpot.p99, 1e-10); /* written with 9 significant digits */
    CHECK(y->reqs[3].n_tokens == x->reqs[3].n_tokens);
    CHECK_NEAR(y->reqs[3].token_t[7] - y->reqs[3].t_sent, x->reqs[3].token_t[7] - x->reqs[3].t_sent, 1e-6);
    CHECK(b.rows[i].status == NNP_ROW_OK && !strcmp(b.rows[i].label, x->label)); /* the mirror */
  }
  CHECK(l->rows[1].m.n_failed == 1 && !strcmp(l->rows[1].causes[0].cause, "cut-short"));
  CHECK(l->rows[0].load_s == 0.25 && l->rows[1].load_s == -1 && l->rows[2].slo_passed == 1);
  CHECK(b.n_rows == 3 && b.rows[1].batch == 4 && b.rows[2].batch == 0);
  char *j2 = to_json(&b, &n2);
  CHECK_MSG(n1 == n2 && !memcmp(j1, j2, n1), "written again, the document differs (%zu vs %zu bytes)", n1, n2);
  free(j1);
  free(j2);
  nnp_bench_result_free(&a);
  nnp_bench_result_free(&b);
}

/* A document with one field replaced: the read fails and the message names the field. */
static void expect_bad(const char *doc, const char *from, const char *to, const char *field) {
  char *bad = nnp_malloc(strlen(doc) + strlen(to) + 1);
  const char *at = strstr(doc, from);
  CHECK_MSG(at != NULL, "'%s' not in the document", from);
  if (!at) return;
  size_t pre = (size_t)(at - doc);
  memcpy(bad, doc, pre);
  strcpy(bad + pre, to);
  strcat(bad, at + strlen(from));
  nnp_bench_result r;
  nnp_status s = nnp_result_read_buffer(bad, strlen(bad), "bad.json", &r);
  CHECK_MSG(s != NNP_OK && strstr(nnp_last_error(), field), "%s -> %s: %s", from, to, nnp_last_error());
  if (s == NNP_OK) nnp_bench_result_free(&r);
  nnp_free(bad);
}

static void test_malformed(void) {
  nnp_bench_result a;
  make_result(&a);
  size_t n = 0;
  char *j = to_json(&a, &n);
  expect_bad(j, "\"scenario\": \"closed\"", "\"scenario\": \"sideways\"", "rows[0].scenario: 'sideways'");
  expect_bad(j, "\"token_t\": [", "\"token_t\": [\"x\", ", "rows[0].requests[0].token_t");
  expect_bad(j, "\"backend\": \"llama-server\"", "\"backend\": 7", "backend");
  expect_bad(j, "\"ttft\": {\"n\": 8", "\"ttft\": {\"n\": \"8\"", "rows[0].latency.ttft.n");
  expect_bad(j, "\"failures\": []", "\"failures\": [1]", "rows[0].failures");
  expect_bad(j, "\"rows\": [", "\"rows\": {\"a\": 1}, \"x\": [", "rows: missing or not an array");
  free(j);
  nnp_bench_result_free(&a);
}

static void test_repack_decision(void) {
  char why[160];
  int on = -1;
  CHECK_OK(nnp_llm_repack_decide("auto", false, &on, why, sizeof why));
  CHECK(on == 1 && strstr(why, "no AMX"));
  CHECK_OK(nnp_llm_repack_decide(NULL, true, &on, why, sizeof why));
  CHECK(on == 0 && strstr(why, "AMX") && strstr(why, "20824"));
  CHECK_OK(nnp_llm_repack_decide("on", true, &on, why, sizeof why));
  CHECK(on == 1);
  CHECK_OK(nnp_llm_repack_decide("off", false, &on, why, sizeof why));
  CHECK(on == 0 && strstr(why, "--repack off"));
  CHECK(nnp_llm_repack_decide("yes", false, &on, why, sizeof why) == NNP_ERR_INVALID);
  CHECK(strstr(nnp_last_error(), "'yes'") != NULL);
}

int main(void) {
  test_round_trip();
  test_malformed();
  test_repack_decision();
  TEST_MAIN_END();
}
