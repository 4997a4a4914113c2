/* nbwait.h - complete a nonblocking collective's request the way a test
 * asks, rotating through every MPI completion call, with native
 * point-to-point requests in the same lists (header-only; <mpi.h> only).
 *
 * Way k (k % NBW_WAYS): 0 MPI_Wait; 1 MPI_Test loop; 2 MPI_Waitall of
 * {native, ours, MPI_REQUEST_NULL}; 3 MPI_Waitany loop over {ours, native};
 * 4 MPI_Waitsome loop over {native, ours}; 5 MPI_Testall loop; 6 MPI_Testany
 * loop; 7 MPI_Testsome loop; 8 MPI_Request_get_status loop, then MPI_Wait.
 * The native requests are a self send and receive on MPI_COMM_SELF whose
 * data is checked too. Afterwards the handle must be MPI_REQUEST_NULL and,
 * where collc served the call (strict), the status empty: count 0, source
 * MPI_ANY_SOURCE, tag MPI_ANY_TAG (MPI leaves a collective's status fields
 * undefined: Open MPI's own give MPI_PROC_NULL and MPI_ANY_TAG, MPICH's 0
 * and 0, and Open MPI's reduce_scatter_block at p = 1 a nonzero count).
 * Anything else is reported as a message. */
#ifndef COLLC_NBWAIT_H
#define COLLC_NBWAIT_H

#include <mpi.h>
#include <stdio.h>

#define NBW_WAYS 9

static const char *const nbw_names[NBW_WAYS] = {
    "Wait", "Test", "Waitall", "Waitany", "Waitsome", "Testall", "Testany", "Testsome",
    "Request_get_status"};

/* Whether st is the empty status. */
static inline int nbw_empty(const MPI_Status *st) {
  int n = -1;
  MPI_Get_count(st, MPI_BYTE, &n);
  return n == 0 && st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG;
}

/* Complete *r (way k); 0, or an MPI error code; *msg gets what went wrong
 * in the completion itself (NULL if nothing). */
static inline int nbw_complete(MPI_Request *r, int k, int strict, const char **msg) {
  MPI_Request q[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  MPI_Status st[3], one;
  int in = 0, out = -1, rc = MPI_SUCCESS, flag = 0, idx = -1, n = 0, ind[3], mine = -1;
  *msg = NULL;
  k %= NBW_WAYS;
  if (k >= 2 && k <= 7) { /* a native pair alongside */
    MPI_Irecv(&in, 1, MPI_INT, 0, 7, MPI_COMM_SELF, &q[0]);
    out = 0x5eed;
    MPI_Isend(&out, 1, MPI_INT, 0, 7, MPI_COMM_SELF, &q[2]);
  }
  switch (k) {
  case 0: rc = MPI_Wait(r, &one); break;
  case 1: while (!rc && !flag) rc = MPI_Test(r, &flag, &one); break;
  case 2:
  case 5:
    q[1] = *r;
    if (k == 2) rc = MPI_Waitall(3, q, st);
    else while (!rc && !flag) rc = MPI_Testall(3, q, &flag, st);
    *r = q[1], one = st[1];
    break;
  case 3:
  case 6:
    q[1] = *r;
    for (int left = 3; !rc && left > 0;) {
      flag = 1;
      if (k == 3) rc = MPI_Waitany(3, q, &idx, &one);
      else rc = MPI_Testany(3, q, &idx, &flag, &one);
      if (rc || !flag) continue;
      if (idx == MPI_UNDEFINED) break;
      if (idx == 1) mine = 1, st[1] = one;
      left--;
    }
    *r = q[1], one = st[1];
    if (mine < 0 && !rc) *msg = "our request never reported by Wait/Testany";
    break;
  case 4:
  case 7:
    q[1] = *r;
    while (!rc && (q[0] != MPI_REQUEST_NULL || q[1] != MPI_REQUEST_NULL || q[2] != MPI_REQUEST_NULL)) {
      rc = k == 4 ? MPI_Waitsome(3, q, &n, ind, st) : MPI_Testsome(3, q, &n, ind, st);
      for (int i = 0; !rc && n != MPI_UNDEFINED && i < n; i++)
        if (ind[i] == 1) one = st[i], mine = 1;
      if (n == MPI_UNDEFINED) break;
    }
    *r = q[1];
    if (mine < 0 && !rc) *msg = "our request never reported by Wait/Testsome";
    break;
  default:
    while (!rc && !flag) rc = MPI_Request_get_status(*r, &flag, &one);
    if (!rc && *r == MPI_REQUEST_NULL) *msg = "Request_get_status freed the request";
    if (!rc) rc = MPI_Wait(r, &one);
  }
  if (rc) return rc;
  if (q[0] != MPI_REQUEST_NULL || q[2] != MPI_REQUEST_NULL) MPI_Waitall(3, q, st);
  if (out >= 0 && in != out) *msg = "the native request alongside lost its data";
  if (*r != MPI_REQUEST_NULL) *msg = "handle is not MPI_REQUEST_NULL after completion";
  else if (strict && !nbw_empty(&one)) *msg = "status of a completed collective is not empty";
  return MPI_SUCCESS;
}

#endif
