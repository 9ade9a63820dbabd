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
    "Shapes are resolved for the given batch/shape (symbolic batch defaults to 1).\n\n"
    "options:\n"
    "  --json                 machine-readable output on stdout\n"
    "  --summary              leave out the per-node table\n"
    "  --profile              also run the plan (seeded inputs) and time each step alone:\n"
    "                         time per op type and per kernel, layout conversions and\n"
    "                         reference-kernel steps (text output only)\n"
    "  --threads N            the plan's threads for --profile (default 1)\n"
    "  --runs N               profiled runs (default 3)\n"
    "%s"
    "\nexample:\n"
    "  nnperf inspect zoo:mobilenet_v2 --batch 8\n";

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
static void print_header(const cli_model_opts *o, const nnp_graph *g, nnp_plan *plan, int json, int summary,
                         int w[3]) {
  if (json) {
    printf("{\n  \"model\": ");
    nnp_json_string(stdout, o->model);
    printf(",\n  \"opset\": %lld,\n  \"producer\": ", (long long)g->opset);
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
  } else {
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
    if (!summary) {
      /* say which graph this is: the engine's, not the file's (issue 25: BlockedConv and
       * 1x4x112x112x16 read as the user's model) */
      if (o->plan.passes == 0)
        printf("\ngraph shown: the model's own nodes, as written (no passes, no layout change; %d steps)\n",
               nnp_plan_num_steps(plan));
      else
        printf("\ngraph shown: as the native engine runs it, after its passes and layout (%d steps; fused, folded and\n"
               "blocked nodes); --no-passes shows the model's own nodes\n", nnp_plan_num_steps(plan));
      column_widths(plan, w);
      printf("%4s  %-*s %-*s %-*s %10s %10s %10s\n", "#", w[0], "node", w[1], "op", w[2], "output", "params", "MACs",
             "FLOPs");
    }
  }
}

/* --profile: where the time of this plan goes (cli/step_profile.h). */
static int print_profile(nnp_plan *plan, int runs) {
  for (int i = 0; i < nnp_plan_num_inputs(plan); i++) nnp_fill_seeded(nnp_plan_input(plan, i), 1 + (uint64_t)i);
  step_profile *pr = malloc(sizeof *pr);
  if (!pr) return cli_fail("out of memory");
  int rc = CLI_OK;
  if (step_profile_measure(plan, runs, pr) != NNP_OK) rc = cli_fail("profile");
  else step_profile_print(pr);
  free(pr);
  return rc;
}

int nnp_cmd_inspect(int argc, char **argv) {
  cli_model_opts mo;
  cli_model_opts_init(&mo);
  int json = 0, summary = 0, profile = 0, runs = 3;
  for (int i = 1; i < argc; i++) {
    int used = cli_model_option(&mo, "inspect", argc, argv, &i);
    if (used < 0) return CLI_USAGE;
    if (used) continue;
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      printf(inspect_help, cli_model_options_help);
      return CLI_OK;
    } else if (!strcmp(argv[i], "--json")) json = 1;
    else if (!strcmp(argv[i], "--summary")) summary = 1;
    else if (!strcmp(argv[i], "--profile")) profile = 1;
    else if ((!strcmp(argv[i], "--threads") || !strcmp(argv[i], "--runs")) && i + 1 < argc) {
      char *end;
      long v = strtol(argv[i + 1], &end, 10);
      if (*end || v < 1 || v > 1024) return cli_usage_error("inspect", "%s wants a positive integer, not '%s'", argv[i], argv[i + 1]);
      if (!strcmp(argv[i++], "--threads")) mo.plan.threads = (int)v;
      else runs = (int)v;
    }
    else if (argv[i][0] == '-') return cli_usage_error("inspect", "unknown option '%s'", argv[i]);
    else if (!mo.model) mo.model = argv[i];
    else return cli_usage_error("inspect", "more than one model given");
  }
  if (!mo.model) return cli_usage_error("inspect", "no model given");
  nnp_graph *g = NULL;
  nnp_plan *plan = NULL;
  int rc = CLI_FAIL;
  op_summary *ops = NULL;
  if (cli_load_graph(&mo, &g) != NNP_OK) {
    rc = cli_fail(NULL);
    goto done;
  }
  cli_apply_batch(&mo, g);
  if (nnp_plan_compile(g, &mo.plan, &plan) != NNP_OK) {
    rc = cli_fail(mo.model);
    goto done;
  }
  /* the executed graph: after passes it has fused nodes and folded weights */
  const nnp_graph *eg = nnp_plan_graph(plan);
  int64_t params = 0, weight_bytes = 0;
  for (int v = 0; v < g->n_values; v++) /* the model's own weights, not the folded copies */
    if (g->values[v].init) {
      params += nnp_tensor_numel(g->values[v].init);
      weight_bytes += (int64_t)nnp_tensor_nbytes(g->values[v].init);
    }
  int n_steps = nnp_plan_num_steps(plan);
  const nnp_plan_memory *mem = nnp_plan_memory_stats(plan);
  int64_t naive = 0, peak = 0;
  if (activation_bytes(plan, &naive, &peak) != NNP_OK) {
    rc = cli_fail(mo.model);
    goto done;
  }
  ops = calloc((size_t)(n_steps ? n_steps : 1), sizeof *ops);
  int n_ops = 0;
  int64_t total_macs = 0, total_flops = 0;
  int w[3] = {32, 20, 18}; /* column widths of the node table */
  print_header(&mo, g, plan, json, summary, w);
  for (int s = 0; s < n_steps; s++) {
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
    total_macs += c.macs;
    total_flops += c.flops;
    int o = 0;
    while (o < n_ops && strcmp(ops[o].op, n->op_type)) o++;
    if (o == n_ops) ops[n_ops++].op = n->op_type;
    ops[o].count++;
    ops[o].macs += c.macs;
    ops[o].flops += c.flops;
    char shape[128] = "-";
    if (out[0]) nnp_shape_str(out[0]->rank, out[0]->dims, shape, sizeof shape);
    if (json) {
      printf("%s\n    {\"name\": ", s ? "," : "");
      nnp_json_string(stdout, n->name);
      printf(", \"op\": ");
      nnp_json_string(stdout, n->op_type);
      printf(", \"output_shape\": \"%s\", \"params\": %lld, \"macs\": %lld, \"flops\": %lld, \"bytes\": %lld}", shape,
             (long long)node_params, (long long)c.macs, (long long)c.flops, (long long)c.bytes);
    } else if (!summary) {
      char a[32], b[32], d[32];
      printf("%4d  %-*s %-*s %-*s %10s %10s %10s\n", s, w[0], n->name ? n->name : "", w[1], n->op_type, w[2], shape,
             human((double)node_params, a, sizeof a), human((double)c.macs, b, sizeof b),
             human((double)c.flops, d, sizeof d));
    }
  }
  if (json) {
    printf("\n  ],\n  \"op_types\": [");
    for (int o = 0; o < n_ops; o++)
      printf("%s{\"op\": \"%s\", \"count\": %d, \"macs\": %lld, \"flops\": %lld}", o ? ", " : "", ops[o].op,
             ops[o].count, (long long)ops[o].macs, (long long)ops[o].flops);
    printf("],\n  \"totals\": {\"nodes\": %d, \"executed_nodes\": %d, \"params\": %lld, \"weight_bytes\": %lld, "
           "\"macs\": %lld, \"flops\": %lld, \"activation_bytes_naive\": %lld, \"activation_bytes_lower_bound\": %lld},\n"
           "  \"memory_plan\": {\"enabled\": %s, \"planned_bytes\": %zu, \"naive_bytes\": %zu, \"lower_bound_bytes\": %zu, "
           "\"inplace\": %d, \"buffers\": %d}\n}\n",
           g->n_nodes, n_steps, (long long)params, (long long)weight_bytes, (long long)total_macs,
           (long long)total_flops, (long long)naive, (long long)peak, mo.plan.memory_plan ? "true" : "false",
           mem->planned, mem->naive, mem->lower_bound, mem->inplace, mem->buffers);
  } else {
    char a[32], b[32];
    printf("\n%-20s %6s %10s %7s\n", "op type", "count", "MACs", "share");
    for (int o = 0; o < n_ops; o++)
      printf("%-20s %6d %10s %6.1f%%\n", ops[o].op, ops[o].count, human((double)ops[o].macs, a, sizeof a),
             total_macs ? 100.0 * (double)ops[o].macs / (double)total_macs : 0.0);
    printf("\nnodes       %d (%d executed, %d evaluated at load time, fused or removed by passes)\n", g->n_nodes,
           n_steps, g->n_nodes - n_steps);
    printf("parameters  %s (%s)\n", human((double)params, a, sizeof a), human_bytes((double)weight_bytes, b, sizeof b));
    printf("MACs        %s   FLOPs %s\n", human((double)total_macs, a, sizeof a), human((double)total_flops, b, sizeof b));
    printf("activations naive %s, lower bound %s\n", human_bytes((double)naive, a, sizeof a),
           human_bytes((double)peak, b, sizeof b));
    if (mo.plan.memory_plan) {
      char c[32];
      printf("memory plan arena %s (naive %s, lower bound %s after %d in-place), %.2fx bound, %.2fx naive\n",
             human_bytes((double)mem->planned, a, sizeof a), human_bytes((double)mem->naive, b, sizeof b),
             human_bytes((double)mem->lower_bound, c, sizeof c), mem->inplace,
             mem->lower_bound ? (double)mem->planned / (double)mem->lower_bound : 0.0,
             mem->naive ? (double)mem->planned / (double)mem->naive : 0.0);
    }
  }
  rc = CLI_OK;
  if (profile && !json) rc = print_profile(plan, runs);
done:
  free(ops);
  nnp_plan_destroy(plan);
  nnp_graph_destroy(g);
  return rc;
}
