/* Run history in SQLite. Four tables:
 *   runs     one per bench run: when, model, command line, environment (JSON) and the
 *            full result JSON, which is what `nnperf history export` gives back byte for
 *            byte (so an export compares and reports exactly like the original file);
 *   rows     one per row, the summary columns (for SQL queries across runs);
 *   samples  raw latencies of each row, one blob per worker process (float64, native
 *            byte order: the database is a local cache of this machine's runs);
 *   load_runs one per run of a load command (nnperf load): rate, latency, losses.
 * runs.kind says bench, load or coldstart. A run is stored in one transaction. PRAGMA
 * user_version carries the schema version: 1 (bench only), 2 (kind, load_runs); a
 * version 1 database is upgraded in place when opened. */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nnperf/alloc.h"
#include "nnperf/history.h"
#include "nnperf/report.h"
#include "nnperf/result_load.h"

#define HISTORY_SCHEMA_VERSION 2

struct nnp_history {
  sqlite3 *db;
  char path[1024];
};

static const char schema_sql[] =
    "CREATE TABLE IF NOT EXISTS runs ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT, timestamp TEXT NOT NULL, model TEXT NOT NULL,"
    "  nnperf_version TEXT, command_line TEXT, seed INTEGER, noisy INTEGER NOT NULL,"
    "  n_rows INTEGER NOT NULL, n_ok INTEGER NOT NULL, hostname TEXT, env_json TEXT NOT NULL,"
    "  result_json TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS rows ("
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, idx INTEGER NOT NULL,"
    "  label TEXT, backend TEXT, backend_version TEXT, precision TEXT, threads INTEGER, batch INTEGER,"
    "  scenario TEXT, status TEXT, reason TEXT, n INTEGER, p50_s REAL, p50_lo_s REAL, p50_hi_s REAL,"
    "  p99_s REAL, cv REAL, items_per_s REAL, peak_rss_bytes INTEGER, load_s REAL, cold_start_s REAL,"
    "  max_rel REAL, within_tol INTEGER, PRIMARY KEY (run_id, idx));"
    "CREATE TABLE IF NOT EXISTS samples ("
    "  run_id INTEGER NOT NULL, row_idx INTEGER NOT NULL, process INTEGER NOT NULL,"
    "  latencies_f64 BLOB NOT NULL, PRIMARY KEY (run_id, row_idx, process),"
    "  FOREIGN KEY (run_id, row_idx) REFERENCES rows(run_id, idx) ON DELETE CASCADE);";

/* version 1 -> 2: load and coldstart runs */
static const char schema_v2_sql[] =
    "ALTER TABLE runs ADD COLUMN kind TEXT NOT NULL DEFAULT 'bench';"
    "CREATE TABLE IF NOT EXISTS load_runs ("
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, idx INTEGER NOT NULL,"
    "  scenario TEXT, purpose TEXT, target_qps REAL, offered_qps REAL, achieved_qps REAL,"
    "  p50_s REAL, p90_s REAL, p99_s REAL, p999_s REAL, queries INTEGER, completed INTEGER,"
    "  dropped INTEGER, late INTEGER, passed INTEGER, PRIMARY KEY (run_id, idx));";

static nnp_status db_error(nnp_history *h, const char *what) {
  return nnp_error(NNP_ERR_IO, "history '%s': %s: %s", h->path, what, sqlite3_errmsg(h->db));
}

nnp_status nnp_history_default_path(char *out, size_t n) {
  const char *env = getenv("NNPERF_HISTORY");
  if (env && *env) {
    snprintf(out, n, "%s", env);
    return NNP_OK;
  }
  const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
  if (xdg && *xdg) snprintf(out, n, "%s/nnperf/history.db", xdg);
  else if (home && *home) snprintf(out, n, "%s/.local/share/nnperf/history.db", home);
  else return nnp_error(NNP_ERR_INVALID, "no history path: set NNPERF_HISTORY (HOME is not set)");
  return NNP_OK;
}

/* mkdir -p of the folder that will hold path. */
static nnp_status make_parents(const char *path) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (!slash || slash == dir) return NNP_OK;
  *slash = 0;
  for (char *p = dir + 1; *p; p++) {
    if (*p != '/') continue;
    *p = 0;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
      return nnp_error(NNP_ERR_IO, "cannot create folder '%s' for the history: %s", dir, strerror(errno));
    *p = '/';
  }
  if (mkdir(dir, 0777) != 0 && errno != EEXIST)
    return nnp_error(NNP_ERR_IO, "cannot create folder '%s' for the history: %s", dir, strerror(errno));
  return NNP_OK;
}

static int user_version(sqlite3 *db) {
  sqlite3_stmt *st = NULL;
  int version = -1;
  if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    version = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  return version;
}

/* Creates or upgrades the schema in one write transaction; the version is read again
 * inside it, so two processes opening an old database do not both upgrade it. */
static int upgrade(nnp_history *h, char **msg) {
  int rc = sqlite3_exec(h->db, "BEGIN IMMEDIATE", NULL, NULL, msg);
  if (rc != SQLITE_OK) return rc;
  int v = user_version(h->db);
  if (v < 1) rc = sqlite3_exec(h->db, schema_sql, NULL, NULL, msg);
  if (rc == SQLITE_OK && v < 2) rc = sqlite3_exec(h->db, schema_v2_sql, NULL, NULL, msg);
  if (rc == SQLITE_OK && v < 2) rc = sqlite3_exec(h->db, "PRAGMA user_version = 2", NULL, NULL, msg);
  if (rc == SQLITE_OK) rc = sqlite3_exec(h->db, "COMMIT", NULL, NULL, msg);
  if (rc != SQLITE_OK) sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
  return rc;
}

nnp_status nnp_history_open(const char *path, nnp_history **out) {
  *out = NULL;
  if (!path || !*path) return nnp_error(NNP_ERR_INVALID, "history: empty path");
  NNP_TRY(make_parents(path));
  nnp_history *h = nnp_calloc(1, sizeof *h);
  if (!h) return nnp_error(NNP_ERR_NOMEM, "out of memory");
  snprintf(h->path, sizeof h->path, "%s", path);
  if (sqlite3_open_v2(path, &h->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
    nnp_status s = db_error(h, "cannot open");
    nnp_history_close(h);
    return s;
  }
  sqlite3_busy_timeout(h->db, 10000); /* concurrent bench runs (parallel tests) take turns */
  int version = user_version(h->db);
  if (version < 0) {
    nnp_status s = db_error(h, "not a SQLite database");
    nnp_history_close(h);
    return s;
  }
  if (version > HISTORY_SCHEMA_VERSION) {
    nnp_history_close(h);
    return nnp_error(NNP_ERR_UNSUPPORTED, "history '%s' has schema version %d; this nnperf knows %d", path, version,
                     HISTORY_SCHEMA_VERSION);
  }
  char *msg = NULL;
  if (sqlite3_exec(h->db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL) != SQLITE_OK ||
      (version < HISTORY_SCHEMA_VERSION && upgrade(h, &msg) != SQLITE_OK)) {
    nnp_status s = nnp_error(NNP_ERR_IO, "history '%s': cannot create the schema: %s", path,
                             msg ? msg : sqlite3_errmsg(h->db));
    sqlite3_free(msg);
    nnp_history_close(h);
    return s;
  }
  *out = h;
  return NNP_OK;
}

void nnp_history_close(nnp_history *h) {
  if (!h) return;
  sqlite3_close(h->db);
  nnp_free(h);
}

/* --- storing ---------------------------------------------------------------------------- */

typedef void (*emit_fn)(FILE *f, const void *obj);
static void emit_result(FILE *f, const void *r) { nnp_report_json(f, r); }
static void emit_env(FILE *f, const void *e) { nnp_env_write_json(f, e); }

static char *to_text(emit_fn fn, const void *obj, size_t *len) {
  char *buf = NULL;
  FILE *m = open_memstream(&buf, len);
  if (!m) return NULL;
  fn(m, obj);
  fclose(m);
  return buf;
}

static void bind_opt(sqlite3_stmt *st, int col, double v, int valid) {
  if (valid) sqlite3_bind_double(st, col, v);
  else sqlite3_bind_null(st, col);
}

static nnp_status insert_rows(nnp_history *h, int64_t run, const nnp_bench_result *r) {
  sqlite3_stmt *row = NULL, *smp = NULL;
  if (sqlite3_prepare_v2(h->db,
                         "INSERT INTO rows VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,"
                         "?20,?21,?22,?23)",
                         -1, &row, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(h->db, "INSERT INTO samples VALUES (?1,?2,?3,?4)", -1, &smp, NULL) != SQLITE_OK) {
    nnp_status s = db_error(h, "prepare");
    sqlite3_finalize(row);
    sqlite3_finalize(smp);
    return s;
  }
  nnp_status s = NNP_OK;
  for (int i = 0; i < r->n_rows && s == NNP_OK; i++) {
    const nnp_bench_row *w = &r->rows[i];
    int has = w->stats.n > 0;
    sqlite3_reset(row);
    sqlite3_bind_int64(row, 1, run);
    sqlite3_bind_int(row, 2, i);
    sqlite3_bind_text(row, 3, w->label, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(row, 4, w->backend, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(row, 5, w->backend_version, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(row, 6, nnp_precision_name(w->precision), -1, SQLITE_STATIC);
    sqlite3_bind_int(row, 7, w->threads);
    sqlite3_bind_int64(row, 8, w->batch);
    sqlite3_bind_text(row, 9, w->scenario, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(row, 10, nnp_row_status_name(w->status), -1, SQLITE_STATIC);
    sqlite3_bind_text(row, 11, w->reason, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(row, 12, w->stats.n);
    bind_opt(row, 13, w->stats.p50, has);
    bind_opt(row, 14, w->stats.p50_lo, has);
    bind_opt(row, 15, w->stats.p50_hi, has);
    bind_opt(row, 16, w->stats.p99, has);
    bind_opt(row, 17, w->stats.cv, has);
    bind_opt(row, 18, w->items_per_s, w->items_per_s > 0);
    if (w->peak_rss_bytes > 0) sqlite3_bind_int64(row, 19, w->peak_rss_bytes);
    else sqlite3_bind_null(row, 19);
    bind_opt(row, 20, w->load_s, w->load_s >= 0);
    bind_opt(row, 21, w->cold_start_s, w->cold_start_s >= 0);
    bind_opt(row, 22, w->acc.max_rel, w->acc.compared);
    if (w->acc.compared) sqlite3_bind_int(row, 23, w->acc.within_tol);
    else sqlite3_bind_null(row, 23);
    if (sqlite3_step(row) != SQLITE_DONE) s = db_error(h, "insert row");
    /* samples, one blob per process (one group when the process split is unknown) */
    int groups = w->n_processes > 0 ? w->n_processes : 1;
    for (int p = 0, off = 0; p < groups && s == NNP_OK && w->n_samples > 0; p++) {
      int cnt = w->n_processes > 0 ? w->process_samples[p] : w->n_samples;
      sqlite3_reset(smp);
      sqlite3_bind_int64(smp, 1, run);
      sqlite3_bind_int(smp, 2, i);
      sqlite3_bind_int(smp, 3, p);
      sqlite3_bind_blob(smp, 4, w->samples + off, (int)(sizeof(double) * (size_t)cnt), SQLITE_TRANSIENT);
      if (sqlite3_step(smp) != SQLITE_DONE) s = db_error(h, "insert samples");
      off += cnt;
    }
  }
  sqlite3_finalize(row);
  sqlite3_finalize(smp);
  return s;
}

static nnp_status insert_load_runs(nnp_history *h, int64_t run, const nnp_load_section *l) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(h->db, "INSERT INTO load_runs VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16)",
                         -1, &st, NULL) != SQLITE_OK)
    return db_error(h, "prepare");
  nnp_status s = NNP_OK;
  for (int i = 0; i < l->n_runs && s == NNP_OK; i++) {
    const nnp_load_run_record *u = &l->runs[i];
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, run);
    sqlite3_bind_int(st, 2, i);
    sqlite3_bind_text(st, 3, l->scenario, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 4, u->purpose, -1, SQLITE_TRANSIENT);
    const double v[] = {u->target_qps, u->offered_qps, u->achieved_qps, u->p50_s, u->p90_s, u->p99_s, u->p999_s};
    for (int k = 0; k < 7; k++) bind_opt(st, 5 + k, v[k], v[k] >= 0);
    sqlite3_bind_int64(st, 12, u->queries);
    sqlite3_bind_int64(st, 13, u->completed);
    sqlite3_bind_int64(st, 14, u->dropped);
    sqlite3_bind_int64(st, 15, u->late);
    sqlite3_bind_int(st, 16, u->passed);
    if (sqlite3_step(st) != SQLITE_DONE) s = db_error(h, "insert load run");
  }
  sqlite3_finalize(st);
  return s;
}

nnp_status nnp_history_add(nnp_history *h, const nnp_bench_result *r, int64_t *id) {
  size_t jlen = 0, elen = 0;
  char *json = to_text(emit_result, r, &jlen), *env = to_text(emit_env, &r->env, &elen);
  if (!json || !env) {
    free(json);
    free(env);
    return nnp_error(NNP_ERR_NOMEM, "out of memory");
  }
  int ok = 0;
  for (int i = 0; i < r->n_rows; i++) ok += r->rows[i].status == NNP_ROW_OK;
  nnp_status s = NNP_OK;
  /* IMMEDIATE: take the write lock now, so a concurrent writer waits here (busy
   * timeout) rather than failing halfway through */
  if (sqlite3_exec(h->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) s = db_error(h, "begin");
  sqlite3_stmt *st = NULL;
  if (s == NNP_OK &&
      sqlite3_prepare_v2(h->db,
                         "INSERT INTO runs (timestamp, model, nnperf_version, command_line, seed, noisy, n_rows, n_ok,"
                         " hostname, env_json, result_json, kind) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)",
                         -1, &st, NULL) != SQLITE_OK)
    s = db_error(h, "prepare");
  if (s == NNP_OK) {
    sqlite3_bind_text(st, 1, r->env.timestamp, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, r->model, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, r->nnperf_version, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 4, r->command_line, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 5, (sqlite3_int64)r->seed);
    sqlite3_bind_int(st, 6, r->noisy);
    sqlite3_bind_int(st, 7, r->n_rows);
    sqlite3_bind_int(st, 8, ok);
    sqlite3_bind_text(st, 9, r->env.hostname, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 10, env, (int)elen, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 11, json, (int)jlen, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 12, nnp_result_kind(r), -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE) s = db_error(h, "insert run");
  }
  sqlite3_finalize(st);
  int64_t run = sqlite3_last_insert_rowid(h->db);
  if (s == NNP_OK) s = insert_rows(h, run, r);
  if (s == NNP_OK && r->load) s = insert_load_runs(h, run, r->load);
  if (s == NNP_OK && sqlite3_exec(h->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) s = db_error(h, "commit");
  if (s != NNP_OK) sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
  else if (id) *id = run;
  free(json);
  free(env);
  return s;
}

/* --- reading ---------------------------------------------------------------------------- */

static void col_text(sqlite3_stmt *st, int col, char *out, size_t n) {
  const unsigned char *t = sqlite3_column_text(st, col);
  snprintf(out, n, "%s", t ? (const char *)t : "");
}

nnp_status nnp_history_list(nnp_history *h, int (*fn)(void *ud, const nnp_history_entry *e), void *ud) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(h->db, "SELECT id, timestamp, model, command_line, n_rows, n_ok, noisy, kind FROM runs ORDER BY id",
                         -1, &st, NULL) != SQLITE_OK)
    return db_error(h, "list");
  int rc;
  nnp_history_entry e;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    memset(&e, 0, sizeof e);
    e.id = sqlite3_column_int64(st, 0);
    col_text(st, 1, e.timestamp, sizeof e.timestamp);
    col_text(st, 2, e.model, sizeof e.model);
    col_text(st, 3, e.command_line, sizeof e.command_line);
    e.n_rows = sqlite3_column_int(st, 4);
    e.n_ok = sqlite3_column_int(st, 5);
    e.noisy = sqlite3_column_int(st, 6) != 0;
    col_text(st, 7, e.kind, sizeof e.kind);
    if (fn(ud, &e)) break;
  }
  nnp_status s = rc == SQLITE_ROW || rc == SQLITE_DONE ? NNP_OK : db_error(h, "list");
  sqlite3_finalize(st);
  return s;
}

nnp_status nnp_history_export_json(nnp_history *h, int64_t id, char **json, size_t *len) {
  *json = NULL;
  *len = 0;
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(h->db, "SELECT result_json FROM runs WHERE id = ?1", -1, &st, NULL) != SQLITE_OK)
    return db_error(h, "read run");
  sqlite3_bind_int64(st, 1, id);
  nnp_status s = NNP_OK;
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    int n = sqlite3_column_bytes(st, 0);
    const void *t = sqlite3_column_text(st, 0);
    *json = nnp_malloc((size_t)n + 1);
    if (!*json) s = nnp_error(NNP_ERR_NOMEM, "out of memory");
    else {
      memcpy(*json, t ? t : "", (size_t)n);
      (*json)[n] = 0;
      *len = (size_t)n;
    }
  } else if (rc == SQLITE_DONE) {
    s = nnp_error(NNP_ERR_INVALID, "history '%s' has no run %lld (nnperf history lists them)", h->path, (long long)id);
  } else {
    s = db_error(h, "read run");
  }
  sqlite3_finalize(st);
  return s;
}

nnp_status nnp_history_load(nnp_history *h, int64_t id, nnp_bench_result *out) {
  memset(out, 0, sizeof *out);
  char *json = NULL;
  size_t len = 0;
  NNP_TRY(nnp_history_export_json(h, id, &json, &len));
  char name[64];
  snprintf(name, sizeof name, "history run %lld", (long long)id);
  nnp_status s = nnp_result_load_buffer(json, len, name, out);
  nnp_free(json);
  return s;
}
