/* The model zoo: well-known image-classification architectures built directly as nnperf
 * graphs with seeded synthetic weights, so benchmarks and tests need no downloads.
 *
 * Structures follow torchvision (resnet18, resnet50, mobilenet_v2, squeezenet1_1) and
 * EfficientNet-Lite0 (as timm builds it), with the same parameter shapes and names
 * ("layer1.0.conv1.weight", "features.3.conv.0.0", ...). Dropout is omitted (it is the
 * identity at inference). Every model has one input "input", float32, of shape
 * N x 3 x S x S with the batch as the symbolic dimension "N", and one output "logits"
 * of shape N x classes.
 *
 * Weights are deterministic for a given seed and independent of the image size: each
 * tensor's stream is derived from the seed and the tensor's name. Convolution and Gemm
 * weights are Kaiming-normal scaled (std = sqrt(gain / fan_in)) and BatchNormalization
 * holds non-trivial statistics (gamma ~ 1, beta and mean small, var ~ 1), so activations
 * stay in a sane range through the whole network. */
#ifndef NNPERF_ZOO_H
#define NNPERF_ZOO_H

#include <stdint.h>

#include "nnperf/ir.h"
#include "nnperf/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nnp_zoo_options {
  uint64_t seed;       /* weight seed (default 1) */
  int64_t image_size;  /* input height = width; 0 (default): the model's own size, 224
                          (32 for "tiny") */
  int64_t batch;       /* 0 (default): symbolic dimension "N"; > 0: fixed batch size */
  int64_t num_classes; /* 0 (default): 1000 (10 for "tiny") */
} nnp_zoo_options;

void nnp_zoo_options_default(nnp_zoo_options *o);

/* Number of models, and the name / one-line description of model i (NULL out of range). */
int nnp_zoo_count(void);
const char *nnp_zoo_name(int i);
const char *nnp_zoo_description(int i);

/* Builds model `name` into a new graph (topologically sorted, op ids resolved; the
 * caller owns it: nnp_graph_destroy). opt may be NULL for defaults. An unknown name is
 * NNP_ERR_INVALID with the list of known ones; an image size the architecture cannot
 * take (it would shrink to nothing) is NNP_ERR_SHAPE. */
nnp_status nnp_zoo_build(const char *name, const nnp_zoo_options *opt, nnp_graph **out);

/* Trainable-parameter count as torchvision reports it (sum(p.numel() for p in
 * model.parameters())): the elements of every initializer except BatchNormalization's
 * running mean and variance (inputs 3 and 4, buffers in PyTorch) and Clip's bounds
 * (inputs 1 and 2, constants in PyTorch). Works on any graph, zoo-built or loaded;
 * -1 if out of memory. */
int64_t nnp_zoo_param_count(const nnp_graph *g);

#ifdef __cplusplus
}
#endif
#endif
