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

#endif
