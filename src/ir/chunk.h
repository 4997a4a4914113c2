/* chunk.h - walk the operands of a local instruction in lockstep.
 *
 * Each operand of COPY, REDUCE or COMBINE is a sequence of contiguous runs
 * (shape_run); their runs are walked together, cutting a chunk wherever any
 * of them ends, so a strided source can feed an indexed destination. The
 * scalar executor (exec/local.c) runs each chunk at once; the batch pass
 * (batch.c) records each chunk as a descriptor. Header-only so that both
 * inline the walk. Pure C. */
#ifndef COLLC_CHUNK_H
#define COLLC_CHUNK_H

#include "ir.h"

/* One chunk: n units at unit offsets s (src), s2 (src2; COMBINE only) and
 * d (dst) of their buffers. */
typedef struct {
  int64_t s, s2, d, n;
} chunk_t;

/* Cursor over the runs of one operand. */
typedef struct {
  const collc_prog *P;
  collc_opnd o;
  int64_t k, nruns, off, len, pos;
} chunk_it;

static inline void chunk_it_load(chunk_it *it) {
  if (it->k < it->nruns) shape_run(it->P, it->o.shape, it->k, &it->off, &it->len);
  it->pos = 0;
}

static inline void chunk_it_init(chunk_it *it, const collc_prog *P, collc_opnd o) {
  it->P = P, it->o = o, it->k = 0;
  it->nruns = P->shapes[o.shape].nruns;
  chunk_it_load(it);
}

static inline int64_t chunk_it_avail(const chunk_it *it) { return it->len - it->pos; }
static inline int64_t chunk_it_unit(const chunk_it *it) { return it->o.off + it->off + it->pos; }

static inline void chunk_it_advance(chunk_it *it, int64_t n) {
  it->pos += n;
  if (it->pos == it->len) it->k++, chunk_it_load(it);
}

/* Call fn(arg, chunk) for every chunk of local instruction I of P, in
 * order, until fn returns nonzero (returned) or the operands end (0). */
static inline int chunk_walk(const collc_prog *P, const collc_instr *I,
                             int (*fn)(void *arg, const chunk_t *ch), void *arg) {
  chunk_it s, s2, d;
  int three = I->op == COLLC_OP_COMBINE, rc = 0;
  chunk_it_init(&s, P, I->src);
  chunk_it_init(&d, P, I->dst);
  if (three) chunk_it_init(&s2, P, I->src2);
  while (s.k < s.nruns && d.k < d.nruns && rc == 0) {
    chunk_t ch;
    ch.n = chunk_it_avail(&s) < chunk_it_avail(&d) ? chunk_it_avail(&s) : chunk_it_avail(&d);
    if (three && chunk_it_avail(&s2) < ch.n) ch.n = chunk_it_avail(&s2);
    ch.s = chunk_it_unit(&s), ch.d = chunk_it_unit(&d), ch.s2 = three ? chunk_it_unit(&s2) : 0;
    rc = fn(arg, &ch);
    chunk_it_advance(&s, ch.n);
    chunk_it_advance(&d, ch.n);
    if (three) chunk_it_advance(&s2, ch.n);
  }
  return rc;
}

#endif
