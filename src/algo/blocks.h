/* blocks.h - how a vector is cut into blocks, and operands over block sets.
 *
 * Reduction algorithms (recursive exchange, cyclic shift) cut the vector of
 * `count` units into nb blocks; block b is units [start[b], start[b]+len[b]).
 * Ranks own classes of blocks {b : b = c (mod K)}, which are the operands of
 * their messages and reductions, at the blocks' own positions ("natural") or
 * packed one after another ("compact").
 */
#ifndef COLLC_BLOCKS_H
#define COLLC_BLOCKS_H

#include <stdint.h>
#include "../ir/ir.h"

#define BLOCK_MIN_BYTES 64 /* no block of a split vector is smaller (a cache line) */

typedef struct {
  int nb;
  int64_t *start, *len;
} blocks;

/* Cut count units of unit_bytes each into nb blocks, as evenly as possible
 * but none nonempty smaller than BLOCK_MIN_BYTES (the first blocks get the
 * data, the rest are empty); counts not divisible by nb are split exactly.
 * Returns 0, or -1 (sticky error in P) when out of memory. */
int blocks_split(collc_prog *P, blocks *B, int nb, int64_t count, int64_t unit_bytes);
/* The blocks of a p-block collective of spec s (allgather, reduce_scatter
 * and their counted forms): block r is rank r's, s->counts[r] units for a
 * counted collective (coll_desc.counted), else vec / p each; back to back,
 * or (allgatherv) at s->displs. */
int blocks_of_ranks(collc_prog *P, blocks *B, const collc_spec *s, int64_t vec);
/* nb blocks of `size` units each, back to back. */
int blocks_uniform(collc_prog *P, blocks *B, int nb, int64_t size);
void blocks_free(blocks *B);
/* Units in the blocks b = c (mod K), b < nb. */
int64_t blocks_units(const blocks *B, int c, int K);
/* Operand over the blocks b = c (mod K) of buf, at natural positions
 * (base + start[b]), in increasing b. */
collc_opnd blocks_natural(collc_prog *P, const blocks *B, int buf, int64_t base, int c, int K);
/* Operand over blocks[i] for i in list[0..n), natural positions, in list order. */
collc_opnd blocks_list(collc_prog *P, const blocks *B, int buf, int64_t base, const int *list,
                       int n);
/* Operand of n contiguous units at buf + off. */
collc_opnd compact(collc_prog *P, int buf, int64_t off, int64_t n);

#endif
