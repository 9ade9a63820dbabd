/* Batch lanes (engine/batch_lanes.h): the per-sample check, the batch-1 lane plans, and
 * the run that feeds them image by image. */
#include "engine/batch_lanes.h"

#include <stdatomic.h>
#include <string.h>

#include "ir/shape_infer.h"
#include "kernels/dispatch.h"
#include "nnperf/alloc.h"
#include "ops/internal_ops.h"
#include "ops/op.h"

struct nnp_batch_lanes {
  int n_lanes;
  int64_t batch;
  nnp_plan **lane; /* n_lanes batch-1 plans, one thread each */
  nnp_status *status;
  atomic_llong next; /* the next image to run: lanes claim images as they go */
};

int nnp_batch_lanes_count(const nnp_batch_lanes *bl) { return bl ? bl->n_lanes : 0; }

void nnp_batch_lanes_destroy(nnp_batch_lanes *bl) {
  if (!bl) return;
  for (int l = 0; l < bl->n_lanes; l++)
    if (bl->lane) nnp_plan_destroy(bl->lane[l]);
  nnp_free(bl->lane);
  nnp_free(bl->status);
  nnp_free(bl);
}

/* A constant operand that broadcasts without touching the batch axis: fewer dimensions
 * than the output, or a leading 1. */
static bool batch_free(const nnp_tensor *t, int out_rank) { return t->rank < out_rank || t->dims[0] == 1; }

static bool is_act(const nnp_plan *p, int v) { return v >= 0 && nnp_plan_value(p, v) && !nnp_plan_value_is_constant(p, v); }

static int64_t norm_axis(int64_t axis, int rank) { return axis < 0 ? axis + rank : axis; }

/* An elementwise step: per image when every constant operand broadcasts along the batch
 * and some operand is an activation, whichever its place: ConvNeXt's layer scale is
 * Mul(gamma, x), the constant first (that alone kept convnext_tiny off the lanes). */
static bool eltwise_per_sample(const nnp_plan *p, const nnp_node *n, int out_rank) {
  bool act = false;
  for (int k = 0; k < n->n_inputs; k++) {
    const int v = n->inputs[k];
    if (v < 0) continue;
    if (is_act(p, v)) {
      act = true;
      continue;
    }
    const nnp_tensor *c = nnp_plan_value(p, v);
    if (!c || !batch_free(c, out_rank)) return false;
  }
  return act;
}

/* Whether step node n computes each image from that image alone. The shapes are checked
 * by the caller (every non-constant input and output has the batch N first); this
 * checks the op and what its constant operands and attributes do to the batch axis.
 * Elementwise ops first (any operand may be the activation), then the rest, whose
 * input 0 must be. */
static bool per_sample_node(const nnp_plan *p, const nnp_node *n) {
  const nnp_tensor *y = n->n_outputs > 0 && n->outputs[0] >= 0 ? nnp_plan_value(p, n->outputs[0]) : NULL;
  if (!y || n->n_inputs < 1) return false;
  switch (n->op) {
    case NNP_OP_ABS: case NNP_OP_NEG: case NNP_OP_SQRT: case NNP_OP_EXP: case NNP_OP_LOG: case NNP_OP_RECIPROCAL:
    case NNP_OP_FLOOR: case NNP_OP_CEIL: case NNP_OP_ERF: case NNP_OP_TANH: case NNP_OP_SIGMOID: case NNP_OP_RELU:
    case NNP_OP_LEAKY_RELU: case NNP_OP_HARD_SIGMOID: case NNP_OP_HARD_SWISH: case NNP_OP_GELU: case NNP_OP_ELU:
    case NNP_OP_SELU: case NNP_OP_SOFTPLUS: case NNP_OP_CLIP: case NNP_OP_IDENTITY: case NNP_OP_DROPOUT:
    case NNP_OP_ADD: case NNP_OP_SUB: case NNP_OP_MUL: case NNP_OP_DIV: case NNP_OP_POW: case NNP_OP_MAX:
    case NNP_OP_MIN: case NNP_OP_SUM: case NNP_OP_MEAN: case NNP_OP_PRELU: case NNP_OP_FUSED_ELEMENTWISE:
    case NNP_OP_BLOCKED_CHANNEL_MUL: case NNP_OP_FUSED_LAYER_NORM: case NNP_OP_BLOCKED_BATCH_NORM:
      return eltwise_per_sample(p, n, y->rank);
    default:
      break;
  }
  if (!is_act(p, n->inputs[0])) return false;
  switch (n->op) {
    /* weights and parameters are constants; a residual (FusedConv input 3) is per image */
    case NNP_OP_CONV: case NNP_OP_CONV_TRANSPOSE: case NNP_OP_MAX_POOL: case NNP_OP_AVERAGE_POOL:
    case NNP_OP_GLOBAL_AVERAGE_POOL: case NNP_OP_GLOBAL_MAX_POOL: case NNP_OP_BATCH_NORMALIZATION: case NNP_OP_FUSED_BATCH_NORM:
    case NNP_OP_INSTANCE_NORMALIZATION: case NNP_OP_LRN: case NNP_OP_FUSED_CONV: case NNP_OP_BLOCKED_CONV:
    case NNP_OP_BLOCKED_MAX_POOL: case NNP_OP_BLOCKED_GLOBAL_AVERAGE_POOL: case NNP_OP_BLOCKED_AVERAGE_POOL:
      for (int k = 1; k < n->n_inputs; k++) {
        int v = n->inputs[k];
        if (v < 0) continue;
        const bool residual = (n->op == NNP_OP_FUSED_CONV || n->op == NNP_OP_BLOCKED_CONV) && k == 3;
        if (residual ? !is_act(p, v) : is_act(p, v)) return false;
      }
      return true;
    case NNP_OP_GEMM: case NNP_OP_FUSED_GEMM: { /* rows are images: A not transposed, B constant */
      if (nnp_attr_int(n, "transA", 0) != 0 || n->n_inputs < 2 || is_act(p, n->inputs[1])) return false;
      if (n->n_inputs > 2 && n->inputs[2] >= 0 && !is_act(p, n->inputs[2]) &&
          !batch_free(nnp_plan_value(p, n->inputs[2]), 2))
        return false;
      return n->n_inputs <= 3 || n->inputs[3] < 0 || is_act(p, n->inputs[3]);
    }
    case NNP_OP_QGEMM: /* rows are images; every other input is a constant parameter */
      for (int k = 1; k < n->n_inputs; k++)
        if (n->inputs[k] >= 0 && is_act(p, n->inputs[k])) return false;
      return true;
    case NNP_OP_MATMUL: case NNP_OP_FUSED_MATMUL: { /* FusedMatMul: + a constant bias, a same-shape R */
      const bool fused = n->op == NNP_OP_FUSED_MATMUL;
      const nnp_tensor *b = n->n_inputs >= 2 && n->inputs[1] >= 0 ? nnp_plan_value(p, n->inputs[1]) : NULL;
      if (fused && (n->n_inputs < 3 || n->inputs[2] < 0 || is_act(p, n->inputs[2]))) return false;
      if (!fused && n->n_inputs != 2) return false;
      return b && !is_act(p, n->inputs[1]) && b->rank == 2 && nnp_plan_value(p, n->inputs[0])->rank >= 2;
    }
    /* moves: the batch axis stays first and whole (shapes checked by the caller), so each
     * image is one contiguous block of the same size before and after */
    case NNP_OP_FLATTEN: case NNP_OP_RESHAPE: case NNP_OP_SQUEEZE: case NNP_OP_UNSQUEEZE:
    case NNP_OP_TO_BLOCKED: case NNP_OP_FROM_BLOCKED: /* NCHW <-> NCHW16c: per image */
      return true;
    case NNP_OP_SOFTMAX: case NNP_OP_LOG_SOFTMAX: {
      const nnp_tensor *x = nnp_plan_value(p, n->inputs[0]);
      int64_t axis = nnp_attr_int(n, "axis", nnp_plan_graph(p)->opset >= 13 ? -1 : 1);
      return norm_axis(axis, x->rank) >= 1;
    }
    case NNP_OP_CONCAT:
      for (int k = 0; k < n->n_inputs; k++)
        if (!is_act(p, n->inputs[k])) return false;
      return norm_axis(nnp_attr_int(n, "axis", 0), y->rank) >= 1;
    case NNP_OP_TRANSPOSE: {
      const int64_t *perm = NULL;
      return nnp_attr_ints(n, "perm", &perm) == y->rank && y->rank >= 2 && perm[0] == 0;
    }
    default:
      return false;
  }
}

static bool leads_with(const nnp_tensor *t, int64_t n) { return t && t->rank >= 1 && t->dims[0] == n; }

/* The batch N of plan p when every step is per-sample, else 0. */
static int64_t per_sample_batch(const nnp_plan *p) {
  const nnp_graph *g = nnp_plan_graph(p);
  if (g->n_inputs < 1 || g->n_outputs < 1) return 0;
  const nnp_tensor *x0 = nnp_plan_value(p, g->inputs[0]);
  int64_t N = x0 && x0->rank >= 1 ? x0->dims[0] : 0;
  if (N < 2) return 0;
  for (int k = 0; k < g->n_inputs; k++)
    if (!is_act(p, g->inputs[k]) || !leads_with(nnp_plan_value(p, g->inputs[k]), N)) return 0;
  for (int k = 0; k < g->n_outputs; k++) {
    int v = g->outputs[k];
    if (!is_act(p, v) || g->values[v].kind == NNP_VALUE_INPUT || !leads_with(nnp_plan_value(p, v), N)) return 0;
  }
  for (int s = 0; s < nnp_plan_num_steps(p); s++) {
    const nnp_node *n = nnp_plan_step_node(p, s);
    for (int k = 0; k < n->n_inputs; k++)
      if (is_act(p, n->inputs[k]) && !leads_with(nnp_plan_value(p, n->inputs[k]), N)) return 0;
    for (int k = 0; k < n->n_outputs; k++)
      if (n->outputs[k] >= 0 && !leads_with(nnp_plan_value(p, n->outputs[k]), N)) return 0;
    if (!per_sample_node(p, n)) return 0;
  }
  return N;
}

/* Whether src at batch 1 (lo's input shapes) gives full's outputs with batch 1, asked of
 * the graph's shape inference (ir/shape_infer.h) before any lane plan is compiled: a
 * batch baked into the model (an input dimension fixed at N, a Reshape to [N, ...]) fails
 * here and costs no lane compile. */
static bool batch1_shapes_agree(const nnp_plan *full, const nnp_graph *src, const nnp_plan_options *lo) {
  if (src->n_inputs != nnp_plan_num_inputs(full) || src->n_outputs != nnp_plan_num_outputs(full)) return false;
  nnp_tensor inputs[NNP_PLAN_MAX_BINDINGS];
  for (int i = 0; i < src->n_inputs; i++)
    if (nnp_resolve_input_shape(src, lo, i, &inputs[i]) != NNP_OK) return false;
  nnp_graph_shapes *sh = NULL;
  if (nnp_graph_shapes_infer(src, inputs, &sh) != NNP_OK) return false;
  bool ok = true;
  for (int k = 0; ok && k < src->n_outputs; k++) {
    const nnp_tensor *a = nnp_plan_output(full, k), *b = nnp_graph_shape(sh, src->outputs[k]);
    ok = b && a->dtype == b->dtype && a->rank == b->rank && b->rank >= 1 && b->dims[0] == 1;
    for (int d = 1; ok && d < a->rank; d++) ok = a->dims[d] == b->dims[d];
  }
  nnp_graph_shapes_destroy(sh);
  return ok;
}

/* Whether a lane would spend its time re-reading weights: each lane streams every weight
 * once per image, where the layer-at-a-time plan streams them once per batch (and pays
 * with activations N times larger, and a join per layer). Measured at batch 16 on 2
 * threads (nnperf bench --batch 16 --backend-options native:batch_lanes=0|1, alternated):
 * on a Xeon with AVX-512 (2026-12-04) resnet18 (47 MB of weights against a 4.0 MB batch-1
 * arena: 12x) ran 8% faster layer at a time, mobilenet_v2 (14 MB against 6.0 MB: 2.4x) and
 * efficientnet_lite0 (19 MB against 6.0 MB: 3.1x) 15% faster in lanes; the line is drawn
 * at 8x. Where the GEMM runs the AVX2 tile (an AVX2-only EPYC, 2026-12-07), half the
 * FLOP/s make the weights' stream matter less: lanes won at every ratio up to ~47x
 * (P50 ms, two or three alternations: resnet18 12x 318-388 against 352-452 layer at a
 * time, resnet50 14x 906-1003 against 1013-1121, wide_resnet50_2 34x 2146-2324 against
 * 2311-2586, zoo resnet18 at 112x112 47x 108-112 against 123-124) and tied at 143x (zoo
 * resnet18 at 64x64: 68-70 against 67-89); the line there is drawn at 128x. On a Zen 5
 * with AVX-512 (2026-12-08), P50 ms layer at a time against lanes: convnext_tiny (8.6x)
 * 552-617 against 445-511, regnet_y_1_6gf (9.7x) 177-189 against 173-175, but resnet18
 * (11.6x) 99.5-112 against 107-117 as on the Xeon; the line is drawn at 10x, between
 * them (inception_v3 at 11.5x and resnet50 at 14x ran faster in lanes, resnet18 at 11.6x
 * slower: no line separates those). */
static bool weights_dominate(const nnp_plan *full, const nnp_plan *lane) {
  const nnp_graph *g = nnp_plan_graph(full);
  size_t weights = 0;
  for (int v = 0; v < g->n_values; v++) {
    const nnp_tensor *t = nnp_plan_value(full, v);
    if (t && nnp_plan_value_is_constant(full, v)) weights += nnp_tensor_nbytes(t);
  }
  const size_t line = nnp_dispatch_isa(NNP_KF_GEMM) == NNP_ISA_AVX2 ? 128 : 10;
  return weights > line * nnp_plan_memory_stats(lane)->planned;
}

nnp_status nnp_batch_lanes_create(const nnp_plan *full, const nnp_graph *src, const nnp_plan_options *opt,
                                  nnp_batch_lanes **out) {
  *out = NULL;
  const nnp_graph *g = nnp_plan_graph(full);
  if (opt->n_consts > 0 || g->n_inputs > NNP_PLAN_MAX_BINDINGS) return NNP_OK;
  int64_t N = per_sample_batch(full);
  if (N < 2) return NNP_OK;
  nnp_plan_options lo = *opt;
  lo.threads = 1;
  lo.batch_lanes = NNP_LANES_OFF;
  lo.n_shapes = g->n_inputs;
  for (int k = 0; k < g->n_inputs; k++) {
    const nnp_tensor *t = nnp_plan_input((nnp_plan *)full, k);
    lo.shapes[k].input = nnp_plan_input_name(full, k);
    lo.shapes[k].rank = t->rank;
    memcpy(lo.shapes[k].dims, t->dims, sizeof(int64_t) * (size_t)t->rank);
    lo.shapes[k].dims[0] = 1;
  }
  if (!batch1_shapes_agree(full, src, &lo)) return NNP_OK; /* layer at a time */
  nnp_batch_lanes *bl = nnp_calloc(1, sizeof *bl);
  int L = opt->threads < N ? (opt->threads > 1 ? opt->threads : 1) : (int)N;
  if (bl) {
    bl->lane = nnp_calloc((size_t)L, sizeof *bl->lane);
    bl->status = nnp_calloc((size_t)L, sizeof *bl->status);
  }
  if (!bl || !bl->lane || !bl->status) {
    nnp_batch_lanes_destroy(bl);
    return nnp_error(NNP_ERR_NOMEM, "out of memory creating batch lanes");
  }
  bl->batch = N;
  for (; bl->n_lanes < L; bl->n_lanes++) {
    nnp_status s = nnp_plan_compile(src, &lo, &bl->lane[bl->n_lanes]);
    if (s == NNP_ERR_NOMEM) {
      nnp_batch_lanes_destroy(bl);
      return s;
    }
    /* a lane that does not compile, or (auto) weights that a lane would re-read per
     * image: layer at a time. The lane just compiled is not counted yet: freed here. */
    if (s != NNP_OK || (bl->n_lanes == 0 && opt->batch_lanes == NNP_LANES_AUTO && weights_dominate(full, bl->lane[0]))) {
      nnp_plan_destroy(bl->lane[bl->n_lanes]);
      bl->lane[bl->n_lanes] = NULL;
      nnp_batch_lanes_destroy(bl);
      return NNP_OK;
    }
  }
  *out = bl;
  return NNP_OK;
}

typedef struct lanes_job {
  nnp_batch_lanes *bl;
  nnp_plan *full;
} lanes_job;

/* Lanes [b, e): each claims the next image until none is left, so a lane whose thread
 * is descheduled (a busy machine) leaves its images to the others instead of holding up
 * the batch. Which lane runs an image does not matter: the lane plans are the same
 * compile of the same graph, so every image gets the same bits whichever runs it. */
static void lanes_range(void *ctx, int64_t b, int64_t e) {
  const lanes_job *j = ctx;
  nnp_batch_lanes *bl = j->bl;
  for (int64_t l = b; l < e; l++) {
    nnp_plan *q = bl->lane[l];
    nnp_status s = NNP_OK;
    for (int64_t i; s == NNP_OK && (i = atomic_fetch_add(&bl->next, 1)) < bl->batch;) {
      for (int k = 0; k < nnp_plan_num_inputs(q); k++) {
        nnp_tensor *d = nnp_plan_input(q, k);
        size_t nb = nnp_tensor_nbytes(d);
        memcpy(d->data, (const char *)nnp_plan_input(j->full, k)->data + (size_t)i * nb, nb);
      }
      s = nnp_plan_run(q);
      for (int k = 0; s == NNP_OK && k < nnp_plan_num_outputs(q); k++) {
        const nnp_tensor *r = nnp_plan_output(q, k);
        size_t nb = nnp_tensor_nbytes(r);
        memcpy((char *)nnp_plan_output(j->full, k)->data + (size_t)i * nb, r->data, nb);
      }
    }
    bl->status[l] = s;
  }
}

nnp_status nnp_batch_lanes_run(nnp_batch_lanes *bl, nnp_plan *full, nnp_threadpool *tp) {
  lanes_job j = {.bl = bl, .full = full};
  for (int l = 0; l < bl->n_lanes; l++) bl->status[l] = NNP_OK;
  atomic_store(&bl->next, 0);
  nnp_threadpool_run(tp, lanes_range, &j, bl->n_lanes);
  for (int l = 0; l < bl->n_lanes; l++)
    if (bl->status[l] != NNP_OK) return bl->status[l];
  return NNP_OK;
}
