/* hier.h - pieces shared by the node-aware (hierarchical) generators.
 *
 * Inside a node, ranks work in the node's shared segment (BUF_SHM): every
 * local rank j owns a region of S units at SHM offset j*S (S rounded up to
 * whole cache lines), and the flag protocol is the IR's: hier_enter before
 * the first segment write of a run (every other local rank has ended its
 * previous run, so regions may be reused by any plan), SIGNAL s after
 * writing what others read at step s, AWAIT s before reading it, and
 * hier_leave (SIGNAL STEP_DONE) after the last segment access. Between
 * nodes, only point-to-point messages, emitted directly or by another
 * generator through a view. Nodes of one rank use no segment at all.
 */
#ifndef COLLC_HIER_H
#define COLLC_HIER_H

#include "algo.h"
#include "blocks.h"

/* node= variants: node=rs, node=tree, node=<factor list> (hier_steps.c),
 * node=sockets (resolved to a factor list, or to rs without sockets) for
 * allreduce; node=copyin[:g=N] (hier_copyin.c) for allreduce,
 * reduce_scatter_block and reduce */
enum { HIER_RS = 1, HIER_TREE = 2, HIER_STEPS = 3, HIER_SOCKETS = 4, HIER_COPYIN = 5 };

typedef struct {
  const collc_spec *s;
  collc_prog *P;
  const collc_layout *L;
  int node, me, k; /* my node, my local index, ranks on my node */
  int64_t S;       /* region units */
  int g;           /* copy-in groups of g ranks (hier_copyin.c); 0: plain copy-in */
  int64_t staged;  /* units hier_stage put in */
  int64_t next;    /* the first flag step after hier_stage */
  int ready;       /* hier_node_fold need not await (all awaited) */
} hx;

/* Set up H for rank s->rank with regions of (at least) units each (0: no
 * segment); declares the segment size. Copy-in groups where c says
 * node=copyin, else plain copy-in (H->g = 0). */
void hier_init(hx *H, const collc_spec *s, const collc_choice *c, collc_prog *P, int64_t units);
/* The node stage of a reduction (k > 1): my n input units into the
 * segment. Plain: copy them into my region, SIGNAL 1. Copy-in (g > 0): my
 * group's cyclic copy-in reduction. Sets H->staged and H->next. */
void hier_stage(hx *H, int64_t n);
/* dst = the node's combination of input units [off, off+n) (after
 * hier_stage), awaiting what it reads; fold order: local order (plain), or
 * group order (copy-in: commutative operations only). */
void hier_node_fold(hx *H, int64_t off, int64_t n, collc_opnd dst);
/* AWAIT, once each, what hier_node_fold of the nr ranges [off[i],
 * off[i]+n) reads (before posting messages: no AWAIT may wait with
 * requests in flight); later folds await nothing. */
void hier_node_await(hx *H, const int64_t *off, int nr, int64_t n);
/* Copy-in (hier_copyin.c): H->g = g (clamped to the node); its stage,
 * awaits and fold, which the hier_ functions above call when H->g > 0. */
void hier_copyin_init(hx *H, int g);
void hier_copyin_await(hx *H, const int64_t *off, int nr, int64_t n);
/* Resolve node=copyin[:g=N] for s (hier_resolve checked the collective):
 * commutative operations only; default g. 0 or COLLC_EUNFIT with why. */
int hier_copyin_resolve(const collc_spec *s, collc_choice *c, char *why, size_t wlen);
void hier_copyin_stage(hx *H, int64_t n);
void hier_copyin_fold(hx *H, int64_t off, int64_t n, collc_opnd dst);
/* Rank of local index j on my node. */
static inline int hier_rank(const hx *H, int j) { return layout_rank(H->L, H->node, j); }
/* Operand: n units at offset off of local j's region. */
collc_opnd hier_region(hx *H, int j, int64_t off, int64_t n);
/* AWAIT step 0 of every other local rank (before the first segment write). */
void hier_enter(hx *H);
/* AWAIT step of every other local rank. */
void hier_await_all(hx *H, int64_t step);
/* SIGNAL STEP_DONE (after the last segment access), if the node is shared. */
void hier_leave(hx *H);
/* dst = pieces[0] op ... op pieces[n-1] (n >= 1; n == 1 copies). */
void hier_fold(collc_prog *P, const collc_opnd *pieces, int n, collc_opnd dst);
/* The input operand: units at offset off of SEND (RECV in place). */
collc_opnd hier_input(hx *H, int64_t off, int64_t n);

/* Emit collective coll among one rank per node (rank[n] on node n; I am
 * rank[H->node]) with algorithm text `text`: count units, root node root,
 * in place or with its input in sbuf+soff; its RECV is rbuf+roff, its
 * scratch TMP from tmp_off on. 0, or an error (in P). */
typedef struct {
  int coll;
  int64_t count;
  int root, in_place;
  int sbuf, rbuf;
  int64_t soff, roff, tmp_off;
  const int *rank;
  const char *text;
} hier_sub;
int hier_emit_sub(hx *H, const hier_sub *x);
/* Check that `text` fits sub-collective coll among the nodes for count
 * units (why on failure): resolve-time validation of net=. */
int hier_check_sub(const collc_spec *s, int coll, const char *text, int64_t count, char *why,
                   size_t wlen);

/* Allreduce with a factor list inside the node (hier_steps.c): c's "-"
 * and "+" steps; lane(H, c, i, off, n) allreduces RECV[off, off+n) among
 * local rank i of every node. */
void hier_allreduce_steps(hx *H, const collc_choice *c,
                          void (*lane)(hx *, const collc_choice *, int, int64_t, int64_t));

/* Generators of hier_move.c (allgather, alltoall, reduce_scatter_block). */
int hier_gen_allgather(const collc_spec *s, const collc_choice *c, collc_prog *P);
int hier_gen_alltoall(const collc_spec *s, const collc_choice *c, collc_prog *P);
int hier_gen_rsb(const collc_spec *s, const collc_choice *c, collc_prog *P);
/* Generators of hier_root.c (gather, scatter and their counted forms). */
int hier_gen_gather(const collc_spec *s, const collc_choice *c, collc_prog *P);
int hier_gen_scatter(const collc_spec *s, const collc_choice *c, collc_prog *P);
/* Alltoallv (hier_a2av.c): needs spec.vall. */
int hier_gen_alltoallv(const collc_spec *s, const collc_choice *c, collc_prog *P);
/* The barrier (barrier_hier.c). */
int hier_gen_barrier(const collc_spec *s, const collc_choice *c, collc_prog *P);

#endif
