/* agree.c - the agreement rounds: what MPI gives only some ranks, made
 * known to every rank for an algorithm that needs it (collc_algo.agrees).
 *
 * A round is made by blocking and persistent calls only (a nonblocking
 * call may not wait for the other ranks: there the algorithm does not fit
 * and the call falls back). The selection text is the same on every rank,
 * so all ranks make a round or none. A call that makes one is never
 * remembered in the call cache (d->ck cleared): a rank's key there is its
 * own arguments, while whether the next call may skip the round depends on
 * every rank's, so each call makes it.
 *   gatherv, scatterv: the root's counts (one allreduce of p + 2 values);
 *   alltoallv: every rank's send counts (one allgather of p + 1 values a
 *   rank, p (p + 1) in all; at most AGREE_MAXP ranks). */
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "dispatch.h"

#define AGREE_MAXP 256 /* alltoallv: the matrix, 5 p^2 values, is 2.6 MB there */

#ifndef SMPI_SHARED_MALLOC /* (SMPI: a polling loop never lets simulated time advance) */
/* Complete collective *q started with rc, moving our requests on. */
static int finish(int rc, MPI_Request *q) {
  return rc == MPI_SUCCESS ? request_wait_native(q) : rc;
}
#endif

/* The gatherv or scatterv round into d->vown: the root's p counts (the
 * others give zeros), then the largest and the negated smallest element
 * size, by an allreduce (MAX). With one element size on every rank (the
 * tree's units), d's spec then holds the root's counts and total,
 * spec.agreed; else it stays as it was (the algorithm does not fit, on
 * every rank alike). MPI_SUCCESS or the reduction's error. */
static int agree_root_counts(dispatch_call *d) {
  int p = d->spec.p, me = d->spec.rank, rc;
  int64_t *c = d->vown, own = c[me], total = 0;
  if (me != d->spec.root) memset(c, 0, (size_t)p * sizeof *c);
  c[p] = d->spec.unit_bytes, c[p + 1] = -d->spec.unit_bytes;
#ifdef SMPI_SHARED_MALLOC /* (SMPI: see finish) */
  rc = PMPI_Allreduce(MPI_IN_PLACE, c, p + 2, MPI_INT64_T, MPI_MAX, d->comm);
#else
  MPI_Request q;
  rc = finish(PMPI_Iallreduce(MPI_IN_PLACE, c, p + 2, MPI_INT64_T, MPI_MAX, d->comm, &q), &q);
#endif
  if (rc == MPI_SUCCESS && c[p] != -c[p + 1]) { /* (element sizes differ: as before) */
    if (me != d->spec.root) memset(c, 0, (size_t)p * sizeof *c), c[me] = own;
    return MPI_SUCCESS;
  }
  for (int q = 0; q < p; q++) total += c[q];
  d->spec.count = total, d->spec.agreed = 1;
  return rc;
}

/* Bytes of the units of alltoallv call d if its send and receive
 * elements have one size (in place: the receive side's), else -1. */
static int64_t unit_size(const dispatch_call *d) {
  MPI_Count s = 0, r = 0;
  if (PMPI_Type_size_x(d->bind.recvtype, &r) ||
      (!d->spec.in_place && PMPI_Type_size_x(d->bind.sendtype, &s)))
    return -1;
  return r > 0 && (d->spec.in_place || s == r) ? (int64_t)r : -1;
}

/* st's scratch of n values (grown, kept: no allocation once it is large enough). */
static int64_t *scratch(collc_state *st, size_t n) {
  if (n > st->agreed_cap) {
    int64_t *m = realloc(st->agreed, n * sizeof *m);
    if (!m) return NULL;
    st->agreed = m, st->agreed_cap = n;
  }
  return st->agreed;
}

/* The alltoallv round: every rank's send side (in place: its receive
 * side) and unit size, allgathered. With one unit size on every rank,
 * d's spec then holds every rank's vectors (spec.vall) in st's scratch:
 * the other ranks' send sides, this rank's both sides and displacements,
 * zeros elsewhere (what a generator may read: hier_a2av.c), and the unit's
 * bytes (spec.unit_bytes: the same plan on a larger element needs a larger
 * segment, so it keys the decision); else it stays as it was. MPI_SUCCESS, MPI_ERR_NO_MEM or the allgather's error. */
static int agree_sends(dispatch_call *d) {
  int p = d->spec.p, me = d->spec.rank, side = d->spec.in_place ? A2AV_RECV : A2AV_SEND, rc;
  size_t row = (size_t)p + 1, vec = 2 * (size_t)p, vb = vec * sizeof(int64_t);
  collc_state *st = state_get(d->comm, 1);
  int64_t *m = st ? scratch(st, (size_t)p * (row + 2 * vec)) : NULL, *C, *D;
  if (!m) return MPI_ERR_NO_MEM;
  memcpy(m + me * row, d->spec.counts + side * p, (size_t)p * sizeof *m);
  m[me * row + p] = unit_size(d);
#ifdef SMPI_SHARED_MALLOC /* (SMPI: see finish) */
  rc = PMPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, m, (int)row, MPI_INT64_T, d->comm);
#else
  MPI_Request q;
  rc = finish(PMPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, m, (int)row, MPI_INT64_T,
                              d->comm, &q), &q);
#endif
  for (int r = 0; rc == MPI_SUCCESS && r < p; r++)
    if (m[r * row + p] != m[p] || m[p] < 0) return MPI_SUCCESS; /* (as before, on every rank) */
  if (rc) return rc;
  C = m + p * row, D = C + p * vec;
  memset(C, 0, (size_t)p * vb), memset(D, 0, (size_t)p * vb);
  for (int r = 0; r < p; r++) memcpy(C + r * vec + side * p, m + r * row, (size_t)p * sizeof *m);
  memcpy(C + me * vec, d->spec.counts, vb);
  if (d->spec.displs) memcpy(D + me * vec, d->spec.displs, vb), d->spec.displs = D;
  d->spec.counts = C, d->spec.vall = 1, d->spec.unit_bytes = m[p]; /* (the key: select_bytes) */
  return MPI_SUCCESS;
}

int dispatch_agree(dispatch_call *d, const char *text) {
  const coll_desc *c = coll_desc_of(d->spec.coll);
  if (!algo_text_agrees(d->spec.coll, text) || !(c->counts_local || (c->root_counts && d->vown)))
    return MPI_SUCCESS;
  d->ck = NULL;
  if (c->root_counts) return agree_root_counts(d);
  return d->spec.p <= AGREE_MAXP ? agree_sends(d) : MPI_SUCCESS;
}
