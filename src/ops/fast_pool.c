/* MaxPool (2-D, float32 or uint8, no indices output, no dilation, explicit or VALID padding),
 * AveragePool (2-D, float32, the same windows) and GlobalAveragePool (float32) ->
 * kernels/pool.h. Everything else stays reference. */
#include <string.h>

#include "kernels/dispatch.h"
#include "kernels/pool.h"
#include "nnperf/alloc.h"
#include "ops/fast_ops.h"
#include "ops/op_util.h"
#include "ops/spatial.h"

typedef struct fast_pool {
  nnp_pool2d_desc d;
  nnp_avgpool2d_desc avg; /* AveragePool: its desc (d unused) */
  bool global, average;
  bool generic; /* the portable kernel whatever the dispatch table says */
} fast_pool;

static void fast_pool_destroy(void *p) { nnp_free(p); }

static nnp_status fast_pool_run(void *p, nnp_op_ctx *ctx) {
  const fast_pool *f = p;
  if (f->average) nnp_avgpool2d(&f->avg, ctx->in[0]->data, ctx->out[0]->data, f->generic, ctx->pool);
  else if (f->global) nnp_global_avgpool(f->d.planes, f->d.h * f->d.w, ctx->in[0]->data, ctx->out[0]->data, ctx->pool);
  else if (ctx->in[0]->dtype == NNP_U8) nnp_maxpool2d_u8(&f->d, ctx->in[0]->data, ctx->out[0]->data, ctx->pool);
  else nnp_maxpool2d(&f->d, ctx->in[0]->data, ctx->out[0]->data, f->generic, ctx->pool);
  return NNP_OK;
}

static nnp_status make(const nnp_pool2d_desc *d, bool global, bool generic, const char *name,
                       nnp_fast_kernel *out) {
  fast_pool *f = nnp_calloc(1, sizeof *f);
  if (!f) return nnp_error(NNP_ERR_NOMEM, "out of memory preparing %s", name);
  f->d = *d;
  f->global = global;
  f->generic = generic;
  out->run = fast_pool_run;
  out->destroy = fast_pool_destroy;
  out->state = f;
  out->name = name;
  return NNP_OK;
}

nnp_status nnp_maxpool2d_window(const nnp_node *node, nnp_pool2d_desc *d, bool *ok) {
  *ok = false;
  const int64_t *v = NULL;
  if (nnp_attr_ints(node, "kernel_shape", &v) != 2) return NNP_OK;
  d->kh = v[0];
  d->kw = v[1];
  /* nnp_attr_ints: -1 when the attribute is absent (its default), as ONNX exporters
   * write MaxPool without dilations: `nv != 0` sent resnet18's MaxPool to the
   * reference kernel (14% of the model) */
  int nv = nnp_attr_ints(node, "dilations", &v);
  if (nv > 0 && (nv != 2 || v[0] != 1 || v[1] != 1)) return NNP_OK;
  nv = nnp_attr_ints(node, "strides", &v);
  if (nv > 0 && nv != 2) return NNP_OK;
  d->sh = nv > 0 ? v[0] : 1;
  d->sw = nv > 0 ? v[1] : 1;
  nnp_auto_pad mode;
  NNP_TRY(nnp_read_auto_pad(node, &mode));
  if (mode == NNP_AUTO_PAD_NOTSET) {
    nv = nnp_attr_ints(node, "pads", &v);
    if (nv > 0 && nv != 4) return NNP_OK;
    d->ph = nv > 0 ? v[0] : 0;
    d->pw = nv > 0 ? v[1] : 0;
  } else if (mode != NNP_AUTO_PAD_VALID) return NNP_OK;
  *ok = d->kh >= 1 && d->kw >= 1 && d->sh >= 1 && d->sw >= 1 && d->ph >= 0 && d->pw >= 0;
  return NNP_OK;
}

nnp_status nnp_avgpool2d_window(const nnp_node *node, nnp_avgpool2d_desc *a, bool *ok) {
  NNP_TRY(nnp_maxpool2d_window(node, &a->p, ok));
  if (!*ok) return NNP_OK;
  const int64_t *v = NULL;
  a->ph_end = a->pw_end = 0;
  if (nnp_attr_ints(node, "pads", &v) == 4) {
    a->ph_end = v[2];
    a->pw_end = v[3];
  }
  *ok = a->ph_end >= 0 && a->pw_end >= 0;
  a->include_pad = nnp_attr_int(node, "count_include_pad", 0) != 0;
  return NNP_OK;
}

/* AveragePool: MaxPool's window reader, plus the end pads and count_include_pad. */
static nnp_status prepare_average(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out) {
  const nnp_tensor *x = ctx->in[0], *y = ctx->out[0];
  nnp_avgpool2d_desc a = {0};
  bool ok;
  NNP_TRY(nnp_avgpool2d_window(ctx->node, &a, &ok));
  if (!ok) return NNP_OK;
  a.p.planes = x->dims[0] * x->dims[1];
  a.p.h = x->dims[2];
  a.p.w = x->dims[3];
  a.p.oh = y->dims[2];
  a.p.ow = y->dims[3];
  const bool portable = nnp_dispatch_portable(NNP_KF_POOL, generic);
  NNP_TRY(make(&a.p, false, generic, portable ? "pool.avg2d" : "pool.avg2d.avx2", out));
  fast_pool *f = out->state;
  f->avg = a;
  f->average = true;
  return NNP_OK;
}

nnp_status nnp_prepare_pool(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out) {
  memset(out, 0, sizeof *out);
  const nnp_tensor *x = ctx->in[0], *y = ctx->out[0];
  bool u8 = x->dtype == NNP_U8 && !strcmp(ctx->node->op_type, "MaxPool");
  if ((x->dtype != NNP_F32 && !u8) || nnp_tensor_numel(x) == 0 || nnp_tensor_numel(y) == 0) return NNP_OK;
  nnp_pool2d_desc d = {0};
  if (!strcmp(ctx->node->op_type, "GlobalAveragePool")) {
    if (x->rank < 3) return NNP_OK;
    d.planes = x->dims[0] * x->dims[1];
    d.h = 1;
    d.w = nnp_tensor_numel(x) / d.planes;
    return make(&d, true, generic, "pool.global_avg", out);
  }
  if (!strcmp(ctx->node->op_type, "AveragePool") && x->dtype == NNP_F32 && x->rank == 4)
    return prepare_average(ctx, generic, out);
  if (strcmp(ctx->node->op_type, "MaxPool") != 0 || x->rank != 4) return NNP_OK;
  if (ctx->n_out > 1 && ctx->out[1]) return NNP_OK; /* indices: the reference computes them */
  bool ok;
  NNP_TRY(nnp_maxpool2d_window(ctx->node, &d, &ok));
  if (!ok) return NNP_OK;
  d.planes = x->dims[0] * x->dims[1];
  d.h = x->dims[2];
  d.w = x->dims[3];
  d.oh = y->dims[2];
  d.ow = y->dims[3];
  const bool portable = u8 || nnp_dispatch_portable(NNP_KF_POOL, generic);
  return make(&d, false, generic, u8 ? "pool.max2d.u8" : portable ? "pool.max2d" : "pool.max2d.avx2", out);
}
