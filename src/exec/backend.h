/* backend.h - what the interpreter needs from the machine it runs on.
 *
 * A backend is a handful of functions behind one small table (as Redis's
 * ae.c puts each event loop behind the same few calls): post and complete
 * messages, group calls, local copy and reduce, node flags, remote reads.
 * The interpreter (interp.c) calls nothing else, so a backend for another
 * machine (device memory: one fused copy/reduce kernel per batch) replaces
 * only this table. Every function returns an MPI code (MPI_SUCCESS or an
 * error code), except where it says otherwise.
 */
#ifndef COLLC_BACKEND_H
#define COLLC_BACKEND_H

#include <sys/uio.h>
#include <mpi.h>
#include "../ir/ir.h"
#include "local.h"
#include "flag.h"
#include "xbatch.h"

typedef struct exec_backend {
  const char *name;
  /* Start sending or receiving count x t at buf to / from peer. */
  int (*send)(const void *buf, int count, MPI_Datatype t, int peer, int tag, MPI_Comm comm,
              MPI_Request *r);
  int (*recv)(void *buf, int count, MPI_Datatype t, int peer, int tag, MPI_Comm comm,
              MPI_Request *r);
  /* Complete requests r[0..n): blocking, or *done says whether all have. */
  int (*complete)(int n, MPI_Request *r, int blocking, int *done);
  /* Cancel and release one request still in flight (after a failure). */
  void (*cancel)(MPI_Request *r);
  /* All-to-all on group communicator g, one element of st / dt per member:
   * posted into *r, or (blocking) done, *r then MPI_REQUEST_NULL. */
  int (*group_alltoall)(const void *s, MPI_Datatype st, void *d, MPI_Datatype dt, MPI_Comm g,
                        int blocking, MPI_Request *r);
  /* Local COPY, REDUCE or COMBINE I of P over plain bytes (local.h). */
  int (*local)(const collc_prog *P, const collc_instr *I, char *const base[],
               const local_ctx *x);
  /* Copy (s, sc, st) to (d, dc, dt) of the same type signature, any layout. */
  int (*copy_typed)(const void *s, int sc, MPI_Datatype st, void *d, int dc, MPI_Datatype dt,
                    int self, MPI_Comm comm);
  /* Node flags (flag.h): publish v; wait for want (1 reached, 0 not yet when
   * not blocking, -1 poisoned). */
  void (*signal)(seg_flag *f, uint64_t v);
  int (*await)(seg_flag *f, uint64_t want, int blocking, int crowded);
  /* Read process pid's remote pieces into local pieces (cma.h): 0 or -1. */
  int (*remote_read)(int pid, char *lbase, const struct iovec *l, int nl, uint64_t rbase,
                     const struct iovec *r, int nr);
  /* Run batch b of table T (xbatch.h) on buffer bases base[], reductions
   * with kernel k; plans have tables only when a backend can run them. */
  int (*batch)(const xbatch_tab *T, int b, char *const base[], const kernel_sel *k);
  /* The MPI error class of code rc. */
  int (*error_class)(int rc);
  /* The memory of an execution's TMP buffer, which this backend's batches
   * read and write (the CUDA backend: device memory); NULL: malloc, free. */
  void *(*tmp_alloc)(size_t n);
  void (*tmp_free)(void *p);
} exec_backend;

/* MPI point-to-point, node-shared memory and Cross Memory Attach: the
 * backend of every execution today (exec_where.be NULL means this one). */
extern const exec_backend exec_backend_mpi;

#endif
