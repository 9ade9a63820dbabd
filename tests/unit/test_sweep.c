/* The sweep runner (nnperf/sweep.h) with a workload of its own (rows planned and
 * "measured" in this process, no worker): rows come in the workload's order, row_done
 * sees each once with its kept flag, a resumed result's rows are kept (not run again)
 * and a resumed result that does not match is refused with the row named (with
 * resume_by_key, resumed rows in any order are found by key); row keys are
 * the configuration plus the label's variant, and find_row finds rows by them. */
#include <string.h>

#include "nnperf/alloc.h"
#include "nnperf/sweep.h"
#include "test.h"

typedef struct counting {
  int n_rows, runs, opened, closed;
} counting;

static counting g_count;

static nnp_status c_open(const nnp_sweep_spec *spec, nnp_bench_result *res, void **state) {
  counting *c = &g_count;
  c->n_rows = *(const int *)spec->workload_args;
  c->opened++;
  res->accuracy_rtol = -1;
  *state = c;
  return NNP_OK;
}
static int c_n_rows(void *state) { return ((counting *)state)->n_rows; }
static nnp_status c_plan(void *state, int index, nnp_bench_row *row) {
  memset(row, 0, sizeof *row);
  snprintf(row->backend, sizeof row->backend, "b%d", index);
  row->threads = 1;
  row->batch = 1;
  snprintf(row->scenario, sizeof row->scenario, "static:1");
  snprintf(row->label, sizeof row->label, "b%d fp32 t1 b1", index);
  return NNP_OK;
}
static nnp_status c_run(void *state, int index, nnp_bench_row *row, nnp_sweep_progress_fn progress, void *ud) {
  ((counting *)state)->runs++;
  c_plan(state, index, row);
  row->status = NNP_ROW_OK;
  row->n_processes = 1;
  row->n_samples = 2;
  row->samples = nnp_malloc(2 * sizeof(double));
  row->samples[0] = row->samples[1] = 0.001 * (index + 1);
  return NNP_OK;
}
static void c_close(void *state) { ((counting *)state)->closed++; }

static const nnp_sweep_workload counting_workload = {
    .kind = "test", .open = c_open, .n_rows = c_n_rows, .plan_row = c_plan, .run_row = c_run, .close = c_close};

typedef struct seen {
  int calls, kept, order_ok;
} seen;

static void on_row(void *ud, const nnp_bench_result *res, int index, bool kept) {
  seen *s = ud;
  s->order_ok += res->n_rows == index + 1;
  s->calls++;
  s->kept += kept;
}

static void spec_for(nnp_sweep_spec *s, const int *n_rows, seen *sn) {
  nnp_sweep_spec_default(s);
  s->workload = &counting_workload;
  s->workload_args = n_rows;
  s->model = "m.onnx";
  s->processes = 1;
  s->row_done = on_row;
  s->ud = sn;
}

static void test_run_and_resume(void) {
  int n = 3;
  seen sn = {0};
  nnp_sweep_spec s;
  spec_for(&s, &n, &sn);
  nnp_bench_result res;
  nnp_sweep_outcome o;
  CHECK_OK(nnp_sweep_run(&s, &res, &o));
  CHECK(res.n_rows == 3 && o.n_planned == 3 && o.n_kept == 0 && !o.interrupted && !o.any_failed);
  CHECK(g_count.runs == 3 && g_count.opened == 1 && g_count.closed == 1);
  CHECK(sn.calls == 3 && sn.kept == 0 && sn.order_ok == 3);
  CHECK(!strcmp(res.rows[2].backend, "b2") && !strcmp(res.model, "m.onnx"));

  /* resume from the first two rows: they are kept, only the third runs */
  res.n_rows = 2;
  int n_more = 3;
  seen sn2 = {0};
  nnp_sweep_spec s2;
  spec_for(&s2, &n_more, &sn2);
  s2.resume = &res;
  s2.resume_name = "r.json";
  g_count.runs = 0;
  nnp_bench_result res2;
  CHECK_OK(nnp_sweep_run(&s2, &res2, &o));
  CHECK(res2.n_rows == 3 && o.n_kept == 2 && g_count.runs == 1 && sn2.kept == 2);
  CHECK(res2.rows[1].n_samples == 2 && res2.rows[1].samples != res.rows[1].samples); /* a copy */
  nnp_bench_result_free(&res2);

  /* a resumed row of another configuration: refused, naming the file and the row */
  snprintf(res.rows[1].backend, sizeof res.rows[1].backend, "other");
  nnp_sweep_outcome o3;
  nnp_status st = nnp_sweep_run(&s2, &res2, &o3);
  CHECK(st == NNP_ERR_INVALID && o3.resume_refused && res2.n_rows == 0);
  CHECK_MSG(strstr(nnp_last_error(), "r.json") && strstr(nnp_last_error(), "row 2"), "%s", nnp_last_error());
  nnp_bench_result_free(&res2);
  res.n_rows = 3;
  nnp_bench_result_free(&res);
}

/* resume_by_key: the resumed rows are rows 2 and 0 of 4 (out of order, not a prefix):
 * both kept wherever they sit, rows 1 and 3 run; a row the sweep does not make is refused. */
static void test_resume_by_key(void) {
  int n = 4;
  seen sn = {0};
  nnp_sweep_spec s;
  spec_for(&s, &n, &sn);
  nnp_bench_result full, done, res;
  nnp_sweep_outcome o;
  CHECK_OK(nnp_sweep_run(&s, &full, &o));
  memset(&done, 0, sizeof done);
  done = full;
  nnp_bench_row picked[2] = {full.rows[2], full.rows[0]};
  done.rows = picked;
  done.n_rows = done.cap_rows = 2;
  seen sn2 = {0};
  spec_for(&s, &n, &sn2);
  s.resume = &done;
  s.resume_name = "DIR";
  s.resume_by_key = true;
  g_count.runs = 0;
  CHECK_OK(nnp_sweep_run(&s, &res, &o));
  CHECK_MSG(res.n_rows == 4 && o.n_kept == 2 && g_count.runs == 2 && sn2.kept == 2, "kept %d runs %d", o.n_kept,
            g_count.runs);
  for (int i = 0; i < 4; i++) CHECK(!strcmp(res.rows[i].backend, full.rows[i].backend)); /* the plan's order */
  CHECK(res.rows[2].samples[0] == full.rows[2].samples[0] && res.rows[2].samples != full.rows[2].samples);
  nnp_bench_result_free(&res);
  /* without resume_by_key the same rows are refused: row 1 there is b2, here b0 */
  s.resume_by_key = false;
  CHECK(nnp_sweep_run(&s, &res, &o) == NNP_ERR_INVALID && o.resume_refused);
  nnp_bench_result_free(&res);
  s.resume_by_key = true;
  snprintf(picked[0].backend, sizeof picked[0].backend, "elsewhere");
  CHECK(nnp_sweep_run(&s, &res, &o) == NNP_ERR_INVALID && o.resume_refused);
  CHECK_MSG(strstr(nnp_last_error(), "DIR") && strstr(nnp_last_error(), "backend=elsewhere"), "%s", nnp_last_error());
  nnp_bench_result_free(&res);
  nnp_bench_result_free(&full);
}

static void test_keys(void) {
  nnp_bench_result r;
  memset(&r, 0, sizeof r);
  nnp_bench_row rows[2];
  memset(rows, 0, sizeof rows);
  for (int i = 0; i < 2; i++) {
    snprintf(rows[i].backend, sizeof rows[i].backend, "native");
    rows[i].threads = 2;
    rows[i].batch = 16;
    snprintf(rows[i].scenario, sizeof rows[i].scenario, "static:16x3x224x224");
  }
  snprintf(rows[0].label, sizeof rows[0].label, "native fp32 t2 b16");
  snprintf(rows[1].label, sizeof rows[1].label, "native fp32 t2 b16 cache");
  char k0[NNP_SWEEP_KEY_MAX], k1[NNP_SWEEP_KEY_MAX];
  CHECK_OK(nnp_sweep_row_key(&rows[0], k0, sizeof k0));
  CHECK_OK(nnp_sweep_row_key(&rows[1], k1, sizeof k1));
  CHECK_MSG(!strcmp(k0, "backend=native precision=fp32 threads=2 batch=16 scenario=static:16x3x224x224"), "%s", k0);
  CHECK_MSG(!strcmp(k1, "backend=native precision=fp32 threads=2 batch=16 scenario=static:16x3x224x224 variant=cache"),
            "%s", k1);
  r.rows = rows;
  r.n_rows = 2;
  CHECK(nnp_sweep_find_row(&r, k1) == 1 && nnp_sweep_find_row(&r, k0) == 0 && nnp_sweep_find_row(&r, "x") == -1);
  char tiny[16];
  CHECK(nnp_sweep_row_key(&rows[0], tiny, sizeof tiny) == NNP_ERR_LIMIT);
}

int main(void) {
  test_run_and_resume();
  test_resume_by_key();
  test_keys();
  TEST_MAIN_END();
}
