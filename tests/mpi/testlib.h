/* testlib.h - shared helpers of the MPI tests (header-only, no collc).
 *
 * Every check compares an all-to-all under test with the native collective
 * PMPI_Alltoall on the same input: the send buffer is filled with values
 * distinct per (rank, destination, element) (holes of derived types too),
 * both receive buffers start as the same sentinel bytes, and the whole
 * buffer extent (holes included) must be equal byte for byte afterwards.
 * In place, the reference runs PMPI_Alltoall(MPI_IN_PLACE) on a copy of the
 * same buffer. A failing rank prints one line per failure; tl_finish
 * reduces the failure count, rank 0 prints the summary, and the program
 * returns its result from main after MPI_Finalize.
 *
 * The same comparison serves MPI_Allgather (same signature and the same
 * in-place convention: both receive buffers start with the same values):
 * tl_check_ref takes the reference collective as a parameter. The helpers'
 * own collectives (tl_finish) call PMPI_* directly, so that they never show
 * in collc's statistics.
 *
 * This header uses only <mpi.h> and the C library, so the "unmodified
 * program" (alltoall_preload.c) can use it as well.
 *
 * Self-test: COLLC_TEST_BREAK=N corrupts one byte of the N-th nonempty
 * result on the last rank; the program must then fail (proof that the
 * comparison can fail).
 */
#ifndef COLLC_TESTLIB_H
#define COLLC_TESTLIB_H

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One test program's context. */
typedef struct {
  const char *prog; /* program name for the summary */
  int rank, size;   /* in MPI_COMM_WORLD */
  int fails;        /* this rank's failures */
  long checks;      /* this rank's comparisons */
  int break_at;     /* COLLC_TEST_BREAK=N: corrupt the N-th nonempty result (self-test) */
  int nonempty;     /* checks with count > 0 so far */
} tl_ctx;

/* True under SimGrid's SMPI (which lacks intercommunicators). */
static inline int tl_is_smpi(void) {
  char v[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  return MPI_Get_library_version(v, &len) == MPI_SUCCESS && strstr(v, "SMPI") != NULL;
}

/* Base element of a datatype case, used to write input values. */
enum { TL_INT = 0, TL_DOUBLE, TL_CHAR };

/* A datatype case: sendcount = count * smul of stype, recvcount =
 * count * rmul of rtype (same signature); elem is what both are made of. */
typedef struct {
  const char *name;
  MPI_Datatype stype, rtype;
  int smul, rmul;
  int elem;
} tl_type;

/* The all-to-all under test: algo is passed through (a label for the
 * interposed MPI_Alltoall). Returns an MPI error code. */
typedef int (*tl_a2a_fn)(const char *algo, const void *sb, int sc, MPI_Datatype st, void *rb,
                         int rc, MPI_Datatype rt, MPI_Comm comm);

/* Sentinel byte of fresh receive buffers (and holes). */
#define TL_SENTINEL 0xA5

/* Set up ctx for program prog after MPI_Init; errors return on WORLD. */
static inline void tl_init(tl_ctx *ctx, const char *prog) {
  memset(ctx, 0, sizeof *ctx);
  ctx->prog = prog;
  MPI_Comm_rank(MPI_COMM_WORLD, &ctx->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ctx->size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const char *b = getenv("COLLC_TEST_BREAK");
  ctx->break_at = b && *b ? atoi(b) : 0;
}

/* Record one failure: prints "FAIL rank R: <message>" on stdout. */
static inline void tl_fail(tl_ctx *ctx, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("FAIL %s rank %d: ", ctx->prog, ctx->rank);
  vprintf(fmt, ap);
  printf("\n");
  fflush(stdout);
  va_end(ap);
  ctx->fails++;
}

/* Integer environment variable name, or def if unset/empty. */
static inline int tl_env_int(const char *name, int def) {
  const char *v = getenv(name);
  return v && *v ? atoi(v) : def;
}

/* Wall-clock seconds (MPI_Wtime). */
static inline double tl_now(void) { return MPI_Wtime(); }

/* Reduce failures over WORLD, rank 0 prints the summary line; returns the
 * exit status (0 pass, 1 fail). Call before MPI_Finalize. */
static inline int tl_finish(tl_ctx *ctx, double t0) {
  int all = 0;
  long checks = 0;
  if (PMPI_Allreduce(&ctx->fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS)
    all = 1;
  PMPI_Reduce(&ctx->checks, &checks, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (ctx->rank == 0)
    printf("%s np=%d: %s (%d failures, %ld checks, %.1f s)\n", ctx->prog, ctx->size,
           all ? "FAIL" : "PASS", all, checks, tl_now() - t0);
  fflush(stdout);
  return all != 0;
}

/* Bytes spanned by n consecutive elements of t, from the buffer start
 * (types here have lb >= 0); at least 1 so malloc never gets 0. */
static inline size_t tl_span(MPI_Datatype t, long n) {
  MPI_Aint lb, ext, tlb, text;
  MPI_Type_get_extent(t, &lb, &ext);
  MPI_Type_get_true_extent(t, &tlb, &text);
  if (n <= 0) return 16;
  long long s = (long long)(n - 1) * ext + tlb + text;
  if (lb + (long long)(n - 1) * ext + ext > s) s = lb + (long long)(n - 1) * ext + ext;
  return (size_t)(s > 0 ? s : 1) + 16; /* slack: bytes past the end must stay untouched */
}

/* Fill bytes of buf with input values made of (rank, seed, position): a
 * position holds one base element, so every (destination, element) has its
 * own value, and ranks and seeds differ in the high bits. */
static inline void tl_fill(void *buf, size_t bytes, int elem, int rank, int seed) {
  unsigned hi = ((unsigned)seed & 0xfu) << 27 | ((unsigned)rank & 0xffu) << 19;
  if (elem == TL_INT) {
    int *v = buf;
    for (size_t i = 0; i < bytes / sizeof *v; i++) v[i] = (int)(hi | (unsigned)(i & 0x7ffff));
  } else if (elem == TL_DOUBLE) {
    double *v = buf;
    for (size_t i = 0; i < bytes / sizeof *v; i++) v[i] = (double)(hi | (unsigned)i) + 0.25;
  }
  unsigned char *c = buf;
  size_t esize = elem == TL_INT ? sizeof(int) : sizeof(double);
  size_t from = elem == TL_CHAR ? 0 : bytes - bytes % esize; /* the tail, or all chars */
  for (size_t i = from; i < bytes; i++)
    c[i] = (unsigned char)(rank * 41 + seed * 13 + (int)i * 7 + 1);
}

/* Where a check runs: the all-to-all under test (fn with algo) on comm,
 * named cname in failure messages. */
typedef struct {
  tl_a2a_fn fn;
  const char *algo;
  MPI_Comm comm;
  const char *cname;
} tl_target;

/* malloc that counts a failure instead of returning NULL silently. */
static inline void *tl_malloc(tl_ctx *ctx, size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) tl_fail(ctx, "out of memory (%zu bytes)", n);
  return p;
}

/* First byte where a and b differ, or -1. */
static inline long tl_first_diff(const void *a, const void *b, size_t n) {
  const unsigned char *x = a, *y = b;
  for (size_t i = 0; i < n; i++)
    if (x[i] != y[i]) return (long)i;
  return -1;
}

/* The buffers of one check; sb/ours/ref point shift bytes into their blocks. */
typedef struct {
  char *smem, *omem, *rmem, *scopy;
  char *sb, *ours, *ref;
  size_t sspan, rspan;
} tl_bufs;

/* Free what tl_bufs_make allocated. */
static inline void tl_bufs_free(tl_bufs *b) {
  free(b->smem), free(b->omem), free(b->rmem), free(b->scopy);
}

/* Allocate and initialise the buffers of a check: input values from
 * (rank, seed) in the send buffer (or, in place, in both receive buffers),
 * sentinel bytes otherwise; shift moves the buffers so that repeated calls
 * see new addresses. Returns 0, or 1 (failure recorded) if out of memory. */
static inline int tl_bufs_make(tl_ctx *ctx, tl_bufs *b, const tl_type *ty, int p, int count,
                               int in_place, int rank, int seed) {
  size_t shift = (size_t)(seed % 4) * 8;
  memset(b, 0, sizeof *b);
  b->sspan = tl_span(ty->stype, (long)p * count * ty->smul);
  b->rspan = tl_span(ty->rtype, (long)p * count * ty->rmul);
  b->smem = tl_malloc(ctx, b->sspan + shift);
  b->scopy = tl_malloc(ctx, b->sspan);
  b->omem = tl_malloc(ctx, b->rspan + shift);
  b->rmem = tl_malloc(ctx, b->rspan + shift);
  if (!b->smem || !b->scopy || !b->omem || !b->rmem) {
    tl_bufs_free(b);
    return 1;
  }
  b->sb = b->smem + shift, b->ours = b->omem + shift, b->ref = b->rmem + shift;
  tl_fill(b->sb, b->sspan, ty->elem, rank, seed);
  memcpy(b->scopy, b->sb, b->sspan);
  if (in_place) tl_fill(b->ours, b->rspan, ty->elem, rank, seed);
  else memset(b->ours, TL_SENTINEL, b->rspan);
  memcpy(b->ref, b->ours, b->rspan);
  return 0;
}

/* Compare ours with the reference (computed by refname) after a check;
 * records failures. */
static inline void tl_compare_ref(tl_ctx *ctx, const tl_target *t, const tl_type *ty, int count,
                                  int in_place, const tl_bufs *b, const char *refname) {
  long at = tl_first_diff(b->ours, b->ref, b->rspan);
  MPI_Aint lb, ext;
  MPI_Type_get_extent(ty->rtype, &lb, &ext);
  long block = (long)count * ty->rmul * (long)ext;
  if (at >= 0)
    tl_fail(ctx, "%s on %s count %d type %s in-place %d: result differs from %s "
            "at byte %ld of %zu (block %ld, byte %ld in it): got 0x%02x want 0x%02x",
            t->algo, t->cname, count, ty->name, in_place, refname, at, b->rspan,
            block ? at / block : -1L, block ? at % block : at,
            (unsigned char)b->ours[at], (unsigned char)b->ref[at]);
  if (!in_place && tl_first_diff(b->sb, b->scopy, b->sspan) >= 0)
    tl_fail(ctx, "%s on %s count %d type %s: send buffer modified", t->algo, t->cname, count,
            ty->name);
  if (!in_place && count > 0 && b->rspan > 16) {
    size_t i = 0;
    while (i < b->rspan && (unsigned char)b->ref[i] == TL_SENTINEL) i++;
    if (i == b->rspan)
      tl_fail(ctx, "test broken: reference wrote nothing (%s count %d type %s)", t->algo,
              count, ty->name);
  }
}

/* Compare ours with PMPI_Alltoall's result after a check. */
static inline void tl_compare(tl_ctx *ctx, const tl_target *t, const tl_type *ty, int count,
                              int in_place, const tl_bufs *b) {
  tl_compare_ref(ctx, t, ty, count, in_place, b, "PMPI_Alltoall");
}

/* A reference collective with the all-to-all signature (PMPI_Alltoall,
 * PMPI_Allgather). */
typedef int (*tl_ref_fn)(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                         MPI_Datatype rt, MPI_Comm comm);

/* One check: t's collective (all-to-all signature) of count blocks of type
 * case ty (in place or not, input seeded by seed) against the reference
 * collective ref (named refname) on the same input. Collective over
 * t->comm (an intercommunicator too, not in place). Returns 1 if it
 * failed, else 0. */
static inline int tl_check_ref(tl_ctx *ctx, const tl_target *t, const tl_type *ty, int count,
                               int in_place, int seed, tl_ref_fn ref, const char *refname) {
  int p, r, before = ctx->fails, err, sc = count * ty->smul, rc = count * ty->rmul;
  int inter = 0;
  tl_bufs b;
  MPI_Comm_test_inter(t->comm, &inter);
  if (inter) MPI_Comm_remote_size(t->comm, &p); /* blocks go to the remote group */
  else MPI_Comm_size(t->comm, &p);
  MPI_Comm_rank(t->comm, &r);
  if (tl_bufs_make(ctx, &b, ty, p, count, in_place, r, seed)) return 1;
  const void *in = in_place ? MPI_IN_PLACE : (const void *)b.sb;
  err = t->fn(t->algo, in, sc, ty->stype, b.ours, rc, ty->rtype, t->comm);
  if (err != MPI_SUCCESS) {
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(err, msg, &len);
    tl_fail(ctx, "%s on %s count %d type %s in-place %d: returned %d (%s)", t->algo, t->cname,
            count, ty->name, in_place, err, msg);
  }
  if (in_place) err = ref(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b.ref, rc, ty->rtype, t->comm);
  else err = ref(b.sb, sc, ty->stype, b.ref, rc, ty->rtype, t->comm);
  if (err != MPI_SUCCESS)
    tl_fail(ctx, "reference %s failed (%d): count %d type %s in-place %d", refname, err, count,
            ty->name, in_place);
  if (count > 0 && ++ctx->nonempty == ctx->break_at && ctx->rank == ctx->size - 1)
    b.ours[0] ^= 0x5a; /* self-test: this check must now fail */
  tl_compare_ref(ctx, t, ty, count, in_place, &b, refname);
  tl_bufs_free(&b);
  ctx->checks++;
  return ctx->fails != before;
}

/* One check of t's all-to-all against PMPI_Alltoall (see tl_check_ref). */
static inline int tl_check(tl_ctx *ctx, const tl_target *t, const tl_type *ty, int count,
                           int in_place, int seed) {
  return tl_check_ref(ctx, t, ty, count, in_place, seed, PMPI_Alltoall, "PMPI_Alltoall");
}

/* Commit *t; record a failure if MPI refuses. */
static inline void tl_commit(tl_ctx *ctx, MPI_Datatype *t, const char *what) {
  if (MPI_Type_commit(t) != MPI_SUCCESS) tl_fail(ctx, "cannot commit type %s", what);
}

#define TL_MAX_TYPES 12
#define TL_MADE 5

/* The datatype cases of the tests and the derived types made for them. */
typedef struct {
  tl_type t[TL_MAX_TYPES];
  int inplace[TL_MAX_TYPES]; /* the case's receive type is worth an in-place check */
  int n;
  MPI_Datatype made[TL_MADE];
} tl_typeset;

/* The derived types of the cases, committed, into made[]: contig3,
 * vector(2,1,3) (holes inside), it resized to 5 ints (trailing hole) and to
 * 2 ints (interleaved), and 2 ints at byte 4 resized to [0, 16) (true lb 4,
 * leading and trailing holes). */
static inline void tl_types_make(tl_ctx *ctx, MPI_Datatype made[TL_MADE]) {
  static const char *const names[TL_MADE] = {"contig3", "vec", "rvec", "ivec", "shifted"};
  MPI_Datatype vec0, sh0;
  int two = 2;
  MPI_Aint four = 4;
  MPI_Type_contiguous(3, MPI_INT, &made[0]);
  MPI_Type_vector(2, 1, 3, MPI_INT, &made[1]);
  MPI_Type_vector(2, 1, 3, MPI_INT, &vec0);
  MPI_Type_create_resized(vec0, 0, 5 * (MPI_Aint)sizeof(int), &made[2]);
  MPI_Type_create_resized(vec0, 0, 2 * (MPI_Aint)sizeof(int), &made[3]);
  MPI_Type_create_hindexed(1, &two, &four, MPI_INT, &sh0);
  MPI_Type_create_resized(sh0, 0, 16, &made[4]);
  MPI_Type_free(&vec0);
  MPI_Type_free(&sh0);
  for (int i = 0; i < TL_MADE; i++) tl_commit(ctx, &made[i], names[i]);
}

/* Fill S with the datatype cases: predefined int/double/char; a send type
 * other than the receive type with the same signature (contig3 vs int);
 * derived types with holes (see tl_types_make) on the receive side, the
 * send side or both; and, last, a receive type that differs between ranks. */
static inline void tl_types_create(tl_ctx *ctx, tl_typeset *S) {
  MPI_Datatype *m = S->made;
  tl_types_make(ctx, m);
  const tl_type all[] = {
      {"int", MPI_INT, MPI_INT, 1, 1, TL_INT},
      {"double", MPI_DOUBLE, MPI_DOUBLE, 1, 1, TL_DOUBLE},
      {"char", MPI_CHAR, MPI_CHAR, 1, 1, TL_CHAR},
      {"2xcontig3>6xint", m[0], MPI_INT, 2, 6, TL_INT},
      {"2xint>vec", MPI_INT, m[1], 2, 1, TL_INT},
      {"vec>2xint", m[1], MPI_INT, 1, 2, TL_INT},
      {"rvec", m[2], m[2], 1, 1, TL_INT},
      {"2xint>ivec", MPI_INT, m[3], 2, 1, TL_INT},
      {"rvec>shifted", m[2], m[4], 1, 1, TL_INT},
      /* ranks type the same data differently: odd ranks receive rvec */
      {"2xint>2xint|rvec", MPI_INT, ctx->rank % 2 ? m[2] : MPI_INT, 2, ctx->rank % 2 ? 1 : 2,
       TL_INT},
  };
  const int ip[] = {1, 1, 1, 0, 1, 0, 1, 1, 1, 1};
  S->n = (int)(sizeof all / sizeof all[0]);
  for (int i = 0; i < S->n; i++) S->t[i] = all[i], S->inplace[i] = ip[i];
}

/* The case of S called name (the first case if there is none). */
static inline const tl_type *tl_find(const tl_typeset *S, const char *name) {
  for (int i = 0; i < S->n; i++)
    if (!strcmp(S->t[i].name, name)) return &S->t[i];
  return &S->t[0];
}

/* Keep only the cases of S named in keep[0..n-1] (indices, ascending):
 * a smaller matrix for slow runs. */
static inline void tl_types_subset(tl_typeset *S, const int *keep, int n) {
  for (int i = 0; i < n; i++) S->t[i] = S->t[keep[i]], S->inplace[i] = S->inplace[keep[i]];
  S->n = n;
}

/* Free the derived types of S. */
static inline void tl_types_free(tl_typeset *S) {
  for (int i = 0; i < TL_MADE; i++) MPI_Type_free(&S->made[i]);
  S->n = 0;
}

#endif
