/* persistent.c - MPI-4 persistent collectives (collc's MPI_<Coll>_init)
 * against the native blocking collective (PMPI_*) on the same input.
 *
 * For every collective, algorithm (info key collc_algorithm), datatype
 * (MPI_INT with MPI_SUM, a contiguous derived pair type with a
 * non-commutative user operation, freed right after init), count (0, 1, 5,
 * 300) and in-place variant: one request, started three times with new
 * input each time, completed by a different call each time (Wait, a Test
 * loop, Waitall with a native request), compared byte for byte with the
 * PMPI result. Then the request semantics: mixed lists (native nonblocking
 * and persistent point-to-point requests with ours, and two of ours on one
 * communicator at once) through Startall and each completion call, status
 * fields, Request_free after wait and while running, Request_get_status,
 * a blocking collective while ours run, and errors.
 *
 * COLLC_TEST_QUICK=1: fewer algorithms and counts (for MPICH).
 * COLLC_TEST_HIER=1: the node-aware plans (hier) instead (with COLLC_NODE_SIZE).
 * COLLC_TEST_INFO=<algo>: only one allreduce request with that info value,
 * started 3 times (run.sh checks the collc-stats line it produces).
 * COLLC_TEST_BREAK=N corrupts the N-th nonempty result (self-test).
 */
#include "collc.h"
#include "mpi/pinit.h"
#include "testlib.h"

enum { C_ALLREDUCE, C_RSB, C_ALLGATHER, C_REDUCE, C_BCAST, C_ALLTOALL, C_COUNT };
static const char *cname[C_COUNT] = {"allreduce", "reduce_scatter_block", "allgather",
                                     "reduce", "bcast", "alltoall"};
/* Algorithms per collective ("" = no info key: the default rule). */
static const char *algos[C_COUNT][5] = {
    {"", "native", "recexch", "tree", "cyclic"},
    {"", "native", "recexch", "cyclic", NULL},
    {"", "native", "recexch", "cyclic", NULL},
    {"", "native", "tree", "tree:2", NULL},
    {"", "native", "tree", "tree:3", NULL},
    {"", "native", "pairwise", "bruck:3", "torus:d=2"}};
static const char *hier_algos[C_COUNT][5] = {
    {"hier", "hier:node=tree", "hier:net=tree", NULL}, {"hier", NULL}, {"hier", NULL},
    {"hier", "hier:net=tree:3", NULL}, {"hier", NULL}, {"hier", NULL}};

static tl_ctx ctx;
static MPI_Op affine_op;
/* COLLC_DISABLE=1: the MPI library's own persistent collectives, whose
 * statuses are not empty (Open MPI: source MPI_PROC_NULL). */
static int native_mode;

/* (a, b) pairs as maps x -> a x + b (mod 2^32); op: inout = inout o in,
 * i.e. apply in first. Associative, not commutative. */
static void affine(void *in, void *inout, int *len, MPI_Datatype *t) {
  unsigned *x = in, *y = inout;
  (void)t;
  for (int i = 0; i < *len; i++, x += 2, y += 2) {
    unsigned a = y[0] * x[0], b = y[0] * x[1] + y[1];
    y[0] = a, y[1] = b;
  }
}

/* One call's geometry: elements in the send and receive buffers. */
typedef struct {
  int c, n, root, in_place;
  MPI_Datatype t;
  MPI_Op op;
} call;

/* Elements of the send buffer (sn), the receive buffer (rn) and of the
 * result (out); the receive buffer also holds in-place input. */
static void sizes(const call *k, long *sn, long *rn, long *out) {
  int p = ctx.size;
  long n = k->n;
  switch (k->c) {
  case C_RSB: *sn = *rn = n * p, *out = n; break;
  case C_ALLGATHER: *sn = n, *rn = *out = n * p; break;
  case C_ALLTOALL: *sn = *rn = *out = n * p; break;
  default: *sn = *rn = *out = n;
  }
}

/* The native blocking collective (PMPI) of call k. */
static int reference(const call *k, const void *sb, void *rb) {
  MPI_Comm w = MPI_COMM_WORLD;
  const void *s = k->in_place ? MPI_IN_PLACE : sb;
  switch (k->c) {
  case C_ALLREDUCE: return PMPI_Allreduce(s, rb, k->n, k->t, k->op, w);
  case C_RSB: return PMPI_Reduce_scatter_block(s, rb, k->n, k->t, k->op, w);
  case C_ALLGATHER: return PMPI_Allgather(s, k->n, k->t, rb, k->n, k->t, w);
  case C_REDUCE:
    return PMPI_Reduce(k->in_place && ctx.rank != k->root ? sb : s, rb, k->n, k->t, k->op,
                       k->root, w);
  case C_BCAST: return PMPI_Bcast(rb, k->n, k->t, k->root, w);
  default: return PMPI_Alltoall(s, k->n, k->t, rb, k->n, k->t, w);
  }
}

/* collc's persistent init of call k on comm with info. */
static int init(const call *k, const void *sb, void *rb, MPI_Comm comm, MPI_Info info,
                MPI_Request *r) {
  const void *s = k->in_place ? MPI_IN_PLACE : sb;
  switch (k->c) {
  case C_ALLREDUCE: return MPI_Allreduce_init(s, rb, k->n, k->t, k->op, comm, info, r);
  case C_RSB: return MPI_Reduce_scatter_block_init(s, rb, k->n, k->t, k->op, comm, info, r);
  case C_ALLGATHER: return MPI_Allgather_init(s, k->n, k->t, rb, k->n, k->t, comm, info, r);
  case C_REDUCE:
    return MPI_Reduce_init(k->in_place && ctx.rank != k->root ? sb : s, rb, k->n, k->t, k->op,
                           k->root, comm, info, r);
  case C_BCAST: return MPI_Bcast_init(rb, k->n, k->t, k->root, comm, info, r);
  default: return MPI_Alltoall_init(s, k->n, k->t, rb, k->n, k->t, comm, info, r);
  }
}

/* Input of call k for start `seed` into send and receive buffers (in place
 * and bcast read the receive buffer). */
static void fill(const call *k, void *sb, void *rb, long sn, long rn, int seed) {
  tl_fill(sb, (size_t)sn * 8, TL_INT, ctx.rank, seed);
  tl_fill(rb, (size_t)rn * 8, TL_INT, ctx.rank, seed + 1000);
  if (k->in_place) memcpy(rb, sb, (size_t)sn * 8);
}

/* Complete r by method m (0 Wait, 1 Test loop, 2 Waitall with a native
 * request ring) and check its status is empty. */
static int complete(MPI_Request *r, int m) {
  MPI_Status st;
  int rc, flag = 0;
  st.MPI_SOURCE = st.MPI_TAG = 12345;
  if (m == 0) rc = MPI_Wait(r, &st);
  else if (m == 1) {
    while (!(rc = MPI_Test(r, &flag, &st)) && !flag) continue;
  } else {
    int x = ctx.rank, y = -1, p = ctx.size;
    MPI_Request q[3] = {*r};
    MPI_Status sts[3];
    MPI_Irecv(&y, 1, MPI_INT, (ctx.rank + p - 1) % p, 7, MPI_COMM_WORLD, &q[1]);
    MPI_Isend(&x, 1, MPI_INT, (ctx.rank + 1) % p, 7, MPI_COMM_WORLD, &q[2]);
    rc = MPI_Waitall(3, q, sts);
    st = sts[0];
    if (y != (ctx.rank + p - 1) % p || sts[1].MPI_SOURCE != y || sts[1].MPI_TAG != 7)
      tl_fail(&ctx, "Waitall: native receive got %d from %d", y, sts[1].MPI_SOURCE);
    if (q[0] != *r || q[1] != MPI_REQUEST_NULL) tl_fail(&ctx, "Waitall: request handles");
  }
  if (!rc && !native_mode && (st.MPI_SOURCE != MPI_ANY_SOURCE || st.MPI_TAG != MPI_ANY_TAG))
    tl_fail(&ctx, "status of a collective not empty (source %d tag %d)", st.MPI_SOURCE,
            st.MPI_TAG);
  return rc;
}

/* Compare got with want (bytes), honouring the self-test. */
static void compare(const call *k, const char *algo, void *got, const void *want, size_t bytes,
                    int rep) {
  if (bytes && k->c != C_REDUCE) ctx.nonempty++;
  if (ctx.break_at && ctx.nonempty == ctx.break_at && ctx.rank == ctx.size - 1 && bytes)
    ((char *)got)[0] ^= 1;
  long at = tl_first_diff(got, want, bytes);
  ctx.checks++;
  if (at >= 0)
    tl_fail(&ctx, "%s '%s' n=%d%s %s start %d: byte %ld differs", cname[k->c], algo, k->n,
            k->in_place ? " in place" : "", k->t == MPI_INT ? "int" : "pair", rep, at);
}

/* Known defects of the MPI library's own persistent collectives
 * (COLLC_DISABLE=1), MPICH 4.0.2: the persistent allgather returns the
 * first start's data from the other ranks on every later start, and a
 * persistent collective on a derived datatype fails an assertion on the
 * type's reference count at MPI_Request_free (so: no derived types), and a
 * completed persistent collective stays active for Waitany/Testany/
 * Waitsome/Testsome (so: no mixed lists). */
#ifdef MPICH
static int native_defect(const call *k, int rep) {
  return native_mode && k->c == C_ALLGATHER && rep > 0 && k->n > 0 && ctx.size > 1;
}
#define NATIVE_DERIVED_OK (!native_mode)
#define NATIVE_LISTS_OK (!native_mode)
#else
static int native_defect(const call *k, int rep) { return (void)k, (void)rep, 0; }
#define NATIVE_DERIVED_OK 1
#define NATIVE_LISTS_OK 1
#endif

/* One request of call k with algorithm algo: three starts, three checks. */
static void one(call k, const char *algo, MPI_Datatype pair) {
  long sn, rn, out;
  sizes(&k, &sn, &rn, &out);
  char *sb = tl_malloc(&ctx, (size_t)sn * 8 + 8), *rb = tl_malloc(&ctx, (size_t)rn * 8 + 8);
  char *ref = tl_malloc(&ctx, (size_t)rn * 8 + 8), *rs = tl_malloc(&ctx, (size_t)sn * 8 + 8);
  MPI_Info info = MPI_INFO_NULL;
  MPI_Request r = MPI_REQUEST_NULL;
  MPI_Datatype mine = k.t;
  if (*algo) {
    MPI_Info_create(&info);
    MPI_Info_set(info, "collc_algorithm", algo);
  }
  if (k.t != MPI_INT) MPI_Type_dup(pair, &mine), k.t = mine;
  int rc = init(&k, sb, rb, MPI_COMM_WORLD, info, &r);
  if (k.t != MPI_INT) MPI_Type_free(&mine), k.t = pair; /* the request keeps its own */
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  if (rc) tl_fail(&ctx, "%s '%s' init: error %d", cname[k.c], algo, rc);
  int root_out = k.c != C_REDUCE || ctx.rank == k.root;
  for (int rep = 0; rep < 3 && !rc; rep++) {
    fill(&k, rs, ref, sn, rn, rep);
    fill(&k, sb, rb, sn, rn, rep);
    reference(&k, rs, ref);
    if ((rc = MPI_Start(&r)) || (rc = complete(&r, rep))) {
      tl_fail(&ctx, "%s '%s' start %d: error %d", cname[k.c], algo, rep, rc);
      break;
    }
    if (native_defect(&k, rep)) continue;
    compare(&k, algo, rb, ref, root_out ? (size_t)out * (k.t == MPI_INT ? 4 : 8) : 0, rep);
  }
  if (r != MPI_REQUEST_NULL && MPI_Request_free(&r)) tl_fail(&ctx, "Request_free failed");
  if (r != MPI_REQUEST_NULL) tl_fail(&ctx, "Request_free left the handle");
  free(sb), free(rb), free(ref), free(rs);
}

/* Every collective, algorithm, type, count, in-place variant. */
static void sweep(MPI_Datatype pair) {
  static const int counts[] = {0, 1, 5, 300};
  int quick = tl_env_int("COLLC_TEST_QUICK", 0); /* 3 algorithms, no count 1 */
  const char *(*A)[5] = tl_env_int("COLLC_TEST_HIER", 0) ? hier_algos : algos;
  for (int c = 0; c < C_COUNT; c++)
    for (int a = 0; a < (quick ? 3 : 5) && A[c][a]; a++)
      for (int ty = 0; ty < 1 + NATIVE_DERIVED_OK; ty++)
        for (int ci = quick; ci < 4; ci++)
          for (int ip = 0; ip < 2; ip++) {
            if (ip && c == C_BCAST) continue;
            call k = {c, ty ? counts[ci] / 2 : counts[ci], (c + ci) % ctx.size, ip,
                      ty ? pair : MPI_INT, ty ? affine_op : MPI_SUM};
            if (ty && (c == C_ALLGATHER || c == C_ALLTOALL || c == C_BCAST)) k.op = MPI_OP_NULL;
            one(k, A[c][a], pair);
          }
}


/* Complete all n requests of q by method m (0 Waitall, 1 Waitany, 2
 * Waitsome, 3 Testall, 4 Testany, 5 Testsome, 6 Wait each, last first);
 * st[i] gets request i's status. Checks each completes exactly once and
 * that the any/some calls then report MPI_UNDEFINED. */
static void drain(int m, int n, MPI_Request q[], MPI_Status st[]) {
  int idx[16], seen[16] = {0}, got = 0, out, flag = 0, i;
  MPI_Status tmp[16];
  if (m == 0) MPI_Waitall(n, q, st), got = n;
  while (m == 3 && !flag) MPI_Testall(n, q, &flag, st), got = n;
  for (i = n - 1; m == 6 && i >= 0; i--) MPI_Wait(&q[i], &st[i]), got++;
  while ((m == 1 || m == 4) && got < n) {
    if (m == 1) MPI_Waitany(n, q, &i, &tmp[0]), flag = 1;
    else MPI_Testany(n, q, &i, &flag, &tmp[0]);
    if (!flag) continue;
    if (i == MPI_UNDEFINED || seen[i]++) break;
    st[i] = tmp[0], got++;
  }
  while ((m == 2 || m == 5) && got < n) {
    if (m == 2) MPI_Waitsome(n, q, &out, idx, tmp);
    else MPI_Testsome(n, q, &out, idx, tmp);
    if (out == MPI_UNDEFINED) break;
    for (int j = 0; j < out; j++)
      if (!seen[idx[j]]++) st[idx[j]] = tmp[j], got++;
      else got = n + 1;
  }
  if (got != n) tl_fail(&ctx, "method %d: %d of %d requests completed once", m, got, n);
  if (m == 1 || m == 4) {
    MPI_Testany(n, q, &i, &flag, &tmp[0]);
    if (!flag || i != MPI_UNDEFINED) tl_fail(&ctx, "method %d: Testany after all: %d", m, i);
  }
  if (m == 2 || m == 5) {
    MPI_Testsome(n, q, &out, idx, tmp);
    if (out != MPI_UNDEFINED) tl_fail(&ctx, "method %d: Testsome after all: %d", m, out);
  }
}

/* Three of ours (two alike on WORLD, one on a duplicate), two native
 * persistent and two native nonblocking point-to-point requests, started
 * with one Startall, completed by each method. */
static void mixed_lists(void) {
  enum { N = 50 };
  int p = ctx.size, left = (ctx.rank + p - 1) % p, right = (ctx.rank + 1) % p;
  int *a = malloc(sizeof(int) * (6 * N + 3 * N * p)), x, y, z, w;
  int *ain = a, *aout = a + N, *bin = a + 2 * N, *bout = a + 3 * N, *ref = a + 4 * N;
  int *cin = a + 6 * N, *cout = cin + N * p, *cref = cout + N * p;
  MPI_Comm dup;
  MPI_Info info;
  MPI_Request q[7];
  MPI_Status st[7];
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Info_create(&info);
  MPI_Info_set(info, "collc_algorithm", "recexch");
  MPI_Allreduce_init(ain, aout, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, info, &q[0]);
  MPI_Allreduce_init(bin, bout, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, info, &q[1]);
  MPI_Info_set(info, "collc_algorithm", "pairwise");
  MPI_Alltoall_init(cin, N, MPI_INT, cout, N, MPI_INT, dup, info, &q[2]);
  MPI_Info_free(&info);
  MPI_Send_init(&x, 1, MPI_INT, right, 9, MPI_COMM_WORLD, &q[3]);
  MPI_Recv_init(&y, 1, MPI_INT, left, 9, MPI_COMM_WORLD, &q[4]);
  for (int m = 0; m < 7; m++) {
    for (int i = 0; i < N; i++) ain[i] = ctx.rank * 3 + i + m, bin[i] = ctx.rank - i * m;
    for (int i = 0; i < N * p; i++) cin[i] = ctx.rank * 100000 + i * 7 + m;
    PMPI_Allreduce(ain, ref, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    PMPI_Allreduce(bin, ref + N, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    PMPI_Alltoall(cin, N, MPI_INT, cref, N, MPI_INT, MPI_COMM_WORLD);
    x = ctx.rank * 10 + m, y = z = -1, w = ctx.rank + m;
    MPI_Startall(5, q);
    MPI_Irecv(&z, 1, MPI_INT, left, 10, MPI_COMM_WORLD, &q[5]);
    MPI_Isend(&w, 1, MPI_INT, right, 10, MPI_COMM_WORLD, &q[6]);
    drain(m, 7, q, st);
    if (memcmp(aout, ref, N * sizeof *ref) || memcmp(bout, ref + N, N * sizeof *ref) ||
        memcmp(cout, cref, N * p * sizeof *ref))
      tl_fail(&ctx, "mixed method %d: collective results differ", m);
    if (y != left * 10 + m || z != left + m || st[4].MPI_SOURCE != left || st[4].MPI_TAG != 9 ||
        st[5].MPI_SOURCE != left || st[5].MPI_TAG != 10)
      tl_fail(&ctx, "mixed method %d: point-to-point results or statuses wrong", m);
    for (int i = 0; i < 3 && !native_mode; i++)
      if (st[i].MPI_SOURCE != MPI_ANY_SOURCE || st[i].MPI_TAG != MPI_ANY_TAG)
        tl_fail(&ctx, "mixed method %d: status %d of a collective not empty", m, i);
    if (q[5] != MPI_REQUEST_NULL || q[0] == MPI_REQUEST_NULL || q[3] == MPI_REQUEST_NULL)
      tl_fail(&ctx, "mixed method %d: handles after completion", m);
    ctx.checks++;
  }
  for (int i = 0; i < 5; i++) MPI_Request_free(&q[i]);
  MPI_Comm_free(&dup);
  free(a);
}

/* Start an allreduce of n ints (in: rank + i + seed) on r; ref gets the
 * native result. */
static void start_sum(MPI_Request *r, int *in, int *ref, int n, int seed) {
  for (int i = 0; i < n; i++) in[i] = ctx.rank + i + seed;
  PMPI_Allreduce(in, ref, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Start(r);
}

/* The MPI library's own persistent allgather of 80 KB after collc's
 * requests came and went: MPICH 4.0.2 hangs here if a freed inactive
 * persistent receive's object is reused (collc keeps its handles). */
static void native_after_ours(void) {
#ifdef PINIT
  enum { N = 10000 };
  double *in = calloc(N, sizeof *in), *out = calloc((size_t)N * ctx.size, sizeof *out);
  MPI_Request r;
  for (int i = 0; i < N; i++) in[i] = ctx.rank + i;
  PINIT(Allgather)(in, N, MPI_DOUBLE, out, N, MPI_DOUBLE, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
  MPI_Start(&r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  for (int j = 0; j < ctx.size; j++)
    if (out[(size_t)j * N + 5] != j + 5) tl_fail(&ctx, "native persistent allgather after ours");
  MPI_Request_free(&r);
  free(in), free(out);
  ctx.checks++;
#endif
}

/* Request_free while running and after wait, Request_get_status, a
 * blocking collective while ours run, and bad arguments. */
static void semantics(void) {
  enum { N = 40 };
  int in[N] = {0}, out[N], ref[N], in2[N] = {0}, out2[N], ref2[N], flag = 0, rc;
  MPI_Request r, s;
  MPI_Allreduce_init(in, out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
  MPI_Allreduce_init(in2, out2, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &s);
  start_sum(&r, in, ref, N, 1); /* get_status until complete, then Wait */
  while (!flag) MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  if (memcmp(out, ref, sizeof out)) tl_fail(&ctx, "after Request_get_status: result differs");
  start_sum(&r, in, ref, N, 2); /* a blocking allreduce while r runs */
  MPI_Allreduce(in, out2, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  if (memcmp(out, ref, sizeof out) || memcmp(out2, ref, sizeof out))
    tl_fail(&ctx, "blocking allreduce while one runs: results differ");
  start_sum(&r, in, ref, N, 3); /* a second start of a running request */
  if (!native_mode && (rc = MPI_Start(&r)) != MPI_ERR_REQUEST) /* Open MPI: 0, then hangs */
    tl_fail(&ctx, "Start while active: %d", rc);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  if (native_mode) return; /* Open MPI 4.1 refuses freeing an active one; NULL crashes it */
  /* Rank 0 frees r running; s must still work. The reference for s is
   * computed first: r moves on only inside collc's calls (README,
   * "Progress"), so rank 0 must not block in a native call r waits for. */
  for (int i = 0; i < N; i++) in2[i] = ctx.rank + i + 5;
  PMPI_Allreduce(in2, ref2, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  start_sum(&r, in, ref, N, 4);
  if (ctx.rank == 0) MPI_Request_free(&r);
  else MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_Request_free(&r);
  MPI_Start(&s);
  MPI_Wait(&s, MPI_STATUS_IGNORE);
  if (memcmp(out2, ref2, sizeof out2) || r != MPI_REQUEST_NULL)
    tl_fail(&ctx, "after Request_free of a running request: s differs");
  MPI_Request_free(&s);
  if ((rc = MPI_Allreduce_init(in, out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                               NULL)) != MPI_ERR_ARG)
    tl_fail(&ctx, "init with request NULL: %d", rc);
  if ((rc = MPI_Bcast_init(in, -1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r)) !=
      MPI_ERR_COUNT)
    tl_fail(&ctx, "init with count -1: %d", rc);
  if (r != MPI_REQUEST_NULL) tl_fail(&ctx, "failed init left a request");
  ctx.checks += 6;
}

int main(int argc, char **argv) {
  MPI_Datatype pair;
  MPI_Init(&argc, &argv);
  tl_init(&ctx, "persistent");
  native_mode = tl_env_int("COLLC_DISABLE", 0);
  double t0 = tl_now();
  MPI_Op_create(affine, 0, &affine_op);
  MPI_Type_contiguous(2, MPI_UNSIGNED, &pair);
  MPI_Type_commit(&pair);
  const char *only = getenv("COLLC_TEST_INFO");
  if (only && *only) {
    call k = {C_ALLREDUCE, 100, 0, 0, MPI_INT, MPI_SUM};
    one(k, only, pair);
  } else {
    sweep(pair);
    if (NATIVE_LISTS_OK) mixed_lists();
    semantics();
    native_after_ours();
  }
  MPI_Type_free(&pair);
  MPI_Op_free(&affine_op);
  int rc = tl_finish(&ctx, t0);
  MPI_Finalize();
  return rc;
}
