/* nbmode.h - COLLC_TEST_NB=1 in the algorithm tests (alltoall.c,
 * reductions.c): every call under test is the nonblocking one, its request
 * completed by a rotating completion call (nbwait.h). Header-only; one
 * includer per program.
 *
 * A node-aware algorithm (hier, shm) serves a nonblocking call once a
 * blocking one of the same kind has set up the node segment, so the tests
 * make such a call first, on scratch buffers (nb_scratch). */
#ifndef COLLC_NBMODE_H
#define COLLC_NBMODE_H

#include "testlib.h"
#include "nbwait.h"

static int nb_mode;   /* COLLC_TEST_NB */
static int nb_calls;  /* completions so far (the way rotates) */
static tl_ctx *nb_ctx; /* where failures go */

/* Read COLLC_TEST_NB; failures go to ctx. */
static inline void nb_init(tl_ctx *ctx) {
  nb_mode = tl_env_int("COLLC_TEST_NB", 0), nb_ctx = ctx;
}

/* Complete r (started with return code rc), reporting a completion that
 * misbehaves (what names the call). The status is not checked: calls
 * collc hands to the MPI library (intercommunicators, types with holes, a
 * torus before its group communicators) get the library's, which MPI
 * leaves undefined. */
static inline int nb_finish(MPI_Request *r, int rc, const char *what) {
  const char *msg = NULL;
  if (rc) return rc;
  int way = nb_calls++;
  rc = nbw_complete(r, way, 0, &msg);
  if (msg) tl_fail(nb_ctx, "%s completed by MPI_%s: %s", what, nbw_names[way % NBW_WAYS], msg);
  return rc;
}

/* Zeroed scratch of bytes (and 64 more) for set-up calls; reused, freed at
 * exit by the OS. NULL: out of memory. */
static inline void *nb_scratch(size_t bytes) {
  static void *m;
  static size_t have;
  if (bytes > have) {
    free(m);
    m = calloc(1, bytes + 64), have = m ? bytes : 0;
  }
  if (m) memset(m, 0, bytes + 64);
  return m;
}

#endif
