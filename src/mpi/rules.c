/* rules.c - the default rule's rows: those of the tuning file COLLC_TUNING
 * (made by collc-tune), then the built-in ones (tuning/builtin.json,
 * compiled in), for the MPI library running. Parsed once per process.
 *
 * Every rank must decide alike, so the file is read by world rank 0 at
 * MPI_Init and its bytes broadcast over MPI_COMM_WORLD (rules_init: the one
 * point where every rank is known to take part); ranks given other files,
 * or none, get rank 0's. A file that cannot be read or parsed, of another
 * format version or another MPI library: one warning on rank 0, ignored
 * (the built-in rows alone). Where MPI_Init did not pass through collc (a
 * library loaded later; SimGrid SMPI, which has no such hook here) each
 * rank reads the file itself, and the ranks must be given the same one. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "../plan/config.h"
#include "../plan/tuning.h"

#define RULES_MAX (TUNE_MAX_ROWS + 64) /* a file's rows and the built-in ones */

static tune_row rows[RULES_MAX];
static int nrows, nfile = -1; /* the file's rows; -1: no file (or ignored) */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char *shared;          /* rank 0's file, broadcast at MPI_Init (NULL: none) */
static long long shared_len;
static atomic_int shared_set; /* rules_init ran */

/* Read file path into a new buffer (*len bytes); NULL with why. */
static char *read_file(const char *path, long long *len, char *why, size_t wlen) {
  FILE *f = fopen(path, "rb");
  char *buf = f ? malloc(TUNE_FILE_MAX + 1) : NULL;
  size_t n = buf ? fread(buf, 1, TUNE_FILE_MAX + 1, f) : 0;
  int bad = !f || !buf || ferror(f) || n > TUNE_FILE_MAX;
  if (bad) snprintf(why, wlen, "%s", !f ? "cannot open it" : !buf ? "out of memory"
                                        : n > TUNE_FILE_MAX ? "larger than 16 MiB" : "read error");
  if (f) fclose(f);
  if (bad) return free(buf), NULL;
  *len = (long long)n;
  return buf;
}

/* This process's COLLC_TUNING file (NULL: unset or unreadable, warned). */
static char *own_file(long long *len) {
  const char *path = config_get()->tuning;
  char why[64];
  if (!*path) return NULL;
  char *t = read_file(path, len, why, sizeof why);
  if (!t) collc_warn_once("tuning", "COLLC_TUNING=%s: %s; ignored", path, why);
  return t;
}

/* The MPI library running (TUNE_LIB_*; -1 if neither known one). */
static int library(void) {
  char v[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  if (PMPI_Get_library_version(v, &len) != MPI_SUCCESS || len <= 0) return -1;
  return tune_lib_of(v);
}

/* Parse the rows once: the file's (rank 0's if broadcast, else our own),
 * then the built-in ones. */
static void build(void) {
  char why[300];
  long long len = 0;
  int lib = library();
  char *text = atomic_load(&shared_set) ? shared : own_file(&len);
  if (atomic_load(&shared_set)) len = shared_len;
  if (text && tune_parse(text, (size_t)len, lib, SRC_TUNING, rows, &nrows, TUNE_MAX_ROWS, why,
                         sizeof why))
    collc_warn_once("tuning", "COLLC_TUNING=%s: %s; ignored", config_get()->tuning, why);
  else if (text)
    nfile = nrows;
  free(text);
  shared = NULL;
  if (tune_parse(tune_builtin_json, tune_builtin_len, lib, SRC_BUILTIN, rows, &nrows, RULES_MAX,
                 why, sizeof why))
    collc_warn_once("builtin", "the built-in rule: %s; using native", why);
}

/* Broadcast buf[len] from world rank 0 in pieces (buf NULL: received into
 * scratch and dropped, so a rank out of memory still takes part). */
static int bcast_bytes(char *buf, long long len) {
  char scratch[4096];
  int rc = MPI_SUCCESS;
  for (long long at = 0; at < len && !rc; at += (long long)sizeof scratch) {
    int n = (int)(len - at < (long long)sizeof scratch ? len - at : (long long)sizeof scratch);
    rc = PMPI_Bcast(buf ? buf + at : scratch, n, MPI_CHAR, 0, MPI_COMM_WORLD);
  }
  return rc;
}

void rules_init(void) {
  int rank = 0, init = 0, fin = 0;
  long long len = -1;
  if (atomic_load(&shared_set) || config_get()->disable) return;
  PMPI_Initialized(&init);
  PMPI_Finalized(&fin);
  if (!init || fin) return;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char *t = rank == 0 ? own_file(&len) : NULL;
  if (rank == 0 && !t) len = -1;
  if (PMPI_Bcast(&len, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD)) len = -1;
  if (rank != 0 && len >= 0) t = malloc((size_t)len + 1);
  if (len > 0 && bcast_bytes(t, len)) len = -1;
  if (len < 0 || !t) free(t), t = NULL;
  shared = t, shared_len = len;
  atomic_store(&shared_set, 1);
  pthread_once(&once, build);
}

const tune_row *rules_get(int *n) {
  pthread_once(&once, build);
  *n = nrows;
  return rows;
}

void rules_print(void) {
  int n;
  rules_get(&n);
  if (nfile >= 0)
    fprintf(stderr, "collc-tuning: %s: %d rows used (before %d built-in)\n",
            config_get()->tuning, nfile, n - nfile);
}
