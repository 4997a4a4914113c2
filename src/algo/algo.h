/* algo.h - algorithm choices and the registry.
 *
 * A choice is an algorithm (a registry row) plus its parameters, written as
 * a string `<name>[:<params>]`, e.g. "torus:4x3:linear" or "bruck:4". Rows
 * parse their parameters, resolve them against a spec (fill in defaults,
 * check that they fit) and generate one rank's program. `native` is a row
 * without a generator: the MPI library's own collective.
 */
#ifndef COLLC_ALGO_H
#define COLLC_ALGO_H

#include <stddef.h>
#include "../ir/ir.h"

#define COLLC_MAXF 64 /* factors in a choice */

/* Exchange patterns for a group all-to-all (torus rounds, direct exchange). */
enum { COMP_NATIVE = 0, COMP_LINEAR, COMP_PAIRWISE, COMP_COUNT };
const char *comp_name(int comp);
int comp_from_name(const char *s, size_t len);

typedef struct {
  int algo;              /* registry index */
  int nf;                /* factors in f */
  int f[COLLC_MAXF];     /* torus: dims (MPI Cartesian order); bruck: radix */
  int auto_d;            /* torus "d=N": N, dims filled in by resolve; else 0 */
  int ncomp;             /* torus: 0 (default), 1 (all dims) or nf */
  int comp[COLLC_MAXF];
  char step[COLLC_MAXF]; /* factor-list steps: '-' reduce-scatter, '*' allreduce,
                            '+' allgather (f[i] is the radix) */
  int flat;              /* recexch:flat - one step of radix p, filled in by resolve */
  int variant;           /* hier: its node= variant (HIER_RS, HIER_TREE, ...) */
  int group;             /* hier node=copyin: ranks per copy-in group (resolve fills it) */
  long long direct;      /* shm: messages of at least this many bytes are read in place
                            (OFFER/GET); SHM_DIRECT unless "direct=N:" */
  char net[64];          /* hier: the inter-node choice text; shm: the lowered one ("" = default) */
} collc_choice;

typedef struct {
  const char *name;
  int coll; /* enum collc_coll, or -1 for every collective */
  /* Parse the text after "name:" (NULL if none) into c; 0 or COLLC_EINVAL. */
  int (*parse)(const char *params, collc_choice *c, char *why, size_t wlen);
  /* Fill defaults and check c fits spec s; 0 or COLLC_EUNFIT with why. */
  int (*resolve)(const collc_spec *s, collc_choice *c, char *why, size_t wlen);
  /* Emit rank s->rank's program; 0 or an error (also in P->err). */
  int (*gen)(const collc_spec *s, const collc_choice *c, collc_prog *P);
  /* Canonical parameter text (after "name:"), "" if none. */
  void (*format)(const collc_choice *c, char *buf, size_t len);
  const char *syntax;
  const char *summary;
  int needs; /* ALGO_ANY, or where ranks must be: ALGO_SHARED_NODES (it uses the node
                segment: some ranks share a node), ALGO_ONE_NODE (all ranks on one) */
  int agrees; /* it needs on every rank what MPI gives only some: the root's counts
                 (gatherv, scatterv: spec.agreed), every rank's (alltoallv: spec.vall);
                 the dispatch layer's agreement round (agree.c) gives them first */
} collc_algo;

enum { ALGO_ANY = 0, ALGO_SHARED_NODES, ALGO_ONE_NODE };

/* The registry: one row per algorithm; coll -1 means every collective. */
extern const collc_algo *const algo_registry[];
extern const int algo_count;

/* Registry index of name for coll, or -1. */
int algo_find(int coll, const char *name, size_t len);
/* The `needs` of the row that choice text "name[:params]" names for coll
 * (ALGO_ANY if none does). */
int algo_text_needs(int coll, const char *text);
/* 0 if s holds what a row marked agrees needs on every rank (the root's
 * counts: spec.agreed; alltoallv, every rank's send counts: spec.vall),
 * else COLLC_EUNFIT with why (algorithm name). */
int algo_agreed(const collc_spec *s, const char *name, char *why, size_t wlen);
/* The `agrees` of the row that choice text names for coll (0 if none does). */
int algo_text_agrees(int coll, const char *text);
/* Parse "name[:params]" for coll into c; 0 or COLLC_EINVAL with why (also
 * when coll is not a collective). */
int choice_parse(int coll, const char *text, collc_choice *c, char *why, size_t wlen);
/* Resolve c for spec s (see collc_algo.resolve). */
int choice_resolve(const collc_spec *s, collc_choice *c, char *why, size_t wlen);
/* Canonical text of c, e.g. "torus:4x5:linear". */
char *choice_format(const collc_choice *c, char *buf, size_t len);
/* True if c is the native library call. */
int choice_is_native(const collc_choice *c);
/* Compile rank s->rank's program for resolved choice c; NULL on failure
 * (why says what). */
collc_prog *choice_compile(const collc_spec *s, const collc_choice *c, char *why,
                           size_t wlen);

/* Row pieces for algorithms without parameters: reject parameters, accept
 * every spec, format as "". */
int algo_parse_none(const char *params, collc_choice *c, char *why, size_t wlen);
int algo_resolve_any(const collc_spec *s, collc_choice *c, char *why, size_t wlen);
void algo_format_none(const collc_choice *c, char *buf, size_t len);

/* The torus rows' parameters (alltoall_torus.c), shared by alltoall and
 * alltoallv: "AxB.." or "d=N", then components. */
int algo_torus_parse(const char *params, collc_choice *c, char *why, size_t wlen);
int algo_torus_resolve(const collc_spec *s, collc_choice *c, char *why, size_t wlen);
void algo_torus_format(const collc_choice *c, char *buf, size_t len);

/* Parsing helpers shared by rows: a list of ints separated by sep; returns
 * the count or -1. */
int parse_int_list(const char *s, size_t len, char sep, int *out, int max);
/* A factor list "-4,-2,*2,2,4" into c->f/c->step: "-k" reduce-scatter, "*k"
 * allreduce, "k" or "+k" allgather steps, radices >= 2, kinds in that order
 * and only those in `allowed` (e.g. "-*+"). 0 or COLLC_EINVAL with why. */
int parse_steps(const char *params, collc_choice *c, const char *allowed, char *why,
                size_t wlen);
/* The factor list of c as text ("-4,-2,2,4"). */
void format_steps(const collc_choice *c, char *buf, size_t len);
/* Product of the radices of c's steps of kind k (1 if none; saturates). */
int64_t steps_product(const collc_choice *c, char kind);
/* Steps of kind k, in order, into out[]; returns how many. */
int steps_of(const collc_choice *c, char kind, int *out);

/* ---- generators' shared pieces (exchange.c) ---- */

/* All-to-all among the n members of group {n, base, gstride} that contains
 * this rank as member `me`: member j's part is the shape of src/dst at
 * offset + j*stride. comp picks the pattern (native group call, all posted
 * at once, or n-1 pairwise steps). The own part is copied locally. */
void gen_group_exchange(collc_prog *P, int comp, int n, int base, int gstride, int me,
                        collc_opnd src, collc_opnd dst, int64_t stride);

/* ---- dissemination (barrier_dissem.c), shared by the barrier rows ---- */

/* A radix list "k1,k2,..." (each >= 2) into c; 0 or COLLC_EINVAL with why. */
int dissem_parse(const char *params, collc_choice *c, char *why, size_t wlen);
/* Complete c's radix list for p ranks: {k0} if empty, the last radix
 * repeated until the product reaches p, steps after that dropped. */
void dissem_steps(int p, int k0, collc_choice *c);
/* The radix list of c as text ("2,2,2"). */
void dissem_format(const collc_choice *c, char *buf, size_t len);

/* ---- k-nomial trees (tree.c), shared by the tree rows ---- */

/* A fan-in list "k1,k2,..." (each >= 2; default 2) into c->f; 0 or COLLC_EINVAL. */
int tree_parse(const char *params, collc_choice *c, char *why, size_t wlen);
/* Repeat the last fan-in until the product reaches s->p; 0 or COLLC_EUNFIT. */
int tree_resolve(const collc_spec *s, collc_choice *c, char *why, size_t wlen);
/* The fan-in list of c as text ("2,2"). */
void tree_format(const collc_choice *c, char *buf, size_t len);

/* ---- per-algorithm rows, defined in their own files ---- */
extern const collc_algo algo_native, algo_alltoall_pairwise, algo_alltoall_linear,
    algo_alltoall_bruck, algo_alltoall_torus, algo_allreduce_recexch, algo_rsb_recexch,
    algo_allgather_recexch, algo_allreduce_cyclic, algo_rsb_cyclic, algo_allgather_cyclic,
    algo_rs_recexch, algo_rs_cyclic, algo_allgatherv_recexch, algo_allgatherv_cyclic,
    algo_allreduce_tree, algo_reduce_tree, algo_bcast_tree, algo_allreduce_hier,
    algo_rsb_hier, algo_allgather_hier, algo_reduce_hier, algo_bcast_hier, algo_alltoall_hier,
    algo_allgatherv_hier, algo_rs_hier, algo_barrier_dissem, algo_barrier_flags, algo_barrier_hier,
    algo_shm, algo_gather_linear, algo_scatter_linear, algo_gatherv_linear, algo_scatterv_linear,
    algo_gather_tree, algo_scatter_tree, algo_gatherv_tree, algo_scatterv_tree,
    algo_gather_hier, algo_scatter_hier, algo_gatherv_hier, algo_scatterv_hier, algo_alltoallv_hier,
    algo_alltoallv_pairwise,
    algo_alltoallv_linear, algo_alltoallv_torus;

#endif
