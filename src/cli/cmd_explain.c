/* nnperf explain: where the native engine's speed comes from. Runs the same model under an
 * ablation ladder of engine options, each rung adding one optimisation to the one before.
 * The rungs are variants of the native backend in one sweep (nnperf/sweep.h): each rung
 * of each round is a row measured in a fresh worker process, rounds alternating the rungs
 * so that drift on a busy machine hits every rung alike; a rung's latency pools its
 * rounds' samples. The rungs' plans are also compiled here, for what a plan says without
 * timing (activation memory, steps, bytes moved) and for --profile. A rung whose
 * optimisation this build lacks says "not implemented" instead of repeating the previous
 * rung's numbers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/step_profile.h"
#include "nnperf/bench.h"
#include "nnperf/cost.h"
#include "nnperf/passes.h"
#include "nnperf/env.h"
#include "nnperf/stats.h"
#include "nnperf/sweep.h"
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
  int threads;        /* its worker's */
  char note[160];     /* its worker's note (kernels, batch lanes): the options it ran with */
} rung_result;

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

/* A rung as the native backend's options: what each rung's plan options switch. */
static void rung_options(const nnp_plan_options *po, char *out, size_t n) {
  snprintf(out, n, "passes=0x%x,memory_plan=%d,kernels=%s,batch_lanes=%s", po->passes, po->memory_plan ? 1 : 0,
           po->fast_kernels ? "fast" : "reference",
           po->batch_lanes == NNP_LANES_AUTO ? "auto" : po->batch_lanes ? "1" : "0");
}

/* P50 and P99 of rung k from the samples of its row in every round (rows are round-major:
 * round r's rung k is row r * N_RUNGS + k). A rung that failed in any round fails explain. */
static nnp_status pool_rung(const nnp_bench_result *res, int k, int rounds, rung_result *r) {
  int n = 0;
  for (int q = 0; q < rounds; q++) {
    const nnp_bench_row *row = &res->rows[q * N_RUNGS + k];
    if (row->status != NNP_ROW_OK)
      return nnp_error(NNP_ERR_INTERNAL, "rung '%s': %s: %s", rungs[k].name, nnp_row_status_name(row->status),
                       row->reason);
    n += row->n_samples;
  }
  if (n == 0) return nnp_error(NNP_ERR_INTERNAL, "rung '%s': the timing loop took no samples", rungs[k].name);
  double *x = malloc(sizeof *x * (size_t)n);
  if (!x) return nnp_error(NNP_ERR_NOMEM, "out of memory pooling the samples of rung '%s'", rungs[k].name);
  n = 0;
  for (int q = 0; q < rounds; q++) {
    const nnp_bench_row *row = &res->rows[q * N_RUNGS + k];
    memcpy(x + n, row->samples, sizeof *x * (size_t)row->n_samples);
    n += row->n_samples;
  }
  qsort(x, (size_t)n, sizeof *x, cmp_double);
  r->p50 = nnp_percentile_sorted(x, n, 0.50);
  r->p99 = nnp_percentile_sorted(x, n, 0.99);
  r->measured = true;
  r->threads = res->rows[k].threads;
  snprintf(r->note, sizeof r->note, "%s", res->rows[k].note);
  free(x);
  return NNP_OK;
}

/* Every rung of every round as one sweep: each row one worker process measuring its
 * round's share of the iterations (a short warm-up each, capped by max_time / rounds). */
static nnp_status measure_all(const cli_model_opts *mo, const nnp_plan_options *rung_po, int iterations,
                              double max_time, int rounds, rung_result *res) {
  static char opts[N_RUNGS][160];
  static nnp_sweep_variant variants[N_RUNGS * 5];
  int n = 0;
  for (int q = 0; q < rounds; q++)
    for (int k = 0; k < N_RUNGS; k++) {
      rung_options(&rung_po[k], opts[k], sizeof opts[k]);
      variants[n++] = (nnp_sweep_variant){rungs[k].name, opts[k], rung_po[k].threads};
    }
  nnp_sweep_spec spec;
  nnp_sweep_spec_default(&spec);
  spec.model = mo->model;
  spec.backends[0] = "native";
  spec.n_backends = 1;
  if (mo->batch > 0) spec.batches[spec.n_batches++] = mo->batch;
  spec.plan = mo->plan; /* its input bindings; the rungs' options set the rest */
  spec.n_variants = n;
  spec.variants = variants;
  spec.processes = 1; /* the rounds are the processes */
  spec.loop.warmup_min = 1;
  spec.loop.warmup_max = 2;
  spec.loop.warmup_window = 1;
  spec.loop.warmup_max_time_s = max_time;
  spec.loop.iterations = (iterations + rounds - 1) / rounds;
  spec.loop.min_time_s = 0;
  spec.loop.max_time_s = max_time / rounds;
  nnp_bench_result out;
  nnp_status s = nnp_sweep_run(&spec, &out, NULL);
  if (s == NNP_OK && out.n_rows != n) s = nnp_error(NNP_ERR_INTERNAL, "interrupted after %d of %d rows", out.n_rows, n);
  for (int k = 0; k < N_RUNGS && s == NNP_OK; k++)
    if (rungs[k].implemented) s = pool_rung(&out, k, rounds, &res[k]);
  nnp_bench_result_free(&out);
  return s;
}

/* What a rung's plan says without timing it; with prof, the last rung's step profile. */
static nnp_status describe_plans(nnp_plan **plans, int iterations, bool prof, rung_result *res) {
  for (int k = 0; k < N_RUNGS; k++) {
    if (!plans[k]) continue;
    res[k].activation_bytes = nnp_plan_memory_stats(plans[k])->planned;
    count_steps(plans[k], &res[k]);
  }
  int last = N_RUNGS - 1;
  while (last > 0 && !plans[last]) last--;
  if (!prof || !plans[last]) return NNP_OK;
  for (int i = 0; i < nnp_plan_num_inputs(plans[last]); i++)
    nnp_fill_seeded(nnp_plan_input(plans[last], i), 1 + (uint64_t)i);
  res[last].prof = malloc(sizeof *res[last].prof);
  if (!res[last].prof) return nnp_error(NNP_ERR_NOMEM, "out of memory for the profile");
  return step_profile_measure(plans[last], iterations < 5 ? iterations : 5, res[last].prof);
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
    printf(", \"activation_bytes\": %zu, \"kernels\": %d, \"bytes_moved\": %lld, \"threads\": %d, \"worker_note\": ",
           r->activation_bytes, r->steps, (long long)r->bytes_moved, r->threads);
    nnp_json_string(stdout, r->note);
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
    "of every step's input and output bytes). Rungs this build lacks say 'not implemented'.\n"
    "Each rung of each round runs in a fresh worker process, as a bench row does.\n\n"
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
  rung_result *res = calloc(N_RUNGS, sizeof *res);
  nnp_plan *plans[N_RUNGS] = {0};
  nnp_plan_options rung_po[N_RUNGS];
  int rc = CLI_OK;
  nnp_plan_options po = mo.plan;
  for (int k = 0; k < N_RUNGS && res; k++) {
    rungs[k].apply(&po, threads);
    rung_po[k] = po;
    if (!rungs[k].implemented) continue;
    if (nnp_plan_compile(g, &po, &plans[k]) != NNP_OK) {
      rc = cli_fail(rungs[k].name);
      break;
    }
  }
  if (res && rc == CLI_OK && describe_plans(plans, iterations, prof, res) != NNP_OK) rc = cli_fail(NULL);
  for (int k = 0; k < N_RUNGS; k++) nnp_plan_destroy(plans[k]);
  if (res && rc == CLI_OK && measure_all(&mo, rung_po, iterations, max_time, iterations < 5 ? iterations : 5, res) != NNP_OK)
    rc = cli_fail(NULL);
  if (!res) rc = cli_fail("out of memory");
  else if (rc == CLI_OK) (json ? print_json : print_table)(mo.model, res, prof);
  for (int k = 0; res && k < N_RUNGS; k++) free(res[k].prof);
  free(res);
  nnp_graph_destroy(g);
  return rc;
}
