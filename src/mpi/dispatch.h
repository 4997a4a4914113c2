/* dispatch.h - the shared path of every compiled collective entry point. */
#ifndef COLLC_DISPATCH_H
#define COLLC_DISPATCH_H

#include "internal.h"
#include "../exec/memclass.h"

/* One validated call: what to compile (spec), how buffers are typed (bind),
 * the user's arguments as given, and the native call to fall back to. */
typedef struct dispatch_call {
  collc_spec spec;
  exec_bind bind;
  const void *sendbuf; /* as given (may be MPI_IN_PLACE) */
  void *recvbuf;
  MPI_Comm comm;
  int (*native)(const struct dispatch_call *d);
  /* The nonblocking native call (a persistent request's fallback). */
  int (*inative)(const struct dispatch_call *d, MPI_Request *r);
  MPI_Request *request; /* persistent init: the request to make; NULL: a blocking call */
  const char *hint;     /* persistent init: the collc_algorithm info value, or NULL */
  const call_key *ck;   /* a call of the default selection: its call-cache key */
  const char *ftext;    /* with ck, a call naming its algorithm: the text, and ck its key
                           in the forced-call cache (dispatch_forced) */
  MPI_Request *ireq;    /* a nonblocking call: its request; NULL: blocking or persistent */
  int src;              /* where its selection text came from (SRC_*), set by the selection */
  int fell_back;        /* its text did not fit: the default rule's (dispatch_choose) */
  /* Counted collectives (vcoll.c): the user's arguments for the native call. */
  const int *vcounts, *vdispls; /* recvcounts; allgatherv's displs */
  int vsendcount;               /* allgatherv's sendcount */
  long long vshift;             /* bytes recvbuf was moved by (negative displs): undone natively */
  /* Rooted collectives (rooted.c): the user's arguments as given, for the
   * native call (the plan's buffers and typing are normalised: in place at
   * a scatter's root its RECV is sendbuf; off the root the insignificant
   * side is typed as the significant one). */
  struct {
    const void *sb;
    void *rb;
    int sc, rc;
    MPI_Datatype st, rt;
  } user;
  const int *vscounts, *vsdispls; /* alltoallv's send side (alltoallv.c) */
  long long vsshift;              /* bytes sendbuf was moved by, as vshift */
  /* A persistent request's local work before each start of its plan (a
   * gatherv root's, an allgatherv rank's or an alltoallv rank's own block
   * copied into place: rooted.c, vcoll.c, alltoallv.c), or NULL. MPI code. */
  int (*prestart)(const struct dispatch_call *d);
  /* Gatherv and scatterv (rooted.c): spec.counts' own storage, p + 3
   * values, where the agreement round writes the root's counts (for an
   * algorithm that needs them everywhere, collc_algo.agrees), or NULL. */
  int64_t *vown;
} dispatch_call;

/* A persistent init's own arguments, or (oneshot) a nonblocking call's
 * request (NULL for a blocking call). */
typedef struct {
  MPI_Info info;
  MPI_Request *request;
  int oneshot;
} persist_args;

/* Set d up for persistent init pa: d->request, and d->hint from the info
 * key collc_algorithm (copied into buf[len]); for a nonblocking call
 * d->ireq. MPI_SUCCESS or MPI_ERR_ARG (request NULL) / MPI_ERR_INFO. */
int dispatch_persist(dispatch_call *d, const persist_args *pa, char *buf, int len);

/* The buffer arguments of all-to-all and allgather (MPI's order). */
typedef struct {
  const void *sb;
  int sc;
  MPI_Datatype st;
  void *rb;
  int rc;
  MPI_Datatype rt;
  const call_key *ck; /* a blocking call of the default selection: its key (else NULL) */
} pair_args;

/* MPI's signature of all-to-all and allgather. */
typedef int (*pair_fn)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm);

/* The same, nonblocking (MPI_Ialltoall, MPI_Iallgather). */
typedef int (*ipair_fn)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm,
                        MPI_Request *);
/* A nonblocking all-to-all or allgather (coll) with request *req: the fast
 * path (ipmpi: its PMPI_I call), else dispatch_pair. */
int dispatch_ipair(int coll, pair_args *a, MPI_Comm comm, MPI_Request *req, ipair_fn ipmpi,
                   int (*native)(const dispatch_call *),
                   int (*inative)(const dispatch_call *, MPI_Request *));

/* Validate and run one all-to-all or allgather (coll) with a's buffers on
 * comm, algorithm forced (NULL: selection), or with pa make its persistent
 * request; native and inative are its blocking and nonblocking native calls. */
int dispatch_pair(int coll, const char *forced, const pair_args *a, MPI_Comm comm,
                  const persist_args *pa, int (*native)(const dispatch_call *),
                  int (*inative)(const dispatch_call *, MPI_Request *));

/* Run call d with algorithm `forced` (NULL: COLLC_<COLL> or the default
 * rule): the cached plan, a newly built one, or the native call (counted with
 * native_bytes). A call that moves nothing (dispatch_empty) returns after
 * the choice is checked. Errors go through the communicator's error handler. A
 * forced text that does not parse or fit returns MPI_ERR_ARG. */
int dispatch(const dispatch_call *d, const char *forced, long long native_bytes);
/* Whether a call of spec s moves nothing and so needs no plan: no bytes,
 * unless its collective synchronizes (a barrier always runs). */
int dispatch_empty(const collc_spec *s);
/* Set which buffers of a call of spec s a call-cache hit must find
 * usable (e->need_recv: RECV has units; e->need_send: SEND has, not in
 * place; neither for a barrier). */
void dispatch_entry_buffers(const collc_spec *s, call_entry *e);
/* The agreement round of call d under selection text (agree.c), when
 * text names an algorithm that needs what MPI gives only some ranks
 * (collc_algo.agrees): then d's spec holds it (spec.agreed, spec.vall) or,
 * where the ranks' elements differ in size, stays as it was; d->ck is
 * cleared. Collective: blocking and persistent calls only. MPI_SUCCESS or
 * an error class. */
int dispatch_agree(dispatch_call *d, const char *text);
/* Whether call d under text makes an agreement round (text names an
 * algorithm that agrees; alltoallv: at most AGREE_MAXP ranks). */
int dispatch_agree_needed(const dispatch_call *d, const char *text);
/* The round in two halves, for a nonblocking call: int64_t values of the
 * buffer the round of d needs (gatherv, scatterv: none, it works in
 * d->vown); start it on d's communicator (*q its request); then, *q
 * complete, d's spec as dispatch_agree leaves it. */
size_t dispatch_agree_values(const dispatch_call *d);
int dispatch_agree_start(dispatch_call *d, int64_t *m, MPI_Request *q);
void dispatch_agree_end(dispatch_call *d, int64_t *m);
/* Serve call d natively: the native call now, or (persistent init) a
 * request that makes it at each start. Counted as native with bytes. */
int dispatch_native(const dispatch_call *d, long long bytes);
/* The same for a call with device buffers (counted mem=cuda). */
int dispatch_device_native(const dispatch_call *d, long long bytes);

/* The fast path of a blocking call of the default selection with key k
 * (its buffers sendbuf, recvbuf; bcast's is recvbuf): FAST_NATIVE, make
 * the native call now (it is counted); FAST_DONE, served, *rc its result;
 * FAST_MISS, take the slow path (not cached, unusual buffers, or requests
 * of ours are running, which the slow path keeps moving). */
enum { FAST_MISS, FAST_NATIVE, FAST_DONE };
/* text, or where it is "native" for a reduction the MPI library computes
 * wrong on this machine (guard.c), the algorithm collc serves it with
 * (d->src then SRC_GUARD). */
const char *dispatch_guarded(dispatch_call *d, const char *text);
/* The fast path's miss of the memo: st's entry for k (nb: nonblocking) in
 * the call cache, memoised when it may be; NULL: none, or COLLC_DISABLE
 * (*st the state, if any). */
const call_entry *dispatch_fast_find(MPI_Comm comm, const call_key *k, int nb,
                                    collc_state **st);
/* Run cached plan e of st blocking (e->kind CALL_PLAN): MPI_SUCCESS or the
 * raised error. */
int dispatch_fast_run(collc_state *st, const call_entry *e, MPI_Comm comm, const void *sendbuf,
                      void *recvbuf);
/* The fast path behind the memo: the call cache (counted). */
int dispatch_fast(MPI_Comm comm, const call_key *k, const void *sendbuf, void *recvbuf,
                  int *rc);
/* The same for a blocking call that names its algorithm (collc_<coll>_algo):
 * the forced-call cache under (k, text). On FAST_MISS the slow path runs
 * with d->ck = k and d->ftext = text, which remembers the call there. */
int dispatch_forced(MPI_Comm comm, const call_key *k, const char *text, const void *sendbuf,
                    void *recvbuf, int *rc);

/* Whether requests of ours are running (no lock; may be stale by the time
 * it returns, which only costs a slower path). */
extern COLLC_LOCAL atomic_int request_nactive; /* (request.c) */
COLLC_HOT int request_busy(void) {
  return atomic_load_explicit(&request_nactive, memory_order_relaxed) > 0;
}

/* Whether a buffer of the call is CUDA device memory (memclass.h). */
int dispatch_on_device(const void *sb, const void *rb);
/* Whether it may be, without a call: 0 without CUDA (one relaxed load) or
 * for a barrier's buffers. The memo's hit path makes only tail calls (so
 * the entry point needs no stack frame) and leaves any doubt to the call
 * cache's path, which asks dispatch_on_device. */
COLLC_HOT int maybe_on_device(const void *sb, const void *rb) {
  if (atomic_load_explicit(&memclass_state, memory_order_relaxed) == 1) return 0;
  return (uintptr_t)sb >= 4096 || (uintptr_t)rb >= 4096; /* (a barrier's: unprobed) */
}

/* Whether a buffer of the call is device memory, asking only when it may be. */
COLLC_HOT int on_device(const void *sb, const void *rb) {
  return maybe_on_device(sb, rb) && dispatch_on_device(sb, rb);
}

/* A call-cache hit's host buffers are plainly usable (else the slow path
 * checks them fully); k: the call's key (equal to e's). */
COLLC_HOT int dispatch_buffers_plain(const call_entry *e, const call_key *k, const void *sb,
                                     const void *rb) {
  if (e->kind == CALL_EMPTY) return 1;
  if (e->need_recv && (!rb || rb == MPI_IN_PLACE)) return 0;
  if (!e->need_send || k->in_place) return 1;
  return sb && (sb != rb || !e->need_recv);
}

/* Serve a blocking call of key k by its call-cache entry e of state st;
 * exact: ask whether the buffers are device memory (else any doubt is a
 * miss). */
COLLC_HOT int dispatch_fast_hit(collc_state *st, const call_entry *e, MPI_Comm comm,
                                const call_key *k, const void *sendbuf, void *recvbuf, int *rc,
                                int exact) {
  if (request_busy() || !dispatch_buffers_plain(e, k, sendbuf, recvbuf)) return FAST_MISS;
  if (exact ? on_device(sendbuf, recvbuf) : maybe_on_device(sendbuf, recvbuf))
    return FAST_MISS; /* (the slow path hands device buffers to the library) */
  if (e->kind == CALL_NATIVE) return FAST_NATIVE;
  *rc = e->kind == CALL_EMPTY ? MPI_SUCCESS : dispatch_fast_run(st, e, comm, sendbuf, recvbuf);
  return FAST_DONE;
}

/* The fast path of a blocking call: the memo (dispatch_fast_hit's result;
 * FAST_MISS when it misses). Inline in each entry point, where k's address
 * never escapes, so k lives in registers and its constant fields fold
 * away; the entry point's slow path (noinline, with the entry point's own
 * arguments, so a tail call) builds its own key and takes dispatch_fast.
 * Memos exist only with COLLC_STATS unset, so a hit counts nothing. */
COLLC_HOT int dispatch_memo(MPI_Comm comm, const call_key *k, const void *sendbuf, void *recvbuf,
                            int *rc) {
  const call_memo *m = memo_find(comm, k, 0);
  return m ? dispatch_fast_hit(m->st, m->e, comm, k, sendbuf, recvbuf, rc, 0) : FAST_MISS;
}

/* The key under which a call of a counted collective (coll, with the
 * user's sendbuf sb and types), blocking or nonblocking, is remembered
 * when its counts decide nothing (select_counts_matter 0): its typing
 * alone, rcount -1 (a counted key's is never negative), so that the memo
 * may hold it. A plan found under it is never run (dispatch_loose). */
COLLC_HOT call_key loose_key(int coll, const void *sb, MPI_Datatype st, MPI_Datatype rt,
                             MPI_Op op) {
  int ip = sb == MPI_IN_PLACE;
  return (call_key){.coll = coll, .in_place = ip, .rcount = -1,
                    .stype = ip ? MPI_DATATYPE_NULL : st, .rtype = rt, .op = op};
}

/* Whether a call that entry e of state st has native may be made natively
 * now: blocking (nb 0) while no request of ours needs moving, nonblocking
 * while e's decision is of the state's version in force. */
COLLC_HOT int native_now(const call_entry *e, const collc_state *st, int nb) {
  return nb ? e->version == st->version : !request_busy();
}

/* Whether call-cache entry e of state st says to make a call natively now. */
COLLC_HOT int native_usable(const call_entry *e, const collc_state *st, int nb) {
  return e->kind == CALL_NATIVE && native_now(e, st, nb);
}

/* Whether memo m (NULL: none) of a call (nb: nonblocking) made with host
 * buffers sb, rb says the call is native (native_usable). */
COLLC_HOT int memo_says_native(const call_memo *m, int nb, const void *sb, const void *rb) {
  return m && m->native && native_now(m->e, m->st, nb) && !maybe_on_device(sb, rb);
}

/* The memo of a call of key k (nb: nonblocking) made with host buffers
 * sb, rb, if it says the call is native, else NULL. */
COLLC_HOT const call_memo *memo_native(MPI_Comm comm, const call_key *k, int nb, const void *sb,
                                       const void *rb) {
  const call_memo *m = memo_find(comm, k, nb);
  return memo_says_native(m, nb, sb, rb) ? m : NULL;
}

/* What a memo hit of a counted call checks of its count vector c and
 * displacements d (NULL where the collective has none: c twice) on a
 * communicator of p ranks (0: its size unknown): both there, no count
 * negative. Its communicator and types are the memo key's; the rest is
 * the library's to check, which it does without crashing (a negative
 * count or a missing array is what crashes MPICH 4.0.2, so collc answers
 * those with their error class). */
COLLC_HOT int counts_usable(int p, const int *c, const int *d) {
  int any = 0;
  if (!c || !d || p <= 0) return 0;
  for (int q = 0; q < p; q++) any |= c[q];
  return any >= 0;
}

/* The sum of count vector c on p ranks if it passes counts_usable (with
 * displacements d), else -1: the same test in the same pass. */
COLLC_HOT long long counts_total(int p, const int *c, const int *d) {
  long long t = 0;
  int any = 0;
  if (!c || !d || p <= 0) return -1;
  for (int q = 0; q < p; q++) t += c[q], any |= c[q];
  return any < 0 ? -1 : t;
}

/* The fast path of counted call d of the default selection, blocking or
 * nonblocking (d->ireq), under its loose key k: FAST_DONE when the call
 * cache has it native (its native call made and counted, *rc its result); else FAST_MISS with
 * d->ck = k, for the slow path to remember what serves it, where the
 * counts decide nothing and no plan is cached under k (a plan compares
 * counts: then d->ck is NULL and the caller takes its counted key). */
int dispatch_loose(dispatch_call *d, const call_key *k, int *rc);

/* Test hook (barrier.c): with COLLC_TEST_BARRIER_EARLY=<rank>, that rank's
 * barrier program P loses its receives and flag waits (it leaves at once: a
 * deliberately broken barrier that tests/mpi/barrier.c must catch); any
 * other program is returned as it is. Returns P. */
collc_prog *barrier_test_break(const collc_spec *s, collc_prog *P);

/* Shared with nonblocking.c (dispatch.c). The program of choice c for s
 * (wisdom files, else compiled); NULL with why. */
collc_prog *dispatch_compile(const collc_spec *s, const collc_choice *c, char *why, size_t wlen);
/* Parse and resolve text for d into c (forced: an unusable text is
 * MPI_ERR_ARG; else it warns and falls back to the rule, then native,
 * d->src following). */
int dispatch_choose(dispatch_call *d, const char *text, int forced, collc_choice *c);
/* The decision and binding keys of d. */
void dispatch_decision_key(const dispatch_call *d, decision_key *k);
void dispatch_binding_key(const dispatch_call *d, binding_key *k);
/* Whether choice c may use the node segment. */
int dispatch_uses_segment(const collc_choice *c);
/* The binding of decision D for d's typing: cached, or bound now (local);
 * one that cannot be cached is *tmp (the caller frees it). */
int dispatch_plan_of(const dispatch_call *d, decision *D, const binding_key *bk, binding **B,
                     binding *tmp);
/* Nonblocking calls (nonblocking.c). Serve nonblocking call d (validated,
 * d->ireq set) with algorithm forced (NULL: COLLC_<COLL> or the rule)
 * without communicating: natively, or by a plan in a request of its own.
 * native_bytes: what native is counted with. */
int nb_dispatch(const dispatch_call *d, const char *forced, long long native_bytes);
/* The fast path of nonblocking call with key k (buffers sendbuf, recvbuf;
 * request *req): as dispatch_fast; FAST_NATIVE: make the native
 * nonblocking call now. */
int nb_fast(MPI_Comm comm, const call_key *k, const void *sendbuf, void *recvbuf,
            MPI_Request *req, int *rc);
/* Serve nonblocking call d natively (counted with bytes; remembered when
 * d has a call-cache key). */
int nb_native(const dispatch_call *d, long long bytes);
/* Free st's nonblocking call cache. */
void nb_clear(collc_state *st);

/* Persistent requests (request.c). What a start does. */
enum { REQ_PLAN, REQ_NATIVE, REQ_EMPTY, REQ_AGREE };
/* What a REQ_PLAN request runs, all of it its own: a reference to the
 * plan (or, lent, the plan of a nonblocking call-cache entry, which
 * request_unborrow turns into a reference before the entry lets it go),
 * duplicates of the group communicators, its segment (a malloc'd cell,
 * the segment retired with the request), its tag. */
typedef struct {
  collc_plan *pl;
  int lent;
  MPI_Comm gdup[COLLC_MAXF + 1];
  int ngdup;
  shm_seg **seg;
  int tag;
} req_plan;
/* Make *d->request for call d (local; d's datatypes are taken over):
 * REQ_PLAN runs rp (taken over); REQ_NATIVE makes the native nonblocking
 * call; REQ_EMPTY completes at once (nothing moves). Starts count under
 * algorithm algo with bytes. Returns MPI_SUCCESS or an MPI error class
 * (everything freed then). */
int request_create(const dispatch_call *d, int kind, req_plan *rp, int algo, long long bytes);
/* Free what rp holds (NULL members are skipped). */
void request_free_plan(req_plan *rp);
/* Run pl at w in c to its end, blocking; while requests of ours run, they
 * are moved on too (so a rank blocked here never stalls its peers'
 * collectives that wait for it). MPI_SUCCESS or an error class. */
int request_run(exec_ctx *c, collc_plan *pl, const exec_where *w, const void *sendbuf,
                void *recvbuf);
/* Complete native request *q, moving our requests on meanwhile. */
int request_wait_native(MPI_Request *q);
/* d's native blocking call. */
int request_native(const dispatch_call *d);
/* Nonblocking call d's request *d->ireq, running e's plan with e's group
 * communicators on st's private communicator under the communicator's
 * next tag, counted under e's algorithm and bytes; e->excl: it uses st's
 * segment or group communicators, so it runs after every earlier such
 * execution. It starts now if it can, else at a later completion call.
 * lent: e is st's call-cache entry and the request borrows its plan (no
 * reference taken; request_unborrow before the entry drops it); else a
 * reference is taken. Reads only d's spec.coll, sendbuf, recvbuf, comm, ireq
 * and src (the hit path fills no more). */
int request_nb(const dispatch_call *d, collc_state *st, const call_entry *e, int lent);
/* Give every request of st that borrows plan pl a reference of its own
 * (before a call-cache entry lets pl go). Not under the request lock. */
void request_unborrow(collc_state *st, const collc_plan *pl);
/* Nonblocking call d's request *d->ireq when its algorithm (text;
 * forced: the call's own) needs the agreement round (REQ_AGREE): the round
 * started now on d's communicator (d's vectors and datatypes copied), its
 * place in st's tag order taken now; when the round completes, inside a
 * completion call, nb_agreed compiles its plan, which then runs as
 * request_nb's. Local. MPI_SUCCESS or an error class. */
int request_nb_agree(const dispatch_call *d, collc_state *st, const char *text, int forced);
/* The plan of such a call d once its round has completed (d's spec agreed,
 * or as it was where the ranks' elements differ in size) into e (kind,
 * algo, bytes, the plan owned): text's where it fits, else (not forced)
 * the collective's direct algorithm, which needs no round; the same on
 * every rank. MPI_SUCCESS, MPI_ERR_ARG (forced, does not fit) or a class. */
int nb_agreed(dispatch_call *d, collc_state *st, const char *text, int forced, call_entry *e);
/* Nonblocking call d's request, complete already (nothing moves). */
int request_nb_done(const dispatch_call *d, int algo);
/* Let st's exclusive nonblocking executions end (they move on meanwhile),
 * before a blocking call uses or replaces st's segment or groups. */
void request_quiesce(collc_state *st);
/* Complete the private communicator a nonblocking call started making
 * (collective: every rank started it), if it is pending. */
void request_priv_wait(collc_state *st);
/* Replace c's derived datatypes by duplicates that c will own (the user
 * may free theirs while the request lives). MPI_SUCCESS or a class. */
int request_dup_types(dispatch_call *c);
void request_free_types(dispatch_call *c);
/* Free every persistent request (at finalize). */
void request_finalize(void);

/* The call-cache key of an all-to-all or allgather (coll) with a's arguments. */
COLLC_HOT call_key dispatch_pair_key(int coll, const pair_args *a) {
  int in_place = a->sb == MPI_IN_PLACE;
  return (call_key){.coll = coll, .in_place = in_place, .scount = in_place ? 0 : a->sc,
                    .rcount = a->rc, .stype = in_place ? MPI_DATATYPE_NULL : a->st,
                    .rtype = a->rt, .op = MPI_OP_NULL};
}

/* A blocking all-to-all or allgather (coll) of the default selection
 * behind the memo: the call cache (pmpi: its PMPI_ call), else
 * dispatch_pair; COLLC_DISABLE hands it to the library. */
int dispatch_pair_slow(int coll, pair_args *a, MPI_Comm comm, pair_fn pmpi,
                       int (*native)(const dispatch_call *),
                       int (*inative)(const dispatch_call *, MPI_Request *));
/* A blocking all-to-all or allgather (coll) naming its algorithm (text):
 * the forced-call cache (pmpi: its PMPI_ call for a cached "native"), else
 * dispatch_pair. */
int dispatch_pair_forced(int coll, const char *text, pair_args *a, MPI_Comm comm, pair_fn pmpi,
                         int (*native)(const dispatch_call *),
                         int (*inative)(const dispatch_call *, MPI_Request *));
/* The same, the memo first: pmpi on a native hit, else slow (a noinline
 * function of the same arguments calling dispatch_pair_slow: a tail call). */
COLLC_HOT int dispatch_pair_default(int coll, const void *sb, int sc, MPI_Datatype st, void *rb,
                                    int rc, MPI_Datatype rt, MPI_Comm comm, pair_fn pmpi,
                                    pair_fn slow) {
  pair_args a = {sb, sc, st, rb, rc, rt, NULL};
  call_key k = dispatch_pair_key(coll, &a);
  int r, how = dispatch_memo(comm, &k, sb, rb, &r);
  if (how == FAST_NATIVE) return pmpi(sb, sc, st, rb, rc, rt, comm);
  if (how == FAST_DONE) return r;
  return slow(sb, sc, st, rb, rc, rt, comm);
}

#endif
