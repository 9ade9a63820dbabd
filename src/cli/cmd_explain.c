/* nnperf explain: where the native engine's speed comes from. Runs the same model under an
 * ablation ladder of engine options, each rung adding one optimisation to the one before,
 * and measures each in-process with the shared timing loop (src/bench/timing_loop.c), so
 * each optimisation's contribution is its rung's change. A rung whose optimisation this
 * build lacks says "not implemented" instead of repeating the previous rung's numbers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/timing_loop.h"
#include "cli/cli.h"
#include "cli/step_profile.h"
#include "nnperf/bench.h"
#include "nnperf/cost.h"
#include "nnperf/passes.h"
#include "nnperf/env.h"
#include "nnperf/stats.h"
#include "report/ladder.h"
#include "util/json_write.h"

#define FOLDING (NNP_PASS_FOLD_CONSTANTS | NNP_PASS_DEAD_NODES | NNP_PASS_NOOPS | NNP_PASS_FOLD_BATCHNORM)
#define FUSION (NNP_PASS_FUSE_ACTIVATION | NNP_PASS_FUSE_RESIDUAL | NNP_PASS_FUSE_ELEMENTWISE | NNP_PASS_FUSE_QDQ)

typedef struct rung {
  const char *name;
  /* false: the engine ignores this rung's switch in this build (prints "not
   * implemented"); every rung is implemented now, blocked layout included */
  bool implemented;
  void (*apply)(nnp_plan_options *o, int threads);
} rung;

static void r_naive(nnp_plan_options *o, int t) {
  (void)t;
  o->passes = 0;
  o->memory_plan = false;
  o->fast_kernels = false;
  o->threads = 1;
  o->batch_lanes = false;
}
static void r_fold(nnp_plan_options *o, int t) { (void)t; o->passes |= FOLDING; }
static void r_fuse(nnp_plan_options *o, int t) { (void)t; o->passes |= FUSION; }
static void r_mem(nnp_plan_options *o, int t) { (void)t; o->memory_plan = true; }
static void r_fast(nnp_plan_options *o, int t) { (void)t; o->fast_kernels = true; }
static void r_blocked(nnp_plan_options *o, int t) { (void)t; o->passes |= NNP_PASS_BLOCKED_LAYOUT; }
/* threads: each layer split across them at batch 1, whole images per thread (batch
 * lanes, engine/batch_lanes.h) at batch > 1 */
static void r_threads(nnp_plan_options *o, int t) {
  o->threads = t;
  o->batch_lanes = true;
}

static const rung rungs[] = {
    {"naive", true, r_naive},
    {"+folding", true, r_fold},
    {"+fusion", true, r_fuse},
    {"+memory plan", true, r_mem},
    {"+fast kernels", true, r_fast},
    {"+blocked layout", true, r_blocked},
    {"+threads", true, r_threads},
};
#define N_RUNGS ((int)(sizeof rungs / sizeof rungs[0]))

typedef struct rung_result {
  bool measured;
  double p50, p99;
  size_t activation_bytes;
  int steps;
  int64_t bytes_moved;
  step_profile *prof; /* the last rung's, with --profile */
} rung_result;

typedef struct samples {
  double *x;
  int n, cap;
} samples;

static void sink(void *ud, double s) {
  samples *sm = ud;
  if (sm->n == sm->cap) {
    int nc = sm->cap ? 2 * sm->cap : 256;
    double *nx = realloc(sm->x, sizeof *nx * (size_t)nc);
    if (!nx) return; /* a dropped sample only shrinks the statistics */
    sm->x = nx;
    sm->cap = nc;
  }
  sm->x[sm->n++] = s;
}

static nnp_status infer_once(void *ctx) { return nnp_plan_run(ctx); }

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void count_steps(nnp_plan *p, rung_result *r) {
  r->steps = nnp_plan_num_steps(p);
  for (int s = 0; s < r->steps; s++) {
    const nnp_node *n = nnp_plan_step_node(p, s);
    for (int k = 0; k < n->n_inputs; k++) {
      const nnp_tensor *t = nnp_plan_value(p, n->inputs[k]);
      if (t) r->bytes_moved += (int64_t)nnp_tensor_nbytes(t);
    }
    for (int k = 0; k < n->n_outputs; k++) {
      const nnp_tensor *t = nnp_plan_value(p, n->outputs[k]);
      if (t) r->bytes_moved += (int64_t)nnp_tensor_nbytes(t);
    }
  }
}

/* Rungs are measured interleaved: `rounds` rounds, each running the timing loop for every
 * rung in turn (a short warm-up, then iterations/rounds samples), so slow drift of a busy
 * machine (thermal, other load) spreads over all rungs instead of favouring the first. */
static nnp_status measure_all(nnp_plan **plans, const nnp_loop_spec *spec, int rounds, bool prof, rung_result *res) {
  samples sm[N_RUNGS];
  memset(sm, 0, sizeof sm);
  nnp_loop_spec round_spec = *spec;
  round_spec.iterations = (spec->iterations + rounds - 1) / rounds;
  round_spec.max_time_s = spec->max_time_s / rounds;
  nnp_status s = NNP_OK;
  for (int r = 0; r < rounds && s == NNP_OK; r++)
    for (int k = 0; k < N_RUNGS && s == NNP_OK; k++) {
      if (!plans[k]) continue;
      nnp_loop_outcome oc;
      s = nnp_timing_loop(&round_spec, NULL, infer_once, plans[k], sink, &sm[k], &oc);
      if (s != NNP_OK) s = nnp_error_context(s, "rung '%s'", rungs[k].name);
    }
  for (int k = 0; k < N_RUNGS && s == NNP_OK; k++) {
    if (!plans[k]) continue;
    rung_result *r = &res[k];
    if (sm[k].n == 0) {
      s = nnp_error(NNP_ERR_INTERNAL, "rung '%s': the timing loop took no samples", rungs[k].name);
      break;
    }
    qsort(sm[k].x, (size_t)sm[k].n, sizeof *sm[k].x, cmp_double);
    r->p50 = nnp_percentile_sorted(sm[k].x, sm[k].n, 0.50);
    r->p99 = nnp_percentile_sorted(sm[k].x, sm[k].n, 0.99);
    r->activation_bytes = nnp_plan_memory_stats(plans[k])->planned;
    count_steps(plans[k], r);
    r->measured = true;
  }
  int last = N_RUNGS - 1;
  while (last > 0 && !plans[last]) last--;
  if (prof && s == NNP_OK && plans[last]) {
    res[last].prof = malloc(sizeof *res[last].prof);
    s = res[last].prof ? step_profile_measure(plans[last], spec->iterations < 5 ? spec->iterations : 5, res[last].prof)
                       : nnp_error(NNP_ERR_NOMEM, "out of memory for the profile");
  }
  for (int k = 0; k < N_RUNGS; k++) free(sm[k].x);
  return s;
}

/* Rungs slower than the one before them, and a busy machine, said as bench says them. */
static void print_backwards(const rung_result *res) {
  double p50[N_RUNGS];
  int prev[N_RUNGS];
  for (int k = 0; k < N_RUNGS; k++) p50[k] = res[k].measured ? res[k].p50 : 0;
  int n = nnp_ladder_backwards(p50, N_RUNGS, 0.05, prev);
  for (int k = 0; k < N_RUNGS && n; k++)
    if (prev[k] >= 0)
      printf("note: '%s' (%.3f ms) is slower than '%s' before it (%.3f ms): that step costs here, or the machine "
             "changed speed\n", rungs[k].name, p50[k] * 1e3, rungs[prev[k]].name, p50[prev[k]] * 1e3);
  nnp_env env;
  nnp_env_capture(&env);
  if (nnp_env_is_busy(&env))
    printf("NOISY: load %.2f on %d CPUs: rungs may differ by the machine, not the optimisation; rerun on a quiet "
           "machine\n", env.loadavg1, env.cpus_allowed > 0 ? env.cpus_allowed : env.cpus_online);
}

static void print_table(const char *model, const rung_result *res, bool prof) {
  printf("model %s\n\n%-16s %10s %10s %8s %12s %7s %12s\n", model, "rung", "P50 ms", "P99 ms", "vs naive",
         "activations", "kernels", "bytes moved");
  for (int k = 0; k < N_RUNGS; k++) {
    if (!res[k].measured) {
      printf("%-16s %s\n", rungs[k].name, "not implemented");
      continue;
    }
    printf("%-16s %10.3f %10.3f %7.2fx %10.2f MiB %7d %8.2f MiB\n", rungs[k].name, res[k].p50 * 1e3,
           res[k].p99 * 1e3, res[k].p50 > 0 ? res[0].p50 / res[k].p50 : 0.0,
           (double)res[k].activation_bytes / 1048576.0, res[k].steps, (double)res[k].bytes_moved / 1048576.0);
  }
  print_backwards(res);
  for (int k = 0; prof && k < N_RUNGS; k++)
    if (res[k].prof) {
      printf("\nprofile of rung '%s'", rungs[k].name);
      step_profile_print(res[k].prof);
    }
}

static void print_json(const char *model, const rung_result *res, bool prof) {
  printf("{\n  \"model\": ");
  nnp_json_string(stdout, model);
  printf(",\n  \"rungs\": [");
  for (int k = 0; k < N_RUNGS; k++) {
    const rung_result *r = &res[k];
    printf("%s\n    {\"name\": ", k ? "," : "");
    nnp_json_string(stdout, rungs[k].name);
    if (!r->measured) {
      printf(", \"implemented\": false}");
      continue;
    }
    printf(", \"implemented\": true, \"p50_s\": ");
    nnp_json_number(stdout, r->p50);
    printf(", \"p99_s\": ");
    nnp_json_number(stdout, r->p99);
    printf(", \"activation_bytes\": %zu, \"kernels\": %d, \"bytes_moved\": %lld", r->activation_bytes, r->steps,
           (long long)r->bytes_moved);
    if (prof && r->prof) {
      printf(", ");
      step_profile_json(r->prof);
    }
    printf("}");
  }
  printf("\n  ]\n}\n");
}

static const char help[] =
    "usage: nnperf explain MODEL [options]\n\n"
    "Measures MODEL with the native engine under an ablation ladder: naive (reference\n"
    "kernels, no passes, a buffer per value), then +folding, +fusion, +memory plan, +fast\n"
    "kernels, +blocked layout, +threads, each rung adding one optimisation. Each rung shows\n"
    "P50 and P99 latency, activation memory, kernel (step) count and bytes moved (the sum\n"
    "of every step's input and output bytes). Rungs this build lacks say 'not implemented'.\n\n"
    "options:\n"
    "  --iterations N         steady-state iterations per rung (default 20), taken in up to 5\n"
    "                         rounds that alternate the rungs (drift hits every rung alike)\n"
    "  --time SECONDS         cap of each rung's steady state (default 10)\n"
    "  --threads N            threads of the +threads rung (default 2)\n"
    "  --profile              time per op type and per kernel (each step timed alone) of the\n"
    "                         last rung, layout conversions and reference-kernel steps\n"
    "  --json                 JSON instead of the table\n";

int nnp_cmd_explain(int argc, char **argv) {
  cli_model_opts mo;
  cli_model_opts_init(&mo);
  bool json = false, prof = false;
  int iterations = 20, threads = 2;
  double max_time = 10.0;
  for (int i = 1; i < argc; i++) {
    int r = cli_model_option(&mo, "explain", argc, argv, &i);
    if (r < 0) return CLI_USAGE;
    if (r > 0) continue;
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      printf("%s%s", help, cli_model_options_help);
      return CLI_OK;
    } else if (!strcmp(a, "--json")) json = true;
    else if (!strcmp(a, "--profile")) prof = true;
    else if ((!strcmp(a, "--iterations") || !strcmp(a, "--threads") || !strcmp(a, "--time")) && i + 1 < argc) {
      char *end;
      double v = strtod(argv[++i], &end);
      if (*end || v <= 0 || v > 1e6) return cli_usage_error("explain", "%s wants a positive number, not '%s'", a, argv[i]);
      if (!strcmp(a, "--iterations")) iterations = (int)v;
      else if (!strcmp(a, "--threads")) threads = (int)v;
      else max_time = v;
    } else if (a[0] == '-') return cli_usage_error("explain", "unknown option or missing value '%s'", a);
    else if (!mo.model) mo.model = a;
    else return cli_usage_error("explain", "more than one model given");
  }
  if (!mo.model) return cli_usage_error("explain", "no model given");
  nnp_graph *g = NULL;
  if (cli_load_graph(&mo, &g) != NNP_OK) return cli_fail(NULL);
  cli_apply_batch(&mo, g);
  nnp_loop_spec spec;
  nnp_loop_spec_default(&spec);
  spec.warmup_min = 1; /* per round: the first round's warm-up also warms the later ones */
  spec.warmup_max = 2;
  spec.warmup_window = 1;
  spec.warmup_max_time_s = max_time;
  spec.iterations = iterations;
  spec.min_time_s = 0;
  spec.max_time_s = max_time;
  rung_result *res = calloc(N_RUNGS, sizeof *res);
  nnp_plan *plans[N_RUNGS] = {0};
  int rc = CLI_OK;
  nnp_plan_options po = mo.plan;
  for (int k = 0; k < N_RUNGS && res; k++) {
    rungs[k].apply(&po, threads);
    if (!rungs[k].implemented) continue;
    if (nnp_plan_compile(g, &po, &plans[k]) != NNP_OK) {
      rc = cli_fail(rungs[k].name);
      break;
    }
    for (int i = 0; i < nnp_plan_num_inputs(plans[k]); i++)
      nnp_fill_seeded(nnp_plan_input(plans[k], i), 1 + (uint64_t)i);
  }
  if (res && rc == CLI_OK && measure_all(plans, &spec, iterations < 5 ? iterations : 5, prof, res) != NNP_OK)
    rc = cli_fail(NULL);
  for (int k = 0; k < N_RUNGS; k++) nnp_plan_destroy(plans[k]);
  if (!res) rc = cli_fail("out of memory");
  else if (rc == CLI_OK) (json ? print_json : print_table)(mo.model, res, prof);
  for (int k = 0; res && k < N_RUNGS; k++) free(res[k].prof);
  free(res);
  nnp_graph_destroy(g);
  return rc;
}
