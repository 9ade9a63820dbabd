/* The op list: X(ENUM, symbol, "OnnxName"). One line per op of the default ONNX domain.
 * Each op's descriptor `const nnp_op_info nnp_op_<symbol>` is defined in the family file
 * that implements it (src/ops/<family>.c). */
#define NNP_OP_LIST(X)                                   \
  /* elementwise unary (src/ops/unary.c) */              \
  X(ABS, abs, "Abs")                                     \
  X(NEG, neg, "Neg")                                     \
  X(SQRT, sqrt, "Sqrt")                                  \
  X(EXP, exp, "Exp")                                     \
  X(LOG, log, "Log")                                     \
  X(RECIPROCAL, reciprocal, "Reciprocal")                \
  X(FLOOR, floor, "Floor")                               \
  X(CEIL, ceil, "Ceil")                                  \
  X(ERF, erf, "Erf")                                     \
  X(TANH, tanh, "Tanh")                                  \
  X(SIGMOID, sigmoid, "Sigmoid")                         \
  X(RELU, relu, "Relu")                                  \
  X(LEAKY_RELU, leaky_relu, "LeakyRelu")                 \
  X(HARD_SIGMOID, hard_sigmoid, "HardSigmoid")           \
  X(HARD_SWISH, hard_swish, "HardSwish")                 \
  X(GELU, gelu, "Gelu")                                  \
  X(ELU, elu, "Elu")                                     \
  X(SELU, selu, "Selu")                                  \
  X(SOFTPLUS, softplus, "Softplus")                      \
  X(CLIP, clip, "Clip")                                  \
  X(NOT, not, "Not")                                     \
  X(CAST, cast, "Cast")                                  \
  X(IDENTITY, identity, "Identity")                      \
  X(DROPOUT, dropout, "Dropout")                         \
  /* elementwise binary / variadic (src/ops/binary.c) */ \
  X(ADD, add, "Add")                                     \
  X(SUB, sub, "Sub")                                     \
  X(MUL, mul, "Mul")                                     \
  X(DIV, div, "Div")                                     \
  X(POW, pow, "Pow")                                     \
  X(MOD, mod, "Mod")                                     \
  X(EQUAL, equal, "Equal")                               \
  X(LESS, less, "Less")                                  \
  X(GREATER, greater, "Greater")                         \
  X(LESS_OR_EQUAL, less_or_equal, "LessOrEqual")         \
  X(GREATER_OR_EQUAL, greater_or_equal, "GreaterOrEqual")\
  X(AND, and, "And")                                     \
  X(OR, or, "Or")                                        \
  X(XOR, xor, "Xor")                                     \
  X(WHERE, where, "Where")                               \
  X(MAX, max, "Max")                                     \
  X(MIN, min, "Min")                                     \
  X(SUM, sum, "Sum")                                     \
  X(MEAN, mean, "Mean")                                  \
  X(PRELU, prelu, "PRelu")                               \
  /* convolution & pooling (src/ops/conv.c, src/ops/pool.c) */ \
  X(CONV, conv, "Conv")                                  \
  X(CONV_TRANSPOSE, conv_transpose, "ConvTranspose")     \
  X(MAX_POOL, max_pool, "MaxPool")                       \
  X(AVERAGE_POOL, average_pool, "AveragePool")           \
  X(GLOBAL_AVERAGE_POOL, global_average_pool, "GlobalAveragePool") \
  X(GLOBAL_MAX_POOL, global_max_pool, "GlobalMaxPool")   \
  /* normalisation (src/ops/norm.c) */                   \
  X(BATCH_NORMALIZATION, batch_normalization, "BatchNormalization") \
  X(INSTANCE_NORMALIZATION, instance_normalization, "InstanceNormalization") \
  X(LRN, lrn, "LRN")                                     \
  /* linear algebra (src/ops/matmul.c) */                \
  X(GEMM, gemm, "Gemm")                                  \
  X(MATMUL, matmul, "MatMul")                            \
  /* softmax & reductions (src/ops/reduce.c) */          \
  X(SOFTMAX, softmax, "Softmax")                         \
  X(LOG_SOFTMAX, log_softmax, "LogSoftmax")              \
  X(REDUCE_MEAN, reduce_mean, "ReduceMean")              \
  X(REDUCE_SUM, reduce_sum, "ReduceSum")                 \
  X(REDUCE_MAX, reduce_max, "ReduceMax")                 \
  X(REDUCE_MIN, reduce_min, "ReduceMin")                 \
  X(REDUCE_PROD, reduce_prod, "ReduceProd")              \
  X(ARG_MAX, arg_max, "ArgMax")                          \
  X(ARG_MIN, arg_min, "ArgMin")                          \
  /* shape & data movement (src/ops/shape_ops.c, src/ops/movement.c) */ \
  X(SHAPE, shape, "Shape")                               \
  X(SIZE, size, "Size")                                  \
  X(CONSTANT, constant, "Constant")                      \
  X(CONSTANT_OF_SHAPE, constant_of_shape, "ConstantOfShape") \
  X(RESHAPE, reshape, "Reshape")                         \
  X(FLATTEN, flatten, "Flatten")                         \
  X(SQUEEZE, squeeze, "Squeeze")                         \
  X(UNSQUEEZE, unsqueeze, "Unsqueeze")                   \
  X(TRANSPOSE, transpose, "Transpose")                   \
  X(CONCAT, concat, "Concat")                            \
  X(SPLIT, split, "Split")                               \
  X(SLICE, slice, "Slice")                               \
  X(GATHER, gather, "Gather")                            \
  X(EXPAND, expand, "Expand")                            \
  X(TILE, tile, "Tile")                                  \
  X(PAD, pad, "Pad")                                     \
  X(RESIZE, resize, "Resize")                            \
  X(UPSAMPLE, upsample, "Upsample")                      \
  X(RANGE, range, "Range")                               \
  X(SCATTER_ND, scatter_nd, "ScatterND")                 \
  /* quantization (src/ops/quant.c) */                   \
  X(QUANTIZE_LINEAR, quantize_linear, "QuantizeLinear")  \
  X(DEQUANTIZE_LINEAR, dequantize_linear, "DequantizeLinear") \
  X(DYNAMIC_QUANTIZE_LINEAR, dynamic_quantize_linear, "DynamicQuantizeLinear") \
  X(QLINEAR_CONV, qlinear_conv, "QLinearConv")           \
  X(QLINEAR_MATMUL, qlinear_matmul, "QLinearMatMul")     \
  X(CONV_INTEGER, conv_integer, "ConvInteger")           \
  X(MATMUL_INTEGER, matmul_integer, "MatMulInteger")    \
  /* tensor contraction (src/ops/einsum.c) */            \
  X(EINSUM, einsum, "Einsum")
