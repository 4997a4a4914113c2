/* vforms.c - the nonblocking (MPI_Iallgatherv, MPI_Ireduce_scatter) and
 * persistent (MPI_Allgatherv_init, MPI_Reduce_scatter_init) forms of the
 * counted collectives, against blocking PMPI_Allgatherv / PMPI_Reduce_scatter
 * on the same input, byte for byte over the whole receive buffer.
 *
 * Cases (an operation slot): allgatherv packed, reversed with gaps,
 * negative displacements, in place, a send type other than the receive
 * type, a derived type with holes freed while the call runs; reduce_scatter
 * MPI_SUM, in place, a non-commutative user op (2x2 matrix product mod
 * 2^32). Count vectors (the same on every rank): all zero, each rank in turn
 * holding everything, primes, random with zeros.
 *
 * Nonblocking: rounds of 1..16 calls outstanding on MPI_COMM_WORLD, each
 * with every algorithm forced (collc_i*_algo: native, recexch,
 * recexch:flat, cyclic) and the MPI_ entry points (default selection, or
 * COLLC_<COLL>; later rounds repeat keys and so take the call cache),
 * completed with MPI_Waitall, MPI_Testany or MPI_Waitsome over a list mixed
 * with native point-to-point requests; every collective request must end
 * as MPI_REQUEST_NULL with an empty status. Persistent: one request per
 * case and algorithm (info collc_algorithm, shm and hier too), started 3 times with
 * new input, completed by MPI_Wait, MPI_Test, MPI_Waitall with a native
 * request, then MPI_Startall over two (on Open MPI 4.1 odd cases by the
 * MPIX_ names). Bad arguments return error classes.
 * COLLC_TEST_BREAK=N corrupts the N-th nonempty result on the last rank:
 * the program must fail. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collc.h"
#include "testlib.h"
#include "countvec.h"
#ifdef OPEN_MPI
#include <mpi-ext.h> /* (Open MPI 4.1: MPIX_<Coll>_init, which collc defines too) */
#endif

#define SLOTS 16
#define BUF 4096 /* bytes per buffer: up to 8 ranks x 37 elements x 16 bytes with gaps */
#define NCASES 9

static int rank, size, fails, nonempty, break_at, skip_gaps;
static long checks;
static MPI_Op matop;
static MPI_Datatype m4;

/* One operation: case, counts, layout, buffers and its reference. */
typedef struct {
  int cs, c[64], d[64], total;
  MPI_Datatype t, st; /* receive (reduce) type; allgatherv's send type */
  unsigned char in[BUF], got[BUF], want[BUF];
  size_t bytes; /* compared */
} slot;
static slot slots[SLOTS];

/* 2x2 matrix product mod 2^32 (non-commutative): inout = in * inout. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *t) {
  (void)t;
  unsigned *a = in, *b = inout;
  for (int i = 0; i < *len; i++, a += 4, b += 4) {
    unsigned r[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                     a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
    memcpy(b, r, sizeof r);
  }
}

/* Case cs: 0-5 allgatherv (packed, gaps, negative, in place, send type,
 * holes), 6-8 reduce_scatter (sum, sum in place, matmul). */
static int is_gv(int cs) { return cs < 6; }
static int in_place(int cs) { return cs == 3 || cs == 7; }
static int shift_of(int cs) { return cs == 2 ? 5 : 0; }
static int fits(int cs, const char *algo) { /* cyclic: commutative only */
  if (skip_gaps && (cs == 1 || cs == 2)) return 0;
  return !(cs == 8 && algo && !strcmp(algo, "cyclic"));
}

/* Bytes per element of case cs's receive type. */
static int ext_of(int cs) { return cs == 5 || cs == 8 ? 16 : 4; }

/* Slot s's types for case cs. */
static void make_types(slot *s, int cs) {
  s->t = s->st = cs == 8 ? m4 : MPI_INT;
  if (cs == 5) {
    MPI_Datatype v;
    MPI_Type_vector(2, 1, 2, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, 4 * sizeof(int), &s->t), MPI_Type_commit(&s->t);
    MPI_Type_free(&v);
    s->st = s->t;
  }
  if (cs == 4) MPI_Type_contiguous(1, MPI_INT, &s->st), MPI_Type_commit(&s->st);
}

/* Set slot s's data up for case cs, counts c, input generation gen:
 * layout, input, and got/want initialised alike. */
static void prepare_data(slot *s, int cs, const int *c, int gen) {
  int span = 0, sh = shift_of(cs);
  size_t ext = (size_t)ext_of(cs);
  s->cs = cs, s->total = 0;
  memcpy(s->c, c, (size_t)size * sizeof *c);
  for (int q = 0; q < size; q++) s->total += c[q];
  for (int q = 0, at = 0; q < size; q++) s->d[q] = at, at += c[q];
  if (cs == 1)
    for (int q = size - 1, at = 2; q >= 0; q--) s->d[q] = at, at += c[q] + 1 + q % 3;
  for (int q = 0; q < size; q++) {
    s->d[q] -= sh;
    if (s->d[q] + sh + c[q] > span) span = s->d[q] + sh + c[q];
  }
  for (size_t i = 0; i < BUF; i++) s->in[i] = (unsigned char)(rank * 37 + i * 11 + gen * 5 + 1);
  memset(s->got, 0xA5, BUF), memset(s->want, 0xA5, BUF);
  s->bytes = is_gv(cs) ? (size_t)(span + 1) * ext
             : (size_t)(in_place(cs) ? c[rank] : c[rank] + 1) * ext;
  if (cs == 3) {
    size_t at = (size_t)(s->d[rank] + sh) * ext, n = (size_t)c[rank] * ext;
    memcpy(s->got + at, s->in, n), memcpy(s->want + at, s->in, n);
  }
  if (cs == 7) memcpy(s->got, s->in, (size_t)s->total * ext), memcpy(s->want, s->in, BUF);
}

/* Slot s set up for case cs: types and data. */
static void prepare(slot *s, int cs, const int *c, int gen) {
  make_types(s, cs);
  prepare_data(s, cs, c, gen);
}

/* Slot s's receive buffer as the calls get it (negative displacements). */
static void *rbuf(slot *s, unsigned char *base) { return base + shift_of(s->cs) * ext_of(s->cs); }

/* Post slot s's nonblocking call with algo (NULL: the MPI_ entry point). */
static int post(slot *s, const char *algo, MPI_Request *q) {
  const void *sb = in_place(s->cs) ? MPI_IN_PLACE : s->in;
  void *rb = rbuf(s, s->got);
  MPI_Op op = s->cs == 8 ? matop : MPI_SUM;
  if (is_gv(s->cs) && !algo)
    return MPI_Iallgatherv(sb, s->c[rank], s->st, rb, s->c, s->d, s->t, MPI_COMM_WORLD, q);
  if (is_gv(s->cs))
    return collc_iallgatherv_algo(algo, sb, s->c[rank], s->st, rb, s->c, s->d, s->t,
                                  MPI_COMM_WORLD, q);
  if (!algo) return MPI_Ireduce_scatter(sb, rb, s->c, s->t, op, MPI_COMM_WORLD, q);
  return collc_ireduce_scatter_algo(algo, sb, rb, s->c, s->t, op, MPI_COMM_WORLD, q);
}

/* Make slot s's persistent request with algo (NULL: no info). */
static int init(slot *s, const char *algo, MPI_Request *q) {
  const void *sb = in_place(s->cs) ? MPI_IN_PLACE : s->in;
  void *rb = rbuf(s, s->got);
  MPI_Info info = MPI_INFO_NULL;
  int rc;
  if (algo) MPI_Info_create(&info), MPI_Info_set(info, "collc_algorithm", algo);
  int (*gv_init)(const void *, int, MPI_Datatype, void *, const int *, const int *,
                 MPI_Datatype, MPI_Comm, MPI_Info, MPI_Request *) = MPI_Allgatherv_init;
  int (*rs_init)(const void *, void *, const int *, MPI_Datatype, MPI_Op, MPI_Comm, MPI_Info,
                 MPI_Request *) = MPI_Reduce_scatter_init;
#ifdef OMPI_HAVE_MPI_EXT_PCOLLREQ
  if (s->cs % 2) gv_init = MPIX_Allgatherv_init, rs_init = MPIX_Reduce_scatter_init;
#endif
  if (is_gv(s->cs))
    rc = gv_init(sb, s->c[rank], s->st, rb, s->c, s->d, s->t, MPI_COMM_WORLD, info, q);
  else
    rc = rs_init(sb, rb, s->c, s->t, s->cs == 8 ? matop : MPI_SUM, MPI_COMM_WORLD, info, q);
  if (algo) MPI_Info_free(&info);
  return rc;
}

/* Free the slot's derived types (the calls keep copies of their own). */
static void free_types(slot *s) {
  if (s->st != MPI_INT && s->st != s->t) MPI_Type_free(&s->st);
  if (s->t != MPI_INT && s->t != m4) MPI_Type_free(&s->t);
  s->t = s->st = MPI_INT;
}

/* The reference for slot s (blocking PMPI on the same input; collective,
 * in slot order on every rank), compared with what the call wrote. */
static void verify(slot *s, const char *algo, const char *how) {
  MPI_Datatype t = s->t, st = s->st; /* (freed types: made again alike) */
  int rr;
  if (s->cs == 5) {
    MPI_Datatype v;
    MPI_Type_vector(2, 1, 2, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, 4 * sizeof(int), &t), MPI_Type_commit(&t), st = t;
    MPI_Type_free(&v);
  }
  const void *sb = in_place(s->cs) ? MPI_IN_PLACE : s->in;
  if (is_gv(s->cs))
    rr = PMPI_Allgatherv(sb, s->c[rank], st, rbuf(s, s->want), s->c, s->d,
                         t, MPI_COMM_WORLD);
  else
    rr = PMPI_Reduce_scatter(sb, s->want, s->c, t, s->cs == 8 ? matop : MPI_SUM, MPI_COMM_WORLD);
  if (s->cs == 5) MPI_Type_free(&t);
  checks++;
  if (rr != MPI_SUCCESS) printf("FAIL rank %d: reference rc %d\n", rank, rr), fails++;
  if (s->total && ++nonempty == break_at && rank == size - 1) s->got[s->bytes / 2] ^= 1;
  if (memcmp(s->got, s->want, s->bytes)) {
    printf("FAIL rank %d: %s case %d %s %s p=%d total=%d\n", rank, is_gv(s->cs) ? "allgatherv"
           : "reduce_scatter", s->cs, algo ? algo : "MPI", how, size, s->total);
    fails++;
  }
}

/* Whether status st is MPI's empty status (ours: collc's request; a
 * native collective's status is undefined but for errors). */
static int empty(const MPI_Status *st, int ours) {
  int n = -1;
  if (!ours) return 1;
  MPI_Get_count(st, MPI_BYTE, &n);
  return st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && n == 0;
}

/* Complete the k collective requests q[0..k) and the 2 native ones after
 * them by mode (0 Waitall, 1 Testany, 2 Waitsome); every collective one
 * must become MPI_REQUEST_NULL with an empty status (ours: collc serves
 * them). */
static void complete(MPI_Request *q, int k, int mode, int ours) {
  MPI_Status sts[SLOTS + 2];
  int n = k + 2, left = n, idx[SLOTS + 2], out, bad = 0;
  if (mode == 0) {
    MPI_Waitall(n, q, sts);
    for (int i = 0; i < k; i++) bad += !empty(&sts[i], ours);
  }
  while (mode == 1 && left > 0) {
    int flag = 0, i;
    MPI_Status st;
    MPI_Testany(n, q, &i, &flag, &st);
    if (flag && i != MPI_UNDEFINED) left--, bad += i < k && !empty(&st, ours);
  }
  while (mode == 2 && left > 0) {
    MPI_Waitsome(n, q, &out, idx, sts);
    for (int j = 0; j < out; j++) left--, bad += idx[j] < k && !empty(&sts[j], ours);
  }
  for (int i = 0; i < n; i++) bad += q[i] != MPI_REQUEST_NULL;
  checks++;
  if (bad)
    printf("FAIL rank %d: completion mode %d: %d bad requests/statuses\n", rank, mode, bad), fails++;
}

/* A ring exchange's two native requests into q[0..2). */
static void ring(int *out, int *in, MPI_Request *q) {
  *out = rank;
  MPI_Irecv(in, 1, MPI_INT, (rank + size - 1) % size, 7, MPI_COMM_WORLD, &q[0]);
  MPI_Isend(out, 1, MPI_INT, (rank + 1) % size, 7, MPI_COMM_WORLD, &q[1]);
}

/* Round r of nonblocking calls with algo: 1 + r % 16 outstanding; ours:
 * collc serves them. */
static void nb_round(int r, const char *algo, int v, int ours) {
  MPI_Request q[SLOTS + 2];
  int k = 0, want = 1 + r % SLOTS, c[64], out, in = -1;
  for (int i = 0; i < want; i++) {
    int cs = (r + i) % NCASES;
    if (!fits(cs, algo)) continue;
    counts_of((5 * v + 3 * i) % (size + 5), size, c); /* (not in step with the cases) */
    prepare(&slots[k], cs, c, r);
    int rc = post(&slots[k], algo, &q[k]);
    if (rc != MPI_SUCCESS) printf("FAIL rank %d: post case %d: rc %d\n", rank, cs, rc), fails++;
    if (cs == 5) free_types(&slots[k]); /* (the call keeps its own) */
    k++;
  }
  ring(&out, &in, &q[k]);
  complete(q, k, r % 3, ours);
  for (int i = 0; i < k; i++) verify(&slots[i], algo, "nonblocking"), free_types(&slots[i]);
  checks++;
  if (in != (rank + size - 1) % size) printf("FAIL rank %d: ring got %d\n", rank, in), fails++;
}

/* Persistent requests of case cs with algo: started 3 times (new input
 * each, completed three ways), then two at once with MPI_Startall. */
static void persistent(int cs, const char *algo, const int *c) {
  MPI_Request q[3], two[2];
  MPI_Status sts[3]; /* (MPICH's MPI_STATUSES_IGNORE trips gcc's -Wstringop-overflow) */
  int out, in, flag = 0, rc;
  prepare(&slots[0], cs, c, 0);
  prepare(&slots[1], cs, c, 7);
  rc = init(&slots[0], algo, &q[0]);
  if (!rc) rc = init(&slots[1], algo, &two[1]);
  if (cs == 5) free_types(&slots[0]), free_types(&slots[1]); /* (the requests keep theirs) */
  if (rc) {
    printf("FAIL rank %d: init case %d %s: rc %d\n", rank, cs, algo ? algo : "-", rc), fails++;
    return;
  }
  for (int it = 0; it < 3; it++) {
    prepare_data(&slots[0], cs, c, it);
    MPI_Start(&q[0]);
    if (it == 0) MPI_Wait(&q[0], MPI_STATUS_IGNORE);
    while (it == 1 && !flag) MPI_Test(&q[0], &flag, MPI_STATUS_IGNORE);
    if (it == 2) ring(&out, &in, &q[1]), MPI_Waitall(3, q, sts);
    checks++;
    if (q[0] == MPI_REQUEST_NULL) printf("FAIL rank %d: persistent request gone\n", rank), fails++;
    verify(&slots[0], algo, "persistent");
  }
  prepare_data(&slots[0], cs, c, 8);
  two[0] = q[0];
  MPI_Startall(2, two);
  MPI_Waitall(2, two, sts);
  verify(&slots[0], algo, "startall"), verify(&slots[1], algo, "startall");
  MPI_Request_free(&two[0]), MPI_Request_free(&two[1]);
  checks++;
  if (two[0] != MPI_REQUEST_NULL || two[1] != MPI_REQUEST_NULL)
    printf("FAIL rank %d: freed request not null\n", rank), fails++;
  free_types(&slots[0]), free_types(&slots[1]);
}

/* Wrong arguments return MPI error classes (class want, else a line). */
static void expect_class(int rc, int want, const char *what) {
  int cls = MPI_SUCCESS;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  checks++;
  if (cls != want) printf("FAIL rank %d: %s: class %d, want %d\n", rank, what, cls, want), fails++;
}

static void bad_args(void) {
  int c[64], d[64], x[4];
  MPI_Request q;
  for (int q = 0; q < size; q++) c[q] = 1, d[q] = q;
  c[size - 1] = -1;
  expect_class(MPI_Iallgatherv(x, 1, MPI_INT, x, c, d, MPI_INT, MPI_COMM_WORLD, &q),
               MPI_ERR_COUNT, "Iallgatherv negative count");
  expect_class(MPI_Allgatherv_init(x, 1, MPI_INT, x, c, d, MPI_INT, MPI_COMM_WORLD,
                                   MPI_INFO_NULL, &q), MPI_ERR_COUNT, "Allgatherv_init count");
  expect_class(MPI_Ireduce_scatter(x, x + 2, NULL, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q),
               MPI_ERR_ARG, "Ireduce_scatter NULL counts");
  c[size - 1] = 1;
  expect_class(MPI_Ireduce_scatter(x, x + 2, c, MPI_INT, MPI_SUM, MPI_COMM_WORLD, NULL),
               MPI_ERR_ARG, "Ireduce_scatter NULL request");
  expect_class(MPI_Reduce_scatter_init(x, x + 2, c, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD,
                                       MPI_INFO_NULL, &q), MPI_ERR_OP, "Reduce_scatter_init op");
  expect_class(collc_iallgatherv_algo("torus:9", x, 1, MPI_INT, x, c, d, MPI_INT,
                                      MPI_COMM_WORLD, &q), MPI_ERR_ARG, "bad algorithm");
}

int main(int argc, char **argv) {
  const char *nb_algos[] = {"native", "recexch", "recexch:flat", "cyclic", NULL};
  const char *p_algos[] = {"native", "recexch", "cyclic", "shm", "hier", NULL};
  int c[64], all = 0, forced = getenv("COLLC_ALLGATHERV") && getenv("COLLC_REDUCE_SCATTER");
  int quick = tl_env_int("COLLC_TEST_QUICK", 0) > 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  break_at = getenv("COLLC_TEST_BREAK") ? atoi(getenv("COLLC_TEST_BREAK")) : 0;
  MPI_Op_create(matmul, 0, &matop);
  MPI_Type_contiguous(4, MPI_UNSIGNED, &m4), MPI_Type_commit(&m4);
  int probe_in[2] = {1, 2}, probe[4] = {0}, pc[64], pd[64];
  for (int q = 0; q < size; q++) pc[q] = q == 0, pd[q] = 2 + q;
  PMPI_Allgatherv(probe_in, rank == 0, MPI_INT, probe, pc, pd, MPI_INT, MPI_COMM_WORLD);
  skip_gaps = probe[2] != 1; /* MPICH 4.0 at p = 1 writes at recvbuf, ignoring displs */
  for (int a = 0; a < 5 && size <= 64; a++)
    for (int r = 0; r < (quick ? SLOTS : 2 * SLOTS) && (!quick || a == 1 || a == 3); r++)
      nb_round(r, nb_algos[a], r + a, a > 0 && (a < 4 || forced));
  for (int a = 0; a < 6 && size <= 64; a++)
    for (int cs = 0; cs < NCASES && (!quick || a == 1 || a == 3); cs++)
      if (fits(cs, p_algos[a])) counts_of((cs + a) % (size + 5), size, c), persistent(cs, p_algos[a], c);
  bad_args();
  MPI_Op_free(&matop);
  MPI_Type_free(&m4);
  PMPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("%s: p=%d, %ld checks per rank, %d failed\n", all ? "FAIL" : "PASS", size, checks, all);
  MPI_Finalize();
  return all != 0;
}
