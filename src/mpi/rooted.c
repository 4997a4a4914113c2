/* rooted.c - MPI_Gather, MPI_Scatter, MPI_Gatherv and MPI_Scatterv
 * (blocking, nonblocking and persistent) over PMPI, and collc's entry
 * points for them.
 *
 * What decides, what binds. Gather and scatter move blocks of the same
 * bytes on every rank: the block's bytes and the root decide (as allgather's),
 * each rank's typing binds. Off the root MPI leaves one side's arguments
 * insignificant (gather's receive, scatter's send): they are typed as the
 * significant side there, so that a tree's staging in TMP is the block.
 * In place at a scatter's root (recvbuf MPI_IN_PLACE) the plan's RECV is the
 * root's sendbuf, which then is its input (the spec's in_place: input in
 * RECV). Gatherv's and scatterv's counts and displacements are significant
 * at the root only: elsewhere a rank knows its own count alone, so no
 * decision may depend on them (coll_desc.root_counts: not in the decision
 * key, not in the rule's bytes) and only algorithms whose program off the
 * root needs nothing but its own count serve them (linear); off the root
 * the spec's counts are its own count and zeros. Units of the counted forms
 * are elements of the significant type; at the root, a send (gatherv) or
 * receive (scatterv) typing other than its block's is copied locally first
 * (PMPI_Sendrecv on MPI_COMM_SELF; a persistent request's at each start)
 * and the in-place program runs, which
 * moves what the others' programs expect; negative displacements shift the
 * root's buffer base as allgatherv's do. Above ROOTED_MAXP ranks (counts
 * live on the stack: no allocation per call) the counted forms are native.
 * Intercommunicators are native. Every native call gets the user's
 * arguments as given (dispatch_call.user). */
#include <limits.h>
#include "collc.h"
#include "args.h"
#include "dispatch.h"
#include "../plan/config.h"
#include "pinit.h"

#define ROOTED_MAXP 1024

/* The user's arguments of a rooted call, MPI's order; counts, displs: the
 * counted forms' vectors (gatherv's recvcounts, scatterv's sendcounts). */
typedef struct {
  int coll;
  const void *sb;
  int sc;
  MPI_Datatype st;
  void *rb;
  int rc;
  MPI_Datatype rt;
  const int *counts, *displs;
  int root;
} rargs;

/* ---- the native calls, with the user's arguments ---- */

/* Gather's and scatter's types for the native call: the significant ones
 * from d->bind (a persistent request's own duplicates: the user may free
 * theirs), the others as given. */
static void native_types(const dispatch_call *d, MPI_Datatype *st, MPI_Datatype *rt) {
  int root = d->spec.rank == d->spec.root, ip = d->spec.in_place;
  *st = d->user.st, *rt = d->user.rt;
  if (d->spec.coll == COLLC_COLL_GATHER) {
    if (!ip) *st = d->bind.sendtype;
    if (root) *rt = d->bind.recvtype;
    return;
  }
  if (root) *st = ip ? d->bind.recvtype : d->bind.sendtype; /* (in place: RECV is sendbuf) */
  if (!(root && ip)) *rt = d->bind.recvtype;
}

static int native_gather(const dispatch_call *d) {
  MPI_Datatype st, rt;
  native_types(d, &st, &rt);
  return PMPI_Gather(d->user.sb, d->user.sc, st, d->user.rb, d->user.rc, rt, d->spec.root,
                     d->comm);
}

static int inative_gather(const dispatch_call *d, MPI_Request *r) {
  MPI_Datatype st, rt;
  native_types(d, &st, &rt);
  return PMPI_Igather(d->user.sb, d->user.sc, st, d->user.rb, d->user.rc, rt, d->spec.root,
                      d->comm, r);
}

static int native_scatter(const dispatch_call *d) {
  MPI_Datatype st, rt;
  native_types(d, &st, &rt);
  return PMPI_Scatter(d->user.sb, d->user.sc, st, d->user.rb, d->user.rc, rt, d->spec.root,
                      d->comm);
}

static int inative_scatter(const dispatch_call *d, MPI_Request *r) {
  MPI_Datatype st, rt;
  native_types(d, &st, &rt);
  return PMPI_Iscatter(d->user.sb, d->user.sc, st, d->user.rb, d->user.rc, rt, d->spec.root,
                       d->comm, r);
}

static int native_gatherv(const dispatch_call *d) {
  return PMPI_Gatherv(d->user.sb, d->user.sc, d->user.st, d->user.rb, d->vcounts, d->vdispls,
                      d->user.rt, d->spec.root, d->comm);
}

static int inative_gatherv(const dispatch_call *d, MPI_Request *r) {
  return PMPI_Igatherv(d->user.sb, d->user.sc, d->user.st, d->user.rb, d->vcounts, d->vdispls,
                       d->user.rt, d->spec.root, d->comm, r);
}

static int native_scatterv(const dispatch_call *d) {
  return PMPI_Scatterv(d->user.sb, d->vcounts, d->vdispls, d->user.st, d->user.rb, d->user.rc,
                       d->user.rt, d->spec.root, d->comm);
}

static int inative_scatterv(const dispatch_call *d, MPI_Request *r) {
  return PMPI_Iscatterv(d->user.sb, d->vcounts, d->vdispls, d->user.st, d->user.rb, d->user.rc,
                        d->user.rt, d->spec.root, d->comm, r);
}

static int (*const natives[COLLC_COLL_COUNT])(const dispatch_call *) = {
    [COLLC_COLL_GATHER] = native_gather, [COLLC_COLL_SCATTER] = native_scatter,
    [COLLC_COLL_GATHERV] = native_gatherv, [COLLC_COLL_SCATTERV] = native_scatterv};
static int (*const inatives[COLLC_COLL_COUNT])(const dispatch_call *, MPI_Request *) = {
    [COLLC_COLL_GATHER] = inative_gather, [COLLC_COLL_SCATTER] = inative_scatter,
    [COLLC_COLL_GATHERV] = inative_gatherv, [COLLC_COLL_SCATTERV] = inative_scatterv};

/* ---- argument checks (MPI error classes) ---- */

/* One side of a call: count, type, buffer. */
static int side(const void *buf, int n, MPI_Datatype t) {
  int err = args_count_type(n, t);
  return err ? err : args_buffer(buf, n, t);
}

/* The root's own block: sent (n1 x t1) against received (n2 x t2), and the
 * two buffers distinct (predefined types: see args_pair). */
static int own_block(const void *sb, int n1, MPI_Datatype t1, const void *rb, int n2,
                     MPI_Datatype t2) {
  long long s = args_bytes(n1, t1), r = args_bytes(n2, t2);
  if (s < 0 || r < 0) return MPI_ERR_TYPE;
  if (s != r) return s > r ? MPI_ERR_TRUNCATE : MPI_ERR_ARG;
  return s && sb == rb && exec_type_named(t1) && exec_type_named(t2) ? MPI_ERR_BUFFER : 0;
}

/* Gatherv's and scatterv's vectors at the root: present, counts >= 0;
 * *any: whether a count is positive (the buffer is significant). */
static int vectors(const rargs *a, int p, int *any) {
  if (!a->counts || !a->displs) return MPI_ERR_ARG;
  for (int q = 0; q < p; q++)
    if (a->counts[q] < 0) return MPI_ERR_COUNT;
    else if (a->counts[q] > 0) *any = 1;
  return MPI_SUCCESS;
}

/* MPI error class of a's arguments on rank `rank` of p. */
static int check(const rargs *a, int p, int rank) {
  int g = a->coll == COLLC_COLL_GATHER || a->coll == COLLC_COLL_GATHERV, err;
  int v = coll_desc_of(a->coll)->counted, root = rank == a->root, any = 0;
  if ((err = args_root(a->root, p))) return err;
  if (root && v && (err = vectors(a, p, &any))) return err;
  int own = v && root ? a->counts[rank] : g ? a->rc : a->sc; /* the root's own block */
  if (g) { /* the send side everywhere; the receive side at the root */
    int ip = root && a->sb == MPI_IN_PLACE;
    if (a->sb == MPI_IN_PLACE && !root) return MPI_ERR_BUFFER;
    if (!ip && (err = side(a->sb, a->sc, a->st))) return err;
    if (!root) return MPI_SUCCESS;
    if (a->rb == MPI_IN_PLACE) return MPI_ERR_BUFFER;
    if ((err = side(a->rb, v ? any : a->rc, a->rt))) return err;
    return ip ? MPI_SUCCESS : own_block(a->sb, a->sc, a->st, a->rb, own, a->rt);
  }
  int ip = root && a->rb == MPI_IN_PLACE; /* scatter: the mirror image */
  if (a->rb == MPI_IN_PLACE && !root) return MPI_ERR_BUFFER;
  if (!ip && (err = side(a->rb, a->rc, a->rt))) return err;
  if (!root) return MPI_SUCCESS;
  if (a->sb == MPI_IN_PLACE) return MPI_ERR_BUFFER;
  if ((err = side(a->sb, v ? any : a->sc, a->st))) return err;
  return ip ? MPI_SUCCESS : own_block(a->sb, own, a->st, a->rb, a->rc, a->rt);
}

/* ---- the plan's view of a call ---- */

/* Gather's and scatter's buffers and typing on this rank as the plan sees
 * them (see the header); ip: in place. */
typedef struct {
  const void *sb;
  void *rb;
  int sc, rc, ip;
  MPI_Datatype st, rt;
} uview;

static uview uniform_of(const rargs *a, int rank) {
  int root = rank == a->root, g = a->coll == COLLC_COLL_GATHER;
  uview u = {a->sb, a->rb, a->sc, a->rc, 0, a->st, a->rt};
  if (!root && g) u.rc = u.sc, u.rt = u.st, u.rb = NULL;  /* its receive side is its block */
  if (!root && !g) u.sc = u.rc, u.st = u.rt, u.sb = NULL; /* its send side likewise */
  if (root && !g && a->rb == MPI_IN_PLACE)                /* RECV is the input */
    u.sb = MPI_IN_PLACE, u.rb = (void *)a->sb, u.rc = u.sc, u.rt = u.st;
  u.ip = u.sb == MPI_IN_PLACE;
  return u;
}

/* Gather and scatter: d's buffers, typing and block. */
static void uniform_view(const rargs *a, dispatch_call *d) {
  int g = a->coll == COLLC_COLL_GATHER, root = d->spec.rank == a->root;
  uview u = uniform_of(a, d->spec.rank);
  d->sendbuf = u.sb, d->recvbuf = u.rb, d->spec.in_place = u.ip;
  d->bind = (exec_bind){u.sc, u.rc, u.st, u.rt, MPI_OP_NULL, 0};
  d->spec.count = g && root ? u.rc : u.sc;
  d->spec.unit_bytes = args_bytes(g && root ? u.rc : u.sc, g && root ? u.rt : u.st);
}

/* The call-cache key of gather or scatter a (the memo's too): its
 * arguments as given, buffers aside but for their MPI_IN_PLACE (bit 0:
 * send, bit 1: receive). With the rank, which a communicator's cache
 * fixes, they decide the plan's view (uniform_of), so the key needs no
 * per-call reading of it: a memo hit compares the arguments themselves. */
COLLC_HOT call_key uniform_key(const rargs *a) {
  return (call_key){.coll = a->coll,
                    .in_place = (a->sb == MPI_IN_PLACE) | (a->rb == MPI_IN_PLACE) << 1,
                    .root = a->root, .scount = a->sc, .rcount = a->rc, .stype = a->st,
                    .rtype = a->rt, .op = MPI_OP_NULL};
}

/* The key under which a gatherv or scatterv a is remembered as served
 * natively: uniform_key without its counts, which decide nothing
 * (root_counts), so that the memo may hold it. A plan found under such a
 * key is never run (fast: it is the slow path's, which compares counts). */
COLLC_HOT call_key native_key(const rargs *a) {
  call_key k = uniform_key(a);
  k.scount = k.rcount = 0;
  return k;
}

/* The memo's fast path of call a (nb: nonblocking): 1 when it is to be
 * made natively. Which collectives have counts is coll_desc_of's .counted,
 * spelled out here so that it folds at compile time (a call would cost the
 * entry point a stack frame); should the two disagree every gatherv or
 * scatterv would miss the memo, which tests/hot_cost.sh fails. */
COLLC_HOT int hot_native(const rargs *a, MPI_Comm comm, int nb) {
  int v = a->coll == COLLC_COLL_GATHERV || a->coll == COLLC_COLL_SCATTERV;
  call_key k = v ? native_key(a) : uniform_key(a);
  return memo_native(comm, &k, nb, a->sb, a->rb) != NULL;
}

/* The root's own block of gatherv or scatterv d copied between its two
 * typings (local): the user's arguments. MPI_SUCCESS or an MPI code. */
static int own_block_copy(const dispatch_call *d) {
  int me = d->spec.rank, g = d->spec.coll == COLLC_COLL_GATHERV;
  MPI_Aint lb, ext;
  PMPI_Type_get_extent(g ? d->user.rt : d->user.st, &lb, &ext);
  if (g)
    return PMPI_Sendrecv(d->user.sb, d->user.sc, d->user.st, 0, 0,
                         (char *)d->user.rb + (MPI_Aint)d->vdispls[me] * ext, d->vcounts[me],
                         d->user.rt, 0, 0, MPI_COMM_SELF, MPI_STATUS_IGNORE);
  return PMPI_Sendrecv((const char *)d->user.sb + (MPI_Aint)d->vdispls[me] * ext, d->vcounts[me],
                       d->user.st, 0, 0, d->user.rb, d->user.rc, d->user.rt, 0, 0, MPI_COMM_SELF,
                       MPI_STATUS_IGNORE);
}

/* Gatherv and scatterv: the counts (c, dsp: p of them) and d's view; the
 * root's typing of its own block copied into place first when it is not
 * the block's (then in place; a persistent request's at each start).
 * MPI_SUCCESS or the copy's error. */
static int counted_view(const rargs *a, dispatch_call *d, int64_t *c, int64_t *dsp) {
  int p = d->spec.p, me = d->spec.rank, root = me == a->root, g = a->coll == COLLC_COLL_GATHERV;
  int64_t total = 0, shift = 0;
  MPI_Datatype elem = g ? (root ? a->rt : a->st) : (root ? a->st : a->rt), own = g ? a->st : a->rt;
  for (int q = 0; q < p; q++) c[q] = root ? a->counts[q] : q == me ? (g ? a->sc : a->rc) : 0;
  for (int q = 0; q < p; q++) total += c[q];
  for (int q = 0; root && q < p; q++)
    if (a->displs[q] < shift) shift = a->displs[q];
  for (int q = 0; root && q < p; q++) dsp[q] = (int64_t)a->displs[q] - shift;
  MPI_Aint lb, ext;
  PMPI_Type_get_extent(elem, &lb, &ext);
  char *base = root ? (char *)(g ? a->rb : (void *)a->sb) + shift * ext : NULL;
  d->spec.counts = c, d->spec.displs = root ? dsp : NULL, d->spec.count = total;
  d->spec.unit_bytes = args_bytes(1, elem);
  d->bind = (exec_bind){1, 1, elem, elem, MPI_OP_NULL, 0};
  d->sendbuf = g ? a->sb : NULL, d->recvbuf = g ? base : a->rb;
  if (root && !g) d->sendbuf = base;
  int ip = root && (g ? a->sb : a->rb) == MPI_IN_PLACE;
  int n = g ? a->sc : a->rc, mine = root ? a->counts[me] : 0, rc;
  if (root && !ip && (own != elem || n != mine)) { /* the own block into place, locally: */
    if (d->request) d->prestart = own_block_copy;      /* at each start */
    else if ((rc = own_block_copy(d))) return rc;      /* now, before the call-cache lookup */
    ip = 1;                                            /* (whose key says in place) */
  }
  if (ip && !g) d->recvbuf = base;
  if (ip) d->sendbuf = MPI_IN_PLACE;
  d->spec.in_place = ip;
  return MPI_SUCCESS;
}

/* The call-cache key of counted call d (after its view). */
static call_key counted_key(const dispatch_call *d) {
  int ip = d->spec.in_place;
  return (call_key){.coll = d->spec.coll, .in_place = ip, .root = d->spec.root,
                    .scount = ip ? 0 : d->bind.sendcount, .rcount = d->bind.recvcount,
                    .stype = ip ? MPI_DATATYPE_NULL : d->bind.sendtype, .rtype = d->bind.recvtype,
                    .op = MPI_OP_NULL, .chash = binding_chash(&d->spec),
                    .counts = d->spec.counts, .displs = d->spec.displs};
}

/* The fast path of call a (view d) of the default selection (its request
 * req; NULL: blocking): FAST_* as dispatch_fast, *rc the result unless
 * FAST_MISS (then d->ck is *k). */
static int fast(const rargs *a, dispatch_call *d, call_key *k, MPI_Request *req, int *rc) {
  int v = coll_desc_of(a->coll)->counted, nb = req != NULL;
  if (v) { /* counted: native remembered under native_key, which the memo may hold */
    collc_state *st;
    *k = native_key(a);
    const call_entry *e = dispatch_fast_find(d->comm, k, nb, &st);
    if (e && native_usable(e, st, nb)) {
      stats_add(k->coll + (nb ? COLLC_COLL_COUNT : 0), e->algo, e->src, e->bytes);
      return (*rc = nb ? d->inative(d, req) : d->native(d)), FAST_NATIVE;
    }
    if (!nb || !e) { /* (blocking: a plan is not remembered, the binding cache compares counts) */
      d->ck = e ? NULL : k;
      return FAST_MISS;
    }
  }
  *k = v ? counted_key(d) : uniform_key(a); /* (a nonblocking plan: by its counts) */
  int how = req ? nb_fast(d->comm, k, d->sendbuf, d->recvbuf, req, rc)
                : dispatch_fast(d->comm, k, d->sendbuf, d->recvbuf, rc);
  if (how == FAST_NATIVE) *rc = req ? d->inative(d, req) : d->native(d);
  if (how == FAST_MISS) d->ck = k;
  return how;
}

/* The forced-call cache of blocking call a (view d) naming text: as fast()
 * (*k its key, uniform_key: gather and scatter only). */
static int forced_fast(const rargs *a, dispatch_call *d, call_key *k, const char *text, int *rc) {
  *k = uniform_key(a);
  int how = dispatch_forced(d->comm, k, text, d->sendbuf, d->recvbuf, rc);
  if (how == FAST_NATIVE) *rc = d->native(d);
  if (how == FAST_MISS) d->ck = k, d->ftext = text;
  return how;
}

/* Validate and run rooted call a on comm with algorithm forced (NULL: the
 * selection, through the call caches), or with pa make its persistent
 * request (pa->oneshot: a nonblocking call's). */
static int rooted(const rargs *a, const char *forced, MPI_Comm comm, const persist_args *pa) {
  int64_t c[ROOTED_MAXP + 3], dsp[ROOTED_MAXP]; /* (c: + 3 for the agreement round) */
  char hint[256];
  int inter, p = 1, rank = 0, rc, err = args_comm(comm, &inter);
  if (err) return collc_raise(MPI_COMM_NULL, err);
  PMPI_Comm_size(comm, &p);
  PMPI_Comm_rank(comm, &rank);
  dispatch_call d = {.spec = {.coll = a->coll, .p = p, .rank = rank, .root = a->root,
                              .commutative = 1},
                     .bind = {a->sc, a->rc, a->st, a->rt, MPI_OP_NULL, 0}, /* (as given) */
                     .comm = comm, .native = natives[a->coll], .inative = inatives[a->coll],
                     .vcounts = a->counts, .vdispls = a->displs,
                     .user = {a->sb, a->rb, a->sc, a->rc, a->st, a->rt}};
  int v = coll_desc_of(a->coll)->counted;
  d.vown = v ? c : NULL;
  if ((err = dispatch_persist(&d, pa, hint, sizeof hint))) return collc_raise(comm, err);
  if (inter || (v && p > ROOTED_MAXP)) return dispatch_native(&d, 0);
  if (on_device(a->sb, a->rb)) return dispatch_device_native(&d, 0); /* (README: GPU buffers) */
  if ((err = check(a, p, rank))) return collc_raise(comm, err);
  if (v && (err = counted_view(a, &d, c, dsp))) return collc_raise(comm, err);
  if (!v) uniform_view(a, &d);
  call_key k;
  if (!forced && (!pa || pa->oneshot) && fast(a, &d, &k, d.ireq, &rc) != FAST_MISS) return rc;
  if (forced && !v && !pa && forced_fast(a, &d, &k, forced, &rc) != FAST_MISS) return rc;
  int64_t mine = v ? c[rank] : 1, all = v ? d.spec.count : p; /* (the native's bytes) */
  return dispatch(&d, forced, (rank == a->root ? all - mine : mine) * d.spec.unit_bytes);
}

/* ---- entry points ---- */

int collc_gather_algo(const char *algorithm, const void *sendbuf, int sendcount,
                      MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                      int root, MPI_Comm comm) {
  rargs a = {COLLC_COLL_GATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
             NULL, NULL, root};
  if (!algorithm) return collc_raise(comm, MPI_ERR_ARG);
  return rooted(&a, algorithm, comm, NULL);
}

/* MPI_Gather behind the memo (a miss): apart, so that the memo's hit
 * builds no rargs in memory and makes only its tail call. */
static __attribute__((noinline)) int gather_slow(const void *sendbuf, int sendcount,
                                                 MPI_Datatype sendtype, void *recvbuf,
                                                 int recvcount, MPI_Datatype recvtype, int root,
                                                 MPI_Comm comm) {
  rargs a = {COLLC_COLL_GATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
             NULL, NULL, root};
  if (config_get()->disable)
    return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  return rooted(&a, NULL, comm, NULL);
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  rargs a = {COLLC_COLL_GATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
             NULL, NULL, root};
  if (hot_native(&a, comm, 0))
    return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  return gather_slow(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                MPI_Request *request) {
  rargs a = {COLLC_COLL_GATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
             NULL, NULL, root};
  if ((request && hot_native(&a, comm, 1)) || config_get()->disable)
    return PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                        request);
  return rooted(&a, NULL, comm, &(persist_args){.request = request, .oneshot = 1});
}

int MPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                    MPI_Request *request) {
  rargs a = {COLLC_COLL_GATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
             NULL, NULL, root};
#ifdef PINIT
  if (config_get()->disable)
    return PINIT(Gather)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                         info, request);
#endif
  return rooted(&a, NULL, comm, &(persist_args){.info = info, .request = request});
}

int collc_scatter_algo(const char *algorithm, const void *sendbuf, int sendcount,
                       MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, int root, MPI_Comm comm) {
  rargs a = {COLLC_COLL_SCATTER, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
             NULL, NULL, root};
  if (!algorithm) return collc_raise(comm, MPI_ERR_ARG);
  return rooted(&a, algorithm, comm, NULL);
}

/* MPI_Scatter behind the memo (a miss): apart, so that the memo's hit
 * builds no rargs in memory and makes only its tail call. */
static __attribute__((noinline)) int scatter_slow(const void *sendbuf, int sendcount,
                                                  MPI_Datatype sendtype, void *recvbuf,
                                                  int recvcount, MPI_Datatype recvtype, int root,
                                                  MPI_Comm comm) {
  rargs a = {COLLC_COLL_SCATTER, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
             NULL, NULL, root};
  if (config_get()->disable)
    return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  return rooted(&a, NULL, comm, NULL);
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  rargs a = {COLLC_COLL_SCATTER, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
             NULL, NULL, root};
  if (hot_native(&a, comm, 0))
    return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  return scatter_slow(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request) {
  rargs a = {COLLC_COLL_SCATTER, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
             NULL, NULL, root};
  if ((request && hot_native(&a, comm, 1)) || config_get()->disable)
    return PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                         request);
  return rooted(&a, NULL, comm, &(persist_args){.request = request, .oneshot = 1});
}

int MPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                     MPI_Info info, MPI_Request *request) {
  rargs a = {COLLC_COLL_SCATTER, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
             NULL, NULL, root};
#ifdef PINIT
  if (config_get()->disable)
    return PINIT(Scatter)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                          comm, info, request);
#endif
  return rooted(&a, NULL, comm, &(persist_args){.info = info, .request = request});
}

int collc_gatherv_algo(const char *algorithm, const void *sendbuf, int sendcount,
                       MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                       const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  rargs a = {COLLC_COLL_GATHERV, sendbuf, sendcount, sendtype, recvbuf, 0, recvtype,
             recvcounts, displs, root};
  if (!algorithm) return collc_raise(comm, MPI_ERR_ARG);
  return rooted(&a, algorithm, comm, NULL);
}

/* MPI_Gatherv behind the memo (a miss): apart, so that the memo's hit
 * builds no rargs in memory and makes only its tail call. */
static __attribute__((noinline)) int gatherv_slow(const void *sendbuf, int sendcount,
                                                  MPI_Datatype sendtype, void *recvbuf,
                                                  const int recvcounts[], const int displs[],
                                                  MPI_Datatype recvtype, int root, MPI_Comm comm) {
  rargs a = {COLLC_COLL_GATHERV, sendbuf, sendcount, sendtype, recvbuf, 0, recvtype,
             recvcounts, displs, root};
  if (config_get()->disable)
    return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                        root, comm);
  return rooted(&a, NULL, comm, NULL);
}

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm) {
  rargs a = {COLLC_COLL_GATHERV, sendbuf, sendcount, sendtype, recvbuf, 0, recvtype,
             recvcounts, displs, root};
  if (hot_native(&a, comm, 0))
    return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                        root, comm);
  return gatherv_slow(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                      comm);
}

int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request *request) {
  rargs a = {COLLC_COLL_GATHERV, sendbuf, sendcount, sendtype, recvbuf, 0, recvtype,
             recvcounts, displs, root};
  if ((request && hot_native(&a, comm, 1)) || config_get()->disable)
    return PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                         root, comm, request);
  return rooted(&a, NULL, comm, &(persist_args){.request = request, .oneshot = 1});
}

int MPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                     MPI_Comm comm, MPI_Info info, MPI_Request *request) {
  rargs a = {COLLC_COLL_GATHERV, sendbuf, sendcount, sendtype, recvbuf, 0, recvtype,
             recvcounts, displs, root};
#ifdef PINIT
  if (config_get()->disable)
    return PINIT(Gatherv)(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                          root, comm, info, request);
#endif
  return rooted(&a, NULL, comm, &(persist_args){.info = info, .request = request});
}

int collc_scatterv_algo(const char *algorithm, const void *sendbuf, const int sendcounts[],
                        const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        MPI_Datatype recvtype, int root, MPI_Comm comm) {
  rargs a = {COLLC_COLL_SCATTERV, sendbuf, 0, sendtype, recvbuf, recvcount, recvtype,
             sendcounts, displs, root};
  if (!algorithm) return collc_raise(comm, MPI_ERR_ARG);
  return rooted(&a, algorithm, comm, NULL);
}

/* MPI_Scatterv behind the memo (a miss): apart, so that the memo's hit
 * builds no rargs in memory and makes only its tail call. */
static __attribute__((noinline)) int scatterv_slow(const void *sendbuf, const int sendcounts[],
                                                   const int displs[], MPI_Datatype sendtype,
                                                   void *recvbuf, int recvcount,
                                                   MPI_Datatype recvtype, int root, MPI_Comm comm) {
  rargs a = {COLLC_COLL_SCATTERV, sendbuf, 0, sendtype, recvbuf, recvcount, recvtype,
             sendcounts, displs, root};
  if (config_get()->disable)
    return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                         root, comm);
  return rooted(&a, NULL, comm, NULL);
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm) {
  rargs a = {COLLC_COLL_SCATTERV, sendbuf, 0, sendtype, recvbuf, recvcount, recvtype,
             sendcounts, displs, root};
  if (hot_native(&a, comm, 0))
    return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                         root, comm);
  return scatterv_slow(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                       comm);
}

int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request *request) {
  rargs a = {COLLC_COLL_SCATTERV, sendbuf, 0, sendtype, recvbuf, recvcount, recvtype,
             sendcounts, displs, root};
  if ((request && hot_native(&a, comm, 1)) || config_get()->disable)
    return PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                          root, comm, request);
  return rooted(&a, NULL, comm, &(persist_args){.request = request, .oneshot = 1});
}

int MPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[],
                      MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                      int root, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
  rargs a = {COLLC_COLL_SCATTERV, sendbuf, 0, sendtype, recvbuf, recvcount, recvtype,
             sendcounts, displs, root};
#ifdef PINIT
  if (config_get()->disable)
    return PINIT(Scatterv)(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                           root, comm, info, request);
#endif
  return rooted(&a, NULL, comm, &(persist_args){.info = info, .request = request});
}

#ifdef COLLC_MPIX_INIT
int MPIX_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                      MPI_Comm comm, MPI_Info info, MPI_Request *request) {
  return MPI_Gatherv_init(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                          root, comm, info, request);
}

int MPIX_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[],
                       MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                       int root, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
  return MPI_Scatterv_init(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                           root, comm, info, request);
}

int MPIX_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                     MPI_Request *request) {
  return MPI_Gather_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                         info, request);
}

int MPIX_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                      MPI_Info info, MPI_Request *request) {
  return MPI_Scatter_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                          comm, info, request);
}
#endif
