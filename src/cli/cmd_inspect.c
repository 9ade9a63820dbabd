/* nnperf inspect: what a model is made of and what it costs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/step_profile.h"
#include "nnperf/bench.h"
#include "nnperf/alloc.h"
#include "nnperf/cost.h"
#include "util/json_write.h"

static const char inspect_help[] =
    "usage: nnperf inspect MODEL [options]\n\n"
    "Shows MODEL's inputs and outputs, every node with its output shape, parameters,\n"
    "multiply-accumulates (MACs) and FLOPs, a per-op-type summary, and activation memory:\n"
    "  naive        every intermediate tensor in its own buffer\n"
    "  lower bound  the most bytes alive at once in execution order (what a perfect\n"
    "               memory planner needs)\n"
    "By default the node table is the model as written: its own nodes and op types. The\n"
    "graph the native engine runs (after its passes: fused, folded, blocked-layout nodes)\n"
    "is shown with --engine-graph, or when a pass option (--passes LIST, --no-PASS) is given.\n"
    "Shapes are resolved for the given batch/shape (symbolic batch defaults to 1).\n\n"
    "options:\n"
    "  --engine-graph         show the native engine's graph after its passes and layout\n"
    "  --no-passes            the model as written (the default; kept for old scripts);\n"
    "                         with --profile, profiles the engine with every pass off\n"
    "  --json                 machine-readable output on stdout (\"graph\": \"model\" or \"engine\")\n"
    "  --summary              leave out the per-node table\n"
    "  --profile              also run the engine's plan (seeded inputs) and time each engine\n"
    "                         step alone: time per op type and per kernel, layout conversions\n"
    "                         and reference-kernel steps (text output only). The profile is per\n"
    "                         engine step, after the passes, whichever graph the table shows\n"
    "  --threads N            the plan's threads for --profile (default 1)\n"
    "  --runs N               profiled runs (default 3)\n"
    "%s"
    "\nexamples:\n"
    "  nnperf inspect zoo:mobilenet_v2 --batch 8\n"
    "  nnperf inspect zoo:mobilenet_v2 --engine-graph --summary --profile\n";

typedef struct op_summary {
  const char *op;
  int count;
  int64_t macs, flops;
} op_summary;

static void dims_str(const nnp_value *v, char *buf, size_t n) {
  size_t used = 0;
  if (v->rank < 0) {
    snprintf(buf, n, "?");
    return;
  }
  buf[0] = 0;
  for (int d = 0; d < v->rank && used < n; d++) {
    if (v->dims[d].value >= 0)
      used += (size_t)snprintf(buf + used, n - used, "%s%lld", d ? "x" : "", (long long)v->dims[d].value);
    else
      used += (size_t)snprintf(buf + used, n - used, "%s%s", d ? "x" : "", v->dims[d].symbol ? v->dims[d].symbol : "?");
  }
  if (v->rank == 0) snprintf(buf, n, "scalar");
}

static const char *human(double v, char *buf, size_t n) {
  const char *unit[] = {"", "K", "M", "G", "T"};
  int u = 0;
  while (v >= 1000 && u < 4) {
    v /= 1000;
    u++;
  }
  snprintf(buf, n, u ? "%.2f%s" : "%.0f%s", v, unit[u]);
  return buf;
}

static const char *human_bytes(double v, char *buf, size_t n) {
  const char *unit[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (v >= 1024 && u < 3) {
    v /= 1024;
    u++;
  }
  snprintf(buf, n, u ? "%.2f %s" : "%.0f %s", v, unit[u]);
  return buf;
}

/* Column widths (node, op, output) that fit every node name, op and output shape: names
 * are never cut (issue 25). */
static void column_widths(nnp_plan *plan, int w[3]) {
  w[0] = 4, w[1] = 2, w[2] = 6;
  for (int s = 0; s < nnp_plan_num_steps(plan); s++) {
    const nnp_node *n = nnp_plan_step_node(plan, s);
    int ln = n->name ? (int)strlen(n->name) : 0, lo = (int)strlen(n->op_type);
    char shape[128] = "-";
    const nnp_tensor *t = n->n_outputs > 0 ? nnp_plan_value(plan, n->outputs[0]) : NULL;
    if (t) nnp_shape_str(t->rank, t->dims, shape, sizeof shape);
    int ls = (int)strlen(shape);
    w[0] = ln > w[0] ? ln : w[0];
    w[1] = lo > w[1] ? lo : w[1];
    w[2] = ls > w[2] ? ls : w[2];
  }
}

/* Bytes of the runtime intermediates: all of them (naive) and the most alive at once
 * (lower bound of any memory plan). */
static nnp_status activation_bytes(nnp_plan *plan, int64_t *naive, int64_t *peak) {
  const nnp_graph *eg = nnp_plan_graph(plan);
  int n_steps = nnp_plan_num_steps(plan);
  /* liveness of runtime intermediates: birth = producing step, death = last reading step */
  int64_t *death = malloc(sizeof(int64_t) * (size_t)(eg->n_values ? eg->n_values : 1) * 2);
  if (!death) return nnp_error(NNP_ERR_NOMEM, "inspect: no memory for the liveness of %d values", eg->n_values);
  int64_t *birth = death + eg->n_values;
  for (int v = 0; v < eg->n_values; v++) birth[v] = death[v] = -1;
  for (int s = 0; s < n_steps; s++) {
    const nnp_node *n = nnp_plan_step_node(plan, s);
    for (int k = 0; k < n->n_outputs; k++)
      if (n->outputs[k] >= 0) birth[n->outputs[k]] = death[n->outputs[k]] = s;
    for (int k = 0; k < n->n_inputs; k++)
      if (n->inputs[k] >= 0 && birth[n->inputs[k]] >= 0) death[n->inputs[k]] = s;
  }
  for (int k = 0; k < eg->n_outputs; k++)
    if (birth[eg->outputs[k]] >= 0) death[eg->outputs[k]] = n_steps;
  for (int v = 0; v < eg->n_values; v++)
    if (birth[v] >= 0 && !nnp_plan_value_is_constant(plan, v)) *naive += (int64_t)nnp_tensor_nbytes(nnp_plan_value(plan, v));
  for (int s = 0; s < n_steps; s++) {
    int64_t live = 0;
    for (int v = 0; v < eg->n_values; v++)
      if (birth[v] >= 0 && birth[v] <= s && death[v] >= s && !nnp_plan_value_is_constant(plan, v))
        live += (int64_t)nnp_tensor_nbytes(nnp_plan_value(plan, v));
    if (live > *peak) *peak = live;
  }
  free(death);
  return NNP_OK;
}

/* The model, its inputs as declared and as run, its outputs; then the node table's head. */
/* What `inspect` was asked for. */
typedef struct inspect_args {
  cli_model_opts mo;
  int json, summary, profile, runs;
  int engine_graph; /* the table shows the graph after passes: --engine-graph, --passes, --no-PASS */
} inspect_args;

/* The model, its inputs as declared and as run, its outputs; then the node table's head. */
static void print_header(const inspect_args *a, const nnp_graph *g, nnp_plan *plan, int w[3]) {
  const cli_model_opts *o = &a->mo;
  if (a->json) {
    printf("{\n  \"model\": ");
    nnp_json_string(stdout, o->model);
    printf(",\n  \"graph\": \"%s\",\n  \"opset\": %lld,\n  \"producer\": ", a->engine_graph ? "engine" : "model",
           (long long)g->opset);
    nnp_json_string(stdout, g->producer ? g->producer : "");
    printf(",\n  \"inputs\": [");
    for (int i = 0; i < nnp_plan_num_inputs(plan); i++) {
      const nnp_tensor *t = nnp_plan_input(plan, i);
      printf("%s{\"name\": ", i ? ", " : "");
      nnp_json_string(stdout, nnp_plan_input_name(plan, i));
      printf(", \"dtype\": \"%s\", \"shape\": [", nnp_dtype_name(t->dtype));
      for (int d = 0; d < t->rank; d++) printf("%s%lld", d ? ", " : "", (long long)t->dims[d]);
      printf("]}");
    }
    printf("],\n  \"nodes\": [");
    return;
  }
  printf("model      %s\nopset      %lld%s%s\n", o->model, (long long)g->opset, g->producer ? ", producer " : "",
         g->producer ? g->producer : "");
  printf("inputs\n");
  for (int i = 0; i < g->n_inputs; i++) {
    char decl[128], bound[128];
    const nnp_value *v = &g->values[g->inputs[i]];
    const nnp_tensor *t = nnp_plan_input(plan, i);
    dims_str(v, decl, sizeof decl);
    printf("  %-28s %-8s %s (as run: %s)\n", v->name, nnp_dtype_name(v->dtype), decl,
           nnp_shape_str(t->rank, t->dims, bound, sizeof bound));
  }
  printf("outputs\n");
  for (int k = 0; k < nnp_plan_num_outputs(plan); k++) {
    const nnp_tensor *t = nnp_plan_output(plan, k);
    char shape[128];
    printf("  %-28s %-8s %s\n", nnp_plan_output_name(plan, k), nnp_dtype_name(t->dtype),
           nnp_shape_str(t->rank, t->dims, shape, sizeof shape));
  }
  /* say which graph this is (issue 25: BlockedConv and 1x4x112x112x16 read as the user's
   * model when the engine's graph was the default) */
  if (!a->engine_graph)
    printf("\ngraph shown: the model as written (its own nodes and op types, %d nodes); --engine-graph shows\n"
           "the graph the native engine runs after its passes\n", nnp_plan_num_steps(plan));
  else
    printf("\ngraph shown: the native engine's, after its passes and layout (%d engine steps: fused, folded and\n"
           "blocked nodes, not the model's own); without --engine-graph inspect shows the model as written\n",
           nnp_plan_num_steps(plan));
  if (a->summary) return;
  column_widths(plan, w);
  printf("%4s  %-*s %-*s %-*s %10s %10s %10s\n", "#", w[0], "node", w[1], "op", w[2], "output", "params", "MACs",
         "FLOPs");
}

/* --profile: where the time of the engine's plan goes (cli/step_profile.h), per engine step
 * (a fused step holds several of the model's nodes), whichever graph the table showed. */
static int print_profile(const inspect_args *a, const nnp_graph *g, nnp_plan *shown) {
  nnp_plan *plan = shown, *engine = NULL;
  nnp_plan_options po = a->mo.plan; /* the passes as asked (default: all), not the table's none */
  if (!a->engine_graph && po.passes) { /* the table showed the model: profile what the engine runs */
    if (nnp_plan_compile(g, &po, &engine) != NNP_OK) return cli_fail(a->mo.model);
    plan = engine;
  }
  printf("\nprofile: per engine step, %s (%d steps)\n",
         po.passes ? "the graph after the engine's passes" : "every pass off, one step per node of the model",
         nnp_plan_num_steps(plan));
  for (int i = 0; i < nnp_plan_num_inputs(plan); i++) nnp_fill_seeded(nnp_plan_input(plan, i), 1 + (uint64_t)i);
  step_profile *pr = malloc(sizeof *pr);
  int rc = CLI_OK;
  if (!pr) rc = cli_fail("out of memory");
  else if (step_profile_measure(plan, a->runs, pr) != NNP_OK) rc = cli_fail("profile");
  else step_profile_print(pr);
  free(pr);
  nnp_plan_destroy(engine);
  return rc;
}

/* Parses argv into a; returns -1 to go on, else the exit status. */
static int parse_inspect_args(int argc, char **argv, inspect_args *a) {
  memset(a, 0, sizeof *a);
  cli_model_opts_init(&a->mo);
  a->runs = 3;
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    if (!strcmp(s, "--passes") || (!strncmp(s, "--no-", 5) && nnp_pass_bit(s + 5))) a->engine_graph = 1;
    int used = cli_model_option(&a->mo, "inspect", argc, argv, &i);
    if (used < 0) return CLI_USAGE;
    if (used) continue;
    if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
      printf(inspect_help, cli_model_options_help);
      return CLI_OK;
    } else if (!strcmp(s, "--json")) a->json = 1;
    else if (!strcmp(s, "--summary")) a->summary = 1;
    else if (!strcmp(s, "--profile")) a->profile = 1;
    else if (!strcmp(s, "--engine-graph")) a->engine_graph = 1;
    else if (!strcmp(s, "--threads") || !strcmp(s, "--runs")) {
      if (i + 1 >= argc) return cli_usage_error("inspect", "%s needs a value", s);
      char *end;
      long v = strtol(argv[i + 1], &end, 10);
      if (*end || v < 1 || v > 1024) return cli_usage_error("inspect", "%s wants a positive integer, not '%s'", s, argv[i + 1]);
      if (!strcmp(argv[i++], "--threads")) a->mo.plan.threads = (int)v;
      else a->runs = (int)v;
    } else if (s[0] == '-') return cli_usage_error("inspect", "unknown option '%s'", s);
    else if (!a->mo.model) a->mo.model = s;
    else return cli_usage_error("inspect", "more than one model given");
  }
  if (!a->mo.model) return cli_usage_error("inspect", "no model given");
  /* with every pass off the engine runs the model's own nodes: that graph is the model as written */
  if (a->mo.plan.passes == 0) a->engine_graph = 0;
  return -1;
}

/* One node table row (or JSON object), and its cost added to the op-type summary. */
static void inspect_step(const inspect_args *a, nnp_plan *plan, int s, const int w[3], op_summary *ops, int *n_ops,
                         int64_t *total_macs, int64_t *total_flops) {
  const nnp_graph *eg = nnp_plan_graph(plan);
  const nnp_node *n = nnp_plan_step_node(plan, s);
  const nnp_tensor *in[n->n_inputs > 0 ? n->n_inputs : 1];
  const nnp_tensor *out[n->n_outputs > 0 ? n->n_outputs : 1];
  int64_t node_params = 0;
  for (int k = 0; k < n->n_inputs; k++) {
    in[k] = nnp_plan_value(plan, n->inputs[k]);
    if (n->inputs[k] >= 0 && eg->values[n->inputs[k]].init) node_params += nnp_tensor_numel(in[k]);
  }
  for (int k = 0; k < n->n_outputs; k++) out[k] = nnp_plan_value(plan, n->outputs[k]);
  nnp_cost c = nnp_node_cost(n, in, out);
  *total_macs += c.macs;
  *total_flops += c.flops;
  int o = 0;
  while (o < *n_ops && strcmp(ops[o].op, n->op_type)) o++;
  if (o == *n_ops) ops[(*n_ops)++].op = n->op_type;
  ops[o].count++;
  ops[o].macs += c.macs;
  ops[o].flops += c.flops;
  char shape[128] = "-";
  if (n->n_outputs > 0 && out[0]) nnp_shape_str(out[0]->rank, out[0]->dims, shape, sizeof shape);
  if (a->json) {
    printf("%s\n    {\"name\": ", s ? "," : "");
    nnp_json_string(stdout, n->name);
    printf(", \"op\": ");
    nnp_json_string(stdout, n->op_type);
    printf(", \"output_shape\": \"%s\", \"params\": %lld, \"macs\": %lld, \"flops\": %lld, \"bytes\": %lld}", shape,
           (long long)node_params, (long long)c.macs, (long long)c.flops, (long long)c.bytes);
  } else if (!a->summary) {
    char p[32], m[32], f[32];
    printf("%4d  %-*s %-*s %-*s %10s %10s %10s\n", s, w[0], n->name ? n->name : "", w[1], n->op_type, w[2], shape,
           human((double)node_params, p, sizeof p), human((double)c.macs, m, sizeof m),
           human((double)c.flops, f, sizeof f));
  }
}

typedef struct inspect_totals {
  int64_t params, weight_bytes, macs, flops, naive, peak;
} inspect_totals;

/* The op-type summary and the totals, as text or as the JSON document's tail. */
static void print_totals(const inspect_args *a, const nnp_graph *g, nnp_plan *plan, const op_summary *ops, int n_ops,
                         const inspect_totals *t) {
  const nnp_plan_memory *mem = nnp_plan_memory_stats(plan);
  int n_steps = nnp_plan_num_steps(plan);
  char x[32], y[32], z[32];
  if (a->json) {
    printf("\n  ],\n  \"op_types\": [");
    for (int o = 0; o < n_ops; o++)
      printf("%s{\"op\": \"%s\", \"count\": %d, \"macs\": %lld, \"flops\": %lld}", o ? ", " : "", ops[o].op,
             ops[o].count, (long long)ops[o].macs, (long long)ops[o].flops);
    printf("],\n  \"totals\": {\"nodes\": %d, \"executed_nodes\": %d, \"params\": %lld, \"weight_bytes\": %lld, "
           "\"macs\": %lld, \"flops\": %lld, \"activation_bytes_naive\": %lld, \"activation_bytes_lower_bound\": %lld},\n"
           "  \"memory_plan\": {\"enabled\": %s, \"planned_bytes\": %zu, \"naive_bytes\": %zu, \"lower_bound_bytes\": %zu, "
           "\"inplace\": %d, \"buffers\": %d}\n}\n",
           g->n_nodes, n_steps, (long long)t->params, (long long)t->weight_bytes, (long long)t->macs,
           (long long)t->flops, (long long)t->naive, (long long)t->peak, a->mo.plan.memory_plan ? "true" : "false",
           mem->planned, mem->naive, mem->lower_bound, mem->inplace, mem->buffers);
    return;
  }
  int wop = 7; /* "op type"; long op names (QLinearGlobalAveragePool) keep the columns aligned */
  for (int o = 0; o < n_ops; o++) wop = (int)strlen(ops[o].op) > wop ? (int)strlen(ops[o].op) : wop;
  printf("\n%-*s %6s %10s %7s\n", wop, "op type", "count", "MACs", "share");
  for (int o = 0; o < n_ops; o++)
    printf("%-*s %6d %10s %6.1f%%\n", wop, ops[o].op, ops[o].count, human((double)ops[o].macs, x, sizeof x),
           t->macs ? 100.0 * (double)ops[o].macs / (double)t->macs : 0.0);
  printf("\nnodes       %d (%d executed, %d evaluated at load time, fused or removed by passes)\n", g->n_nodes,
         n_steps, g->n_nodes - n_steps);
  printf("parameters  %s (%s)\n", human((double)t->params, x, sizeof x), human_bytes((double)t->weight_bytes, y, sizeof y));
  printf("MACs        %s   FLOPs %s\n", human((double)t->macs, x, sizeof x), human((double)t->flops, y, sizeof y));
  printf("activations naive %s, lower bound %s\n", human_bytes((double)t->naive, x, sizeof x),
         human_bytes((double)t->peak, y, sizeof y));
  if (a->mo.plan.memory_plan)
    printf("memory plan arena %s (naive %s, lower bound %s after %d in-place), %.2fx bound, %.2fx naive\n",
           human_bytes((double)mem->planned, x, sizeof x), human_bytes((double)mem->naive, y, sizeof y),
           human_bytes((double)mem->lower_bound, z, sizeof z), mem->inplace,
           mem->lower_bound ? (double)mem->planned / (double)mem->lower_bound : 0.0,
           mem->naive ? (double)mem->planned / (double)mem->naive : 0.0);
}

int nnp_cmd_inspect(int argc, char **argv) {
  inspect_args a;
  int rc = parse_inspect_args(argc, argv, &a);
  if (rc >= 0) return rc;
  nnp_graph *g = NULL;
  nnp_plan *plan = NULL;
  op_summary *ops = NULL;
  rc = CLI_FAIL;
  if (cli_load_graph(&a.mo, &g) != NNP_OK) {
    rc = cli_fail(NULL);
    goto done;
  }
  cli_apply_batch(&a.mo, g);
  nnp_plan_options shown = a.mo.plan;
  if (!a.engine_graph) shown.passes = 0; /* the model as written: no pass, no layout change */
  if (nnp_plan_compile(g, &shown, &plan) != NNP_OK) {
    rc = cli_fail(a.mo.model);
    goto done;
  }
  inspect_totals t = {0};
  for (int v = 0; v < g->n_values; v++) /* the model's own weights, not the folded copies */
    if (g->values[v].init) {
      t.params += nnp_tensor_numel(g->values[v].init);
      t.weight_bytes += (int64_t)nnp_tensor_nbytes(g->values[v].init);
    }
  int n_steps = nnp_plan_num_steps(plan);
  if (activation_bytes(plan, &t.naive, &t.peak) != NNP_OK) {
    rc = cli_fail(a.mo.model);
    goto done;
  }
  ops = calloc((size_t)(n_steps ? n_steps : 1), sizeof *ops);
  if (!ops) {
    rc = cli_fail("out of memory");
    goto done;
  }
  int n_ops = 0, w[3] = {32, 20, 18}; /* column widths of the node table */
  print_header(&a, g, plan, w);
  for (int s = 0; s < n_steps; s++) inspect_step(&a, plan, s, w, ops, &n_ops, &t.macs, &t.flops);
  print_totals(&a, g, plan, ops, n_ops, &t);
  rc = CLI_OK;
  if (a.profile && !a.json) rc = print_profile(&a, g, plan);
done:
  free(ops);
  nnp_plan_destroy(plan);
  nnp_graph_destroy(g);
  return rc;
}
