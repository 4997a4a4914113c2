/* factorize.c - collc_comm_factorize and collc_alltoall_torus over MPI.
 *
 * For d = 1..4 with dims from collc_dims_create(p, d) (and, for d >= 2, the
 * dims reversed and a layout with a 1 in front): the result is a periodic
 * Cartesian communicator of dimension d with exactly those dims, congruent
 * with the input, not reordered (coordinates are the row-major digits of
 * the rank, last dimension fastest); collc_alltoall_torus on it (and
 * collc_alltoall_algo with the same torus, and MPI_Alltoall) equals
 * PMPI_Alltoall for several counts, datatypes and in place; freeing it
 * works. collc_alltoall_torus on communicators that were not factorised
 * (MPI_COMM_WORLD, a duplicate) is right too, and so is a factorisation of
 * a communicator whose rank order differs from MPI_COMM_WORLD's.
 *
 * Then a leak loop: COLLC_TEST_LOOPS (default 50) times create, use and
 * free a factorised communicator. Leaked communicators exhaust MPICH's
 * context ids after about 2000, so a long MPICH run of this loop (and
 * valgrind, tests/valgrind_leaks.sh) shows leaks.
 */
#include "collc.h"
#include "testlib.h"

/* collc_alltoall_torus as a tl_a2a_fn. */
static int via_torus(const char *algo, const void *sb, int sc, MPI_Datatype st, void *rb,
                     int rc, MPI_Datatype rt, MPI_Comm comm) {
  (void)algo;
  return collc_alltoall_torus(sb, sc, st, rb, rc, rt, comm);
}

/* collc_alltoall_algo as a tl_a2a_fn. */
static int via_algo(const char *algo, const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                    MPI_Datatype rt, MPI_Comm comm) {
  return collc_alltoall_algo(algo, sb, sc, st, rb, rc, rt, comm);
}

/* The intercepted MPI_Alltoall as a tl_a2a_fn. */
static int via_mpi(const char *algo, const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                   MPI_Datatype rt, MPI_Comm comm) {
  (void)algo;
  return MPI_Alltoall(sb, sc, st, rb, rc, rt, comm);
}

/* "AxBxC" of dims[0..d-1] into buf. */
static const char *dims_text(const int *dims, int d, char *buf, size_t len) {
  size_t at = 0;
  buf[0] = 0;
  for (int i = 0; i < d && at < len; i++)
    at += (size_t)snprintf(buf + at, len - at, "%s%d", i ? "x" : "", dims[i]);
  return buf;
}

/* Check that fc is the Cartesian communicator collc_comm_factorize must
 * make from comm with dims[0..d-1]: topology, dims, periods, coordinates
 * (row-major digits of the unchanged rank) and congruence. */
static void check_topology(tl_ctx *ctx, MPI_Comm comm, MPI_Comm fc, int d, const int *dims,
                           const char *what) {
  int topo = MPI_UNDEFINED, nd = -1, cmp = MPI_UNEQUAL, rank, frank;
  int got[8] = {0}, per[8] = {0}, co[8] = {0};
  MPI_Topo_test(fc, &topo);
  MPI_Cartdim_get(fc, &nd);
  if (topo != MPI_CART || nd != d) {
    tl_fail(ctx, "%s: topology %d (want MPI_CART %d), %d dims (want %d)", what, topo, MPI_CART,
            nd, d);
    return;
  }
  MPI_Cart_get(fc, d, got, per, co);
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_rank(fc, &frank);
  if (frank != rank) tl_fail(ctx, "%s: rank %d became %d (reordered)", what, rank, frank);
  for (int i = d - 1, r = rank; i >= 0; r /= dims[i], i--) {
    if (got[i] != dims[i]) tl_fail(ctx, "%s: dim %d is %d, want %d", what, i, got[i], dims[i]);
    if (!per[i]) tl_fail(ctx, "%s: dim %d not periodic", what, i);
    if (co[i] != r % dims[i])
      tl_fail(ctx, "%s: coordinate %d of rank %d is %d, want %d", what, i, rank, co[i],
              r % dims[i]);
  }
  MPI_Comm_compare(comm, fc, &cmp);
  if (cmp != MPI_CONGRUENT) tl_fail(ctx, "%s: MPI_Comm_compare %d, want MPI_CONGRUENT", what, cmp);
}

/* All-to-alls on the factorised fc (dims text dt): collc_alltoall_torus for
 * every type case with count 3, in place and not, and for counts 0, 1, 17
 * with int, a vector receive type and a resized vector; the same torus
 * through collc_alltoall_algo (linear and native components) and
 * MPI_Alltoall for a few. */
static void use_factorised(tl_ctx *ctx, const tl_typeset *S, MPI_Comm fc, const char *dt) {
  static const int counts[] = {0, 1, 17};
  static const char *const some[] = {"int", "2xint>vec", "rvec"};
  char name[2][96];
  tl_target t = {via_torus, "collc_alltoall_torus", fc, "factorised comm"};
  for (int i = 0; i < S->n; i++) {
    tl_check(ctx, &t, &S->t[i], 3, 0, i);
    if (S->inplace[i]) tl_check(ctx, &t, &S->t[i], 3, 1, i + 1);
  }
  for (int c = 0; c < 3; c++)
    for (int i = 0; i < 3; i++) {
      tl_check(ctx, &t, tl_find(S, some[i]), counts[c], 0, c + i);
      tl_check(ctx, &t, tl_find(S, some[i]), counts[c], 1, c + i + 1);
    }
  snprintf(name[0], sizeof name[0], "torus:%s:linear", dt);
  snprintf(name[1], sizeof name[1], "torus:%s:native", dt);
  for (int k = 0; k < 2; k++) {
    tl_target a = {via_algo, name[k], fc, "factorised comm"};
    tl_check(ctx, &a, tl_find(S, "int"), 3, 0, k);
    tl_check(ctx, &a, tl_find(S, "rvec"), 3, 1, k);
  }
  tl_target m = {via_mpi, "MPI_Alltoall", fc, "factorised comm"};
  tl_check(ctx, &m, tl_find(S, "2xint>vec"), 3, 0, 7);
  MPI_Comm dup; /* a duplicate is not factorised (collc's state is not copied) */
  MPI_Comm_dup(fc, &dup);
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  tl_target u = {via_torus, "collc_alltoall_torus", dup, "dup of factorised comm"};
  tl_check(ctx, &u, tl_find(S, "rvec"), 3, 0, 8);
  tl_check(ctx, &u, tl_find(S, "int"), 2, 1, 9);
  MPI_Comm_free(&dup);
}

/* Factorise comm with dims[0..d-1], check it, use it fully if full, free
 * it. Collective over comm. */
static void factorise_one(tl_ctx *ctx, const tl_typeset *S, MPI_Comm comm, int d,
                          const int *dims, int full, const char *cname) {
  char dt[64], what[160];
  MPI_Comm fc = MPI_COMM_NULL;
  dims_text(dims, d, dt, sizeof dt);
  snprintf(what, sizeof what, "collc_comm_factorize(%s, d=%d, %s)", cname, d, dt);
  int rc = collc_comm_factorize(comm, d, dims, &fc);
  if (rc != MPI_SUCCESS || fc == MPI_COMM_NULL) {
    tl_fail(ctx, "%s returned %d", what, rc);
    return;
  }
  MPI_Comm_set_errhandler(fc, MPI_ERRORS_RETURN);
  check_topology(ctx, comm, fc, d, dims, what);
  if (full) {
    use_factorised(ctx, S, fc, dt);
  } else {
    tl_target t = {via_torus, "collc_alltoall_torus", fc, what};
    tl_check(ctx, &t, tl_find(S, "int"), 2, 0, d);
  }
  if (MPI_Comm_free(&fc) != MPI_SUCCESS || fc != MPI_COMM_NULL)
    tl_fail(ctx, "%s: MPI_Comm_free failed", what);
}

/* d = 1..4 with balanced dims, reversed dims, and a leading 1 on comm. */
static void factorise_all(tl_ctx *ctx, const tl_typeset *S, MPI_Comm comm, const char *cname) {
  int p;
  MPI_Comm_size(comm, &p);
  for (int d = 1; d <= 4; d++) {
    int dims[4] = {0, 0, 0, 0}, rev[4], one[4] = {1, 0, 0, 0};
    int rc = collc_dims_create(p, d, dims);
    if (rc != MPI_SUCCESS) {
      tl_fail(ctx, "collc_dims_create(%d, %d) returned %d", p, d, rc);
      continue;
    }
    factorise_one(ctx, S, comm, d, dims, 1, cname);
    if (d < 2) continue;
    for (int i = 0; i < d; i++) rev[i] = dims[d - 1 - i];
    factorise_one(ctx, S, comm, d, rev, 0, cname);
    if (collc_dims_create(p, d, one) == MPI_SUCCESS)
      factorise_one(ctx, S, comm, d, one, 0, cname);
  }
}

/* collc_alltoall_torus on communicators that were not factorised. */
static void not_factorised(tl_ctx *ctx, const tl_typeset *S) {
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  tl_target t[2] = {{via_torus, "collc_alltoall_torus", MPI_COMM_WORLD, "WORLD"},
                    {via_torus, "collc_alltoall_torus", dup, "dup of WORLD"}};
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < S->n; i++) {
      tl_check(ctx, &t[k], &S->t[i], 3, 0, i);
      if (S->inplace[i]) tl_check(ctx, &t[k], &S->t[i], 1, 1, i);
    }
  MPI_Comm_free(&dup);
}

/* Create, use and free a factorised communicator loops times (d cycles
 * through 1..4); a leak shows as a failure to create one eventually. The
 * loop stops (on every rank) at the first failed creation. */
static void leak_loop(tl_ctx *ctx, const tl_typeset *S, int loops) {
  for (int i = 0; i < loops; i++) {
    int d = 1 + i % 4, dims[4] = {0, 0, 0, 0}, bad = 0;
    MPI_Comm fc = MPI_COMM_NULL;
    collc_dims_create(ctx->size, d, dims);
    int rc = collc_comm_factorize(MPI_COMM_WORLD, d, dims, &fc);
    MPI_Allreduce(&rc, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (bad != MPI_SUCCESS) {
      tl_fail(ctx, "leak loop: collc_comm_factorize failed (%d here, %d somewhere) in "
              "iteration %d", rc, bad, i);
      if (fc != MPI_COMM_NULL) MPI_Comm_free(&fc);
      break;
    }
    MPI_Comm_set_errhandler(fc, MPI_ERRORS_RETURN);
    tl_target t = {via_torus, "collc_alltoall_torus", fc, "leak loop comm"};
    tl_check(ctx, &t, tl_find(S, i % 2 ? "int" : "rvec"), 1 + i % 3, i % 5 == 0, i);
    MPI_Comm_free(&fc);
  }
}

/* Factorisations of WORLD and of a reordered communicator, unfactorised
 * communicators, then the leak loop; exit status 1 on any failure. */
int main(int argc, char **argv) {
  tl_ctx ctx;
  tl_typeset S;
  MPI_Comm rev;
  MPI_Init(&argc, &argv);
  tl_init(&ctx, "mpi_factorize");
  double t0 = tl_now();
  int loops = tl_env_int("COLLC_TEST_LOOPS", 50);
  tl_types_create(&ctx, &S);
  factorise_all(&ctx, &S, MPI_COMM_WORLD, "WORLD");
  MPI_Comm_split(MPI_COMM_WORLD, 0, ctx.size - ctx.rank, &rev);
  MPI_Comm_set_errhandler(rev, MPI_ERRORS_RETURN);
  for (int d = 1; d <= 3; d++) {
    int dims[3] = {0, 0, 0};
    collc_dims_create(ctx.size, d, dims);
    factorise_one(&ctx, &S, rev, d, dims, 0, "reversed WORLD");
  }
  MPI_Comm_free(&rev);
  not_factorised(&ctx, &S);
  double t1 = tl_now();
  leak_loop(&ctx, &S, loops);
  if (ctx.rank == 0) printf("leak loop: %d iterations in %.1f s\n", loops, tl_now() - t1);
  tl_types_free(&S);
  int status = tl_finish(&ctx, t0);
  MPI_Finalize();
  return status;
}
