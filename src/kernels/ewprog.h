/* A FusedElementwise program (ops/internal_ops.h: NNP_EW_* opcodes, one (opcode, operand)
 * pair and two float parameters per instruction) run over a range of elements: the
 * whole chain on one vector of 8 in registers, one load of x and one store of y, where
 * the reference kernel makes one pass over the whole tensor per instruction. SiLU
 * (Sigmoid, Mul(x)) has its own loop without the per-instruction dispatch.
 * Used for SiLU (EfficientNet, RegNetY) and the other GELU-free chains of the ops below.
 *
 * The AVX2 kernel computes exp with a polynomial (Cephes' expf, about 1 ulp), so Sigmoid
 * differs from the reference's expf in the last bits; every other opcode follows the
 * reference's formulas. Tanh is not covered (the caller keeps the reference kernel). */
#ifndef NNP_KERNELS_EWPROG_H
#define NNP_KERNELS_EWPROG_H

#include <stdbool.h>
#include <stdint.h>

enum { NNP_EWPROG_MAX_INSTR = 32 }; /* instructions in one program, at most */

typedef struct nnp_ewprog {
  int n;                 /* instructions */
  const int64_t *op;     /* op[2k]: opcode of instruction k (op[2k + 1]: its operand, unused here) */
  const float *params;   /* params[2k], params[2k + 1]: Clip's bounds */
  const float *const *b; /* instruction k's second operand (binary ops), or NULL */
  const bool *b_scalar;  /* whether b[k] is one element (broadcast) */
} nnp_ewprog;

/* Whether every opcode of the program has a vector form. */
bool nnp_ewprog_covered(const int64_t *op, int n);
/* y[i] = program(x[i], operands at i) for i in [i0, i1); y may equal x or an operand; p->n at
 * most NNP_EWPROG_MAX_INSTR. AVX2 + FMA only. */
void nnp_ewprog_run_avx2(const nnp_ewprog *p, const float *x, float *y, int64_t i0, int64_t i1);

/* GELU as exporters write it: Div(x, c) or Mul(x, c), Erf, Add(a), Mul(x), Mul(h) with c,
 * a, h one element each (torch: c = sqrt 2, a = 1, h = 0.5). Whether op (n instructions)
 * has that shape; the operands are the caller's to check (ops/fast_fused_eltwise.c). */
bool nnp_ewprog_is_gelu(const int64_t *op, int n);
/* y[i] = (erf(x[i] * s) + a) * x[i] * h for i in [i0, i1), s = 1 / c (Div) or c (Mul); y
 * may equal x. Why its own loop: the interpreted program divided twice per vector (x / c,
 * and erf's 1 / (1 + p |x|)), a convnext_tiny GELU pass took 10x its bias Add over the
 * same tensor. Here both are multiplications (a reciprocal estimate and one Newton step
 * for erf's), within 2 ulp of the divisions. AVX2 + FMA, and AVX-512F (16 lanes). */
void nnp_gelu_run_avx2(const float *x, float *y, int64_t i0, int64_t i1, float s, float a, float h);
void nnp_gelu_run_avx512(const float *x, float *y, int64_t i0, int64_t i1, float s, float a, float h);

#endif
