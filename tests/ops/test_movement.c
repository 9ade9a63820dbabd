/* Tests of the data-movement ops (src/ops/movement.c) and Pad (src/ops/pad.c) against
 * hand-computed results, including the error paths a hostile model can reach. */
#include <stdint.h>
#include <string.h>

#include "op_test_util.h"

#define N_(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Runs the node with inputs in[0..n_in) (NULL entries are omitted inputs). */
static nnp_status eval(test_node *t, int64_t opset, int n_in, const nnp_tensor *const *in, int n_out,
                       nnp_tensor *out) {
  return nnp_op_eval(t->n, opset, n_in, in, n_out, out);
}

static int same_f32(const nnp_tensor *t, const float *want, int rank, const int64_t *dims) {
  if (t->dtype != NNP_F32 || t->rank != rank) return 0;
  for (int i = 0; i < rank; i++)
    if (t->dims[i] != dims[i]) return 0;
  int64_t n = nnp_tensor_numel(t);
  return memcmp(t->data, want, sizeof(float) * (size_t)n) == 0;
}

static int same_i64(const nnp_tensor *t, const int64_t *want, int rank, const int64_t *dims) {
  if (t->dtype != NNP_I64 || t->rank != rank) return 0;
  for (int i = 0; i < rank; i++)
    if (t->dims[i] != dims[i]) return 0;
  return memcmp(t->data, want, sizeof(int64_t) * (size_t)nnp_tensor_numel(t)) == 0;
}

static nnp_tensor iota_f32(int rank, const int64_t *dims) {
  nnp_tensor t = test_tensor(NNP_F32, rank, dims, NULL);
  for (int64_t i = 0; i < nnp_tensor_numel(&t); i++) ((float *)t.data)[i] = (float)i;
  return t;
}

static nnp_tensor ints1(int n, const int64_t *v) {
  int64_t d[1] = {n};
  return test_tensor(NNP_I64, 1, d, v);
}

/* ---- Transpose ---- */

/* Random permutations of ranks 2..4 with extents up to 40 (across the copy's 16 x 16
 * tiles: ragged edges, extents under a tile), element sizes 1, 4 and 8, against direct
 * indexing of each output element. */
static void transpose_random_cases(void) {
  static const nnp_dtype types[3] = {NNP_U8, NNP_F32, NNP_I64};
  uint64_t rs = 12345;
  for (int trial = 0; trial < 60; trial++) {
    const int rank = 2 + trial % 3;
    int64_t dims[4], perm[4], n = 1;
    for (int i = 0; i < rank; i++) {
      rs = rs * 6364136223846793005ull + 1442695040888963407ull;
      dims[i] = 1 + (int64_t)((rs >> 33) % (rank == 4 ? 12 : 40));
      n *= dims[i];
      perm[i] = i;
    }
    for (int i = rank - 1; i > 0; i--) { /* Fisher-Yates */
      rs = rs * 6364136223846793005ull + 1442695040888963407ull;
      const int j = (int)((rs >> 33) % (uint64_t)(i + 1));
      const int64_t t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
    const nnp_dtype dt = types[trial % 3];
    const size_t es = nnp_dtype_size(dt);
    nnp_tensor x = test_tensor(dt, rank, dims, NULL), y;
    for (int64_t i = 0; i < n * (int64_t)es; i++) ((uint8_t *)x.data)[i] = (uint8_t)(i * 7 + i / 251);
    test_node t = test_node_new("Transpose");
    test_attr_ints(&t, "perm", rank, perm);
    const nnp_tensor *in[] = {&x};
    CHECK_OK(eval(&t, 13, 1, in, 1, &y));
    int64_t xs[4] = {0}, bad = 0;
    xs[rank - 1] = 1;
    for (int i = rank - 2; i >= 0; i--) xs[i] = xs[i + 1] * dims[i + 1];
    for (int64_t o = 0; o < n; o++) { /* output element o's source */
      int64_t rest = o, src = 0;
      for (int i = rank - 1; i >= 0; i--) {
        src += rest % dims[perm[i]] * xs[perm[i]];
        rest /= dims[perm[i]];
      }
      if (memcmp((char *)y.data + o * (int64_t)es, (char *)x.data + src * (int64_t)es, es)) bad++;
    }
    CHECK_MSG(bad == 0, "trial %d rank %d es %zu: %lld elements misplaced", trial, rank, es, (long long)bad);
    nnp_tensor_free(&y);
    nnp_tensor_free(&x);
    test_node_free(&t);
  }
}

static void test_transpose(void) {
  transpose_random_cases();
  {
    test_node t = test_node_new("Transpose");
    nnp_tensor x = iota_f32(2, (int64_t[]){2, 3}), y;
    const nnp_tensor *in[] = {&x};
    CHECK_OK(eval(&t, 13, 1, in, 1, &y));
    CHECK(same_f32(&y, (float[]){0, 3, 1, 4, 2, 5}, 2, (int64_t[]){3, 2}));
    nnp_tensor_free(&y);
    nnp_tensor_free(&x);
    test_node_free(&t);
  }
  { /* every 3-D permutation against direct indexing */
    static const int64_t perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    const int64_t dims[3] = {2, 3, 4};
    nnp_tensor x = iota_f32(3, dims);
    for (int p = 0; p < 6; p++) {
      test_node t = test_node_new("Transpose");
      test_attr_ints(&t, "perm", 3, perms[p]);
      nnp_tensor y;
      const nnp_tensor *in[] = {&x};
      CHECK_OK(eval(&t, 13, 1, in, 1, &y));
      int ok = y.rank == 3;
      for (int i = 0; i < 3; i++) ok = ok && y.dims[i] == dims[perms[p][i]];
      int64_t o = 0, c[3];
      for (c[0] = 0; ok && c[0] < y.dims[0]; c[0]++)
        for (c[1] = 0; c[1] < y.dims[1]; c[1]++)
          for (c[2] = 0; c[2] < y.dims[2]; c[2]++, o++) {
            int64_t s[3];
            for (int i = 0; i < 3; i++) s[perms[p][i]] = c[i];
            if (((float *)y.data)[o] != (float)((s[0] * 3 + s[1]) * 4 + s[2])) ok = 0;
          }
      CHECK_MSG(ok, "perm %d", p);
      nnp_tensor_free(&y);
      test_node_free(&t);
    }
    nnp_tensor_free(&x);
  }
  { /* int8, rank 4 */
    test_node t = test_node_new("Transpose");
    test_attr_ints(&t, "perm", 4, (int64_t[]){0, 2, 3, 1});
    int8_t v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    nnp_tensor x = test_tensor(NNP_I8, 4, (int64_t[]){1, 2, 2, 2}, v), y;
    const nnp_tensor *in[] = {&x};
    CHECK_OK(eval(&t, 13, 1, in, 1, &y));
    const int8_t want[8] = {1, 5, 2, 6, 3, 7, 4, 8};
    CHECK(y.dtype == NNP_I8 && y.dims[3] == 2 && memcmp(y.data, want, 8) == 0);
    nnp_tensor_free(&y);
    nnp_tensor_free(&x);
    test_node_free(&t);
  }
  { /* scalar */
    test_node t = test_node_new("Transpose");
    float v = 7;
    nnp_tensor x = test_tensor(NNP_F32, 0, NULL, &v), y;
    const nnp_tensor *in[] = {&x};
    CHECK_OK(eval(&t, 13, 1, in, 1, &y));
    CHECK(y.rank == 0 && ((float *)y.data)[0] == 7);
    nnp_tensor_free(&y);
    nnp_tensor_free(&x);
    test_node_free(&t);
  }
  { /* bad perms */
    static const int64_t bad[3][3] = {{0, 0, 1}, {0, 1, 3}, {0, -1, 2}};
    nnp_tensor x = iota_f32(3, (int64_t[]){2, 3, 4}), y;
    const nnp_tensor *in[] = {&x};
    for (int b = 0; b < 3; b++) {
      test_node t = test_node_new("Transpose");
      test_attr_ints(&t, "perm", 3, bad[b]);
      CHECK(eval(&t, 13, 1, in, 1, &y) == NNP_ERR_SHAPE);
      test_node_free(&t);
    }
    test_node t = test_node_new("Transpose");
    test_attr_ints(&t, "perm", 2, bad[0]);
    CHECK(eval(&t, 13, 1, in, 1, &y) == NNP_ERR_SHAPE);
    test_node_free(&t);
    nnp_tensor_free(&x);
  }
}

/* ---- Concat ---- */

static void test_concat(void) {
  {
    test_node t = test_node_new("Concat");
    test_attr_int(&t, "axis", -1);
    nnp_tensor a = iota_f32(2, (int64_t[]){2, 2}), b = iota_f32(2, (int64_t[]){2, 3}), y;
    nnp_tensor e = test_tensor(NNP_F32, 2, (int64_t[]){2, 0}, NULL);
    const nnp_tensor *in[] = {&a, &e, &b};
    CHECK_OK(eval(&t, 13, 3, in, 1, &y));
    CHECK(same_f32(&y, (float[]){0, 1, 0, 1, 2, 2, 3, 3, 4, 5}, 2, (int64_t[]){2, 5}));
    nnp_tensor_free(&y);
    nnp_tensor_free(&a);
    nnp_tensor_free(&b);
    nnp_tensor_free(&e);
    test_node_free(&t);
  }
  { /* int64 shape vectors along axis 0, as shape computations do */
    test_node t = test_node_new("Concat");
    test_attr_int(&t, "axis", 0);
    nnp_tensor a = ints1(1, (int64_t[]){-1}), b = ints1(2, (int64_t[]){3, 4}), y;
    const nnp_tensor *in[] = {&a, &b};
    CHECK_OK(eval(&t, 13, 2, in, 1, &y));
    CHECK(same_i64(&y, (int64_t[]){-1, 3, 4}, 1, (int64_t[]){3}));
    nnp_tensor_free(&y);
    nnp_tensor_free(&a);
    nnp_tensor_free(&b);
    test_node_free(&t);
  }
  { /* errors */
    nnp_tensor a = iota_f32(2, (int64_t[]){2, 2}), b = iota_f32(2, (int64_t[]){3, 3}), y;
    nnp_tensor c = iota_f32(1, (int64_t[]){4});
    nnp_tensor d = test_tensor(NNP_I32, 2, (int64_t[]){2, 2}, NULL);
    test_node t = test_node_new("Concat");
    test_attr_int(&t, "axis", 1);
    const nnp_tensor *in1[] = {&a, &b};
    CHECK(eval(&t, 13, 2, in1, 1, &y) == NNP_ERR_SHAPE); /* dim 0 differs */
    const nnp_tensor *in2[] = {&a, &c};
    CHECK(eval(&t, 13, 2, in2, 1, &y) == NNP_ERR_SHAPE); /* rank differs */
    const nnp_tensor *in3[] = {&a, &d};
    CHECK(eval(&t, 13, 2, in3, 1, &y) == NNP_ERR_SHAPE); /* dtype differs */
    test_node_free(&t);
    t = test_node_new("Concat");
    test_attr_int(&t, "axis", 2);
    const nnp_tensor *in4[] = {&a, &a};
    CHECK(eval(&t, 13, 2, in4, 1, &y) == NNP_ERR_SHAPE); /* axis out of range */
    test_node_free(&t);
    t = test_node_new("Concat"); /* axis required */
    CHECK(eval(&t, 13, 2, in4, 1, &y) == NNP_ERR_SHAPE);
    test_node_free(&t);
    nnp_tensor_free(&a);
    nnp_tensor_free(&b);
    nnp_tensor_free(&c);
    nnp_tensor_free(&d);
  }
}

/* ---- Split ---- */

static void test_split(void) {
  nnp_tensor x = iota_f32(2, (int64_t[]){2, 6});
  { /* equal parts on the last axis */
    test_node t = test_node_new("Split");
    test_attr_int(&t, "axis", -1);
    nnp_tensor y[3];
    const nnp_tensor *in[] = {&x};
    CHECK_OK(eval(&t, 13, 1, in, 3, y));
    CHECK(same_f32(&y[0], (float[]){0, 1, 6, 7}, 2, (int64_t[]){2, 2}));
    CHECK(same_f32(&y[2], (float[]){4, 5, 10, 11}, 2, (int64_t[]){2, 2}));
    for (int i = 0; i < 3; i++) nnp_tensor_free(&y[i]);
    test_node_free(&t);
  }
  { /* split attribute before opset 13 */
    test_node t = test_node_new("Split");
    test_attr_int(&t, "axis", 1);
    test_attr_ints(&t, "split", 2, (int64_t[]){1, 5});
    nnp_tensor y[2];
    const nnp_tensor *in[] = {&x};
    CHECK_OK(eval(&t, 11, 1, in, 2, y));
    CHECK(same_f32(&y[0], (float[]){0, 6}, 2, (int64_t[]){2, 1}));
    CHECK(same_f32(&y[1], (float[]){1, 2, 3, 4, 5, 7, 8, 9, 10, 11}, 2, (int64_t[]){2, 5}));
    for (int i = 0; i < 2; i++) nnp_tensor_free(&y[i]);
    test_node_free(&t);
  }
  { /* split input from opset 13, zero-size part */
    test_node t = test_node_new("Split");
    test_attr_int(&t, "axis", 1);
    nnp_tensor s = ints1(3, (int64_t[]){4, 0, 2}), y[3];
    const nnp_tensor *in[] = {&x, &s};
    CHECK_OK(eval(&t, 13, 2, in, 3, y));
    CHECK(y[1].dims[1] == 0 && y[2].dims[1] == 2);
    CHECK(same_f32(&y[2], (float[]){4, 5, 10, 11}, 2, (int64_t[]){2, 2}));
    for (int i = 0; i < 3; i++) nnp_tensor_free(&y[i]);
    nnp_tensor bad = ints1(3, (int64_t[]){4, 1, 2});
    const nnp_tensor *in2[] = {&x, &bad};
    CHECK(eval(&t, 13, 2, in2, 3, y) == NNP_ERR_SHAPE); /* sum 7 != 6 */
    nnp_tensor neg = ints1(3, (int64_t[]){7, -1, 0});
    const nnp_tensor *in3[] = {&x, &neg};
    CHECK(eval(&t, 13, 2, in3, 3, y) == NNP_ERR_SHAPE);
    CHECK(eval(&t, 13, 2, in, 2, y) == NNP_ERR_SHAPE); /* 3 sizes, 2 outputs */
    /* the sizes must be known at load time */
    nnp_tensor rt = s;
    rt.data = NULL;
    const nnp_tensor *in4[] = {&x, &rt};
    size_t scratch;
    CHECK(nnp_op_infer(t.n, 13, 2, in4, 3, y, &scratch) == NNP_ERR_UNSUPPORTED);
    nnp_tensor_free(&s);
    nnp_tensor_free(&bad);
    nnp_tensor_free(&neg);
    test_node_free(&t);
  }
  { /* opset 18 num_outputs: uneven last part */
    test_node t = test_node_new("Split");
    test_attr_int(&t, "axis", 0);
    test_attr_int(&t, "num_outputs", 3);
    nnp_tensor v = iota_f32(1, (int64_t[]){5}), y[3];
    const nnp_tensor *in[] = {&v};
    CHECK_OK(eval(&t, 18, 1, in, 3, y));
    CHECK(same_f32(&y[0], (float[]){0, 1}, 1, (int64_t[]){2}));
    CHECK(same_f32(&y[1], (float[]){2, 3}, 1, (int64_t[]){2}));
    CHECK(same_f32(&y[2], (float[]){4}, 1, (int64_t[]){1}));
    for (int i = 0; i < 3; i++) nnp_tensor_free(&y[i]);
    CHECK(eval(&t, 18, 1, in, 2, y) == NNP_ERR_SHAPE); /* num_outputs != outputs */
    test_node_free(&t);
    t = test_node_new("Split"); /* not divisible before opset 18 */
    CHECK(eval(&t, 13, 1, in, 3, y) == NNP_ERR_SHAPE);
    test_node_free(&t);
    nnp_tensor_free(&v);
  }
  { /* an omitted output is skipped */
    test_node t = test_node_new("Split");
    nnp_tensor v = iota_f32(1, (int64_t[]){4}), y0;
    const nnp_tensor *in[] = {&v};
    nnp_tensor *outs[2] = {&y0, NULL};
    size_t scratch = 0;
    nnp_tensor outv[2];
    CHECK_OK(nnp_op_infer(t.n, 13, 1, in, 2, outv, &scratch));
    y0 = outv[0];
    CHECK_OK(nnp_tensor_alloc(&y0));
    nnp_op_ctx ctx = {.node = t.n, .opset = 13, .n_in = 1, .in = in, .n_out = 2, .out = outs};
    CHECK_OK(nnp_op_get(t.n->op)->ref(&ctx));
    CHECK(same_f32(&y0, (float[]){0, 1}, 1, (int64_t[]){2}));
    nnp_tensor_free(&y0);
    nnp_tensor_free(&v);
    test_node_free(&t);
  }
  nnp_tensor_free(&x);
}

/* ---- Slice ---- */

static nnp_status slice13(const nnp_tensor *x, int n, const int64_t *starts, const int64_t *ends,
                          const int64_t *axes, const int64_t *steps, nnp_tensor *y) {
  test_node t = test_node_new("Slice");
  nnp_tensor s = ints1(n, starts), e = ints1(n, ends), a = {0}, st = {0};
  if (axes) a = ints1(n, axes);
  if (steps) st = ints1(n, steps);
  const nnp_tensor *in[] = {x, &s, &e, axes ? &a : NULL, steps ? &st : NULL};
  nnp_status r = eval(&t, 13, steps ? 5 : axes ? 4 : 3, in, 1, y);
  nnp_tensor_free(&s);
  nnp_tensor_free(&e);
  nnp_tensor_free(&a);
  nnp_tensor_free(&st);
  test_node_free(&t);
  return r;
}

static void test_slice(void) {
  nnp_tensor x = iota_f32(2, (int64_t[]){3, 4}), y;
  CHECK_OK(slice13(&x, 2, (int64_t[]){1, 0}, (int64_t[]){2, 3}, NULL, NULL, &y));
  CHECK(same_f32(&y, (float[]){4, 5, 6}, 2, (int64_t[]){1, 3}));
  nnp_tensor_free(&y);
  /* negative axis, INT64_MAX end, step 2 */
  CHECK_OK(slice13(&x, 1, (int64_t[]){1}, (int64_t[]){INT64_MAX}, (int64_t[]){-1}, (int64_t[]){2}, &y));
  CHECK(same_f32(&y, (float[]){1, 3, 5, 7, 9, 11}, 2, (int64_t[]){3, 2}));
  nnp_tensor_free(&y);
  /* full reversal: start -1, end INT64_MIN, step -1 on both axes */
  CHECK_OK(slice13(&x, 2, (int64_t[]){-1, -1}, (int64_t[]){INT64_MIN, INT64_MIN}, (int64_t[]){0, 1},
                   (int64_t[]){-1, -1}, &y));
  CHECK(same_f32(&y, (float[]){11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0}, 2, (int64_t[]){3, 4}));
  nnp_tensor_free(&y);
  /* start beyond the end clamps: empty; negative step from a too-large start clamps to d-1 */
  CHECK_OK(slice13(&x, 1, (int64_t[]){1000}, (int64_t[]){1000}, (int64_t[]){1}, NULL, &y));
  CHECK(y.rank == 2 && y.dims[0] == 3 && y.dims[1] == 0);
  nnp_tensor_free(&y);
  CHECK_OK(slice13(&x, 1, (int64_t[]){1000}, (int64_t[]){0}, (int64_t[]){1}, (int64_t[]){-2}, &y));
  CHECK(same_f32(&y, (float[]){3, 1, 7, 5, 11, 9}, 2, (int64_t[]){3, 2}));
  nnp_tensor_free(&y);
  /* INT64_MIN step takes one element */
  CHECK_OK(slice13(&x, 1, (int64_t[]){-1}, (int64_t[]){INT64_MIN}, (int64_t[]){0}, (int64_t[]){INT64_MIN}, &y));
  CHECK(same_f32(&y, (float[]){8, 9, 10, 11}, 2, (int64_t[]){1, 4}));
  nnp_tensor_free(&y);
  /* errors */
  CHECK(slice13(&x, 1, (int64_t[]){0}, (int64_t[]){2}, (int64_t[]){0}, (int64_t[]){0}, &y) == NNP_ERR_SHAPE);
  CHECK(slice13(&x, 2, (int64_t[]){0, 0}, (int64_t[]){2, 2}, (int64_t[]){1, -1}, NULL, &y) == NNP_ERR_SHAPE);
  CHECK(slice13(&x, 1, (int64_t[]){0}, (int64_t[]){2}, (int64_t[]){2}, NULL, &y) == NNP_ERR_SHAPE);
  { /* opset 9: attributes */
    test_node t = test_node_new("Slice");
    test_attr_ints(&t, "starts", 1, (int64_t[]){-3});
    test_attr_ints(&t, "ends", 1, (int64_t[]){-1});
    test_attr_ints(&t, "axes", 1, (int64_t[]){1});
    const nnp_tensor *in[] = {&x};
    CHECK_OK(eval(&t, 9, 1, in, 1, &y));
    CHECK(same_f32(&y, (float[]){1, 2, 5, 6, 9, 10}, 2, (int64_t[]){3, 2}));
    nnp_tensor_free(&y);
    test_node_free(&t);
    t = test_node_new("Slice"); /* starts missing */
    CHECK(eval(&t, 9, 1, in, 1, &y) == NNP_ERR_SHAPE);
    test_node_free(&t);
  }
  { /* starts computed at run time */
    test_node t = test_node_new("Slice");
    nnp_tensor s = ints1(1, (int64_t[]){0}), e = ints1(1, (int64_t[]){1}), out;
    nnp_tensor rs = s;
    rs.data = NULL;
    const nnp_tensor *in[] = {&x, &rs, &e};
    size_t scratch;
    CHECK(nnp_op_infer(t.n, 13, 3, in, 1, &out, &scratch) == NNP_ERR_UNSUPPORTED);
    nnp_tensor_free(&s);
    nnp_tensor_free(&e);
    test_node_free(&t);
  }
  nnp_tensor_free(&x);
}

/* ---- Gather ---- */

static void test_gather(void) {
  nnp_tensor x = iota_f32(2, (int64_t[]){3, 2}), y;
  {
    test_node t = test_node_new("Gather");
    nnp_tensor ind = test_tensor(NNP_I64, 2, (int64_t[]){2, 2}, (int64_t[]){0, 1, -1, 0});
    const nnp_tensor *in[] = {&x, &ind};
    CHECK_OK(eval(&t, 13, 2, in, 1, &y));
    CHECK(same_f32(&y, (float[]){0, 1, 2, 3, 4, 5, 0, 1}, 3, (int64_t[]){2, 2, 2}));
    nnp_tensor_free(&y);
    nnp_tensor_free(&ind);
    test_node_free(&t);
  }
  { /* axis 1, int32 scalar index */
    test_node t = test_node_new("Gather");
    test_attr_int(&t, "axis", -1);
    int32_t v = 1;
    nnp_tensor ind = test_tensor(NNP_I32, 0, NULL, &v);
    const nnp_tensor *in[] = {&x, &ind};
    CHECK_OK(eval(&t, 13, 2, in, 1, &y));
    CHECK(same_f32(&y, (float[]){1, 3, 5}, 1, (int64_t[]){3}));
    nnp_tensor_free(&y);
    nnp_tensor_free(&ind);
    test_node_free(&t);
  }
  { /* out of range: at load time when indices are known, at run time otherwise */
    test_node t = test_node_new("Gather");
    nnp_tensor ind = ints1(2, (int64_t[]){0, 3});
    const nnp_tensor *in[] = {&x, &ind};
    CHECK(eval(&t, 13, 2, in, 1, &y) == NNP_ERR_SHAPE);
    nnp_tensor rt = ind;
    rt.data = NULL;
    const nnp_tensor *inr[] = {&x, &rt};
    size_t scratch;
    CHECK_OK(nnp_op_infer(t.n, 13, 2, inr, 1, &y, &scratch));
    CHECK_OK(nnp_tensor_alloc(&y));
    nnp_tensor *outs[] = {&y};
    nnp_op_ctx ctx = {.node = t.n, .opset = 13, .n_in = 2, .in = in, .n_out = 1, .out = outs};
    CHECK(nnp_op_get(t.n->op)->ref(&ctx) == NNP_ERR_SHAPE);
    CHECK(strstr(nnp_last_error(), "out of range") != NULL);
    nnp_tensor_free(&y);
    ((int64_t *)ind.data)[1] = -4;
    CHECK(eval(&t, 13, 2, in, 1, &y) == NNP_ERR_SHAPE);
    nnp_tensor_free(&ind);
    nnp_tensor fi = test_tensor(NNP_F32, 1, (int64_t[]){1}, NULL);
    const nnp_tensor *inf[] = {&x, &fi};
    CHECK(eval(&t, 13, 2, inf, 1, &y) == NNP_ERR_SHAPE);
    nnp_tensor_free(&fi);
    test_node_free(&t);
  }
  nnp_tensor_free(&x);
}

/* ---- Expand / Tile ---- */

static void test_expand_tile(void) {
  nnp_tensor x = iota_f32(2, (int64_t[]){3, 1}), y;
  {
    test_node t = test_node_new("Expand");
    nnp_tensor s = ints1(3, (int64_t[]){2, 1, 2});
    const nnp_tensor *in[] = {&x, &s};
    CHECK_OK(eval(&t, 13, 2, in, 1, &y));
    CHECK(same_f32(&y, (float[]){0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2}, 3, (int64_t[]){2, 3, 2}));
    nnp_tensor_free(&y);
    nnp_tensor_free(&s);
    s = ints1(1, (int64_t[]){1}); /* shape smaller than the input: input shape wins */
    CHECK_OK(eval(&t, 13, 2, in, 1, &y));
    CHECK(same_f32(&y, (float[]){0, 1, 2}, 2, (int64_t[]){3, 1}));
    nnp_tensor_free(&y);
    nnp_tensor_free(&s);
    s = ints1(2, (int64_t[]){2, 2});
    CHECK(eval(&t, 13, 2, in, 1, &y) == NNP_ERR_SHAPE);
    nnp_tensor_free(&s);
    s = ints1(2, (int64_t[]){-1, 1});
    CHECK(eval(&t, 13, 2, in, 1, &y) == NNP_ERR_SHAPE);
    nnp_tensor_free(&s);
    test_node_free(&t);
  }
  {
    test_node t = test_node_new("Tile");
    nnp_tensor v = iota_f32(2, (int64_t[]){2, 2}), r = ints1(2, (int64_t[]){2, 3});
    const nnp_tensor *in[] = {&v, &r};
    CHECK_OK(eval(&t, 13, 2, in, 1, &y));
    CHECK(same_f32(&y, (float[]){0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3}, 2,
                   (int64_t[]){4, 6}));
    nnp_tensor_free(&y);
    nnp_tensor_free(&r);
    r = ints1(2, (int64_t[]){0, 1});
    CHECK_OK(eval(&t, 13, 2, in, 1, &y));
    CHECK(y.dims[0] == 0 && y.dims[1] == 2);
    nnp_tensor_free(&y);
    nnp_tensor_free(&r);
    r = ints1(1, (int64_t[]){2});
    CHECK(eval(&t, 13, 2, in, 1, &y) == NNP_ERR_SHAPE);
    nnp_tensor_free(&r);
    r = ints1(2, (int64_t[]){-1, 2});
    CHECK(eval(&t, 13, 2, in, 1, &y) == NNP_ERR_SHAPE);
    nnp_tensor_free(&r);
    r = ints1(2, (int64_t[]){INT64_MAX, INT64_MAX});
    CHECK(eval(&t, 13, 2, in, 1, &y) == NNP_ERR_LIMIT);
    nnp_tensor_free(&r);
    nnp_tensor_free(&v);
    test_node_free(&t);
  }
  nnp_tensor_free(&x);
}

/* ---- Pad ---- */

static nnp_status pad13(const char *mode, const nnp_tensor *x, int np, const int64_t *pads,
                        const nnp_tensor *value, int64_t opset, nnp_tensor *y) {
  test_node t = test_node_new("Pad");
  if (mode) test_attr_string(&t, "mode", mode);
  nnp_tensor p = ints1(np, pads);
  const nnp_tensor *in[] = {x, &p, value};
  nnp_status s = eval(&t, opset, value ? 3 : 2, in, 1, y);
  nnp_tensor_free(&p);
  test_node_free(&t);
  return s;
}

static void test_pad(void) {
  nnp_tensor x = iota_f32(2, (int64_t[]){2, 3}), y;
  float cv = 9;
  nnp_tensor v = test_tensor(NNP_F32, 0, NULL, &cv);
  CHECK_OK(pad13(NULL, &x, 4, (int64_t[]){1, 0, 0, 2}, &v, 13, &y));
  CHECK(same_f32(&y, (float[]){9, 9, 9, 9, 9, 0, 1, 2, 9, 9, 3, 4, 5, 9, 9}, 2, (int64_t[]){3, 5}));
  nnp_tensor_free(&y);
  CHECK_OK(pad13("edge", &x, 4, (int64_t[]){0, 2, 1, 1}, NULL, 13, &y));
  CHECK(same_f32(&y, (float[]){0, 0, 0, 1, 2, 2, 3, 3, 3, 4, 5, 5, 3, 3, 3, 4, 5, 5}, 2, (int64_t[]){3, 6}));
  nnp_tensor_free(&y);
  CHECK_OK(pad13("reflect", &x, 4, (int64_t[]){1, 2, 0, 2}, NULL, 13, &y));
  CHECK(same_f32(&y, (float[]){5, 4, 3, 4, 5, 4, 3, 2, 1, 0, 1, 2, 1, 0, 5, 4, 3, 4, 5, 4, 3}, 2,
                 (int64_t[]){3, 7}));
  nnp_tensor_free(&y);
  CHECK_OK(pad13("wrap", &x, 4, (int64_t[]){0, 1, 0, 2}, NULL, 19, &y));
  CHECK(same_f32(&y, (float[]){2, 0, 1, 2, 0, 1, 5, 3, 4, 5, 3, 4}, 2, (int64_t[]){2, 6}));
  nnp_tensor_free(&y);
  /* negative pads crop; edge padding then uses the cropped region */
  CHECK_OK(pad13("edge", &x, 4, (int64_t[]){0, -1, -1, 1}, NULL, 13, &y));
  CHECK(same_f32(&y, (float[]){1, 2, 2}, 2, (int64_t[]){1, 3}));
  nnp_tensor_free(&y);
  /* opset 2: attributes */
  {
    test_node t = test_node_new("Pad");
    test_attr_ints(&t, "pads", 4, (int64_t[]){0, 1, 0, 0});
    test_attr_float(&t, "value", -1.5f);
    const nnp_tensor *in[] = {&x};
    CHECK_OK(eval(&t, 2, 1, in, 1, &y));
    CHECK(same_f32(&y, (float[]){-1.5f, 0, 1, 2, -1.5f, 3, 4, 5}, 2, (int64_t[]){2, 4}));
    nnp_tensor_free(&y);
    test_node_free(&t);
  }
  /* opset 18: axes */
  {
    test_node t = test_node_new("Pad");
    nnp_tensor p = ints1(2, (int64_t[]){1, 1}), a = ints1(1, (int64_t[]){-1});
    const nnp_tensor *in[] = {&x, &p, NULL, &a};
    CHECK_OK(eval(&t, 18, 4, in, 1, &y));
    CHECK(same_f32(&y, (float[]){0, 0, 1, 2, 0, 0, 3, 4, 5, 0}, 2, (int64_t[]){2, 5}));
    nnp_tensor_free(&y);
    nnp_tensor_free(&p);
    p = ints1(4, (int64_t[]){1, 1, 1, 1}); /* 4 pads for 1 axis */
    CHECK(eval(&t, 18, 4, in, 1, &y) == NNP_ERR_SHAPE);
    nnp_tensor_free(&p);
    nnp_tensor_free(&a);
    test_node_free(&t);
  }
  /* int64 constant stays exact */
  {
    nnp_tensor xi = test_tensor(NNP_I64, 1, (int64_t[]){1}, (int64_t[]){1});
    int64_t big = INT64_MAX - 1;
    nnp_tensor vi = test_tensor(NNP_I64, 0, NULL, &big);
    CHECK_OK(pad13("constant", &xi, 2, (int64_t[]){1, 0}, &vi, 13, &y));
    CHECK(same_i64(&y, (int64_t[]){INT64_MAX - 1, 1}, 1, (int64_t[]){2}));
    nnp_tensor_free(&y);
    nnp_tensor_free(&xi);
    nnp_tensor_free(&vi);
  }
  /* errors */
  CHECK(pad13(NULL, &x, 3, (int64_t[]){1, 0, 0}, NULL, 13, &y) == NNP_ERR_SHAPE);
  CHECK(pad13(NULL, &x, 4, (int64_t[]){0, -4, 0, 0}, NULL, 13, &y) == NNP_ERR_SHAPE);
  CHECK(pad13("mirror", &x, 4, (int64_t[]){0, 0, 0, 0}, NULL, 13, &y) == NNP_ERR_UNSUPPORTED);
  CHECK(pad13(NULL, &x, 4, (int64_t[]){0, INT64_MAX, 0, INT64_MAX}, NULL, 13, &y) == NNP_ERR_LIMIT);
  CHECK(pad13("reflect", &x, 4, (int64_t[]){0, -3, 0, 1}, NULL, 13, &y) == NNP_ERR_SHAPE);
  {
    test_node t = test_node_new("Pad"); /* opset 2 without pads */
    const nnp_tensor *in[] = {&x};
    CHECK(eval(&t, 2, 1, in, 1, &y) == NNP_ERR_SHAPE);
    test_node_free(&t);
  }
  nnp_tensor_free(&v);
  nnp_tensor_free(&x);
}

int main(void) {
  test_transpose();
  test_concat();
  test_split();
  test_slice();
  test_gather();
  test_expand_tile();
  test_pad();
  TEST_MAIN_END();
}
