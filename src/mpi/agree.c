/* agree.c - the agreement rounds: what MPI gives only some ranks, made
 * known to every rank for an algorithm that needs it (collc_algo.agrees).
 *
 * A blocking or persistent call makes its round at once (dispatch_agree);
 * a nonblocking call starts it (dispatch_agree_start, a native
 * nonblocking collective on its communicator, so in every rank's call
 * order) and compiles its plan when it completes (nonblocking.c). The
 * selection text is the same on every rank, so all ranks make a round or
 * none. A call that makes one is never remembered in the call cache (d->ck
 * cleared): a rank's key there is its own arguments, while whether the
 * next call may skip the round depends on every rank's, so each call
 * makes it.
 *   gatherv, scatterv: the root's counts (one allreduce of p + 2 values);
 *   alltoallv: every rank's send counts (one allgather of p + 1 values a
 *   rank, p (p + 1) in all; at most AGREE_MAXP ranks). */
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "dispatch.h"

#define AGREE_MAXP 256 /* alltoallv: the matrix, 5 p^2 values, is 2.6 MB there */

/* Start the gatherv or scatterv round of d in c = d->vown (p + 3 values):
 * the root's p counts (the others give zeros), then the largest and the
 * negated smallest element size, reduced by an allreduce (MAX); c[p + 2]
 * keeps this rank's own count. *q: its request. */
static int root_start(dispatch_call *d, MPI_Request *q) {
  int p = d->spec.p, me = d->spec.rank;
  int64_t *c = d->vown;
  c[p + 2] = c[me];
  if (me != d->spec.root) memset(c, 0, (size_t)p * sizeof *c);
  c[p] = d->spec.unit_bytes, c[p + 1] = -d->spec.unit_bytes;
#ifdef SMPI_SHARED_MALLOC /* (blocking: a polling loop never lets simulated time advance) */
  *q = MPI_REQUEST_NULL;
  return PMPI_Allreduce(MPI_IN_PLACE, c, p + 2, MPI_INT64_T, MPI_MAX, d->comm);
#else
  return PMPI_Iallreduce(MPI_IN_PLACE, c, p + 2, MPI_INT64_T, MPI_MAX, d->comm, q);
#endif
}

/* The root_start round of d completed: with one element size on every
 * rank (the tree's units), d's spec holds the root's counts and total,
 * spec.agreed; else it stays as it was (the algorithm does not fit, on
 * every rank alike). */
static void root_end(dispatch_call *d) {
  int p = d->spec.p, me = d->spec.rank;
  int64_t *c = d->vown, total = 0;
  if (c[p] != -c[p + 1]) { /* (element sizes differ: as before) */
    if (me != d->spec.root) memset(c, 0, (size_t)p * sizeof *c), c[me] = c[p + 2];
    return;
  }
  for (int q = 0; q < p; q++) total += c[q];
  d->spec.count = total, d->spec.agreed = 1;
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

/* Start the alltoallv round of d in m (sends_values): every rank's send
 * side (in place: its receive side) and unit size, allgathered; *q its
 * request. */
static int sends_start(dispatch_call *d, int64_t *m, MPI_Request *q) {
  int p = d->spec.p, me = d->spec.rank, side = d->spec.in_place ? A2AV_RECV : A2AV_SEND;
  size_t row = (size_t)p + 1;
  memcpy(m + me * row, d->spec.counts + side * p, (size_t)p * sizeof *m);
  m[me * row + p] = unit_size(d);
#ifdef SMPI_SHARED_MALLOC /* (as root_start) */
  *q = MPI_REQUEST_NULL;
  return PMPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, m, (int)row, MPI_INT64_T, d->comm);
#else
  return PMPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, m, (int)row, MPI_INT64_T, d->comm, q);
#endif
}

/* The sends_start round of d in m completed: with one unit size on every
 * rank, d's spec then holds every rank's vectors (spec.vall) in m: the
 * other ranks' send sides, this rank's both sides and displacements,
 * zeros elsewhere (what a generator may read: hier_a2av.c), and the unit's
 * bytes (spec.unit_bytes: the same plan on a larger element needs a larger
 * segment, so it keys the decision); else it stays as it was. */
static void sends_end(dispatch_call *d, int64_t *m) {
  int p = d->spec.p, me = d->spec.rank, side = d->spec.in_place ? A2AV_RECV : A2AV_SEND;
  size_t row = (size_t)p + 1, vec = 2 * (size_t)p, vb = vec * sizeof(int64_t);
  for (int r = 0; r < p; r++)
    if (m[r * row + p] != m[p] || m[p] < 0) return; /* (as before, on every rank) */
  int64_t *C = m + p * row, *D = C + p * vec;
  memset(C, 0, (size_t)p * vb), memset(D, 0, (size_t)p * vb);
  for (int r = 0; r < p; r++) memcpy(C + r * vec + side * p, m + r * row, (size_t)p * sizeof *m);
  memcpy(C + me * vec, d->spec.counts, vb);
  if (d->spec.displs) memcpy(D + me * vec, d->spec.displs, vb), d->spec.displs = D;
  d->spec.counts = C, d->spec.vall = 1, d->spec.unit_bytes = m[p]; /* (the key: select_bytes) */
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

/* Whether text names for d an algorithm that needs a round. */
static int agrees(const dispatch_call *d, const char *text) {
  const coll_desc *c = coll_desc_of(d->spec.coll);
  return algo_text_agrees(d->spec.coll, text) && (c->counts_local || (c->root_counts && d->vown));
}

int dispatch_agree_needed(const dispatch_call *d, const char *text) {
  return agrees(d, text) && (coll_desc_of(d->spec.coll)->root_counts || d->spec.p <= AGREE_MAXP);
}

size_t dispatch_agree_values(const dispatch_call *d) {
  size_t p = (size_t)d->spec.p;
  return coll_desc_of(d->spec.coll)->root_counts ? 0 : p * (p + 1) + 4 * p * p;
}

int dispatch_agree_start(dispatch_call *d, int64_t *m, MPI_Request *q) {
  return coll_desc_of(d->spec.coll)->root_counts ? root_start(d, q) : sends_start(d, m, q);
}

void dispatch_agree_end(dispatch_call *d, int64_t *m) {
  if (coll_desc_of(d->spec.coll)->root_counts) root_end(d);
  else sends_end(d, m);
}

int dispatch_agree(dispatch_call *d, const char *text) {
  MPI_Request q;
  collc_state *st;
  int64_t *m = NULL;
  if (!agrees(d, text)) return MPI_SUCCESS;
  d->ck = NULL; /* (beyond AGREE_MAXP too: the text does not fit, every call decides) */
  if (!dispatch_agree_needed(d, text)) return MPI_SUCCESS;
  if (!coll_desc_of(d->spec.coll)->root_counts &&
      !((st = state_get(d->comm, 1)) && (m = scratch(st, dispatch_agree_values(d)))))
    return MPI_ERR_NO_MEM;
  int rc = dispatch_agree_start(d, m, &q);
  if (rc == MPI_SUCCESS && q != MPI_REQUEST_NULL) rc = request_wait_native(&q); /* (ours move on) */
  if (rc == MPI_SUCCESS) dispatch_agree_end(d, m);
  return rc;
}
