/* layout.h - which ranks share a node (and so a shared-memory segment).
 *
 * A layout is immutable once made. Nodes are numbered in the order of their
 * lowest rank, and each node's ranks are listed ascending, so local index 0
 * is a node's lowest rank. Placements need not be regular: a node's ranks
 * need not be consecutive and nodes may differ in size. Pure C, no MPI.
 */
#ifndef COLLC_LAYOUT_H
#define COLLC_LAYOUT_H

#include <stdint.h>

typedef struct collc_layout {
  int p, nnodes;
  int *node_of;  /* rank -> node */
  int *local_of; /* rank -> index within its node */
  int *size;     /* node -> ranks */
  int *first;    /* node -> index of its first rank in members */
  int *members;  /* node n's ranks: members[first[n] .. first[n] + size[n]) */
  int min_size, max_size;
  int consecutive; /* every node is a run of consecutive ranks */
  int socket;      /* ranks per socket: every node's local ranks in runs of this many
                      share one (layout_set_sockets); 0: unknown, or one socket */
  uint64_t hash;   /* of node_of (renumbered) */
  char desc[48];   /* "4x2" (nodes x ranks), "2+3" (runs) or "irregular-<hash>", then
                      "/s<socket>" when known */
} collc_layout;

/* Layout of p ranks where rank r is on node id[r] (any ints; equal ids =
 * same node). NULL when out of memory or p < 1. */
collc_layout *layout_new(int p, const int *id);
/* Consecutive nodes of k ranks (the last one smaller if k does not divide p). */
collc_layout *layout_regular(int p, int k);
/* From text: "k" (layout_regular), or a comma list of p node ids
 * ("0,1,0,1"), optionally followed by "/s<m>" (layout_set_sockets). NULL
 * if the text is bad, does not have p entries, or the sockets do not fit. */
collc_layout *layout_parse(int p, const char *text);
/* Record that local ranks come in runs of m per socket on every node: 0, or
 * -1 (unchanged) unless every node has the same size, a multiple of m, and
 * more than one socket. */
int layout_set_sockets(collc_layout *L, int m);
void layout_free(collc_layout *L);
/* Rank of local index i on node n. */
static inline int layout_rank(const collc_layout *L, int n, int i) {
  return L->members[L->first[n] + i];
}
/* True if some node has more than one rank (shared memory is of use). */
int layout_shares(const collc_layout *L);

#endif
