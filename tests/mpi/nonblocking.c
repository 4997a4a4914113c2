/* nonblocking.c - MPI's nonblocking collectives, many outstanding at once
 * on one communicator.
 *
 * Batches of k = 1..16 nonblocking collectives (Iallreduce,
 * Ireduce_scatter_block, Iallgather, Ireduce, Ibcast, Ialltoall, mixed), each
 * with its own buffers, are started in the same order on every rank and
 * completed in another: one MPI_Waitall with native MPI_Irecv/Isend to the
 * neighbour ranks in the same array, MPI_Wait in reverse order, MPI_Waitsome,
 * Testsome, Waitany, Testany and Testall loops (natives in some lists too),
 * and a rank-dependent order (rank r starts at index r % k, MPI_Wait on even
 * ranks, MPI_Test loops on odd ones). Counts 0, 1, 2, p - 1, p + 1, 7, 13,
 * 100, 1001 (per block where the collective has blocks) and 70001 in one
 * batch; MPI_INT (small values) and MPI_DOUBLE (small integers: every
 * summation order is exact) under MPI_SUM, MPI_MAX and MPI_BXOR.
 *
 * First, node-aware collc_i<coll>_algo (hier, shm) on a communicator that
 * has seen no blocking collective yet: served natively (no error). Then
 * phases, all on one duplicate of MPI_COMM_WORLD:
 *   mpi      the MPI_I<coll> entry points (COLLC_<COLL> or the default rule);
 *   algo     collc_i<coll>_algo with message-based algorithms: recexch,
 *            recexch:flat, cyclic, tree, tree:3, tree:2,3, bruck:2, bruck:3,
 *            linear, pairwise, torus:d=2;
 *   node     hier and (one node) shm, each after its blocking set-up call
 *            (same collective, count, root, in-place, op), made while the
 *            batch's earlier requests are outstanding;
 *   inplace  MPI_IN_PLACE for every collective that has it (reduce: at
 *            the root), through both entry points;
 *   noncomm  non-commutative user ops through Iallreduce and Ireduce: a 2x2
 *            matrix product mod 2^32 on contiguous(4, int) and "first
 *            nonzero" on int (any order error changes the result);
 * then MPI_Request_free of active requests collc serves (recexch, and shm
 * after its set-up): MPI_SUCCESS, the handle MPI_REQUEST_NULL, the result
 * still arrives, and later blocking and nonblocking calls work.
 *
 * Truth: the PMPI_ blocking collective on the same input, computed before
 * the batch starts; for the non-commutative ops the rank-order fold computed
 * here from every rank's input (each rank can generate any rank's). The
 * whole receive buffer and 16 bytes after it must equal the reference byte
 * for byte (reduce_scatter_block in place: the result block and the bytes
 * after the input), send buffers stay unchanged, non-roots' reduce buffers
 * untouched. After completion each handle must be MPI_REQUEST_NULL, reported
 * exactly once, and where collc serves the call (an explicit algorithm
 * other than native) its status empty: count 0, MPI_ANY_SOURCE, MPI_ANY_TAG.
 *
 * Every batch runs twice (the second time with other values: decisions
 * remembered), and every 8th job of a batch repeats the one before it (one
 * plan running twice at once). COLLC_TEST_QUICK=1 (MPICH, which busy-polls
 * when oversubscribed): fewer batches, once. COLLC_TEST_BREAK=N corrupts the N-th
 * nonempty result on the last rank (the program must then fail).
 * COLLC_TEST_VERBOSE=1: every rank prints each call before it starts. Open MPI
 * at p = 8 on 2 cores: about 5 s.
 */
#include <stdint.h>
#include "collc.h"
#include "testlib.h"
#include "nbwait.h"

enum { K_ALLREDUCE, K_RSB, K_ALLGATHER, K_REDUCE, K_BCAST, K_ALLTOALL, K_COUNT };
static const char *const kind_names[K_COUNT] = {"Iallreduce", "Ireduce_scatter_block",
                                                "Iallgather", "Ireduce", "Ibcast", "Ialltoall"};
enum { T_INT, T_DOUBLE, T_MAT, T_COUNT };                 /* element types */
static const char *const type_names[T_COUNT] = {"int", "double", "mat(4 int)"};
enum { O_SUM, O_MAX, O_BXOR, O_MAT, O_FIRSTNZ, O_COUNT }; /* operations */
static const char *const op_names[O_COUNT] = {"SUM", "MAX", "BXOR", "matrix product",
                                              "first nonzero"};
enum { PH_MPI, PH_ALGO, PH_NODE, PH_INPLACE, PH_NONCOMM, PH_COUNT };
static const char *const phase_names[PH_COUNT] = {"mpi", "algo", "node", "inplace", "noncomm"};
enum { M_WAITALL, M_REVERSE, M_WAITSOME, M_TESTSOME, M_WAITANY, M_TESTANY, M_TESTALL,
       M_ROTATED, M_COUNT };                              /* completion orders */
static const char *const mode_names[M_COUNT] = {
    "MPI_Waitall (with native Irecv/Isend)", "MPI_Wait in reverse order", "MPI_Waitsome loop",
    "MPI_Testsome loop (with natives)", "MPI_Waitany loop", "MPI_Testany loop",
    "MPI_Testall loop (with natives)", "rank-rotated MPI_Wait/MPI_Test"};

#define MAX_JOBS 16
#define MAX_LIST (MAX_JOBS + 2)
#define SLACK 16    /* bytes after a receive buffer that must stay untouched */
#define BIG 70001   /* elements of the large vectors */

/* What every check shares: the communicator and the types and ops. */
typedef struct {
  MPI_Comm comm;
  int p, rank, quick, one_node, verbose;
  MPI_Datatype type[T_COUNT];
  MPI_Op op[O_COUNT];
} env;

/* One nonblocking collective of a batch, its buffers and its outcome. */
typedef struct {
  int kind, count, root, in_place, type, op, seed;
  const char *algo; /* NULL: MPI_I<coll>; else collc_i<coll>_algo */
  int strict;       /* collc serves it: the status must be empty */
  int setup;        /* node-aware: a blocking set-up call first */
  char *in, *incopy, *out, *ref;
  size_t in_bytes, out_bytes; /* out_bytes includes SLACK */
  MPI_Request req;
  MPI_Status st;
  int done;   /* how often a completion call reported it */
  int failed; /* its start failed (nothing more is checked) */
} job;

/* An integer hash of three values (inputs from rank, seed, position). */
static uint32_t hash3(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t h = a * 0x9E3779B1u ^ (b + 0x7F4A7C15u) * 0x85EBCA77u ^ (c + 1u) * 0xC2B2AE3Du;
  h ^= h >> 15, h *= 0x2C1B3C6Du, h ^= h >> 12, h *= 0x297A2D39u, h ^= h >> 15;
  return h;
}

/* Bytes of one element of type case ty. */
static size_t unit_bytes(int ty) {
  return ty == T_INT ? sizeof(int) : ty == T_DOUBLE ? sizeof(double) : 4 * sizeof(int);
}

/* The user op "2x2 matrix product mod 2^32" on contiguous(4, int):
 * inout = in x inout (in holds the lower ranks' part). */
static void op_mat(void *in, void *inout, int *len, MPI_Datatype *t) {
  const uint32_t *a = in;
  uint32_t *b = inout;
  (void)t;
  for (int i = 0; i < *len; i++, a += 4, b += 4) {
    uint32_t r0 = a[0] * b[0] + a[1] * b[2], r1 = a[0] * b[1] + a[1] * b[3];
    uint32_t r2 = a[2] * b[0] + a[3] * b[2], r3 = a[2] * b[1] + a[3] * b[3];
    b[0] = r0, b[1] = r1, b[2] = r2, b[3] = r3;
  }
}

/* The user op "first nonzero" on int: the lower ranks' value unless 0. */
static void op_firstnz(void *in, void *inout, int *len, MPI_Datatype *t) {
  const int *a = in;
  int *b = inout;
  (void)t;
  for (int i = 0; i < *len; i++)
    if (a[i]) b[i] = a[i];
}

/* Fill units elements of type ty at buf with rank's input for seed (op
 * "first nonzero": two thirds zeros, so the order matters). */
static void fill(void *buf, int ty, int op, size_t units, int rank, int seed) {
  for (size_t i = 0; i < units; i++) {
    uint32_t h = hash3((uint32_t)rank, (uint32_t)seed, (uint32_t)i);
    if (ty == T_DOUBLE) ((double *)buf)[i] = (double)(h & 0xff);
    else if (ty == T_MAT)
      for (uint32_t q = 0; q < 4; q++) ((uint32_t *)buf)[4 * i + q] = hash3(h, q, 7);
    else ((int *)buf)[i] = op == O_FIRSTNZ ? (h % 3 ? 0 : (int)(h >> 20) + 1) : (int)(h & 0xfff);
  }
}

/* malloc or abort (a failure on one rank only would leave the others
 * waiting in a collective). */
static void *need(size_t n) {
  void *m = malloc(n ? n : 1);
  if (!m) {
    printf("FAIL mpi_nonblocking: out of memory (%zu bytes)\n", n);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return m;
}

/* Input elements of j on p ranks (bcast: none, the root's data is in out). */
static size_t in_units(const job *j, int p) {
  if (j->kind == K_BCAST) return 0;
  return (size_t)j->count * (j->kind == K_RSB || j->kind == K_ALLTOALL ? (size_t)p : 1);
}

/* Receive buffer elements of j on p ranks (reduce_scatter_block in place:
 * the p blocks of input). */
static size_t out_units(const job *j, int p) {
  int blocks = j->kind == K_ALLGATHER || j->kind == K_ALLTOALL || (j->kind == K_RSB && j->in_place);
  return (size_t)j->count * (blocks ? (size_t)p : 1);
}

/* Whether this rank passes MPI_IN_PLACE for j (reduce: the root only). */
static int passes_in_place(const env *E, const job *j) {
  return j->in_place && (j->kind != K_REDUCE || E->rank == j->root);
}

/* Whether op is one of the non-commutative user ops. */
static int noncommutative(int op) { return op == O_MAT || op == O_FIRSTNZ; }

/* The message-based algorithm texts of kind (indexed cyclically by a). */
static const char *algo_for(int kind, int a) {
  static const char *const ar[] = {"recexch", "cyclic", "tree", "tree:3", "recexch:flat"};
  static const char *const rs[] = {"recexch", "cyclic", "recexch:flat"};
  static const char *const ag[] = {"recexch", "cyclic"};
  static const char *const tr[] = {"tree", "tree:3", "tree:2,3"};
  static const char *const aa[] = {"bruck:2", "linear", "pairwise", "torus:d=2", "bruck:3"};
  static const char *const *const lists[K_COUNT] = {ar, rs, ag, tr, tr, aa};
  static const int n[K_COUNT] = {5, 3, 2, 3, 3, 5};
  return lists[kind][a % n[kind]];
}

/* The node-aware algorithm texts (shm only where all ranks share a node). */
static const char *node_algo(const env *E, int kind, int a) {
  if (kind == K_ALLREDUCE && a % 3 == 2) return "hier:node=tree";
  return a % 2 && E->one_node ? "shm" : "hier";
}

/* The non-commutative case i of batch b: Iallreduce or Ireduce, matrix
 * product or first nonzero, through MPI_I<coll>, a message-based
 * algorithm, or hier (with its set-up call). */
static void noncomm_spec(job *j, int b, int i) {
  static const char *const ar[4] = {NULL, "recexch", "tree", "hier"};
  static const char *const rd[4] = {NULL, "tree", "tree:3", "hier"};
  j->kind = i % 2 ? K_REDUCE : K_ALLREDUCE;
  j->type = (i / 2 + b) % 2 ? T_MAT : T_INT;
  j->op = j->type == T_MAT ? O_MAT : O_FIRSTNZ;
  j->algo = (j->kind == K_REDUCE ? rd : ar)[(b + i / 2) % 4];
  j->setup = j->algo && !strcmp(j->algo, "hier");
  j->in_place = (b + i) % 3 == 0;
}

/* Job i of batch b (of k) in phase ph, round rep: the same on every rank.
 * Every 8th job repeats the one before it (same call, other buffers and
 * values: one plan running twice at once); round rep > 0 repeats the
 * batch with other values (the remembered decisions). */
static void job_spec(const env *E, int ph, int b, int i, int k, int rep, job *j) {
  const int p = E->p, counts[9] = {0, 1, 2, p + 1, 7, 13, 100, 1001, p > 1 ? p - 1 : 3};
  memset(j, 0, sizeof *j);
  j->req = MPI_REQUEST_NULL;
  j->seed = 100000 * rep + 1000 * ph + 37 * b + i + 1;
  if (i % 8 == 7) i--; /* (the seed stays this job's) */
  j->kind = (b + i) % K_COUNT;
  j->count = counts[(3 * b + 5 * i) % 9];
  j->root = (b + 2 * i) % p;
  j->type = (b + i) % 3 == 1 ? T_DOUBLE : T_INT;
  j->op = (b + i) % 4 == 0 ? O_MAX : j->type == T_INT && (b + i) % 4 == 2 ? O_BXOR : O_SUM;
  j->in_place = ph == PH_INPLACE || (b + 3 * i) % 7 == 0;
  if (k == 12 && i < 2 && ph <= PH_ALGO) /* the large vectors */
    j->kind = i ? K_BCAST : K_ALLREDUCE, j->count = BIG, j->type = i ? T_DOUBLE : T_INT;
  if (ph == PH_ALGO) j->algo = algo_for(j->kind, b + i / K_COUNT);
  if (ph == PH_NODE) j->algo = node_algo(E, j->kind, b + i / K_COUNT), j->setup = 1;
  if (ph == PH_INPLACE && i % 2) j->algo = algo_for(j->kind, b + i / 2);
  if (ph == PH_NONCOMM) noncomm_spec(j, b, i);
  if (j->kind == K_BCAST) j->in_place = 0;
  j->strict = j->algo != NULL;
}

/* Allocate j's buffers: the input from (rank, seed) in the send buffer and,
 * where the call reads it in place, in the receive buffer (bcast: the
 * root's data); sentinel bytes elsewhere; ref a copy of out. */
static void job_alloc(const env *E, job *j) {
  size_t ub = unit_bytes(j->type), n = (size_t)j->count;
  j->in_bytes = in_units(j, E->p) * ub;
  j->out_bytes = out_units(j, E->p) * ub + SLACK;
  j->in = need(j->in_bytes), j->incopy = need(j->in_bytes);
  j->out = need(j->out_bytes), j->ref = need(j->out_bytes);
  fill(j->in, j->type, j->op, in_units(j, E->p), E->rank, j->seed);
  memcpy(j->incopy, j->in, j->in_bytes);
  memset(j->out, TL_SENTINEL, j->out_bytes);
  if (j->kind == K_BCAST && E->rank == j->root) fill(j->out, j->type, j->op, n, E->rank, j->seed);
  if (passes_in_place(E, j))
    memcpy(j->out + (j->kind == K_ALLGATHER ? (size_t)E->rank * n * ub : 0), j->in, j->in_bytes);
  memcpy(j->ref, j->out, j->out_bytes);
}

/* Free j's buffers. */
static void job_free(job *j) {
  free(j->in), free(j->incopy), free(j->out), free(j->ref);
  j->in = j->incopy = j->out = j->ref = NULL;
}

/* The rank-order fold v0 o v1 o ... o v(p-1) of every rank's input of j
 * (each generated here as that rank generates it) into res. */
static void fold(const env *E, const job *j, void *res) {
  size_t bytes = unit_bytes(j->type) * (size_t)j->count;
  char *tmp = need(bytes);
  int n = j->count;
  MPI_Datatype t = E->type[j->type];
  fill(res, j->type, j->op, (size_t)n, 0, j->seed);
  for (int r = 1; r < E->p; r++) {
    fill(tmp, j->type, j->op, (size_t)n, r, j->seed);
    (j->op == O_MAT ? op_mat : op_firstnz)(res, tmp, &n, &t);
    memcpy(res, tmp, bytes);
  }
  free(tmp);
}

/* The truth for j into j->ref: the blocking PMPI_ collective on j's input,
 * out of place; for a non-commutative op the fold. Collective over
 * E->comm; returns the MPI error code. */
static int job_reference(const env *E, job *j) {
  MPI_Datatype t = E->type[j->type];
  MPI_Op op = E->op[j->op];
  MPI_Comm c = E->comm;
  int n = j->count, rc = MPI_SUCCESS, root = E->rank == j->root;
  char *scratch = need(j->out_bytes);
  if (noncommutative(j->op) && (j->kind == K_ALLREDUCE || root)) fold(E, j, j->ref);
  else if (j->kind == K_ALLREDUCE) rc = PMPI_Allreduce(j->in, j->ref, n, t, op, c);
  else if (j->kind == K_RSB) rc = PMPI_Reduce_scatter_block(j->in, j->ref, n, t, op, c);
  else if (j->kind == K_ALLGATHER) rc = PMPI_Allgather(j->in, n, t, j->ref, n, t, c);
  else if (j->kind == K_REDUCE && !noncommutative(j->op))
    rc = PMPI_Reduce(j->in, root ? j->ref : scratch, n, t, op, j->root, c);
  else if (j->kind == K_BCAST) rc = PMPI_Bcast(j->ref, n, t, j->root, c);
  else if (j->kind == K_ALLTOALL) rc = PMPI_Alltoall(j->in, n, t, j->ref, n, t, c);
  free(scratch);
  return rc;
}

/* The arguments of one call of j: send and receive buffer as this rank
 * passes them (MPI_IN_PLACE; a non-root's reduce receive buffer NULL for
 * odd seeds), type, op. */
typedef struct {
  const void *sb;
  void *rb;
  MPI_Datatype t;
  MPI_Op op;
} args;

/* j's arguments on buffers in and out. */
static args args_of(const env *E, const job *j, void *in, void *out) {
  args a = {passes_in_place(E, j) ? MPI_IN_PLACE : in, out, E->type[j->type], E->op[j->op]};
  if (j->kind == K_REDUCE && E->rank != j->root && j->seed % 2) a.rb = NULL;
  return a;
}

/* j through MPI_I<coll> into *r. */
static int call_mpi(const env *E, const job *j, args a, MPI_Request *r) {
  int n = j->count;
  MPI_Comm c = E->comm;
  switch (j->kind) {
  case K_ALLREDUCE: return MPI_Iallreduce(a.sb, a.rb, n, a.t, a.op, c, r);
  case K_RSB: return MPI_Ireduce_scatter_block(a.sb, a.rb, n, a.t, a.op, c, r);
  case K_ALLGATHER: return MPI_Iallgather(a.sb, n, a.t, a.rb, n, a.t, c, r);
  case K_REDUCE: return MPI_Ireduce(a.sb, a.rb, n, a.t, a.op, j->root, c, r);
  case K_BCAST: return MPI_Ibcast(a.rb, n, a.t, j->root, c, r);
  default: return MPI_Ialltoall(a.sb, n, a.t, a.rb, n, a.t, c, r);
  }
}

/* j through collc_i<coll>_algo (algorithm j->algo) into *r. */
static int call_algo(const env *E, const job *j, args a, MPI_Request *r) {
  int n = j->count;
  MPI_Comm c = E->comm;
  const char *g = j->algo;
  switch (j->kind) {
  case K_ALLREDUCE: return collc_iallreduce_algo(g, a.sb, a.rb, n, a.t, a.op, c, r);
  case K_RSB: return collc_ireduce_scatter_block_algo(g, a.sb, a.rb, n, a.t, a.op, c, r);
  case K_ALLGATHER: return collc_iallgather_algo(g, a.sb, n, a.t, a.rb, n, a.t, c, r);
  case K_REDUCE: return collc_ireduce_algo(g, a.sb, a.rb, n, a.t, a.op, j->root, c, r);
  case K_BCAST: return collc_ibcast_algo(g, a.rb, n, a.t, j->root, c, r);
  default: return collc_ialltoall_algo(g, a.sb, n, a.t, a.rb, n, a.t, c, r);
  }
}

/* j's blocking collc_<coll>_algo call (a node-aware algorithm's set-up). */
static int call_blocking(const env *E, const job *j, args a) {
  int n = j->count;
  MPI_Comm c = E->comm;
  const char *g = j->algo;
  switch (j->kind) {
  case K_ALLREDUCE: return collc_allreduce_algo(g, a.sb, a.rb, n, a.t, a.op, c);
  case K_RSB: return collc_reduce_scatter_block_algo(g, a.sb, a.rb, n, a.t, a.op, c);
  case K_ALLGATHER: return collc_allgather_algo(g, a.sb, n, a.t, a.rb, n, a.t, c);
  case K_REDUCE: return collc_reduce_algo(g, a.sb, a.rb, n, a.t, a.op, j->root, c);
  case K_BCAST: return collc_bcast_algo(g, a.rb, n, a.t, j->root, c);
  default: return collc_alltoall_algo(g, a.sb, n, a.t, a.rb, n, a.t, c);
  }
}

/* Describe j (for failure messages) into buf of len bytes. */
static void job_desc(const job *j, char *buf, size_t len) {
  snprintf(buf, len, "%s%s%s n=%d %s %s root=%d%s", kind_names[j->kind], j->algo ? " " : "",
           j->algo ? j->algo : "", j->count, type_names[j->type], op_names[j->op], j->root,
           j->in_place ? " in place" : "");
}

/* Start j: its blocking set-up call on zeroed scratch buffers first where
 * it needs one, then the nonblocking call. Failures recorded (a failed
 * start leaves the handle MPI_REQUEST_NULL). */
static void job_start(tl_ctx *ctx, const env *E, job *j) {
  char d[160];
  int rc = MPI_SUCCESS;
  if (j->setup) {
    char *s = calloc(1, j->in_bytes + 1), *o = calloc(1, j->out_bytes);
    rc = s && o ? call_blocking(E, j, args_of(E, j, s, o)) : MPI_ERR_NO_MEM;
    free(s), free(o);
  }
  if (!rc) {
    args a = args_of(E, j, j->in, j->out);
    rc = j->algo ? call_algo(E, j, a, &j->req) : call_mpi(E, j, a, &j->req);
  }
  if (rc) {
    job_desc(j, d, sizeof d);
    tl_fail(ctx, "%s: %s returned %d", d, j->setup ? "set-up or start" : "start", rc);
    j->req = MPI_REQUEST_NULL, j->failed = 1;
  }
}

/* Waitall or Testall (loop) over q[0..n-1]: every entry reported once. */
static int list_all(int mode, int n, MPI_Request *q, MPI_Status *sts, int *hits) {
  int flag = 0, rc = MPI_SUCCESS;
  if (mode == M_WAITALL) rc = MPI_Waitall(n, q, sts);
  else
    while (!rc && !flag) rc = MPI_Testall(n, q, &flag, sts);
  for (int i = 0; i < n; i++) hits[i]++;
  return rc;
}

/* Waitsome or Testsome loop over q[0..n-1] until the call answers
 * MPI_UNDEFINED (nothing active); hits[i] counts i's reports, sts[i] gets
 * its status. *msg: what went wrong beyond an error code. */
static int list_some(int mode, int n, MPI_Request *q, MPI_Status *sts, int *hits,
                     const char **msg) {
  int out = 0, idx[MAX_LIST], rc = MPI_SUCCESS, left = n, idle = 0;
  MPI_Status st[MAX_LIST];
  while (!rc) {
    rc = mode == M_WAITSOME ? MPI_Waitsome(n, q, &out, idx, st) : MPI_Testsome(n, q, &out, idx, st);
    if (rc || out == MPI_UNDEFINED) break;
    for (int i = 0; i < out; i++) hits[idx[i]]++, sts[idx[i]] = st[i], left--;
    if (left <= 0 && ++idle > 1000) {
      *msg = "never answered MPI_UNDEFINED with every request complete";
      break;
    }
  }
  return rc;
}

/* Waitany or Testany loop over q[0..n-1] until the call answers index
 * MPI_UNDEFINED (see list_some). */
static int list_any(int mode, int n, MPI_Request *q, MPI_Status *sts, int *hits,
                    const char **msg) {
  int idx = 0, flag = 0, rc = MPI_SUCCESS, left = n, idle = 0;
  MPI_Status st;
  while (!rc) {
    flag = 1;
    rc = mode == M_WAITANY ? MPI_Waitany(n, q, &idx, &st) : MPI_Testany(n, q, &idx, &flag, &st);
    if (rc || (flag && idx == MPI_UNDEFINED)) break;
    if (flag) hits[idx]++, sts[idx] = st, left--;
    if (left <= 0 && ++idle > 1000) {
      *msg = "never answered MPI_UNDEFINED with every request complete";
      break;
    }
  }
  return rc;
}

/* Complete J[0..k-1] one by one: in reverse order by MPI_Wait, or
 * (rotated) from index rank % k on, by MPI_Wait on even ranks and MPI_Test
 * loops on odd ones. Returns the first error code. */
static int one_by_one(const env *E, job *J, int k, int mode) {
  int first = MPI_SUCCESS, start = mode == M_ROTATED ? E->rank % k : 0;
  for (int m = 0; m < k; m++) {
    int i = mode == M_REVERSE ? k - 1 - m : (start + m) % k, flag = 0, rc = MPI_SUCCESS;
    if (mode == M_ROTATED && E->rank % 2)
      while (!rc && !flag) rc = MPI_Test(&J[i].req, &flag, &J[i].st);
    else rc = MPI_Wait(&J[i].req, &J[i].st);
    J[i].done++;
    if (rc && !first) first = rc;
  }
  return first;
}

/* Complete J[0..k-1] as mode says (Waitall, Testsome, Testall: with a
 * native MPI_Irecv from the left neighbour first and an MPI_Isend to the
 * right one last in the list, tag tag, data checked). Each job's status
 * goes to J[i].st, J[i].done counts its reports; failures of the
 * completion calls themselves are recorded. */
static void complete(tl_ctx *ctx, const env *E, job *J, int k, int mode, int tag) {
  MPI_Request q[MAX_LIST];
  MPI_Status sts[MAX_LIST];
  int map[MAX_LIST], hits[MAX_LIST] = {0}, n = 0, rc, got = -1, sent = 1000 * E->rank + tag;
  int natives = mode == M_WAITALL || mode == M_TESTSOME || mode == M_TESTALL;
  int left = (E->rank + E->p - 1) % E->p, right = (E->rank + 1) % E->p;
  const char *msg = NULL;
  if (mode == M_REVERSE || mode == M_ROTATED) {
    if ((rc = one_by_one(E, J, k, mode))) tl_fail(ctx, "%s: returned %d", mode_names[mode], rc);
    return;
  }
  if (natives) MPI_Irecv(&got, 1, MPI_INT, left, tag, E->comm, &q[n]), map[n++] = -1;
  for (int i = 0; i < k; i++) q[n] = J[i].req, map[n++] = i;
  if (natives) MPI_Isend(&sent, 1, MPI_INT, right, tag, E->comm, &q[n]), map[n++] = -1;
  if (mode == M_WAITALL || mode == M_TESTALL) rc = list_all(mode, n, q, sts, hits);
  else if (mode == M_WAITSOME || mode == M_TESTSOME) rc = list_some(mode, n, q, sts, hits, &msg);
  else rc = list_any(mode, n, q, sts, hits, &msg);
  for (int i = 0; i < n; i++)
    if (map[i] >= 0) J[map[i]].req = q[i], J[map[i]].st = sts[i], J[map[i]].done += hits[i];
    else if (q[i] != MPI_REQUEST_NULL || hits[i] != 1)
      tl_fail(ctx, "%s: the native request at %d reported %d times", mode_names[mode], i, hits[i]);
  if (rc || msg)
    tl_fail(ctx, "%s: returned %d%s%s", mode_names[mode], rc, msg ? ", " : "", msg ? msg : "");
  if (natives && got != 1000 * left + tag)
    tl_fail(ctx, "%s: the native receive alongside got %d", mode_names[mode], got);
}

/* The first byte where j's receive buffer differs from the reference, or
 * -1 (reduce_scatter_block in place: the result block and the bytes after
 * the input; the rest of the input is the library's scratch). */
static long result_diff(const env *E, const job *j) {
  size_t ub = unit_bytes(j->type), n = (size_t)j->count;
  if (j->kind != K_RSB || !j->in_place) return tl_first_diff(j->out, j->ref, j->out_bytes);
  long at = tl_first_diff(j->out, j->ref, n * ub);
  size_t from = (size_t)E->p * n * ub;
  long tail = tl_first_diff(j->out + from, j->ref + from, SLACK);
  return at >= 0 ? at : tail >= 0 ? (long)from + tail : -1;
}

/* Check j after its batch's completion (how: the completion call): handle,
 * reports, status, result against the reference, send buffer. */
static void job_check(tl_ctx *ctx, const env *E, job *j, const char *how) {
  char d[160];
  long at;
  job_desc(j, d, sizeof d);
  ctx->checks++;
  if (j->failed) return;
  if (j->req != MPI_REQUEST_NULL) tl_fail(ctx, "%s (%s): handle not MPI_REQUEST_NULL", d, how);
  if (j->done != 1) tl_fail(ctx, "%s (%s): reported %d times", d, how, j->done);
  if (j->strict && j->done == 1 && !nbw_empty(&j->st)) {
    int c = -1;
    MPI_Get_count(&j->st, MPI_BYTE, &c);
    tl_fail(ctx, "%s (%s): status not empty: count %d source %d tag %d", d, how, c,
            j->st.MPI_SOURCE, j->st.MPI_TAG);
  }
  if (j->count > 0 && ++ctx->nonempty == ctx->break_at && ctx->rank == ctx->size - 1)
    j->out[0] ^= 0x5a; /* self-test: this check must now fail */
  if ((at = result_diff(E, j)) >= 0)
    tl_fail(ctx, "%s (%s): result differs from the reference at byte %ld of %zu: got 0x%02x "
            "want 0x%02x", d, how, at, j->out_bytes - SLACK, (unsigned char)j->out[at],
            (unsigned char)j->ref[at]);
  if (memcmp(j->in, j->incopy, j->in_bytes))
    tl_fail(ctx, "%s (%s): send buffer modified", d, how);
}

static void run_jobs(tl_ctx *ctx, const env *E, job *J, int k, int mode, int tag,
                     const char *label);

/* Batch b of phase ph (round rep): k jobs, their references first, then
 * started in order (set-up calls in between), completed as mode says,
 * checked. */
static void batch(tl_ctx *ctx, const env *E, int ph, int b, int k, int rep, int mode) {
  job J[MAX_JOBS];
  for (int i = 0; i < k; i++) job_spec(E, ph, b, i, k, rep, &J[i]);
  run_jobs(ctx, E, J, k, mode, 100 + b, phase_names[ph]);
}

/* Jobs J[0..k-1] (specified; label names them in verbose output): their
 * buffers and references, started in order, completed as mode says
 * (tag: the native point-to-point requests'), checked, freed. */
static void run_jobs(tl_ctx *ctx, const env *E, job *J, int k, int mode, int tag,
                     const char *label) {
  char d[160];
  int rc;
  for (int i = 0; i < k; i++) {
    job_alloc(E, &J[i]);
    if ((rc = job_reference(E, &J[i]))) {
      job_desc(&J[i], d, sizeof d);
      tl_fail(ctx, "%s: the reference returned %d", d, rc);
    }
  }
  for (int i = 0; i < k; i++) {
    if (E->verbose)
      job_desc(&J[i], d, sizeof d), printf("rank %d: %s job %d: %s\n", E->rank, label, i, d);
    job_start(ctx, E, &J[i]);
  }
  if (E->verbose) printf("rank %d: completing by %s\n", E->rank, mode_names[mode]), fflush(stdout);
  complete(ctx, E, J, k, mode, tag);
  for (int i = 0; i < k; i++) {
    job_check(ctx, E, &J[i], mode_names[mode]);
    job_free(&J[i]);
  }
}

/* Every batch of phase ph: k = 1..16 (quick: 1, 2, 3, 5, 8, 12, 16; the
 * smaller phases 1, 4, 6, 8, 12, 16), twice (the second round with other
 * values, completed in the next order; quick: once), the completion
 * order rotating. */
static void phase(tl_ctx *ctx, const env *E, int ph) {
  static const int all[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  static const int quick[7] = {1, 2, 3, 5, 8, 12, 16}, small[6] = {1, 4, 6, 8, 12, 16};
  const int *ks = ph > PH_ALGO ? small : E->quick ? quick : all;
  int n = ph > PH_ALGO ? (E->quick ? 4 : 6) : E->quick ? 7 : 16;
  double t0 = tl_now();
  for (int rep = 0; rep < (E->quick ? 1 : 2); rep++)
    for (int b = 0; b < n; b++) batch(ctx, E, ph, b, ks[b], rep, (b + 3 * ph + rep) % M_COUNT);
  if (E->rank == 0) printf("phase %-8s %2d batches %5.2f s\n", phase_names[ph], n, tl_now() - t0);
}

/* MPI_Request_free of an active collc_iallreduce_algo(algo) request of
 * 1000 ints (buffers of slot, static: the freed collective may use them
 * after the free returns): MPI_SUCCESS and the handle MPI_REQUEST_NULL;
 * the result must still arrive (polled with MPI_Request_get_status, which
 * moves collc's requests on, for 30 s at most). */
static void free_one(tl_ctx *ctx, const env *E, const char *algo, int slot) {
  enum { N = 1000 };
  static int in[2][N], out[2][N], ref[2][N];
  MPI_Request r = MPI_REQUEST_NULL;
  int flag = 0, rc;
  fill(in[slot], T_INT, O_SUM, N, E->rank, 9000 + slot);
  memset(out[slot], TL_SENTINEL, sizeof out[slot]);
  PMPI_Allreduce(in[slot], ref[slot], N, MPI_INT, MPI_SUM, E->comm);
  if (!strcmp(algo, "shm") && (rc = collc_allreduce_algo(algo, in[slot], out[slot], N, MPI_INT,
                                                         MPI_SUM, E->comm))) /* set-up */
    tl_fail(ctx, "allreduce %s (set-up for MPI_Request_free): returned %d", algo, rc);
  memset(out[slot], TL_SENTINEL, sizeof out[slot]);
  if ((rc = collc_iallreduce_algo(algo, in[slot], out[slot], N, MPI_INT, MPI_SUM, E->comm, &r)))
    tl_fail(ctx, "iallreduce %s (to be freed): returned %d", algo, rc);
  if ((rc = MPI_Request_free(&r)) || r != MPI_REQUEST_NULL)
    tl_fail(ctx, "MPI_Request_free of an active iallreduce %s: returned %d, handle %s", algo, rc,
            r == MPI_REQUEST_NULL ? "MPI_REQUEST_NULL" : "not MPI_REQUEST_NULL");
  for (double t0 = tl_now(); memcmp(out[slot], ref[slot], sizeof ref[slot]);) {
    MPI_Request_get_status(MPI_REQUEST_NULL, &flag, MPI_STATUS_IGNORE);
    if (tl_now() - t0 > 30) {
      tl_fail(ctx, "iallreduce %s freed while active: no result after 30 s", algo);
      break;
    }
  }
  ctx->checks++;
}

/* Freed active requests (recexch; on one node also shm after its set-up
 * call), then a blocking MPI_Allreduce and a node-aware batch (set-up
 * calls and nonblocking calls) on the same communicator. */
static void freed(tl_ctx *ctx, const env *E) {
  int x[64], y[64], z[64], rc;
  double t0 = tl_now();
  free_one(ctx, E, "recexch", 0);
  if (E->one_node) free_one(ctx, E, "shm", 1);
  for (int i = 0; i < 64; i++) x[i] = E->rank * 64 + i, y[i] = z[i] = -1;
  rc = MPI_Allreduce(x, y, 64, MPI_INT, MPI_SUM, E->comm);
  PMPI_Allreduce(x, z, 64, MPI_INT, MPI_SUM, E->comm);
  if (rc || memcmp(y, z, sizeof y))
    tl_fail(ctx, "MPI_Allreduce after MPI_Request_free: returned %d, result %s", rc,
            memcmp(y, z, sizeof y) ? "wrong" : "right");
  ctx->checks++;
  batch(ctx, E, PH_NODE, 7, 6, 0, M_WAITALL);
  if (E->rank == 0) printf("request free     %5.2f s\n", tl_now() - t0);
}

/* Node-aware collc_i<coll>_algo (hier; on one node shm too) of every
 * collective before any blocking collective on the communicator, its node
 * layout unknown: served natively, so MPI_SUCCESS and the right result
 * (not an error, not a hang waiting for a set-up). */
static void unset(tl_ctx *ctx, const env *E) {
  job J[2 * K_COUNT];
  int k = 0;
  for (int kind = 0; kind < K_COUNT; kind++)
    for (int s = 0; s <= E->one_node; s++, k++) {
      memset(&J[k], 0, sizeof J[k]);
      J[k].req = MPI_REQUEST_NULL, J[k].seed = 777 + k, J[k].kind = kind, J[k].count = 13;
      J[k].root = k % E->p, J[k].type = T_INT, J[k].op = O_SUM, J[k].algo = s ? "shm" : "hier";
    }
  run_jobs(ctx, E, J, k, M_WAITALL, 99, "unset");
}

/* The communicator (a duplicate of WORLD, errors returned), types, ops. */
static void env_make(tl_ctx *ctx, env *E) {
  int k = tl_env_int("COLLC_NODE_SIZE", 0);
  MPI_Comm_dup(MPI_COMM_WORLD, &E->comm);
  MPI_Comm_set_errhandler(E->comm, MPI_ERRORS_RETURN);
  E->p = ctx->size, E->rank = ctx->rank;
  E->quick = tl_env_int("COLLC_TEST_QUICK", 0);
  E->verbose = tl_env_int("COLLC_TEST_VERBOSE", 0);
  E->one_node = k <= 0 || k >= E->p; /* (tests/run.sh runs it on one machine) */
  E->type[T_INT] = MPI_INT, E->type[T_DOUBLE] = MPI_DOUBLE;
  MPI_Type_contiguous(4, MPI_INT, &E->type[T_MAT]);
  tl_commit(ctx, &E->type[T_MAT], "mat");
  E->op[O_SUM] = MPI_SUM, E->op[O_MAX] = MPI_MAX, E->op[O_BXOR] = MPI_BXOR;
  MPI_Op_create(op_mat, 0, &E->op[O_MAT]);
  MPI_Op_create(op_firstnz, 0, &E->op[O_FIRSTNZ]);
}

/* Free what env_make made. */
static void env_free(env *E) {
  MPI_Type_free(&E->type[T_MAT]);
  MPI_Op_free(&E->op[O_MAT]);
  MPI_Op_free(&E->op[O_FIRSTNZ]);
  MPI_Comm_free(&E->comm);
}

/* Every phase, then the freed requests; exit status 1 if any check failed
 * on any rank. */
int main(int argc, char **argv) {
  tl_ctx ctx;
  env E;
  MPI_Init(&argc, &argv);
  tl_init(&ctx, "mpi_nonblocking");
  double t0 = tl_now();
  env_make(&ctx, &E);
  unset(&ctx, &E);
  for (int ph = 0; ph < PH_COUNT; ph++) phase(&ctx, &E, ph);
  freed(&ctx, &E);
  env_free(&E);
  int status = tl_finish(&ctx, t0);
  MPI_Finalize();
  return status;
}
