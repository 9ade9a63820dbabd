/* Einsum (opset 12): any equation of letter labels, one ellipsis per term, repeated
 * labels within a term (diagonals), the implicit output (the ellipsis dims, then the
 * labels used once, in ASCII order), float32 and float64.
 *
 * Labels: the letters are labels 0..51; an ellipsis stands for the E rightmost dims it
 * covers in the term with the most of them, labels 52.. (right-aligned across terms,
 * broadcasting where a term's ellipsis dim is 1). Each input then has one stride per
 * label: the sum of the strides of its dims carrying it (a repeated label walks the
 * diagonal), 0 for a label it lacks or broadcasts.
 *
 * The reference kernel walks every combination of label values: output labels outer, the
 * summed ones inner, a double sum per output element. MaxViT's attention is written as
 * two Einsums per block ("BGHID,BGHJD->BGHIJ" and "BGHIJ,BGHJD->BGHID"); they and every
 * two-input equation of the same kind (batch labels in all three terms, one label of
 * each input's own kept in the output, one summed label shared by the inputs) take the
 * packed SGEMM instead, each batch's operands packed straight from their strides. */
#include <string.h>

#include "kernels/gemm.h"
#include "nnperf/alloc.h"
#include "ops/fast_ops.h"
#include "ops/op_util.h"

enum { MAX_LABELS = 52 + NNP_MAX_RANK, MAX_TERMS = 8 };

typedef struct einsum_plan {
  int n_in;
  int n_labels;                        /* labels in use are < n_labels */
  int64_t size[MAX_LABELS];            /* each label's extent (1 for unused ones) */
  int64_t in_stride[MAX_TERMS][MAX_LABELS];
  int out_rank, out_label[NNP_MAX_RANK];
  bool used[MAX_LABELS], in_out[MAX_LABELS];
  int in_rank[MAX_TERMS], in_label[MAX_TERMS][NNP_MAX_RANK];
} einsum_plan;

static int letter_label(char ch) {
  if (ch >= 'a' && ch <= 'z') return ch - 'a';
  if (ch >= 'A' && ch <= 'Z') return 26 + ch - 'A';
  return -1;
}

/* One term's labels (spaces skipped); *ell: the ellipsis position or -1. */
static nnp_status parse_term(const char *s, size_t len, int *labels, int *n, int *ell) {
  *n = 0;
  *ell = -1;
  for (size_t i = 0; i < len; i++) {
    if (s[i] == ' ') continue;
    if (s[i] == '.') {
      if (*ell >= 0 || i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.')
        return nnp_error(NNP_ERR_INVALID, "Einsum: a term has a malformed or second ellipsis");
      *ell = *n;
      i += 2;
      continue;
    }
    const int l = letter_label(s[i]);
    if (l < 0) return nnp_error(NNP_ERR_INVALID, "Einsum: '%c' is not a letter label", s[i]);
    if (*n >= NNP_MAX_RANK) return nnp_error(NNP_ERR_UNSUPPORTED, "Einsum: a term has over %d labels", NNP_MAX_RANK);
    labels[(*n)++] = l;
  }
  return NNP_OK;
}

/* Term k of the inputs: its labels with the ellipsis expanded to the dims it covers. */
static nnp_status bind_input(einsum_plan *p, int k, const int *labels, int n, int ell, const nnp_tensor *x,
                             int *ell_dims) {
  const int e = ell >= 0 ? x->rank - n : 0;
  if (e < 0 || (ell < 0 && x->rank != n))
    return nnp_error(NNP_ERR_SHAPE, "Einsum: input %d has rank %d, its term %d labels", k, x->rank, n);
  *ell_dims = e;
  p->in_rank[k] = x->rank;
  for (int d = 0, t = 0; d < x->rank; d++) {
    if (ell >= 0 && d >= ell && d < ell + e) p->in_label[k][d] = -1 - (d - ell); /* fixed once E is known */
    else p->in_label[k][d] = labels[t++];
  }
  return NNP_OK;
}

static nnp_status plan_of(const nnp_op_ctx *ctx, einsum_plan *p) {
  memset(p, 0, sizeof *p);
  const char *eq = nnp_attr_string(ctx->node, "equation", NULL);
  if (!eq) return nnp_error(NNP_ERR_INVALID, "Einsum: attribute 'equation' is missing");
  if (ctx->n_in > MAX_TERMS) return nnp_error(NNP_ERR_UNSUPPORTED, "Einsum: over %d inputs", MAX_TERMS);
  p->n_in = ctx->n_in;
  const char *arrow = strstr(eq, "->");
  const size_t lhs = arrow ? (size_t)(arrow - eq) : strlen(eq);
  int labels[MAX_TERMS][NNP_MAX_RANK], n[MAX_TERMS], ell[MAX_TERMS], edims[MAX_TERMS], E = 0, k = 0;
  for (size_t b = 0; k <= MAX_TERMS;) {
    size_t e = b;
    while (e < lhs && eq[e] != ',') e++;
    if (k >= p->n_in) return nnp_error(NNP_ERR_INVALID, "Einsum: '%s' has more terms than the %d inputs", eq, p->n_in);
    NNP_TRY(parse_term(eq + b, e - b, labels[k], &n[k], &ell[k]));
    const nnp_tensor *x = ctx->in[k];
    if (x->dtype != NNP_F32 && x->dtype != NNP_F64)
      return nnp_error(NNP_ERR_UNSUPPORTED, "Einsum: input %d is %s (float32 and float64 only)", k, nnp_dtype_name(x->dtype));
    NNP_TRY(bind_input(p, k, labels[k], n[k], ell[k], x, &edims[k]));
    if (edims[k] > E) E = edims[k];
    k++;
    if (e >= lhs) break;
    b = e + 1;
  }
  if (k != p->n_in) return nnp_error(NNP_ERR_INVALID, "Einsum: '%s' has %d terms for %d inputs", eq, k, p->n_in);
  p->n_labels = 52 + E;
  for (int l = 0; l < MAX_LABELS; l++) p->size[l] = 1;
  /* ellipsis labels right-aligned: dim j of a term's e covers label 52 + E - e + j */
  int count[MAX_LABELS] = {0};
  for (int t = 0; t < p->n_in; t++)
    for (int d = 0; d < p->in_rank[t]; d++) {
      int *l = &p->in_label[t][d];
      if (*l < 0) *l = 52 + E - edims[t] + (-1 - *l);
      const int64_t s = ctx->in[t]->dims[d];
      if (p->used[*l] && p->size[*l] != s && s != 1 && p->size[*l] != 1) /* 1 broadcasts */
        return nnp_error(NNP_ERR_SHAPE, "Einsum: a label of '%s' has extents %lld and %lld", eq,
                         (long long)p->size[*l], (long long)s);
      if (!p->used[*l] || s != 1) p->size[*l] = s;
      p->used[*l] = true;
      count[*l]++;
    }
  /* the output's labels */
  if (arrow) {
    int out[NNP_MAX_RANK], no, oe;
    NNP_TRY(parse_term(arrow + 2, strlen(arrow + 2), out, &no, &oe));
    if (no + (oe >= 0 ? E : 0) > NNP_MAX_RANK) return nnp_error(NNP_ERR_UNSUPPORTED, "Einsum: output rank over %d", NNP_MAX_RANK);
    for (int i = 0; i < no; i++) {
      if (oe == i)
        for (int j = 0; j < E; j++) p->out_label[p->out_rank++] = 52 + j;
      if (!p->used[out[i]]) return nnp_error(NNP_ERR_INVALID, "Einsum: output label of '%s' is in no input", eq);
      p->out_label[p->out_rank++] = out[i];
    }
    if (oe == no)
      for (int j = 0; j < E; j++) p->out_label[p->out_rank++] = 52 + j;
  } else { /* implicit: the ellipsis, then the labels used once, in ASCII order (A-Z, a-z) */
    for (int j = 0; j < E; j++) p->out_label[p->out_rank++] = 52 + j;
    for (int pass = 0; pass < 2; pass++)
      for (int l = pass ? 0 : 26; l < (pass ? 26 : 52); l++) {
        if (count[l] != 1) continue;
        if (p->out_rank == NNP_MAX_RANK)
          return nnp_error(NNP_ERR_UNSUPPORTED, "Einsum: '%s' has an implicit output over rank %d", eq, NNP_MAX_RANK);
        p->out_label[p->out_rank++] = l;
      }
  }
  for (int i = 0; i < p->out_rank; i++) p->in_out[p->out_label[i]] = true;
  for (int t = 0; t < p->n_in; t++) {
    int64_t st[NNP_MAX_RANK];
    nnp_contiguous_strides(p->in_rank[t], ctx->in[t]->dims, st);
    for (int d = 0; d < p->in_rank[t]; d++)
      if (ctx->in[t]->dims[d] != 1 || p->size[p->in_label[t][d]] == 1) p->in_stride[t][p->in_label[t][d]] += st[d];
  }
  return NNP_OK;
}

static nnp_status infer_einsum(nnp_op_ctx *ctx) {
  einsum_plan p;
  NNP_TRY(plan_of(ctx, &p));
  int64_t dims[NNP_MAX_RANK];
  for (int i = 0; i < p.out_rank; i++) dims[i] = p.size[p.out_label[i]];
  nnp_set_shape(ctx->out[0], ctx->in[0]->dtype, p.out_rank, dims);
  for (int t = 1; t < p.n_in; t++)
    if (ctx->in[t]->dtype != ctx->in[0]->dtype) return nnp_error(NNP_ERR_SHAPE, "Einsum: inputs of different types");
  return NNP_OK;
}

static double load(const nnp_tensor *t, int64_t i) {
  return t->dtype == NNP_F32 ? ((const float *)t->data)[i] : ((const double *)t->data)[i];
}

/* Every output element: the double sum over the summed labels' values of the inputs'
 * product (an odometer over the summed labels). */
static nnp_status ref_einsum(nnp_op_ctx *ctx) {
  einsum_plan p;
  NNP_TRY(plan_of(ctx, &p));
  int sum_label[MAX_LABELS], ns = 0;
  for (int l = 0; l < p.n_labels; l++)
    if (p.used[l] && !p.in_out[l]) sum_label[ns++] = l;
  nnp_tensor *y = ctx->out[0];
  const int64_t ny = nnp_tensor_numel(y);
  int64_t oidx[NNP_MAX_RANK] = {0};
  for (int64_t o = 0; o < ny; o++) {
    int64_t base[MAX_TERMS] = {0};
    for (int t = 0; t < p.n_in; t++)
      for (int i = 0; i < p.out_rank; i++) base[t] += oidx[i] * p.in_stride[t][p.out_label[i]];
    double acc = 0;
    int64_t sidx[MAX_LABELS] = {0}, off[MAX_TERMS];
    memcpy(off, base, sizeof off);
    for (bool more = true; more;) {
      double prod = 1;
      for (int t = 0; t < p.n_in; t++) prod *= load(ctx->in[t], off[t]);
      acc += prod;
      more = false;
      for (int s = ns - 1; s >= 0 && !more; s--) {
        const int l = sum_label[s];
        for (int t = 0; t < p.n_in; t++) off[t] += p.in_stride[t][l];
        if (++sidx[s] < p.size[l]) more = true;
        else {
          for (int t = 0; t < p.n_in; t++) off[t] -= p.in_stride[t][l] * p.size[l];
          sidx[s] = 0;
        }
      }
    }
    if (y->dtype == NNP_F32) ((float *)y->data)[o] = (float)acc;
    else ((double *)y->data)[o] = acc;
    for (int i = p.out_rank - 1; i >= 0; i--) { /* next output index */
      if (++oidx[i] < y->dims[i]) break;
      oidx[i] = 0;
    }
  }
  return NNP_OK;
}

/* ---- the fast path: a batched matrix product ---- */

/* Whether p is a batched product: labels in A, B and Y (batch), exactly one in A and Y
 * (m), one in B and Y (n), one in A and B only (k), nothing else, no diagonals or
 * broadcasting, and Y's n label the innermost (unit stride: the GEMM writes rows). */
static bool as_matmul(const einsum_plan *p, const nnp_op_ctx *ctx, nnp_sgemm_batched *f) {
  if (p->n_in != 2 || ctx->in[0]->dtype != NNP_F32 || ctx->in[1]->dtype != NNP_F32) return false;
  int m = -1, n = -1, k = -1;
  int64_t ys[MAX_LABELS] = {0}, yst[NNP_MAX_RANK], ydims[NNP_MAX_RANK];
  for (int i = 0; i < p->out_rank; i++) ydims[i] = p->size[p->out_label[i]];
  nnp_contiguous_strides(p->out_rank, ydims, yst);
  for (int i = 0; i < p->out_rank; i++) ys[p->out_label[i]] = yst[i];
  for (int t = 0; t < 2; t++) /* a label twice in one term: a diagonal */
    for (int d = 0; d < p->in_rank[t]; d++)
      for (int e = d + 1; e < p->in_rank[t]; e++)
        if (p->in_label[t][d] == p->in_label[t][e] || ctx->in[t]->dims[d] != p->size[p->in_label[t][d]]) return false;
  for (int l = 0; l < p->n_labels; l++) {
    if (!p->used[l]) continue;
    const bool y = p->in_out[l];
    bool has_a = false, has_b = false;
    for (int d = 0; d < p->in_rank[0]; d++) has_a |= p->in_label[0][d] == l;
    for (int d = 0; d < p->in_rank[1]; d++) has_b |= p->in_label[1][d] == l;
    if (has_a && has_b && y) {
      if (f->n_dims == NNP_SGEMM_MAX_BATCH_DIMS) return false;
      f->dims[f->n_dims] = p->size[l];
      f->a_str[f->n_dims] = p->in_stride[0][l], f->b_str[f->n_dims] = p->in_stride[1][l], f->c_str[f->n_dims] = ys[l];
      f->n_dims++;
    } else if (has_a && y && m < 0) m = l;
    else if (has_b && y && n < 0) n = l;
    else if (has_a && has_b && !y && k < 0) k = l;
    else return false;
  }
  if (m < 0 || n < 0 || k < 0 || ys[n] != 1) return false;
  f->M = p->size[m], f->N = p->size[n], f->K = p->size[k];
  f->sam = p->in_stride[0][m], f->sak = p->in_stride[0][k];
  f->sbk = p->in_stride[1][k], f->sbn = p->in_stride[1][n];
  f->ldc = ys[m];
  return true;
}

static nnp_status prepare_einsum(const nnp_op_ctx *ctx, bool generic, nnp_fast_kernel *out) {
  memset(out, 0, sizeof *out);
  einsum_plan p;
  if (plan_of(ctx, &p) != NNP_OK) {
    nnp_clear_error();
    return NNP_OK;
  }
  if (nnp_tensor_numel(ctx->out[0]) == 0) return NNP_OK;
  nnp_sgemm_batched *f = nnp_calloc(1, sizeof *f);
  if (!f) return nnp_error(NNP_ERR_NOMEM, "out of memory preparing an Einsum");
  if (!as_matmul(&p, ctx, f)) {
    nnp_free(f);
    return NNP_OK;
  }
  nnp_batched_matmul_kernel(f, ctx, generic, "einsum.matmul.generic", "einsum.matmul.packed", "einsum.matmul.packed",
                            out);
  return NNP_OK;
}

const nnp_op_info nnp_op_einsum = {.name = "Einsum", .min_inputs = 1, .max_inputs = MAX_TERMS, .min_outputs = 1,
                                   .max_outputs = 1, .flags = NNP_OPF_VARIADIC, .infer = infer_einsum,
                                   .ref = ref_einsum, .prepare = prepare_einsum};
