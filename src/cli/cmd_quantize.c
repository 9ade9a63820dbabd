/* nnperf quantize: calibrate an FP32 model on real data and write its QDQ (INT8) form.
 *
 *   nnperf quantize MODEL --calib DIR [--calibrator entropy] -o out.onnx [--compare DIR]
 *
 * --compare runs the FP32 model and the QDQ model (both in the native engine, the QDQ
 * one through the reference INT8 ops) on held-out images and prints top-1 agreement and
 * mean output cosine: accuracy travels with the quantized model. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "nnperf/onnx.h"
#include "quant/calibrate.h"
#include "quant/qdq.h"

static const char usage_text[] =
    "usage: nnperf quantize MODEL (--calib DIR | --table FILE) -o OUT.onnx [options]\n\n"
    "Calibrates MODEL (an .onnx file or zoo:NAME) on the images (JPEG/PNG) or .npy tensors in\n"
    "DIR and writes a QDQ ONNX model: uint8 per-tensor activations and int8 per-channel\n"
    "symmetric weights around every Conv/Gemm/MatMul, runnable by the native engine, ONNX\n"
    "Runtime and OpenVINO.\n\n"
    "options:\n"
    "  --calib DIR           calibration data: images (resized, centre-cropped, normalised) or .npy\n"
    "  --calibrator NAME     minmax, percentile or entropy (KL, as TensorRT; default)\n"
    "  --percentile P        for --calibrator percentile (default 99.99)\n"
    "  --calib-size N        use a seeded subset of N files (default: all)\n"
    "  --seed S              seed of the subset (default 1)\n"
    "  --resize N            shorter image side before the centre crop (default 256)\n"
    "  --mean R,G,B --std R,G,B   normalisation on the [0,1] scale (default ImageNet's)\n"
    "  --table FILE          use this calibration table instead of calibrating\n"
    "  --table-out FILE      save the calibration table\n"
    "  --keep-fp32 NODE      leave this Conv/Gemm/MatMul in FP32 (repeatable)\n"
    "  --compare DIR         FP32 vs QDQ (native engine) on the images in DIR: top-1 agreement, cosine\n"
    "  -o, --output FILE     the QDQ model to write (required)\n";

static bool parse_floats3(const char *s, float *v) {
  char *end;
  for (int i = 0; i < 3; i++) {
    v[i] = strtof(s, &end);
    if (end == s || (i < 2 && *end != ',') || (i == 2 && *end)) return false;
    s = end + 1;
  }
  return true;
}

typedef struct compare_result {
  int n, agree;
  double cos_sum, cos_min;
} compare_result;

static nnp_status compare_models(const nnp_graph *fp, const nnp_graph *q, const nnp_calib_options *co,
                                 const char *dir, compare_result *r) {
  memset(r, 0, sizeof *r);
  r->cos_min = 1;
  nnp_calib_options o = *co;
  o.size = 0;
  nnp_calib_set set;
  NNP_TRY(nnp_calib_open(dir, &o, &set));
  nnp_plan_options po;
  nnp_plan_options_default(&po);
  nnp_plan *pf = NULL, *pq = NULL;
  nnp_status s = nnp_plan_compile(fp, &po, &pf);
  if (s == NNP_OK) s = nnp_plan_compile(q, &po, &pq);
  for (int i = 0; s == NNP_OK && i < set.n; i++) {
    nnp_tensor x;
    s = nnp_calib_load(&set, i, &x);
    if (s != NNP_OK) break;
    s = nnp_plan_set_input(pf, 0, &x);
    if (s == NNP_OK) s = nnp_plan_set_input(pq, 0, &x);
    nnp_tensor_free(&x);
    if (s == NNP_OK) s = nnp_plan_run(pf);
    if (s == NNP_OK) s = nnp_plan_run(pq);
    if (s != NNP_OK) break;
    const nnp_tensor *a = nnp_plan_output(pf, 0), *b = nnp_plan_output(pq, 0);
    if (a->dtype != NNP_F32 || b->dtype != NNP_F32 || !nnp_tensor_same_shape(a, b)) {
      s = nnp_error(NNP_ERR_INVALID, "FP32 and QDQ outputs differ in type or shape");
      break;
    }
    const float *av = a->data, *bv = b->data;
    int64_t n = nnp_tensor_numel(a), ia = 0, ib = 0;
    double dot = 0, na = 0, nb = 0;
    for (int64_t k = 0; k < n; k++) {
      if (av[k] > av[ia]) ia = k;
      if (bv[k] > bv[ib]) ib = k;
      dot += (double)av[k] * bv[k];
      na += (double)av[k] * av[k];
      nb += (double)bv[k] * bv[k];
    }
    double cs = na > 0 && nb > 0 ? dot / sqrt(na * nb) : 0;
    r->n++;
    r->agree += ia == ib;
    r->cos_sum += cs;
    if (cs < r->cos_min) r->cos_min = cs;
  }
  nnp_plan_destroy(pf);
  nnp_plan_destroy(pq);
  nnp_calib_close(&set);
  return s;
}

#define MAX_KEEP 256

int nnp_cmd_quantize(int argc, char **argv) {
  cli_model_opts mo;
  cli_model_opts_init(&mo);
  const char *calib = NULL, *table_in = NULL, *table_out = NULL, *out = NULL, *compare = NULL;
  const char *keep[MAX_KEEP];
  int n_keep = 0;
  nnp_calibrator method = NNP_CALIBRATOR_ENTROPY;
  double percentile = 99.99;
  nnp_calib_options co;
  nnp_calib_options_default(&co);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool has = i + 1 < argc;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(usage_text, stdout);
      return CLI_OK;
    }
    int r = cli_model_option(&mo, "quantize", argc, argv, &i);
    if (r < 0) return CLI_USAGE;
    if (r > 0) continue;
    if (a[0] != '-') {
      if (mo.model) return cli_usage_error("quantize", "more than one MODEL ('%s' and '%s')", mo.model, a);
      mo.model = a;
    } else if (!has) {
      return cli_usage_error("quantize", "option %s needs a value", a);
    } else if (!strcmp(a, "--calib")) calib = argv[++i];
    else if (!strcmp(a, "--table")) table_in = argv[++i];
    else if (!strcmp(a, "--table-out")) table_out = argv[++i];
    else if (!strcmp(a, "--compare")) compare = argv[++i];
    else if (!strcmp(a, "-o") || !strcmp(a, "--output")) out = argv[++i];
    else if (!strcmp(a, "--calibrator")) {
      if (nnp_calibrator_parse(argv[++i], &method) != NNP_OK)
        return cli_usage_error("quantize", "--calibrator wants minmax, percentile or entropy, not '%s'", argv[i]);
    } else if (!strcmp(a, "--percentile")) {
      char *end;
      percentile = strtod(argv[++i], &end);
      if (*end || !(percentile > 0 && percentile <= 100))
        return cli_usage_error("quantize", "--percentile wants a number in (0, 100], not '%s'", argv[i]);
    } else if (!strcmp(a, "--calib-size") || !strcmp(a, "--seed") || !strcmp(a, "--resize")) {
      char *end;
      long long v = strtoll(argv[++i], &end, 10);
      if (*end || v < (strcmp(a, "--seed") ? 1 : 0) || v > 1000000000)
        return cli_usage_error("quantize", "%s wants a positive integer, not '%s'", a, argv[i]);
      if (!strcmp(a, "--calib-size")) co.size = v;
      else if (!strcmp(a, "--seed")) co.seed = (uint64_t)v;
      else co.norm.resize_short = (int)v;
    } else if (!strcmp(a, "--mean") || !strcmp(a, "--std")) {
      float v[3];
      if (!parse_floats3(argv[++i], v) || (!strcmp(a, "--std") && !(v[0] > 0 && v[1] > 0 && v[2] > 0)))
        return cli_usage_error("quantize", "%s wants three numbers R,G,B%s, not '%s'", a,
                               strcmp(a, "--std") ? "" : " (positive)", argv[i]);
      memcpy(!strcmp(a, "--mean") ? co.norm.mean : co.norm.std, v, sizeof v);
    } else if (!strcmp(a, "--keep-fp32")) {
      if (n_keep == MAX_KEEP) return cli_usage_error("quantize", "too many --keep-fp32 options");
      keep[n_keep++] = argv[++i];
    } else {
      return cli_usage_error("quantize", "unknown option '%s'", a);
    }
  }
  if (!mo.model) return cli_usage_error("quantize", "MODEL is required");
  if (!out) return cli_usage_error("quantize", "-o OUT.onnx is required");
  if (!calib && !table_in) return cli_usage_error("quantize", "--calib DIR or --table FILE is required");
  if (calib && table_in) return cli_usage_error("quantize", "--calib and --table exclude each other");

  nnp_graph *g = NULL, *gq = NULL;
  if (cli_load_graph(&mo, &g) != NNP_OK) return cli_fail("cannot load model");
  cli_apply_batch(&mo, g);
  int rc = CLI_OK;
  nnp_calib_table table = {0};
  nnp_tensor shape;
  if (g->n_inputs != 1) {
    nnp_error(NNP_ERR_UNSUPPORTED, "quantize needs a model with one input, this one has %d", g->n_inputs);
    rc = cli_fail("cannot quantize");
  } else if (nnp_resolve_input_shape(g, &mo.plan, 0, &shape) != NNP_OK) {
    rc = cli_fail("cannot resolve the input shape");
  } else if (shape.rank == 4) {
    co.height = (int)shape.dims[2];
    co.width = (int)shape.dims[3];
  }
  double t0 = cli_now();
  /* Calibrate the graph that will be quantized: BatchNormalization folded into the
   * Conv before it, so the ranges are those of the folded Conv outputs. */
  int n_folded = 0;
  if (rc == CLI_OK && nnp_qdq_fold_batchnorm(g, &n_folded) != NNP_OK) rc = cli_fail("cannot fold BatchNormalization");
  if (rc == CLI_OK && table_in) {
    if (nnp_calib_table_load(table_in, &table) != NNP_OK) rc = cli_fail("cannot load the calibration table");
  } else if (rc == CLI_OK) {
    nnp_calib_set set;
    if (nnp_calib_open(calib, &co, &set) != NNP_OK) {
      rc = cli_fail("cannot read calibration data");
    } else {
      if (nnp_calibrate(g, &set, method, percentile, &table) != NNP_OK) rc = cli_fail("calibration failed");
      else
        printf("calibrated %d tensors on %d %s from %s with %s in %.1f s\n", table.n, set.n,
               set.kind == NNP_CALIB_IMAGES ? "images" : "tensors", calib, nnp_calibrator_name(method),
               cli_now() - t0);
      nnp_calib_close(&set);
    }
  }
  if (rc == CLI_OK && table_out && nnp_calib_table_save(&table, table_out) != NNP_OK)
    rc = cli_fail("cannot save the calibration table");
  nnp_qdq_report rep;
  if (rc == CLI_OK && cli_load_graph(&mo, &gq) != NNP_OK) rc = cli_fail("cannot load model");
  if (rc == CLI_OK && nnp_qdq_rewrite(gq, &table, keep, n_keep, &rep) != NNP_OK) rc = cli_fail("QDQ rewrite failed");
  if (rc == CLI_OK && nnp_onnx_save(gq, out) != NNP_OK) rc = cli_fail("cannot write the QDQ model");
  if (rc == CLI_OK)
    printf("wrote %s: %d Conv/Gemm/MatMul quantized (QDQ), %d kept in FP32, %d BatchNormalization folded\n", out,
           rep.quantized, rep.skipped, rep.folded_bn);
  if (rc == CLI_OK && compare) {
    compare_result r;
    if (compare_models(g, gq, &co, compare, &r) != NNP_OK) rc = cli_fail("comparison failed");
    else
      printf("native FP32 vs QDQ on %d images from %s: top-1 agreement %d/%d (%.1f%%), cosine mean %.5f min %.5f\n",
             r.n, compare, r.agree, r.n, r.n ? 100.0 * r.agree / r.n : 0.0, r.n ? r.cos_sum / r.n : 0.0, r.cos_min);
  }
  nnp_calib_table_free(&table);
  nnp_graph_destroy(gq);
  nnp_graph_destroy(g);
  return rc;
}
