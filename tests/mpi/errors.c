/* errors.c - bad arguments return MPI error classes through the
 * communicator's error handler; nothing is printed, nothing exits.
 *
 * A counting error handler is installed on MPI_COMM_WORLD and on a
 * duplicate; every bad call must return the expected class (MPI_Error_class)
 * AND invoke the handler of the communicator used (MPI_COMM_WORLD's when
 * that is MPI_COMM_NULL) exactly once with that class. Covered: the
 * all-to-all entry points (collc_alltoall_algo, collc_alltoall,
 * collc_alltoall_torus, the intercepted MPI_Alltoall) with negative counts,
 * MPI_DATATYPE_NULL, NULL buffers, MPI_COMM_NULL, recvbuf MPI_IN_PLACE,
 * aliased buffers, mismatched sizes; collc_comm_factorize with bad d, dims,
 * arrays and communicators (an intercommunicator too);
 * collc_alltoall_algo with unknown or malformed algorithms and ones that do
 * not fit p, for count 1 and count 0. stdout and stderr are captured
 * during the bad calls and must stay empty. Afterwards ordinary all-to-alls
 * (MPI_Alltoall included) must still be right and MPI_Finalize succeed.
 *
 * Run with COLLC_ALLTOALL set to something unusable (e.g. torus:7x7) it
 * also checks the fallback: MPI_Alltoall stays right, and if
 * COLLC_TEST_WARNINGS=N is set, rank 0 must have printed exactly N
 * "collc: warning" lines on stderr during those calls (the others none),
 * naming the variable as "COLLC_ALLTOALL=<value>".
 */
#include <sys/stat.h>
#include <unistd.h>
#include "collc.h"
#include "testlib.h"

/* What the counting error handler saw. */
static struct {
  int calls, last_class;
  MPI_Comm last_comm;
} seen;

/* Error handler: counts invocations, remembers the class and communicator;
 * never aborts. */
static void counting_handler(MPI_Comm *comm, int *err, ...) {
  seen.calls++;
  seen.last_comm = *comm;
  if (MPI_Error_class(*err, &seen.last_class) != MPI_SUCCESS) seen.last_class = -1;
}

/* A bad call's outcome: rc must have class want, and the handler of hcomm
 * must have been called once since calls0 with that class. */
static void expect(tl_ctx *ctx, const char *what, int rc, int want, int calls0, MPI_Comm hcomm) {
  int cls = -1;
  if (rc == MPI_SUCCESS || MPI_Error_class(rc, &cls) != MPI_SUCCESS || cls != want) {
    tl_fail(ctx, "%s: returned %d (class %d), want class %d", what, rc, cls, want);
    return;
  }
  if (seen.calls != calls0 + 1)
    tl_fail(ctx, "%s: error handler called %d times, want 1", what, seen.calls - calls0);
  else if (seen.last_class != want || seen.last_comm != hcomm)
    tl_fail(ctx, "%s: handler got class %d on %s, want class %d on the call's communicator",
            what, seen.last_class, seen.last_comm == MPI_COMM_WORLD ? "WORLD" : "another comm",
            want);
}

/* The all-to-all entry points under test. */
enum { EP_ALGO, EP_COLLC, EP_TORUS, EP_MPI, EP_COUNT };
static const char *const ep_name[EP_COUNT] = {
    "collc_alltoall_algo(pairwise)", "collc_alltoall", "collc_alltoall_torus", "MPI_Alltoall"};

/* Call entry point ep. */
static int call_ep(int ep, const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                   MPI_Datatype rt, MPI_Comm comm) {
  switch (ep) {
  case EP_ALGO: return collc_alltoall_algo("pairwise", sb, sc, st, rb, rc, rt, comm);
  case EP_COLLC: return collc_alltoall(sb, sc, st, rb, rc, rt, comm);
  case EP_TORUS: return collc_alltoall_torus(sb, sc, st, rb, rc, rt, comm);
  default: return MPI_Alltoall(sb, sc, st, rb, rc, rt, comm);
  }
}

/* One bad all-to-all argument list. */
typedef struct {
  const char *what;
  int sb, sc; /* sb: 0 buffer, 1 NULL, 2 MPI_IN_PLACE, 3 the receive buffer */
  MPI_Datatype st;
  int rb, rc; /* rb: 0 buffer, 1 NULL, 2 MPI_IN_PLACE */
  MPI_Datatype rt;
  int null_comm;
  int want;
} bad_call;

/* Run every bad all-to-all argument list through every entry point on
 * comm (the handler's communicator; MPI_COMM_NULL calls report on WORLD). */
static void bad_alltoalls(tl_ctx *ctx, MPI_Comm comm, const char *cname) {
  static int sbuf[64], rbuf[64];
  const bad_call bad[] = {
      {"sendcount -1", 0, -1, MPI_INT, 0, 1, MPI_INT, 0, MPI_ERR_COUNT},
      {"recvcount -1", 0, 1, MPI_INT, 0, -1, MPI_INT, 0, MPI_ERR_COUNT},
      {"recvcount -1 in place", 2, 0, MPI_DATATYPE_NULL, 0, -1, MPI_INT, 0, MPI_ERR_COUNT},
      {"sendtype MPI_DATATYPE_NULL", 0, 1, MPI_DATATYPE_NULL, 0, 1, MPI_INT, 0, MPI_ERR_TYPE},
      {"recvtype MPI_DATATYPE_NULL", 0, 1, MPI_INT, 0, 1, MPI_DATATYPE_NULL, 0, MPI_ERR_TYPE},
      {"sendbuf NULL, count 1 MPI_INT", 1, 1, MPI_INT, 0, 1, MPI_INT, 0, MPI_ERR_BUFFER},
      {"recvbuf NULL, count 1 MPI_INT", 0, 1, MPI_INT, 1, 1, MPI_INT, 0, MPI_ERR_BUFFER},
      {"recvbuf NULL in place", 2, 0, MPI_DATATYPE_NULL, 1, 1, MPI_INT, 0, MPI_ERR_BUFFER},
      {"recvbuf MPI_IN_PLACE", 0, 1, MPI_INT, 2, 1, MPI_INT, 0, MPI_ERR_BUFFER},
      {"sendbuf == recvbuf (not MPI_IN_PLACE)", 3, 1, MPI_INT, 0, 1, MPI_INT, 0, MPI_ERR_BUFFER},
      {"send 2 ints, receive 1 (truncation)", 0, 2, MPI_INT, 0, 1, MPI_INT, 0, MPI_ERR_TRUNCATE},
      {"send 1 int, receive 2", 0, 1, MPI_INT, 0, 2, MPI_INT, 0, MPI_ERR_ARG},
      {"send 1 int, receive 1 double", 0, 1, MPI_INT, 0, 1, MPI_DOUBLE, 0, MPI_ERR_ARG},
      {"comm MPI_COMM_NULL", 0, 1, MPI_INT, 0, 1, MPI_INT, 1, MPI_ERR_COMM},
  };
  int n = (int)(sizeof bad / sizeof bad[0]);
  char what[200];
  for (int ep = 0; ep < EP_COUNT; ep++)
    for (int i = 0; i < n; i++) {
      const bad_call *b = &bad[i];
      const void *sb = b->sb == 1 ? NULL : b->sb == 2 ? MPI_IN_PLACE : b->sb == 3 ? rbuf : sbuf;
      void *rb = b->rb == 1 ? NULL : b->rb == 2 ? MPI_IN_PLACE : rbuf;
      MPI_Comm c = b->null_comm ? MPI_COMM_NULL : comm;
      int calls0 = seen.calls;
      snprintf(what, sizeof what, "%s on %s: %s", ep_name[ep], cname, b->what);
      int rc = call_ep(ep, sb, b->sc, b->st, rb, b->rc, b->rt, c);
      expect(ctx, what, rc, b->want, calls0, b->null_comm ? MPI_COMM_WORLD : comm);
    }
}

/* Bad collc_comm_factorize calls on comm (size p). */
static void bad_factorize(tl_ctx *ctx, MPI_Comm comm, const char *cname, int p) {
  const int one[1] = {p}, zero[2] = {p, 0}, neg[2] = {-1, -p}, over[1] = {p + 1},
            two[2] = {p, 2};
  const struct {
    const char *what;
    MPI_Comm comm;
    int d;
    const int *order;
    int null_out, want;
  } bad[] = {
      {"d = 0", comm, 0, one, 0, MPI_ERR_DIMS},
      {"d = -1", comm, -1, one, 0, MPI_ERR_DIMS},
      {"a factor 0", comm, 2, zero, 0, MPI_ERR_DIMS},
      {"negative factors", comm, 2, neg, 0, MPI_ERR_DIMS},
      {"product p + 1", comm, 1, over, 0, MPI_ERR_DIMS},
      {"product 2p", comm, 2, two, 0, MPI_ERR_DIMS},
      {"order NULL", comm, 1, NULL, 0, MPI_ERR_ARG},
      {"factorcomm NULL", comm, 1, one, 1, MPI_ERR_ARG},
      {"comm MPI_COMM_NULL", MPI_COMM_NULL, 1, one, 0, MPI_ERR_COMM},
  };
  char what[200];
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    MPI_Comm fc = MPI_COMM_NULL;
    int calls0 = seen.calls;
    snprintf(what, sizeof what, "collc_comm_factorize on %s: %s", cname, bad[i].what);
    MPI_Comm *out = bad[i].null_out ? NULL : &fc;
    int rc = collc_comm_factorize(bad[i].comm, bad[i].d, bad[i].order, out);
    MPI_Comm hcomm = bad[i].comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm;
    expect(ctx, what, rc, bad[i].want, calls0, hcomm);
    if (fc != MPI_COMM_NULL) {
      tl_fail(ctx, "%s: a communicator was returned", what);
      MPI_Comm_free(&fc);
    }
  }
}

/* collc_comm_factorize on an intercommunicator (two halves of WORLD, with
 * handler eh): MPI_ERR_COMM through its handler. Needs 2 ranks. */
static void bad_intercomm(tl_ctx *ctx, MPI_Errhandler eh) {
  MPI_Comm half, inter;
  const int order[1] = {1};
  if (ctx->size < 2) return;
  int color = ctx->rank < ctx->size / 2;
  MPI_Comm_split(MPI_COMM_WORLD, color, ctx->rank, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color ? ctx->size / 2 : 0, 7, &inter);
  MPI_Comm_set_errhandler(inter, eh);
  MPI_Comm fc = MPI_COMM_NULL;
  int calls0 = seen.calls;
  int rc = collc_comm_factorize(inter, 1, order, &fc);
  expect(ctx, "collc_comm_factorize on an intercommunicator", rc, MPI_ERR_COMM, calls0, inter);
  if (fc != MPI_COMM_NULL) MPI_Comm_free(&fc);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
}

/* Unusable algorithm texts for collc_alltoall_algo on comm (size p), with
 * count 1 and with count 0 (a wrong text is an error whatever the count). */
static void bad_algorithms(tl_ctx *ctx, MPI_Comm comm, const char *cname, int p) {
  char notp[32], mixed[64];
  int sbuf[64] = {0}, rbuf[64];
  snprintf(notp, sizeof notp, "torus:%dx2", p);
  snprintf(mixed, sizeof mixed, "torus:%dx1:native,linear,pairwise", p);
  const char *const bad[] = {"bogus", "", "torus", "torus:", "torus:4y3", "bruck:1", "bruck:x",
                             "torus:2x2:bogus", "torus:d=0", "pairwise:2", "native:1",
                             "torus:7x7", notp, mixed, NULL};
  const int n = (int)(sizeof bad / sizeof bad[0]);
  char what[200];
  for (int count = 1; count >= 0; count--)
    for (int i = 0; i < n; i++) {
      int calls0 = seen.calls;
      snprintf(what, sizeof what, "collc_alltoall_algo(\"%s\") on %s, count %d",
               bad[i] ? bad[i] : "(null)", cname, count);
      if (p == 49 && bad[i] && !strcmp(bad[i], "torus:7x7")) continue; /* fits there */
      int rc = collc_alltoall_algo(bad[i], sbuf, count, MPI_INT, rbuf, count, MPI_INT, comm);
      expect(ctx, what, rc, MPI_ERR_ARG, calls0, comm);
    }
}

/* Redirect fd (1 or 2) to a fresh temporary file; returns the saved fd. */
static int capture_start(int fd, FILE **tmp) {
  fflush(fd == 1 ? stdout : stderr);
  *tmp = tmpfile();
  int saved = dup(fd);
  if (*tmp && saved >= 0) dup2(fileno(*tmp), fd);
  return saved;
}

/* Undo capture_start; returns the captured text (malloc'd, "" if none). */
static char *capture_end(int fd, FILE *tmp, int saved) {
  struct stat st = {0};
  fflush(fd == 1 ? stdout : stderr);
  if (saved >= 0) dup2(saved, fd), close(saved);
  if (!tmp) return calloc(1, 1);
  fstat(fileno(tmp), &st);
  char *text = calloc((size_t)st.st_size + 1, 1);
  rewind(tmp);
  if (text && fread(text, 1, (size_t)st.st_size, tmp) != (size_t)st.st_size) text[0] = 0;
  fclose(tmp);
  return text;
}

/* Lines of text that are not this test's own "FAIL mpi_errors" lines. */
static int foreign_lines(const char *text) {
  int n = 0;
  for (const char *s = text; *s;) {
    const char *nl = strchr(s, '\n');
    n += strncmp(s, "FAIL mpi_errors", 15) != 0;
    s = nl ? nl + 1 : s + strlen(s);
  }
  return n;
}

/* All bad calls with stdout and stderr captured: nothing may be printed
 * (but this test's own failure lines, passed on afterwards). */
static void all_bad_calls(tl_ctx *ctx, MPI_Comm dup, MPI_Errhandler eh) {
  FILE *out, *err;
  int so = capture_start(1, &out), se = capture_start(2, &err);
  bad_alltoalls(ctx, MPI_COMM_WORLD, "WORLD");
  bad_alltoalls(ctx, dup, "dup");
  bad_factorize(ctx, MPI_COMM_WORLD, "WORLD", ctx->size);
  bad_factorize(ctx, dup, "dup", ctx->size);
  bad_intercomm(ctx, eh);
  bad_algorithms(ctx, MPI_COMM_WORLD, "WORLD", ctx->size);
  bad_algorithms(ctx, dup, "dup", ctx->size);
  char *e = capture_end(2, err, se), *o = capture_end(1, out, so);
  fputs(o, stdout);
  fputs(e, stderr);
  if (foreign_lines(o)) tl_fail(ctx, "bad calls printed to stdout (above)");
  if (*e) tl_fail(ctx, "bad calls printed to stderr (above)");
  free(o), free(e);
}

/* Count lines of text containing "collc: warning". */
static int warnings(const char *text) {
  int n = 0;
  for (const char *s = text; (s = strstr(s, "collc: warning")); s++) n++;
  return n;
}

/* Entry point named algo (one of ep_name) as a tl_a2a_fn. */
static int via_ep(const char *algo, const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                  MPI_Datatype rt, MPI_Comm comm) {
  int ep = 0;
  while (ep < EP_COUNT - 1 && strcmp(algo, ep_name[ep])) ep++;
  return call_ep(ep, sb, sc, st, rb, rc, rt, comm);
}

/* After the bad calls: ordinary all-to-alls through every entry point on
 * both communicators, with stderr captured to count collc's warnings
 * (passed on afterwards). */
static void afterwards(tl_ctx *ctx, MPI_Comm dup) {
  tl_typeset S;
  FILE *err;
  int calls0 = seen.calls;
  tl_types_create(ctx, &S);
  int se = capture_start(2, &err);
  for (int ep = 0; ep < EP_COUNT; ep++) {
    tl_target t[2] = {{via_ep, ep_name[ep], MPI_COMM_WORLD, "WORLD"},
                      {via_ep, ep_name[ep], dup, "dup"}};
    for (int k = 0; k < 2; k++)
      for (int i = 0; i < S.n; i++) {
        tl_check(ctx, &t[k], &S.t[i], 1 + i % 3, 0, i);
        if (S.inplace[i]) tl_check(ctx, &t[k], &S.t[i], 2, 1, i);
      }
  }
  char *e = capture_end(2, err, se);
  fputs(e, stderr);
  int want = tl_env_int("COLLC_TEST_WARNINGS", -1);
  if (want >= 0 && warnings(e) != (ctx->rank == 0 ? want : 0))
    tl_fail(ctx, "%d collc warnings on stderr, want %d", warnings(e), ctx->rank == 0 ? want : 0);
  const char *env = getenv("COLLC_ALLTOALL");
  char name[160];
  snprintf(name, sizeof name, "COLLC_ALLTOALL=%s", env ? env : "");
  if (want > 0 && ctx->rank == 0 && env && !strstr(e, name))
    tl_fail(ctx, "the warning does not name the variable as %s", name);
  if (seen.calls != calls0)
    tl_fail(ctx, "error handler called %d times by correct calls", seen.calls - calls0);
  free(e);
  tl_types_free(&S);
}

/* Bad calls, then good ones; exit status 1 if anything failed (also a
 * failing MPI_Finalize). */
int main(int argc, char **argv) {
  tl_ctx ctx;
  MPI_Errhandler eh;
  MPI_Comm dup;
  MPI_Init(&argc, &argv);
  tl_init(&ctx, "mpi_errors");
  double t0 = tl_now();
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_create_errhandler(counting_handler, &eh);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
  MPI_Comm_set_errhandler(dup, eh);
  all_bad_calls(&ctx, dup, eh);
  afterwards(&ctx, dup);
  MPI_Comm_free(&dup);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Errhandler_free(&eh);
  int status = tl_finish(&ctx, t0);
  int frc = MPI_Finalize();
  if (frc != MPI_SUCCESS) printf("mpi_errors: MPI_Finalize returned %d\n", frc), status = 1;
  return status;
}
