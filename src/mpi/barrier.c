/* barrier.c - MPI_Barrier, MPI_Ibarrier and MPI_Barrier_init (Open MPI
 * 4.1: MPIX_Barrier_init) over PMPI, and collc's entry points for them.
 *
 * A barrier is a call without buffers: its spec has no units and no
 * bytes, yet it always runs (coll_desc.synchronizes), from the same
 * cached decisions, plans and requests as every other collective. */
#include <stdlib.h>
#include "collc.h"
#include "args.h"
#include "dispatch.h"
#include "../plan/config.h"
#include "pinit.h"

static int native_barrier(const dispatch_call *d) { return PMPI_Barrier(d->comm); }

static int inative_barrier(const dispatch_call *d, MPI_Request *r) {
  return PMPI_Ibarrier(d->comm, r);
}

/* The call-cache key of every barrier. */
static const call_key barrier_key = {.coll = COLLC_COLL_BARRIER, .stype = MPI_DATATYPE_NULL,
                                     .rtype = MPI_DATATYPE_NULL, .op = MPI_OP_NULL};

/* Validate and run one barrier on comm with algorithm forced (NULL:
 * selection), or with pa make its persistent (or nonblocking) request; ck:
 * the call-cache key of a call of the default selection (else NULL). */
static int barrier(const char *forced, MPI_Comm comm, const persist_args *pa, const call_key *ck) {
  char hint[256];
  int inter, p = 1, rank = 0, err = args_comm(comm, &inter);
  if (err) return collc_raise(MPI_COMM_NULL, err);
  PMPI_Comm_size(comm, &p);
  PMPI_Comm_rank(comm, &rank);
  dispatch_call d = {.spec = {.coll = COLLC_COLL_BARRIER, .p = p, .rank = rank},
                     .bind = {1, 1, MPI_BYTE, MPI_BYTE, MPI_OP_NULL}, /* (a unit: a byte) */
                     .comm = comm,
                     .native = native_barrier,
                     .inative = inative_barrier,
                     .ck = ck,
                     .ftext = ck ? forced : NULL};
  if ((err = dispatch_persist(&d, pa, hint, sizeof hint))) return collc_raise(comm, err);
  if (inter) return dispatch_native(&d, 0);
  return dispatch(&d, forced, 0);
}

/* collc_barrier behind the memo (a tail call of the entry points;
 * COLLC_DISABLE hands it to the library). */
static __attribute__((noinline)) int barrier_slow(MPI_Comm comm) {
  int rc, how = dispatch_fast(comm, &barrier_key, NULL, NULL, &rc);
  if (how == FAST_DONE) return rc;
  if (how == FAST_NATIVE || config_get()->disable) return PMPI_Barrier(comm);
  return barrier(NULL, comm, NULL, &barrier_key);
}

/* The same, the memo first. */
COLLC_HOT int barrier_call(MPI_Comm comm) {
  int rc, how = dispatch_memo(comm, &barrier_key, NULL, NULL, &rc);
  if (how == FAST_NATIVE) return PMPI_Barrier(comm);
  if (how == FAST_DONE) return rc;
  return barrier_slow(comm);
}

int collc_barrier(MPI_Comm comm) { return barrier_call(comm); }

int MPI_Barrier(MPI_Comm comm) { return barrier_call(comm); }

int collc_barrier_algo(const char *algorithm, MPI_Comm comm) {
  if (!algorithm) return collc_raise(comm, MPI_ERR_ARG);
  int rc, how = dispatch_forced(comm, &barrier_key, algorithm, NULL, NULL, &rc);
  if (how == FAST_DONE) return rc;
  if (how == FAST_NATIVE) return PMPI_Barrier(comm);
  return barrier(algorithm, comm, NULL, &barrier_key);
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request) {
  int rc, how = nb_fast(comm, &barrier_key, NULL, NULL, request, &rc);
  if (how == FAST_NATIVE || (how == FAST_MISS && config_get()->disable))
    return PMPI_Ibarrier(comm, request);
  if (how == FAST_DONE) return rc;
  return barrier(NULL, comm, &(persist_args){.request = request, .oneshot = 1}, &barrier_key);
}

int collc_ibarrier_algo(const char *algorithm, MPI_Comm comm, MPI_Request *request) {
  if (!algorithm) return collc_raise(comm, MPI_ERR_ARG);
  return barrier(algorithm, comm, &(persist_args){.request = request, .oneshot = 1}, NULL);
}

int MPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request) {
#ifdef PINIT
  if (config_get()->disable) return PINIT(Barrier)(comm, info, request);
#endif
  return barrier(NULL, comm, &(persist_args){.info = info, .request = request}, NULL);
}

#ifdef COLLC_MPIX_INIT
int MPIX_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request) {
  return MPI_Barrier_init(comm, info, request);
}
#endif

collc_prog *barrier_test_break(const collc_spec *s, collc_prog *P) {
  const char *h = getenv("COLLC_TEST_BARRIER_EARLY");
  int at = 0, open = 0;
  if (!P || !h || s->coll != COLLC_COLL_BARRIER || atoi(h) != s->rank) return P;
  for (int a = 0; a < P->nins; a++) { /* (the builder's batches: slots from 0, one WAIT) */
    collc_instr I = P->ins[a];
    if (I.op == COLLC_OP_RECV || I.op == COLLC_OP_AWAIT) continue;
    if (ops_flags(I.op) & OPF_POSTS) I.slot = open++;
    if (I.op == COLLC_OP_WAIT) I.slot = 0, I.n = open, open = 0;
    if (I.op == COLLC_OP_WAIT && I.n == 0) I.op = COLLC_OP_NOP;
    P->ins[at++] = I;
  }
  P->nins = at;
  return P;
}
