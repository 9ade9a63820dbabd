/* nnperf zoo: built-in architectures as real ONNX files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "nnperf/onnx.h"
#include "nnperf/zoo.h"

static const char zoo_help[] =
    "usage: nnperf zoo NAME -o FILE.onnx [options]\n"
    "       nnperf zoo --list\n\n"
    "Writes a standard architecture with seeded weights as an ONNX file (opset 13, input\n"
    "\"input\" N x 3 x S x S with symbolic batch N, output \"logits\"). The same models are\n"
    "available to every command as zoo:NAME without writing a file.\n\n"
    "options:\n"
    "  -o, --output FILE      where to write the model\n"
    "  --seed N               weight seed (default 1)\n"
    "  --image-size S         input height and width (default: the model's own, 224)\n"
    "  --batch N              fix the batch dimension instead of leaving it symbolic\n"
    "  --classes N            number of output classes (default 1000)\n"
    "  --list                 list the models\n";

static int parse_pos(const char *v, int64_t *out) {
  char *end;
  long long x = strtoll(v, &end, 10);
  if (*end || x <= 0) return 0;
  *out = x;
  return 1;
}

int nnp_cmd_zoo(int argc, char **argv) {
  nnp_zoo_options zo;
  nnp_zoo_options_default(&zo);
  const char *name = NULL, *out = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int has_value = i + 1 < argc;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      printf("%s", zoo_help);
      return CLI_OK;
    } else if (!strcmp(a, "--list")) {
      for (int k = 0; k < nnp_zoo_count(); k++) printf("%-20s %s\n", nnp_zoo_name(k), nnp_zoo_description(k));
      return CLI_OK;
    } else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && has_value) {
      out = argv[++i];
    } else if (!strcmp(a, "--seed") && has_value) {
      zo.seed = strtoull(argv[++i], NULL, 10);
    } else if (!strcmp(a, "--image-size") && has_value) {
      if (!parse_pos(argv[++i], &zo.image_size)) return cli_usage_error("zoo", "--image-size wants a positive integer");
    } else if (!strcmp(a, "--batch") && has_value) {
      if (!parse_pos(argv[++i], &zo.batch)) return cli_usage_error("zoo", "--batch wants a positive integer");
    } else if (!strcmp(a, "--classes") && has_value) {
      if (!parse_pos(argv[++i], &zo.num_classes)) return cli_usage_error("zoo", "--classes wants a positive integer");
    } else if (a[0] == '-') {
      return cli_usage_error("zoo", "unknown option '%s' (or it is missing its value)", a);
    } else if (!name) {
      name = a;
    } else {
      return cli_usage_error("zoo", "more than one model name given");
    }
  }
  if (!name) return cli_usage_error("zoo", "no model name given (nnperf zoo --list shows them)");
  if (!out) return cli_usage_error("zoo", "no output file given (-o FILE.onnx)");
  nnp_graph *g = NULL;
  if (nnp_zoo_build(name, &zo, &g) != NNP_OK) return cli_fail(NULL);
  nnp_status s = nnp_onnx_save(g, out);
  if (s == NNP_OK) printf("wrote %s: %s, %d nodes, %lld parameters\n", out, name, g->n_nodes,
                          (long long)nnp_zoo_param_count(g));
  nnp_graph_destroy(g);
  return s == NNP_OK ? CLI_OK : cli_fail(NULL);
}
