/* collc-bench - time MPI collectives the way Träff's torus all-to-all paper
 * does (section 5): per count, 8 warm-ups then 40 repetitions, each after a
 * double barrier; a repetition's time is the slowest rank's; the minimum and
 * median over repetitions are reported, in microseconds, next to the MPI
 * library's own collective and the ratio. Unlike the paper, repetition i of
 * every variant runs before repetition i+1 of any (interleaved, in an order
 * rotated each repetition), so drifts of a shared, oversubscribed machine
 * and the caches left by the previous call favour no variant.
 *
 *   mpirun -np P collc-bench [-C COLL] [-c COUNTS] [-a ALGOS]... [-w N] [-r N]
 *                            [-l COUNT:REPS[:WARM]] [-o FILE.csv]
 *   mpirun -np P collc-bench --calibrate [FILE]   (tools/bench_calibrate.h)
 *   mpirun -np 1 collc-bench --overhead [COUNT [CALLS]]   (tools/bench_overhead.h)
 *
 *   -C COLL        alltoall (default), allreduce, reduce_scatter_block, allgather,
 *                  reduce, bcast, barrier. alltoall: MPI_INT; the others MPI_DOUBLE, MPI_SUM
 *                  for the reductions, root 0 for reduce and bcast. barrier: count 0 (no
 *                  data); a repetition is 100 barriers back to back after a double
 *                  barrier, its time per call (as OSU's osu_barrier loops); variants
 *                  native, dissem, dissem:4, dissem:p, flags, flags:2, hier, shm:dissem,
 *                  default (those that fit). i<COLL> (iallreduce, ialltoall, ...): the
 *                  nonblocking form, each call MPI_I<COLL> then MPI_Wait (native:
 *                  PMPI_I<COLL>; default: collc's MPI_I<COLL>, the rule's nonblocking
 *                  rows first; not with -P).
 *   -c COUNTS      comma separated elements per process; for reduce_scatter_block and
 *                  allgather per block, i.e. per rank (a rank sends, resp. receives, p
 *                  blocks). Default: alltoall 1,10,...,10^4; allreduce, reduce, bcast
 *                  1,10,...,10^6; reduce_scatter_block and allgather 1,10,...,10^5
 *                  (their buffers are p times larger)
 *   -a ALGOS       variants, ';' separated or repeated -a, e.g. -a 'torus:4x2:native;bruck:2'.
 *                  Default, alltoall: native, torus with d = 2, 3, 4, ceil(log2 p) factors
 *                  from collc_dims_create, each with components native and linear,
 *                  pairwise, linear, bruck:2, default. allreduce: native, recexch (the
 *                  default list, one step -p,p, radix 4 and all-'*' steps: recursive
 *                  doubling), cyclic, tree, default. reduce_scatter_block and allgather:
 *                  native, recexch (default list, one step, radix 4), cyclic, default.
 *                  reduce and bcast: native, tree, tree:4, default. native is always
 *                  measured: it is the baseline. "default" is collc_<COLL>: what MPI_<COLL>
 *                  of an unmodified program gets (COLLC_<COLL>, else the default rule).
 *                  Variants that resolve to the same algorithm as an earlier one are
 *                  measured once (listed in the header).
 *   -w N           warm-ups per variant and count (default 8)
 *   -r N           repetitions per variant and count (default 40)
 *   -l COUNT:REPS[:WARM]  use REPS repetitions (and WARM warm-ups) for counts >= COUNT
 *                  (default: off)
 *   -P             persistent: per variant and count, the first MPI_<Coll>_init on a fresh
 *                  communicator, a second init, and one MPI_Start + MPI_Wait (see
 *                  tools/bench_persist.h); native = the library's own persistent collective
 *   -o FILE        also write CSV: collective,p,count,bytes,variant,min_us,median_us,
 *                  native_min_us,speedup (the variant always in double quotes: it may
 *                  hold commas)
 *
 * "native" is PMPI_<COLL> itself; every other variant runs through
 * collc_<COLL>_algo. Before timing, each variant's result is checked once
 * against PMPI_<COLL>, bitwise (the inputs make every summation order exact:
 * tools/bench_colls.h), and the input must be intact; a variant that
 * differs is reported WRONG and not timed (exit status 3). Barriers and
 * reductions use PMPI_ so that no interposed wrapper is timed. Exit status 0
 * ok, 2 bad arguments. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "collc.h"
#include "algo/algo.h"
#include "mpi/internal.h"
#include "bench_colls.h"
#include "bench_time.h"

#define MAXV 64    /* variants */
#define MAXC 64    /* counts */
#define TEXTLEN 128

typedef struct {
  char text[TEXTLEN];
  char canon[TEXTLEN];    /* resolved choice, e.g. recexch:-2,2 ("" for native, default) */
  int kind;               /* RUN_NATIVE (PMPI_), RUN_DEFAULT (selection rule), RUN_ALGO */
  int status;             /* V_* at the current count */
  double min_us, med_us;  /* at the current count (rank 0) */
} variant;

typedef struct {
  const bench_coll *c;
  long counts[MAXC];
  int ncounts;
  variant v[MAXV];
  int nv;
  int warm, reps;
  long large_count; /* -l: counts >= large_count use large_reps; 0 = off */
  int large_reps, large_warm; /* large_warm -1: o->warm */
  int large_default;          /* -l came from the collective's default */
  const char *csv;
  int persistent;     /* -P */
  char skipped[1024]; /* default torus factorisations left out, and why */
  char unfit[1024];   /* -a variants that do not fit p, and why */
  char same[1024];    /* variants resolving to an earlier one's algorithm */
} options;

/* Print usage to stderr. */
static void usage(void) {
  fprintf(stderr,
          "usage: collc-bench [-C COLL] [-c COUNTS] [-a ALGOS]... [-w N] [-r N]\n"
          "                   [-l COUNT:REPS[:WARM]] [-o FILE]\n"
          "  -C COLL       alltoall (default), allreduce, reduce_scatter_block, allgather,\n"
          "                reduce, bcast, barrier (100 calls back to back per repetition);\n"
          "                i<COLL> (iallreduce, ...): nonblocking, MPI_I<COLL> + MPI_Wait\n"
          "  -c 1,10,100   elements per process (per block for reduce_scatter_block and\n"
          "                allgather); default alltoall 1..10^4 MPI_INT, allreduce, reduce,\n"
          "                bcast 1..10^6 MPI_DOUBLE, the other two 1..10^5 MPI_DOUBLE\n"
          "  -a 'A;B'      variants (';' separated or repeated), e.g. torus:4x2:native;bruck:2\n"
          "  -w N -r N     warm-ups and repetitions (default 8 and 40)\n"
          "  -l C:R[:W]    R repetitions (W warm-ups) for counts >= C\n"
          "  -o FILE       CSV output\n"
          "  -P            persistent: init time (cold and warm) next to one execution\n"
          "       collc-bench --calibrate [FILE]\n"
          "       collc-bench --overhead [COUNT [CALLS]]\n"
          "                fit the cost simulator's parameters to this machine (see\n"
          "                collc-explain -S); printed, and written to FILE\n");
}

/* Append the printf-style text to the ", "-separated list buf of len bytes. */
static void note(char *buf, size_t len, const char *fmt, ...) {
  size_t at = strlen(buf);
  va_list ap;
  if (at && at + 2 < len) at += (size_t)snprintf(buf + at, len - at, ", ");
  if (at >= len) return;
  va_start(ap, fmt);
  vsnprintf(buf + at, len - at, fmt, ap);
  va_end(ap);
}

/* Parse a non-negative integer in [0, max] from s; -1 if it is not one. */
static long parse_long(const char *s, long max) {
  char *end;
  long v = strtol(s, &end, 10);
  return (!*s || *end || v < 0 || v > max) ? -1 : v;
}

/* Parse comma-separated counts into o->counts; 0 or -1. */
static int parse_counts(const char *s, options *o) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", s);
  o->ncounts = 0;
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    long c = parse_long(t, INT32_MAX);
    if (c < 0 || o->ncounts == MAXC) return -1;
    o->counts[o->ncounts++] = c;
  }
  return o->ncounts ? 0 : -1;
}

/* Append variant text to o unless already there; 0 or -1 (full, too long). */
static int add_variant(options *o, const char *text) {
  for (int i = 0; i < o->nv; i++)
    if (!strcmp(o->v[i].text, text)) return 0;
  if (o->nv == MAXV || strlen(text) >= TEXTLEN || !*text) return -1;
  variant *v = &o->v[o->nv++];
  memset(v, 0, sizeof *v);
  snprintf(v->text, sizeof v->text, "%s", text);
  v->kind = !strcmp(text, "native") ? RUN_NATIVE : !strcmp(text, "default") ? RUN_DEFAULT
                                                                             : RUN_ALGO;
  return 0;
}

/* Add the ';'-separated variants of s to o; 0 or -1. */
static int add_variants(options *o, const char *s) {
  char buf[2048];
  snprintf(buf, sizeof buf, "%s", s);
  for (char *save = NULL, *t = strtok_r(buf, ";", &save); t; t = strtok_r(NULL, ";", &save))
    if (add_variant(o, t)) return -1;
  return 0;
}
/* The factors of p into d balanced dims as "AxBx...": all of them into full,
 * those > 1 into buf; returns the number of factors > 1, or -1 on error. */
static int torus_dims_text(int p, int d, char *full, char *buf, size_t len) {
  int dims[64] = {0}, n = 0;
  size_t at = 0, fat = 0;
  full[0] = buf[0] = 0;
  if (d > 64 || collc_dims_create(p, d, dims) != MPI_SUCCESS) return -1;
  for (int i = 0; i < d && fat < len; i++)
    fat += (size_t)snprintf(full + fat, len - fat, "%s%d", i ? "x" : "", dims[i]);
  for (int i = 0; i < d; i++)
    if (dims[i] > 1 && at < len) {
      at += (size_t)snprintf(buf + at, len - at, "%s%d", n ? "x" : "", dims[i]);
      n++;
    }
  return n;
}

/* Why default torus factorisation t (n factors > 1) is left out, given the
 * n_seen earlier ones; NULL if it is kept. */
static const char *torus_skip_reason(const char *t, int n, char seen[][TEXTLEN], int n_seen) {
  if (n < 2) return "at most one factor > 1";
  for (int j = 0; j < n_seen; j++)
    if (!strcmp(seen[j], t)) return "same rounds as an earlier one";
  return NULL;
}

/* The default variant set for p processes (see the file header); the torus
 * factorisations left out are listed in o->skipped. */
static void default_variants(int p, options *o) {
  int ds[4] = {2, 3, 4, 0}, n_seen = 0;
  char seen[4][TEXTLEN], full[TEXTLEN], t[TEXTLEN], text[TEXTLEN + 32];
  while ((1L << ds[3]) < p) ds[3]++; /* ceil(log2 p) */
  add_variant(o, "native");
  for (int k = 0; k < 4; k++) {
    size_t at = strlen(o->skipped);
    const char *sep = at ? ", " : "";
    if (k == 3 && ds[3] <= 4) {
      snprintf(o->skipped + at, sizeof o->skipped - at, "%storus d=ceil(log2 p)=%d (%s)", sep,
               ds[3], ds[3] < 2 ? "fewer than 2 dims" : "same d as above");
      continue;
    }
    int n = torus_dims_text(p, ds[k], full, t, sizeof t);
    const char *why = torus_skip_reason(t, n, seen, n_seen);
    if (why) {
      snprintf(o->skipped + at, sizeof o->skipped - at, "%storus d=%d (%s: %s)", sep, ds[k],
               full, why);
      continue;
    }
    snprintf(seen[n_seen++], TEXTLEN, "%s", t);
    snprintf(text, sizeof text, "torus:%s:native", t);
    add_variant(o, text);
    snprintf(text, sizeof text, "torus:%s:linear", t);
    add_variant(o, text);
  }
  add_variants(o, "pairwise;linear;bruck:2;hier;shm;default");
}

/* Parse -l COUNT:REPS[:WARM] into o; 0 or -1. */
static int parse_large(const char *s, options *o) {
  char buf[64];
  snprintf(buf, sizeof buf, "%s", s);
  char *colon = strchr(buf, ':'), *colon2;
  if (!colon) return -1;
  *colon = 0;
  long w = -1;
  if ((colon2 = strchr(colon + 1, ':'))) {
    *colon2 = 0;
    if ((w = parse_long(colon2 + 1, 1000000)) < 0) return -1;
  }
  long c = parse_long(buf, INT32_MAX), r = parse_long(colon + 1, 1000000);
  if (c < 0 || r < 1) return -1;
  o->large_count = c, o->large_reps = (int)r, o->large_warm = (int)w;
  return 0;
}

/* Parse and resolve variant v of collective c for p processes into
 * v->canon; 0, 1 if it does not fit (why), 2 if it is not valid (why). */
static int resolve_variant(const bench_coll *c, variant *v, int p, int rank, char *why,
                           size_t wlen) {
  collc_spec spec = {.coll = c->coll, .p = p, .rank = rank, .count = 1,
                     .unit_bytes = bc_size(c), .root = 0, .commutative = 1,
                     .layout = node_layout(MPI_COMM_WORLD)};
  collc_choice ch;
  if (choice_parse(c->coll, v->text, &ch, why, wlen)) return 2;
  if (choice_resolve(&spec, &ch, why, wlen)) return 1;
  if (c->nb && !bc_nb_ready(&spec, &ch))
    return snprintf(why, wlen, "nonblocking, needs set-up: served natively"), 1;
  choice_format(&ch, v->canon, sizeof v->canon);
  return 0;
}

/* Check every variant's syntax (bad: message on rank 0, return 2), drop
 * those that do not fit p processes (listed in o->unfit) and those that
 * resolve to the same algorithm as an earlier one (o->same); 0. */
static int validate_variants(options *o, int p, int rank) {
  int kept = 0;
  for (int i = 0; i < o->nv; i++) {
    variant *v = &o->v[i];
    char why[200];
    int rc = v->kind == RUN_ALGO ? resolve_variant(o->c, v, p, rank, why, sizeof why) : 0, dup = -1;
    if (rc == 2) {
      if (rank == 0) fprintf(stderr, "collc-bench: bad variant '%s': %s\n", v->text, why);
      return 2;
    }
    if (rc == 1) {
      note(o->unfit, sizeof o->unfit, "%s (%s)", v->text, why);
      continue;
    }
    for (int j = 0; j < kept && v->kind == RUN_ALGO; j++)
      if (!strcmp(o->v[j].canon, v->canon)) dup = j;
    if (dup >= 0) {
      note(o->same, sizeof o->same, "%s (= %s)", v->text, o->v[dup].text);
      continue;
    }
    o->v[kept++] = *v;
  }
  o->nv = kept;
  return 0;
}

/* Which options were given on the command line. */
typedef struct {
  int variants, counts, large;
} given;

/* Apply option opt with argument arg to o; 0, or -1 if it is bad. */
static int apply_option(int opt, const char *arg, options *o, given *g) {
  long n = arg ? parse_long(arg, 1000000) : 0;
  switch (opt) {
  case 'C': return (o->c = bc_find(arg)) ? 0 : -1;
  case 'c': g->counts = 1; return parse_counts(arg, o);
  case 'a': g->variants = 1; return add_variants(o, arg);
  case 'w': o->warm = (int)n; return n >= 0 ? 0 : -1;
  case 'r': o->reps = (int)n; return n >= 1 ? 0 : -1;
  case 'l': g->large = 1; return parse_large(arg, o);
  case 'o': o->csv = arg; return 0;
  case 'P': o->persistent = 1; return 0;
  default: return -1;
  }
}

/* The collective's defaults for what the command line left out. */
static void apply_defaults(options *o, const given *g, int p) {
  if (!g->counts) parse_counts(o->c->counts, o);
  if (!g->large && o->c->large) {
    parse_large(o->c->large, o);
    o->large_default = 1;
  }
  if (g->variants) return;
  if (!o->c->variants) {
    default_variants(p, o);
    return;
  }
  char buf[2048];
  o->c->variants(p, buf, sizeof buf);
  add_variants(o, buf);
}

/* Parse the command line into o (identically on every rank); 0, or 2 for
 * bad arguments, 1 for -h. */
static int parse_options(int argc, char **argv, int p, options *o) {
  int opt, rank;
  given g = {0, 0, 0};
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  opterr = rank == 0;
  memset(o, 0, sizeof *o);
  o->c = &bench_colls[0];
  o->warm = 8, o->reps = 40;
  add_variant(o, "native");
  while ((opt = getopt(argc, argv, "C:c:a:w:r:l:o:Ph")) != -1)
    if (apply_option(opt, optarg, o, &g)) {
      if (opt == 'C' && rank == 0)
        fprintf(stderr, "collc-bench: unknown collective '%s'\n", optarg);
      return opt == 'h' ? 1 : 2;
    }
  if (optind != argc || (o->persistent && o->c->nb)) return 2; /* (no persistent I-call) */
  apply_defaults(o, &g, p);
  for (int i = 0; i < o->ncounts; i++)
    if ((o->c->send_p || o->c->recv_p) && o->counts[i] > INT32_MAX / p) {
      if (rank == 0)
        fprintf(stderr, "collc-bench: count %ld too large for p=%d\n", o->counts[i], p);
      return 2;
    }
  return validate_variants(o, p, rank);
}

/* Repetitions for count (the -l rule). */
static int reps_for(const options *o, long count) {
  return o->large_count && count >= o->large_count ? o->large_reps : o->reps;
}

/* Warm-ups for count (the -l rule). */
static int warm_for(const options *o, long count) {
  int large = o->large_count && count >= o->large_count && o->large_warm >= 0;
  return large ? o->large_warm : o->warm;
}

/* Check variant v once against b->ref (bt_check); sets v->status. */
static void check_variant(variant *v, bench *b, long count) {
  v->status = bt_check(b, v->kind, v->text, count);
}

/* One sample of v: one call after a double barrier, or for a collective
 * timed back to back (c->b2b: the barrier) that many calls after one; its
 * time per call into *t. */
static int timed_once(const variant *v, bench *b, long count, double *t) {
  if (!b->c->b2b) return bt_barrier_once(b, v->kind, v->text, count, t);
  PMPI_Barrier(b->comm);
  PMPI_Barrier(b->comm);
  return bt_b2b(b, v->kind, v->text, count, b->c->b2b, t);
}

/* Order statistics of variant v's per-repetition times (max over ranks). */
static void summarise(variant *v, bench *b, const double *times, int reps) {
  PMPI_Reduce(times, b->maxtimes, reps, MPI_DOUBLE, MPI_MAX, 0, b->comm);
  if (b->rank != 0) return;
  qsort(b->maxtimes, (size_t)reps, sizeof(double), bt_cmp_double);
  double med = reps % 2 ? b->maxtimes[reps / 2]
                        : (b->maxtimes[reps / 2 - 1] + b->maxtimes[reps / 2]) / 2;
  v->min_us = b->maxtimes[0] * 1e6;
  v->med_us = med * 1e6;
}

/* Time every variant still OK at count: its warm-ups first, then the
 * repetitions interleaved (repetition i runs each variant once, the order
 * rotated by i), so slow drifts of a shared machine and the cache state
 * left by the previous call hit all variants alike. */
static void time_variants(options *o, bench *b, long count, int reps, int warm) {
  int rc[MAXV] = {0};
  double t;
  for (int k = 0; k < o->nv; k++)
    for (int i = 0; i < warm && o->v[k].status == V_OK; i++)
      rc[k] |= timed_once(&o->v[k], b, count, &t);
  for (int i = 0; i < reps; i++)
    for (int j = 0; j < o->nv; j++) { /* rotated: every variant in every position */
      int k = (i + j) % o->nv;
      if (o->v[k].status == V_OK) rc[k] |= timed_once(&o->v[k], b, count, &b->times[k * reps + i]);
    }
  for (int k = 0; k < o->nv; k++) {
    variant *v = &o->v[k];
    if (v->status != V_OK) continue;
    if (!bt_all_ranks(b, rc[k] == MPI_SUCCESS)) {
      if (b->rank == 0)
        fprintf(stderr, "collc-bench: *** %s failed during timing at count %ld ***\n", v->text,
                count);
      v->status = V_WRONG;
      continue;
    }
    summarise(v, b, &b->times[k * reps], reps);
  }
}

/* Speedup text native_min / v_min into buf ("-" if undefined). */
static const char *speedup(double native_min, const variant *v, char *buf, size_t len) {
  if (v->status != V_OK || v->min_us <= 0 || native_min <= 0) return "-";
  snprintf(buf, len, "%.2fx", native_min / v->min_us);
  return buf;
}

/* Rank 0: print count's table rows and CSV rows (csv may be NULL). */
static void report_count(const options *o, int p, long count, FILE *csv) {
  double native_min = o->v[0].min_us, best = INFINITY;
  long bytes = count * bc_size(o->c);
  int fastest = -1;
  char sp[32];
  for (int i = 0; i < o->nv; i++)
    if (o->v[i].status == V_OK && o->v[i].min_us < best) best = o->v[i].min_us, fastest = i;
  for (int i = 0; i < o->nv; i++) {
    const variant *v = &o->v[i];
    if (v->status != V_OK) {
      printf("%8ld %8ld  %-24s %s\n", count, bytes, v->text,
             v->status == V_WRONG ? "*** WRONG RESULT: excluded ***" : "does not fit: excluded");
      continue;
    }
    printf("%8ld %8ld  %-24s %10.2f %10.2f %8s%s\n", count, bytes, v->text, v->min_us,
           v->med_us, speedup(native_min, v, sp, sizeof sp), i == fastest ? "  <- fastest" : "");
    if (csv)
      fprintf(csv, "%s,%d,%ld,%ld,\"%s\",%.3f,%.3f,%.3f,%.4f\n", o->c->name, p, count, bytes,
              v->text, v->min_us, v->med_us, native_min,
              v->min_us > 0 ? native_min / v->min_us : 0.0);
  }
  printf("\n");
  fflush(stdout);
}

/* Measure every variant at count; returns the number of WRONG variants.
 * Collective. */
static int bench_count(options *o, bench *b, long count, FILE *csv) {
  double t0 = MPI_Wtime();
  int wrong = 0;
  bc_fill(b, count);
  bc_prepare(b, count, b->ref);
  b->c->run(RUN_NATIVE, NULL, b, (int)count, b->ref); /* failure: native is WRONG below */
  for (int i = 0; i < o->nv; i++) {
    o->v[i].status = V_OK;
    check_variant(&o->v[i], b, count);
  }
  bc_prepare(b, count, b->recv); /* bcast: the root's input for the timed calls */
  time_variants(o, b, count, reps_for(o, count), warm_for(o, count));
  for (int i = 0; i < o->nv; i++) wrong += o->v[i].status == V_WRONG;
  if (b->rank == 0) {
    report_count(o, b->p, count, csv);
    fprintf(stderr, "count %ld: %d variants, %.2f s\n", count, o->nv, MPI_Wtime() - t0);
  }
  return wrong;
}

/* Rank 0: the header's first line (collective, p, library, type, method). */
static void print_title(const options *o, int p) {
  char lib[256];
  const bench_coll *c = o->c;
  bt_library_name(lib, sizeof lib);
  printf("# collc-bench %s, p=%d, %s, %s%s%s, %d warm-ups, %d reps", c->name, p, lib,
         bc_type_name(c), coll_reduces(c->coll) ? ", MPI_SUM" : "",
         c->coll == COLLC_COLL_REDUCE || c->coll == COLLC_COLL_BCAST ? ", root 0" : "", o->warm,
         o->reps);
  if (o->large_count) {
    printf(" (%d", o->large_reps);
    if (o->large_warm >= 0) printf(" and %d warm-ups", o->large_warm);
    printf(" for counts >= %ld%s)", o->large_count,
           o->large_default ? ": this collective's default -l, to keep the run short" : "");
  }
  if (c->b2b) printf(", each %d calls back to back after a double barrier (time per call)", c->b2b);
  printf(", interleaved; time = max over ranks, min and median over reps\n");
}

/* Rank 0: the OSU-style header. */
static void print_header(const options *o, int p) {
  const char *n = o->c->name, *type = bc_type_name(o->c);
  print_title(o, p);
  if (o->c->nb)
    printf("# each call %s then MPI_Wait; native = PMPI_%s (the library's own); default =\n"
           "# collc's %s (its rule, nonblocking rows first)\n", o->c->mpi_name,
           o->c->mpi_name + 4, o->c->mpi_name);
  else
    printf("# native = PMPI_%s (the library's own); default = collc_%s (collc's selection "
           "rule);\n", o->c->mpi_name + 4, n);
  printf("# others via collc_%s_algo; speedup = native min / variant min\n", n);
  printf("# unit: %s %s", type, o->c->per);
  if (!bc_no_data(o->c)) printf("; bytes = count * %ld", bc_size(o->c));
  printf("\n");
  if (o->c->coll == COLLC_COLL_REDUCE || o->c->coll == COLLC_COLL_BCAST)
    printf("# rooted: a rank returns once its own part is done, so the minimum depends on how\n"
           "# far apart the ranks leave the barrier; compare the medians too\n");
  if (o->c->dbl)
    printf("# input: integers 0..4095 as doubles (sums exact in any order): results checked "
           "bitwise against native\n");
  int resolved = 0;
  for (int i = 0; i < o->nv; i++)
    if (o->v[i].kind == RUN_ALGO && strcmp(o->v[i].text, o->v[i].canon))
      printf("%s%s = %s", resolved++ ? "; " : "# resolved: ", o->v[i].text, o->v[i].canon);
  if (resolved) printf("\n");
  if (o->skipped[0]) printf("# skipped: %s\n", o->skipped);
  if (o->same[0]) printf("# measured once, same algorithm as an earlier variant: %s\n", o->same);
  if (o->nv > 16) /* collc caches 16 plans per communicator (src/mpi/internal.h) */
    printf("# note: %d variants > 16 cached plans: later ones are recompiled per call\n", o->nv);
  if (o->unfit[0]) printf("# left out, do not fit p=%d: %s\n", p, o->unfit);
  printf("#\n# %6s %8s  %-24s %10s %10s %8s\n", "count", "bytes", "variant", "min(us)",
         "median(us)", "speedup");
  fflush(stdout);
}

/* Set up b on a duplicate of MPI_COMM_WORLD (errors return); 0 or -1. */
static int bench_init(bench *b, const options *o) {
  long maxcount = 0;
  int maxreps = o->large_count && o->large_reps > o->reps ? o->large_reps : o->reps;
  for (int i = 0; i < o->ncounts; i++)
    if (o->counts[i] > maxcount) maxcount = o->counts[i];
  return bt_open(b, o->c, maxcount, (size_t)MAXV * (size_t)maxreps, maxreps);
}

#include "bench_persist.h"
#include "bench_calibrate.h"
#include "bench_overhead.h"

/* Parse the options, measure every count, report; the exit status is 0, 2
 * (bad arguments) or 3 (a WRONG variant). */
int main(int argc, char **argv) {
  static options o;
  bench b;
  int p, rank, wrong = 0;
  MPI_Init(&argc, &argv);
  PMPI_Comm_size(MPI_COMM_WORLD, &p);
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc >= 2 && !strcmp(argv[1], "--calibrate")) {
    int crc = calibrate(MPI_COMM_WORLD, argc > 2 ? argv[2] : NULL);
    MPI_Finalize();
    return crc;
  }
  if (argc >= 2 && !strcmp(argv[1], "--overhead")) {
    int orc = overhead(MPI_COMM_WORLD, argc, argv);
    MPI_Finalize();
    return orc;
  }
  int rc = parse_options(argc, argv, p, &o);
  if (rc || bench_init(&b, &o)) {
    if (rank == 0 && rc) usage();
    if (rank == 0 && !rc) fprintf(stderr, "collc-bench: out of memory\n");
    MPI_Finalize();
    return rc == 1 ? 0 : 2;
  }
  FILE *csv = NULL;
  if (rank == 0 && o.csv && !(csv = fopen(o.csv, "w")))
    fprintf(stderr, "collc-bench: cannot write %s\n", o.csv);
  if (csv && o.persistent)
    fprintf(csv, "collective,p,count,bytes,variant,cold_min_us,cold_median_us,init_median_us,"
                 "exec_min_us\n");
  else if (csv)
    fprintf(csv, "collective,p,count,bytes,variant,min_us,median_us,native_min_us,speedup\n");
  if (rank == 0) o.persistent ? persist_header(&o, p) : print_header(&o, p);
  for (int i = 0; i < o.ncounts; i++)
    wrong += o.persistent ? persist_count(&o, &b, o.counts[i], csv)
                          : bench_count(&o, &b, o.counts[i], csv);
  if (csv) fclose(csv);
  if (rank == 0 && wrong)
    fprintf(stderr, "collc-bench: *** %d WRONG variant result(s): see above ***\n", wrong);
  bt_close(&b);
  MPI_Finalize();
  return wrong ? 3 : 0;
}
