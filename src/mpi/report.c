/* report.c - errors through the communicator's handler, one-time warnings. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "internal.h"

/* Call comm's error handler for err. SimGrid SMPI 3.32 (smpicc's mpi.h
 * defines SMPI_SHARED_MALLOC) crashes in MPI_Comm_call_errhandler for the
 * predefined handlers (a null function pointer), so there they are
 * honoured here: MPI_ERRORS_RETURN returns, MPI_ERRORS_ARE_FATAL aborts. */
static void call_handler(MPI_Comm comm, int err) {
#ifdef SMPI_SHARED_MALLOC
  MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
  if (PMPI_Comm_get_errhandler(comm, &eh) != MPI_SUCCESS || eh == MPI_ERRORS_RETURN) return;
  if (eh != MPI_ERRORS_ARE_FATAL) PMPI_Errhandler_free(&eh); /* (comm keeps its own reference) */
  if (eh == MPI_ERRORS_ARE_FATAL) {
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    PMPI_Error_string(err, s, &len);
    fprintf(stderr, "collc: MPI error (%s) with MPI_ERRORS_ARE_FATAL: aborting\n", s);
    PMPI_Abort(comm, err);
    return;
  }
#endif
  PMPI_Comm_call_errhandler(comm, err);
}

int collc_raise(MPI_Comm comm, int err) {
  if (err == MPI_SUCCESS) return err;
  call_handler(comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm, err);
  return err;
}

#define WARN_KEYS 32

/* 1 the first time key is seen (thread safe), else 0. */
static int first_time(const char *key) {
  static char seen[WARN_KEYS][64];
  static int nseen;
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  int first = 1;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < nseen && first; i++)
    if (!strncmp(seen[i], key, sizeof seen[i] - 1)) first = 0;
  if (first && nseen < WARN_KEYS) snprintf(seen[nseen++], sizeof seen[0], "%s", key);
  pthread_mutex_unlock(&lock);
  return first;
}

/* Print one warning line (the first time for key, on this rank). */
static void warn(const char *key, const char *fmt, va_list ap) {
  char line[1400];
  if (!first_time(key)) return;
  vsnprintf(line, sizeof line, fmt, ap);
  fprintf(stderr, "collc: warning: %s\n", line);
}

void collc_warn_once(const char *key, const char *fmt, ...) {
  int rank = 0, init = 0, fin = 0;
  PMPI_Initialized(&init);
  PMPI_Finalized(&fin);
  if (init && !fin) PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return;
  va_list ap;
  va_start(ap, fmt);
  warn(key, fmt, ap);
  va_end(ap);
}

void collc_warn_here(const char *key, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  warn(key, fmt, ap);
  va_end(ap);
}
