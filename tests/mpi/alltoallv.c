/* alltoallv.c - MPI_Alltoallv, MPI_Ialltoallv and MPI_Alltoallv_init over
 * MPI, every algorithm forced, against PMPI_Alltoallv (blocking: the truth
 * also for the other forms) on the same input, byte for byte over the whole
 * receive buffer (gaps, holes and sentinels included).
 *
 * Count matrices (the same on every rank, from a shared seed; rank q sends
 * r M[q][r]): all zero, one rank sending everything, one rank receiving
 * everything, primes (divisible by nothing), 3 random ones with zeros.
 * Layouts (both sides): packed; reverse rank order with gaps; negative
 * displacements (the buffer pointer inside the allocation); in place
 * (symmetric matrix, as MPI requires). Types: MPI_INT; contiguous(2, int);
 * a resized vector(2, 1, 2, int) of extent 4 ints (holes must keep their
 * bytes); contiguous(2, int) sent against twice as many ints received (the
 * own block copied apart). Algorithms: native, linear, pairwise and the
 * default (MPI_Alltoallv twice: the second takes the call cache).
 * Nonblocking: linear, pairwise and MPI_Ialltoallv outstanding together,
 * then one MPI_Waitall. Persistent: MPI_Alltoallv_init with info
 * collc_algorithm (and the default), started twice with new input in
 * between. In place, the default nonblocking and persistent calls are
 * collc's linear on Open MPI 4.1 (the guard: its own Ialltoallv with
 * MPI_IN_PLACE, on a rank that moves nothing, leaves the communicator's
 * schedule tags out of step, and a later native Ialltoallv of the other
 * ranks hangs: this test hung so before the guard).
 * Bad arguments (every rank alike): a negative count (MPI_ERR_COUNT), NULL
 * recvcounts (MPI_ERR_ARG), MPI_IN_PLACE as recvbuf (MPI_ERR_BUFFER). An
 * intercommunicator (native).
 * Self-test: COLLC_TEST_BREAK=N corrupts the N-th result on the last rank:
 * the program must fail. COLLC_TEST_QUICK=1: fewer matrices and types (all
 * zero, one rank receiving everything, primes, random; no contiguous(2, int));
 * COLLC_TEST_KIND=<digits>: only those matrix kinds (debugging).
 * COLLC_TEST_HIER=1 (ranks sharing nodes: p > 1): hier forced too, its
 * agreement round at each blocking call and at the persistent init (info
 * collc_algorithm=hier); where the ranks' elements differ in size (send
 * 2 ints, receive 1) forced hier must return MPI_ERR_ARG on every rank, as
 * must a forced nonblocking hier (it has no node segment before a blocking
 * call of its key, which the agreed matrix is part of).
 * COLLC_TEST_AGREE=<algorithm>: the same with that algorithm (torus:d=2),
 * at any p; it needs no node segment, so its nonblocking calls make their
 * round too: two outstanding with a linear one, against the truth; on
 * unequal element sizes, accepted and completed with MPI_ERR_ARG. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collc.h"
#include "testlib.h"

#define MAXP 16
#define MAXE 12288 /* ints of a buffer */
#define ORIGIN 2048 /* ints before the buffer pointer (negative displacements) */

static int rank, size, fails, results, break_at, agree_on;
static const char *agreeing = "hier"; /* the forced algorithm that agrees on the counts */
static long checks;
static unsigned long long seed = 15;
static int M[MAXP][MAXP];
static MPI_Datatype types[4][2]; /* [case][send, recv] */
static const int scale[4] = {1, 1, 1, 2}; /* receive units per send unit */
static const int ints_per[4][2] = {{1, 1}, {2, 2}, {4, 4}, {2, 1}}; /* ints of an extent */

static unsigned rnd(void) {
  seed = seed * 6364136223846793005ull + 1442695040888963407ull;
  return (unsigned)(seed >> 33);
}

/* Matrix kind v into M (symmetric when sym). */
static void matrix(int v, int sym) {
  static const int primes[] = {7, 3, 11, 13, 2, 17, 5, 19, 23};
  for (int q = 0; q < size; q++)
    for (int r = 0; r < size; r++) {
      int n = v == 0 ? 0 : v == 1 ? (q == size / 2 ? 37 : 0) : v == 2 ? (r == size - 1 ? 29 : 0)
              : v == 3 ? primes[(q * 5 + r) % 9] : (rnd() % 3 == 0 ? 0 : (int)(rnd() % 23));
      M[q][r] = n;
    }
  for (int q = 0; sym && q < size; q++)
    for (int r = 0; r < q; r++) M[q][r] = M[r][q];
}
enum { NKIND = 7 };

/* One side's displacements d for counts n (units of ext ints) under layout lay. */
static void layout(int lay, const int *n, int ext, int *d) {
  int at = lay == 1 ? 1 : 0, tot = 0;
  for (int q = 0; q < size; q++) tot += n[q];
  for (int k = 0; k < size; k++) {
    int q = lay == 1 ? size - 1 - k : k;
    d[q] = at, at += n[q] + (lay == 1 ? 1 + q % 2 : 0);
  }
  for (int q = 0; lay == 2 && q < size; q++) d[q] -= (tot + 1) / 2; /* (within ORIGIN / ext) */
  (void)ext;
}

/* Compare the whole receive allocation of got and want; one line on mismatch. */
static void compare(const char *what, const char *algo, int *got, const int *want) {
  checks++;
  if (++results == break_at && rank == size - 1) got[ORIGIN + 1] ^= 1;
  for (int i = 0; i < MAXE; i++)
    if (got[i] != want[i]) {
      printf("FAIL rank %d: %s %s p=%d: int %d is %d, want %d\n", rank, what, algo, size,
             i - ORIGIN, got[i], want[i]);
      fails++;
      return;
    }
}

/* A case: counts, displacements, types, buffers' initial contents. */
typedef struct {
  int sc[MAXP], sd[MAXP], rc[MAXP], rd[MAXP], ty, ip, salt;
  MPI_Datatype st, rt;
} acase;

static void fill(const acase *c, int *sb, int *rb) {
  for (int i = 0; i < MAXE; i++) {
    sb[i] = rank * 1000003 + i * 7 + c->salt;
    rb[i] = c->ip ? rank * 999983 + i * 3 + c->salt : -1 - i;
  }
}

/* The truth for c into want (fresh buffers). */
static void truth(const acase *c, int *sb, int *want) {
  fill(c, sb, want);
  PMPI_Alltoallv(c->ip ? MPI_IN_PLACE : sb + ORIGIN, c->sc, c->sd, c->st, want + ORIGIN, c->rc,
                 c->rd, c->rt, MPI_COMM_WORLD);
}

/* The call under test, blocking: algo NULL is MPI_Alltoallv. */
static int call(const acase *c, const char *algo, int *sb, int *rb) {
  const void *s = c->ip ? MPI_IN_PLACE : sb + ORIGIN;
  if (!algo) return MPI_Alltoallv(s, c->sc, c->sd, c->st, rb + ORIGIN, c->rc, c->rd, c->rt, MPI_COMM_WORLD);
  return collc_alltoallv_algo(algo, s, c->sc, c->sd, c->st, rb + ORIGIN, c->rc, c->rd, c->rt,
                              MPI_COMM_WORLD);
}

static int icall(const acase *c, const char *algo, int *sb, int *rb, MPI_Request *q) {
  const void *s = c->ip ? MPI_IN_PLACE : sb + ORIGIN;
  if (!algo)
    return MPI_Ialltoallv(s, c->sc, c->sd, c->st, rb + ORIGIN, c->rc, c->rd, c->rt, MPI_COMM_WORLD, q);
  return collc_ialltoallv_algo(algo, s, c->sc, c->sd, c->st, rb + ORIGIN, c->rc, c->rd, c->rt,
                               MPI_COMM_WORLD, q);
}

static int *buf[8];

/* Whether c's send and receive elements differ in size (no hier then). */
static int sizes_differ(const acase *c) {
  int s, r;
  MPI_Type_size(c->st, &s), MPI_Type_size(c->rt, &r);
  return !c->ip && s != r;
}

/* Forced hier (or COLLC_TEST_AGREE's) on c where it cannot agree: MPI_ERR_ARG
 * (every rank alike). */
static void hier_refused(const acase *c, const char *what) {
  int cls, rc;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  rc = call(c, agreeing, buf[0], buf[2]);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Error_class(rc, &cls);
  checks++;
  if (cls != MPI_ERR_ARG) printf("FAIL rank %d: %s %s on unequal elements gave %d\n", rank, what, agreeing, cls), fails++;
}

/* Blocking: every algorithm and the default twice (and hier). */
static void blocking(const acase *c, const char *what) {
  const char *algos[] = {"native", "linear", "pairwise", NULL, NULL, agreeing};
  int *sb = buf[0], *want = buf[1], *got = buf[2];
  truth(c, sb, want);
  for (int a = 0; a < 5 + agree_on; a++) {
    if (a == 5 && sizes_differ(c)) {
      hier_refused(c, what);
      break;
    }
    fill(c, sb, got);
    int rc = call(c, algos[a], sb, got);
    if (rc != MPI_SUCCESS) printf("FAIL rank %d: %s %s returned %d\n", rank, what, algos[a] ? algos[a] : "default", rc), fails++;
    compare(what, algos[a] ? algos[a] : "MPI_Alltoallv", got, want);
  }
}

/* Nonblocking calls of COLLC_TEST_AGREE's algorithm (it needs no node
 * segment): two outstanding with a linear one between them, each making its
 * agreement round when called and compiling its plan when that completes;
 * where the elements differ in size, a forced one is accepted and
 * completes with MPI_ERR_ARG (every rank alike). */
static void agree_nonblocking(const acase *c, const char *what) {
  const char *algos[] = {agreeing, "linear", agreeing};
  MPI_Request q[3];
  MPI_Status sts[3]; /* (MPICH's gcc flags MPI_STATUSES_IGNORE) */
  int rc, cls, *want = buf[1];
  truth(c, buf[0], want);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (sizes_differ(c)) {
    fill(c, buf[2], buf[3]);
    rc = icall(c, agreeing, buf[2], buf[3], &q[0]);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&q[0], MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &cls);
    checks++;
    if (cls != MPI_ERR_ARG) printf("FAIL rank %d: %s i%s on unequal elements gave %d\n", rank, what, agreeing, cls), fails++;
  } else {
    for (int a = 0; a < 3; a++) {
      fill(c, buf[2 + 2 * a], buf[3 + 2 * a]);
      if ((rc = icall(c, algos[a], buf[2 + 2 * a], buf[3 + 2 * a], &q[a])))
        printf("FAIL rank %d: %s i%s returned %d\n", rank, what, algos[a], rc), fails++;
    }
    if ((rc = MPI_Waitall(3, q, sts)))
      printf("FAIL rank %d: %s waitall after i%s returned %d\n", rank, what, agreeing, rc), fails++;
    for (int a = 0; a < 3; a++) compare(what, algos[a], buf[3 + 2 * a], want);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* Nonblocking: linear, pairwise and MPI_Ialltoallv outstanding together. */
static void nonblocking(const acase *c, const char *what) {
  static const char *algos[] = {"linear", "pairwise", NULL};
  MPI_Request q[3];
  MPI_Status sts[3];
  int n = 3, *want = buf[1];
  truth(c, buf[0], want);
  for (int a = 0; a < n; a++) {
    fill(c, buf[2 + 2 * a], buf[3 + 2 * a]); /* (each its own send and receive buffer) */
    if (icall(c, algos[a], buf[2 + 2 * a], buf[3 + 2 * a], &q[a]))
      printf("FAIL rank %d: %s i%s failed\n", rank, what, algos[a] ? algos[a] : "default"), fails++;
  }
  MPI_Waitall(n, q, sts);
  for (int a = 0; a < n; a++)
    compare(what, algos[a] ? algos[a] : "MPI_Ialltoallv", buf[3 + 2 * a], want);
  if (agree_on && strcmp(agreeing, "hier")) agree_nonblocking(c, what);
  else if (agree_on) { /* (hier: no node segment without blocking: forced, it is refused) */
    int cls, rc;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rc = icall(c, agreeing, buf[2], buf[3], &q[0]);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    if (rc == MPI_SUCCESS) MPI_Wait(&q[0], MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &cls);
    checks++;
    if (cls != MPI_ERR_ARG) printf("FAIL rank %d: %s ialltoallv %s gave %d\n", rank, what, agreeing, cls), fails++;
  }
}

/* Persistent: linear, pairwise, the default (and hier); started twice,
 * new input between. */
static void persistent(acase *c, const char *what) {
  const char *algos[] = {"linear", "pairwise", NULL, agreeing};
  for (int a = 0; a < 3 + agree_on; a++) {
    MPI_Info info = MPI_INFO_NULL;
    MPI_Request q;
    int *sb = buf[3], *got = buf[4], salt = c->salt;
    if (algos[a]) MPI_Info_create(&info), MPI_Info_set(info, "collc_algorithm", algos[a]);
    fill(c, sb, got);
    if (MPI_Alltoallv_init(c->ip ? MPI_IN_PLACE : sb + ORIGIN, c->sc, c->sd, c->st, got + ORIGIN,
                           c->rc, c->rd, c->rt, MPI_COMM_WORLD, info, &q)) {
      printf("FAIL rank %d: %s init failed\n", rank, what), fails++;
      continue;
    }
    for (int run = 0; run < 2; run++) {
      c->salt = salt + 11 * run;
      truth(c, buf[0], buf[1]);
      fill(c, sb, got);
      MPI_Start(&q);
      MPI_Wait(&q, MPI_STATUS_IGNORE);
      compare(what, algos[a] ? algos[a] : "persistent default", got, buf[1]);
    }
    c->salt = salt;
    MPI_Request_free(&q);
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  }
}

/* Case of matrix M, layout lay (3: in place), type case ty. */
static void one(int lay, int ty, int kind) {
  acase c = {.ty = ty, .ip = lay == 3, .st = types[ty][0], .rt = types[ty][1], .salt = kind};
  char what[96];
  for (int q = 0; q < size; q++) c.sc[q] = M[rank][q], c.rc[q] = M[q][rank] * scale[ty];
  layout(lay == 3 ? 0 : lay, c.sc, ints_per[ty][0], c.sd);
  layout(lay == 3 ? 1 : lay, c.rc, ints_per[ty][1], c.rd);
  snprintf(what, sizeof what, "kind %d layout %d type %d", kind, lay, ty);
  blocking(&c, what);
  nonblocking(&c, what);
  persistent(&c, what);
}

/* Bad arguments, every rank alike: error classes, no crash. */
static void bad_args(void) {
  int sc[MAXP] = {0}, d[MAXP] = {0}, cls, rc;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  sc[0] = -1;
  rc = MPI_Alltoallv(buf[0], sc, d, MPI_INT, buf[1], sc, d, MPI_INT, MPI_COMM_WORLD);
  MPI_Error_class(rc, &cls);
  if (cls != MPI_ERR_COUNT) printf("FAIL rank %d: negative count gave %d\n", rank, cls), fails++;
  sc[0] = 0;
  rc = MPI_Alltoallv(buf[0], sc, d, MPI_INT, buf[1], NULL, d, MPI_INT, MPI_COMM_WORLD);
  MPI_Error_class(rc, &cls);
  if (cls != MPI_ERR_ARG) printf("FAIL rank %d: NULL recvcounts gave %d\n", rank, cls), fails++;
  rc = MPI_Alltoallv(buf[0], sc, d, MPI_INT, MPI_IN_PLACE, sc, d, MPI_INT, MPI_COMM_WORLD);
  MPI_Error_class(rc, &cls);
  if (cls != MPI_ERR_BUFFER) printf("FAIL rank %d: MPI_IN_PLACE recvbuf gave %d\n", rank, cls), fails++;
  checks += 3;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* An intercommunicator (two halves) goes to the library: one int to every
 * remote rank, each must arrive. */
static void inter(void) {
  MPI_Comm half, ic;
  int lo = rank < size / 2, n, c[MAXP], d[MAXP], sb[MAXP], rb[MAXP];
  if (size < 2) return;
  MPI_Comm_split(MPI_COMM_WORLD, lo, rank, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, lo ? size / 2 : 0, 7, &ic);
  MPI_Comm_remote_size(ic, &n);
  for (int q = 0; q < n; q++) c[q] = 1, d[q] = q, sb[q] = rank * 100 + q, rb[q] = -1;
  MPI_Alltoallv(sb, c, d, MPI_INT, rb, c, d, MPI_INT, ic);
  int mine, first = lo ? size / 2 : 0;
  MPI_Comm_rank(half, &mine);
  for (int q = 0; q < n; q++, checks++)
    if (rb[q] != (first + q) * 100 + mine)
      printf("FAIL rank %d: intercommunicator block %d is %d\n", rank, q, rb[q]), fails++;
  MPI_Comm_free(&ic);
  MPI_Comm_free(&half);
}

int main(int argc, char **argv) {
  MPI_Datatype v;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  break_at = getenv("COLLC_TEST_BREAK") ? atoi(getenv("COLLC_TEST_BREAK")) : 0;
  int quick = tl_env_int("COLLC_TEST_QUICK", 0) > 0;
  agree_on = getenv("COLLC_TEST_HIER") && size > 1;
  if (getenv("COLLC_TEST_AGREE")) agreeing = getenv("COLLC_TEST_AGREE"), agree_on = 1;
  const char *only = getenv("COLLC_TEST_KIND"); /* (debugging: one matrix kind) */
  if (size > MAXP) {
    if (rank == 0) printf("alltoallv: at most %d ranks\n", MAXP);
    MPI_Finalize();
    return 1;
  }
  for (int i = 0; i < 8; i++) buf[i] = malloc(MAXE * sizeof(int));
  types[0][0] = types[0][1] = types[3][1] = MPI_INT;
  MPI_Type_contiguous(2, MPI_INT, &types[1][0]);
  MPI_Type_commit(&types[1][0]);
  types[1][1] = types[3][0] = types[1][0];
  MPI_Type_vector(2, 1, 2, MPI_INT, &v);
  MPI_Type_create_resized(v, 0, 4 * sizeof(int), &types[2][0]);
  MPI_Type_commit(&types[2][0]);
  MPI_Type_free(&v);
  types[2][1] = types[2][0];
  for (int kind = 0; kind < NKIND; kind++) {
    if ((quick && (kind == 1 || kind == 4 || kind == 5)) || (only && !strchr(only, '0' + kind)))
      continue;
    for (int lay = 0; lay < 4; lay++) {
      matrix(kind, lay == 3);
      for (int ty = 0; ty < 4; ty++)
        if (!(lay == 3 && ty == 3) && !(quick && ty == 1)) one(lay, ty, kind); /* (in place: one) */
    }
  }
  bad_args();
  inter();
  int all = 0;
  MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("alltoallv p=%d: %ld checks, %d failed\n", size, checks, all);
  MPI_Type_free(&types[1][0]);
  MPI_Type_free(&types[2][0]);
  for (int i = 0; i < 8; i++) free(buf[i]);
  MPI_Finalize();
  return all ? 1 : 0;
}
