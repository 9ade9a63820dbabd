/* The result JSON reader: a written result reads back into the same structs (written
 * again it is byte-identical), and malformed documents fail with a message naming the
 * field at fault. */
#include <string.h>

#include "nnperf/alloc.h"
#include "nnperf/report.h"
#include "nnperf/result_load.h"
#include "test.h"

static void set_str(char *dst, size_t cap, const char *s) { snprintf(dst, cap, "%s", s); }

static void make_row(nnp_bench_row *w, const char *label, nnp_row_status st, int n, int procs) {
  memset(w, 0, sizeof *w);
  set_str(w->backend, sizeof w->backend, "native");
  set_str(w->backend_version, sizeof w->backend_version, "nnperf 0.1.0");
  set_str(w->label, sizeof w->label, label);
  set_str(w->scenario, sizeof w->scenario, "static:1x3x8x8");
  w->precision = NNP_FP32;
  w->threads = 1;
  w->batch = 2;
  w->status = st;
  w->spawn_to_ready_s = w->parse_s = w->compile_s = w->load_s = w->first_s = w->cold_start_s = -1;
  w->acc.top1 = w->acc.top5 = -1;
  if (st != NNP_ROW_OK) {
    set_str(w->reason, sizeof w->reason, "worker died: \"SIGSEGV\"\n\tat x");
    w->exit_status = -1;
    w->term_signal = 11;
    return;
  }
  w->parse_s = 0.001;
  w->compile_s = 0.002;
  w->load_s = 0.003;
  w->first_s = 0.0041;
  w->cold_start_s = 0.05;
  w->warmup_iterations = 20;
  w->warmup_stable = true;
  w->samples = nnp_malloc((size_t)n * sizeof *w->samples);
  CHECK(w->samples != NULL);
  w->n_samples = n;
  for (int i = 0; i < n; i++) w->samples[i] = 1e-3 * (1.0 + 0.01 * ((i * 37) % 11));
  w->n_processes = procs;
  for (int p = 0; p < procs; p++) w->process_samples[p] = n / procs + (p < n % procs);
  CHECK_OK(nnp_stats_compute_grouped(w->samples, n, w->process_samples, procs, 7, &w->stats));
  w->items_per_s = 2 / w->stats.p50;
  w->measured_items_per_s = 1900.5;
  w->peak_rss_bytes = (int64_t)150 << 20;
  w->vmhwm_bytes = 12345678901LL;
  w->acc.compared = true;
  set_str(w->acc.reference, sizeof w->acc.reference, "native fp32 t1 b2");
  w->acc.max_abs = 1e-7;
  w->acc.max_rel = 2e-7;
  w->acc.cosine = 1;
  w->acc.within_tol = true;
  set_str(w->acc.criterion, sizeof w->acc.criterion, "max_rel <= 1e-04");
}

static char *to_json(const nnp_bench_result *r, size_t *len) {
  char *buf = NULL;
  FILE *f = open_memstream(&buf, len);
  nnp_report_json(f, r);
  fclose(f);
  return buf;
}

static void test_round_trip(void) {
  nnp_bench_result r;
  memset(&r, 0, sizeof r);
  set_str(r.model, sizeof r.model, "models/a \"b\".onnx");
  set_str(r.nnperf_version, sizeof r.nnperf_version, "0.1.0");
  set_str(r.command_line, sizeof r.command_line, "nnperf bench x");
  nnp_env_capture(&r.env);
  nnp_loop_spec_default(&r.loop);
  r.seed = 123456789012345ULL;
  r.accuracy_rtol = 1e-4;
  r.noisy = true;
  r.n_rows = r.cap_rows = 3;
  r.rows = nnp_calloc(3, sizeof *r.rows);
  make_row(&r.rows[0], "native fp32 t1 b2", NNP_ROW_OK, 301, 3);
  make_row(&r.rows[1], "fault fp32 t1 b2", NNP_ROW_CRASHED, 0, 0);
  make_row(&r.rows[2], "native fp32 t1 b2 #2", NNP_ROW_OK, 50, 1);
  r.rows[2].acc.compared = false;
  { /* schema minor 4: footprint, energy, device, extra phases survive the round trip */
    nnp_row_extras *x = &r.rows[0].ext;
    x->runtime_bytes = 3730546880LL, x->runtime_files = 2931, x->model_bytes = 34517;
    x->energy_j = 0.0125, x->dev_alloc_peak = 1 << 20, x->dev_reserved_peak = 2 << 20, x->dev_process_bytes = -1;
    snprintf(x->energy_source, sizeof x->energy_source, "rapl: package-0");
    snprintf(x->device, sizeof x->device, "cuda:0");
    x->n_phases = 1;
    snprintf(x->phase_name[0], sizeof x->phase_name[0], "cuda_context");
    x->phase_s[0] = 0.25;
    x->realistic = true;
    r.rows[1].ext.energy_j = -1, r.rows[1].ext.runtime_bytes = -1; /* unmeasured: null, read back as -1 */
  }
  size_t n1 = 0, n2 = 0;
  char *j1 = to_json(&r, &n1);
  nnp_bench_result back;
  CHECK_OK(nnp_result_load_buffer(j1, n1, "mem", &back));
  CHECK(back.n_rows == 3);
  if (back.n_rows == 3) {
    CHECK(back.rows[0].n_samples == 301 && back.rows[0].n_processes == 3);
    CHECK_NEAR(back.rows[0].samples[5], r.rows[0].samples[5], 1e-14); /* %.9g */
    CHECK_NEAR(back.rows[0].stats.p50, r.rows[0].stats.p50, 1e-14);
    CHECK(back.rows[0].vmhwm_bytes == 12345678901LL);
    CHECK(back.rows[1].status == NNP_ROW_CRASHED && back.rows[1].term_signal == 11);
    CHECK(back.rows[1].first_s < 0 && back.rows[1].stats.n == 0);
    CHECK(!strcmp(back.rows[1].reason, r.rows[1].reason));
    CHECK(back.seed == r.seed && back.noisy);
    CHECK(!strcmp(back.rows[0].acc.criterion, "max_rel <= 1e-04")); /* what within_tol judged */
    CHECK(!strcmp(back.env.timestamp, r.env.timestamp));
    const nnp_row_extras *x = &back.rows[0].ext;
    CHECK(x->runtime_bytes == 3730546880LL && x->runtime_files == 2931 && x->model_bytes == 34517);
    CHECK_NEAR(x->energy_j, 0.0125, 1e-12);
    CHECK(!strcmp(x->energy_source, "rapl: package-0") && !strcmp(x->device, "cuda:0") && x->realistic);
    CHECK(x->dev_alloc_peak == 1 << 20 && x->dev_reserved_peak == 2 << 20 && x->dev_process_bytes == -1);
    CHECK(x->n_phases == 1 && !strcmp(x->phase_name[0], "cuda_context") && x->phase_s[0] == 0.25);
    CHECK(back.rows[1].ext.energy_j < 0 && back.rows[1].ext.runtime_bytes == -1);
    char *j2 = to_json(&back, &n2);
    CHECK_MSG(n1 == n2 && !memcmp(j1, j2, n1), "written again, the JSON differs (%zu vs %zu bytes)", n1, n2);
    free(j2);
  }
  nnp_bench_result_free(&back);
  nnp_bench_result_free(&r);
  free(j1);
}

/* Each malformed document must fail, and its message must contain `want`. */
static void expect_error(const char *doc, const char *want) {
  nnp_bench_result r;
  nnp_status s = nnp_result_load_buffer(doc, strlen(doc), "t.json", &r);
  CHECK_MSG(s != NNP_OK, "accepted: %s", doc);
  CHECK_MSG(strstr(nnp_last_error(), want) != NULL, "error '%s' does not say '%s'", nnp_last_error(), want);
  CHECK(r.rows == NULL && r.n_rows == 0);
}

#define HEAD "{\"schema_version\": 1, \"tool\": \"nnperf\", "

static void test_malformed(void) {
  expect_error("", "not valid JSON");
  expect_error("{\"schema_version\": 1, ", "not valid JSON at line 1");
  expect_error("[1,2]", "expected an object");
  expect_error("{\"rows\": []}", "schema_version: missing");
  expect_error("{\"schema_version\": 2, \"tool\": \"nnperf\", \"rows\": []}", "schema_version 2");
  expect_error("{\"schema_version\": 1, \"tool\": \"other\", \"rows\": []}", "tool");
  expect_error(HEAD "\"rows\": {}}", "rows: missing or not an array");
  expect_error(HEAD "\"seed\": -1, \"rows\": []}", "seed");
  expect_error(HEAD "\"env\": {\"cpus_online\": \"2\"}, \"rows\": []}", "env.cpus_online: expected an integer");
  expect_error(HEAD "\"rows\": [{\"label\": \"a\"}]}", "rows[0].status: missing");
  expect_error(HEAD "\"rows\": [{\"status\": \"great\"}]}", "rows[0].status: unknown status 'great'");
  expect_error(HEAD "\"rows\": [{\"status\": \"ok\", \"precision\": \"fp64\"}]}", "rows[0].precision");
  expect_error(HEAD "\"rows\": [{\"status\": \"ok\", \"stats\": {\"p50\": \"1\"}}]}", "rows[0].stats.p50: expected a number");
  expect_error(HEAD "\"rows\": [{\"status\": \"ok\", \"samples_s\": [0.1, null]}]}", "rows[0].samples_s: element 1");
  expect_error(HEAD "\"rows\": [{\"status\": \"ok\", \"samples_s\": [0.1, -2]}]}", "element 1");
  expect_error(HEAD "\"rows\": [{\"status\": \"ok\", \"stats\": {\"n\": 3}, \"samples_s\": [0.1]}]}", "stats.n");
  expect_error(HEAD "\"rows\": [{\"status\": \"ok\", \"processes\": 2, \"process_samples\": [1, 1], \"samples_s\": [0.1]}]}",
               "process_samples: counts add up to 2");
  expect_error(HEAD "\"rows\": [{\"status\": \"ok\", \"processes\": 99}]}", "rows[0].processes");
  expect_error(HEAD "\"rows\": [{\"status\": \"ok\", \"stats\": {\"p50_ci\": [1]}}]}", "p50_ci");
  expect_error(HEAD "\"rows\": [], \"rows\": []}", "duplicate");
  expect_error(HEAD "\"rows\": [{\"status\": \"ok\"}, 5]}", "rows[1]");
}

static void test_minimal_and_file(void) {
  const char *doc = HEAD "\"future_field\": {\"x\": 1}, \"rows\": [{\"status\": \"unavailable\", \"reason\": \"no\"}]}";
  nnp_bench_result r;
  CHECK_OK(nnp_result_load_buffer(doc, strlen(doc), "min", &r));
  CHECK(r.n_rows == 1 && r.rows[0].status == NNP_ROW_UNAVAILABLE && r.rows[0].first_s < 0);
  nnp_bench_result_free(&r);
  CHECK(nnp_result_load_file("/nonexistent/r.json", &r) == NNP_ERR_IO);
  CHECK(strstr(nnp_last_error(), "/nonexistent/r.json") != NULL);
}

/* Every allocation the reader makes can fail: it then reports NNP_ERR_NOMEM and leaves
 * nothing behind (ASan's leak check in the sanitizer build). */
static void test_alloc_failure(void) {
  const char *doc = HEAD "\"rows\": [{\"status\": \"ok\", \"processes\": 1, \"process_samples\": [2], "
                         "\"samples_s\": [0.1, 0.2]}, {\"status\": \"ok\", \"samples_s\": [0.3]}]}";
  int saw_nomem = 0;
  for (long k = 1; k < 10; k++) {
    nnp_bench_result r;
    nnp_alloc_fail_after(k);
    nnp_status s = nnp_result_load_buffer(doc, strlen(doc), "t.json", &r);
    nnp_alloc_fail_after(0);
    if (s == NNP_OK) {
      CHECK(r.n_rows == 2 && r.rows[1].n_samples == 1);
      nnp_bench_result_free(&r);
      break;
    }
    saw_nomem++;
    CHECK_MSG(s == NNP_ERR_NOMEM, "allocation %ld failing gave %s: %s", k, nnp_status_name(s), nnp_last_error());
    CHECK(r.rows == NULL);
  }
  CHECK(saw_nomem == 3); /* rows, samples of row 0, samples of row 1 */
}

/* A load result: the configuration row plus the load section with its runs, their
 * latency samples and the workers' start-up; read back it writes out identically. */
static void test_load_round_trip(void) {
  nnp_bench_result r;
  memset(&r, 0, sizeof r);
  set_str(r.model, sizeof r.model, "zoo:tiny");
  set_str(r.nnperf_version, sizeof r.nnperf_version, "0.1.0");
  set_str(r.command_line, sizeof r.command_line, "nnperf load zoo:tiny --sweep");
  nnp_env_capture(&r.env);
  nnp_loop_spec_default(&r.loop);
  r.seed = 7;
  r.accuracy_rtol = -1;
  r.n_rows = r.cap_rows = 1;
  r.rows = nnp_calloc(1, sizeof *r.rows);
  make_row(&r.rows[0], "native fp32 t1 b1", NNP_ROW_OK, 1, 1); /* then without samples: a load row has none */
  nnp_free(r.rows[0].samples);
  r.rows[0].samples = NULL;
  r.rows[0].n_samples = r.rows[0].n_processes = 0;
  memset(&r.rows[0].stats, 0, sizeof r.rows[0].stats);
  r.rows[0].items_per_s = r.rows[0].measured_items_per_s = 0;
  r.rows[0].acc.compared = false;
  nnp_load_section *l = r.load = nnp_calloc(1, sizeof *l);
  set_str(l->scenario, sizeof l->scenario, "server");
  l->seed = 7, l->duration_s = 2, l->max_batch = 8, l->streams = 2, l->interval_s = 0.05, l->instances = 2;
  set_str(l->backend_options, sizeof l->backend_options, "mode=none,sleep_ms=5");
  l->qps = -1, l->latency_bound_s = 0.01, l->capacity_qps = 190.5, l->max_qps = 150.25;
  l->n_runs = 3;
  l->runs = nnp_calloc(3, sizeof *l->runs);
  const char *purposes[] = {"capacity", "sweep", "sweep"};
  for (int i = 0; i < 3; i++) {
    nnp_load_run_record *u = &l->runs[i];
    set_str(u->purpose, sizeof u->purpose, purposes[i]);
    u->target_qps = i ? 19.05 * i : -1;
    u->seed = 7;
    u->passed = i < 2;
    u->queries = 1200 * i + 5;
    u->completed = i == 2 ? u->queries - 3 : u->queries;
    u->dropped = u->queries - u->completed;
    u->late = i;
    u->offered_qps = 20.0 * i, u->achieved_qps = 19.5 * i + 1, u->span_s = 2.1;
    u->p50_s = 0.005 * (i + 1), u->p90_s = 0.006 * (i + 1), u->p99_s = 0.008 * (i + 1), u->p999_s = 0.009 * (i + 1);
    u->mean_s = 0.0055 * (i + 1), u->max_s = 0.01 * (i + 1);
    u->samples_total = u->completed;
    u->n_samples = (int)(u->completed < NNP_LOAD_RESERVOIR ? u->completed : NNP_LOAD_RESERVOIR);
    u->samples_s = nnp_malloc(sizeof(double) * (size_t)u->n_samples);
    for (int k = 0; k < u->n_samples; k++) u->samples_s[k] = 0.005 + 1e-6 * ((k * 37) % 101);
  }
  l->n_startup = 2;
  l->startup[0] = (nnp_load_startup){0.01, 0.02, 0.003, 0.05};
  l->startup[1] = (nnp_load_startup){0.011, -1, 0.004, 0.06};
  size_t n1 = 0, n2 = 0;
  char *j1 = to_json(&r, &n1);
  CHECK(strstr(j1, "\"kind\": \"load\"") != NULL && strstr(j1, "\"schema_minor\": 5") != NULL);
  nnp_bench_result back;
  CHECK_OK(nnp_result_load_buffer(j1, n1, "mem", &back));
  CHECK(back.load != NULL && back.coldstart == NULL && back.n_rows == 1);
  if (back.load) {
    const nnp_load_section *b = back.load;
    CHECK(!strcmp(b->scenario, "server") && b->instances == 2 && b->streams == 2 && b->n_runs == 3);
    CHECK(b->qps < 0 && b->max_qps == 150.25 && b->latency_bound_s == 0.01 && b->n_startup == 2);
    CHECK(b->startup[1].load_s < 0 && b->startup[1].cold_start_s == 0.06);
    CHECK(!strcmp(b->backend_options, "mode=none,sleep_ms=5"));
    if (b->n_runs == 3) {
      CHECK(b->runs[0].target_qps < 0 && !strcmp(b->runs[1].purpose, "sweep") && b->runs[2].dropped == 3);
      CHECK(b->runs[1].n_samples == 1000 && b->runs[0].n_samples == 5 && b->runs[2].samples_total == 2402);
      CHECK_NEAR(b->runs[1].samples_s[999], l->runs[1].samples_s[999], 1e-14);
      CHECK(b->runs[1].passed && !b->runs[2].passed);
    }
    CHECK(!strcmp(nnp_result_kind(&back), "load"));
    char *j2 = to_json(&back, &n2);
    CHECK_MSG(n1 == n2 && !memcmp(j1, j2, n1), "load result written again differs (%zu vs %zu bytes)", n1, n2);
    free(j2);
  }
  nnp_bench_result_free(&back);
  nnp_bench_result_free(&r);
  CHECK(r.load == NULL);
  free(j1);
}

/* A coldstart result with all three series (no cache, the start that filled the cache,
 * the warm cache); a phase not measured in one start is null, not 0. */
static void test_coldstart_round_trip(void) {
  nnp_bench_result r;
  memset(&r, 0, sizeof r);
  set_str(r.model, sizeof r.model, "m.onnx");
  nnp_loop_spec_default(&r.loop);
  r.n_rows = r.cap_rows = 1;
  r.rows = nnp_calloc(1, sizeof *r.rows);
  make_row(&r.rows[0], "native fp32 t1 b1", NNP_ROW_UNAVAILABLE, 0, 0);
  nnp_coldstart_section *c = r.coldstart = nnp_calloc(1, sizeof *c);
  nnp_coldstart_series *all[] = {&c->plain, &c->cold, &c->warm};
  int counts[] = {3, 1, 2};
  for (int k = 0; k < 3; k++) {
    all[k]->n = counts[k];
    all[k]->s = nnp_calloc((size_t)counts[k], sizeof *all[k]->s);
    for (int i = 0; i < counts[k]; i++) all[k]->s[i] = (nnp_coldstart_sample){0.01 * (i + 1), 0.02, 0.003, 0.04 * (i + 1)};
    snprintf(all[k]->note, sizeof all[k]->note, "series %d", k);
  }
  c->plain.s[1].load_s = -1;
  set_str(c->cache_dir, sizeof c->cache_dir, "/tmp/cache");
  size_t n1 = 0, n2 = 0;
  char *j1 = to_json(&r, &n1);
  nnp_bench_result back;
  CHECK_OK(nnp_result_load_buffer(j1, n1, "mem", &back));
  CHECK(back.coldstart != NULL && back.load == NULL);
  if (back.coldstart) {
    const nnp_coldstart_section *b = back.coldstart;
    CHECK(b->plain.n == 3 && b->cold.n == 1 && b->warm.n == 2 && !strcmp(b->cache_dir, "/tmp/cache"));
    CHECK(b->plain.s[1].load_s < 0 && !strcmp(b->warm.note, "series 2"));
    CHECK_NEAR(nnp_coldstart_quantile(&b->plain, 3, 0.5), 0.08, 1e-12);  /* nearest rank: 2nd of 3 */
    CHECK_NEAR(nnp_coldstart_quantile(&b->plain, 3, 0.99), 0.12, 1e-12);
    char *j2 = to_json(&back, &n2);
    CHECK_MSG(n1 == n2 && !memcmp(j1, j2, n1), "coldstart result written again differs (%zu vs %zu bytes)", n1, n2);
    free(j2);
  }
  nnp_bench_result_free(&back);
  nnp_bench_result_free(&r);
  free(j1);
}

/* Results written before this version still load: a bench result of schema 1.0 (the
 * fuzz corpus keeps one nnperf wrote) and a load document of 1.1, which described the
 * backend at the top level and had no rows. */
static void test_older_documents(void) {
  nnp_bench_result r;
  CHECK_OK(nnp_result_load_file("fuzz/corpus/result_load/bench.json", &r));
  CHECK(r.n_rows == 2 && r.rows[0].n_samples > 0 && r.load == NULL && r.coldstart == NULL && !strcmp(nnp_result_kind(&r), "bench"));
  nnp_bench_result_free(&r);
  const char *v11 =
      "{\"schema_version\": 1, \"schema_minor\": 1, \"tool\": \"nnperf\", \"nnperf_version\": \"0.1.0\", "
      "\"command_line\": \"nnperf load t.onnx\", \"model\": \"t.onnx\", \"backend\": \"fault\", "
      "\"backend_version\": \"nnperf 0.1.0\", \"backend_options\": \"mode=none,sleep_ms=5\", \"instances\": 2, "
      "\"threads\": 1, \"note\": \"\", \"load\": {\"scenario\": \"server\", \"seed\": 1, \"duration_s\": 0.5, "
      "\"max_queries\": 0, \"max_batch\": 8, \"streams\": 4, \"interval_s\": 0.05, \"qps\": 50, "
      "\"latency_bound_s\": null, \"capacity_qps\": null, \"max_qps\": null, \"runs\": [{\"purpose\": \"measure\", "
      "\"target_qps\": 50, \"seed\": 1, \"passed\": true, \"queries\": 25, \"completed\": 25, \"dropped\": 0, "
      "\"late\": 0, \"offered_qps\": 50.6, \"achieved_qps\": 49.8, \"span_s\": 0.502, \"p50_s\": 0.0052, "
      "\"p90_s\": 0.0061, \"p99_s\": 0.0071, \"p999_s\": 0.0071, \"mean_s\": 0.0055, \"max_s\": 0.0071}], "
      "\"startup\": [{\"spawn_to_ready_s\": 0.002, \"load_s\": 0.0004, \"first_s\": 0.006, \"cold_start_s\": 0.01}]}}";
  CHECK_OK(nnp_result_load_buffer(v11, strlen(v11), "v11", &r));
  CHECK(r.load != NULL && r.n_rows == 1);
  if (r.load && r.n_rows == 1) {
    CHECK(!strcmp(r.rows[0].backend, "fault") && r.rows[0].cold_start_s == 0.01 && r.load->instances == 2);
    CHECK(r.load->n_runs == 1 && r.load->runs[0].n_samples == 0 && r.load->runs[0].p99_s == 0.0071);
    CHECK(!strcmp(r.load->backend_options, "mode=none,sleep_ms=5"));
  }
  nnp_bench_result_free(&r);
  /* an int8 row judged before per-row criteria (max_rel <= 5e-2): no criterion, loaded
   * empty so that tables say the old rule, and its within_tol kept as written */
  const char *v12 = HEAD "\"schema_minor\": 2, \"accuracy_rtol\": -1, \"rows\": [{\"status\": \"ok\", "
                    "\"precision\": \"int8\", \"accuracy\": {\"compared\": true, \"reference\": \"native fp32 t1 b1\", "
                    "\"max_abs\": 0.4, \"max_rel\": 0.095, \"cosine\": 0.9993, \"top1\": 1, \"top5\": 1, "
                    "\"within_tol\": false}}]}";
  CHECK_OK(nnp_result_load_buffer(v12, strlen(v12), "v12", &r));
  CHECK(r.n_rows == 1 && r.rows[0].acc.compared && !r.rows[0].acc.within_tol && r.rows[0].acc.criterion[0] == 0);
  nnp_bench_result_free(&r);
  expect_error(HEAD "\"rows\": [{\"status\": \"ok\", \"accuracy\": {\"criterion\": 1}}]}",
               "rows[0].accuracy.criterion: expected a string");
  /* malformed sections name their field */
  expect_error(HEAD "\"kind\": \"serve\", \"rows\": []}", "kind: unknown kind");
  expect_error(HEAD "\"kind\": \"load\", \"rows\": []}", "load: missing");
  expect_error(HEAD "\"rows\": [], \"load\": {\"scenario\": \"server\", \"runs\": [{\"queries\": 3, \"completed\": 1}]}}",
               "load.runs[0].completed");
  expect_error(HEAD "\"rows\": [], \"load\": {\"scenario\": \"server\", \"runs\": [{\"samples_s\": [0.1, -1]}]}}",
               "load.runs[0].samples_s: element 1");
  expect_error(HEAD "\"rows\": [], \"coldstart\": {\"runs\": 2, \"load\": {\"samples_s\": [0.1]}}}",
               "coldstart.load.samples_s: 1 samples for 2 runs");
}

int main(void) {
  test_round_trip();
  test_load_round_trip();
  test_coldstart_round_trip();
  test_older_documents();
  test_malformed();
  test_minimal_and_file();
  test_alloc_failure();
  TEST_MAIN_END();
}
