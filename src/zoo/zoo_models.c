/* The zoo's architectures, layer for layer as torchvision (and timm, for
 * EfficientNet-Lite0) define them, and the public zoo API. */
#include <stdio.h>
#include <string.h>

#include "nnperf/alloc.h"
#include "nnperf/zoo.h"
#include "zoo/zoo_builder.h"

#define NAME(buf, ...) snprintf(buf, sizeof buf, __VA_ARGS__)

/* gamma of the BatchNormalization that ends a residual branch: trained networks keep it
 * well below 1 (torchvision's zero_init_residual takes it to 0); 0.5 keeps a stack of 16
 * residual adds from multiplying the activations' scale by ~2^8. */
#define RESIDUAL_GAMMA 0.5f

/* ---- ResNet (torchvision resnet.py: BasicBlock / Bottleneck v1.5) ---------------- */

static int basic_block(zb *b, const char *p, int x, int64_t inplanes, int64_t planes, int stride) {
  char n[160];
  NAME(n, "%s.conv1", p);
  int y = zb_conv(b, n, x, inplanes, planes, 3, stride, 1, 1, false, ZB_GAIN_RELU);
  NAME(n, "%s.bn1", p);
  y = zb_bn(b, n, y, planes, 1.0f);
  NAME(n, "%s.relu", p);
  y = zb_relu(b, n, y);
  NAME(n, "%s.conv2", p);
  y = zb_conv(b, n, y, planes, planes, 3, 1, 1, 1, false, ZB_GAIN_LINEAR);
  NAME(n, "%s.bn2", p);
  y = zb_bn(b, n, y, planes, RESIDUAL_GAMMA);
  int identity = x;
  if (stride != 1 || inplanes != planes) {
    NAME(n, "%s.downsample.0", p);
    identity = zb_conv(b, n, x, inplanes, planes, 1, stride, 0, 1, false, ZB_GAIN_LINEAR);
    NAME(n, "%s.downsample.1", p);
    identity = zb_bn(b, n, identity, planes, 1.0f);
  }
  NAME(n, "%s.add", p);
  y = zb_add(b, n, y, identity);
  NAME(n, "%s.relu_1", p); /* torchvision reuses its one `relu` module: ONNX export names the second use relu_1 */
  return zb_relu(b, n, y);
}

/* ResNet v1.5: the stride sits on the 3x3 conv, not the first 1x1. */
static int bottleneck_block(zb *b, const char *p, int x, int64_t inplanes, int64_t planes, int stride) {
  const int64_t out = planes * 4;
  char n[160];
  NAME(n, "%s.conv1", p);
  int y = zb_conv(b, n, x, inplanes, planes, 1, 1, 0, 1, false, ZB_GAIN_RELU);
  NAME(n, "%s.bn1", p);
  y = zb_bn(b, n, y, planes, 1.0f);
  NAME(n, "%s.relu", p);
  y = zb_relu(b, n, y);
  NAME(n, "%s.conv2", p);
  y = zb_conv(b, n, y, planes, planes, 3, stride, 1, 1, false, ZB_GAIN_RELU);
  NAME(n, "%s.bn2", p);
  y = zb_bn(b, n, y, planes, 1.0f);
  NAME(n, "%s.relu_1", p);
  y = zb_relu(b, n, y);
  NAME(n, "%s.conv3", p);
  y = zb_conv(b, n, y, planes, out, 1, 1, 0, 1, false, ZB_GAIN_LINEAR);
  NAME(n, "%s.bn3", p);
  y = zb_bn(b, n, y, out, RESIDUAL_GAMMA);
  int identity = x;
  if (stride != 1 || inplanes != out) {
    NAME(n, "%s.downsample.0", p);
    identity = zb_conv(b, n, x, inplanes, out, 1, stride, 0, 1, false, ZB_GAIN_LINEAR);
    NAME(n, "%s.downsample.1", p);
    identity = zb_bn(b, n, identity, out, 1.0f);
  }
  NAME(n, "%s.add", p);
  y = zb_add(b, n, y, identity);
  NAME(n, "%s.relu_2", p);
  return zb_relu(b, n, y);
}

static int resnet(zb *b, int x, int64_t classes, bool bottleneck, const int layers[4]) {
  x = zb_conv(b, "conv1", x, 3, 64, 7, 2, 3, 1, false, ZB_GAIN_RELU);
  x = zb_bn(b, "bn1", x, 64, 1.0f);
  x = zb_relu(b, "relu", x);
  x = zb_maxpool(b, "maxpool", x, 3, 2, 1, false);
  const int64_t expansion = bottleneck ? 4 : 1;
  int64_t inplanes = 64;
  for (int l = 0; l < 4; l++) {
    const int64_t planes = (int64_t)64 << l;
    for (int i = 0; i < layers[l]; i++) {
      char p[64];
      NAME(p, "layer%d.%d", l + 1, i);
      const int stride = (i == 0 && l > 0) ? 2 : 1;
      x = bottleneck ? bottleneck_block(b, p, x, inplanes, planes, stride)
                     : basic_block(b, p, x, inplanes, planes, stride);
      inplanes = planes * expansion;
    }
  }
  x = zb_global_avgpool(b, "avgpool", x);
  x = zb_flatten(b, "flatten", x);
  return zb_linear(b, "fc", x, 512 * expansion, classes, "logits");
}

static int build_resnet18(zb *b, int x, int64_t classes) {
  static const int layers[4] = {2, 2, 2, 2};
  return resnet(b, x, classes, false, layers);
}

static int build_resnet50(zb *b, int x, int64_t classes) {
  static const int layers[4] = {3, 4, 6, 3};
  return resnet(b, x, classes, true, layers);
}

/* ---- MobileNetV2 (torchvision mobilenetv2.py, width 1.0) ------------------------- */

static int inverted_residual(zb *b, const char *p, int x, int64_t inp, int64_t oup, int stride, int expand) {
  const int64_t hidden = inp * expand;
  const bool use_res = stride == 1 && inp == oup;
  char n[160];
  int j = 0, y = x;
  if (expand != 1) {
    NAME(n, "%s.conv.%d", p, j++);
    y = zb_conv_bn_act(b, n, y, inp, hidden, 1, 1, 1, 6);
  }
  NAME(n, "%s.conv.%d", p, j++);
  y = zb_conv_bn_act(b, n, y, hidden, hidden, 3, stride, (int)hidden, 6); /* depthwise */
  NAME(n, "%s.conv.%d", p, j++);
  y = zb_conv(b, n, y, hidden, oup, 1, 1, 0, 1, false, ZB_GAIN_LINEAR); /* linear bottleneck */
  NAME(n, "%s.conv.%d", p, j);
  y = zb_bn(b, n, y, oup, use_res ? RESIDUAL_GAMMA : 1.0f);
  if (!use_res) return y;
  NAME(n, "%s.add", p);
  return zb_add(b, n, x, y);
}

static int build_mobilenet_v2(zb *b, int x, int64_t classes) {
  /* t (expansion), c (channels), n (repeats), s (stride of the first) */
  static const int settings[7][4] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
                                     {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  x = zb_conv_bn_act(b, "features.0", x, 3, 32, 3, 2, 1, 6);
  int64_t inp = 32;
  int idx = 1;
  for (int s = 0; s < 7; s++)
    for (int i = 0; i < settings[s][2]; i++) {
      char p[64];
      NAME(p, "features.%d", idx++);
      x = inverted_residual(b, p, x, inp, settings[s][1], i == 0 ? settings[s][3] : 1, settings[s][0]);
      inp = settings[s][1];
    }
  x = zb_conv_bn_act(b, "features.18", x, 320, 1280, 1, 1, 1, 6);
  x = zb_global_avgpool(b, "avgpool", x);
  x = zb_flatten(b, "flatten", x);
  return zb_linear(b, "classifier.1", x, 1280, classes, "logits"); /* classifier.0 is Dropout */
}

/* ---- EfficientNet-Lite0 (timm efficientnet_lite0 naming) ------------------------- *
 * MBConv blocks with ReLU6 and no squeeze-excite; stem and head are not width-scaled
 * (32 and 1280) as the Lite variants specify; symmetric "same" padding k/2. */

static int mbconv(zb *b, const char *p, int x, int64_t in, int64_t out, int k, int stride, int expand) {
  const bool skip = stride == 1 && in == out;
  char n[160];
  int y = x;
  if (expand == 1) { /* DepthwiseSeparableConv: dw -> bn1 -> act1 -> pw -> bn2 */
    NAME(n, "%s.conv_dw", p);
    y = zb_conv(b, n, y, in, in, k, stride, k / 2, (int)in, false, ZB_GAIN_RELU);
    NAME(n, "%s.bn1", p);
    y = zb_bn(b, n, y, in, 1.0f);
    NAME(n, "%s.act1", p);
    y = zb_relu6(b, n, y);
    NAME(n, "%s.conv_pw", p);
    y = zb_conv(b, n, y, in, out, 1, 1, 0, 1, false, ZB_GAIN_LINEAR);
    NAME(n, "%s.bn2", p);
    y = zb_bn(b, n, y, out, skip ? RESIDUAL_GAMMA : 1.0f);
  } else { /* InvertedResidual: pw -> bn1 -> act1 -> dw -> bn2 -> act2 -> pwl -> bn3 */
    const int64_t mid = in * expand;
    NAME(n, "%s.conv_pw", p);
    y = zb_conv(b, n, y, in, mid, 1, 1, 0, 1, false, ZB_GAIN_RELU);
    NAME(n, "%s.bn1", p);
    y = zb_bn(b, n, y, mid, 1.0f);
    NAME(n, "%s.act1", p);
    y = zb_relu6(b, n, y);
    NAME(n, "%s.conv_dw", p);
    y = zb_conv(b, n, y, mid, mid, k, stride, k / 2, (int)mid, false, ZB_GAIN_RELU);
    NAME(n, "%s.bn2", p);
    y = zb_bn(b, n, y, mid, 1.0f);
    NAME(n, "%s.act2", p);
    y = zb_relu6(b, n, y);
    NAME(n, "%s.conv_pwl", p);
    y = zb_conv(b, n, y, mid, out, 1, 1, 0, 1, false, ZB_GAIN_LINEAR);
    NAME(n, "%s.bn3", p);
    y = zb_bn(b, n, y, out, skip ? RESIDUAL_GAMMA : 1.0f);
  }
  if (!skip) return y;
  NAME(n, "%s.add", p);
  return zb_add(b, n, y, x);
}

static int build_efficientnet_lite0(zb *b, int x, int64_t classes) {
  /* expand ratio, channels, repeats, kernel, stride of the first */
  static const int stages[7][5] = {{1, 16, 1, 3, 1},  {6, 24, 2, 3, 2},  {6, 40, 2, 5, 2}, {6, 80, 3, 3, 2},
                                   {6, 112, 3, 5, 1}, {6, 192, 4, 5, 2}, {6, 320, 1, 3, 1}};
  x = zb_conv(b, "conv_stem", x, 3, 32, 3, 2, 1, 1, false, ZB_GAIN_RELU);
  x = zb_bn(b, "bn1", x, 32, 1.0f);
  x = zb_relu6(b, "act1", x);
  int64_t in = 32;
  for (int s = 0; s < 7; s++)
    for (int i = 0; i < stages[s][2]; i++) {
      char p[64];
      NAME(p, "blocks.%d.%d", s, i);
      x = mbconv(b, p, x, in, stages[s][1], stages[s][3], i == 0 ? stages[s][4] : 1, stages[s][0]);
      in = stages[s][1];
    }
  x = zb_conv(b, "conv_head", x, 320, 1280, 1, 1, 0, 1, false, ZB_GAIN_RELU);
  x = zb_bn(b, "bn2", x, 1280, 1.0f);
  x = zb_relu6(b, "act2", x);
  x = zb_global_avgpool(b, "global_pool", x);
  x = zb_flatten(b, "flatten", x);
  return zb_linear(b, "classifier", x, 1280, classes, "logits");
}

/* ---- SqueezeNet 1.1 (torchvision squeezenet.py) ---------------------------------- */

static int fire(zb *b, const char *p, int x, int64_t in, int64_t squeeze, int64_t e1, int64_t e3) {
  char n[160];
  NAME(n, "%s.squeeze", p);
  int s = zb_conv(b, n, x, in, squeeze, 1, 1, 0, 1, true, ZB_GAIN_RELU);
  NAME(n, "%s.squeeze_activation", p);
  s = zb_relu(b, n, s);
  NAME(n, "%s.expand1x1", p);
  int a = zb_conv(b, n, s, squeeze, e1, 1, 1, 0, 1, true, ZB_GAIN_RELU);
  NAME(n, "%s.expand1x1_activation", p);
  a = zb_relu(b, n, a);
  NAME(n, "%s.expand3x3", p);
  int c = zb_conv(b, n, s, squeeze, e3, 3, 1, 1, 1, true, ZB_GAIN_RELU);
  NAME(n, "%s.expand3x3_activation", p);
  c = zb_relu(b, n, c);
  NAME(n, "%s.cat", p);
  const int parts[2] = {a, c};
  return zb_concat(b, n, 2, parts, 1);
}

static int build_squeezenet1_1(zb *b, int x, int64_t classes) {
  x = zb_conv(b, "features.0", x, 3, 64, 3, 2, 0, 1, true, ZB_GAIN_RELU);
  x = zb_relu(b, "features.1", x);
  x = zb_maxpool(b, "features.2", x, 3, 2, 0, true);
  x = fire(b, "features.3", x, 64, 16, 64, 64);
  x = fire(b, "features.4", x, 128, 16, 64, 64);
  x = zb_maxpool(b, "features.5", x, 3, 2, 0, true);
  x = fire(b, "features.6", x, 128, 32, 128, 128);
  x = fire(b, "features.7", x, 256, 32, 128, 128);
  x = zb_maxpool(b, "features.8", x, 3, 2, 0, true);
  x = fire(b, "features.9", x, 256, 48, 192, 192);
  x = fire(b, "features.10", x, 384, 48, 192, 192);
  x = fire(b, "features.11", x, 384, 64, 256, 256);
  x = fire(b, "features.12", x, 512, 64, 256, 256);
  /* classifier.0 is Dropout */
  x = zb_conv(b, "classifier.1", x, 512, classes, 1, 1, 0, 1, true, ZB_GAIN_RELU);
  x = zb_relu(b, "classifier.2", x);
  x = zb_global_avgpool(b, "classifier.3", x);
  x = zb_node(b, "flatten", "Flatten", 1, &x, "logits");
  zb_attr_int(b, "axis", 1);
  return x;
}

/* ---- tiny: every op the zoo uses, in a network that runs in milliseconds --------- */

static int build_tiny(zb *b, int x, int64_t classes) {
  x = zb_conv(b, "conv1", x, 3, 16, 3, 1, 1, 1, false, ZB_GAIN_RELU);
  x = zb_bn(b, "bn1", x, 16, 1.0f);
  x = zb_relu(b, "relu1", x);
  int y = zb_conv(b, "conv2", x, 16, 16, 3, 1, 1, 1, false, ZB_GAIN_LINEAR);
  y = zb_bn(b, "bn2", y, 16, RESIDUAL_GAMMA);
  x = zb_add(b, "add", x, y);
  x = zb_relu6(b, "relu6", x);
  x = zb_maxpool(b, "pool", x, 2, 2, 0, false);
  int a = zb_conv(b, "branch1x1", x, 16, 16, 1, 1, 0, 1, true, ZB_GAIN_RELU);
  a = zb_relu(b, "branch1x1_relu", a);
  int c = zb_conv(b, "branch3x3", x, 16, 16, 3, 1, 1, 1, true, ZB_GAIN_RELU);
  c = zb_relu(b, "branch3x3_relu", c);
  const int parts[2] = {a, c};
  x = zb_concat(b, "cat", 2, parts, 1);
  x = zb_conv(b, "conv3", x, 32, 32, 3, 2, 1, 4, true, ZB_GAIN_RELU); /* grouped */
  x = zb_relu(b, "relu3", x);
  x = zb_global_avgpool(b, "gap", x);
  x = zb_flatten(b, "flatten", x);
  return zb_linear(b, "fc", x, 32, classes, "logits");
}

/* ---- registry -------------------------------------------------------------------- */

typedef struct zoo_model {
  const char *name;
  const char *description;
  int64_t default_size, min_size, default_classes;
  int (*build)(zb *b, int input, int64_t classes);
} zoo_model;

static const zoo_model models[] = {
    {"tiny", "small CNN (conv/bn/relu/clip/add/maxpool/concat/gemm), 1x3x32x32 -> 10; for fast tests", 32, 4,
     10, build_tiny},
    {"resnet18", "ResNet-18 (torchvision), 11.7M params, 1x3x224x224 -> 1000", 224, 32, 1000, build_resnet18},
    {"resnet50", "ResNet-50 v1.5 (torchvision), 25.6M params, 1x3x224x224 -> 1000", 224, 32, 1000, build_resnet50},
    {"mobilenet_v2", "MobileNetV2 (torchvision), 3.5M params, ReLU6, 1x3x224x224 -> 1000", 224, 32, 1000,
     build_mobilenet_v2},
    {"efficientnet_lite0", "EfficientNet-Lite0 (ReLU6, no squeeze-excite), 4.7M params, 1x3x224x224 -> 1000",
     224, 32, 1000, build_efficientnet_lite0},
    {"squeezenet1_1", "SqueezeNet 1.1 (torchvision), 1.2M params, 1x3x224x224 -> 1000", 224, 32, 1000,
     build_squeezenet1_1},
};
#define N_MODELS ((int)(sizeof models / sizeof models[0]))

int nnp_zoo_count(void) { return N_MODELS; }
const char *nnp_zoo_name(int i) { return i >= 0 && i < N_MODELS ? models[i].name : NULL; }
const char *nnp_zoo_description(int i) { return i >= 0 && i < N_MODELS ? models[i].description : NULL; }

void nnp_zoo_options_default(nnp_zoo_options *o) {
  memset(o, 0, sizeof *o);
  o->seed = 1;
}

#define ZOO_MAX_IMAGE 8192
#define ZOO_MAX_BATCH ((int64_t)1 << 20)
#define ZOO_MAX_CLASSES ((int64_t)1 << 20)

nnp_status nnp_zoo_build(const char *name, const nnp_zoo_options *opt, nnp_graph **out) {
  if (!out) return nnp_error(NNP_ERR_INVALID, "nnp_zoo_build: no output pointer");
  *out = NULL;
  nnp_zoo_options defaults;
  if (!opt) {
    nnp_zoo_options_default(&defaults);
    opt = &defaults;
  }
  const zoo_model *m = NULL;
  for (int i = 0; i < N_MODELS && name; i++)
    if (strcmp(models[i].name, name) == 0) m = &models[i];
  if (!m) {
    char list[256];
    size_t used = 0;
    for (int i = 0; i < N_MODELS && used < sizeof list; i++)
      used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", models[i].name);
    return nnp_error(NNP_ERR_INVALID, "unknown zoo model '%s' (known: %s)", name ? name : "(null)", list);
  }
  const int64_t size = opt->image_size ? opt->image_size : m->default_size;
  const int64_t classes = opt->num_classes ? opt->num_classes : m->default_classes;
  if (size < m->min_size || size > ZOO_MAX_IMAGE)
    return nnp_error(NNP_ERR_SHAPE, "zoo model '%s' takes image sizes %lld to %d, not %lld", m->name,
                     (long long)m->min_size, ZOO_MAX_IMAGE, (long long)size);
  if (opt->batch < 0 || opt->batch > ZOO_MAX_BATCH)
    return nnp_error(NNP_ERR_INVALID, "zoo batch must be 0 (symbolic 'N') or 1 to %lld, not %lld",
                     (long long)ZOO_MAX_BATCH, (long long)opt->batch);
  if (classes < 1 || classes > ZOO_MAX_CLASSES)
    return nnp_error(NNP_ERR_INVALID, "zoo class count must be 1 to %lld, not %lld", (long long)ZOO_MAX_CLASSES,
                     (long long)classes);
  zb b;
  zb_begin(&b, m->name, opt->seed);
  int x = zb_input_image(&b, "input", opt->batch, 3, size, size);
  int y = m->build(&b, x, classes);
  nnp_status s = zb_finish(&b, y, opt->batch, classes, out);
  if (s != NNP_OK) return nnp_error_context(s, "building zoo model '%s'", m->name);
  return NNP_OK;
}

int64_t nnp_zoo_param_count(const nnp_graph *g) {
  if (!g || g->n_values <= 0) return 0;
  /* use[v]: 1 = read as a buffer/constant, 2 = read anywhere else. An initializer only
   * ever read as a buffer is not a parameter; one read both ways still counts once. */
  unsigned char *use = nnp_calloc((size_t)g->n_values, 1);
  if (!use) return -1;
  for (int i = 0; i < g->n_nodes; i++) {
    const nnp_node *n = &g->nodes[i];
    const bool bn = strcmp(n->op_type, "BatchNormalization") == 0 && !n->domain[0];
    const bool clip = strcmp(n->op_type, "Clip") == 0 && !n->domain[0];
    for (int k = 0; k < n->n_inputs; k++) {
      int v = n->inputs[k];
      if (v < 0 || v >= g->n_values) continue;
      const bool buffer = (bn && (k == 3 || k == 4)) || (clip && (k == 1 || k == 2));
      use[v] |= buffer ? 1 : 2;
    }
  }
  int64_t total = 0;
  for (int v = 0; v < g->n_values; v++) {
    const nnp_value *val = &g->values[v];
    if (val->kind != NNP_VALUE_INITIALIZER || !val->init || use[v] == 1) continue;
    total += nnp_tensor_numel(val->init);
  }
  nnp_free(use);
  return total;
}
