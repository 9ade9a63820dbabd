#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/sweep_inputs.h"
#include "cli/cli.h"
#include "nnperf/onnx.h"
#include "nnperf/passes.h"
#include "nnperf/sweep.h"
#include "nnperf/zoo.h"

static void stop_sweep(int sig) {
  (void)sig;
  nnp_sweep_interrupt();
}

void cli_stop_on_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = stop_sweep;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

int cli_fail(const char *what) {
  if (what) fprintf(stderr, "nnperf: error: %s: %s\n", what, nnp_last_error());
  else fprintf(stderr, "nnperf: error: %s\n", nnp_last_error());
  return CLI_FAIL;
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "nnperf %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, " (see nnperf %s --help)\n", cmd);
  va_end(ap);
  return CLI_USAGE;
}

const char cli_model_options_help[] =
    "  --batch N              batch size: binds each input's symbolic first dimension (default 1)\n"
    "  --dim SYMBOL=N         binds a named symbolic dimension (e.g. --dim height=320)\n"
    "  --shape [NAME:]DIMS    full shape of an input, e.g. --shape input:1x3x224x224\n"
    "                         (NAME may be left out when the model has one input)\n"
    "  --passes LIST          graph passes to run (comma-separated; default, all, none,\n"
    "                         fold-constants, dead-nodes, noops, fold-batchnorm, fuse-activation,\n"
    "                         fuse-residual, fuse-elementwise, blocked-layout, fuse-qdq); default: all\n"
    "                         (blocked-layout acts only where the CPU has AVX-512F)\n"
    "  --no-PASS              turns one pass off (e.g. --no-fuse-residual); --no-passes: all off\n"
    "  --no-memory-plan       a buffer per value instead of one planned arena\n";

void cli_model_opts_init(cli_model_opts *o) {
  memset(o, 0, sizeof *o);
  nnp_plan_options_default(&o->plan);
}

bool cli_parse_dims(const char *s, int *rank, int64_t *dims) {
  if (!strcmp(s, "scalar")) {
    *rank = 0;
    return true;
  }
  int r = 0;
  while (*s) {
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || v < 0 || r == NNP_MAX_RANK) return false;
    dims[r++] = v;
    s = end;
    if (*s == 'x' || *s == 'X' || *s == ',') s++;
    else if (*s) return false;
  }
  *rank = r;
  return r > 0;
}

int cli_model_option(cli_model_opts *o, const char *cmd, int argc, char **argv, int *i) {
  const char *a = argv[*i];
  if (!strcmp(a, "--no-passes")) {
    o->plan.passes = 0;
    return 1;
  }
  if (!strcmp(a, "--no-memory-plan")) {
    o->plan.memory_plan = false;
    return 1;
  }
  if (!strncmp(a, "--no-", 5) && nnp_pass_bit(a + 5)) {
    o->plan.passes &= ~nnp_pass_bit(a + 5);
    return 1;
  }
  if (!strcmp(a, "--passes")) {
    if (*i + 1 >= argc) {
      cli_usage_error(cmd, "%s needs a value", a);
      return -1;
    }
    if (nnp_passes_parse(argv[++*i], &o->plan.passes) != NNP_OK) {
      cli_usage_error(cmd, "--passes: %s", nnp_last_error());
      return -1;
    }
    return 1;
  }
  if (strcmp(a, "--batch") && strcmp(a, "--dim") && strcmp(a, "--shape")) return 0;
  if (*i + 1 >= argc) {
    cli_usage_error(cmd, "%s needs a value", a);
    return -1;
  }
  const char *v = argv[++*i];
  if (!strcmp(a, "--batch")) {
    char *end;
    long long b = strtoll(v, &end, 10);
    if (*end || b <= 0 || b > 1 << 20) {
      cli_usage_error(cmd, "--batch wants a positive integer, not '%s'", v);
      return -1;
    }
    o->batch = b;
    return 1;
  }
  if (!strcmp(a, "--dim")) {
    const char *eq = strchr(v, '=');
    char *end;
    long long d = eq ? strtoll(eq + 1, &end, 10) : -1;
    if (!eq || eq == v || *end || d < 0 || o->plan.n_dims == NNP_PLAN_MAX_BINDINGS) {
      cli_usage_error(cmd, "--dim wants SYMBOL=N, not '%s'", v);
      return -1;
    }
    static char names[NNP_PLAN_MAX_BINDINGS][128];
    snprintf(names[o->plan.n_dims], sizeof names[0], "%.*s", (int)(eq - v), v);
    o->plan.dims[o->plan.n_dims].symbol = names[o->plan.n_dims];
    o->plan.dims[o->plan.n_dims++].value = d;
    return 1;
  }
  /* --shape */
  if (o->plan.n_shapes == NNP_PLAN_MAX_BINDINGS) {
    cli_usage_error(cmd, "too many --shape options");
    return -1;
  }
  nnp_shape_binding *b = &o->plan.shapes[o->plan.n_shapes];
  const char *colon = strrchr(v, ':');
  const char *dims = colon ? colon + 1 : v;
  if (!cli_parse_dims(dims, &b->rank, b->dims)) {
    cli_usage_error(cmd, "--shape wants [NAME:]DIMS like input:1x3x224x224, not '%s'", v);
    return -1;
  }
  static char names[NNP_PLAN_MAX_BINDINGS][256];
  snprintf(names[o->plan.n_shapes], sizeof names[0], "%.*s", colon ? (int)(colon - v) : 0, v);
  b->input = names[o->plan.n_shapes];
  o->plan.n_shapes++;
  return 1;
}

nnp_status cli_load_graph(const cli_model_opts *o, nnp_graph **out) {
  if (!strncmp(o->model, "zoo:", 4)) {
    nnp_zoo_options zo;
    nnp_zoo_options_default(&zo);
    return nnp_zoo_build(o->model + 4, &zo, out);
  }
  return nnp_onnx_load(o->model, NULL, out);
}

void cli_apply_batch(cli_model_opts *o, const nnp_graph *g) { nnp_plan_bind_batch(&o->plan, o->batch, g); }

double cli_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
