/* bench_time.h - what collc-bench and collc-tune share to time one call of
 * a collective (tools/bench_colls.h): its buffers on a duplicate of
 * MPI_COMM_WORLD, the one-time check of a variant against the native
 * result, and the two timing modes, barrier-separated (the seed papers')
 * and back to back (as OSU and most applications call). Static functions
 * (inline where one tool may not use them), included once per tool. */
#ifndef COLLC_BENCH_TIME_H
#define COLLC_BENCH_TIME_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_colls.h"

enum { V_OK = 0, V_WRONG, V_UNFIT };

static const char *bt_tool = "collc-bench"; /* the messages' prefix */

/* The MPI library's name and version, one line, into buf. */
static void bt_library_name(char *buf, size_t len) {
  char v[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  int n = 0;
  MPI_Get_library_version(v, &n);
  v[strcspn(v, "\n")] = 0;
  if (!strncmp(v, "MPICH Version:", 14)) {
    const char *s = v + 14;
    while (*s == ' ' || *s == '\t') s++;
    snprintf(buf, len, "MPICH %.200s", s);
    return;
  }
  v[strcspn(v, ",")] = 0;
  snprintf(buf, len, "%.200s", v);
}

/* Compare doubles for qsort. */
static inline int bt_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* 1 if every rank's flag is set (collective). */
static int bt_all_ranks(bench *b, int flag) {
  int all = 0;
  PMPI_Allreduce(&flag, &all, 1, MPI_INT, MPI_MIN, b->comm);
  return all;
}

/* Check the call of kind (text: its algorithm) once against b->ref (and
 * that the input is intact): V_OK, V_WRONG or V_UNFIT (it does not run).
 * Collective. A wrong result is printed loudly by each bad rank. */
static int bt_check(bench *b, int kind, const char *text, long count) {
  bc_prepare(b, count, b->recv);
  int rc = b->c->run(kind, text, b, (int)count, b->recv);
  if (!bt_all_ranks(b, rc == MPI_SUCCESS)) {
    char msg[MPI_MAX_ERROR_STRING] = "error on another rank";
    int len;
    if (rc != MPI_SUCCESS) MPI_Error_string(rc, msg, &len);
    if (b->rank == 0)
      fprintf(stderr, "%s: %s does not run at count %ld (%s): skipped\n", bt_tool, text, count,
              msg);
    return V_UNFIT;
  }
  long bad = bc_check(b, count);
  if (bad < -1) /* a changed input would make the variants checked after v look wrong */
    memcpy(b->send, b->orig, (size_t)bc_send_elems(b, count) * (size_t)bc_size(b->c));
  if (bad != -1)
    fprintf(stderr, "%s: *** WRONG RESULT *** %s %s count %ld rank %d: %s %ld\n", bt_tool,
            b->c->name, text, count, b->rank,
            bad >= 0 ? "first bad element" : "send buffer changed at element",
            bad >= 0 ? bad : -2 - bad);
  return bt_all_ranks(b, bad == -1) ? V_OK : V_WRONG;
}

/* One timed call of kind (text) after a double barrier; this rank's time
 * into *t; an MPI error code. */
static int bt_barrier_once(bench *b, int kind, const char *text, long count, double *t) {
  PMPI_Barrier(b->comm);
  PMPI_Barrier(b->comm);
  double t0 = MPI_Wtime();
  int rc = b->c->run(kind, text, b, (int)count, b->recv);
  *t = MPI_Wtime() - t0;
  return rc;
}

/* n calls of kind (text) back to back, no barrier between them; this
 * rank's time per call into *t; an MPI error code (the first). */
static inline int bt_b2b(bench *b, int kind, const char *text, long count, int n, double *t) {
  int rc = MPI_SUCCESS;
  double t0 = MPI_Wtime();
  for (int i = 0; i < n; i++) {
    int r = b->c->run(kind, text, b, (int)count, b->recv);
    if (!rc) rc = r;
  }
  *t = (MPI_Wtime() - t0) / n;
  return rc;
}

/* Set b up for collective c on a duplicate of MPI_COMM_WORLD (errors
 * return), buffers for counts up to maxcount and ntimes time slots, reps
 * of them reduced at once; 0 or -1 on any rank (collective). */
static int bt_open(bench *b, const bench_coll *c, long maxcount, size_t ntimes, int reps) {
  size_t sz = (size_t)bc_size(c);
  memset(b, 0, sizeof *b);
  b->c = c;
  PMPI_Comm_dup(MPI_COMM_WORLD, &b->comm);
  PMPI_Comm_set_errhandler(b->comm, MPI_ERRORS_RETURN);
  PMPI_Comm_size(b->comm, &b->p);
  PMPI_Comm_rank(b->comm, &b->rank);
  size_t ns = ((size_t)bc_send_elems(b, maxcount) + 1) * sz;
  size_t nr = ((size_t)bc_recv_elems(b, maxcount) + 1) * sz;
  b->send = malloc(ns), b->orig = malloc(ns);
  b->recv = malloc(nr), b->ref = malloc(nr);
  b->vcounts = malloc((size_t)b->p * sizeof(int)), b->vdispls = malloc((size_t)b->p * sizeof(int));
  b->vcount = -1;
  b->times = malloc(ntimes * sizeof(double));
  b->maxtimes = malloc((size_t)reps * sizeof(double));
  int ok = b->send && b->orig && b->recv && b->ref && b->vcounts && b->vdispls && b->times &&
           b->maxtimes;
  return bt_all_ranks(b, ok) ? 0 : -1;
}

/* Free b's buffers and communicator. */
static void bt_close(bench *b) {
  free(b->send), free(b->orig), free(b->recv), free(b->ref);
  free(b->vcounts), free(b->vdispls);
  free(b->times), free(b->maxtimes);
  PMPI_Comm_free(&b->comm);
}

#endif
