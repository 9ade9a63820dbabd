/* The session API: preference list, skip reasons, fallback on a load failure and on a
 * run failure (the fault backend injects both), and the plan cache behind native. */
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nnperf/bench.h"
#include "nnperf/session.h"
#include "test.h"

#include "model_builder.h"

static char g_dir[256], g_model[300];

typedef struct log_rec {
  int n;
  char backend[8][32];
  char reason[8][512];
} log_rec;

static void on_log(void *user, const char *backend, const char *reason) {
  log_rec *l = user;
  if (l->n < 8) {
    snprintf(l->backend[l->n], sizeof l->backend[0], "%s", backend);
    snprintf(l->reason[l->n], sizeof l->reason[0], "%s", reason);
  }
  l->n++;
}

static void write_model(const char *path) {
  static const int64_t xd[] = {1, 3, 6, 6}, wd[] = {4, 3, 3, 3};
  float w[108];
  for (int i = 0; i < 108; i++) w[i] = (float)((i * 37) % 19 - 9) / 9.0f;
  Onnx__ModelProto *m = mb_model(13);
  mb_input(m, "x", 1, 4, xd);
  mb_init_f32(m, "w", 4, wd, w);
  mb_node(m, "Conv", "conv", "x,w", "c");
  mb_node(m, "Relu", "relu", "c", "y");
  mb_output(m, "y", 1);
  mb_write_model(path, m);
  mb_reset();
}

/* Opens with the given list, runs once on seeded inputs, copies the output. */
static nnp_status open_run(const char *backends, const char *bopts, const char *cache, log_rec *l, char *served,
                           float *out, size_t *n, char *note) {
  nnp_session_options o;
  nnp_session_options_default(&o);
  o.backends = backends;
  o.backend_options = bopts;
  o.cache_dir = cache;
  o.log = on_log;
  o.log_user = l;
  memset(l, 0, sizeof *l);
  nnp_session *s = NULL;
  NNP_TRY(nnp_session_open(g_model, &o, &s));
  for (int i = 0; i < nnp_session_num_inputs(s); i++) nnp_fill_seeded(nnp_session_input(s, i), 5 + (uint64_t)i);
  nnp_status st = nnp_session_run(s);
  if (st == NNP_OK) {
    strcpy(served, nnp_session_backend(s));
    if (note) snprintf(note, 256, "%s", nnp_session_note(s));
    const nnp_tensor *y = nnp_session_output(s, 0);
    *n = (size_t)nnp_tensor_numel(y);
    memcpy(out, y->data, *n * sizeof(float));
  }
  nnp_session_close(s);
  return st;
}

int main(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/nnp_session_test.%d", (int)getpid());
  mkdir(g_dir, 0777);
  snprintf(g_model, sizeof g_model, "%s/model.onnx", g_dir);
  write_model(g_model);
  log_rec l;
  char served[32] = "", note[256];
  float ref[256], out[256];
  size_t n_ref = 0, n = 0;

  CHECK_OK(open_run("native", NULL, NULL, &l, served, ref, &n_ref, NULL));
  CHECK(!strcmp(served, "native") && l.n == 0 && n_ref == 64);

  /* load failure: fault fails to load, native serves, the reason is logged */
  CHECK_OK(open_run("fault,native", "fault:mode=load_error", NULL, &l, served, out, &n, NULL));
  CHECK(!strcmp(served, "native"));
  CHECK(l.n == 1 && !strcmp(l.backend[0], "fault") && strstr(l.reason[0], "injected load failure"));
  CHECK(n == n_ref && !memcmp(out, ref, n * sizeof(float)));

  /* run failure: fault loads, fails its first inference; native gets the same inputs */
  CHECK_OK(open_run("fault,native", "fault:mode=error,after=1", NULL, &l, served, out, &n, NULL));
  CHECK(!strcmp(served, "native"));
  CHECK_MSG(l.n == 1 && !strcmp(l.backend[0], "fault") && strstr(l.reason[0], "run failed"), "log: %d %s", l.n,
            l.reason[0]);
  CHECK(n == n_ref && !memcmp(out, ref, n * sizeof(float)));

  /* unknown names and external (Python worker) backends are skipped with a reason */
  CHECK_OK(open_run("nosuch,ort-cpu,native", NULL, NULL, &l, served, out, &n, NULL));
  CHECK(!strcmp(served, "native") && l.n == 2);
  CHECK(strstr(l.reason[0], "not a backend") && strstr(l.reason[1], "external"));

  /* nothing loads: an error naming the last reason */
  CHECK(open_run("fault", "fault:mode=load_error", NULL, &l, served, out, &n, NULL) == NNP_ERR_UNSUPPORTED);
  CHECK(strstr(nnp_last_error(), "injected load failure"));
  /* every backend fails to run */
  CHECK(open_run("fault", "fault:mode=error,after=1", NULL, &l, served, out, &n, NULL) != NNP_OK);

  /* the plan cache behind native: written, then hit, same outputs */
  char cache[300];
  snprintf(cache, sizeof cache, "%s/cache", g_dir);
  CHECK_OK(open_run("native", NULL, cache, &l, served, out, &n, note));
  CHECK_MSG(strstr(note, "plan cache: miss"), "note: %s", note);
  CHECK(n == n_ref && !memcmp(out, ref, n * sizeof(float)));
  CHECK_OK(open_run("fault,native", "fault:mode=load_error", cache, &l, served, out, &n, note));
  CHECK_MSG(strstr(note, "plan cache: hit"), "note: %s", note);
  CHECK(n == n_ref && !memcmp(out, ref, n * sizeof(float)));

  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
  TEST_MAIN_END();
}
