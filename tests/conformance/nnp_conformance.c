/* Conformance runner over the ONNX backend test data (model.onnx + test_data_set_N/
 * input_K.pb -> output_K.pb), e.g. Debian's libonnx-testdata.
 *
 * Each case is classified:
 *   pass         every output matches (|got-want| <= atol + rtol*|want|; NaN matches NaN)
 *   fail         wrong values, wrong shape, or an error other than "unsupported"
 *   unsupported  nnperf rejects the model at load time as unsupported (an op, dtype or
 *                mode it does not implement), with the reason
 * A case is "required" when every op it uses is in the engine's required op list (the
 * CNN op set). The run fails (exit 1) if a required case does not pass and is not listed
 * in the known-failures file with a reason.
 *
 * Small inputs that only feed parameter slots (a Reshape's shape, Slice bounds, axes,
 * pads, Resize scales) are frozen at load time with the test's value, the way TensorRT
 * treats shape tensors: nnperf resolves shapes when a model is loaded. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nnperf/alloc.h"
#include "nnperf/engine.h"
#include "nnperf/onnx.h"
#include "ops/op.h"

static const char *const required_ops[] = {
    "Conv", "ConvTranspose", "BatchNormalization", "Relu", "LeakyRelu", "Clip", "Sigmoid", "HardSigmoid",
    "HardSwish", "Tanh", "Erf", "Gelu", "Add", "Sub", "Mul", "Div", "Pow", "MaxPool", "AveragePool",
    "GlobalAveragePool", "GlobalMaxPool", "Gemm", "MatMul", "Flatten", "Reshape", "Transpose", "Concat",
    "Split", "Slice", "Gather", "Squeeze", "Unsqueeze", "Pad", "Resize", "Softmax", "LogSoftmax",
    "ReduceMean", "ReduceSum", "ReduceMax", "Shape", "Constant", "ConstantOfShape", "Identity", "Cast",
    "Dropout", "Sqrt", "Exp", "Log", "Neg", "Abs", "Where", "Equal", "Less", "Greater", "Expand", "Tile",
    /* INT8 (issue 6): QDQ and QOperator models */
    "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "QLinearConv", "QLinearMatMul",
    "ConvInteger", "MatMulInteger"};

static int is_required_op(const char *domain, const char *op) {
  if (domain && domain[0] && strcmp(domain, "ai.onnx") != 0) return 0;
  for (size_t i = 0; i < sizeof required_ops / sizeof *required_ops; i++)
    if (strcmp(required_ops[i], op) == 0) return 1;
  return 0;
}

enum { R_PASS, R_FAIL, R_UNSUPPORTED };
static const char *const result_name[] = {"pass", "FAIL", "unsupported"};

typedef struct op_count {
  char name[64];
  int n[3];
} op_count;

static op_count ops[512];
static int n_ops;

static void count_op(const char *name, int r) {
  for (int i = 0; i < n_ops; i++)
    if (strcmp(ops[i].name, name) == 0) {
      ops[i].n[r]++;
      return;
    }
  if (n_ops == (int)(sizeof ops / sizeof *ops)) return;
  snprintf(ops[n_ops].name, sizeof ops[n_ops].name, "%s", name);
  ops[n_ops++].n[r] = 1;
}

static double atol_ = 1e-5, rtol_ = 1e-3;

static int compare(const nnp_tensor *got, const nnp_tensor *want, char *why, size_t nwhy) {
  if (got->dtype != want->dtype) {
    snprintf(why, nwhy, "dtype %s, expected %s", nnp_dtype_name(got->dtype), nnp_dtype_name(want->dtype));
    return 0;
  }
  if (!nnp_tensor_same_shape(got, want)) {
    char a[128], b[128];
    snprintf(why, nwhy, "shape %s, expected %s", nnp_shape_str(got->rank, got->dims, a, sizeof a),
             nnp_shape_str(want->rank, want->dims, b, sizeof b));
    return 0;
  }
  int64_t n = nnp_tensor_numel(want);
  int is_float = want->dtype == NNP_F32 || want->dtype == NNP_F64 || want->dtype == NNP_F16 || want->dtype == NNP_BF16;
  for (int64_t i = 0; i < n; i++) {
    if (is_float) {
      double g = nnp_tensor_get_f64(got, i), w = nnp_tensor_get_f64(want, i);
      if (g != g && w != w) continue;
      if (g == w) continue; /* also equal infinities */
      if (!(__builtin_fabs(g - w) <= atol_ + rtol_ * __builtin_fabs(w))) {
        snprintf(why, nwhy, "element %lld is %.9g, expected %.9g", (long long)i, g, w);
        return 0;
      }
    } else if (nnp_tensor_get_i64(got, i) != nnp_tensor_get_i64(want, i)) {
      snprintf(why, nwhy, "element %lld is %lld, expected %lld", (long long)i, (long long)nnp_tensor_get_i64(got, i),
               (long long)nnp_tensor_get_i64(want, i));
      return 0;
    }
  }
  return 1;
}

static int file_exists(const char *p) {
  struct stat st;
  return stat(p, &st) == 0;
}

/* Op inputs that carry parameters (shapes, axes, pads, bounds) rather than data: the
 * backend tests feed them as graph inputs, nnperf needs them at load time. */
static int is_parameter_slot(const char *op, int slot) {
  static const struct {
    const char *op;
    int first, last;
  } slots[] = {{"Reshape", 1, 1},   {"Expand", 1, 1},    {"Tile", 1, 1},       {"Slice", 1, 4},
               {"Pad", 1, 3},       {"Resize", 1, 3},    {"Upsample", 1, 1},   {"Squeeze", 1, 1},
               {"Unsqueeze", 1, 1}, {"ReduceSum", 1, 1}, {"ReduceMean", 1, 1}, {"ReduceMax", 1, 1},
               {"ReduceMin", 1, 1}, {"ReduceProd", 1, 1}, {"Split", 1, 1},     {"ConstantOfShape", 0, 0},
               {"Range", 0, 2}};
  for (size_t i = 0; i < sizeof slots / sizeof *slots; i++)
    if (!strcmp(slots[i].op, op) && slot >= slots[i].first && slot <= slots[i].last) return 1;
  return 0;
}

/* A graph input is frozen at load time when it is small and every use of it is a
 * parameter slot. */
static int freeze_input(const nnp_graph *g, int value, const nnp_tensor *t) {
  if (nnp_tensor_numel(t) > 64) return 0;
  int uses = 0;
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i].n_inputs; k++)
      if (g->nodes[i].inputs[k] == value) {
        if (!is_parameter_slot(g->nodes[i].op_type, k)) return 0;
        uses++;
      }
  return uses > 0;
}

/* --threads N, --kernels reference|fast, --no-blocked: the plan options every case
 * compiles with (--no-blocked takes the blocked-layout pass out of the default passes) */
static int opt_threads = 1;
static bool opt_fast_kernels = true;
static bool opt_no_blocked = false;

/* Runs one data set; returns R_PASS/R_FAIL/R_UNSUPPORTED with a reason. */
static int run_data_set(const nnp_graph *g, const char *dir, char *why, size_t nwhy) {
  nnp_tensor inputs[NNP_PLAN_MAX_BINDINGS];
  int n_inputs = 0, result = R_FAIL;
  nnp_plan *plan = NULL;
  nnp_plan_options opt;
  nnp_plan_options_default(&opt);
  opt.threads = opt_threads;
  opt.fast_kernels = opt_fast_kernels;
  if (opt_no_blocked) opt.passes &= ~(unsigned)NNP_PASS_BLOCKED_LAYOUT;
  char path[4096];
  for (;; n_inputs++) {
    snprintf(path, sizeof path, "%s/input_%d.pb", dir, n_inputs);
    if (!file_exists(path)) break;
    if (n_inputs == NNP_PLAN_MAX_BINDINGS || n_inputs >= g->n_inputs) {
      snprintf(why, nwhy, "more input files than graph inputs");
      goto done;
    }
    if (nnp_onnx_read_tensor(path, &inputs[n_inputs], NULL) != NNP_OK) {
      snprintf(why, nwhy, "%s", nnp_last_error());
      result = R_UNSUPPORTED;
      goto done;
    }
    /* ONNX 1.12's test data stores bfloat16 tensors as uint16 bit patterns */
    if (inputs[n_inputs].dtype == NNP_U16 && g->values[g->inputs[n_inputs]].dtype == NNP_BF16)
      inputs[n_inputs].dtype = NNP_BF16;
    if (freeze_input(g, g->inputs[n_inputs], &inputs[n_inputs])) {
      opt.consts[opt.n_consts].input = g->values[g->inputs[n_inputs]].name;
      opt.consts[opt.n_consts++].value = &inputs[n_inputs];
    }
    nnp_shape_binding *b = &opt.shapes[opt.n_shapes++];
    b->input = g->values[g->inputs[n_inputs]].name;
    b->rank = inputs[n_inputs].rank;
    memcpy(b->dims, inputs[n_inputs].dims, sizeof b->dims);
  }
  nnp_status s = nnp_plan_compile(g, &opt, &plan);
  if (s != NNP_OK) {
    snprintf(why, nwhy, "%s", nnp_last_error());
    result = s == NNP_ERR_UNSUPPORTED ? R_UNSUPPORTED : R_FAIL;
    goto done;
  }
  for (int i = 0; i < n_inputs; i++) {
    if (nnp_plan_set_input(plan, i, &inputs[i]) != NNP_OK) {
      snprintf(why, nwhy, "%s", nnp_last_error());
      goto done;
    }
  }
  if (nnp_plan_run(plan) != NNP_OK) {
    snprintf(why, nwhy, "run: %s", nnp_last_error());
    goto done;
  }
  result = R_PASS;
  for (int k = 0; k < nnp_plan_num_outputs(plan); k++) {
    snprintf(path, sizeof path, "%s/output_%d.pb", dir, k);
    if (!file_exists(path)) break;
    nnp_tensor want;
    if (nnp_onnx_read_tensor(path, &want, NULL) != NNP_OK) {
      snprintf(why, nwhy, "%s", nnp_last_error());
      result = R_UNSUPPORTED;
      break;
    }
    char cwhy[300];
    if (want.dtype == NNP_U16 && nnp_plan_output(plan, k)->dtype == NNP_BF16) want.dtype = NNP_BF16;
    int ok = compare(nnp_plan_output(plan, k), &want, cwhy, sizeof cwhy);
    nnp_tensor_free(&want);
    if (!ok) {
      snprintf(why, nwhy, "output %d ('%s'): %s", k, nnp_plan_output_name(plan, k), cwhy);
      result = R_FAIL;
      break;
    }
  }
done:
  nnp_plan_destroy(plan);
  for (int i = 0; i < n_inputs; i++) nnp_tensor_free(&inputs[i]);
  return result;
}

typedef struct known_failure {
  char name[128];
  int seen;
} known_failure;
static known_failure known[512];
static int n_known;

static void load_known(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "cannot open known-failures file %s\n", path);
    exit(2);
  }
  char line[512];
  while (fgets(line, sizeof line, f) && n_known < (int)(sizeof known / sizeof *known)) {
    if (line[0] == '#' || line[0] == '\n') continue;
    char *sp = strpbrk(line, " \t\n");
    if (sp) *sp = 0;
    size_t len = strlen(line);
    if (len >= sizeof known[0].name) len = sizeof known[0].name - 1;
    memcpy(known[n_known].name, line, len);
    known[n_known++].name[len] = 0;
  }
  fclose(f);
}

static known_failure *find_known(const char *name) {
  for (int i = 0; i < n_known; i++)
    if (strcmp(known[i].name, name) == 0) return &known[i];
  return NULL;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void usage(void) {
  puts("usage: nnp_conformance [--filter SUBSTR] [--known-failures FILE] [--verbose] [--list-required] [--threads N] [--kernels reference|fast] [--no-blocked]\n"
       "                       [--rtol X] [--atol X] DIR...\n"
       "Runs every ONNX backend test case (a folder with model.onnx and test_data_set_N/) under each\n"
       "DIR (default /usr/share/libonnx-testdata/data/node), prints one line per case that does not\n"
       "pass (all cases with --verbose), a per-op table, and the totals. Exit 1 when a case whose ops\n"
       "are all in the required CNN op list does not pass and is not in the known-failures file.");
}

int main(int argc, char **argv) {
  const char *filter = NULL;
  int verbose = 0, list_required = 0;
  const char *dirs[16];
  int n_dirs = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--filter") && i + 1 < argc) filter = argv[++i];
    else if (!strcmp(argv[i], "--known-failures") && i + 1 < argc) load_known(argv[++i]);
    else if (!strcmp(argv[i], "--verbose") || !strcmp(argv[i], "-v")) verbose = 1;
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc) opt_threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--kernels") && i + 1 < argc) opt_fast_kernels = strcmp(argv[++i], "reference") != 0;
    else if (!strcmp(argv[i], "--no-blocked")) opt_no_blocked = true;
    else if (!strcmp(argv[i], "--list-required")) list_required = 1;
    else if (!strcmp(argv[i], "--rtol") && i + 1 < argc) rtol_ = atof(argv[++i]);
    else if (!strcmp(argv[i], "--atol") && i + 1 < argc) atol_ = atof(argv[++i]);
    else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage();
      return 0;
    } else if (argv[i][0] == '-') {
      fprintf(stderr, "unknown option %s\n", argv[i]);
      usage();
      return 2;
    } else if (n_dirs < 16) dirs[n_dirs++] = argv[i];
  }
  if (!n_dirs) dirs[n_dirs++] = "/usr/share/libonnx-testdata/data/node";
  int totals[3] = {0}, req_totals[3] = {0}, regressions = 0, fixed = 0;
  for (int d = 0; d < n_dirs; d++) {
    DIR *dp = opendir(dirs[d]);
    if (!dp) {
      fprintf(stderr, "cannot open test data folder %s (install libonnx-testdata)\n", dirs[d]);
      return 2;
    }
    char **names = NULL;
    int n_names = 0;
    struct dirent *de;
    while ((de = readdir(dp))) {
      if (strncmp(de->d_name, "test_", 5) != 0) continue;
      if (filter && !strstr(de->d_name, filter)) continue;
      names = realloc(names, sizeof *names * (size_t)(n_names + 1));
      names[n_names++] = strdup(de->d_name);
    }
    closedir(dp);
    if (n_names > 1) qsort(names, (size_t)n_names, sizeof *names, cmp_str);
    for (int t = 0; t < n_names; t++) {
      char path[4096], why[1200] = "";
      snprintf(path, sizeof path, "%s/%s/model.onnx", dirs[d], names[t]);
      nnp_graph *g = NULL;
      int result = R_PASS, required = 1;
      nnp_status s = nnp_onnx_load(path, NULL, &g);
      if (s != NNP_OK) {
        snprintf(why, sizeof why, "%s", nnp_last_error());
        result = s == NNP_ERR_UNSUPPORTED ? R_UNSUPPORTED : R_FAIL;
        required = 0;
      } else {
        for (int i = 0; i < g->n_nodes; i++)
          if (!is_required_op(g->nodes[i].domain, g->nodes[i].op_type)) required = 0;
        int sets = 0;
        for (int k = 0; result == R_PASS; k++) {
          snprintf(path, sizeof path, "%s/%s/test_data_set_%d", dirs[d], names[t], k);
          if (!file_exists(path)) break;
          result = run_data_set(g, path, why, sizeof why);
          sets++;
        }
        if (!sets) {
          result = R_FAIL;
          snprintf(why, sizeof why, "no test_data_set_N folder");
        }
      }
      totals[result]++;
      if (required) req_totals[result]++;
      if (g) {
        /* count each distinct op of the case once */
        for (int i = 0; i < g->n_nodes; i++) {
          int dup = 0;
          for (int j = 0; j < i; j++)
            if (!strcmp(g->nodes[j].op_type, g->nodes[i].op_type)) dup = 1;
          if (!dup) count_op(g->nodes[i].op_type, result);
        }
      } else {
        count_op("(load failed)", result);
      }
      known_failure *kf = find_known(names[t]);
      if (kf) kf->seen = 1;
      const char *tag = "";
      if (required && result != R_PASS) {
        if (kf) tag = " [known]";
        else {
          tag = " [REGRESSION: required ops]";
          regressions++;
        }
      } else if (kf && result == R_PASS) {
        tag = " [listed as known failure but passes: remove it]";
        fixed++;
      }
      if (verbose || result != R_PASS || tag[0] || list_required)
        if (!list_required || required)
          printf("%-11s %s%s%s%s\n", result_name[result], names[t], tag, why[0] ? ": " : "", why);
      nnp_graph_destroy(g);
      free(names[t]);
    }
    free(names);
  }
  printf("\n%-28s %6s %6s %11s\n", "op", "pass", "fail", "unsupported");
  for (int i = 0; i < n_ops; i++)
    printf("%-28s %6d %6d %11d\n", ops[i].name, ops[i].n[R_PASS], ops[i].n[R_FAIL], ops[i].n[R_UNSUPPORTED]);
  printf("\nrequired-op cases: %d passed, %d failed, %d unsupported\n", req_totals[R_PASS], req_totals[R_FAIL],
         req_totals[R_UNSUPPORTED]);
  printf("all cases:         %d passed, %d failed, %d unsupported\n", totals[R_PASS], totals[R_FAIL],
         totals[R_UNSUPPORTED]);
  if (regressions) printf("%d required case(s) do not pass and are not known failures\n", regressions);
  if (fixed) printf("%d known failure(s) now pass: update the known-failures file\n", fixed);
  return regressions || fixed ? 1 : 0;
}
