/* collc-tune - tune the default rule on the machine and communicator it
 * runs on, and write a tuning file (README, "Tuning files") that
 * COLLC_TUNING then reads.
 *
 *   mpirun -np P collc-tune [-o FILE] [-C COLLS] [-m MAXBYTES] [--budget SECONDS] [--quick]
 *                           [--nb]
 *
 *   -o FILE     the tuning file (default collc-tuning.json)
 *   -C COLLS    comma separated collectives (default the ten with data:
 *               allgatherv and reduce_scatter with equal counts, as OSU calls
 *               them, their bytes the whole vector's; gather and scatter to
 *               root 0, bytes per block; barrier too if named:
 *               one class, 0 B); i<coll> (iallreduce, ...) the
 *               nonblocking form: each call MPI_I<coll> then MPI_Wait, native
 *               PMPI_I<coll>, its rows "nb" (tried first by nonblocking calls)
 *   --nb        also the nonblocking form of each collective of -C (default off)
 *   -m BYTES    largest size class, per vector or block as the rule counts
 *               bytes (default 16 MiB)
 *   --budget S  seconds for the whole run, roughly (default 600; --quick 20)
 *   --quick     three size classes (1 B, 1 KB, 100 KB), the two most promising
 *               candidates per size, 3 to 10 repetitions
 *
 *   collc-tune [--export-ompi FILE] [--export-mpich FILE] TUNING-FILE...
 *               no measurement: the native algorithm fastest per size over
 *               the files (runs each forcing one, bench/tune-native.sh) as
 *               an Open MPI dynamic rules file, an MPICH CSEL JSON file
 *               (tune_export.h)
 *
 * For each collective and size class (half decades from 1 B), the
 * candidates are collc-bench's variants of the collective (registry
 * algorithms with factor lists for p, torus dims d = 2..4 and components,
 * tree fan-ins, hier and shm variants) that fit the communicator. The cost
 * simulator, calibrated first on this communicator (collc-bench
 * --calibrate's measurement), predicts each; the few fastest predicted are
 * checked bitwise against native and timed next to it, in two modes
 * interleaved per repetition: back to back (as OSU and most applications
 * call) and barrier-separated (the seed papers' method); a sample is the
 * slowest rank's time. Repetitions go on until every mean's 95% confidence
 * interval is within 2.5% of it (resolving the 5% below) or the size
 * class's share of the budget is spent. The candidate with the best median
 * speedup in its slower mode replaces native only where it is at least 5%
 * faster in both modes, significantly (Mann-Whitney: native's samples
 * against 1.05 x the candidate's, one-sided 95%; robust to the outliers of
 * a shared machine). Then every pick is confirmed (the last quarter of the
 * budget): timed again against native in rounds that each visit every
 * pick for a few repetitions, round after round over that time (2 rounds
 * at least), so that a decision rests on samples from windows seconds
 * apart, not on the one window of its first measurement (a machine that
 * changes state for seconds at a time, as this 2-core VM does, is decided
 * over its states); a pick the rounds' samples together do not decide
 * again (the same 5% rule), or that fell below 0.95x native in more than a
 * tenth of the rounds, is dropped for native, and the boundaries around it
 * are refined again.
 * Adjacent size classes with one decision become one rule row, bounds at
 * the geometric midpoints between measured sizes (the last row ends a
 * quarter decade above the largest measured size, the first starts at 0),
 * for this p only. Every decision is a row, native ones too: they come
 * before the built-in rows. The performance guidelines (check/guidelines.h)
 * are checked over the measured points, for native and for collc's
 * decisions, in both modes: each violation printed (stderr) and written
 * into the file ("guidelines"), with the native configuration measured
 * ("native": the forced algorithm per collective, or "default"); where
 * native violates one whose mock-up a collc plan realises, that size is
 * timed again with the plan among its candidates. Progress lines (stderr) estimate the time
 * left; a summary table ends the run (stdout). Exit status 0, 2 (bad
 * arguments, no file written), 3 (a WRONG variant result: never used). */
#include <hwloc.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "collc.h"
#include "algo/algo.h"
#include "check/guidelines.h"
#include "check/simulate.h"
#include "mpi/internal.h"
#include "plan/tuning.h"
#include "bench_colls.h"
#include "bench_time.h"
#include "bench_calibrate.h"
#include "tune_export.h"

#define MAXCAND 48 /* candidates of a collective */
#define MAXCOLLS (2 * COLLC_COLL_COUNT) /* -C: blocking and nonblocking forms */
#define MAXKEEP 3  /* timed per size class besides native */
#define MAXCLS 40  /* size classes, boundary points included */
#define MODES 2    /* 0: back to back, 1: barrier-separated */
#define B2B_CALLS 4 /* calls per back-to-back sample */
#define CONFIRM_REPS 5 /* confirm: repetitions per pick and round */
#define CONFIRM_FLOOR 0.95 /* confirm: the pick's least ratio in 9 rounds of 10 */
#define CONFIRM_SHARE 0.25 /* confirm: its share of the budget (refinements after it included) */

static const char *const mode_names[MODES] = {"b2b", "barrier"};

/* What a candidate list adds to collc-bench's variants of a collective:
 * more radices and fan-ins, torus dims and components (a table: the
 * ;-separated texts; those that do not fit p are dropped). */
static const char *const extra[COLLC_COLL_COUNT] = {
    [COLLC_COLL_ALLTOALL] = "pairwise;linear;bruck:2;bruck:3;bruck:4;torus:d=2:native;"
                            "torus:d=2:linear;torus:d=3:native;torus:d=3:linear;"
                            "torus:d=4:native;torus:d=4:linear;hier;shm",
    [COLLC_COLL_ALLREDUCE] = "tree:3;tree:4;recexch:flat",
    [COLLC_COLL_REDUCE_SCATTER_BLOCK] = "recexch:flat;hier:node=copyin",
    [COLLC_COLL_ALLGATHER] = "recexch:flat",
    [COLLC_COLL_REDUCE] = "tree:3;tree:4;hier:net=tree:3;hier:node=copyin",
    [COLLC_COLL_BCAST] = "tree:3;tree:4;hier:net=tree:3",
    [COLLC_COLL_BARRIER] = "dissem:3;flags:4;hier:net=dissem:4",
    [COLLC_COLL_ALLGATHERV] = "recexch:flat",
    [COLLC_COLL_REDUCE_SCATTER] = "recexch:flat;hier:node=copyin",
};

typedef struct {
  const bench_coll *colls[MAXCOLLS];
  int ncolls, quick, nb, keep, min_reps, max_reps;
  long long maxbytes;
  double budget;
  const char *out, *x_ompi, *x_mpich; /* --export-ompi, --export-mpich */
  char **files;                       /* their tuning files */
  int nfiles;
} options;

#define MAXREPS 200 /* samples per variant and mode */

typedef struct {
  double x[MAXREPS]; /* seconds per call, the slowest rank's */
  int n;
} acc;

/* a's mean and sample variance (INFINITY with fewer than 2 samples). */
static double acc_mean(const acc *a) {
  double s = 0;
  for (int i = 0; i < a->n; i++) s += a->x[i];
  return a->n ? s / a->n : 0;
}
static double acc_var(const acc *a) {
  double m = acc_mean(a), s = 0;
  for (int i = 0; i < a->n; i++) s += (a->x[i] - m) * (a->x[i] - m);
  return a->n > 1 ? s / (a->n - 1) : INFINITY;
}
/* Half-width of a's 95% confidence interval of the mean. */
static double acc_ci(const acc *a) { return a->n > 1 ? 1.96 * sqrt(acc_var(a) / a->n) : INFINITY; }

/* a's median (0 if empty). */
static double acc_median(const acc *a) {
  double y[MAXREPS];
  if (!a->n) return 0;
  memcpy(y, a->x, (size_t)a->n * sizeof y[0]);
  qsort(y, (size_t)a->n, sizeof y[0], bt_cmp_double);
  return a->n % 2 ? y[a->n / 2] : (y[a->n / 2 - 1] + y[a->n / 2]) / 2;
}

typedef struct {
  long count;
  long long bytes;
  int nv;                           /* [0] native, then the kept candidates */
  char text[MAXKEEP + 1][TUNE_TEXT_MAX];
  double pred_us[MAXKEEP + 1];      /* the simulator's (native: its model's) */
  int status[MAXKEEP + 1];          /* V_* */
  acc m[MAXKEEP + 1][MODES];        /* seconds per call */
  int pick;                         /* the decision: 0 native, else a candidate */
  int best;                         /* the fastest candidate (both modes), 0 if none */
  int refined;                      /* a boundary point between two classes (refine) */
  int retimed;                      /* timed again with its neighbours' picks (second_opinion) */
  double conf[MODES];               /* confirm: native / pick per mode (0: not confirmed) */
  double conf_floor;                /* confirm: the pick's ratio in 9 rounds of 10 */
  int dropped;                      /* confirm: the pick did not hold, native decides */
} point;

typedef struct {
  const bench_coll *c;
  char cand[MAXCAND][TUNE_TEXT_MAX];
  int ncand;
  point pt[MAXCLS];
  int npt;
} coll_run;

/* Print usage (rank 0). */
static void usage(void) {
  fprintf(stderr, "usage: mpirun -np P collc-tune [-o FILE] [-C COLLS] [-m MAXBYTES] "
                  "[--budget SECONDS] [--quick] [--nb]\n"
                  "       collc-tune [--export-ompi FILE] [--export-mpich FILE] TUNING-FILE...\n");
}

/* Whether o's collectives include c. */
static int has_coll(const options *o, const bench_coll *c) {
  for (int i = 0; i < o->ncolls; i++)
    if (o->colls[i] == c) return 1;
  return 0;
}

/* --nb: append to o's collectives the nonblocking form of each blocking one
 * (those not named already); 0, or -1 if there are too many. */
static int add_nonblocking(options *o) {
  for (int i = 0, n = o->ncolls; i < n; i++) {
    const bench_coll *c = bc_nonblocking(o->colls[i]);
    if (!c || has_coll(o, c)) continue;
    if (o->ncolls == MAXCOLLS) return -1;
    o->colls[o->ncolls++] = c;
  }
  return 0;
}

/* Parse argv into o; 0, or -1 (bad arguments). */
static int parse_options(int argc, char **argv, options *o) {
  *o = (options){.maxbytes = 16 << 20, .budget = -1, .out = "collc-tuning.json"};
  const char *colls =
      "alltoall,allreduce,reduce_scatter_block,allgather,reduce,bcast,allgatherv,reduce_scatter,"
      "gather,scatter";
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    char *end = NULL;
    if (!strcmp(a, "--quick")) o->quick = 1;
    else if (!strcmp(a, "--nb")) o->nb = 1;
    else if (!strcmp(a, "-o") && v) o->out = argv[++i];
    else if (!strcmp(a, "-C") && v) colls = argv[++i];
    else if (!strcmp(a, "-m") && v) o->maxbytes = strtoll(argv[++i], &end, 10);
    else if (!strcmp(a, "--budget") && v) o->budget = strtod(argv[++i], &end);
    else if (!strcmp(a, "--export-ompi") && v) o->x_ompi = argv[++i];
    else if (!strcmp(a, "--export-mpich") && v) o->x_mpich = argv[++i];
    else if (*a != '-' && !o->nfiles) o->files = &argv[i], o->nfiles = argc - i, i = argc;
    else return -1;
    if (end && (*end || end == argv[i])) return -1;
  }
  char buf[256];
  snprintf(buf, sizeof buf, "%s", colls);
  for (char *s = NULL, *t = strtok_r(buf, ",", &s); t; t = strtok_r(NULL, ",", &s))
    if (o->ncolls == MAXCOLLS || !(o->colls[o->ncolls++] = bc_find(t))) return -1;
  if (o->nb && add_nonblocking(o)) return -1;
  if (o->nfiles && !o->x_ompi && !o->x_mpich) return -1; /* (files only to export) */
  if (o->budget < 0) o->budget = o->quick ? 20 : 600;
  o->keep = o->quick ? 2 : MAXKEEP;
  o->min_reps = o->quick ? 3 : 10, o->max_reps = o->quick ? 10 : MAXREPS;
  return o->ncolls && o->maxbytes >= 1 && o->budget > 0 ? 0 : -1;
}

#define TUNE_VMAXP 1024 /* counted collectives (bench_coll.keyp): timed up to this p (as served) */

/* The spec of collective c at count on communicator comm of p ranks
 * (rank 0's; its node layout is known on every rank after its first use,
 * which is collective). */
static collc_spec spec_of(const bench_coll *c, int p, MPI_Comm comm, long count,
                          int commutative) {
  static int64_t counts[TUNE_VMAXP]; /* (a counted collective's: p equal counts, packed) */
  collc_spec s = {.coll = c->coll, .p = p, .rank = 0, .count = count, .unit_bytes = bc_size(c),
                  .root = 0, .commutative = commutative, .layout = node_layout(comm)};
  if (c->keyp && p <= TUNE_VMAXP) {
    for (int i = 0; i < p; i++) counts[i] = count;
    s.counts = counts, s.count = (long)p * count;
  }
  return s;
}

/* Whether text fits s; its canonical form into canon. */
static int fits(const collc_spec *s, const char *text, char *canon, size_t len) {
  collc_choice ch;
  char why[200];
  if (choice_parse(s->coll, text, &ch, why, sizeof why) || choice_resolve(s, &ch, why, sizeof why))
    return 0;
  choice_format(&ch, canon, len);
  return 1;
}

/* Whether text (fitting s) serves a nonblocking call as itself (bc_nb_ready). */
static int nb_ready(const collc_spec *s, const char *text) {
  collc_choice ch;
  char why[200];
  return !choice_parse(s->coll, text, &ch, why, sizeof why) &&
         !choice_resolve(s, &ch, why, sizeof why) && bc_nb_ready(s, &ch);
}

/* R's candidates for b's communicator: collc-bench's variants and the
 * extras, those that fit (for a nonblocking form, those needing no
 * set-up), each algorithm once. */
static void candidates(coll_run *R, const bench *b) {
  char list[4096] = "", canon[MAXCAND][TUNE_TEXT_MAX], cn[TUNE_TEXT_MAX];
  if (R->c->variants) R->c->variants(b->p, list, sizeof list);
  size_t at = strlen(list);
  snprintf(list + at, sizeof list - at, ";%s", extra[R->c->coll]);
  collc_spec s = spec_of(b->c, b->p, b->comm, 1, 1);
  for (char *sv = NULL, *t = strtok_r(list, ";", &sv); t; t = strtok_r(NULL, ";", &sv)) {
    int dup = !strcmp(t, "native") || !strcmp(t, "default") || !fits(&s, t, cn, sizeof cn) ||
              (R->c->nb && !nb_ready(&s, t));
    for (int i = 0; i < R->ncand && !dup; i++) dup = !strcmp(canon[i], cn);
    if (dup || R->ncand == MAXCAND || strlen(t) >= TUNE_TEXT_MAX) continue;
    snprintf(canon[R->ncand], TUNE_TEXT_MAX, "%s", cn);
    snprintf(R->cand[R->ncand++], TUNE_TEXT_MAX, "%s", t);
  }
}

#define BUF_MAX (256LL << 20) /* bytes of a p-block buffer (all-to-all, ...) */

/* The size classes of R up to maxbytes (half decades from 1 B, then
 * maxbytes itself; --quick three), for p ranks (a collective with p-block
 * buffers stops at BUF_MAX / p per block): element counts, each once. A
 * counted collective's bytes are the whole vector's (bc_key_size: p blocks
 * of count elements; none above TUNE_VMAXP ranks). A collective without
 * data (the barrier) has one class: count 0, 0 B. */
static void size_classes(coll_run *R, const options *o, int p) {
  static const long long quick[] = {1, 1000, 100000};
  if (bc_no_data(R->c)) {
    R->pt[R->npt++] = (point){.count = 0, .bytes = 0};
    return;
  }
  int blocks = (R->c->send_p || R->c->recv_p) && !R->c->keyp; /* (keyp: bytes are the buffer's) */
  long long max = blocks ? fmin(o->maxbytes, BUF_MAX / p) : fmin(o->maxbytes, BUF_MAX);
  long esz = bc_key_size(R->c, p), last = 0;
  if (R->c->keyp && p > TUNE_VMAXP) return; /* (native beyond: nothing to time) */
  for (int k = 0; R->npt < MAXCLS; k++) {
    long long b = o->quick ? (k < 3 ? quick[k] : LLONG_MAX) : llround(pow(10, k / 2.0));
    if (b > max) b = k && !o->quick && last * esz < max ? max : 0;
    if (b < 1) break;
    long count = b / esz > 1 ? (long)(b / esz) : 1;
    if (count != last) R->pt[R->npt++] = (point){.count = count, .bytes = (long long)count * esz};
    last = count;
    if (b == max) break;
  }
}

/* Rank 0: the simulator's time of text for s under M (INFINITY if none). */
static double predict(const collc_spec *s, const char *text, const sim_params *M) {
  collc_choice ch;
  sim_report rep = {0};
  char why[200];
  if (choice_parse(s->coll, text, &ch, why, sizeof why) || choice_resolve(s, &ch, why, sizeof why))
    return INFINITY;
  return sim_choice(s, &ch, M, &rep) ? rep.time : INFINITY;
}

static int add_variant(point *P, const char *text);

/* Whether candidate i of R names the algorithm of one of picks pick[0..n). */
static int same_algo(const coll_run *R, const int *pick, int n, int i) {
  size_t li = strcspn(R->cand[i], ":");
  for (int k = 0; k < n; k++)
    if (strcspn(R->cand[pick[k]], ":") == li && !strncmp(R->cand[pick[k]], R->cand[i], li))
      return 1;
  return 0;
}

/* The candidate of R with the smallest finite prediction t[], of another
 * algorithm than picks pick[0..n) if distinct; -1 if none. */
static int fastest(const coll_run *R, const double *t, const int *pick, int n, int distinct) {
  int m = -1;
  for (int i = 0; i < R->ncand; i++)
    if (isfinite(t[i]) && (m < 0 || t[i] < t[m]) && !(distinct && same_algo(R, pick, n, i)))
      m = i;
  return m;
}

/* Test hook COLLC_TUNE_TEST_PRUNE=<bytes>: the size class of that many bytes
 * keeps no candidate when pruned (not even the incumbent), as if the simulator
 * had dropped every winner there (tests/tune_mpi.sh: its neighbours' picks
 * are timed there by second_opinion). 0: off. */
static long long test_prune_at;

/* Choose point P's variants: native, the keep candidates of R the
 * simulator (rank 0, parameters M) predicts fastest, each of another
 * algorithm while there are others (the model ranks variants of one
 * algorithm better than it ranks algorithms: at p = 2 it kept three hier
 * variants for reduce, where OSU measures tree 1.2x-1.9x native), and the rule's
 * current choice for P (the incumbent: the built-in or tuning-file row,
 * if it names one of collc's algorithms that fits), so that a run replaces
 * a measured row only by one measured faster; broadcast. */
static void prune(const coll_run *R, point *P, bench *b, const sim_params *M, int keep) {
  int pick[MAXKEEP], src;
  double pred[MAXKEEP + 1] = {0}, t[MAXCAND];
  char inc[TUNE_TEXT_MAX] = "native", canon[TUNE_TEXT_MAX];
  for (int k = 0; k < MAXKEEP; k++) pick[k] = -1;
  if (b->rank == 0) {
    collc_spec s = spec_of(b->c, b->p, b->comm, P->count, 1);
    const char *cur = b->c->nb ? select_nonblocking(&s, 1, &src) : select_default(&s, &src);
    if (strlen(cur) < sizeof inc && fits(&s, cur, canon, sizeof canon) &&
        (!b->c->nb || nb_ready(&s, cur)))
      snprintf(inc, sizeof inc, "%s", cur);
    char model[256];
    pred[0] = predict(&s, sim_native_model(&s, model, sizeof model), M);
    for (int i = 0; i < R->ncand; i++) t[i] = predict(&s, R->cand[i], M);
    for (int pass = 0, k = 0, m; pass < 2; pass++) /* other algorithms first, then any */
      for (; k < keep && (m = fastest(R, t, pick, k, !pass)) >= 0; k++)
        pick[k] = m, pred[k + 1] = t[m], t[m] = INFINITY;
  }
  PMPI_Bcast(pick, MAXKEEP, MPI_INT, 0, b->comm);
  PMPI_Bcast(pred, MAXKEEP + 1, MPI_DOUBLE, 0, b->comm);
  PMPI_Bcast(inc, sizeof inc, MPI_CHAR, 0, b->comm);
  P->nv = 1;
  snprintf(P->text[0], TUNE_TEXT_MAX, "native");
  P->pred_us[0] = pred[0] * 1e6;
  for (int k = 0; k < keep; k++)
    if (pick[k] >= 0) {
      P->pred_us[P->nv] = pred[k + 1] * 1e6;
      memcpy(P->text[P->nv++], R->cand[pick[k]], TUNE_TEXT_MAX); /* (both NUL-terminated) */
    }
  if (test_prune_at && P->bytes == test_prune_at) P->nv = 1; /* (the hook: nothing kept) */
  else if (strcmp(inc, "native")) add_variant(P, inc); /* (in place of the last pick when full) */
}

/* The kind of point P's variant v (bench_colls.h). */
static int kind_of(int v) { return v ? RUN_ALGO : RUN_NATIVE; }

/* Whether every OK variant of P has both modes' means known to 2.5%. */
static int tight(const point *P) {
  for (int v = 0; v < P->nv; v++)
    for (int m = 0; m < MODES && P->status[v] == V_OK; m++)
      if (acc_ci(&P->m[v][m]) > 0.025 * acc_mean(&P->m[v][m])) return 0;
  return 1;
}

/* Test hook COLLC_TUNE_TEST_NATIVE=<bytes>: native's samples are divided by
 * 100 below that size and multiplied by 100 from it on, so that the decisions
 * change there for certain (tests/tune_mpi.sh: the boundary refined). 0: off. */
static long long test_native_at;
/* Test hook COLLC_TUNE_TEST_DRIFT=1: in the confirmation rounds native's
 * samples are divided by 10^4 (the machine changed state after the sweep),
 * so that every pick is dropped there for certain (tests/tune_mpi.sh). */
static int test_drift, confirming;

/* Repetition r of P's OK variants (order rotated by r), each in both
 * modes: the slowest rank's times added to P->m (a variant failing on
 * any rank becomes V_WRONG). Returns whether rank 0 is past deadline (its
 * clock; the answer the same on every rank). Collective. */
static int repetition(point *P, bench *b, int r, double deadline) {
  double t[MODES * (MAXKEEP + 1) + 1] = {0}, mx[MODES * (MAXKEEP + 1) + 1];
  int n = MODES * P->nv;
  for (int j = 0; j < P->nv; j++) {
    int v = (r + j) % P->nv, rc;
    if (P->status[v] != V_OK) continue;
    rc = bt_b2b(b, kind_of(v), P->text[v], P->count, B2B_CALLS, &t[MODES * v]);
    rc |= bt_barrier_once(b, kind_of(v), P->text[v], P->count, &t[MODES * v + 1]);
    if (rc) t[MODES * v] = INFINITY; /* (the max over ranks: failed on some rank) */
  }
  t[n] = b->rank == 0 && MPI_Wtime() > deadline; /* (rank 0's clock: others' may be offset) */
  PMPI_Allreduce(t, mx, n + 1, MPI_DOUBLE, MPI_MAX, b->comm);
  for (int m = 0; test_native_at && m < MODES; m++) mx[m] *= P->bytes < test_native_at ? 0.01 : 100;
  for (int m = 0; test_drift && confirming && m < MODES; m++) mx[m] *= 1e-4;
  for (int v = 0; v < P->nv; v++) {
    if (P->status[v] == V_OK && isinf(mx[MODES * v])) P->status[v] = V_WRONG;
    for (int m = 0; m < MODES && P->status[v] == V_OK; m++) {
      acc *a = &P->m[v][m];
      if (a->n < MAXREPS) a->x[a->n++] = mx[MODES * v + m];
    }
  }
  return mx[n] > 0;
}

/* Check and time P's variants: at least min_reps repetitions, then until
 * the repetitions reach max_reps or deadline passes or (stop_tight) their
 * means are tight. Collective. */
static void measure_n(point *P, bench *b, int min_reps, int max_reps, int stop_tight,
                      double deadline) {
  bc_fill(b, P->count);
  bc_prepare(b, P->count, b->ref);
  b->c->run(RUN_NATIVE, NULL, b, (int)P->count, b->ref);
  for (int v = 0; v < P->nv; v++) P->status[v] = bt_check(b, kind_of(v), P->text[v], P->count);
  bc_prepare(b, P->count, b->recv); /* bcast: the root's input for the timed calls */
  for (int v = 0; v < P->nv; v++) /* warm-up: the plan compiled, caches touched */
    for (int i = 0; i < 2 && P->status[v] == V_OK; i++)
      b->c->run(kind_of(v), P->text[v], b, (int)P->count, b->recv);
  for (int r = 0; r < max_reps; r++) {
    int late = repetition(P, b, r, deadline);
    if (r + 1 >= min_reps && (late || (stop_tight && tight(P)))) break;
  }
}

/* Time P's variants until their means are tight, the repetitions run out
 * or deadline passes (after the minimum). Collective. */
static void measure(point *P, bench *b, const options *o, double deadline) {
  measure_n(P, b, o->min_reps, o->max_reps, 1, deadline);
}

/* Native's median over candidate v's in mode m. */
static double ratio(const point *P, int v, int m) {
  double c = acc_median(&P->m[v][m]);
  return c > 0 ? acc_median(&P->m[0][m]) / c : 0;
}

/* Whether P's candidate v is at least 5% faster than native in mode m,
 * with one-sided 95% significance: the Mann-Whitney test of native's
 * samples against 1.05 x the candidate's (robust to this machine's
 * outliers). */
static int faster(const point *P, int v, int m) {
  const acc *n = &P->m[0][m], *c = &P->m[v][m];
  return gl_greater(n->x, n->n, c->x, c->n, 1.05);
}

/* P's decision: the candidate fastest in its slower mode (P->best), taken
 * (P->pick) only if it is significantly >= 5% faster in both modes. */
static void decide(point *P) {
  double best = 0;
  P->pick = P->best = 0;
  if (P->status[0] != V_OK) return; /* (no baseline: native stays) */
  for (int v = 1; v < P->nv; v++) {
    double r = fmin(ratio(P, v, 0), ratio(P, v, 1));
    if (P->status[v] != V_OK || r <= best) continue;
    best = r, P->best = v;
  }
  if (P->best && faster(P, P->best, 0) && faster(P, P->best, 1)) P->pick = P->best;
}

/* Rank 0: the progress line of point P of collective c (done of total
 * classes, t0: the run's start; the time left estimated from the pace so
 * far, at most the budget left). */
static void progress(const point *P, const char *c, int done, int total, double t0,
                     double end) {
  double now = MPI_Wtime(), left = fmin((now - t0) / done * (total - done), fmax(0, end - now));
  fprintf(stderr, "collc-tune: [%d/%d] %s %lld B: native %.2f us", done, total, c, P->bytes,
          acc_median(&P->m[0][1]) * 1e6);
  if (P->best)
    fprintf(stderr, "; %s %.2f us (%.2fx b2b, %.2fx barrier, %d reps)", P->text[P->best],
            acc_median(&P->m[P->best][1]) * 1e6, ratio(P, P->best, 0), ratio(P, P->best, 1),
            P->m[P->best][1].n);
  fprintf(stderr, " -> %s; about %.0f s left\n", P->text[P->pick], left);
}

/* Where adjacent classes i, i + 1 of R decided differently, time their
 * geometric midpoint with native and both decisions (inserted between
 * them, refined), so that the bound between the two rows lies within a
 * factor 1.33 of where the winner changes, not 1.78 (the square root of
 * the interval: half a decade, then a quarter). left: the
 * classes still to come after R's (their share of the budget is kept).
 * Rank 0 prints a line per point. Collective; returns the WRONG met. */
static int refine(coll_run *R, bench *b, const options *o, int left, double end) {
  int at[MAXCLS], n = 0, wrong = 0;
  for (int i = 0; i + 1 < R->npt; i++)
    if (R->pt[i].nv && R->pt[i + 1].nv &&
        strcmp(R->pt[i].text[R->pt[i].pick], R->pt[i + 1].text[R->pt[i + 1].pick]))
      at[n++] = i;
  for (int k = n - 1; k >= 0 && R->npt < MAXCLS; k--) { /* (from the top: indices below hold) */
    const point *lo = &R->pt[at[k]], *hi = &R->pt[at[k] + 1];
    long esz = bc_key_size(R->c, b->p), count = (long)(sqrt((double)lo->bytes * (double)hi->bytes) / esz);
    if (count <= lo->count || count >= hi->count) continue;
    point M = {.count = count, .bytes = (long long)count * esz, .nv = 1, .refined = 1};
    snprintf(M.text[0], TUNE_TEXT_MAX, "native");
    M.pred_us[0] = NAN;
    if (lo->pick) add_variant(&M, lo->text[lo->pick]);
    if (hi->pick) add_variant(&M, hi->text[hi->pick]);
    double now = MPI_Wtime(), deadline = now + fmax(0, end - now) / (left + k + 1);
    PMPI_Bcast(&deadline, 1, MPI_DOUBLE, 0, b->comm);
    measure(&M, b, o, deadline);
    decide(&M);
    for (int v = 0; v < M.nv; v++) wrong += M.status[v] == V_WRONG;
    if (b->rank == 0)
      fprintf(stderr, "collc-tune: %s boundary %lld-%lld B (%s | %s): %lld B -> %s\n", R->c->name,
              lo->bytes, hi->bytes, lo->text[lo->pick], hi->text[hi->pick], M.bytes, M.text[M.pick]);
    memmove(&R->pt[at[k] + 2], &R->pt[at[k] + 1], (size_t)(R->npt - at[k] - 1) * sizeof M);
    R->pt[at[k] + 1] = M, R->npt++;
  }
  return wrong;
}

/* Whether text is one of P's timed variants. */
static int timed(const point *P, const char *text) {
  for (int v = 0; v < P->nv; v++)
    if (!strcmp(P->text[v], text)) return 1;
  return 0;
}

/* Second opinions: where class i of R did not time what a neighbouring
 * class (i - 1, i + 1) picked, time i again with native, its own best and
 * those picks, and decide again (the same rule). The simulator prunes each
 * class alone and can drop, at one size, the plan that wins on both sides
 * of it (reduce at p = 2: hier:node=copyin 1.6x-2.2x at 178 KB and 562 KB,
 * not timed at 316 KB, which then went to native). The picks of the first
 * sweep decide what is added. left: the classes still to come after R's
 * (their share of the budget is kept). Rank 0 prints a line per point.
 * Collective; returns the WRONG met. */
static int second_opinion(coll_run *R, bench *b, const options *o, int left, double end) {
  char pick[MAXCLS][TUNE_TEXT_MAX];
  int wrong = 0;
  for (int i = 0; i < R->npt; i++) snprintf(pick[i], TUNE_TEXT_MAX, "%s", R->pt[i].text[R->pt[i].pick]);
  for (int i = 0; i < R->npt; i++) {
    point *P = &R->pt[i], M = {.count = P->count, .bytes = P->bytes, .nv = 1};
    int add = 0;
    for (int j = i - 1; j <= i + 1; j += 2)
      add |= j >= 0 && j < R->npt && R->pt[j].nv && !timed(P, pick[j]);
    if (!P->nv || !add) continue;
    snprintf(M.text[0], TUNE_TEXT_MAX, "native");
    M.pred_us[0] = P->pred_us[0];
    if (P->best) add_variant(&M, P->text[P->best]);
    for (int j = i - 1; j <= i + 1; j += 2)
      if (j >= 0 && j < R->npt && R->pt[j].nv && strcmp(pick[j], "native")) add_variant(&M, pick[j]);
    double now = MPI_Wtime(), deadline = now + fmax(0, end - now) / (left + R->npt - i);
    PMPI_Bcast(&deadline, 1, MPI_DOUBLE, 0, b->comm);
    measure(&M, b, o, deadline);
    decide(&M);
    for (int v = 0; v < M.nv; v++) wrong += M.status[v] == V_WRONG;
    if (b->rank == 0)
      fprintf(stderr, "collc-tune: %s %lld B timed again with its neighbours' picks (%s | %s): "
              "%s -> %s\n", R->c->name, P->bytes, i ? pick[i - 1] : "-",
              i + 1 < R->npt ? pick[i + 1] : "-", pick[i], M.text[M.pick]);
    M.retimed = 1;
    *P = M;
  }
  return wrong;
}

/* Measure collective R on a communicator of its own: candidates, then
 * per size class prune, measure, decide; then second opinions where a
 * neighbour's pick was not timed, and the boundaries refined.
 * done counts the classes measured of total; returns the WRONG variants
 * met. Collective. */
static int tune_coll(coll_run *R, const options *o, const sim_params *M, int *done, int total,
                     double t0, double end) {
  bench b;
  int wrong = 0;
  if (!R->npt || bt_open(&b, R->c, R->pt[R->npt - 1].count, 1, 1)) { /* (none measured) */
    if (R->npt && b.rank == 0) fprintf(stderr, "collc-tune: %s: out of memory\n", R->c->name);
    if (R->npt) bt_close(&b);
    *done += R->npt;
    return 0;
  }
  candidates(R, &b);
  for (int i = 0; i < R->npt; i++) {
    point *P = &R->pt[i];
    double now = MPI_Wtime(), deadline = now + fmax(0, end - now) / (total - *done);
    PMPI_Bcast(&deadline, 1, MPI_DOUBLE, 0, b.comm); /* (rank 0's clock decides) */
    prune(R, P, &b, M, o->keep);
    measure(P, &b, o, deadline);
    decide(P);
    for (int v = 0; v < P->nv; v++) wrong += P->status[v] == V_WRONG;
    if (b.rank == 0) progress(P, R->c->name, ++*done, total, t0, end);
    else ++*done;
  }
  wrong += second_opinion(R, &b, o, total - *done, end);
  wrong += refine(R, &b, o, total - *done, end);
  bt_close(&b);
  return wrong;
}

/* Row R's text for a non-commutative operation: its algorithm where that
 * takes one (collective c on MPI_COMM_WORLD, p ranks), else native. */
static void noncomm_of(tune_row *R, const bench_coll *c, int p, long count) {
  collc_spec s = spec_of(c, p, MPI_COMM_WORLD, count, 0);
  char canon[TUNE_TEXT_MAX];
  if (!coll_reduces(R->coll) || !strcmp(R->algo, "native")) return;
  snprintf(R->noncomm, sizeof R->noncomm, "%s", fits(&s, R->algo, canon, sizeof canon) ? R->algo
                                                                                       : "native");
}

/* Append C's decisions as rows (library lib, this p only) to rows[*n]:
 * adjacent classes with one decision merged, bounds at the geometric
 * midpoints; ratio: the smallest of the measured ones (both modes, the
 * sweep's and the confirmation's). */
static void rows_of(const coll_run *C, int p, int lib, tune_row *rows, int *n) {
  for (int i = 0; i < C->npt && *n < TUNE_MAX_ROWS; i++) {
    const point *P = &C->pt[i];
    if (!P->nv) continue; /* (not measured: no row) */
    const char *a = P->text[P->pick];
    double r = P->pick ? fmin(ratio(P, P->pick, 0), ratio(P, P->pick, 1)) : 1.0;
    if (P->pick && P->conf[0] > 0) r = fmin(r, fmin(P->conf[0], P->conf[1])); /* (confirmed) */
    long long lo = i ? (long long)sqrt((double)C->pt[i - 1].bytes * (double)P->bytes) + 1 : 0;
    long long hi = i + 1 < C->npt ? (long long)sqrt((double)P->bytes * (double)C->pt[i + 1].bytes)
                                  : (long long)(P->bytes * pow(10, 0.25));
    tune_row *R = *n ? &rows[*n - 1] : NULL; /* (merged into the previous row?) */
    if (R && R->coll == C->c->coll && R->nb == C->c->nb && !strcmp(R->algo, a) &&
        R->bmax + 1 == lo) {
      R->bmax = hi, R->ratio = fmin(R->ratio, r);
      continue;
    }
    R = &rows[(*n)++];
    *R = (tune_row){.lib = lib, .coll = C->c->coll, .pmin = p, .pmax = p, .bmin = lo,
                    .bmax = hi, .nb = C->c->nb, .ratio = r};
    snprintf(R->algo, sizeof R->algo, "%s", a);
    noncomm_of(R, C->c, p, P->count);
  }
}

/* A JSON number for x, null if it is not finite. */
static json_t *num(double x) { return isfinite(x) ? json_real(x) : json_null(); }

/* The measured points of C as JSON objects appended to a. */
static void points_json(const coll_run *C, json_t *a) {
  for (int i = 0; i < C->npt; i++)
    for (int v = 0; v < C->pt[i].nv; v++) {
      const point *P = &C->pt[i];
      json_t *o = json_pack("{s:s,s:I,s:I,s:s,s:o,s:s,s:s,s:b}", "coll", C->c->name, "bytes",
                            (json_int_t)P->bytes, "count", (json_int_t)P->count, "algo",
                            P->text[v], "predicted_us", num(P->pred_us[v]), "status",
                            P->status[v] == V_OK ? "ok" : P->status[v] == V_WRONG ? "wrong"
                                                                                 : "unfit",
                            "decision", P->text[P->pick], "refined", P->refined);
      if (o) json_object_set_new(o, "retimed", json_boolean(P->retimed));
      if (o) json_object_set_new(o, "dropped", json_boolean(P->dropped));
      for (int m = 0; m < MODES && o && v == 0; m++) { /* (native's line: the confirmation's ratios) */
        char k[32];
        snprintf(k, sizeof k, "confirmed_%s", mode_names[m]);
        json_object_set_new(o, k, P->conf[m] > 0 ? json_real(P->conf[m]) : json_null());
      }
      if (o && v == 0)
        json_object_set_new(o, "confirmed_floor", P->conf[0] > 0 ? json_real(P->conf_floor)
                                                                 : json_null());
      for (int m = 0; m < MODES && o; m++) {
        char k[32];
        snprintf(k, sizeof k, "%s_us", mode_names[m]);
        json_object_set_new(o, k, num(acc_median(&P->m[v][m]) * 1e6));
        snprintf(k, sizeof k, "%s_mean_us", mode_names[m]);
        json_object_set_new(o, k, num(acc_mean(&P->m[v][m]) * 1e6));
        snprintf(k, sizeof k, "%s_ci_us", mode_names[m]);
        json_object_set_new(o, k, num(acc_ci(&P->m[v][m]) * 1e6));
      }
      if (o) json_object_set_new(o, "reps", json_integer(P->m[v][1].n));
      json_array_append_new(a, o);
    }
}

/* hwloc's summary of this node into buf. */
static void hwloc_summary(char *buf, size_t len) {
  hwloc_topology_t t;
  snprintf(buf, len, "unknown");
  if (hwloc_topology_init(&t)) return;
  if (!hwloc_topology_load(t))
    snprintf(buf, len, "%d packages, %d NUMA nodes, %d cores, %d PUs",
             hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE),
             hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE),
             hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE), hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU));
  hwloc_topology_destroy(t);
}

/* The machine object: hwloc's summary (rank 0's node), the number of
 * nodes and the most ranks on one (collective over MPI_COMM_WORLD). */
static json_t *machine_json(void) {
  MPI_Comm node;
  int lrank = 0, lsize = 1, first, nodes = 1, most = 1;
  char hw[200];
  if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == 0) {
    PMPI_Comm_rank(node, &lrank), PMPI_Comm_size(node, &lsize);
    PMPI_Comm_free(&node);
  }
  first = lrank == 0;
  node_layout(MPI_COMM_WORLD); /* (collective on first use: rank 0's rows need it) */
  PMPI_Allreduce(&first, &nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  PMPI_Allreduce(&lsize, &most, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  hwloc_summary(hw, sizeof hw);
  return json_pack("{s:s,s:i,s:i}", "hwloc", hw, "nodes", nodes, "ranks_per_node", most);
}

#define MAXVIOL 64 /* guideline violations kept per implementation and mode */

/* The guideline table of runs C[n]: each OK point's samples in mode m of
 * native (who 0) or of collc's decision (who 1) into t; its length. The
 * blocking collectives only (the rules relate blocking calls; a nonblocking
 * form's times are not comparable with them). */
static int gl_table(const coll_run *C, int n, int who, int m, gl_point *t) {
  int k = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < C[i].npt && k < COLLC_COLL_COUNT * MAXCLS && !C[i].c->nb; j++) {
      const point *P = &C[i].pt[j];
      int v = who ? P->pick : 0;
      if (!P->nv || P->status[v] != V_OK) continue;
      t[k++] = (gl_point){.coll = C[i].c->coll, .bytes = P->bytes, .x = P->m[v][m].x,
                          .n = P->m[v][m].n};
    }
  return k;
}

/* The guideline violations of runs C[n] at p ranks, for native and collc in
 * both modes, as a JSON array (each printed on stderr by rank 0; skipped
 * rules named once, with their reason). */
static json_t *guidelines(const coll_run *C, int n, int p, int rank) {
  static const char *const who[2] = {"native", "collc"};
  static gl_point t[COLLC_COLL_COUNT * MAXCLS];
  gl_violation v[MAXVIOL];
  json_t *a = json_array();
  for (int r = 0; r < gl_rule_count() && rank == 0; r++)
    if (gl_rule_skipped(r))
      fprintf(stderr, "collc-tune: guideline %s: skipped: %s\n", gl_rule_name(r),
              gl_rule_skipped(r));
  for (int w = 0; w < 2; w++)
    for (int m = 0; m < MODES; m++) {
      int k = gl_table(C, n, w, m, t), nv = gl_check(t, k, p, v, MAXVIOL);
      for (int i = 0; i < nv && i < MAXVIOL; i++) {
        char line[256];
        gl_format(&v[i], who[w], mode_names[m], line, sizeof line);
        if (rank == 0) fprintf(stderr, "collc-tune: guideline violated: %s\n", line);
        json_array_append_new(a, json_pack("{s:s,s:s,s:s,s:s,s:I,s:f,s:s,s:f,s:s}", "impl",
                                           who[w], "mode", mode_names[m], "rule",
                                           gl_rule_name(v[i].rule), "coll",
                                           coll_name(v[i].coll), "bytes",
                                           (json_int_t)v[i].bytes, "us", v[i].lhs * 1e6,
                                           "mockup", v[i].mock, "mockup_us", v[i].rhs * 1e6,
                                           "text", line));
      }
    }
  return a;
}

/* Add text to point P's variants (in place of the last kept candidate
 * other than P's best when full); 0, or -1 if it is there already. */
static int add_variant(point *P, const char *text) {
  for (int v = 1; v < P->nv; v++)
    if (!strcmp(P->text[v], text)) return -1;
  int v = P->nv <= MAXKEEP ? P->nv++ : P->best == MAXKEEP ? MAXKEEP - 1 : MAXKEEP;
  snprintf(P->text[v], TUNE_TEXT_MAX, "%s", text);
  P->pred_us[v] = NAN;
  return 0;
}

/* Where native violates a guideline whose mock-up a collc plan realises
 * (gl_realise) and that plan fits but was not timed at that size: time the
 * point again with it among the candidates and decide again (the same 5%
 * rule). Every rank alike (the samples are the same everywhere); the
 * budget: each a size class's share. Collective; returns the WRONG met. */
static int realise(coll_run *C, int n, int p, const options *o, int total) {
  static gl_point t[COLLC_COLL_COUNT * MAXCLS];
  gl_violation v[MAXVIOL];
  int wrong = 0;
  for (int m = 0; m < MODES; m++) {
    int nv = gl_check(t, gl_table(C, n, 0, m, t), p, v, MAXVIOL);
    for (int k = 0; k < nv && k < MAXVIOL; k++) {
      const char *text = gl_realise(v[k].rule);
      char canon[TUNE_TEXT_MAX];
      for (int i = 0; i < n && text; i++)
        for (int j = 0; j < C[i].npt; j++) {
          point *P = &C[i].pt[j];
          collc_spec s = spec_of(C[i].c, p, MPI_COMM_WORLD, P->count, 1);
          if (C[i].c->coll != v[k].coll || C[i].c->nb || P->bytes != v[k].bytes || !P->nv ||
              !fits(&s, text, canon, sizeof canon) || add_variant(P, text))
            continue;
          bench b;
          if (bt_open(&b, C[i].c, P->count, 1, 1)) { bt_close(&b); continue; }
          memset(P->m, 0, sizeof P->m);
          measure(P, &b, o, MPI_Wtime() + o->budget / total);
          decide(P);
          for (int x = 0; x < P->nv; x++) wrong += P->status[x] == V_WRONG;
          if (b.rank == 0)
            fprintf(stderr, "collc-tune: %s %lld B timed again with %s (guideline): -> %s\n",
                    C[i].c->name, P->bytes, text, P->text[P->pick]);
          bt_close(&b);
        }
    }
  }
  return wrong;
}

/* A pick timed again by confirm: run C[run], its point pt, the timing M,
 * and per mode each round's ratio (native's median over the pick's, in
 * that round's samples), nr rounds. */
typedef struct {
  int run, pt, nr;
  point M;
  double round[MODES][MAXREPS];
} confirmation;

/* The median of a's samples from the from-th on (0 if none). */
static double median_from(const acc *a, int from) {
  acc t = {.n = 0};
  for (int i = from; i < a->n; i++) t.x[t.n++] = a->x[i];
  return acc_median(&t);
}

/* c's round ratios after a round that began with n samples per variant
 * and mode: one more ratio per mode where both sides gained samples. */
static void note_round(confirmation *c, int n) {
  const point *M = &c->M;
  if (M->nv < 2 || M->m[0][0].n <= n || M->m[1][0].n <= n || c->nr == MAXREPS) return;
  for (int m = 0; m < MODES; m++) {
    double pk = median_from(&M->m[1][m], n);
    c->round[m][c->nr] = pk > 0 ? median_from(&M->m[0][m], n) / pk : 0;
  }
  c->nr++;
}

/* The lower decile of c's round ratios, the smaller of the two modes'
 * (the ratio the pick kept in 9 rounds of 10; 0 if no round). */
static double round_floor(const confirmation *c) {
  double f = INFINITY, y[MAXREPS];
  for (int m = 0; m < MODES; m++) {
    memcpy(y, c->round[m], (size_t)c->nr * sizeof y[0]);
    qsort(y, (size_t)c->nr, sizeof y[0], bt_cmp_double);
    f = fmin(f, c->nr ? y[c->nr / 10] : 0);
  }
  return f;
}

/* The confirmations of runs C[n]: one per point that picked a plan (native
 * and that plan, nothing measured yet); *k their number. NULL: none, or no
 * memory (the picks then stand unconfirmed). */
static confirmation *confirmations(const coll_run *C, int n, int *k) {
  size_t picks = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < C[i].npt; j++) picks += C[i].pt[j].nv && C[i].pt[j].pick;
  confirmation *K = picks ? calloc(picks, sizeof *K) : NULL;
  *k = 0;
  for (int i = 0; K && i < n; i++)
    for (int j = 0; j < C[i].npt; j++) {
      const point *P = &C[i].pt[j];
      if (!P->nv || !P->pick) continue;
      confirmation *c = &K[(*k)++];
      *c = (confirmation){.run = i, .pt = j, .M = {.count = P->count, .bytes = P->bytes, .nv = 1}};
      snprintf(c->M.text[0], TUNE_TEXT_MAX, "native");
      add_variant(&c->M, P->text[P->pick]);
    }
  return K;
}

/* Sleep until MPI_Wtime() reaches t (at once if it has). */
static void sleep_until(double t) {
  for (double now = MPI_Wtime(); now < t; now = MPI_Wtime()) {
    double d = fmin(t - now, 1.0);
    struct timespec ts = {(time_t)d, (long)((d - (double)(time_t)d) * 1e9)};
    nanosleep(&ts, NULL);
  }
}

/* One confirmation round: each of K[k] timed once more, reps repetitions
 * (whether or not its means are tight already), collective by collective.
 * Collective; returns the WRONG met. */
static int confirm_round(const coll_run *C, confirmation *K, int k, int reps) {
  int wrong = 0;
  for (int a = 0; a < k;) {
    int z = a;
    long maxcount = 0;
    while (z < k && K[z].run == K[a].run) maxcount = fmax(maxcount, K[z++].M.count);
    bench b;
    if (bt_open(&b, C[K[a].run].c, maxcount, 1, 1)) { bt_close(&b); a = z; continue; }
    for (; a < z; a++) {
      int n = K[a].M.m[0][0].n;
      measure_n(&K[a].M, &b, reps, reps, 0, INFINITY);
      note_round(&K[a], n);
      for (int v = 0; v < K[a].M.nv; v++) wrong += K[a].M.status[v] == V_WRONG;
    }
    bt_close(&b);
  }
  return wrong;
}

/* Confirmation: every point of runs C[n] that picked a plan is timed
 * again, native against its pick alone, in rounds that each visit every
 * such point once for CONFIRM_REPS repetitions, paced over the window
 * (the last CONFIRM_SHARE of the budget, to end at most; 2 rounds at
 * least, at most as many as the samples hold; --quick: 2 rounds of 2, not
 * paced), so that its samples come from windows spread over that time,
 * not from the one window of its first measurement. The pick stands only
 * where the rounds' samples together decide it again (decide: at least 5%
 * faster in both modes, significantly) and it kept CONFIRM_FLOOR x
 * native's speed in 9 rounds of 10 (both modes): collc is not to be
 * slower than native in whatever state the machine is in; else native
 * decides there. (This 2-core VM changes state for seconds to minutes: a
 * copy through memory the other core has just written runs 2-4x slower,
 * README, "This machine's two states".) Rank 0 prints each dropped pick.
 * Collective; returns the WRONG met; dropped[i]: set where run i lost one. */
static int confirm(coll_run *C, int n, const options *o, double end, int *dropped) {
  int k, wrong = 0, reps = o->quick ? 2 : CONFIRM_REPS, r = 0, more = 1, rank;
  int rounds = o->quick ? 2 : MAXREPS / reps;
  confirmation *K = confirmations(C, n, &k);
  double start = MPI_Wtime(), window = o->quick ? 0 : fmin(fmax(0, end - start),
                                                             CONFIRM_SHARE * o->budget);
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0 && k)
    fprintf(stderr, "collc-tune: confirming %d picks: up to %d rounds of %d repetitions over about "
            "%.0f s\n", k, rounds, reps, window);
  confirming = 1;
  for (; K && k && more; r++) {
    if (rank == 0) sleep_until(start + r * window / rounds); /* (the rounds spread out) */
    wrong += confirm_round(C, K, k, reps);
    more = r + 1 < 2 || (r + 1 < rounds && MPI_Wtime() < start + window);
    PMPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD); /* (rank 0's clock decides) */
  }
  confirming = 0;
  for (int a = 0; K && a < k; a++) {
    point *P = &C[K[a].run].pt[K[a].pt], *M = &K[a].M;
    decide(M);
    for (int m = 0; m < MODES && M->nv > 1; m++) P->conf[m] = ratio(M, 1, m);
    P->conf_floor = round_floor(&K[a]);
    if (M->status[0] != V_OK || (M->pick && P->conf_floor >= CONFIRM_FLOOR)) continue;
    if (rank == 0) /* (holds; or no baseline: as decide) */
      fprintf(stderr, "collc-tune: %s %lld B: %s dropped in confirmation (%.2fx b2b, %.2fx barrier "
              "over %d rounds, %.2fx in the worst tenth)\n", C[K[a].run].c->name, P->bytes,
              P->text[P->pick], P->conf[0], P->conf[1], K[a].nr, P->conf_floor);
    P->pick = 0, P->dropped = 1, dropped[K[a].run] = 1;
  }
  if (rank == 0 && k) fprintf(stderr, "collc-tune: confirmation: %d rounds\n", r);
  free(K);
  return wrong;
}

/* Where confirm dropped picks of runs C[n] (dropped[i]), their boundaries
 * refined again (refine), the time to end shared among them. Collective;
 * returns the WRONG met. */
static int refine_again(coll_run *C, int n, const options *o, const int *dropped, double end) {
  int wrong = 0, left = 0;
  for (int i = 0; i < n; i++) left += dropped[i];
  for (int i = 0; i < n; i++) {
    bench b;
    if (!dropped[i]) continue;
    if (!bt_open(&b, C[i].c, C[i].pt[C[i].npt - 1].count, 1, 1))
      wrong += refine(&C[i], &b, o, --left, end);
    bt_close(&b);
  }
  return wrong;
}

/* Rank 0: write the tuning file of runs C[n] (machine, calibration text
 * cal, every point, the rows); 0 or -1. */
static int write_file(const options *o, const coll_run *C, int n, int p, json_t *mach,
                      const char *cal, json_t *gl) {
  static tune_row rows[TUNE_MAX_ROWS];
  char lib[256];
  int nrows = 0;
  bt_library_name(lib, sizeof lib);
  int id = tune_lib_of(lib);
  json_t *doc = tune_doc_new(id, lib, p), *pts = json_array();
  for (int i = 0; i < n; i++) rows_of(&C[i], p, id, rows, &nrows), points_json(&C[i], pts);
  json_object_set_new(doc, "machine", mach);
  json_object_set_new(doc, "calibration", json_string(cal));
  json_object_set_new(doc, "method", json_pack("{s:b,s:f,s:i,s:i,s:i}", "quick", o->quick,
                                               "budget_s", o->budget, "min_reps", o->min_reps,
                                               "max_reps", o->max_reps, "confirm_reps",
                                               o->quick ? 2 : CONFIRM_REPS));
  json_object_set_new(doc, "native", xp_native_json(lib));
  json_object_set_new(doc, "points", pts);
  json_object_set_new(doc, "guidelines", gl);
  json_object_set_new(doc, "rules", tune_rows_json(rows, nrows));
  int rc = id > 0 && !json_dump_file(doc, o->out, JSON_INDENT(1)) ? 0 : -1;
  json_decref(doc);
  return rc;
}

/* Rank 0: the summary table of runs C[n] (stdout). */
static void summary(const coll_run *C, int n, int p, double secs, const char *out, int ok) {
  char lib[256];
  bt_library_name(lib, sizeof lib);
  printf("# collc-tune, p=%d, %s, %.1f s; %s %s\n", p, lib, secs, ok ? "written to" : "NOT written:",
         out);
  printf("# %-20s %9s %11s  %-24s %7s %7s  %s\n", "collective", "bytes", "native(us)",
         "best candidate", "b2b", "barrier", "decision");
  for (int i = 0; i < n; i++)
    for (int k = 0; k < C[i].npt; k++) {
      const point *P = &C[i].pt[k];
      printf("  %-20s %9lld %11.2f  %-24s %6.2fx %6.2fx  %s\n", C[i].c->name, P->bytes,
             acc_median(&P->m[0][1]) * 1e6, P->best ? P->text[P->best] : "-",
             P->best ? ratio(P, P->best, 0) : 0, P->best ? ratio(P, P->best, 1) : 0,
             P->text[P->pick]);
    }
  fflush(stdout);
}

int main(int argc, char **argv) {
  static options o;
  static coll_run runs[MAXCOLLS];
  char cal[400] = "", desc[200], why[200];
  sim_params M;
  int rank, p, total = 0, done = 0, wrong = 0, dropped[MAXCOLLS] = {0};
  MPI_Init(&argc, &argv);
  bt_tool = "collc-tune";
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &p);
  if (parse_options(argc, argv, &o)) {
    if (rank == 0) usage();
    MPI_Finalize();
    return 2;
  }
  if (o.x_ompi || o.x_mpich) { /* (no measurement: rank 0 folds the files) */
    int rc = rank == 0 ? xp_export(o.x_ompi, o.x_mpich, o.files, o.nfiles) : 0;
    MPI_Finalize();
    return rc;
  }
  const char *hook = getenv("COLLC_TUNE_TEST_NATIVE");
  test_native_at = hook ? atoll(hook) : 0;
  hook = getenv("COLLC_TUNE_TEST_PRUNE");
  test_prune_at = hook ? atoll(hook) : 0;
  test_drift = getenv("COLLC_TUNE_TEST_DRIFT") != NULL;
  double t0 = MPI_Wtime(), end = t0 + o.budget, sweep_end = t0 + (1 - CONFIRM_SHARE) * o.budget;
  PMPI_Bcast(&end, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  PMPI_Bcast(&sweep_end, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (cal_measure(MPI_COMM_WORLD, cal, sizeof cal, desc, sizeof desc) ||
      sim_params_parse(cal, &M, why, sizeof why))
    sim_params_parse("local", &M, why, sizeof why), snprintf(cal, sizeof cal, "local");
  if (rank == 0) fprintf(stderr, "collc-tune: p=%d (%s), simulator calibrated: %s\n", p, desc, cal);
  for (int i = 0; i < o.ncolls; i++) {
    runs[i].c = o.colls[i];
    size_classes(&runs[i], &o, p);
    total += runs[i].npt;
  }
  for (int i = 0; i < o.ncolls; i++)
    wrong += tune_coll(&runs[i], &o, &M, &done, total, t0, sweep_end);
  wrong += realise(runs, o.ncolls, p, &o, total);
  wrong += confirm(runs, o.ncolls, &o, end, dropped);
  wrong += refine_again(runs, o.ncolls, &o, dropped, end);
  json_t *mach = machine_json(), *gl = guidelines(runs, o.ncolls, p, rank);
  int ok = rank != 0 || write_file(&o, runs, o.ncolls, p, mach, cal, gl) == 0;
  if (rank == 0) summary(runs, o.ncolls, p, MPI_Wtime() - t0, o.out, ok);
  else json_decref(mach), json_decref(gl);
  MPI_Finalize();
  return wrong ? 3 : ok ? 0 : 2;
}
