/* bench_persist.h - collc-bench -P: the cost of persistent init next to
 * one execution. Part of tools/collc-bench.c (included once, after its
 * helpers).
 *
 * Per variant and count, each repetition takes a fresh duplicate of the
 * benchmark communicator (untimed), then times, each after a double
 * barrier and as the slowest rank's time: the first init on it ("cold":
 * whatever the library sets up per communicator is included), a second
 * init of the same call on it ("init": the usual case of a program that
 * makes several requests), and one MPI_Start + MPI_Wait of the first
 * request after the warm-ups ("exec"). native is the MPI library's own
 * persistent collective (MPI 4: PMPI_<Coll>_init; Open MPI 4.1: its
 * PMPIX_<Coll>_init); the others collc's MPI_<Coll>_init with info
 * collc_algorithm. The result of the first execution is checked against
 * the native blocking call. */
#ifndef COLLC_BENCH_PERSIST_H
#define COLLC_BENCH_PERSIST_H

enum { PT_COLD, PT_INIT, PT_EXEC, PT_COUNT };

/* Min and median (us) of the reps times of kind t, max over ranks, into
 * v_min[t], v_med[t] (rank 0). */
static void persist_summary(bench *b, double *times, int reps, double *mins, double *meds) {
  PMPI_Reduce(times, b->maxtimes, reps, MPI_DOUBLE, MPI_MAX, 0, b->comm);
  if (b->rank != 0) return;
  qsort(b->maxtimes, (size_t)reps, sizeof(double), bt_cmp_double);
  *mins = b->maxtimes[0] * 1e6;
  *meds = (reps % 2 ? b->maxtimes[reps / 2]
                    : (b->maxtimes[reps / 2 - 1] + b->maxtimes[reps / 2]) / 2) * 1e6;
}

/* One repetition of variant v at count: t[PT_*] get this rank's times.
 * check: compare the first execution with b->ref. Returns an MPI code
 * (or -1 for a wrong result). */
static int persist_rep(const variant *v, bench *b, long count, int warm, int check, double *t) {
  MPI_Comm c;
  MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  int rc = PMPI_Comm_dup(b->comm, &c), n = (int)count;
  for (int k = 0; k < 2 && !rc; k++) {
    PMPI_Barrier(c);
    PMPI_Barrier(c);
    double t0 = MPI_Wtime();
    rc = b->c->init(v->kind, v->text, b, n, b->recv, c, &r[k]);
    t[k] = MPI_Wtime() - t0;
  }
  for (int i = 0; i <= warm && !rc; i++) {
    if (i == warm) PMPI_Barrier(c), PMPI_Barrier(c);
    double t0 = MPI_Wtime();
    if (!(rc = MPI_Start(&r[0]))) rc = MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    t[PT_EXEC] = MPI_Wtime() - t0;
    if (!rc && check && i == 0 && bc_check(b, count) != -1) rc = -1;
  }
  for (int k = 0; k < 2; k++)
    if (r[k] != MPI_REQUEST_NULL) MPI_Request_free(&r[k]);
  PMPI_Comm_free(&c);
  return rc;
}

/* Rank 0: one variant's row of the -P table and CSV. */
static void persist_row(const variant *v, long count, long bytes, const double *mn,
                        const double *md, FILE *csv, const char *coll, int p) {
  double e = mn[PT_EXEC] > 0 ? mn[PT_EXEC] : 1e-9;
  printf("%8ld %8ld  %-24s %10.1f %10.1f %10.1f %10.2f %10.2f %10.2f\n", count, bytes, v->text,
         mn[PT_COLD], md[PT_COLD], md[PT_INIT], mn[PT_EXEC], md[PT_COLD] / e, md[PT_INIT] / e);
  if (csv)
    fprintf(csv, "%s,%d,%ld,%ld,\"%s\",%.3f,%.3f,%.3f,%.3f\n", coll, p, count, bytes, v->text,
            mn[PT_COLD], md[PT_COLD], md[PT_INIT], mn[PT_EXEC]);
}

/* -P at count: every variant, reps repetitions. Returns the number of
 * variants that failed or were wrong. Collective. */
static int persist_count(options *o, bench *b, long count, FILE *csv) {
  int reps = reps_for(o, count), warm = warm_for(o, count) > 2 ? 2 : warm_for(o, count);
  int bad = 0;
  double t[PT_COUNT], mn[PT_COUNT], md[PT_COUNT];
  bc_fill(b, count);
  bc_prepare(b, count, b->ref);
  b->c->run(RUN_NATIVE, NULL, b, (int)count, b->ref);
  for (int k = 0; k < o->nv; k++) {
    int rc = 0;
    for (int i = 0; i < reps && !rc; i++) {
      bc_prepare(b, count, b->recv);
      rc = persist_rep(&o->v[k], b, count, warm, i == 0, t);
      for (int j = 0; j < PT_COUNT; j++) b->times[j * reps + i] = t[j];
    }
    if (!bt_all_ranks(b, rc == 0)) {
      if (b->rank == 0) printf("%8ld %8ld  %-24s %s\n", count, count * bc_size(o->c),
                               o->v[k].text, rc == -1 ? "*** WRONG RESULT ***" : "failed");
      bad++;
      continue;
    }
    for (int j = 0; j < PT_COUNT; j++) persist_summary(b, &b->times[j * reps], reps, &mn[j], &md[j]);
    if (b->rank == 0) persist_row(&o->v[k], count, count * bc_size(o->c), mn, md, csv, o->c->name, b->p);
  }
  if (b->rank == 0) printf("\n"), fflush(stdout);
  return bad;
}

/* Rank 0: the -P header. */
static void persist_header(const options *o, int p) {
  print_title(o, p);
  printf("# -P: persistent init vs one execution. cold = first init on a fresh communicator,\n"
         "# init = a second init of the same call on it, exec = one MPI_Start + MPI_Wait\n"
         "# (after %d warm-ups); native = the library's own persistent collective\n"
         "# cold/exec, init/exec = their medians / exec min (the seed paper: up to 10^4)\n#\n",
         o->warm > 2 ? 2 : o->warm);
  printf("# %6s %8s  %-24s %10s %10s %10s %10s %10s %10s\n", "count", "bytes", "variant",
         "cold min", "cold med", "init med", "exec min", "cold/exec", "init/exec");
  fflush(stdout);
}

#endif
