/* The native plan cache: a round trip gives bit-identical outputs to the uncached plan,
 * and a corrupt (flipped byte, truncated), stale (other format version, other nnperf
 * version) or foreign (other key) file is detected, warned about and rebuilt. */
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nnperf/engine.h"
#include "nnperf/plan_cache.h"
#include "nnperf/bench.h"
#include "test.h"

#include "model_builder.h"

static char g_dir[256], g_model[300];

static float *weights(size_t n, uint64_t seed) {
  float *w = mb_alloc(n * sizeof *w);
  for (size_t i = 0; i < n; i++) w[i] = (float)((nnp_mix64(seed * 1000003u + i) >> 40) / (double)(1 << 24)) * 2 - 1;
  return w;
}

/* Conv+Relu (fused), Conv+Add (residual), a chain of elementwise ops, Flatten, Gemm,
 * Sigmoid: every pass has something to rewrite, so the cached graph holds internal ops. */
static void write_model(const char *path) {
  static const int64_t xd[] = {1, 3, 8, 8}, wd[] = {3, 3, 3, 3}, w2d[] = {3, 3, 1, 1}, bd[] = {3}, gd[] = {5, 108},
                       cd[] = {5};
  Onnx__ModelProto *m = mb_model(13);
  mb_input(m, "x", 1, 4, xd);
  mb_init_f32(m, "w1", 4, wd, weights(81, 1));
  mb_init_f32(m, "b1", 1, bd, weights(3, 2));
  mb_init_f32(m, "w2", 4, w2d, weights(9, 3));
  mb_init_f32(m, "g", 2, gd, weights(540, 4));
  mb_init_f32(m, "c", 1, cd, weights(5, 5));
  mb_node(m, "Conv", "conv1", "x,w1,b1", "a");
  mb_node(m, "Relu", "relu1", "a", "r");
  mb_node(m, "Conv", "conv2", "r,w2", "a2");
  mb_node(m, "Add", "res", "a2,r", "s");
  mb_node(m, "Tanh", "t", "s", "t1");
  mb_node(m, "Neg", "n", "t1", "t2");
  mb_node(m, "Flatten", "flat", "t2", "f");
  mb_attr_int(mb_node(m, "Gemm", "fc", "f,g,c", "h"), "transB", 1);
  mb_node(m, "Sigmoid", "sig", "h", "y");
  mb_output(m, "y", 1);
  mb_write_model(path, m);
  mb_reset();
}

static void run_plan(nnp_plan *p, float *out, size_t *n) {
  for (int i = 0; i < nnp_plan_num_inputs(p); i++) nnp_fill_seeded(nnp_plan_input(p, i), 11 + (uint64_t)i);
  CHECK_OK(nnp_plan_run(p));
  const nnp_tensor *y = nnp_plan_output(p, 0);
  *n = (size_t)nnp_tensor_numel(y);
  memcpy(out, y->data, *n * sizeof(float));
}

/* Compiles through the cache, checks the outcome and that outputs equal ref bit for bit. */
static void through_cache(nnp_plan_cache_outcome want, const float *ref, size_t n_ref, const char *what) {
  nnp_plan_options o;
  nnp_plan_options_default(&o);
  nnp_cached_plan cp;
  nnp_status s = nnp_plan_cache_compile(g_dir, g_model, &o, &cp);
  CHECK_MSG(s == NNP_OK, "%s: %s", what, nnp_last_error());
  if (s != NNP_OK) return;
  CHECK_MSG(cp.outcome == want, "%s: outcome %d, want %d", what, (int)cp.outcome, (int)want);
  float out[64];
  size_t n = 0;
  run_plan(cp.plan, out, &n);
  CHECK_MSG(n == n_ref && !memcmp(out, ref, n * sizeof(float)), "%s: outputs differ from the uncached plan", what);
  nnp_cached_plan_destroy(&cp);
}

static unsigned char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  *n = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *b = malloc(*n);
  if (fread(b, 1, *n, f) != *n) *n = 0;
  fclose(f);
  return b;
}
static void spit(const char *path, const void *b, size_t n) {
  FILE *f = fopen(path, "wb");
  fwrite(b, 1, n, f);
  fclose(f);
}

int main(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/nnp_plan_cache_test.%d", (int)getpid());
  mkdir(g_dir, 0777);
  snprintf(g_model, sizeof g_model, "%s/model.onnx", g_dir);
  write_model(g_model);

  /* reference: the plan compiled straight from the model, every pass on */
  float ref[64];
  size_t n_ref = 0;
  {
    nnp_plan_options o;
    nnp_plan_options_default(&o);
    nnp_cached_plan cp;
    CHECK_OK(nnp_plan_cache_compile(NULL, g_model, &o, &cp));
    CHECK(cp.outcome == NNP_PLAN_CACHE_OFF);
    int internal = 0;
    const nnp_graph *g = nnp_plan_graph(cp.plan);
    for (int i = 0; i < g->n_nodes; i++) internal += !strcmp(g->nodes[i].domain, "com.nnperf");
    CHECK_MSG(internal > 0, "the passes made no internal op: the test would not exercise them");
    run_plan(cp.plan, ref, &n_ref);
    nnp_cached_plan_destroy(&cp);
  }
  CHECK(n_ref == 5);

  through_cache(NNP_PLAN_CACHE_WRITTEN, ref, n_ref, "first (cold) load");
  through_cache(NNP_PLAN_CACHE_HIT, ref, n_ref, "second (warm) load");

  char key[NNP_PLAN_CACHE_KEY_MAX], path[4200];
  nnp_plan_options o;
  nnp_plan_options_default(&o);
  CHECK_OK(nnp_plan_cache_key(g_model, &o, key, sizeof key));
  CHECK_OK(nnp_plan_cache_path(g_dir, key, path, sizeof path));
  size_t len = 0;
  unsigned char *good = slurp(path, &len);
  CHECK(good && len > 96);
  if (!good) return 1;

  /* a flipped byte anywhere (header, key, body, weights) */
  size_t where[] = {3, 40, 100, len / 2, len - 1};
  for (size_t k = 0; k < sizeof where / sizeof where[0]; k++) {
    unsigned char *bad = malloc(len);
    memcpy(bad, good, len);
    bad[where[k]] ^= 0x20;
    spit(path, bad, len);
    free(bad);
    char what[64];
    snprintf(what, sizeof what, "byte %zu flipped", where[k]);
    through_cache(NNP_PLAN_CACHE_REBUILT, ref, n_ref, what);
    through_cache(NNP_PLAN_CACHE_HIT, ref, n_ref, "after the rebuild");
  }
  /* truncated: half the file, and the header alone */
  spit(path, good, len / 2);
  through_cache(NNP_PLAN_CACHE_REBUILT, ref, n_ref, "truncated to half");
  spit(path, good, 10);
  through_cache(NNP_PLAN_CACHE_REBUILT, ref, n_ref, "truncated to 10 bytes");
  /* the parser names each reason */
  {
    nnp_graph *g = NULL;
    CHECK(nnp_plan_cache_parse(good, len - 1, key, &g) == NNP_ERR_FORMAT && !g);
    CHECK(strstr(nnp_last_error(), "truncated"));
    unsigned char *v = malloc(len);
    memcpy(v, good, len);
    v[8] = 99; /* format version */
    CHECK(nnp_plan_cache_parse(v, len, key, &g) == NNP_ERR_FORMAT && strstr(nnp_last_error(), "format version"));
    memcpy(v, good, len);
    v[32] = 'X'; /* nnperf version */
    CHECK(nnp_plan_cache_parse(v, len, key, &g) == NNP_ERR_FORMAT && strstr(nnp_last_error(), "written by nnperf"));
    memcpy(v, good, len);
    v[200] ^= 1;
    CHECK(nnp_plan_cache_parse(v, len, key, &g) == NNP_ERR_FORMAT && strstr(nnp_last_error(), "checksum"));
    CHECK(nnp_plan_cache_parse(good, len, "another key", &g) == NNP_ERR_FORMAT && strstr(nnp_last_error(), "key differs"));
    CHECK_OK(nnp_plan_cache_parse(good, len, key, &g));
    nnp_plan_cache_graph_destroy(g, good, len);
    /* an other version, rewritten with a valid checksum, still goes through the cache */
    spit(path, v, 0);
    free(v);
  }
  through_cache(NNP_PLAN_CACHE_REBUILT, ref, n_ref, "empty file");
  /* wrong key: a valid file written for another pass set, put at this key's path */
  {
    nnp_plan_options o2 = o;
    o2.passes &= ~(unsigned)NNP_PASS_FUSE_ELEMENTWISE;
    char key2[NNP_PLAN_CACHE_KEY_MAX], path2[4200];
    CHECK_OK(nnp_plan_cache_key(g_model, &o2, key2, sizeof key2));
    CHECK(strcmp(key, key2) != 0);
    CHECK_OK(nnp_plan_cache_path(g_dir, key2, path2, sizeof path2));
    CHECK(strcmp(path, path2) != 0);
    nnp_cached_plan cp;
    CHECK_OK(nnp_plan_cache_compile(g_dir, g_model, &o2, &cp));
    nnp_cached_plan_destroy(&cp);
    CHECK(rename(path2, path) == 0);
    through_cache(NNP_PLAN_CACHE_REBUILT, ref, n_ref, "file of another key");
  }
  /* a changed model file changes the key */
  {
    char key3[NNP_PLAN_CACHE_KEY_MAX];
    FILE *f = fopen(g_model, "ab");
    fputc(0, f);
    fclose(f);
    CHECK_OK(nnp_plan_cache_key(g_model, &o, key3, sizeof key3));
    CHECK(strcmp(key, key3) != 0);
  }
  free(good);
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
  TEST_MAIN_END();
}
