/* nnperf run: one inference on the native engine. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "nnperf/alloc.h"
#include "nnperf/bench.h"
#include "nnperf/npy.h"
#include "nnperf/onnx.h"

#define MAX_INPUT_FILES 16

static const char run_help[] =
    "usage: nnperf run MODEL [options]\n\n"
    "Runs one inference of MODEL (an .onnx file or zoo:NAME) with nnperf's native engine and\n"
    "prints a summary of every output. Inputs not given with --input are filled with seeded\n"
    "random values (uniform in [-1, 1) for float inputs, zeros for integer/bool inputs).\n\n"
    "options:\n"
    "  --input NAME=FILE      value of input NAME from a .npy or .pb (TensorProto) file; the\n"
    "                         file's shape is used as the input shape (repeatable); an input\n"
    "                         that sets a shape (a Reshape's shape, Slice bounds, ...) is\n"
    "                         taken as the constant its file holds\n"
    "  --output-dir DIR       write each output as DIR/<output name>.npy\n"
    "  --seed N               seed of the random inputs (default 1)\n"
    "  --quiet                print nothing but errors\n"
    "%s"
    "\nexamples:\n"
    "  nnperf run zoo:resnet18 --batch 2 --output-dir out\n"
    "  nnperf run model.onnx --input data=cat.npy\n";

typedef struct input_file {
  const char *name, *path;
  nnp_tensor t;
} input_file;

static int ends_with(const char *s, const char *suf) {
  size_t n = strlen(s), m = strlen(suf);
  return n >= m && !strcmp(s + n - m, suf);
}

/* Output names may contain '/' or ':' (PyTorch exports): keep file names flat. */
static void safe_file_name(const char *name, char *out, size_t n) {
  size_t k = 0;
  for (; *name && k + 1 < n; name++, k++)
    out[k] = (*name == '/' || *name == '\\' || *name == ':' || (*name == '.' && k == 0)) ? '_' : *name;
  out[k] = 0;
  if (!k) snprintf(out, n, "output");
}

static void print_summary(const char *name, const nnp_tensor *t) {
  char shape[128];
  nnp_shape_str(t->rank, t->dims, shape, sizeof shape);
  int64_t n = nnp_tensor_numel(t);
  double mn = INFINITY, mx = -INFINITY, sum = 0;
  int64_t nonfinite = 0;
  for (int64_t i = 0; i < n; i++) {
    double v = nnp_tensor_get_f64(t, i);
    if (!isfinite(v)) {
      nonfinite++;
      continue;
    }
    if (v < mn) mn = v;
    if (v > mx) mx = v;
    sum += v;
  }
  printf("  %-24s %-8s %-16s", name, nnp_dtype_name(t->dtype), shape);
  if (n - nonfinite > 0) printf(" min %.6g  max %.6g  mean %.6g", mn, mx, sum / (double)(n - nonfinite));
  if (nonfinite) printf("  (%lld non-finite!)", (long long)nonfinite);
  printf("\n");
  /* classifier-shaped output [N, C]: top-5 of the first row */
  if (t->rank == 2 && t->dims[1] >= 5 && t->dtype == NNP_F32) {
    const float *row = t->data;
    int top[5] = {-1, -1, -1, -1, -1};
    for (int k = 0; k < 5; k++)
      for (int64_t c = 0; c < t->dims[1]; c++) {
        int taken = 0;
        for (int j = 0; j < k; j++) taken |= top[j] == c;
        if (!taken && (top[k] < 0 || row[c] > row[top[k]])) top[k] = (int)c;
      }
    printf("  %-24s top-5 of row 0: %d %d %d %d %d\n", "", top[0], top[1], top[2], top[3], top[4]);
  }
}

/* Compiles the plan. When an op needs an input's value at load time (a Reshape's shape,
 * Slice's bounds, Resize's scales, ...) and that input is given as a file, the file's
 * value is what it is for this run: the inputs given as files are then frozen to their
 * values (nnp_plan_options.consts) and the plan compiled again. A plan that compiles
 * without freezing is kept as it is, so what can run at run time still does. */
static nnp_status compile_with_files(const nnp_graph *g, nnp_plan_options *po, const input_file *files,
                                     int n_files, nnp_plan **plan) {
  nnp_status s = nnp_plan_compile(g, po, plan);
  if (s != NNP_ERR_UNSUPPORTED || n_files == 0 || !strstr(nnp_last_error(), "must be known when the model is loaded"))
    return s;
  for (int f = 0; f < n_files && po->n_consts < NNP_PLAN_MAX_BINDINGS; f++) {
    po->consts[po->n_consts].input = files[f].name;
    po->consts[po->n_consts].value = &files[f].t;
    po->n_consts++;
  }
  nnp_clear_error();
  return nnp_plan_compile(g, po, plan);
}

int nnp_cmd_run(int argc, char **argv) {
  cli_model_opts mo;
  cli_model_opts_init(&mo);
  input_file files[MAX_INPUT_FILES];
  int n_files = 0, quiet = 0, rc = CLI_FAIL;
  const char *out_dir = NULL;
  uint64_t seed = 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int used = cli_model_option(&mo, "run", argc, argv, &i);
    if (used < 0) return CLI_USAGE;
    if (used) continue;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      printf(run_help, cli_model_options_help);
      return CLI_OK;
    } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
      quiet = 1;
    } else if ((!strcmp(a, "--input") || !strcmp(a, "-i")) && i + 1 < argc) {
      char *v = argv[++i];
      char *eq = strchr(v, '=');
      if (!eq || eq == v || !eq[1]) return cli_usage_error("run", "--input wants NAME=FILE, not '%s'", v);
      if (n_files == MAX_INPUT_FILES) return cli_usage_error("run", "at most %d --input options", MAX_INPUT_FILES);
      *eq = 0;
      files[n_files].name = v;
      files[n_files].path = eq + 1;
      memset(&files[n_files].t, 0, sizeof files[n_files].t);
      n_files++;
    } else if ((!strcmp(a, "--output-dir") || !strcmp(a, "-o")) && i + 1 < argc) {
      out_dir = argv[++i];
    } else if (!strcmp(a, "--seed") && i + 1 < argc) {
      seed = strtoull(argv[++i], NULL, 10);
    } else if (a[0] == '-') {
      return cli_usage_error("run", "unknown option '%s'", a);
    } else if (!mo.model) {
      mo.model = a;
    } else {
      return cli_usage_error("run", "more than one model given ('%s' and '%s')", mo.model, a);
    }
  }
  if (!mo.model) return cli_usage_error("run", "no model given");

  nnp_graph *g = NULL;
  nnp_plan *plan = NULL;
  double t0 = cli_now();
  if (cli_load_graph(&mo, &g) != NNP_OK) {
    rc = cli_fail(NULL);
    goto done;
  }
  double t_load = cli_now();
  for (int f = 0; f < n_files; f++) {
    nnp_status s = ends_with(files[f].path, ".pb") ? nnp_onnx_read_tensor(files[f].path, &files[f].t, NULL)
                                                   : nnp_npy_read(files[f].path, &files[f].t);
    if (s != NNP_OK) {
      rc = cli_fail("--input");
      goto done;
    }
    int found = 0;
    for (int k = 0; k < g->n_inputs; k++) found |= !strcmp(g->values[g->inputs[k]].name, files[f].name);
    if (!found) {
      nnp_error(NNP_ERR_INVALID, "the model has no input named '%s'", files[f].name);
      rc = cli_fail("--input");
      goto done;
    }
    if (mo.plan.n_shapes == NNP_PLAN_MAX_BINDINGS) {
      rc = cli_usage_error("run", "too many inputs");
      goto done;
    }
    nnp_shape_binding *b = &mo.plan.shapes[mo.plan.n_shapes++];
    b->input = files[f].name;
    b->rank = files[f].t.rank;
    memcpy(b->dims, files[f].t.dims, sizeof b->dims);
  }
  cli_apply_batch(&mo, g);
  if (compile_with_files(g, &mo.plan, files, n_files, &plan) != NNP_OK) {
    rc = cli_fail(mo.model);
    goto done;
  }
  double t_compile = cli_now();
  for (int i = 0; i < nnp_plan_num_inputs(plan); i++) {
    const char *name = nnp_plan_input_name(plan, i);
    int from_file = -1;
    for (int f = 0; f < n_files; f++)
      if (!strcmp(files[f].name, name)) from_file = f;
    if (from_file >= 0) {
      if (nnp_plan_set_input(plan, i, &files[from_file].t) != NNP_OK) {
        rc = cli_fail("--input");
        goto done;
      }
    } else {
      nnp_fill_seeded(nnp_plan_input(plan, i), seed + (uint64_t)i);
    }
  }
  double t_run0 = cli_now();
  if (nnp_plan_run(plan) != NNP_OK) {
    rc = cli_fail(mo.model);
    goto done;
  }
  double t_run = cli_now();
  if (out_dir) {
    if (mkdir(out_dir, 0777) != 0 && errno != EEXIST) {
      nnp_error(NNP_ERR_IO, "cannot create output folder '%s': %s", out_dir, strerror(errno));
      rc = cli_fail(NULL);
      goto done;
    }
    /* an existing non-folder would otherwise fail on a temporary file's name (with a
     * pid in it): say what is wrong instead */
    struct stat od;
    if (stat(out_dir, &od) != 0 || !S_ISDIR(od.st_mode)) {
      nnp_error(NNP_ERR_IO, "--output-dir '%s' is not a folder", out_dir);
      rc = cli_fail(NULL);
      goto done;
    }
    for (int k = 0; k < nnp_plan_num_outputs(plan); k++) {
      char fname[256], path[4096];
      safe_file_name(nnp_plan_output_name(plan, k), fname, sizeof fname);
      snprintf(path, sizeof path, "%s/%s.npy", out_dir, fname);
      if (nnp_npy_write(path, nnp_plan_output(plan, k)) != NNP_OK) {
        rc = cli_fail(NULL);
        goto done;
      }
    }
  }
  if (!quiet) {
    printf("model   %s (opset %lld, %d nodes, %d executed)\n", mo.model, (long long)g->opset, g->n_nodes,
           nnp_plan_num_steps(plan));
    printf("inputs\n");
    for (int i = 0; i < nnp_plan_num_inputs(plan); i++) {
      const nnp_tensor *t = nnp_plan_input(plan, i);
      char shape[128];
      int from_file = 0;
      for (int f = 0; f < n_files; f++) from_file |= !strcmp(files[f].name, nnp_plan_input_name(plan, i));
      printf("  %-24s %-8s %-16s %s\n", nnp_plan_input_name(plan, i), nnp_dtype_name(t->dtype),
             nnp_shape_str(t->rank, t->dims, shape, sizeof shape), from_file ? "(from file)" : "(seeded random)");
    }
    printf("outputs\n");
    for (int k = 0; k < nnp_plan_num_outputs(plan); k++)
      print_summary(nnp_plan_output_name(plan, k), nnp_plan_output(plan, k));
    printf("time    load %.1f ms, compile %.1f ms, one inference %.1f ms (single run: use nnperf bench to measure)\n",
           (t_load - t0) * 1e3, (t_compile - t_load) * 1e3, (t_run - t_run0) * 1e3);
    if (out_dir) printf("wrote   %d output(s) to %s/\n", nnp_plan_num_outputs(plan), out_dir);
  }
  rc = CLI_OK;
done:
  nnp_plan_destroy(plan);
  nnp_graph_destroy(g);
  for (int f = 0; f < n_files; f++) nnp_tensor_free(&files[f].t);
  return rc;
}
