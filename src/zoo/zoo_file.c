/* zoo:NAME -> a temporary .onnx file (see zoo_file.h). */
#include "zoo/zoo_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nnperf/onnx.h"
#include "nnperf/zoo.h"

nnp_status nnp_zoo_model_file(const char *model, const char *tag, char *path, size_t n, char *tmpdir, size_t tn) {
  tmpdir[0] = 0;
  if (strncmp(model, "zoo:", 4)) {
    snprintf(path, n, "%s", model);
    return NNP_OK;
  }
  nnp_graph *g = NULL;
  nnp_zoo_options zo;
  nnp_zoo_options_default(&zo);
  NNP_TRY(nnp_zoo_build(model + 4, &zo, &g));
  snprintf(tmpdir, tn, "/tmp/nnperf-%s-XXXXXX", tag);
  if (!mkdtemp(tmpdir)) {
    nnp_graph_destroy(g);
    tmpdir[0] = 0;
    return nnp_error(NNP_ERR_IO, "cannot create a temporary folder: %s", strerror(errno));
  }
  snprintf(path, n, "%s/%s.onnx", tmpdir, model + 4);
  nnp_status s = nnp_onnx_save(g, path);
  nnp_graph_destroy(g);
  if (s != NNP_OK) nnp_zoo_model_file_remove(path, tmpdir);
  return s;
}

void nnp_zoo_model_file_remove(const char *path, char *tmpdir) {
  if (!tmpdir[0]) return;
  unlink(path);
  rmdir(tmpdir);
  tmpdir[0] = 0;
}
