/* The native backend: nnperf's own engine behind the backend vtable. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/dispatch.h"
#include "nnperf/alloc.h"
#include "nnperf/backend.h"
#include "nnperf/onnx.h"
#include "nnperf/plan_cache.h"

#ifndef NNP_VERSION
#define NNP_VERSION "0.1.0"
#endif

/* Dynamic-shape scenarios: the engine compiles a plan per input shape; the most recent
 * NATIVE_PLAN_CACHE plans are kept, so a shape seen again costs a lookup only. */
#define NATIVE_PLAN_CACHE 8

typedef struct cached_plan {
  nnp_plan *plan;
  int input, rank;
  int64_t dims[NNP_MAX_RANK];
  uint64_t last_used;
} cached_plan;

typedef struct native_state {
  nnp_cached_plan loaded; /* the load-time plan and the graph it borrows (plan cache) */
  nnp_graph *g;           /* the graph reshape compiles from: the parsed ONNX model */
  nnp_graph *onnx_g;      /* parsed on the first reshape after a plan-cache hit (the
                           * cached graph is already rewritten by the passes) */
  char model_path[4096];
  char cache_dir[4096];   /* cache_dir=DIR: the native plan cache (docs/plan-cache.md) */
  nnp_plan *plan; /* current: the static plan, or one of cache[] */
  nnp_plan_options base;
  cached_plan cache[NATIVE_PLAN_CACHE];
  uint64_t tick;
  double delay_pct; /* test-only: "delay_pct=10" makes every inference 10% slower */
} native_state;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Whether the current plan is one of the cached ones (else it is the load-time plan). */
static int current_is_cached(const native_state *s) {
  for (int k = 0; k < NATIVE_PLAN_CACHE; k++)
    if (s->cache[k].plan == s->plan) return 1;
  return 0;
}

static nnp_status native_probe(char *version, size_t n) {
  snprintf(version, n, "nnperf %s (kernels: %s)", NNP_VERSION, nnp_cpu_kernel_isa());
  return NNP_OK;
}

/* --backend-options native:kernels=reference|fast: the reference kernels are the
 * oracle, and timing them beside the fast ones shows what the kernels bring. */
static void native_unload(void *state) {
  native_state *s = state;
  if (!s) return;
  if (!current_is_cached(s) && s->plan != s->loaded.plan) nnp_plan_destroy(s->plan);
  for (int k = 0; k < NATIVE_PLAN_CACHE; k++) nnp_plan_destroy(s->cache[k].plan);
  nnp_cached_plan_destroy(&s->loaded); /* after the plans that borrow its graph */
  nnp_graph_destroy(s->onnx_g);
  nnp_free(s);
}

/* Backend options (comma-separated): passes=BITS (NNP_PASS_* mask, as nnperf bench writes
 * it from --passes), memory_plan=0|1, batch_lanes=0|1 (engine/batch_lanes.h),
 * kernels=fast|reference, and the test-only
 * delay_pct=P (each inference busy-waits P % of its own time: how tests show that
 * nnperf compare detects a known regression). Anything else is an error, so a typo
 * never silently measures the wrong configuration. */
static nnp_status native_options(const char *opts, nnp_plan_options *o, double *delay_pct, char *cache_dir,
                                 size_t cache_dir_size) {
  for (const char *p = opts ? opts : ""; *p;) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    char *end = (char *)p;
    if (!strncmp(p, "passes=", 7)) o->passes = (unsigned)strtoul(p + 7, &end, 0);
    else if (!strncmp(p, "cache_dir=", 10)) {
      if (len == 10 || len - 10 >= cache_dir_size)
        return nnp_error(NNP_ERR_INVALID, "native: cache_dir wants a folder path (under %zu bytes)", cache_dir_size);
      snprintf(cache_dir, cache_dir_size, "%.*s", (int)len - 10, p + 10);
      end = (char *)p + len;
    } else if (!strncmp(p, "memory_plan=", 12)) o->memory_plan = strtol(p + 12, &end, 10) != 0;
    else if (!strncmp(p, "batch_lanes=auto", 16) && (p[16] == ',' || !p[16])) o->batch_lanes = NNP_LANES_AUTO, end = (char *)p + 16;
    else if (!strncmp(p, "batch_lanes=", 12)) o->batch_lanes = strtol(p + 12, &end, 10) != 0 ? NNP_LANES_ON : NNP_LANES_OFF;
    else if (!strncmp(p, "delay_pct=", 10)) {
      *delay_pct = strtod(p + 10, &end);
      if (end == p + len && (*delay_pct < 0 || *delay_pct > 1000))
        return nnp_error(NNP_ERR_INVALID, "native: delay_pct must be 0..1000, not '%.*s'", (int)len - 10, p + 10);
    } else if (!strncmp(p, "kernels=", 8)) {
      if (len == 17 && !strncmp(p, "kernels=reference", 17)) o->fast_kernels = false;
      else if (len == 12 && !strncmp(p, "kernels=fast", 12)) o->fast_kernels = true;
      else return nnp_error(NNP_ERR_INVALID, "native: kernels must be fast or reference, not '%.*s'", (int)len - 8, p + 8);
      end = (char *)p + len;
    } else
      return nnp_error(NNP_ERR_INVALID,
                       "native: unknown option '%.*s' (known: passes=, memory_plan=, batch_lanes=, kernels=fast|reference, cache_dir=, delay_pct=)",
                       (int)len, p);
    if (end != p + len) return nnp_error(NNP_ERR_INVALID, "native: bad value in option '%.*s'", (int)len, p);
    p += len + (e ? 1 : 0);
  }
  return NNP_OK;
}

/* Appends "; PART" (or PART when the note is empty) to the load note. */
static void note_add(nnp_load_report *rep, const char *part) {
  size_t nl = strlen(rep->note);
  snprintf(rep->note + nl, sizeof rep->note - nl, "%s%s", nl ? "; " : "", part);
}

/* Which INT8 kernels the plan's quantized steps run, by the ISA their kernel names end
 * in ("qlinearconv.im2col.avx2": avx2), and where AMX stands: a reader of an int8 row
 * learns what ran without the profile. Nothing when the plan has no INT8 step. */
static void note_int8_kernels(const nnp_plan *p, nnp_load_report *rep) {
  static const char *const isa[] = {"avx512vnni", "avx2", "generic", "reference"};
  int count[4] = {0}, any = 0;
  for (int s = 0; s < nnp_plan_num_steps(p); s++) {
    const char *op = nnp_plan_step_node(p, s)->op_type;
    if (strcmp(op, "QLinearConv") && strcmp(op, "QGemm") && strcmp(op, "QLinearAdd")) continue;
    const char *k = nnp_plan_step_kernel(p, s), *dot = strrchr(k, '.');
    for (int i = 0; i < 4; i++)
      if (!strcmp(dot ? dot + 1 : k, isa[i])) count[i]++, any++;
  }
  if (!any) return;
  char part[200];
  int at = snprintf(part, sizeof part, "int8 kernels:");
  for (int i = 0; i < 4; i++)
    if (count[i] && at < (int)sizeof part) at += snprintf(part + at, sizeof part - at, " %s x%d", isa[i], count[i]);
  const char *why;
  nnp_cpu_amx_status(&why);
  if (at < (int)sizeof part) snprintf(part + at, sizeof part - at, " (AMX %.100s)", why);
  note_add(rep, part);
}

static nnp_status native_load(const nnp_backend_config *cfg, void **state, nnp_load_report *rep) {
  if (cfg->precision != NNP_FP32 && cfg->precision != NNP_PREC_BF16)
    return nnp_error(NNP_ERR_UNSUPPORTED,
                     "the native engine runs fp32 and bf16 (int8 comes from a QDQ model: --int8-model; asked for %s)",
                     nnp_precision_name(cfg->precision));
  native_state *s = nnp_calloc(1, sizeof *s);
  if (!s) return nnp_error(NNP_ERR_NOMEM, "out of memory");
  snprintf(s->model_path, sizeof s->model_path, "%s", cfg->model_path);
  nnp_plan_options_default(&s->base);
  s->base.threads = cfg->threads > 0 ? cfg->threads : 1;
  s->base.bf16 = cfg->precision == NNP_PREC_BF16;
  nnp_status st = native_options(cfg->options, &s->base, &s->delay_pct, s->cache_dir, sizeof s->cache_dir);
  s->base.n_shapes = cfg->n_shapes;
  memcpy(s->base.shapes, cfg->shapes, sizeof s->base.shapes);
  /* parsing and compiling are not separable through the cache (a hit skips the parse):
   * without a cache they are timed apart as before */
  double t0 = now_s(), t1 = t0;
  if (st == NNP_OK && s->cache_dir[0]) {
    st = nnp_plan_cache_compile(s->cache_dir, cfg->model_path, &s->base, &s->loaded);
    t1 = now_s();
  } else if (st == NNP_OK) {
    st = nnp_onnx_load(cfg->model_path, NULL, &s->loaded.graph);
    t1 = now_s();
    if (st == NNP_OK) st = nnp_plan_compile(s->loaded.graph, &s->base, &s->loaded.plan);
  }
  if (st != NNP_OK) {
    native_unload(s);
    return st;
  }
  s->plan = s->loaded.plan;
  if (s->loaded.outcome != NNP_PLAN_CACHE_HIT) s->g = s->loaded.graph;
  if (s->cache_dir[0]) {
    rep->parse_s = -1;
    rep->compile_s = t1 - t0;
  } else {
    rep->parse_s = t1 - t0;
    rep->compile_s = now_s() - t1;
  }
  rep->threads_used = nnp_plan_threads(s->plan);
  static const char *const outcome[] = {"off", "hit", "miss (written)", "rebuilt, the file was corrupt or stale: "};
  snprintf(rep->note, sizeof rep->note, "kernels: %s%s%s%.120s", s->base.fast_kernels ? nnp_cpu_kernel_isa() : "reference",
           s->cache_dir[0] ? "; plan cache: " : "", s->cache_dir[0] ? outcome[s->loaded.outcome] : "",
           s->loaded.outcome == NNP_PLAN_CACHE_REBUILT ? s->loaded.reason : "");
  if (nnp_plan_batch_lanes(s->plan) > 0) { /* engine/batch_lanes.h: the batch runs image by image */
    size_t nl = strlen(rep->note);
    snprintf(rep->note + nl, sizeof rep->note - nl, "; batch lanes: %d", nnp_plan_batch_lanes(s->plan));
  }
  note_int8_kernels(s->plan, rep);
  if (s->base.bf16) /* say what this CPU computed: AMX-BF16 would be the fast path */
    note_add(rep, nnp_cpu_dispatch_get()->amx_bf16 ? "bf16: operands rounded to bf16, fp32 sums, on fp32 kernels (AMX-BF16 present, no AMX kernel yet)"
                                          : "bf16: operands rounded to bf16, fp32 sums, on fp32 kernels (no AMX-BF16 here)");
  if (s->delay_pct > 0) {
    size_t nl = strlen(rep->note);
    snprintf(rep->note + nl, sizeof rep->note - nl, "; test-only delay of %g%% injected", s->delay_pct);
  }
  *state = s;
  return NNP_OK;
}

static int native_num_inputs(void *st) { return nnp_plan_num_inputs(((native_state *)st)->plan); }
static const char *native_input_name(void *st, int i) { return nnp_plan_input_name(((native_state *)st)->plan, i); }
static nnp_tensor *native_input(void *st, int i) { return nnp_plan_input(((native_state *)st)->plan, i); }
static nnp_status native_run(void *st) {
  native_state *s = st;
  if (!(s->delay_pct > 0)) return nnp_plan_run(s->plan);
  double t0 = now_s();
  nnp_status rs = nnp_plan_run(s->plan);
  double until = t0 + (now_s() - t0) * (1 + s->delay_pct / 100);
  while (now_s() < until) { /* busy, like compute: a sleep would give the CPU away */
  }
  return rs;
}

static nnp_status native_reshape(void *st, int i, int rank, const int64_t *dims) {
  native_state *s = st;
  if (!s->g) { /* plan-cache hit: reshape compiles from the model itself */
    NNP_TRY(nnp_onnx_load(s->model_path, NULL, &s->onnx_g));
    s->g = s->onnx_g;
  }
  if (i < 0 || i >= s->g->n_inputs) return nnp_error(NNP_ERR_INVALID, "input index %d out of range", i);
  s->tick++;
  int victim = 0;
  for (int k = 0; k < NATIVE_PLAN_CACHE; k++) {
    cached_plan *c = &s->cache[k];
    if (c->plan && c->input == i && c->rank == rank && !memcmp(c->dims, dims, sizeof(int64_t) * (size_t)rank)) {
      c->last_used = s->tick;
      s->plan = c->plan;
      return NNP_OK;
    }
    if (!c->plan || c->last_used < s->cache[victim].last_used) victim = k;
  }
  /* a miss: compile for this shape (the static plan from load is replaced too) */
  if (!current_is_cached(s)) {
    if (s->plan == s->loaded.plan) s->loaded.plan = NULL;
    nnp_plan_destroy(s->plan);
    s->plan = NULL;
  }
  cached_plan *c = &s->cache[victim];
  if (c->plan == s->plan) s->plan = NULL;
  nnp_plan_destroy(c->plan);
  memset(c, 0, sizeof *c);
  nnp_plan_options po = s->base;
  const char *name = s->g->values[s->g->inputs[i]].name;
  NNP_TRY(nnp_plan_options_bind_shape(&po, name, rank, dims));
  NNP_TRY(nnp_plan_compile(s->g, &po, &c->plan));
  c->input = i;
  c->rank = rank;
  memcpy(c->dims, dims, sizeof(int64_t) * (size_t)rank);
  c->last_used = s->tick;
  s->plan = c->plan;
  return NNP_OK;
}
static int native_num_outputs(void *st) { return nnp_plan_num_outputs(((native_state *)st)->plan); }
static const char *native_output_name(void *st, int i) { return nnp_plan_output_name(((native_state *)st)->plan, i); }
static const nnp_tensor *native_output(void *st, int i) { return nnp_plan_output(((native_state *)st)->plan, i); }

const nnp_backend_vtable nnp_backend_native = {
    .name = "native",
    .description = "nnperf's own C engine (CPUID-selected fast kernels; native:kernels=reference)",
    .install_hint = "built in",
    .probe = native_probe,
    .load = native_load,
    .num_inputs = native_num_inputs,
    .input_name = native_input_name,
    .input = native_input,
    .reshape = native_reshape,
    .run = native_run,
    .num_outputs = native_num_outputs,
    .output_name = native_output_name,
    .output = native_output,
    .unload = native_unload,
};
