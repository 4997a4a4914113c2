/* local.c - COPY, REDUCE and COMBINE over shaped operands.
 *
 * Each operand is a sequence of contiguous runs (shape_run); the runs of
 * two or three operands are walked in lockstep, cutting chunks where any of
 * them ends, so a strided source can feed an indexed destination. No
 * allocation. */
#include <string.h>
#include "local.h"

/* Cursor over the runs of one operand. */
typedef struct {
  const collc_prog *P;
  collc_opnd o;
  int64_t k, nruns, off, len, pos;
} run_it;

static void it_load(run_it *it) {
  if (it->k < it->nruns) shape_run(it->P, it->o.shape, it->k, &it->off, &it->len);
  it->pos = 0;
}

static void it_init(run_it *it, const collc_prog *P, collc_opnd o) {
  it->P = P, it->o = o, it->k = 0;
  it->nruns = P->shapes[o.shape].nruns;
  it_load(it);
}

/* Units left in the current run. */
static int64_t it_avail(const run_it *it) { return it->len - it->pos; }

/* Unit index (in the buffer) of the cursor. */
static int64_t it_unit(const run_it *it) { return it->o.off + it->off + it->pos; }

static void it_advance(run_it *it, int64_t n) {
  it->pos += n;
  if (it->pos == it->len) it->k++, it_load(it);
}

/* One chunk: n units at src, src2 (COMBINE only) and dst. */
static int chunk(const collc_instr *I, const local_ctx *x, char *s, char *s2, char *d, int64_t n) {
  size_t elems = (size_t)n * (size_t)x->c;
  switch (I->op) {
  case COLLC_OP_COPY: memcpy(d, s, (size_t)(n * x->ext[I->dst.buf])); return MPI_SUCCESS;
  case COLLC_OP_REDUCE: return kernel_apply2(x->k, s, d, elems, x->t, x->op);
  case COLLC_OP_COMBINE:
    if (x->k) return kernel_apply3(x->k, s, s2, d, elems, x->t, x->op);
    memcpy(d, s2, (size_t)(n * x->ext[I->dst.buf])); /* dense types only reach here */
    return kernel_apply2(NULL, s, d, elems, x->t, x->op);
  default: return MPI_ERR_INTERN;
  }
}

int local_run(const collc_prog *P, const collc_instr *I, char *const base[], const local_ctx *x) {
  run_it s, s2, d;
  int three = I->op == COLLC_OP_COMBINE, rc = MPI_SUCCESS;
  it_init(&s, P, I->src);
  it_init(&d, P, I->dst);
  if (three) it_init(&s2, P, I->src2);
  while (s.k < s.nruns && d.k < d.nruns && rc == MPI_SUCCESS) {
    int64_t n = it_avail(&s) < it_avail(&d) ? it_avail(&s) : it_avail(&d);
    if (three && it_avail(&s2) < n) n = it_avail(&s2);
    rc = chunk(I, x, base[I->src.buf] + it_unit(&s) * x->ext[I->src.buf],
               three ? base[I->src2.buf] + it_unit(&s2) * x->ext[I->src2.buf] : NULL,
               base[I->dst.buf] + it_unit(&d) * x->ext[I->dst.buf], n);
    it_advance(&s, n);
    it_advance(&d, n);
    if (three) it_advance(&s2, n);
  }
  return rc;
}
