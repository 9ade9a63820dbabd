/* Table, JSON and CSV output of a bench result built in memory. */
#include <dirent.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nnperf/alloc.h"
#include "nnperf/report.h"
#include "test.h"

static const char *PY = "/usr/bin/python3";

/* Invalid UTF-8 (\xff) must come out as '?' in JSON; quotes, newline, tab and unicode as is. */
#define CRASH_REASON                                                                     \
  "worker died: \"SIGSEGV\"\nin libfoo.so \xe2\x80\x94 na\xc3\xafve \xe2\x9c\x93 \xff\tend " \
  "of a long reason that goes on and on well past what a table line can show, so it is cut"
#define CRASH_REASON_JSON                                                                \
  "worker died: \"SIGSEGV\"\nin libfoo.so \xe2\x80\x94 na\xc3\xafve \xe2\x9c\x93 ?\tend " \
  "of a long reason that goes on and on well past what a table line can show, so it is cut"

static void set_str(char *dst, size_t cap, const char *s) { snprintf(dst, cap, "%s", s); }

/* An OK row with n samples around ms milliseconds (deterministic spread of +-5%). */
static void ok_row(nnp_bench_row *w, const char *label, int threads, int64_t batch, double ms,
                   int n) {
  memset(w, 0, sizeof *w);
  set_str(w->backend, sizeof w->backend, "native");
  set_str(w->backend_version, sizeof w->backend_version, "0.1.0");
  set_str(w->label, sizeof w->label, label);
  set_str(w->scenario, sizeof w->scenario, "static:1x3x224x224");
  w->precision = NNP_FP32;
  w->threads = threads;
  w->batch = batch;
  w->status = NNP_ROW_OK;
  w->spawn_to_ready_s = 0.004;
  w->parse_s = 0.010;
  w->compile_s = 0.020;
  w->load_s = 0.030;
  w->first_s = 2 * ms * 1e-3;
  w->cold_start_s = 0.036 + 2 * ms * 1e-3;
  w->warmup_iterations = 30;
  w->warmup_stable = true;
  w->samples = nnp_malloc((size_t)n * sizeof *w->samples);
  CHECK(w->samples != NULL);
  w->n_samples = n;
  double sum = 0;
  for (int i = 0; i < n; i++) {
    w->samples[i] = ms * 1e-3 * (0.95 + 0.1 * (double)((i * 37) % 100) / 100.0);
    sum += w->samples[i];
  }
  CHECK_OK(nnp_stats_compute(w->samples, n, 7, &w->stats));
  w->items_per_s = (double)batch / w->stats.p50;
  w->measured_items_per_s = (double)batch * n / sum;
  w->peak_rss_bytes = (int64_t)150 << 20;
  w->vmhwm_bytes = (int64_t)151 << 20;
  w->acc.top1 = w->acc.top5 = -1;
}

static void compared(nnp_bench_row *w, double max_rel, bool within) {
  w->acc.compared = true;
  set_str(w->acc.reference, sizeof w->acc.reference, "native fp32 t1 b1");
  w->acc.max_abs = max_rel / 2;
  w->acc.max_rel = max_rel;
  w->acc.cosine = 0.999999;
  w->acc.top1 = 1.0;
  w->acc.top5 = 1.0;
  w->acc.within_tol = within;
}

static void build(nnp_bench_result *r) {
  memset(r, 0, sizeof *r);
  set_str(r->model, sizeof r->model, "models/resnet \"tiny\".onnx");
  set_str(r->nnperf_version, sizeof r->nnperf_version, "0.1.0");
  set_str(r->command_line, sizeof r->command_line, "nnperf bench models/resnet.onnx --threads 1,2");
  nnp_env_capture(&r->env);
  nnp_loop_spec_default(&r->loop);
  r->seed = 7;
  r->accuracy_rtol = 1e-3;
  r->n_rows = r->cap_rows = 5;
  r->rows = nnp_calloc(5, sizeof *r->rows);
  CHECK(r->rows != NULL);
  ok_row(&r->rows[0], "native fp32 t1 b1", 1, 1, 10.0, 300);
  r->rows[0].parse_s = -1; /* not measured: null in JSON */
  ok_row(&r->rows[1], "native fp32 t2 b1", 2, 1, 6.0, 300);
  compared(&r->rows[1], 2e-7, true);

  nnp_bench_row *c = &r->rows[2];
  memset(c, 0, sizeof *c);
  set_str(c->backend, sizeof c->backend, "ort");
  set_str(c->label, sizeof c->label, "ort fp16 t1 b1");
  c->precision = NNP_FP16;
  c->threads = 1;
  c->batch = 1;
  c->status = NNP_ROW_CRASHED;
  set_str(c->reason, sizeof c->reason, CRASH_REASON);
  c->exit_status = -1;
  c->term_signal = 11;
  c->spawn_to_ready_s = c->parse_s = c->compile_s = c->load_s = c->first_s = c->cold_start_s = -1;

  ok_row(&r->rows[3], "fast, \"opt\" fp32 t1 b1", 1, 1, 5.0, 300);
  compared(&r->rows[3], 0.05, false);
  ok_row(&r->rows[4], "native fp32 t1 b4", 1, 4, 30.0, 300);
  compared(&r->rows[4], 1e-7, true);
  r->rows[4].time_capped = true;
}

/* The table as a string (caller frees). */
static char *table_text(const nnp_bench_result *r) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CHECK(f != NULL);
  if (!f) return NULL;
  nnp_report_table(f, r);
  fclose(f);
  return buf;
}

/* The line of text that contains needle (copied into line), or 0. */
static int line_with(const char *text, const char *needle, char *line, size_t cap) {
  const char *p = text ? strstr(text, needle) : NULL;
  if (!p) return 0;
  const char *a = p, *b = p;
  while (a > text && a[-1] != '\n') a--;
  while (*b && *b != '\n') b++;
  size_t n = (size_t)(b - a) < cap - 1 ? (size_t)(b - a) : cap - 1;
  memcpy(line, a, n);
  line[n] = '\0';
  return 1;
}

static void test_table(void) {
  nnp_bench_result r;
  build(&r);
  char *t = table_text(&r);
  char line[1024];
  printf("%s\n", t ? t : "(null)");

  CHECK(line_with(t, "native fp32 t1 b1  ", line, sizeof line) && strstr(line, "1.00x (baseline)"));
  CHECK(line_with(t, "native fp32 t1 b1  ", line, sizeof line) && strstr(line, "ref"));
  CHECK(line_with(t, "native fp32 t2 b1", line, sizeof line) &&
        strstr(line, "n/a (differs: threads)") && !strstr(line, "faster"));
  CHECK(line_with(t, "fast, \"opt\"", line, sizeof line) && strstr(line, "2.00x faster") &&
        strstr(line, "FAIL tol") && strstr(line, "[acc FAIL]"));
  /* the only batch-4 row is its batch's own baseline */
  CHECK(line_with(t, "native fp32 t1 b4", line, sizeof line) && strstr(line, "1.00x (baseline)") &&
        strstr(line, "ok (capped)"));
  /* the crashed row: status and reason on one line, newline and tab flattened, cut */
  CHECK(line_with(t, "ort fp16 t1 b1", line, sizeof line) && strstr(line, "crashed") &&
        strstr(line, "worker died: \"SIGSEGV\" in libfoo.so \xe2\x80\x94 na\xc3\xafve") &&
        strstr(line, "...") && !strstr(line, "so it is cut"));
  CHECK(line_with(t, "P99 ms", line, sizeof line));
  CHECK(t && strstr(t, "*  ") != NULL); /* underpowered P99 marked (300 < 1000 samples) */
  CHECK(t && strstr(t, "* P99 from fewer than 1000 samples"));
  CHECK(t && strstr(t, "Environment: "));
  CHECK(t && strstr(t, "tolerance 1.0e-03"));
  CHECK(t && strstr(t, "JSON result has them in full"));
  CHECK(t && !strstr(t, " \n")); /* no trailing blanks */
  free(t);

  /* allow_mixed: precision and threads become columns, the t2 row is ranked */
  r.allow_mixed = true;
  t = table_text(&r);
  CHECK(line_with(t, "precision", line, sizeof line) && strstr(line, "threads"));
  CHECK(line_with(t, "native fp32 t2 b1", line, sizeof line) && strstr(line, "faster") &&
        !strstr(line, "n/a"));
  CHECK(line_with(t, "native fp32 t1 b4", line, sizeof line) && strstr(line, "1.00x (baseline)"));
  free(t);
  r.allow_mixed = false;

  /* a named baseline; one that does not exist; one that did not run */
  set_str(r.baseline, sizeof r.baseline, "fast, \"opt\" fp32 t1 b1");
  t = table_text(&r);
  CHECK(line_with(t, "fast, \"opt\"", line, sizeof line) && strstr(line, "1.00x (baseline)"));
  CHECK(line_with(t, "native fp32 t1 b1  ", line, sizeof line) && strstr(line, "2.00x slower"));
  free(t);
  set_str(r.baseline, sizeof r.baseline, "no such row");
  t = table_text(&r);
  CHECK(t && strstr(t, "is not a row of this table"));
  CHECK(line_with(t, "native fp32 t1 b1  ", line, sizeof line) && strstr(line, "1.00x (baseline)"));
  free(t);
  set_str(r.baseline, sizeof r.baseline, "ort fp16 t1 b1");
  t = table_text(&r);
  CHECK(t && strstr(t, "did not run: no speed ratios"));
  CHECK(t && !strstr(t, "faster") && !strstr(t, "(baseline)"));
  free(t);
  r.baseline[0] = '\0';

  /* noisy: flagged in the notes */
  r.noisy = true;
  t = table_text(&r);
  CHECK(t && strstr(t, "NOISY: highest CV"));
  free(t);

  /* equal medians whose CIs overlap: "~" and its note */
  nnp_bench_row saved = r.rows[3];
  ok_row(&r.rows[3], "twin fp32 t1 b1", 1, 1, 10.0, 300);
  t = table_text(&r);
  CHECK(line_with(t, "twin fp32", line, sizeof line) && strstr(line, "~1.00x"));
  CHECK(t && strstr(t, "~ the 95% CIs"));
  free(t);
  nnp_bench_row_free(&r.rows[3]);
  r.rows[3] = saved;

  nnp_bench_result_free(&r);

  /* no rows at all */
  nnp_bench_result empty;
  memset(&empty, 0, sizeof empty);
  t = table_text(&empty);
  CHECK(t && strstr(t, "0 of 0 rows ran"));
  free(t);
  empty.n_rows = 3; /* rows never allocated: treated as none, not dereferenced */
  t = table_text(&empty);
  CHECK(t && strstr(t, "0 of 0 rows ran"));
  free(t);
}

/* Runs python on path with a program that prints to stdout; returns its output. */
static char *python(const char *prog, const char *path) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "%s -c '%s' '%s' 2>&1", PY, prog, path);
  FILE *p = popen(cmd, "r");
  CHECK(p != NULL);
  if (!p) return NULL;
  size_t cap = 1 << 16, len = 0;
  char *out = calloc(1, cap);
  size_t got;
  while (out && (got = fread(out + len, 1, cap - 1 - len, p)) > 0) len += got;
  int rc = pclose(p);
  CHECK_MSG(rc == 0, "python failed: %s", out ? out : "");
  return out;
}

static int count_dir(const char *dir, int *temps) {
  DIR *d = opendir(dir);
  int n = 0;
  *temps = 0;
  if (!d) return -1;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (de->d_name[0] == '.' && (!de->d_name[1] || !strcmp(de->d_name, ".."))) continue;
    n++;
    if (strstr(de->d_name, ".tmp.")) (*temps)++;
  }
  closedir(d);
  return n;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = calloc(1, 1 << 20);
  if (buf && fread(buf, 1, (1 << 20) - 1, f) == 0 && ferror(f)) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  return buf;
}

static void test_json_csv(void) {
  char dir[] = "/tmp/nnp_test_report_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char jpath[256], cpath[256];
  snprintf(jpath, sizeof jpath, "%s/result.json", dir);
  snprintf(cpath, sizeof cpath, "%s/result.csv", dir);

  nnp_bench_result r;
  build(&r);
  CHECK_OK(nnp_report_write_json(&r, jpath));
  CHECK_OK(nnp_report_write_csv(&r, cpath));
  int temps;
  CHECK(count_dir(dir, &temps) == 2 && temps == 0);

  char *j = slurp(jpath);
  CHECK(j && strstr(j, "\"schema_version\": 1") && strstr(j, "\"samples_s\": ["));
  free(j);

  bool have_py = access(PY, X_OK) == 0;
  if (have_py) {
    const char *prog =
        "import json,sys\n"
        "d = json.load(open(sys.argv[1], encoding=\"utf-8\"))\n"
        "r = d[\"rows\"]\n"
        "print(d[\"schema_version\"], d[\"tool\"], d[\"seed\"], len(r), r[0][\"stats\"][\"n\"],\n"
        "      repr(r[0][\"stats\"][\"p50\"]), repr(r[0][\"samples_s\"][5]), len(r[0][\"samples_s\"]),\n"
        "      r[0][\"phases\"][\"parse_s\"], r[2][\"stats\"], r[2][\"status\"], r[2][\"term_signal\"],\n"
        "      r[1][\"threads\"], r[3][\"accuracy\"][\"within_tol\"], r[0][\"accuracy\"][\"max_rel\"],\n"
        "      r[0][\"memory\"][\"peak_rss_bytes\"], d[\"env\"][\"mem_total_bytes\"] > 0,\n"
        "      r[0][\"stats\"][\"p99_underpowered\"], len(r[0][\"stats\"][\"p50_ci\"]), d[\"model\"])\n"
        "sys.stdout.flush()\n"
        "sys.stdout.buffer.write(r[2][\"reason\"].encode(\"utf-8\"))\n";
    char *out = python(prog, jpath);
    if (out) {
      int schema = 0, n_rows = 0, n = 0, nsamp = 0, sig = 0, threads = 0;
      unsigned long long seed = 0;
      double p50 = 0, s5 = 0;
      char tool[16] = "", parse[16] = "", st2[16] = "", status[16] = "", within[8] = "";
      char maxrel[8] = "", memok[8] = "", under[8] = "";
      long long rss = 0;
      int nci = 0, used = 0;
      int got = sscanf(out, "%d %15s %llu %d %d %lf %lf %d %15s %15s %15s %d %d %7s %7s %lld %7s %7s %d %n",
                       &schema, tool, &seed, &n_rows, &n, &p50, &s5, &nsamp, parse, st2, status,
                       &sig, &threads, within, maxrel, &rss, memok, under, &nci, &used);
      CHECK_MSG(got == 19, "python said: %s", out);
      CHECK(schema == NNP_RESULT_SCHEMA_VERSION && !strcmp(tool, "nnperf") && seed == 7);
      CHECK(n_rows == 5 && n == 300 && nsamp == 300);
      CHECK_NEAR(p50, r.rows[0].stats.p50, 1e-8 * r.rows[0].stats.p50);
      CHECK_NEAR(s5, r.rows[0].samples[5], 1e-8 * r.rows[0].samples[5]);
      CHECK(!strcmp(parse, "None") && !strcmp(st2, "None") && !strcmp(status, "crashed"));
      CHECK(sig == 11 && threads == 2 && !strcmp(within, "False") && !strcmp(maxrel, "None"));
      CHECK(rss == (150LL << 20) && !strcmp(memok, "True") && !strcmp(under, "True") && nci == 2);
      /* after the model (printed last on the line) comes the reason, byte for byte */
      const char *nl = strchr(out + used, '\n');
      CHECK(nl && !strncmp(out + used, "models/resnet \"tiny\".onnx", 25));
      if (nl) CHECK_MSG(!strcmp(nl + 1, CRASH_REASON_JSON), "reason round trip: '%s'", nl + 1);
      free(out);
    }

    out = python("import csv,sys\n"
                 "rows = list(csv.reader(open(sys.argv[1], newline=\"\", encoding=\"utf-8\")))\n"
                 "print(len(rows), sorted(set(len(x) for x in rows)), rows[4][0], rows[1][8][:6],"
                 " rows[3][8] == \"\", rows[3][7], rows[4][23], rows[2][21], rows[2][18], rows[2][24] != \"\","
                 " rows[3][24] == \"\")\n",
                 cpath);
    if (out) {
      /* P50 compared on its first 6 characters, as the python side cut it */
      char want[256], p50s[16];
      snprintf(p50s, sizeof p50s, "%.9g", r.rows[0].stats.p50 * 1e3);
      p50s[6] = '\0';
      snprintf(want, sizeof want, "6 [33] fast, \"opt\" fp32 t1 b1 %s True crashed false 2e-07 30 True True\n",
               p50s);
      CHECK_MSG(!strcmp(out, want), "csv: got '%s' want '%s'", out, want);
      free(out);
    }
  } else {
    printf("note: %s not found, JSON/CSV parse checks skipped\n", PY);
  }

  /* CSV by hand: fields per record, quotes respected, CRLF line ends */
  char *c = slurp(cpath);
  CHECK(c != NULL);
  if (c) {
    int records = 0, fields = 1, bad = 0, inq = 0;
    for (const char *p = c; *p; p++) {
      if (inq) {
        if (*p == '"' && p[1] == '"') p++;
        else if (*p == '"') inq = 0;
      } else if (*p == '"') inq = 1;
      else if (*p == ',') fields++;
      else if (*p == '\r' && p[1] == '\n') {
        records++;
        bad += fields != 33; /* 26 before the footprint, energy and device columns */
        fields = 1;
        p++;
      } else if (*p == '\n') bad++; /* bare LF outside quotes */
    }
    CHECK(records == 6 && bad == 0 && !inq);
    CHECK(strstr(c, "\"fast, \"\"opt\"\" fp32 t1 b1\"") != NULL);
    free(c);
  }

  /* Rewriting replaces the file atomically and leaves no temp file. */
  r.seed = 12345;
  CHECK_OK(nnp_report_write_json(&r, jpath));
  j = slurp(jpath);
  CHECK(j && strstr(j, "\"seed\": 12345") && !strstr(j, "\"seed\": 7,"));
  free(j);
  CHECK(count_dir(dir, &temps) == 2 && temps == 0);

  /* Errors name the path and the reason, and leave nothing behind. */
  nnp_status s = nnp_report_write_json(&r, "/nonexistent/nnp/result.json");
  CHECK(s == NNP_ERR_IO && strstr(nnp_last_error(), "/nonexistent/nnp/result.json") &&
        strstr(nnp_last_error(), "No such file"));
  char sub[300];
  snprintf(sub, sizeof sub, "%s/adir", dir);
  CHECK(mkdir(sub, 0755) == 0);
  s = nnp_report_write_csv(&r, sub);
  CHECK_MSG(s == NNP_ERR_IO && strstr(nnp_last_error(), sub), "%s", nnp_last_error());
  CHECK(count_dir(dir, &temps) == 3 && temps == 0);
  CHECK(nnp_report_write_json(&r, "") == NNP_ERR_INVALID);
  rmdir(sub);

  /* Rows without samples and a result without rows are still valid JSON. */
  nnp_bench_row_free(&r.rows[0]);
  memset(&r.rows[0].stats, 0, sizeof r.rows[0].stats);
  r.rows[0].items_per_s = 1.0 / 0.0; /* non-finite: null */
  CHECK_OK(nnp_report_write_json(&r, jpath));
  if (have_py) {
    char *out = python("import json,sys\nd = json.load(open(sys.argv[1]))\n"
                       "print(d[\"rows\"][0][\"stats\"], d[\"rows\"][0][\"samples_s\"],"
                       " d[\"rows\"][0][\"items_per_s\"])\n",
                       jpath);
    CHECK(out && !strcmp(out, "None [] None\n"));
    free(out);
  }
  nnp_bench_result_free(&r);
  nnp_bench_result empty;
  memset(&empty, 0, sizeof empty);
  empty.n_rows = 2; /* rows never allocated */
  CHECK_OK(nnp_report_write_json(&empty, jpath));
  CHECK_OK(nnp_report_write_csv(&empty, cpath));
  if (have_py) {
    char *out = python("import json,sys\nd = json.load(open(sys.argv[1]))\nprint(d[\"rows\"])\n",
                       jpath);
    CHECK(out && !strcmp(out, "[]\n"));
    free(out);
  }

  unlink(jpath);
  unlink(cpath);
  rmdir(dir);
}

/* Rows that carry their criterion (bench since schema_minor 3): the notes name the
 * criterion per precision instead of the old max_rel list, and the cosine of each row
 * judged by it; an int8 row beyond fp32's max_rel but within its cosine is no FAIL. */
static void test_criteria_notes(void) {
  nnp_bench_result r;
  build(&r);
  r.accuracy_rtol = -1; /* fp32 and int8 */
  set_str(r.rows[1].acc.criterion, sizeof r.rows[1].acc.criterion, "max_rel <= 1e-04");
  set_str(r.rows[4].acc.criterion, sizeof r.rows[4].acc.criterion, "max_rel <= 1e-04");
  nnp_bench_row *q = &r.rows[3];
  set_str(q->label, sizeof q->label, "native int8 t1 b1");
  q->precision = NNP_INT8;
  q->acc.max_rel = 0.095;
  q->acc.cosine = 0.99931;
  q->acc.within_tol = true;
  set_str(q->acc.criterion, sizeof q->acc.criterion, "cosine >= 0.99, top-1 >= 90% over 10+ rows");
  char *t = table_text(&r);
  char line[1024];
  printf("%s\n", t ? t : "(null)");
  CHECK(line_with(t, "  accuracy: ", line, sizeof line) &&
        strstr(line, "; within tolerance: fp32 max_rel <= 1e-04; int8 cosine >= 0.99, top-1 >= 90% over 10+ rows") &&
        !strstr(line, "5e-2") && !strstr(line, "FAIL tol"));
  CHECK(line_with(t, "native int8 t1 b1  ", line, sizeof line) && strstr(line, "9.5e-02") && !strstr(line, "FAIL"));
  CHECK(line_with(t, "  cosine vs ref: ", line, sizeof line) && strstr(line, "'native int8 t1 b1' 0.99931 (top-1 100%)") &&
        !strstr(line, "fp32"));
  free(t);
  /* below its cosine: FAIL tol, listed */
  q->acc.cosine = 0.95;
  q->acc.within_tol = false;
  t = table_text(&r);
  CHECK(line_with(t, "native int8 t1 b1  ", line, sizeof line) && strstr(line, "FAIL tol") && strstr(line, "[acc FAIL]"));
  CHECK(line_with(t, "  accuracy: ", line, sizeof line) && strstr(line, "FAIL tol, outside it: 'native int8 t1 b1'"));
  free(t);
  /* rows of an older result (no criterion) beside new ones: the old rule is named for them */
  r.rows[4].acc.criterion[0] = 0;
  t = table_text(&r);
  CHECK(line_with(t, "  accuracy: ", line, sizeof line) &&
        strstr(line, "; otherwise tolerance per precision (fp32 1e-4, fp16 1e-2, int8/mixed 5e-2)"));
  free(t);
  nnp_bench_result_free(&r);
}

/* Issue 25: rows of another batch (or input shape) are ranked against their own workload's
 * baseline: the baseline's configuration at that batch, else that batch's first ok row. */
static void test_batch_baselines(void) {
  nnp_bench_result r;
  memset(&r, 0, sizeof r);
  nnp_loop_spec_default(&r.loop);
  r.n_rows = r.cap_rows = 5;
  r.rows = nnp_calloc(5, sizeof *r.rows);
  CHECK(r.rows != NULL);
  if (!r.rows) return;
  ok_row(&r.rows[0], "native fp32 t1 b1", 1, 1, 10.0, 300);
  ok_row(&r.rows[1], "ort fp32 t1 b1", 1, 1, 5.0, 300);
  ok_row(&r.rows[2], "native fp32 t1 b16", 1, 16, 100.0, 300);
  ok_row(&r.rows[3], "ort fp32 t1 b16", 1, 16, 40.0, 300);
  ok_row(&r.rows[4], "native fp32 t1 b1 dyn", 1, 1, 20.0, 300);
  set_str(r.rows[1].backend, sizeof r.rows[1].backend, "ort");
  set_str(r.rows[3].backend, sizeof r.rows[3].backend, "ort");
  set_str(r.rows[4].scenario, sizeof r.rows[4].scenario, "dynamic:Nx3x[160..320]x[160..320]");
  r.env.cpus_allowed = 2;
  r.rows[1].other_cpus = 1.8; /* 1 thread + 1.8 CPUs of other work on 2 CPUs */
  char *t = table_text(&r), line[1024];
  printf("%s\n", t ? t : "(null)");
  CHECK(line_with(t, "native fp32 t1 b16", line, sizeof line) && strstr(line, "1.00x (baseline)"));
  CHECK(line_with(t, "ort fp32 t1 b16", line, sizeof line) && strstr(line, "2.50x faster"));
  CHECK(line_with(t, "ort fp32 t1 b1  ", line, sizeof line) && strstr(line, "ok (oversubscribed)"));
  CHECK(line_with(t, "ort fp32 t1 b16", line, sizeof line) && !strstr(line, "oversubscribed"));
  CHECK(line_with(t, "native fp32 t1 b1 dyn", line, sizeof line) && strstr(line, "1.00x (baseline)"));
  CHECK(t && !strstr(t, "n/a (differs") && !strstr(t, "scenario"));
  CHECK(t && strstr(t, "own baseline: 'native fp32 t1 b1', 'native fp32 t1 b16', 'native fp32 t1 b1 dyn'."));
  free(t);
  /* a named baseline: its configuration at every batch */
  set_str(r.baseline, sizeof r.baseline, "ort fp32 t1 b1");
  t = table_text(&r);
  CHECK(line_with(t, "ort fp32 t1 b16", line, sizeof line) && strstr(line, "1.00x (baseline)"));
  CHECK(line_with(t, "native fp32 t1 b16", line, sizeof line) && strstr(line, "2.50x slower"));
  free(t);
  nnp_bench_result_free(&r);
}

int main(void) {
  test_batch_baselines();
  test_table();
  test_criteria_notes();
  test_json_csv();
  TEST_MAIN_END();
}
