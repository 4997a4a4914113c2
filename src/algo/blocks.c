/* blocks.c - block layouts of a vector and operands over sets of blocks. */
#include <stdlib.h>
#include "blocks.h"

/* Allocate B's arrays for nb blocks; 0 or -1 with a sticky error. */
static int blocks_alloc(collc_prog *P, blocks *B, int nb) {
  B->nb = nb;
  B->start = calloc((size_t)nb + 1, sizeof *B->start);
  B->len = calloc((size_t)nb + 1, sizeof *B->len);
  if (B->start && B->len) return 0;
  blocks_free(B);
  prog_fail(P, COLLC_ENOMEM, "out of memory for blocks");
  return -1;
}

int blocks_split(collc_prog *P, blocks *B, int nb, int64_t count, int64_t unit_bytes) {
  if (blocks_alloc(P, B, nb)) return -1;
  int64_t min_units = unit_bytes > 0 ? (BLOCK_MIN_BYTES + unit_bytes - 1) / unit_bytes : 1;
  int64_t full = count / min_units; /* blocks that can have min_units */
  int used = full < 1 ? 1 : full < nb ? (int)full : nb;
  for (int b = 0, at = 0; b < nb; b++) {
    B->start[b] = at;
    B->len[b] = b < used ? count / used + (b < count % used) : 0;
    at += (int)B->len[b];
  }
  return 0;
}

int blocks_uniform(collc_prog *P, blocks *B, int nb, int64_t size) {
  if (blocks_alloc(P, B, nb)) return -1;
  for (int b = 0; b < nb; b++) B->start[b] = b * size, B->len[b] = size;
  return 0;
}

int blocks_of_ranks(collc_prog *P, blocks *B, const collc_spec *s, int64_t vec) {
  if (!s->counts) return blocks_uniform(P, B, s->p, vec / s->p);
  if (blocks_alloc(P, B, s->p)) return -1;
  for (int b = 0; b < s->p; b++) B->start[b] = spec_block_off(s, b), B->len[b] = s->counts[b];
  return 0;
}

void blocks_free(blocks *B) {
  free(B->start);
  free(B->len);
  B->start = B->len = NULL;
  B->nb = 0;
}

int64_t blocks_units(const blocks *B, int c, int K) {
  int64_t n = 0;
  for (int b = c; b < B->nb; b += K) n += B->len[b];
  return n;
}

collc_opnd blocks_list(collc_prog *P, const blocks *B, int buf, int64_t base, const int *list,
                       int n) {
  int64_t *off = malloc(2 * ((size_t)n + 1) * sizeof *off), *len = off ? off + n + 1 : NULL;
  if (!off) {
    prog_fail(P, COLLC_ENOMEM, "out of memory for block lists");
    return opnd(buf, 0, -1);
  }
  for (int i = 0; i < n; i++) off[i] = base + B->start[list[i]], len[i] = B->len[list[i]];
  collc_opnd o = prog_opnd_runs(P, buf, n, off, len);
  free(off);
  return o;
}

collc_opnd blocks_natural(collc_prog *P, const blocks *B, int buf, int64_t base, int c, int K) {
  int n = 0, *list = malloc(((size_t)B->nb / (size_t)K + 2) * sizeof *list);
  if (!list) {
    prog_fail(P, COLLC_ENOMEM, "out of memory for block lists");
    return opnd(buf, 0, -1);
  }
  for (int b = c; b < B->nb; b += K) list[n++] = b;
  collc_opnd o = blocks_list(P, B, buf, base, list, n);
  free(list);
  return o;
}

collc_opnd compact(collc_prog *P, int buf, int64_t off, int64_t n) {
  return opnd(buf, off, prog_shape_contig(P, n));
}
