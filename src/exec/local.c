/* local.c - COPY, REDUCE and COMBINE over shaped operands.
 *
 * The operands' runs are walked in lockstep (ir/chunk.h) and each chunk is
 * copied or reduced at once. No allocation. */
#include <string.h>
#include "local.h"
#include "../ir/chunk.h"

typedef struct {
  const collc_instr *I;
  char *const *base;
  const local_ctx *x;
} local_arg;

/* One chunk of a->I (chunk_walk's callback): an MPI code. */
static int chunk(void *arg, const chunk_t *ch) {
  const local_arg *a = arg;
  const collc_instr *I = a->I;
  const local_ctx *x = a->x;
  char *s = a->base[I->src.buf] + ch->s * x->ext[I->src.buf];
  char *d = a->base[I->dst.buf] + ch->d * x->ext[I->dst.buf];
  size_t elems = (size_t)ch->n * (size_t)x->c;
  switch (I->op) {
  case COLLC_OP_COPY: copy_bytes(d, s, (size_t)(ch->n * x->ext[I->dst.buf])); return MPI_SUCCESS;
  case COLLC_OP_REDUCE: return kernel_apply2(x->k, s, d, elems, x->t, x->op);
  case COLLC_OP_COMBINE: {
    char *s2 = a->base[I->src2.buf] + ch->s2 * x->ext[I->src2.buf];
    if (x->k) return kernel_apply3(x->k, s, s2, d, elems, x->t, x->op);
    copy_bytes(d, s2, (size_t)(ch->n * x->ext[I->dst.buf])); /* dense types only reach here */
    return kernel_apply2(NULL, s, d, elems, x->t, x->op);
  }
  default: return MPI_ERR_INTERN;
  }
}

int local_run(const collc_prog *P, const collc_instr *I, char *const base[], const local_ctx *x) {
  local_arg a = {I, base, x};
  return chunk_walk(P, I, chunk, &a);
}
