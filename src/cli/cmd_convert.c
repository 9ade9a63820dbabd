/* nnperf convert: writes MODEL in another framework's format. Today: TFLite, through
 * nnperf's own ONNX -> TFLite converter (python/nnperf_worker/onnx_to_tflite.py, run by
 * the .venv interpreter that has LiteRT's schema), the same converter the tflite row uses. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "nnperf/backend.h"
#include "nnperf/onnx.h"
#include "nnperf/zoo.h"

static const char convert_help[] =
    "usage: nnperf convert MODEL --to tflite -o FILE.tflite [--batch N]\n\n"
    "Converts MODEL (an .onnx file or zoo:NAME) to a .tflite file LiteRT runs: float32 for a\n"
    "float model, full int8 for a QDQ model written by nnperf quantize (its calibrated scales).\n"
    "4-D inputs and outputs are NHWC, as TFLite users feed them. An op the converter lacks\n"
    "is named in the error (exit 1). Needs scripts/install-python.sh (ai-edge-litert, onnx).\n"
    "See docs/backend-tflite.md.\n\n"
    "options:\n"
    "  --to tflite            the target format\n"
    "  -o, --output FILE      where to write it\n"
    "  --batch N              the batch size where the model's is symbolic (default 1)\n";

/* zoo:NAME is written to a temporary ONNX file first: the converter reads ONNX files. */
static int zoo_to_file(const char *model, char *path, size_t n) {
  snprintf(path, n, "/tmp/nnperf-convert-XXXXXX.onnx");
  int fd = mkstemps(path, 5);
  if (fd < 0) return cli_usage_error("convert", "cannot create a temporary file: %s", strerror(errno));
  close(fd);
  nnp_zoo_options zo;
  nnp_zoo_options_default(&zo);
  nnp_graph *g = NULL;
  nnp_status s = nnp_zoo_build(model + 4, &zo, &g);
  if (s == NNP_OK) s = nnp_onnx_save(g, path);
  nnp_graph_destroy(g);
  if (s != NNP_OK) {
    unlink(path);
    return cli_fail(model);
  }
  return CLI_OK;
}

static int run_converter(const char *model, const char *out, const char *batch) {
  const char *py = nnp_external_python();
  if (access(py, X_OK) != 0) {
    fprintf(stderr, "nnperf: error: no Python environment at %s (run scripts/install-python.sh)\n", py);
    return CLI_FAIL;
  }
  pid_t pid = fork();
  if (pid < 0) return cli_usage_error("convert", "cannot start the converter: %s", strerror(errno));
  if (pid == 0) {
    setenv("PYTHONPATH", nnp_external_pythonpath(), 1);
    execl(py, py, "-m", "nnperf_worker.onnx_to_tflite", model, out, "--batch", batch, (char *)NULL);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? CLI_OK : CLI_FAIL;
}

int nnp_cmd_convert(int argc, char **argv) {
  const char *model = NULL, *to = NULL, *out = NULL, *batch = "1";
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int has_value = i + 1 < argc;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      printf("%s", convert_help);
      return CLI_OK;
    } else if (!strcmp(a, "--to") && has_value) {
      to = argv[++i];
    } else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && has_value) {
      out = argv[++i];
    } else if (!strcmp(a, "--batch") && has_value) {
      batch = argv[++i];
      if (atoll(batch) <= 0 || strspn(batch, "0123456789") != strlen(batch))
        return cli_usage_error("convert", "--batch wants a positive integer, not '%s'", batch);
    } else if (a[0] == '-') {
      return cli_usage_error("convert", "unknown option '%s' (or it is missing its value)", a);
    } else if (!model) {
      model = a;
    } else {
      return cli_usage_error("convert", "more than one model given");
    }
  }
  if (!model) return cli_usage_error("convert", "no model given");
  if (!to || strcmp(to, "tflite")) return cli_usage_error("convert", "--to wants 'tflite', not '%s'", to ? to : "");
  if (!out) return cli_usage_error("convert", "no output file given (-o FILE.tflite)");
  if (strncmp(model, "zoo:", 4) && access(model, R_OK) != 0)
    return cli_usage_error("convert", "model '%s' not found or not readable: %s", model, strerror(errno));
  char tmp[64] = "";
  if (!strncmp(model, "zoo:", 4)) {
    int rc = zoo_to_file(model, tmp, sizeof tmp);
    if (rc != CLI_OK) return rc;
  }
  int rc = run_converter(tmp[0] ? tmp : model, out, batch);
  if (tmp[0]) unlink(tmp);
  return rc;
}
