/* ir.h - the schedule IR: one rank's compiled program of a collective.
 *
 * A program is a flat array of fixed-size instructions (ops.h) whose buffer
 * operands are symbolic: (buffer, offset, shape) in units. A unit is the
 * buffer's element of the collective (all-to-all: one block of `count`
 * elements). Shapes live in a per-program table so that instructions stay
 * fixed-size; a shape is either nested strided (a contiguous run repeated
 * over levels of (count, stride), innermost level first) or an indexed list
 * of (offset, length) runs. Programs hold no pointers into user memory, so
 * one program serves every call, the verifier and the explain printer.
 *
 * Everything here is pure C: no MPI.
 */
#ifndef COLLC_IR_H
#define COLLC_IR_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include "ops.h"
#include "layout.h"

/* Collectives, defined once: X(enum suffix). What each one means is its
 * row, coll_<SUFFIX> in coll.c (coll_desc below); a collective without a
 * row does not compile. */
#define COLLC_COLLS(X)    \
  X(ALLTOALL)             \
  X(ALLGATHER)            \
  X(ALLREDUCE)            \
  X(REDUCE_SCATTER_BLOCK) \
  X(REDUCE)               \
  X(BCAST)                \
  X(BARRIER)              \
  X(ALLGATHERV)           \
  X(REDUCE_SCATTER)       \
  X(GATHER)               \
  X(SCATTER)              \
  X(GATHERV)              \
  X(SCATTERV)             \
  X(ALLTOALLV)

enum collc_coll {
#define COLLC_COLL_ENUM(e) COLLC_COLL_##e,
  COLLC_COLLS(COLLC_COLL_ENUM)
#undef COLLC_COLL_ENUM
  COLLC_COLL_COUNT
};

/* Collective name ("alltoall") or NULL; name -> enum, -1 if unknown;
 * whether it combines data with an operation (0 if unknown). Thin
 * accessors of the rows (coll_desc_of). */
const char *coll_name(int coll);
int coll_from_name(const char *name);
int coll_reduces(int coll);
/* The collective whose generators serve coll (coll_desc.family; coll if unknown). */
int coll_family(int coll);

/* Internal status codes (public entry points map them to MPI error classes). */
enum { COLLC_OK = 0, COLLC_ENOMEM, COLLC_EINVAL, COLLC_EUNFIT, COLLC_EINTERNAL };

/* Buffers an operand can name. SHM is the node's shared segment: offsets
 * are node-wide (every rank of a node sees the same units there), in units
 * of the receive buffer. */
enum { BUF_NONE = 0, BUF_SEND, BUF_RECV, BUF_TMP, BUF_SHM, BUF_COUNT };
const char *buf_name(int buf);

#define COLLC_MAXLEV 64 /* levels of a strided shape */

/* What is being compiled: identical on every rank but `rank`.
 * count: all-to-all, allgather, gather, scatter: elements per block (units
 * are blocks);
 * allreduce, reduce, bcast: elements; reduce_scatter_block: elements each
 * rank receives (recvcount); allgatherv, reduce_scatter, gatherv, scatterv
 * (coll_desc.counted): the sum of counts[] (gatherv, scatterv off the root:
 * its own count, coll_desc.root_counts, unless spec.agreed).
 * counts: the counted collectives' elements of each rank's block (p of
 * them; NULL otherwise), packed one after another in rank order (the
 * program's unit space) unless displs says where they lie.
 * displs: allgatherv, gatherv (RECV at the root), scatterv (SEND at the
 * root; in place its RECV) only, may be NULL (packed): units before rank
 * q's block, >= 0, in any order. They are this rank's buffer layout (MPI
 * lets them differ between ranks), so they key the binding, not the
 * decision; every rank's program sends and receives the same blocks in the
 * same order whatever its displs.
 * alltoallv (coll_desc.counts_local): each rank passes only its own
 * vectors, 2p of each: counts[0..p) the units it sends rank q (SEND units),
 * counts[p..2p) those it receives from q (RECV units), displs the same
 * sides' offsets (NULL: packed in rank order); vall says whether they hold
 * every rank's (rank q's at q * 2p: the verifier's, the tools') or only
 * s->rank's (MPI, a program's copy). count: 0 (the decision knows no counts).
 * Both borrowed from whoever made the spec; a program keeps its own copy. */
typedef struct {
  int coll;           /* enum collc_coll */
  int p;              /* communicator size */
  int rank;           /* this program's rank */
  int64_t count;
  int64_t unit_bytes; /* bytes of one unit, for cost estimates and splitting */
  int in_place;       /* input is in RECV (MPI_IN_PLACE; always for bcast) */
  int root;           /* rooted collectives (coll_desc.rooted) */
  int commutative;    /* reductions: the operation commutes */
  const collc_layout *layout; /* which ranks share a node; NULL: none do */
  const int64_t *counts;      /* counted collectives: p block sizes, else NULL */
  const int64_t *displs;      /* allgatherv, gatherv, scatterv: p block offsets; NULL: packed */
  int vall;                   /* alltoallv: counts, displs hold every rank's vectors */
  int agreed;                 /* gatherv, scatterv: counts hold the root's on every rank
                                 (the dispatch layer's agreement round, or a tool's spec) */
} collc_spec;

/* Counted collectives: offset of rank r's block (displs, else packed), and its units. */
int64_t spec_block_off(const collc_spec *s, int r);
int64_t spec_block_len(const collc_spec *s, int r);
/* A hash of s->counts (0 without them), for decision and cache keys; of
 * s->displs (0 without them), for binding keys. */
uint64_t spec_counts_hash(const collc_spec *s);
uint64_t spec_displs_hash(const collc_spec *s);
/* s->rank's own vector in v, s->counts or s->displs (v itself unless s->vall). */
const int64_t *spec_own_vec(const collc_spec *s, const int64_t *v);
/* Alltoallv with every rank's vectors (s->vall): a hash of every rank's
 * send side alone (what the agreement round gives every rank alike), else 0. */
uint64_t spec_sends_hash(const collc_spec *s);
/* Values in one rank's counts (and displs): p, or 2p for alltoallv. */
int spec_vec_len(const collc_spec *s);
/* Alltoallv, rank r's side (r must be s->rank unless s->vall): units r
 * sends to (A2AV_SEND) or receives from (A2AV_RECV) rank q, and their
 * offset in SEND (RECV). In place, the send side is the receive side. */
enum { A2AV_SEND = 0, A2AV_RECV = 1 };
int64_t a2av_count(const collc_spec *s, int r, int side, int q);
int64_t a2av_displ(const collc_spec *s, int r, int side, int q);

enum { SHAPE_STRIDED = 0, SHAPE_INDEXED = 1 };

typedef struct {
  int32_t kind;   /* SHAPE_STRIDED or SHAPE_INDEXED */
  int32_t nlev;   /* strided: levels; indexed: runs */
  int64_t run;    /* strided: innermost contiguous run, in units */
  int64_t data;   /* index into the program's pool: strided (count, stride)
                     pairs inner to outer; indexed (offset, length) pairs */
  int64_t nunits; /* units addressed */
  int64_t lo, hi; /* smallest and one past the largest unit touched (relative) */
  int64_t nruns;  /* contiguous runs */
} collc_shape;

typedef struct {
  int32_t buf;   /* BUF_* */
  int32_t shape; /* index into the shape table */
  int64_t off;   /* units */
} collc_opnd;

typedef struct {
  uint8_t op;     /* enum collc_opcode */
  int32_t peer;   /* OPF_PEER: rank; OPF_GROUP: group index */
  int32_t slot;   /* OPF_POSTS: request slot; OPF_WAITS: first slot */
  int64_t n;      /* OPF_WAITS: slot count; OPF_GROUP: member stride in units */
  collc_opnd src, src2, dst;
} collc_instr;

/* A group: members j = 0..n-1 are ranks base + j*stride. */
typedef struct {
  int n, base, stride;
} collc_group;

typedef struct collc_prog {
  collc_spec spec;
  char algo[96];              /* resolved algorithm, e.g. "torus:4x5:linear" */
  collc_instr *ins;
  int nins;
  collc_shape *shapes;
  int nshapes;
  int64_t *pool;
  int64_t npool;
  collc_group *groups;
  int ngroups;
  int64_t cap_ins, cap_shapes, cap_pool, cap_groups; /* allocated elements */
  int nslots;                 /* request slots needed */
  int open_lo, open_hi;       /* builder: outstanding slots */
  int64_t tmp_units;          /* scratch units needed */
  int64_t shm_units;          /* node segment units this program uses (0: none) */
  struct prog_view *view;     /* builder: the sub-collective being emitted */
  int err;                    /* sticky: first failure */
  char errmsg[160];
  int64_t *own_counts;        /* the copies spec.counts and spec.displs point to: */
  int64_t *own_displs;        /*   counted collectives */
} collc_prog;

/* The spec of rank r, after its collective's in-place rules: reduce is in
 * place only at its root (elsewhere MPI_IN_PLACE is not allowed and
 * sendbuf is the input), bcast always (its input is the root's RECV). */
collc_spec spec_rank(const collc_spec *s, int r);
/* Whether s holds every rank's counts, so that decisions and whole-
 * communicator models (shm, the simulator) may use them: not for gatherv
 * and scatterv (coll_desc.root_counts) unless their agreement round gave
 * every rank the root's (s->agreed), nor alltoallv (counts_local) unless
 * a tool made s with every rank's vectors (s->vall). */
int coll_counts_shared(const collc_spec *s);

/* ---- what each collective means (coll.c) ----
 * One row per collective holds everything the pure layers need to know
 * about it; nothing else asks which collective a spec is. Units: of the
 * buffers (prog_buf_units): blocks (one block = the elements one rank
 * sends another) where per_block, else elements. Functions take the
 * collective's spec s; where they take a rank r, s->rank is ignored. */

/* Where a rank's input lies: units [off, off+units) of buffer buf. */
typedef struct {
  int buf; /* BUF_SEND, or BUF_RECV in place */
  int64_t off, units;
} coll_region;

/* What one unit of a rank's result must hold (the verifier's oracle). */
enum { COLL_NOT_RESULT = 0, COLL_LEAF, COLL_FOLD };
typedef struct {
  int kind;     /* COLL_NOT_RESULT: not part of the result (no check);
                   COLL_LEAF: unit `unit` of rank `rank`'s input;
                   COLL_FOLD: input unit `unit` of every rank, combined in rank order */
  int rank;
  int64_t unit;
} coll_want;

typedef struct {
  const char *name;     /* "alltoall": COLLC_<NAME> variables, tools, wisdom files */
  int reduces;          /* combines data with an operation (op, commutativity) */
  int rooted;           /* has a root (spec.root) */
  int per_block;        /* units are blocks of count elements, else elements (bytes
                           per unit = elements per block x element size) */
  int in_place_at_root; /* in place only at the root (reduce) */
  int always_in_place;  /* the input is in RECV on every rank (bcast) */
  int elem_may_differ;  /* ranks may type the same bytes with elements of different
                           sizes (bcast: only the bytes must agree) */
  int synchronizes;     /* no rank may leave before every rank has entered (barrier:
                           the verifier's oracle; no buffers, yet it is never "empty") */
  int counted;          /* blocks differ per rank: spec.counts (allgatherv, reduce_scatter) */
  int root_counts;      /* counted, but MPI gives the counts to the root only (gatherv,
                           scatterv): elsewhere spec.counts holds the rank's own count and
                           zeros, so no decision may depend on them and a generator's
                           program for rank r != root may read only counts[r] (unless
                           spec.agreed: its algorithm's agreement round gave them all) */
  int counts_local;     /* each rank passes only its own counts (alltoallv): they bind
                           and never decide (spec.vall) */
  int family;           /* the collective whose generators serve this one (itself, or
                           allgather for allgatherv: the same code with unequal blocks) */
  /* Units of the input (SEND, or RECV in place), of RECV (in place: large
   * enough for the input too), and of the whole vector the collective
   * works on (what one rank holds at its widest: the in-place RECV). */
  int64_t (*input_units)(const collc_spec *s);
  int64_t (*output_units)(const collc_spec *s);
  int64_t (*vector_units)(const collc_spec *s);
  /* Where rank r's input lies. */
  coll_region (*input)(const collc_spec *s, int r);
  /* What unit u of rank r's RECV must hold after the call. */
  coll_want (*expect)(const collc_spec *s, int r, int64_t u);
  const char *shm_inner; /* shm's default message-passing algorithm */
  const char *hier_net;  /* hier's default algorithm between nodes; NULL: hier has no
                            inter-node sub-collective (takes no net=) */
  /* The MPI library's own algorithm for s as one of ours (the simulator's
   * native model, simulate.h: sim_native_model); a constant or buf. */
  const char *(*native_model)(const collc_spec *s, char *buf, size_t len);
  /* Algorithms the simulator's default rule compares, NULL-terminated, in
   * order of preference on equal prediction. */
  const char *const *sim_candidates;
} coll_desc;

/* The row of collective coll, or NULL if coll is not one. */
const coll_desc *coll_desc_of(int coll);

/* ---- builder (program.c) ---- */

/* New empty program for spec, or NULL when out of memory. */
collc_prog *prog_new(const collc_spec *spec);
void prog_free(collc_prog *P);
/* Record the first failure; later failures and appends are ignored. */
void prog_fail(collc_prog *P, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Make room for `need` elements of size elem in *arr (capacity *cap),
 * doubling; 0, or -1 with a sticky out-of-memory error naming what. */
int prog_reserve(collc_prog *P, void **arr, int64_t *cap, int64_t need, size_t elem,
                 const char *what);
/* Units in buffer buf for this program (SEND/RECV from the collective). */
int64_t prog_buf_units(const collc_prog *P, int buf);

/* Shapes (shape.c). Return the interned shape id, or -1 (sticky error). */
int prog_shape_contig(collc_prog *P, int64_t n);
int prog_shape_strided(collc_prog *P, int64_t run, int nlev,
                       const int64_t count[], const int64_t stride[]);
/* Operand over explicit runs (off[i], len[i]) of buf, in message order;
 * normalised: adjacent runs merged, one run becomes a contiguous shape,
 * equal runs at a constant positive stride a strided shape. */
collc_opnd prog_opnd_runs(collc_prog *P, int buf, int nruns,
                          const int64_t off[], const int64_t len[]);
static inline collc_opnd opnd(int buf, int64_t off, int shape) {
  collc_opnd o = {buf, shape, off};
  return o;
}
/* k-th contiguous run of shape id: *off relative to the operand, *len > 0. */
void shape_run(const collc_prog *P, int id, int64_t k, int64_t *off, int64_t *len);
/* Units of operand o (0 for BUF_NONE). */
int64_t opnd_units(const collc_prog *P, collc_opnd o);

/* Instructions. Slots are assigned by the builder; prog_wait completes all
 * outstanding ones. */
void prog_send(collc_prog *P, int peer, collc_opnd src);
void prog_recv(collc_prog *P, int peer, collc_opnd dst);
void prog_wait(collc_prog *P);
void prog_copy(collc_prog *P, collc_opnd src, collc_opnd dst);
/* dst = src op dst, src holding the lower ranks' contributions. */
void prog_reduce(collc_prog *P, collc_opnd src, collc_opnd dst);
/* dst = src op src2 (src lower ranks); dst may not overlap either source. */
void prog_combine(collc_prog *P, collc_opnd src, collc_opnd src2, collc_opnd dst);
/* Group all-to-all: member j's part is shape at off + j*stride of src/dst. */
void prog_alltoall(collc_prog *P, int group, collc_opnd src, collc_opnd dst,
                   int64_t stride);
/* Intern group {n, base, stride}; returns its index or -1. */
int prog_group(collc_prog *P, int n, int base, int stride);
/* Ask for at least `units` scratch units. */
void prog_need_tmp(collc_prog *P, int64_t units);
/* Ask for at least `units` units of the node segment. */
void prog_need_shm(collc_prog *P, int64_t units);
/* Shared-memory flags (ops.h): publish step n (1..STEP_DONE); wait until
 * rank peer (same node) has published step n (0: ended its previous run). */
void prog_signal(collc_prog *P, int64_t n);
void prog_await(collc_prog *P, int peer, int64_t n);
/* Single copy (ops.h): offer src to the node (slot: its copy in SHM when
 * it cannot be read in place); get peer's offered src (an operand of the
 * peer's buffers) into dst, from slot when not in place. */
void prog_offer(collc_prog *P, collc_opnd src, collc_opnd slot);
void prog_get(collc_prog *P, int peer, collc_opnd src, collc_opnd slot, collc_opnd dst);

/* Views: emit a sub-collective (another generator's program for spec sub,
 * e.g. an allreduce among one rank per node) into P. While a view is
 * pushed, P->spec is sub; peers are sub-ranks, mapped through rank[]
 * (rank[sub-rank] = rank of P); buffer b of the sub-collective is buffer
 * map[b] at offset off[b] (TMP requests add off[BUF_TMP]). Group
 * instructions are not allowed inside a view. Views do not nest. */
typedef struct prog_view {
  collc_spec outer;
  const int *rank;
  int map[BUF_COUNT];
  int64_t off[BUF_COUNT];
} prog_view;
void prog_view_push(collc_prog *P, prog_view *v, const collc_spec *sub);
void prog_view_pop(collc_prog *P);
/* Check the finished program (slots all waited, operands in bounds, unit
 * counts agree). Returns P->err. */
int prog_finalize(collc_prog *P);

/* ---- explain (explain.c) ---- */
enum { EXPLAIN_EXPAND = 1 };
/* Print program P like SQLite's EXPLAIN; EXPLAIN_EXPAND lists unit indices. */
void explain_print(const collc_prog *P, int flags, FILE *out);
/* The same with a first column: t[a] (seconds, printed in us) for each
 * instruction a, e.g. when the simulator predicts it completes. */
void explain_print_times(const collc_prog *P, int flags, const double *t, FILE *out);
/* Format operand o into buf ("TMP+3 [1 | 4*5]"); returns buf. */
char *explain_opnd(const collc_prog *P, collc_opnd o, char *buf, size_t len);

#endif
