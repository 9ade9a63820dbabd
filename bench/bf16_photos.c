/* The native engine's bf16 precision against its fp32 on photographs (engine/bf16.h):
 * top-1 agreement and output cosine per image, fp32 plan and bf16 plan of the same model
 * (nnp_plan_options.bf16), the inputs read and normalised as `nnperf quantize` reads its
 * validation folder. bench's own bf16 rows judge seeded noise inputs; this shows the
 * accuracy on the data a classifier is for. Not a test: an accuracy report.
 *
 * usage: bench_bf16_photos MODEL.onnx DIR [MEAN_R,G,B STD_R,G,B]   (on the [0, 1] scale) */
#include <stdio.h>
#include <stdlib.h>

#include "nnperf/engine.h"
#include "nnperf/onnx.h"
#include "quant/quant_eval.h"

static int parse3(const char *s, float *v) { return sscanf(s, "%f,%f,%f", &v[0], &v[1], &v[2]) == 3; }

static int run(nnp_graph *g, const char *dir, const nnp_calib_options *co) {
  nnp_plan_options po;
  nnp_plan_options_default(&po);
  po.threads = 2;
  nnp_calib_set vs;
  nnp_eval_set es;
  if (nnp_calib_open(dir, co, &vs) != NNP_OK) return 1;
  nnp_status s = nnp_eval_set_load(g, &po, &vs, NULL, &es); /* fp32 outputs: the reference */
  nnp_calib_close(&vs);
  if (s != NNP_OK) return 1;
  po.bf16 = true;
  nnp_plan *p = NULL;
  nnp_eval_result r;
  s = nnp_plan_compile(g, &po, &p);
  if (s == NNP_OK) s = nnp_eval_plan(p, &es, &r);
  if (s == NNP_OK)
    printf("native fp32 vs bf16 on %d photos from %s: top-1 agreement %d/%d (%.1f%%), cosine mean %.5f min %.5f\n",
           r.n, dir, r.agree, r.n, r.n ? 100.0 * r.agree / r.n : 0.0, r.cos_mean, r.cos_min);
  nnp_plan_destroy(p);
  nnp_eval_set_free(&es);
  return s != NNP_OK;
}

int main(int argc, char **argv) {
  nnp_calib_options co;
  nnp_calib_options_default(&co);
  if (argc != 3 && !(argc == 5 && parse3(argv[3], co.norm.mean) && parse3(argv[4], co.norm.std))) {
    fprintf(stderr, "usage: %s MODEL.onnx DIR [MEAN_R,G,B STD_R,G,B]\n", argv[0]);
    return 2;
  }
  nnp_graph *g = NULL;
  nnp_tensor shape;
  nnp_plan_options po;
  nnp_plan_options_default(&po);
  if (nnp_onnx_load(argv[1], NULL, &g) != NNP_OK || nnp_resolve_input_shape(g, &po, 0, &shape) != NNP_OK ||
      shape.rank != 4) {
    fprintf(stderr, "bench_bf16_photos: %s: %s\n", argv[1], g ? "wants one NCHW image input" : nnp_last_error());
    nnp_graph_destroy(g);
    return 1;
  }
  co.height = (int)shape.dims[2];
  co.width = (int)shape.dims[3];
  int rc = run(g, argv[2], &co);
  if (rc) fprintf(stderr, "bench_bf16_photos: %s\n", nnp_last_error());
  nnp_graph_destroy(g);
  return rc;
}
