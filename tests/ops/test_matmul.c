/* Gemm and MatMul: hand-computed cases, every C broadcast form, transposes, the
 * transB scratch path, numpy 1-D promotion and batch broadcasting, integer types, random
 * cross-checks against a naive triple loop, and the validation paths. */
#include "ops/op_test_util.h"

static nnp_status infer(test_node *t, int n_in, const nnp_tensor *const *in) {
  nnp_tensor out[1];
  return nnp_op_infer(t->n, 13, n_in, in, 1, out, NULL);
}

static void check_f32(const nnp_tensor *y, int rank, const int64_t *dims, const float *want, double tol,
                      const char *what) {
  bool ok = y->rank == rank && y->dtype == NNP_F32;
  for (int i = 0; ok && i < rank; i++) ok = y->dims[i] == dims[i];
  CHECK_MSG(ok, "%s: wrong output shape/type (rank %d)", what, y->rank);
  if (!ok) return;
  double d = test_max_abs_diff(y, want, nnp_tensor_numel(y));
  CHECK_MSG(d <= tol, "%s: max abs diff %g", what, d);
}

/* A = [[1,2,3],[4,5,6]] (2x3), B = [[1,2],[3,4],[5,6]] (3x2): AB = [[22,28],[49,64]]. */
static const float A23[6] = {1, 2, 3, 4, 5, 6}, B32[6] = {1, 2, 3, 4, 5, 6};

static void test_gemm_basic(void) {
  int64_t ad[2] = {2, 3}, bd[2] = {3, 2}, yd[2] = {2, 2};
  nnp_tensor A = test_tensor(NNP_F32, 2, ad, A23), B = test_tensor(NNP_F32, 2, bd, B32), Y;
  const nnp_tensor *in[2] = {&A, &B};
  test_node t = test_node_new("Gemm");
  static const float ab[4] = {22, 28, 49, 64};
  CHECK_OK(nnp_op_eval(t.n, 13, 2, in, 1, &Y));
  check_f32(&Y, 2, yd, ab, 0, "gemm no C");
  nnp_tensor_free(&Y);
  /* C in every broadcastable shape, alpha 2, beta 0.5 */
  test_attr_float(&t, "alpha", 2);
  test_attr_float(&t, "beta", 0.5f);
  static const float c_s[1] = {4}, c_n[2] = {2, 4}, c_m1[2] = {2, 4}, c_mn[4] = {2, 4, 6, 8};
  struct {
    int rank;
    int64_t dims[2];
    const float *c;
    float want[4];
  } cs[] = {
      {0, {0}, c_s, {46, 58, 100, 130}},
      {1, {1}, c_s, {46, 58, 100, 130}},
      {1, {2}, c_n, {45, 58, 99, 130}},
      {2, {1, 2}, c_n, {45, 58, 99, 130}},
      {2, {2, 1}, c_m1, {45, 57, 100, 130}},
      {2, {2, 2}, c_mn, {45, 58, 101, 132}},
  };
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
    nnp_tensor C = test_tensor(NNP_F32, cs[i].rank, cs[i].dims, cs[i].c);
    const nnp_tensor *in3[3] = {&A, &B, &C};
    CHECK_OK(nnp_op_eval(t.n, 13, 3, in3, 1, &Y));
    char what[32];
    snprintf(what, sizeof what, "gemm C case %zu", i);
    check_f32(&Y, 2, yd, cs[i].want, 1e-6, what);
    nnp_tensor_free(&Y);
    nnp_tensor_free(&C);
  }
  test_node_free(&t);
  { /* beta = 0 ignores C, even NaN */
    test_node t0 = test_node_new("Gemm");
    test_attr_float(&t0, "beta", 0);
    float nan1[1] = {NAN};
    nnp_tensor C = test_tensor(NNP_F32, 0, NULL, nan1);
    const nnp_tensor *in3[3] = {&A, &B, &C};
    CHECK_OK(nnp_op_eval(t0.n, 13, 3, in3, 1, &Y));
    check_f32(&Y, 2, yd, ab, 0, "gemm beta 0");
    nnp_tensor_free(&Y);
    nnp_tensor_free(&C);
    test_node_free(&t0);
  }
  { /* transA, transB: A^T given as 3x2, B^T as 2x3 */
    static const float at[6] = {1, 4, 2, 5, 3, 6}, bt[6] = {1, 3, 5, 2, 4, 6};
    int64_t atd[2] = {3, 2}, btd[2] = {2, 3};
    nnp_tensor At = test_tensor(NNP_F32, 2, atd, at), Bt = test_tensor(NNP_F32, 2, btd, bt);
    const nnp_tensor *in_ta[2] = {&At, &B}, *in_tb[2] = {&A, &Bt}, *in_tab[2] = {&At, &Bt};
    test_node ta = test_node_new("Gemm"), tb = test_node_new("Gemm"), tab = test_node_new("Gemm");
    test_attr_int(&ta, "transA", 1);
    test_attr_int(&tb, "transB", 1);
    test_attr_int(&tab, "transA", 1);
    test_attr_int(&tab, "transB", 1);
    CHECK_OK(nnp_op_eval(ta.n, 13, 2, in_ta, 1, &Y));
    check_f32(&Y, 2, yd, ab, 0, "gemm transA");
    nnp_tensor_free(&Y);
    CHECK_OK(nnp_op_eval(tb.n, 13, 2, in_tb, 1, &Y));
    check_f32(&Y, 2, yd, ab, 0, "gemm transB");
    nnp_tensor_free(&Y);
    CHECK_OK(nnp_op_eval(tab.n, 13, 2, in_tab, 1, &Y));
    check_f32(&Y, 2, yd, ab, 0, "gemm transA transB");
    nnp_tensor_free(&Y);
    test_node_free(&ta);
    test_node_free(&tb);
    test_node_free(&tab);
    nnp_tensor_free(&At);
    nnp_tensor_free(&Bt);
  }
  nnp_tensor_free(&A);
  nnp_tensor_free(&B);
}

/* Random Gemm (both transB paths: M < 4 dot products, M >= 4 transposed copy) and
 * MatMul against a naive loop. */
static void test_gemm_random(void) {
  static const int64_t shapes[][3] = {{1, 7, 5}, {3, 9, 4}, {4, 5, 6}, {17, 300, 260}, {6, 1, 1}, {5, 0, 3}};
  for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
    for (int ta = 0; ta < 2; ta++)
      for (int tb = 0; tb < 2; tb++) {
        int64_t M = shapes[si][0], K = shapes[si][1], N = shapes[si][2];
        int64_t ad[2] = {ta ? K : M, ta ? M : K}, bd[2] = {tb ? N : K, tb ? K : N}, cd[1] = {N};
        nnp_tensor A = test_tensor(NNP_F32, 2, ad, NULL), B = test_tensor(NNP_F32, 2, bd, NULL),
                   C = test_tensor(NNP_F32, 1, cd, NULL), Y;
        test_fill_uniform(A.data, M * K, -1, 1, (unsigned)si);
        test_fill_uniform(B.data, K * N, -1, 1, (unsigned)si + 7);
        test_fill_uniform(C.data, N, -1, 1, (unsigned)si + 9);
        test_node t = test_node_new("Gemm");
        test_attr_int(&t, "transA", ta);
        test_attr_int(&t, "transB", tb);
        test_attr_float(&t, "alpha", 0.5f);
        test_attr_float(&t, "beta", -2);
        const nnp_tensor *in[3] = {&A, &B, &C};
        CHECK_OK(nnp_op_eval(t.n, 13, 3, in, 1, &Y));
        float *want = malloc(sizeof(float) * (size_t)(M * N + 1));
        const float *a = A.data, *b = B.data, *c = C.data;
        for (int64_t i = 0; i < M; i++)
          for (int64_t j = 0; j < N; j++) {
            double acc = 0;
            for (int64_t k = 0; k < K; k++)
              acc += (double)a[ta ? k * M + i : i * K + k] * b[tb ? j * K + k : k * N + j];
            want[i * N + j] = (float)(0.5 * acc - 2 * c[j]);
          }
        int64_t yd[2] = {M, N};
        char what[64];
        snprintf(what, sizeof what, "gemm random %lldx%lldx%lld ta%d tb%d", (long long)M, (long long)K,
                 (long long)N, ta, tb);
        check_f32(&Y, 2, yd, want, 1e-4, what);
        free(want);
        nnp_tensor_free(&Y);
        nnp_tensor_free(&A);
        nnp_tensor_free(&B);
        nnp_tensor_free(&C);
        test_node_free(&t);
      }
}

static void test_gemm_int_and_errors(void) {
  { /* int32 and int64: exact, wrapping */
    static const int32_t a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, c[2] = {100, -100};
    int64_t d2[2] = {2, 2}, d1[1] = {2};
    nnp_tensor A = test_tensor(NNP_I32, 2, d2, a), B = test_tensor(NNP_I32, 2, d2, b),
               C = test_tensor(NNP_I32, 1, d1, c), Y;
    const nnp_tensor *in[3] = {&A, &B, &C};
    test_node t = test_node_new("Gemm");
    CHECK_OK(nnp_op_eval(t.n, 13, 3, in, 1, &Y));
    const int32_t *y = Y.data;
    CHECK(Y.dtype == NNP_I32 && y[0] == 119 && y[1] == -78 && y[2] == 143 && y[3] == -50);
    nnp_tensor_free(&Y);
    test_attr_float(&t, "alpha", 2);
    CHECK(infer(&t, 3, in) == NNP_ERR_UNSUPPORTED);
    test_node_free(&t);
    nnp_tensor_free(&A);
    nnp_tensor_free(&B);
    nnp_tensor_free(&C);
    static const int64_t a6[1] = {INT64_MAX}, b6[1] = {2};
    int64_t d11[2] = {1, 1};
    nnp_tensor A6 = test_tensor(NNP_I64, 2, d11, a6), B6 = test_tensor(NNP_I64, 2, d11, b6);
    const nnp_tensor *in6[2] = {&A6, &B6};
    t = test_node_new("Gemm");
    CHECK_OK(nnp_op_eval(t.n, 13, 2, in6, 1, &Y));
    CHECK(((int64_t *)Y.data)[0] == -2); /* wraps like numpy, no undefined behaviour */
    nnp_tensor_free(&Y);
    test_node_free(&t);
    nnp_tensor_free(&A6);
    nnp_tensor_free(&B6);
  }
  nnp_tensor A = {.dtype = NNP_F32, .rank = 2, .dims = {2, 3}};
  nnp_tensor B = {.dtype = NNP_F32, .rank = 2, .dims = {3, 4}};
  test_node t = test_node_new("Gemm");
  {
    nnp_tensor Bk = B;
    Bk.dims[0] = 4;
    const nnp_tensor *in[2] = {&A, &Bk};
    CHECK(infer(&t, 2, in) == NNP_ERR_SHAPE);
  }
  {
    nnp_tensor A3 = {.dtype = NNP_F32, .rank = 3, .dims = {1, 2, 3}};
    const nnp_tensor *in[2] = {&A3, &B};
    CHECK(infer(&t, 2, in) == NNP_ERR_SHAPE);
  }
  {
    nnp_tensor Bd = B;
    Bd.dtype = NNP_F64;
    const nnp_tensor *in[2] = {&A, &Bd};
    CHECK(infer(&t, 2, in) == NNP_ERR_SHAPE);
    nnp_tensor Ab = A, Bb = B;
    Ab.dtype = Bb.dtype = NNP_BOOL;
    const nnp_tensor *inb[2] = {&Ab, &Bb};
    CHECK(infer(&t, 2, inb) == NNP_ERR_UNSUPPORTED);
  }
  { /* C that does not broadcast to 2x4 */
    nnp_tensor bad[4] = {{.dtype = NNP_F32, .rank = 1, .dims = {3}},
                         {.dtype = NNP_F32, .rank = 3, .dims = {1, 2, 4}},
                         {.dtype = NNP_F32, .rank = 2, .dims = {3, 4}},
                         {.dtype = NNP_F32, .rank = 2, .dims = {2, 3}}};
    for (int i = 0; i < 4; i++) {
      const nnp_tensor *in[3] = {&A, &B, &bad[i]};
      CHECK_MSG(infer(&t, 3, in) == NNP_ERR_SHAPE, "bad C case %d", i);
    }
  }
  test_node_free(&t);
  t = test_node_new("Gemm");
  test_attr_int(&t, "transA", 2);
  const nnp_tensor *in[2] = {&A, &B};
  CHECK(infer(&t, 2, in) == NNP_ERR_SHAPE);
  test_node_free(&t);
}

/* ---------------------------------------------------------------------------------
 * MatMul */

static void matmul_case(int ra, const int64_t *da, int rb, const int64_t *db, int ry, const int64_t *dy,
                        const char *what) {
  nnp_tensor A = test_tensor(NNP_F32, ra, da, NULL), B = test_tensor(NNP_F32, rb, db, NULL), Y;
  int64_t na = nnp_tensor_numel(&A), nb = nnp_tensor_numel(&B);
  test_fill_uniform(A.data, na, -1, 1, 3);
  test_fill_uniform(B.data, nb, -1, 1, 4);
  test_node t = test_node_new("MatMul");
  const nnp_tensor *in[2] = {&A, &B};
  nnp_status s = nnp_op_eval(t.n, 13, 2, in, 1, &Y);
  CHECK_MSG(s == NNP_OK, "%s: %s", what, nnp_last_error());
  if (s == NNP_OK) {
    /* Naive numpy semantics, written independently of the kernel's stride walk. */
    int64_t M = ra >= 2 ? da[ra - 2] : 1, K = da[ra - 1], N = rb >= 2 ? db[rb - 1] : 1;
    int bra = ra > 2 ? ra - 2 : 0, brb = rb > 2 ? rb - 2 : 0, br = bra > brb ? bra : brb;
    int64_t bdims[8], nbatch = 1;
    for (int i = 0; i < br; i++) {
      int64_t x = i - (br - bra) >= 0 ? da[i - (br - bra)] : 1;
      int64_t z = i - (br - brb) >= 0 ? db[i - (br - brb)] : 1;
      bdims[i] = x > z ? x : z;
      nbatch *= bdims[i];
    }
    float *want = malloc(sizeof(float) * (size_t)(nbatch * M * N + 1));
    for (int64_t bi = 0; bi < nbatch; bi++) {
      int64_t rem = bi, ao = 0, bo = 0, as = M * K, bs = K * N;
      for (int i = br - 1; i >= 0; i--) {
        int64_t idx = rem % bdims[i];
        rem /= bdims[i];
        int ia = i - (br - bra), ib = i - (br - brb);
        if (ia >= 0) {
          if (da[ia] != 1) ao += idx * as;
          as *= da[ia];
        }
        if (ib >= 0) {
          if (db[ib] != 1) bo += idx * bs;
          bs *= db[ib];
        }
      }
      const float *a = (const float *)A.data + ao, *b = (const float *)B.data + bo;
      for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
          double acc = 0;
          for (int64_t k = 0; k < K; k++) acc += (double)a[i * K + k] * b[k * N + j];
          want[(bi * M + i) * N + j] = (float)acc;
        }
    }
    check_f32(&Y, ry, dy, want, 1e-4, what);
    free(want);
    nnp_tensor_free(&Y);
  }
  test_node_free(&t);
  nnp_tensor_free(&A);
  nnp_tensor_free(&B);
}

static void test_matmul(void) {
  {
    int64_t da[2] = {2, 3}, db[2] = {3, 2}, dy[2] = {2, 2};
    nnp_tensor A = test_tensor(NNP_F32, 2, da, A23), B = test_tensor(NNP_F32, 2, db, B32), Y;
    const nnp_tensor *in[2] = {&A, &B};
    test_node t = test_node_new("MatMul");
    static const float want[4] = {22, 28, 49, 64};
    CHECK_OK(nnp_op_eval(t.n, 13, 2, in, 1, &Y));
    check_f32(&Y, 2, dy, want, 0, "matmul 2D");
    nnp_tensor_free(&Y);
    test_node_free(&t);
    nnp_tensor_free(&A);
    nnp_tensor_free(&B);
  }
  int64_t d3[1] = {3}, d34[2] = {3, 4}, d43[2] = {4, 3}, d4[1] = {4}, d43v[1] = {4};
  int64_t dy_s[1] = {0};
  matmul_case(1, d3, 2, d34, 1, d4, "matmul 1D x 2D");
  matmul_case(2, d43, 1, d3, 1, d43v, "matmul 2D x 1D");
  matmul_case(1, d3, 1, d3, 0, dy_s, "matmul 1D x 1D (scalar)");
  int64_t a4[4] = {2, 1, 2, 3}, b3[3] = {3, 3, 5}, y4[4] = {2, 3, 2, 5};
  matmul_case(4, a4, 3, b3, 4, y4, "matmul batch broadcast");
  int64_t a3[3] = {2, 5, 3}, y3[3] = {2, 5, 4};
  matmul_case(3, a3, 2, d34, 3, y3, "matmul 3D x 2D");
  int64_t a1[1] = {3}, b34[3] = {2, 3, 4}, y24[2] = {2, 4};
  matmul_case(1, a1, 3, b34, 2, y24, "matmul 1D x 3D");
  int64_t a5[5] = {1, 2, 1, 40, 300}, b5[3] = {3, 300, 270}, y5[5] = {1, 2, 3, 40, 270};
  matmul_case(5, a5, 3, b5, 5, y5, "matmul large blocked");
  int64_t ak0[2] = {2, 0}, bk0[2] = {0, 3}, yk0[2] = {2, 3};
  matmul_case(2, ak0, 2, bk0, 2, yk0, "matmul K = 0");
  { /* int64 stays exact beyond 2^53 */
    static const int64_t a[2] = {((int64_t)1 << 60) + 1, 3}, b[2] = {1, 1};
    int64_t da[1] = {2}, db[1] = {2};
    nnp_tensor A = test_tensor(NNP_I64, 1, da, a), B = test_tensor(NNP_I64, 1, db, b), Y;
    const nnp_tensor *in[2] = {&A, &B};
    test_node t = test_node_new("MatMul");
    CHECK_OK(nnp_op_eval(t.n, 13, 2, in, 1, &Y));
    CHECK(Y.rank == 0 && ((int64_t *)Y.data)[0] == ((int64_t)1 << 60) + 4);
    nnp_tensor_free(&Y);
    test_node_free(&t);
    nnp_tensor_free(&A);
    nnp_tensor_free(&B);
  }
  { /* validation */
    test_node t = test_node_new("MatMul");
    nnp_tensor A = {.dtype = NNP_F32, .rank = 3, .dims = {2, 2, 3}};
    nnp_tensor B = {.dtype = NNP_F32, .rank = 3, .dims = {3, 3, 4}};
    const nnp_tensor *in[2] = {&A, &B};
    CHECK(infer(&t, 2, in) == NNP_ERR_SHAPE); /* batch 2 vs 3 */
    nnp_tensor B2 = {.dtype = NNP_F32, .rank = 2, .dims = {4, 4}};
    const nnp_tensor *in2[2] = {&A, &B2};
    CHECK(infer(&t, 2, in2) == NNP_ERR_SHAPE); /* K 3 vs 4 */
    nnp_tensor S = {.dtype = NNP_F32, .rank = 0};
    const nnp_tensor *in3[2] = {&S, &B2};
    CHECK(infer(&t, 2, in3) == NNP_ERR_SHAPE); /* rank 0 */
    nnp_tensor Ah = {.dtype = NNP_F16, .rank = 2, .dims = {4, 4}};
    const nnp_tensor *in4[2] = {&Ah, &Ah};
    CHECK(infer(&t, 2, in4) == NNP_ERR_UNSUPPORTED);
    nnp_tensor Ai = {.dtype = NNP_I32, .rank = 2, .dims = {4, 4}};
    const nnp_tensor *in5[2] = {&Ai, &B2};
    CHECK(infer(&t, 2, in5) == NNP_ERR_SHAPE); /* mixed types */
    test_node_free(&t);
  }
}

int main(void) {
  test_gemm_basic();
  test_gemm_random();
  test_gemm_int_and_errors();
  test_matmul();
  TEST_MAIN_END();
}
