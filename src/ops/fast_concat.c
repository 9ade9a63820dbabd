/* Concat -> the same byte copies as the reference kernel (ops/movement.c), cut into
 * chunks of the output across the plan's threads. DenseNet concatenates every earlier
 * feature map before each layer (62 Concats, 6-7% of densenet121 at 2 threads on the
 * reference kernel, one thread copying), Inception, GoogLeNet and SqueezeNet one per
 * block. Any dtype: the copies move bytes. Outputs are the reference's, bit for bit
 * (tests/ops/test_fast_concat.c). */
#include <string.h>

#include "nnperf/alloc.h"
#include "ops/fast_ops.h"
#include "ops/op_util.h"

/* Bytes of output per task: big enough that a task's copies outrun the pool's hand-off,
 * small enough that a 1 MB concat splits over several threads. */
#define CONCAT_CHUNK ((size_t)64 << 10)

/* The step's state: the axis, and room for each input's block size (set per run). */
typedef struct fast_concat {
  int axis;
  size_t blk[]; /* bytes of input k's block in an output row */
} fast_concat;

typedef struct concat_job {
  const nnp_op_ctx *ctx;
  const size_t *blk;
  size_t row;   /* bytes of one output row (outer index): every input's block */
  size_t total; /* outer * row */
  char *y;
} concat_job;

/* Output bytes [t * CHUNK, (t + 1) * CHUNK) for t in [b, e): walked row by row, input
 * by input, each piece one memcpy from where the reference takes it. */
static void copy_tasks(void *p, int64_t b, int64_t e) {
  const concat_job *j = p;
  size_t pos = (size_t)b * CONCAT_CHUNK, end = (size_t)e * CONCAT_CHUNK;
  if (end > j->total) end = j->total;
  while (pos < end) {
    const size_t o = pos / j->row;
    size_t within = pos % j->row;
    int k = 0;
    while (within >= j->blk[k]) within -= j->blk[k++]; /* blocks of 0 bytes are skipped */
    size_t n = j->blk[k] - within;
    if (n > end - pos) n = end - pos;
    memcpy(j->y + pos, (const char *)j->ctx->in[k]->data + o * j->blk[k] + within, n);
    pos += n;
  }
}

static nnp_status fast_concat_run(void *state, nnp_op_ctx *ctx) {
  fast_concat *f = state;
  const int axis = f->axis;
  const nnp_tensor *y = ctx->out[0];
  const size_t es = nnp_dtype_size(y->dtype);
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; i++) outer *= y->dims[i];
  for (int i = axis + 1; i < y->rank; i++) inner *= y->dims[i];
  concat_job j = {.ctx = ctx, .blk = f->blk, .y = y->data};
  for (int k = 0; k < ctx->n_in; k++) {
    f->blk[k] = (size_t)(ctx->in[k]->dims[axis] * inner) * es;
    j.row += f->blk[k];
  }
  j.total = (size_t)outer * j.row;
  if (!j.total) return NNP_OK;
  const int64_t tasks = (int64_t)((j.total + CONCAT_CHUNK - 1) / CONCAT_CHUNK);
  if (tasks < 2) copy_tasks(&j, 0, tasks); /* a small concat: not worth waking the pool */
  else nnp_threadpool_run(ctx->pool, copy_tasks, &j, tasks);
  return NNP_OK;
}

nnp_status nnp_prepare_concat(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out) {
  (void)generic; /* memcpy either way */
  memset(out, 0, sizeof *out);
  const nnp_tensor *y = ctx->out[0];
  if (y->rank < 1) return NNP_OK;
  for (int k = 0; k < ctx->n_in; k++)
    if (!ctx->in[k]) return NNP_OK;
  fast_concat *f = nnp_malloc(sizeof *f + (size_t)ctx->n_in * sizeof f->blk[0]);
  if (!f) return nnp_error(NNP_ERR_NOMEM, "out of memory preparing Concat");
  nnp_status s = nnp_concat_axis(ctx, y->rank, &f->axis); /* opset < 4 defaults it to 1, not 0 */
  if (s != NNP_OK) {
    nnp_free(f);
    return s;
  }
  out->run = fast_concat_run;
  out->destroy = nnp_free;
  out->state = f;
  out->name = "concat.copies";
  return NNP_OK;
}
