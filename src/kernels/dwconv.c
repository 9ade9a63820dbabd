#include "kernels/dwconv.h"

#define DWCONV_FN nnp_dwconv_planes_generic
#include "kernels/dwconv_impl.h"
