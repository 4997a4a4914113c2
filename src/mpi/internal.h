/* internal.h - the MPI layer: per-communicator state, plan cache, stats. */
#ifndef COLLC_MPI_INTERNAL_H
#define COLLC_MPI_INTERNAL_H

#include <mpi.h>
#include "../algo/algo.h"
#include "../exec/exec.h"
#include "../plan/config.h"
#include "../hot.h"

#define STATE_MAX_FAMILIES 64
#define STATE_MAX_DECISIONS 16 /* cached decisions per communicator (oldest evicted) */
#define STATE_MAX_BINDINGS 4   /* cached plans per decision (LRU) */

/* What a decision depends on: only values identical on every rank of a
 * correct MPI program, so every rank hits or misses the decision cache
 * together and the collective work of a miss (agreement, communicators)
 * never splits the ranks. (Datatypes and counts may differ between ranks
 * when the type signatures match, and reduce is in place at its root only:
 * those belong to the binding.) */
typedef struct {
  int coll, in_place, root, commutative;
  long long bytes; /* all-to-all, allgather: bytes per block; others: per vector */
  long long ext, text; /* reductions: extent and true extent of the type; others 0 */
  char algo[256];  /* the selection text (unresolved, e.g. "torus:d=2") */
  uint64_t chash;  /* counted collectives: spec_counts_hash (counts known to all ranks) */
  int agreed;      /* gatherv, scatterv: spec.agreed (the agreement round's outcome, the
                      same on every rank: an algorithm decided with it needs it) */
} decision_key;

/* What a plan depends on beyond its decision: this rank's typing of the
 * buffers. Misses are local: compile and bind, no communication. */
typedef struct {
  int in_place; /* (differs between ranks for reduce: only the root may) */
  int scount, rcount;
  long long count; /* spec.count */
  MPI_Datatype stype, rtype;
  long sserial, rserial; /* datatype identities (0 for predefined types) */
  MPI_Op op;
  uint64_t chash; /* counted collectives: spec_counts_hash mixed with spec_displs_hash
                     (a hit compares both in full) */
} binding_key;

/* A plan bound for this rank, with the communicators of its groups
 * (gcomm[g]: the state's family communicators; NULL without groups). */
typedef struct {
  binding_key key;
  collc_plan *plan;
  MPI_Comm *gcomm;
} binding;

typedef struct {
  decision_key key;
  int algo;            /* registry index served; 0 = native */
  collc_choice choice; /* resolved */
  int fell_back;       /* the text did not fit: choice is the default rule's (a call
                          forcing that text is refused, dispatch.c), from src (SRC_*) */
  int src;
  binding bound[STATE_MAX_BINDINGS];
  int nbound; /* most recently used first */
} decision;

/* The call cache (calls.c), the first level a call meets: the arguments of
 * a call that select what serves it on this rank (buffers aside), hashed
 * to what served it last time. Holds no references: flushed whenever a
 * plan it may point to is freed. */
typedef struct {
  int coll, in_place, root, scount, rcount;
  MPI_Datatype stype, rtype; /* stype MPI_DATATYPE_NULL when unused */
  MPI_Op op;                 /* MPI_OP_NULL for non-reductions */
  uint64_t chash;            /* counted collectives: as binding_key.chash, else 0 */
  const int64_t *counts, *displs; /* the caller's (not stored: a hit of a plan compares
                                them with the plan's; a native one is right anyway) */
} call_key;

enum { CALL_NATIVE = 1, CALL_PLAN, CALL_EMPTY }; /* what serves a cached call */

typedef struct {
  call_key key;
  int kind;     /* CALL_*; 0: an empty slot */
  int algo;     /* counted under this registry index */
  int need_recv; /* the receive buffer is significant on this rank (not a reduce's leaf) */
  int need_send; /* the send buffer is (not in place, not bcast's, not scatter's leaf) */
  int user_op;  /* a user-defined operation: its commutativity is checked at each hit */
  int commute;
  long sserial, rserial; /* type identities of stype, rtype (0: predefined) */
  unsigned version;      /* nonblocking: the state's version it was decided under */
  int excl;              /* nonblocking: runs on the segment or group communicators */
  int src;               /* where its decision came from (SRC_*), for the stats */
  collc_plan *plan;      /* CALL_PLAN */
  const MPI_Comm *gcomm; /* its group communicators */
  long long bytes;       /* counted per call */
} call_entry;

/* An entry of the forced-call cache (calls.c): the entry, and the text it
 * was made for. */
#define FORCED_TEXT 64
typedef struct {
  call_entry e;
  char text[FORCED_TEXT];
} forced_entry;

#define CALL_SLOTS 64 /* call cache slots per communicator (direct mapped) */
/* Message tags: persistent requests [0, TAG_PERSIST), nonblocking
 * executions [NB_TAG_BASE, NB_TAG_BASE + NB_TAGS), blocking calls one tag
 * (MPI guarantees tags up to 32767). */
#define TAG_PERSIST 16384
#define NB_TAG_BASE 16384
#define NB_TAGS 1024
#define TAG_BLOCKING 0x7c11

/* Group communicators of one family: the p/n groups {base + j*stride}. */
typedef struct {
  int n, stride;
  MPI_Comm comm; /* this rank's group */
} family;

#define SIM_BUCKETS 26 /* half decades of bytes: 1 B .. 10^13 B */

typedef struct {
  int p;         /* the communicator's size (its local group's) */
  int rank;      /* this process's rank in it */
  MPI_Comm priv; /* private duplicate for our messages; MPI_COMM_NULL until used */
  family fam[STATE_MAX_FAMILIES];
  int nfam;
  int torus_d; /* > 0 if made by collc_comm_factorize */
  int torus_dims[COLLC_MAXF];
  decision *dec[STATE_MAX_DECISIONS];
  int ndec;     /* most recently used first */
  int next_tag; /* of the next persistent plan */
  int layout_done;        /* node discovery ran (collective, once) */
  collc_layout *layout;   /* which ranks share a node; NULL: none or disabled */
  MPI_Comm node;          /* my node's communicator (MPI_COMM_NULL if alone or none) */
  int yield;              /* my node has more ranks than cores */
  int cma, cma_done;      /* my node's ranks may read each other's memory (state_cma) */
  shm_seg *seg;           /* node segment of the blocking plans (grown on demand) */
  call_entry *calls;      /* the call cache: CALL_SLOTS entries, NULL until used */
  forced_entry *fcalls;   /* the forced-call cache (calls.c): CALL_SLOTS, NULL until used */
  exec_ctx *bctx;         /* the blocking calls' execution context, NULL until used */
  exec_ctx *dctx;         /* that of blocking calls run with the CUDA backend (its TMP
                             buffer is device memory), NULL until used */
  void *stage;            /* pinned host mirror of device buffers (backend_cuda.h: MPI
                             libraries that are not CUDA-aware), NULL until used */
  size_t stage_bytes;
  /* Nonblocking calls (nonblocking.c): decided locally, from what the
   * blocking calls (collectively, at the same points on every rank) set up. */
  unsigned version;       /* bumped whenever that changes: layout, segment, group
                             communicators, private communicator, simulated picks */
  call_entry *nbcalls;    /* their call cache (entries own a plan reference) */
  MPI_Request priv_req;   /* PMPI_Comm_idup making the private communicator (a
                             nonblocking call came first), else MPI_REQUEST_NULL */
  MPI_Comm priv_new;      /* its output, priv once complete */
  unsigned nb_seq;        /* nonblocking executions begun: their tags */
  int nb_lent;            /* running ones that borrow a plan of nbcalls (request lock) */
  unsigned char *nb_busy; /* per tag: [t] executions begun with it, [NB_TAGS + t] ended
                             (mod 256: they run in call order); NULL until used */
  unsigned excl_next, excl_done; /* tickets: exclusive nonblocking executions (on the
                                    segment or group communicators) run one at a time */
  signed char simsel[COLLC_COLL_COUNT][2][SIM_BUCKETS]; /* simselect.c: 0 unknown, 1 native,
                                           2 + candidate; [commutative][half decade of bytes] */
  int64_t *agreed;        /* agree.c's scratch (alltoallv: every rank's counts), NULL until used */
  size_t agreed_cap;      /* its values */
  int refs;     /* persistent requests using this state */
  int orphan;   /* the communicator is gone; freed with the last reference */
} collc_state;

/* The state cached on comm; created (empty, local) if create. NULL if none
 * or on failure. */
collc_state *state_get(MPI_Comm comm, int create);
/* The state cached on comm, or NULL (never created): state_get(comm, 0)
 * remembered per thread, for the fast path. */
collc_state *state_find(MPI_Comm comm);
/* Create st's private communicator if missing (collective over comm). */
int state_priv(collc_state *st, MPI_Comm comm);
/* A message tag for a new persistent plan on st: the same sequence on every
 * rank (persistent inits are collective), distinct from the blocking
 * interface's tags and from the other live ones (up to 30000). */
int state_next_tag(collc_state *st);
/* Keep st (its private and group communicators) alive while a request
 * uses it, even past the user's MPI_Comm_free; unref releases. Both under
 * the request lock (request.h), which MPI_Comm_free's callback takes too. */
void state_ref(collc_state *st);
void state_unref(collc_state *st);
/* Register an existing group communicator; takes ownership. */
int state_add_family(collc_state *st, int n, int stride, MPI_Comm gcomm);
/* Communicators for P's groups into out[]. With create, missing families
 * are split off (collective: in program order, identical on every rank);
 * without, a missing family is MPI_ERR_INTERN. */
int state_group_comms(collc_state *st, const collc_prog *P, MPI_Comm *out, int create);

/* Nodes (node.c). Discover which ranks of comm share a node (collective,
 * once per state): MPI_Comm_split_type(SHARED), COLLC_NODE_SIZE virtual
 * nodes inside, COLLC_SHM=0 none. Sets st->layout, st->node, st->yield. */
int state_layout(collc_state *st, MPI_Comm comm);
/* comm's node layout as the library sees it (collective on first use; for
 * tools that resolve choices themselves); NULL if none. */
const collc_layout *node_layout(MPI_Comm comm);
/* Make st's node segment hold at least bytes (collective over comm; every
 * rank passes the same bytes). MPI_SUCCESS or an MPI error code. */
int state_segment(collc_state *st, size_t bytes);
/* A new segment of bytes for one persistent plan (collective over comm). */
int state_own_segment(collc_state *st, size_t bytes, shm_seg **out);
/* Whether my node's ranks may read each other's memory: probed once, on
 * the first plan that would (collective over the communicator's ranks,
 * after state_layout); the segments learn the answer. */
int state_cma(collc_state *st);
/* Free st's node resources (with the state). */
void state_free_nodes(collc_state *st);

/* Decision and binding caches (cache.c). */
/* The cached decision for key with selection text (key->algo is ignored),
 * or NULL; the oldest inserted is evicted first, the same on every rank. */
decision *cache_decision(collc_state *st, const decision_key *key, const char *text);
/* A new decision for key and text at the front (the least recently used one
 * and its plans are freed when full); NULL when out of memory. */
decision *cache_add_decision(collc_state *st, const decision_key *key, const char *text);
/* The binding under key in decision D (moved to the front), or NULL. */
binding *cache_plan(decision *D, const binding_key *key);
/* Keep plan (with gcomm, taken over) under key in D (evicting the least
 * recently used binding, which flushes st's call cache); the binding. */
binding *cache_add_plan(collc_state *st, decision *D, const binding_key *key, collc_plan *plan,
                        MPI_Comm *gcomm);
/* Free every cached decision and plan of st. */
void cache_clear(collc_state *st);

/* The call caches (calls.c): tables of CALL_SLOTS entries. The entry for k
 * in tab, or NULL (a miss, or a type or user operation whose identity
 * changed since). */
const call_entry *call_find(const call_entry *tab, const call_key *k);
/* Whether plan pl was compiled for these p counts and displacements
 * (NULL: packed; always, for a collective without counts): a counted
 * hit's full comparison. */
int plan_counts_are(const collc_plan *pl, const int64_t *counts, const int64_t *displs);
/* The binding and call keys' chash of spec s. */
uint64_t binding_chash(const collc_spec *s);
/* Fill in e's key and identities from k: 0, or -1 when k's types have no
 * identity (the call cannot be cached). */
int call_prepare(call_entry *e, const call_key *k);
/* The slot of k in *tab (allocating the table; NULL when out of memory);
 * the caller frees what the slot holds before overwriting it. */
call_entry *call_slot(call_entry **tab, const call_key *k);
/* Remember in st's blocking cache that k is served as e says. */
void call_add(collc_state *st, const call_key *k, const call_entry *e);
/* Forget every entry of st's blocking caches (a plan may have been freed). */
void call_flush(collc_state *st);
/* The forced-call cache: blocking calls that name their algorithm
 * (collc_<coll>_algo), keyed by the call key and the text together, so
 * that a repeated call skips the slow path as a call of the default
 * selection does (the text is hashed and compared in full at each hit).
 * Keys with counts, and texts of FORCED_TEXT bytes or more, are never
 * cached. forced_find: the entry or NULL; forced_add: remember. */
const call_entry *forced_find(const collc_state *st, const call_key *k, const char *text);
void forced_add(collc_state *st, const call_key *k, const char *text, const call_entry *e);

/* The call memo (calls.c), in front of the call caches: per collective and
 * interface (blocking, nonblocking), the MEMO_WAYS most recent
 * (communicator, key) -> (call-cache entry, state). It holds pointers into
 * the call caches, valid while calls_gen is unchanged: calls_changed()
 * bumps it before any call-cache slot is written or flushed and before a
 * state is freed. A hit is one slot known at compile time and one key
 * comparison: no hash, no attribute lookup. Only entries without identity
 * checks are memoised (predefined types and operations, no counts), none
 * with COLLC_DISABLE set (a hit need not ask it), and none under
 * MPI_THREAD_MULTIPLE (the memo is global: those calls take the
 * call caches, which are per communicator) or SMPI (ranks share globals). */
#define MEMO_WAYS 2
typedef struct {
  MPI_Comm comm;
  unsigned gen;     /* calls_gen when made (0: empty; calls_gen starts at 1) */
  int p;            /* st's: what a hit reads is the slot's, no pointer followed */
  int native;       /* e->kind == CALL_NATIVE */
  int in_place, root, scount, rcount; /* e->key's fields that memo_key_is compares */
  MPI_Datatype stype, rtype;
  MPI_Op op;
  const call_entry *e;
  collc_state *st;
} call_memo;
extern COLLC_LOCAL atomic_uint calls_gen;
extern COLLC_LOCAL call_memo call_memos[2 * COLLC_COLL_COUNT][MEMO_WAYS];
void calls_changed(void);
/* Whether MPI runs with MPI_THREAD_MULTIPLE (request.c; read once). */
int request_threaded(void);
/* Memoise e (st's entry for k; nb: nonblocking) when it needs no checks. */
void memo_put(MPI_Comm comm, const call_key *k, int nb, const call_entry *e, collc_state *st);

COLLC_HOT int call_key_equal(const call_key *a, const call_key *b) {
  return a->coll == b->coll && a->rcount == b->rcount && a->rtype == b->rtype &&
         a->scount == b->scount && a->stype == b->stype && a->op == b->op &&
         a->root == b->root && a->in_place == b->in_place && a->chash == b->chash;
}

/* A valid memo of collective coll on comm (nb: nonblocking), any key,
 * else NULL: it tells a call the communicator's size before the call
 * builds its key. */
COLLC_HOT const call_memo *memo_any(MPI_Comm comm, int coll, int nb) {
  const call_memo *m = call_memos[2 * coll + nb];
  unsigned g = atomic_load_explicit(&calls_gen, memory_order_acquire);
  for (int w = 0; w < MEMO_WAYS; w++, m++)
    if (m->gen == g && m->comm == comm) return m;
  return NULL;
}

/* Whether valid memo m holds key k. (Its collective is the slot's, and
 * memos hold no counted calls, whose chash is all that call_key_equal
 * would compare beyond these fields.) */
COLLC_HOT int memo_key_is(const call_memo *m, const call_key *k) {
  return m->rcount == k->rcount && m->rtype == k->rtype && m->op == k->op &&
         m->root == k->root && m->in_place == k->in_place && m->scount == k->scount &&
         m->stype == k->stype;
}

/* The memo of (comm, k, nb) while valid, else NULL; none for a key with
 * counts, which memo_key_is does not compare (memo_put holds none such; a
 * counted key equal in the other fields must not find an entry that was
 * made for other counts). */
COLLC_HOT const call_memo *memo_find(MPI_Comm comm, const call_key *k, int nb) {
  const call_memo *m = call_memos[2 * k->coll + nb];
  unsigned g = atomic_load_explicit(&calls_gen, memory_order_acquire);
  if (k->counts || k->chash) return NULL;
  for (int w = 0; w < MEMO_WAYS; w++, m++)
    if (m->gen == g && m->comm == comm && memo_key_is(m, k)) return m;
  return NULL;
}

/* memo_find with a valid memo m of comm in hand (memo_any's): m when its
 * key is k, else the search (the other ways). */
COLLC_HOT const call_memo *memo_find_from(const call_memo *m, MPI_Comm comm, const call_key *k,
                                          int nb) {
  return memo_key_is(m, k) ? m : memo_find(comm, k, nb);
}

/* Identity of a datatype for plan keys: 0 for predefined types, else a
 * serial number attached to the type as an attribute on first sight. */
long type_serial(MPI_Datatype t);
/* Free all state attached to comm (used at finalize for COMM_WORLD). */
void state_release(MPI_Comm comm);
/* Free the attribute keys (at finalize, after the last state_release). */
void state_free_keyvals(void);
/* Hang the end-of-run work (statistics, freeing states and segments) on an
 * MPI_COMM_SELF attribute, whose delete callback MPI runs at the start of
 * MPI_Finalize however it is reached (a Fortran binding calls
 * PMPI_Finalize). Idempotent, thread safe; a no-op before MPI_Init or after
 * MPI_Finalize. Installed before any state is set on MPI_COMM_SELF, so MPI
 * (deleting in reverse order of setting) frees that state first. */
void finalize_hook_install(void);

/* After MPI_Init (init.c; also the Fortran inits): the end-of-run hook,
 * then rules_init. Collective over MPI_COMM_WORLD the first time. */
void collc_after_init(void);

/* Where a decision came from (COLLC_STATS says it): no rule row (native),
 * the tuning file's rows, the built-in ones, the simulator, COLLC_<COLL>,
 * a persistent init's info key, a call naming its algorithm, the native
 * correctness guard. */
enum { SRC_NONE = 0, SRC_TUNING, SRC_BUILTIN, SRC_SIM, SRC_ENV, SRC_INFO, SRC_CALL, SRC_GUARD,
       SRC_COUNT };

/* The rule's rows (rules.c). Read COLLC_TUNING on world rank 0 and
 * broadcast it (collective over MPI_COMM_WORLD; once, after MPI_Init). */
void rules_init(void);
/* The rows, in order: the tuning file's (SRC_TUNING), then the built-in
 * ones (SRC_BUILTIN), for this MPI library; parsed once. */
const struct tune_row_s *rules_get(int *n);
/* Rank 0's line about the tuning file in use, if any (end of the run). */
void rules_print(void);

/* Statistics (stats.c): coll, or COLLC_COLL_COUNT + coll for the
 * nonblocking call of coll; src: where the decision came from (SRC_*).
 * stats_add is every call's: with COLLC_STATS unset one load, inline. */
void stats_count(int coll, int algo, int src, long long bytes);
static inline void stats_add(int coll, int algo, int src, long long bytes) {
  if (config_get()->stats) stats_count(coll, algo, src, bytes);
}
/* Print the counts (rank 0's), or one line saying collc served nothing. */
void stats_print(void);
/* A plan made under COLLC_EXEC=batch: with batches, or (user operations,
 * derived datatypes) run instruction by instruction. */
void stats_batch(int batched);
/* A call (coll, + COLLC_COLL_COUNT if nonblocking) with CUDA device buffers,
 * handed to the MPI library (no GPU, no CUDA backend, or a call or plan it
 * does not serve). */
void stats_device(int coll);
/* A blocking call with CUDA device buffers served by a plan of algorithm
 * algo: staged through host memory, or run with the CUDA backend. */
void stats_device_plan(int coll, int algo, int staged);
/* Count wisdom files loaded, saved and ignored (damaged or stale). */
void stats_wisdom(int loaded, int saved, int ignored);

/* Report err through comm's error handler (MPI_COMM_WORLD's if comm is
 * null) and return it. */
int collc_raise(MPI_Comm comm, int err);
/* One warning per process and key (a short fixed string), on world rank 0. */
void collc_warn_once(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* One warning per process and key, on this rank (whatever its rank). */
void collc_warn_here(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The native correctness guard (guard.c): for a reduction s on predefined
 * (type, op) that the MPI library computes wrong here (checked once per
 * process), the algorithm collc serves it with; else NULL. */
const char *guard_text(const collc_spec *s, MPI_Datatype type, MPI_Op op);
/* For a nonblocking call (or a persistent one, whose native starts are
 * nonblocking calls) of spec s that would go native: the algorithm collc
 * serves it with where the MPI library is known to get it wrong, or NULL
 * (COLLC_GUARD=0: always NULL). */
const char *guard_nonblocking(const collc_spec *s);
/* Stats lines of the pairs the guard served (rank 0, at the end of the run). */
void guard_print(void);

/* Default algorithm text for spec (select.c); *src: the row's source
 * (SRC_TUNING, SRC_BUILTIN; SRC_NONE: no row, "native"). */
const char *select_default(const collc_spec *s, int *src);
/* The rule for s as a nonblocking call: its own rows (nb) first, then the
 * others (a tuning file's rows, measured blocking, do not hide the ones
 * measured nonblocking), node-aware rows only if node_ready (a blocking
 * call has set up what they need). */
const char *select_nonblocking(const collc_spec *s, int node_ready, int *src);
/* The bytes the rule compares: per block (all-to-all, allgather) or per vector. */
long long select_bytes(const collc_spec *s);
/* Whether the default rule asks the cost simulator for s: select_default
 * has no row for it and p >= COLLC_SIM_MIN_P (simselect.c). */
int select_simulates(const collc_spec *s);
/* The simulator's pick for s on comm (collective: rank 0 simulates the
 * candidates and the native library's modelled algorithm, and broadcasts;
 * remembered in st per collective and half decade of bytes). "native"
 * unless a candidate is predicted 1.2x faster. */
const char *select_simulated(const collc_spec *s, MPI_Comm comm, collc_state *st);
/* Whether the counts of a call of spec s (its collective and p) may change
 * what the default selection serves it with: COLLC_<COLL> is set, a row of
 * its collective at s->p names one of collc's algorithms (at any bytes,
 * layout or operation order), or the simulator may be asked. 0: native
 * whatever the counts (but for the guard, which looks at the type and
 * operation alone). Scans the rows: for call-cache misses. */
int select_counts_matter(const collc_spec *s);
/* Whether the default selection serves a counted call of spec s (its
 * total count and unit bytes set) natively whatever its counts beyond
 * their total: COLLC_<COLL> unset, no simulator, and no row (blocking or
 * nonblocking) of its collective at s->p covering its bytes names one of
 * collc's algorithms. */
int select_native_by_total(const collc_spec *s);
/* Whether the default rule would pick a node-aware plan for s if its ranks
 * shared nodes (so the layout is worth discovering). */
int select_may_share(const collc_spec *s);
/* The simulator's pick for s if st remembers one (local), else "native". */
const char *select_simulated_known(const collc_spec *s, const collc_state *st);

#endif
