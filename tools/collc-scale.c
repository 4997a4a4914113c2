/* collc-scale - a lean all-to-all / allreduce timer for large simulated runs
 * (SimGrid SMPI, thousands of ranks), where collc-bench's agreement,
 * interleaving and checking rounds cost too much simulated work.
 *
 *   smpirun -np P ... collc-scale [-C COLL] [-c COUNTS] [-a VARIANTS] [-w N] [-r N]
 *                                 [-m MIB] [-o FILE.csv] [-k] [-n]
 *
 *   -C COLL      alltoall (default; MPI_INT) or allreduce (MPI_INT, MPI_SUM)
 *   -c COUNTS    comma separated MPI_INT elements per process (alltoall: per
 *                block) (default 1)
 *   -a VARIANTS  ';' separated: "native" is the MPI library's PMPI_ call, any
 *                other text goes to collc_<coll>_algo (e.g. "torus:36x32:linear",
 *                "torus:d=3:native", "recexch:-4,-2,2,4"). The first one is the
 *                baseline of the ratio column (default "native")
 *   -w N, -r N   warm-ups (default 1) and repetitions (default 2) per variant and
 *                count; the simulation is deterministic
 *   -m MIB       check a (variant, count) only if its real buffers, summed over
 *                all ranks, fit in MIB MiB (default 256)
 *   -o FILE      also write CSV: coll,p,count,variant,time_us,ratio,check
 *   -k           check only: no timing; exit status 3 if any check is WRONG
 *   -n           no checks
 *   -v           rank 0 reports to stderr the host CPU seconds (clock(): under
 *                SMPI the whole simulation's) of each check, first call and timing
 *
 * Per (variant, count): one check (unless -n, or too large for -m): the
 * variant on real, rank-specific buffers, compared bitwise with the exact
 * result computed locally (integer sums are exact), and the input must be
 * intact; one PMPI_Allreduce of the verdict. "native" is checked too. Then the torus paper's timing: a repetition is two
 * barriers and the call; its time is the slowest rank's (one PMPI_Reduce of
 * all repetitions at the end), the result the minimum over repetitions.
 * Timed buffers come from SMPI_SHARED_MALLOC under SMPI (their contents are
 * meaningless; memory stays small), from malloc otherwise.
 *
 * Output, rank 0, one line per (count, variant):
 *   coll p count variant time_us ratio check
 * ratio = time of the first variant / time of this one; check is ok, WRONG,
 * UNFIT (collc rejected the text: not timed), or - (not checked).
 * Exit status: 0, 2 bad arguments, 3 a WRONG result. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "collc.h"

#ifdef SMPI_SHARED_MALLOC /* smpicc: mpi.h is SimGrid's smpi.h */
#define TIMED_ALLOC(n) SMPI_SHARED_MALLOC(n)
#define TIMED_FREE(p) SMPI_SHARED_FREE(p)
#else
#define TIMED_ALLOC(n) malloc(n)
#define TIMED_FREE(p) free(p)
#endif

#define MAXV 32
#define MAXC 32

enum { CHK_NONE = 0, CHK_OK, CHK_WRONG, CHK_UNFIT };
static const char *const chk_names[] = {"-", "ok", "WRONG", "UNFIT"};

typedef struct {
  int alltoall; /* else allreduce */
  int p, rank;
  long counts[MAXC];
  int ncounts;
  char *vtext[MAXV];
  int nv;
  int warm, reps, check_only, no_check, verbose;
  double check_mib;
  FILE *csv;
} opts;

/* Elements per buffer of one call at count n. */
static size_t elems(const opts *o, long n) {
  return (size_t)n * (o->alltoall ? (size_t)o->p : 1);
}

/* One call of variant text v (NULL: native). Returns an MPI error code. */
static int call(const opts *o, const char *v, const int *s, int *r, long n) {
  if (o->alltoall)
    return v ? collc_alltoall_algo(v, s, (int)n, MPI_INT, r, (int)n, MPI_INT, MPI_COMM_WORLD)
             : PMPI_Alltoall(s, (int)n, MPI_INT, r, (int)n, MPI_INT, MPI_COMM_WORLD);
  return v ? collc_allreduce_algo(v, s, r, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD)
           : PMPI_Allreduce(s, r, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
}

/* Test input: element i of rank q's send buffer (m elements). All-to-all
 * values are distinct; allreduce sums stay far below INT_MAX. */
static int input(const opts *o, int q, size_t m, size_t i) {
  return o->alltoall ? (int)(((uint64_t)q * m + i) % 2147483647u)
                     : (int)(((unsigned)q * 7u + (unsigned)(i % 100000) * 13u) % 1000u);
}

/* Check variant v at count n on real buffers against the exact result,
 * computed locally (no reference collective: SMPI's own all-to-all costs
 * O(p^2) simulated messages per call and crashes at some p, see
 * docs/scale.md); the input must be intact. Returns CHK_*, the same on
 * every rank (one PMPI_Allreduce of the verdict). */
static int check(const opts *o, const char *v, long n) {
  size_t m = elems(o, n), bytes = m * sizeof(int);
  int *s = malloc(bytes), *r = malloc(bytes);
  int ok = 1, all = 0, rc;
  if (!s || !r) {
    fprintf(stderr, "collc-scale: out of memory for the check at count %ld\n", n);
    PMPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (size_t i = 0; i < m; i++) s[i] = input(o, o->rank, m, i);
  memset(r, 0xA4, bytes);
  rc = call(o, v, s, r, n);
  PMPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  for (size_t i = 0; rc == MPI_SUCCESS && ok && i < m; i++) {
    int want = 0;
    if (o->alltoall) /* block j of r is block `rank` of rank j's input */
      want = input(o, (int)(i / (size_t)n), m, (size_t)o->rank * (size_t)n + i % (size_t)n);
    else
      for (int q = 0; q < o->p; q++) want += input(o, q, m, i);
    ok = r[i] == want && s[i] == input(o, o->rank, m, i);
  }
  if (rc == MPI_SUCCESS) PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  free(s);
  free(r);
  return rc != MPI_SUCCESS ? CHK_UNFIT : all ? CHK_OK : CHK_WRONG;
}

/* -v: rank 0 tells stderr the host CPU time since the last report. */
static void progress(const opts *o, const char *what, const char *v, long n) {
  static clock_t last;
  clock_t now = clock();
  if (o->verbose && o->rank == 0)
    fprintf(stderr, "collc-scale: %s count %ld %s: %.2f s host CPU\n", v ? v : "native", n,
            what, (double)(now - last) / CLOCKS_PER_SEC);
  last = now;
}

/* The paper's timing of variant v at count n; rank 0 gets the minimum over
 * repetitions of the slowest rank's time, in seconds (-1 if a call failed). */
static double timed(const opts *o, const char *v, const int *s, int *r, long n, double *t,
                    double *tmax) {
  int err = 0;
  for (int i = 0; i < o->warm; i++) {
    err |= call(o, v, s, r, n);
    if (i == 0) progress(o, "first call", v, n);
  }
  for (int i = 0; i < o->reps; i++) {
    PMPI_Barrier(MPI_COMM_WORLD);
    PMPI_Barrier(MPI_COMM_WORLD);
    double t0 = PMPI_Wtime();
    err |= call(o, v, s, r, n);
    t[i] = err ? 1e30 : PMPI_Wtime() - t0;
  }
  PMPI_Reduce(t, tmax, o->reps, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  double best = tmax[0];
  for (int i = 1; i < o->reps; i++)
    if (tmax[i] < best) best = tmax[i];
  return best >= 1e30 ? -1 : best;
}

static void usage(void) {
  fprintf(stderr, "usage: collc-scale [-C alltoall|allreduce] [-c COUNTS] [-a 'V1;V2;...'] "
                  "[-w N] [-r N] [-m MIB] [-o FILE.csv] [-k] [-n] [-v]\n");
}

/* Parse the command line into o; 0 or -1 (usage). */
static int parse(int argc, char **argv, opts *o, char *vbuf, size_t vlen) {
  const char *counts = "1", *variants = "native", *csv = NULL;
  int opt;
  o->alltoall = 1, o->warm = 1, o->reps = 2, o->check_mib = 256;
  while ((opt = getopt(argc, argv, "C:c:a:w:r:m:o:knv")) != -1) {
    switch (opt) {
    case 'C':
      if (strcmp(optarg, "alltoall") && strcmp(optarg, "allreduce")) return -1;
      o->alltoall = strcmp(optarg, "alltoall") == 0;
      break;
    case 'c': counts = optarg; break;
    case 'a': variants = optarg; break;
    case 'w': o->warm = atoi(optarg); break;
    case 'r': o->reps = atoi(optarg); break;
    case 'm': o->check_mib = atof(optarg); break;
    case 'o': csv = optarg; break;
    case 'k': o->check_only = 1; break;
    case 'n': o->no_check = 1; break;
    case 'v': o->verbose = 1; break;
    default: return -1;
    }
  }
  if (optind != argc || o->warm < 0 || o->reps < 1 || o->reps > 1000) return -1;
  for (char *end; *counts && o->ncounts < MAXC; counts = end + (*end == ',')) {
    long n = strtol(counts, &end, 10);
    if (end == counts || n < 1 || n > (1L << 30) / (o->alltoall ? o->p : 1)) return -1;
    o->counts[o->ncounts++] = n;
  }
  if (*counts || strlen(variants) >= vlen) return -1;
  strcpy(vbuf, variants);
  for (char *save = NULL, *v = strtok_r(vbuf, ";", &save); v && o->nv < MAXV;
       v = strtok_r(NULL, ";", &save))
    o->vtext[o->nv++] = v;
  if (o->nv == 0) return -1;
  if (csv && o->rank == 0 && !(o->csv = fopen(csv, "w"))) {
    perror(csv);
    return -1;
  }
  return 0;
}

int main(int argc, char **argv) {
  opts o = {0};
  char vbuf[4096];
  int status = 0;
  PMPI_Init(&argc, &argv);
  PMPI_Comm_size(MPI_COMM_WORLD, &o.p);
  PMPI_Comm_rank(MPI_COMM_WORLD, &o.rank);
  PMPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (parse(argc, argv, &o, vbuf, sizeof vbuf)) {
    if (o.rank == 0) usage();
    PMPI_Finalize();
    return 2;
  }
  long maxn = 0;
  for (int i = 0; i < o.ncounts; i++)
    if (o.counts[i] > maxn) maxn = o.counts[i];
  size_t maxbytes = elems(&o, maxn) * sizeof(int);
  int *s = o.check_only ? NULL : TIMED_ALLOC(maxbytes);
  int *r = o.check_only ? NULL : TIMED_ALLOC(maxbytes);
  double *t = malloc(2 * (size_t)o.reps * sizeof *t);
  if (o.rank == 0) {
    printf("# %s p=%d MPI_INT%s; %s, warm-ups %d, repetitions %d; time = min over repetitions "
           "of the slowest rank, us; ratio = %s / variant\n",
           o.alltoall ? "alltoall" : "allreduce", o.p, o.alltoall ? " per block" : " sum",
           o.check_only ? "check only" : "timed", o.warm, o.reps, o.vtext[0]);
    printf("%-9s %6s %8s %-32s %12s %8s %s\n", "# coll", "p", "count", "variant", "time_us",
           "ratio", "check");
    if (o.csv) fprintf(o.csv, "coll,p,count,variant,time_us,ratio,check\n");
  }
  for (int ci = 0; ci < o.ncounts; ci++) {
    long n = o.counts[ci];
    double base = 0;
    int fits = (double)elems(&o, n) * sizeof(int) * 2 * o.p <= o.check_mib * 1048576.0;
    for (int vi = 0; vi < o.nv; vi++) {
      const char *v = strcmp(o.vtext[vi], "native") ? o.vtext[vi] : NULL;
      progress(&o, "start", v, n);
      int chk = o.no_check || !fits ? CHK_NONE : check(&o, v, n);
      progress(&o, "check", v, n);
      double us = -1;
      if (chk == CHK_WRONG) status = 3;
      if (!o.check_only && chk != CHK_UNFIT && chk != CHK_WRONG) {
        double sec = timed(&o, v, s, r, n, t, t + o.reps);
        progress(&o, "timing", v, n);
        us = sec < 0 ? -1 : sec * 1e6;
        if (sec < 0) chk = CHK_UNFIT;
      }
      if (vi == 0) base = us;
      if (o.rank) continue;
      double ratio = us > 0 && base > 0 ? base / us : 0;
      printf("%-9s %6d %8ld %-32s %12.2f %8.3f %s\n", o.alltoall ? "alltoall" : "allreduce", o.p,
             n, o.vtext[vi], us, ratio, chk_names[chk]);
      fflush(stdout);
      if (o.csv)
        fprintf(o.csv, "%s,%d,%ld,\"%s\",%.3f,%.4f,%s\n", o.alltoall ? "alltoall" : "allreduce",
                o.p, n, o.vtext[vi], us, ratio, chk_names[chk]);
    }
  }
  if (o.csv) fclose(o.csv);
  if (!o.check_only) {
    TIMED_FREE(s);
    TIMED_FREE(r);
  }
  free(t);
  PMPI_Finalize();
  return status;
}
