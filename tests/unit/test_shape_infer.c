/* IR shape inference (src/ir/shape_infer.h) on a small hand-built graph:
 *   X [N, 3, 4] (N symbolic) -> Shape -> s;  X -> Relu -> y;  Reshape(y, s) -> z (output)
 * Shapes follow the given input shape, shape arithmetic is evaluated at load time (its
 * data is known), what depends on the runtime input is not, a frozen input makes small
 * results known, the inferred shapes are written into the graph's values (inputs keep
 * their symbolic dims), and an unknown op is reported by node. */
#include <string.h>

#include "ir/shape_infer.h"
#include "nnperf/alloc.h"
#include "nnperf/ir.h"
#include "ops/op.h"
#include "test.h"

typedef struct small_graph {
  nnp_graph *g;
  int x, s, y, z;
  int shape_node, relu_node, reshape_node;
} small_graph;

static void add(nnp_graph *g, const char *name, const char *op, int n_in, const int *in, int out, int *node) {
  CHECK_OK(nnp_graph_add_node(g, name, op, "", n_in, in, 1, &out, node));
  g->nodes[*node].op = nnp_op_lookup("", op);
}

static void build(small_graph *m) {
  memset(m, 0, sizeof *m);
  CHECK_OK(nnp_graph_create(&m->g));
  nnp_graph *g = m->g;
  g->opset = 13;
  CHECK_OK(nnp_graph_value(g, "X", &m->x));
  CHECK_OK(nnp_graph_value(g, "s", &m->s));
  CHECK_OK(nnp_graph_value(g, "y", &m->y));
  CHECK_OK(nnp_graph_value(g, "z", &m->z));
  nnp_value *x = &g->values[m->x];
  x->kind = NNP_VALUE_INPUT;
  x->dtype = NNP_F32;
  x->rank = 3;
  x->dims[0] = (nnp_dim){.value = -1, .symbol = nnp_strdup("N")};
  x->dims[1].value = 3;
  x->dims[2].value = 4;
  CHECK_OK(nnp_graph_add_input(g, m->x));
  add(g, "shape", "Shape", 1, &m->x, m->s, &m->shape_node);
  add(g, "relu", "Relu", 1, &m->x, m->y, &m->relu_node);
  int rin[2] = {m->y, m->s};
  add(g, "reshape", "Reshape", 2, rin, m->z, &m->reshape_node);
  CHECK_OK(nnp_graph_add_output(g, m->z));
  CHECK_OK(nnp_graph_toposort(g));
}

static bool dims_are(const nnp_tensor *t, int64_t a, int64_t b, int64_t c) {
  return t && t->rank == 3 && t->dims[0] == a && t->dims[1] == b && t->dims[2] == c;
}

static int node_index(const nnp_graph *g, const char *name) {
  for (int i = 0; i < g->n_nodes; i++)
    if (!strcmp(g->nodes[i].name, name)) return i;
  return -1;
}

static void test_runtime_input(void) {
  small_graph m;
  build(&m);
  nnp_tensor in = {.dtype = NNP_F32, .rank = 3, .dims = {2, 3, 4}};
  nnp_graph_shapes *sh = NULL;
  CHECK_OK(nnp_graph_shapes_infer(m.g, &in, &sh));
  if (!sh) return;
  const nnp_tensor *ts = nnp_graph_shape(sh, m.s), *tz = nnp_graph_shape(sh, m.z);
  CHECK(ts && ts->dtype == NNP_I64 && ts->rank == 1 && ts->dims[0] == 3);
  CHECK(nnp_graph_shape_known(sh, m.s) && ts && ts->data && ((const int64_t *)ts->data)[0] == 2);
  CHECK(sh->evaluated[node_index(m.g, "shape")] && !sh->evaluated[node_index(m.g, "relu")]);
  CHECK(!nnp_graph_shape_known(sh, m.y) && !nnp_graph_shape_known(sh, m.z));
  CHECK(dims_are(nnp_graph_shape(sh, m.y), 2, 3, 4) && dims_are(tz, 2, 3, 4) && tz->dtype == NNP_F32 && !tz->data);
  CHECK(nnp_graph_shape(sh, m.z + 1) == NULL); /* a value added after inference has none */
  nnp_graph_shapes_apply(m.g, sh);
  const nnp_value *vz = &m.g->values[m.z], *vx = &m.g->values[m.x];
  CHECK(vz->dtype == NNP_F32 && vz->rank == 3 && vz->dims[0].value == 2 && vz->dims[2].value == 4);
  CHECK(vx->dims[0].value == -1 && vx->dims[0].symbol && !strcmp(vx->dims[0].symbol, "N"));
  nnp_graph_shapes_destroy(sh);
  nnp_graph_destroy(m.g);
}

static void test_frozen_input(void) {
  small_graph m;
  build(&m);
  float data[6] = {-1, 2, -3, 4, -5, 6};
  nnp_tensor in = {.dtype = NNP_F32, .rank = 3, .dims = {1, 3, 2}, .data = data};
  /* the graph declares dim 2 as 4, but a frozen value is taken as it is */
  nnp_graph_shapes *sh = NULL;
  CHECK_OK(nnp_graph_shapes_infer(m.g, &in, &sh));
  if (!sh) return;
  CHECK(nnp_graph_shape_known(sh, m.y) && nnp_graph_shape_known(sh, m.z));
  CHECK(sh->evaluated[node_index(m.g, "relu")] && sh->evaluated[node_index(m.g, "reshape")]);
  const nnp_tensor *tz = nnp_graph_shape(sh, m.z);
  CHECK(dims_are(tz, 1, 3, 2) && tz->data && ((const float *)tz->data)[0] == 0 && ((const float *)tz->data)[5] == 6);
  CHECK(nnp_graph_shape(sh, m.x)->data != data); /* copied, not borrowed */
  nnp_graph_shapes_destroy(sh);
  nnp_graph_destroy(m.g);
}

static void test_unknown_op(void) {
  small_graph m;
  build(&m);
  m.g->nodes[node_index(m.g, "relu")].op = 0;
  nnp_status s = nnp_graph_check_ops(m.g);
  CHECK(s == NNP_ERR_UNSUPPORTED && strstr(nnp_last_error(), "node 'relu'"));
  nnp_clear_error();
  nnp_graph_destroy(m.g);
}

int main(void) {
  test_runtime_input();
  test_frozen_input();
  test_unknown_op();
  TEST_MAIN_END();
}
