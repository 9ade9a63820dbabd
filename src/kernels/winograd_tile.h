/* The weight transform both Winograd F(2x2, 3x3) kernels share (kernels/winograd.h on
 * the blocked layout, kernels/winograd_nchw.h on NCHW planes): U = G g G^T for one 3x3
 * kernel g, G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1], in double and rounded once,
 * so that U's error is one rounding whatever the weights. u[i * 4 + j]: row i, column j
 * of the 4x4 tile (position xi = i * 4 + j of the transformed input it multiplies). */
#ifndef NNP_KERNELS_WINOGRAD_TILE_H
#define NNP_KERNELS_WINOGRAD_TILE_H

static inline void nnp_wino_weight_tile(const float *g, float u[16]) {
  double t[4][3];
  for (int j = 0; j < 3; j++) {
    const double g0 = g[j], g1 = g[3 + j], g2 = g[6 + j];
    t[0][j] = g0;
    t[1][j] = 0.5 * (g0 + g1 + g2);
    t[2][j] = 0.5 * (g0 - g1 + g2);
    t[3][j] = g2;
  }
  for (int i = 0; i < 4; i++) {
    u[i * 4 + 0] = (float)t[i][0];
    u[i * 4 + 1] = (float)(0.5 * (t[i][0] + t[i][1] + t[i][2]));
    u[i * 4 + 2] = (float)(0.5 * (t[i][0] - t[i][1] + t[i][2]));
    u[i * 4 + 3] = (float)t[i][2];
  }
}

#endif
