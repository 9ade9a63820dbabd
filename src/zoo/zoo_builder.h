/* A small graph-building layer for the model zoo.
 *
 * Errors are sticky: the first failure is kept in b->status and every later call does
 * nothing and returns -1, so architecture code reads as a plain sequence of layers and
 * checks once at the end (zb_finish). Layer helpers name their node and its output value
 * after `name` and their parameters "<name>.weight", "<name>.bias", ... as torchvision
 * does. Values are graph value indices. */
#ifndef NNP_ZOO_BUILDER_H
#define NNP_ZOO_BUILDER_H

#include <stdbool.h>
#include <stdint.h>

#include "nnperf/ir.h"
#include "nnperf/status.h"

typedef struct zb {
  nnp_graph *g;       /* being built; owned by the builder until zb_finish */
  uint64_t seed;
  nnp_status status;  /* first error, NNP_OK while all is well */
  int last_node;      /* index of the node the last helper added (for zb_attr_*) */
  int relu6_min, relu6_max; /* Clip bounds shared by every Relu6, made on first use */
} zb;

/* Starts a graph named name (opset 13). Check b->status afterwards or at zb_finish. */
void zb_begin(zb *b, const char *name, uint64_t seed);
/* Declares the graph output (float32 of shape N x classes, N the batch symbol or the
 * fixed batch), sorts the graph and hands it over. On any recorded error the graph is
 * destroyed and the error returned. */
nnp_status zb_finish(zb *b, int output, int64_t batch, int64_t classes, nnp_graph **out);

/* Graph input "name": float32 N x c x h x w; batch <= 0 makes N the symbol "N". */
int zb_input_image(zb *b, const char *name, int64_t batch, int64_t c, int64_t h, int64_t w);

/* Initializers (float32). normal: mean + std * n, n a seeded normal-ish deviate. */
int zb_param_normal(zb *b, const char *name, int rank, const int64_t *dims, float mean, float std);
int zb_param_scalar(zb *b, const char *name, float v);

/* A node with one output named out_name (NULL: the node's name). Returns the output. */
int zb_node(zb *b, const char *name, const char *op_type, int n_in, const int *ins, const char *out_name);
void zb_attr_int(zb *b, const char *name, int64_t v);
void zb_attr_float(zb *b, const char *name, float v);
void zb_attr_ints(zb *b, const char *name, int n, const int64_t *v);

/* Gain of the Kaiming scaling: 2 when the layer feeds a ReLU (which halves the second
 * moment), 1 when it feeds a linear path (residual branches, projections, logits). */
#define ZB_GAIN_RELU 2.0f
#define ZB_GAIN_LINEAR 1.0f

/* k x k convolution, square stride/pad; weight [cout, cin/group, k, k]. */
int zb_conv(zb *b, const char *name, int x, int64_t cin, int64_t cout, int k, int stride, int pad, int group,
            bool bias, float gain);
/* BatchNormalization (epsilon 1e-5) with seeded statistics; gamma is drawn around
 * gamma_mean (1 normally; smaller at the end of residual branches, as trained networks
 * have it, so that stacked residual adds do not blow activations up). */
int zb_bn(zb *b, const char *name, int x, int64_t c, float gamma_mean);
int zb_relu(zb *b, const char *name, int x);
int zb_relu6(zb *b, const char *name, int x); /* Clip(x, 0, 6), bounds as inputs (opset 11+) */
int zb_add(zb *b, const char *name, int x, int y);
int zb_maxpool(zb *b, const char *name, int x, int k, int stride, int pad, bool ceil_mode);
int zb_global_avgpool(zb *b, const char *name, int x);
int zb_flatten(zb *b, const char *name, int x);
/* Gemm(x, W^T, b) with W [out, in] as torch.nn.Linear stores it. */
int zb_linear(zb *b, const char *name, int x, int64_t in, int64_t out, const char *out_name);
int zb_concat(zb *b, const char *name, int n, const int *xs, int axis);

/* Conv (no bias) -> BatchNormalization -> activation, named <prefix>.0/.1/.2 as
 * torchvision's Conv2dNormActivation. act: 0 none, 1 ReLU, 6 ReLU6. */
int zb_conv_bn_act(zb *b, const char *prefix, int x, int64_t cin, int64_t cout, int k, int stride, int group,
                   int act);

#endif
