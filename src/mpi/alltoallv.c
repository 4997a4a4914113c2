/* alltoallv.c - MPI_Alltoallv, MPI_Ialltoallv and MPI_Alltoallv_init over
 * PMPI, and collc's entry points for them.
 *
 * What decides, what binds. Each rank passes only its own counts (what it
 * sends each rank, what it receives from each): no rank knows another's.
 * So the decision (which algorithm, or native) is made on what every rank
 * shares - p, the collective, the caller's MPI_IN_PLACE, the selection
 * text - and never on counts (decision_key.chash 0, spec.count 0,
 * unit_bytes 1 on every rank: no rank can tell that nothing moves
 * anywhere). This rank's counts and displacements bind its own plan
 * (binding and call-cache keys; a hit compares them in full), which posts
 * a message exactly where its count is nonzero - as the peer's does, MPI
 * requiring matching signatures. No agreement round is needed.
 *
 * Units are elements: of sendtype in SEND, of recvtype in RECV.
 * Negative displacements move the buffer base (vsshift, vshift), undone for
 * the native call. A rank whose sendtype and recvtype differ in size copies
 * its own block locally (PMPI_Sendrecv on MPI_COMM_SELF: at the call, or a
 * persistent request's at each start, dispatch_call.prestart) and compiles
 * its program without it (such a call skips the call cache). Above
 * A2AV_MAXP ranks (the vectors live on the stack: nothing is allocated per
 * call) the calls are native. */
#include <limits.h>
#include "collc.h"
#include "args.h"
#include "dispatch.h"
#include "pinit.h"
#include "../plan/config.h"
#include "../exec/exec.h"

#define A2AV_MAXP 512

/* The user's arguments of an alltoallv call. */
typedef struct {
  const void *sb;
  const int *sc, *sd;
  MPI_Datatype st;
  void *rb;
  const int *rc, *rd;
  MPI_Datatype rt;
} a2av_args;

/* Whether a call a of the default selection on p ranks may be served
 * under its loose key: both sides' counts pass counts_usable (the receive
 * side alone in place), and the receive buffer is not MPI_IN_PLACE (an
 * error whose class collc gives). */
COLLC_HOT int loose_ok(const a2av_args *a, int p) {
  return a->rb != MPI_IN_PLACE && counts_usable(p, a->rc, a->rd) &&
         (a->sb == MPI_IN_PLACE || counts_usable(p, a->sc, a->sd));
}

/* Whether the memo says call a on comm (nb: nonblocking) is to be made
 * natively, its arguments passing loose_ok. */
COLLC_HOT int hot_native(const a2av_args *a, MPI_Comm comm, int nb) {
  call_key k = loose_key(COLLC_COLL_ALLTOALLV, a->sb, a->st, a->rt, MPI_OP_NULL);
  const call_memo *m = memo_native(comm, &k, nb, a->sb, a->rb);
  return m && loose_ok(a, m->p);
}

/* The buffers as the user gave them (the shifts undone). */
static const void *user_sb(const dispatch_call *d) {
  return d->sendbuf == MPI_IN_PLACE ? MPI_IN_PLACE : (const char *)d->sendbuf - d->vsshift;
}

static void *user_rb(const dispatch_call *d) { return (char *)d->recvbuf - d->vshift; }

/* d's native call, blocking and nonblocking (the user's arguments). */
static int native_a2av(const dispatch_call *d) {
  return PMPI_Alltoallv(user_sb(d), d->vscounts, d->vsdispls, d->bind.sendtype, user_rb(d),
                        d->vcounts, d->vdispls, d->bind.recvtype, d->comm);
}

static int inative_a2av(const dispatch_call *d, MPI_Request *r) {
  return PMPI_Ialltoallv(user_sb(d), d->vscounts, d->vsdispls, d->bind.sendtype, user_rb(d),
                         d->vcounts, d->vdispls, d->bind.recvtype, d->comm, r);
}

/* One side's p counts n[] and displacements dp[] into c[], dsp[] (zero
 * counts at offset 0), shifted to start at >= 0 (*shift: the smallest
 * displacement of a nonempty block, else 0); *total the counts' sum.
 * MPI_SUCCESS, MPI_ERR_ARG (no array) or MPI_ERR_COUNT. */
static int side_in(const int *n, const int *dp, int p, int64_t *c, int64_t *dsp,
                   int64_t *total, int64_t *shift) {
  if (!n || !dp) return MPI_ERR_ARG;
  *total = 0, *shift = 0;
  for (int q = 0; q < p; q++) {
    if (n[q] < 0) return MPI_ERR_COUNT;
    *total += c[q] = n[q];
    if (n[q] && dp[q] < *shift) *shift = dp[q];
  }
  for (int q = 0; q < p; q++) dsp[q] = n[q] ? (int64_t)dp[q] - *shift : 0;
  return MPI_SUCCESS;
}

/* Bytes between elements of t (its extent). */
static MPI_Aint extent_of(MPI_Datatype t) {
  MPI_Aint lb, ext;
  PMPI_Type_get_extent(t, &lb, &ext);
  return ext;
}

/* Bytes of one element of t into *size: MPI_SUCCESS or MPI_ERR_TYPE. */
static int type_size(MPI_Datatype t, MPI_Count *size) {
  if (t == MPI_DATATYPE_NULL || PMPI_Type_size_x(t, size) != MPI_SUCCESS) return MPI_ERR_TYPE;
  return MPI_SUCCESS;
}

/* A buffer for total elements of size bytes of t: NULL with data and a
 * predefined type is MPI_ERR_BUFFER (args_buffer's rule). */
static int buffer_ok(const void *b, int64_t total, MPI_Count size, MPI_Datatype t) {
  return !b && total * size > 0 && exec_type_named(t) ? MPI_ERR_BUFFER : MPI_SUCCESS;
}

/* Both sides of a into d's spec (c, dsp: 2p each) and buffers; MPI error
 * class of bad arguments. Each type is asked its size once (a hot path). */
static int vectors(const a2av_args *a, dispatch_call *d, int64_t *c, int64_t *dsp) {
  int p = d->spec.p, r = d->spec.rank, in_place = a->sb == MPI_IN_PLACE, err;
  int64_t rtot, stot = 0, rsh, ssh = 0;
  MPI_Count rsize = 0, ssize = 0;
  if (a->rb == MPI_IN_PLACE) return MPI_ERR_BUFFER;
  if ((err = type_size(a->rt, &rsize)) || (!in_place && (err = type_size(a->st, &ssize))))
    return err;
  if ((err = side_in(a->rc, a->rd, p, c + p, dsp + p, &rtot, &rsh))) return err;
  for (int q = 0; in_place && q < p; q++) c[q] = dsp[q] = 0; /* (unused: the receive side) */
  if (!in_place && (err = side_in(a->sc, a->sd, p, c, dsp, &stot, &ssh))) return err;
  if ((err = buffer_ok(a->rb, rtot, rsize, a->rt))) return err;
  if (!in_place && (err = buffer_ok(a->sb, stot, ssize, a->st))) return err;
  if (!in_place && a->sc[r] * ssize > a->rc[r] * rsize) return MPI_ERR_TRUNCATE;
  if (rsh) d->vshift = (long long)(rsh * extent_of(a->rt)), d->recvbuf = (char *)a->rb + d->vshift;
  if (ssh) d->vsshift = (long long)(ssh * extent_of(a->st)),
           d->sendbuf = (const char *)a->sb + d->vsshift;
  d->spec.counts = c, d->spec.displs = dsp;
  return MPI_SUCCESS;
}

/* A rank whose types differ in size: its own block copied (local; d's
 * prestart, see the header). */
static int own_block(const dispatch_call *d) {
  int r = d->spec.rank;
  const char *from = (const char *)user_sb(d) + (MPI_Aint)d->vsdispls[r] * extent_of(d->bind.sendtype);
  char *to = (char *)user_rb(d) + (MPI_Aint)d->vdispls[r] * extent_of(d->bind.recvtype);
  return PMPI_Sendrecv(from, d->vscounts[r], d->bind.sendtype, 0, 0, to, d->vcounts[r],
                       d->bind.recvtype, 0, 0, MPI_COMM_SELF, MPI_STATUS_IGNORE);
}

/* Bytes this rank sends other ranks (the native call's count). */
static long long sent_bytes(const a2av_args *a, const dispatch_call *d) {
  long long n = 0;
  int in_place = a->sb == MPI_IN_PLACE;
  for (int q = 0; q < d->spec.p; q++)
    if (q != d->spec.rank)
      n += in_place ? args_bytes(a->rc[q], a->rt) : args_bytes(a->sc[q], a->st);
  return n;
}

/* The fast path of a call of the default selection with key k: blocking
 * (req NULL) or nonblocking. FAST_* as dispatch_fast. */
static int fast(const a2av_args *a, dispatch_call *d, call_key *k, MPI_Request *req, int *rc) {
  int how = req ? nb_fast(d->comm, k, d->sendbuf, d->recvbuf, req, rc)
                : dispatch_fast(d->comm, k, d->sendbuf, d->recvbuf, rc);
  if (how == FAST_NATIVE)
    *rc = req ? PMPI_Ialltoallv(a->sb, a->sc, a->sd, a->st, a->rb, a->rc, a->rd, a->rt, d->comm, req)
              : PMPI_Alltoallv(a->sb, a->sc, a->sd, a->st, a->rb, a->rc, a->rd, a->rt, d->comm);
  if (how == FAST_MISS) d->ck = k;
  return how;
}

/* Validate and run alltoallv a on comm with algorithm forced (NULL: the
 * selection), or with pa make its persistent request or (oneshot) its
 * nonblocking one; cached: a call of the default selection (the call
 * caches). */
static int alltoallv(const a2av_args *a, const char *forced, MPI_Comm comm,
                     const persist_args *pa, int cached) {
  int64_t c[2 * A2AV_MAXP], dsp[2 * A2AV_MAXP];
  char hint[256];
  int inter, p = 1, rank = 0, rc, err = args_comm(comm, &inter);
  if (err) return collc_raise(MPI_COMM_NULL, err);
  PMPI_Comm_size(comm, &p);
  PMPI_Comm_rank(comm, &rank);
  int in_place = a->sb == MPI_IN_PLACE;
  dispatch_call d = {.spec = {.coll = COLLC_COLL_ALLTOALLV, .p = p, .rank = rank,
                              .unit_bytes = 1, .in_place = in_place, .commutative = 1},
                     .bind = {.sendcount = 1, .recvcount = 1, .sendtype = in_place ? a->rt : a->st,
                              .recvtype = a->rt, .op = MPI_OP_NULL},
                     .sendbuf = a->sb, .recvbuf = a->rb, .comm = comm,
                     .native = native_a2av, .inative = inative_a2av,
                     .vcounts = a->rc, .vdispls = a->rd, .vscounts = a->sc, .vsdispls = a->sd};
  if ((err = dispatch_persist(&d, pa, hint, sizeof hint))) return collc_raise(comm, err);
  if (inter || p > A2AV_MAXP) return dispatch_native(&d, 0); /* (before c[] is filled) */
  if (on_device(a->sb, a->rb)) return dispatch_device_native(&d, 0); /* (README: GPU buffers) */
  call_key lk = loose_key(COLLC_COLL_ALLTOALLV, a->sb, a->st, a->rt, MPI_OP_NULL);
  int loose = 0; /* (counts deciding nothing: remembered without them) */
  if (cached && (!pa || pa->oneshot) && !config_get()->stats && loose_ok(a, p)) {
    if (dispatch_loose(&d, &lk, &rc) == FAST_DONE) return rc; /* (unvalidated: the library's) */
    loose = d.ck != NULL;
  }
  if ((err = vectors(a, &d, c, dsp))) return collc_raise(comm, err);
  call_key k = {.coll = COLLC_COLL_ALLTOALLV, .in_place = in_place, .scount = 1, .rcount = 1,
                .stype = in_place ? MPI_DATATYPE_NULL : a->st, .rtype = a->rt,
                .op = MPI_OP_NULL, .chash = binding_chash(&d.spec), .counts = c, .displs = dsp};
  if (cached && !d.request && !loose && fast(a, &d, &k, d.ireq, &rc) != FAST_MISS) return rc;
  if (!in_place && args_bytes(1, a->st) != args_bytes(1, a->rt) && (c[rank] || c[p + rank])) {
    c[rank] = c[p + rank] = 0, d.ck = NULL; /* (its program leaves the own block out) */
    if (d.request) d.prestart = own_block; /* (at each start) */
    else if ((err = own_block(&d))) return collc_raise(comm, err);
  }
  return dispatch(&d, forced, sent_bytes(a, &d));
}

int collc_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  a2av_args a = {sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype};
  return alltoallv(&a, NULL, comm, NULL, 1);
}

int collc_alltoallv_algo(const char *algorithm, const void *sendbuf, const int sendcounts[],
                         const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                         const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                         MPI_Comm comm) {
  a2av_args a = {sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype};
  if (!algorithm) return collc_raise(comm, MPI_ERR_ARG);
  return alltoallv(&a, algorithm, comm, NULL, 0);
}

/* MPI_Alltoallv behind the memo (a miss): apart, so that the memo's hit
 * makes only its tail call. */
static __attribute__((noinline)) int alltoallv_slow(const void *sendbuf, const int sendcounts[],
                                                    const int sdispls[], MPI_Datatype sendtype,
                                                    void *recvbuf, const int recvcounts[],
                                                    const int rdispls[], MPI_Datatype recvtype,
                                                    MPI_Comm comm) {
  if (config_get()->disable)
    return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                          recvtype, comm);
  return collc_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                         recvtype, comm);
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  a2av_args a = {sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype};
  if (hot_native(&a, comm, 0))
    return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                          recvtype, comm);
  return alltoallv_slow(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                        recvtype, comm);
}

int collc_ialltoallv_algo(const char *algorithm, const void *sendbuf, const int sendcounts[],
                          const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                          const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                          MPI_Comm comm, MPI_Request *request) {
  a2av_args a = {sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype};
  if (!algorithm) return collc_raise(comm, MPI_ERR_ARG);
  return alltoallv(&a, algorithm, comm, &(persist_args){.request = request, .oneshot = 1}, 0);
}

int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request *request) {
  a2av_args a = {sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype};
  if ((request && hot_native(&a, comm, 1)) || config_get()->disable)
    return PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                           recvtype, comm, request);
  return alltoallv(&a, NULL, comm, &(persist_args){.request = request, .oneshot = 1}, 1);
}

int MPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                       MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                       const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request) {
  a2av_args a = {sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype};
#ifdef PINIT
  if (config_get()->disable)
    return PINIT(Alltoallv)(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                            recvtype, comm, info, request);
#endif
  return alltoallv(&a, NULL, comm, &(persist_args){.info = info, .request = request}, 0);
}

#ifdef COLLC_MPIX_INIT
int MPIX_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                        MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                        const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request) {
  return MPI_Alltoallv_init(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                            recvtype, comm, info, request);
}
#endif
