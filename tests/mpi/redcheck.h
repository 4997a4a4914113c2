/* redcheck.h - the check of one reduction collective call (allreduce,
 * reduce_scatter_block, reduce) and of one broadcast, shared by the
 * reduction tests (header-only; <mpi.h>, testlib.h and redlib.h only, so
 * that the unmodified program reductions_preload.c can use it too).
 *
 * rl_check runs the collective under test (any entry point, through a
 * function pointer) and the native PMPI_* call on the same input, computes
 * the exact rank-order reference (redlib.h), and requires:
 * - the result equal to the reference on every significant byte (exact
 *   cases) or within the rounding bound of any order (rough cases), and
 *   then, for allreduce, bitwise identical on every rank (rank 0's result
 *   broadcast with PMPI_Bcast);
 * - the native result equal to it too, except where a known MPI defect
 *   explains the difference (one "note:" line per type and op on rank 0);
 *   where the call under test may itself be the native one (target.native),
 *   the same defect excuses it when it equals the native result;
 * - cyclic algorithms refusing non-commutative ops with MPI_ERR_ARG;
 *   predefined ops on derived types failing exactly as the native call does
 *   (MPI_ERR_OP in Open MPI 4.1 and MPICH 4.0);
 * - send buffers unchanged, no byte written after the result, nothing
 *   written to a non-root's receive buffer (which is NULL in a third of the
 *   reduce checks).
 * In place: allreduce and reduce_scatter_block (p*count inputs in recvbuf)
 * on every rank, reduce at the root only. COLLC_TEST_BREAK=N (testlib.h)
 * corrupts every significant byte of the first element of the N-th
 * nonempty result on each rank that has one.
 *
 * rl_bcast_check compares a broadcast with PMPI_Bcast on whole buffers
 * (holes of derived types included); rl_reduce_in_place_probe turns a
 * known way for a plan cache to deadlock into a fast, explained failure
 * (it uses alarm(), write(), _exit(): POSIX, so _POSIX_C_SOURCE must be
 * defined before the first #include).
 */
#ifndef COLLC_REDCHECK_H
#define COLLC_REDCHECK_H

#include <signal.h>
#include <stdarg.h>
#include <unistd.h>
#include "redlib.h"

/* The reductions, in this order everywhere. */
enum { RL_ALLREDUCE, RL_RSB, RL_REDUCE };
static const char *const rl_coll_names[3] = {"allreduce", "reduce_scatter_block", "reduce"};
static const char *const rl_pmpi_names[3] = {"PMPI_Allreduce", "PMPI_Reduce_scatter_block",
                                             "PMPI_Reduce"};

/* A reduction under test: coll (RL_*) with algo (a label where the entry
 * point takes none), root for reduce. Returns an MPI error code. */
typedef int (*rl_red_fn)(int coll, const char *algo, const void *sb, void *rb, int n,
                         MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm);

#define RL_SLACK 64 /* bytes after each receive buffer that must stay untouched */

/* Where a reduction check runs: collective, entry point fn with algo,
 * communicator (named cname); native: the entry point may run the native
 * collective (algorithm "native", a default rule, an unknown preload). */
typedef struct {
  int coll;
  rl_red_fn fn;
  const char *algo;
  MPI_Comm comm;
  const char *cname;
  int native;
} rl_target;

/* Everything about one reduction check. Elements: nin of input (p*count
 * for reduce_scatter_block), nout of output starting at element first of
 * the reduced vector, nbuf in the receive buffer. */
typedef struct {
  const rl_target *g;
  const rl_typeset *S;
  const rl_case *c;
  int count, in_place, root, seed, null_recv;
  int p, r, ip, has_out;
  size_t nin, nout, first, nbuf;
  unsigned char *in, *in_copy, *ours, *nat, *ref, *tmp;
  long double *bound;
} rl_call;

/* A broadcast under test (algo: the algorithm or a label). */
typedef int (*rl_bcast_fn)(const char *algo, void *buf, int n, MPI_Datatype t, int root,
                           MPI_Comm comm);

/* Where a broadcast check runs. */
typedef struct {
  rl_bcast_fn fn;
  const char *algo;
  MPI_Comm comm;
  const char *cname;
} rl_bcast;

/* The native reduction coll (PMPI_*). */
static inline int rl_native_call(int coll, const void *sb, void *rb, int n, MPI_Datatype t,
                                 MPI_Op op, int root, MPI_Comm comm) {
  if (coll == RL_ALLREDUCE) return PMPI_Allreduce(sb, rb, n, t, op, comm);
  if (coll == RL_RSB) return PMPI_Reduce_scatter_block(sb, rb, n, t, op, comm);
  return PMPI_Reduce(sb, rb, n, t, op, root, comm);
}

/* Print a note once per key (rank 0 of WORLD only). */
static inline void rl_note_once(tl_ctx *ctx, const char *key, const char *fmt, ...) {
  static char seen[64][96];
  static int nseen;
  va_list ap;
  for (int i = 0; i < nseen; i++)
    if (!strcmp(seen[i], key)) return;
  if (nseen < 64) snprintf(seen[nseen++], sizeof seen[0], "%s", key);
  if (ctx->rank != 0) return;
  va_start(ap, fmt);
  printf("note: ");
  vprintf(fmt, ap);
  printf("\n");
  fflush(stdout);
  va_end(ap);
}

/* Free k's buffers. */
static inline void rl_call_free(rl_call *k) {
  free(k->in), free(k->in_copy), free(k->ours), free(k->nat), free(k->ref), free(k->tmp);
  free(k->bound);
}

/* May k's collective be the native one (g->native)? */
static inline int rl_native_path(const rl_call *k) {
  return k->g->native;
}

/* Sizes and buffers of k (inputs generated, receive buffers sentinel or,
 * in place, the input). A native reduce is not asked for MPI_IN_PLACE where
 * MPICH 4.0.2 crashes (redlib.h). Returns 0, or 1 (failure recorded)
 * without memory. */
static inline int rl_call_setup(tl_ctx *ctx, rl_call *k) {
  const rl_type *t = k->c->t;
  MPI_Comm_size(k->g->comm, &k->p);
  MPI_Comm_rank(k->g->comm, &k->r);
  int rsb = k->g->coll == RL_RSB;
  if (k->g->coll == RL_REDUCE && rl_native_path(k) &&
      rl_mpich_reduce_in_place_broken(k->root, (long long)k->count * (long long)t->size))
    k->in_place = 0;
  k->ip = k->in_place && (k->g->coll != RL_REDUCE || k->r == k->root);
  k->has_out = k->g->coll != RL_REDUCE || k->r == k->root;
  k->nin = (size_t)k->count * (rsb ? (size_t)k->p : 1);
  k->nout = (size_t)k->count;
  k->first = rsb ? (size_t)k->r * k->nout : 0;
  k->nbuf = k->ip ? k->nin : k->nout;
  size_t in = k->nin * t->size + RL_SLACK, buf = k->nbuf * t->size + RL_SLACK;
  k->in = tl_malloc(ctx, in), k->in_copy = tl_malloc(ctx, in);
  k->ours = tl_malloc(ctx, buf), k->nat = tl_malloc(ctx, buf);
  k->ref = tl_malloc(ctx, k->nout * t->size + RL_SLACK);
  k->tmp = tl_malloc(ctx, k->nout * t->size + RL_SLACK);
  k->bound = tl_malloc(ctx, (k->nout * (size_t)t->mult + 1) * sizeof(long double));
  if (!k->in || !k->in_copy || !k->ours || !k->nat || !k->ref || !k->tmp || !k->bound) {
    rl_call_free(k);
    return 1;
  }
  memset(k->in, 0, in);
  rl_gen(k->c, k->in, 0, k->nin, k->r, k->seed);
  memcpy(k->in_copy, k->in, in);
  memset(k->ours, TL_SENTINEL, buf);
  if (k->ip) memcpy(k->ours, k->in, k->nin * t->size);
  memcpy(k->nat, k->ours, buf);
  return 0;
}

/* Expected outcomes of a call (rl_expectation). */
enum { RL_EXP_OK, RL_EXP_ARG, RL_EXP_NATIVE };

/* Expected outcome of k's call: OK (a correct result), ARG (refused with
 * MPI_ERR_ARG: cyclic, also inside shm, and hier's cyclic copy-in
 * node=copyin need a commutative op), or NATIVE (whatever the
 * native call does, error class included: a predefined op on a derived
 * type, which Open MPI and MPICH refuse with MPI_ERR_OP). */
static inline int rl_expectation(const rl_call *k) {
  const char *a = k->g->algo;
  if (!strncmp(a, "shm:", 4)) a += 4; /* shm:cyclic is cyclic through the segment */
  if (!rl_commutative(k->c) && (!strncmp(a, "cyclic", 6) || strstr(a, "node=copyin")))
    return RL_EXP_ARG;
  return rl_as_native(k->c) ? RL_EXP_NATIVE : RL_EXP_OK;
}

/* Describe element at of a and b (hex of its first bytes) into buf. */
static inline void rl_elem_hex(const rl_type *t, const void *a, const void *b, long at, char *buf,
                               size_t cap) {
  size_t n = t->size < 16 ? t->size : 16, w = 0;
  for (int s = 0; s < 2; s++) {
    const unsigned char *e = (const unsigned char *)(s ? b : a) + (size_t)at * t->size;
    w += (size_t)snprintf(buf + w, cap - w, "%s", s ? " want " : "got ");
    for (size_t i = 0; i < n && w < cap; i++) w += (size_t)snprintf(buf + w, cap - w, "%02x", e[i]);
  }
}

/* Record a failure of check k: what, at element at (or -1), got vs want. */
static inline void rl_call_fail(tl_ctx *ctx, const rl_call *k, const char *what, long at,
                                const void *got, const void *want) {
  char hex[128] = "";
  if (at >= 0 && got && want) rl_elem_hex(k->c->t, got, want, at, hex, sizeof hex);
  tl_fail(ctx, "%s %s on %s: %s %s%s count %d in-place %d root %d seed %d: %s (element %ld) %s",
          rl_coll_names[k->g->coll], k->g->algo, k->g->cname, k->c->t->name, rl_op_names[k->c->op],
          k->c->rough ? " (rough)" : "", k->count, k->in_place, k->root, k->seed, what, at, hex);
}

/* The native result of k differs from the exact reference at element at:
 * a note (once per type and op) for a known MPI defect, else a failure
 * (test or MPI bug). */
static inline void rl_native_mismatch(tl_ctx *ctx, const rl_call *k, long at) {
  char key[96];
  if (!rl_native_defect(k->c)) {
    rl_call_fail(ctx, k, "the NATIVE result differs from the exact reference", at, k->nat, k->ref);
    return;
  }
  long bad = 0;
  for (size_t i = (size_t)at; i < k->nout; i++)
    bad += rl_first_diff(k->c->t, k->nat + i * k->c->t->size, k->ref + i * k->c->t->size, 1) == 0;
  snprintf(key, sizeof key, "%s/%s", k->c->t->name, rl_op_names[k->c->op]);
  rl_note_once(ctx, key,
               "%s %s %s differs from the exact reference (known MPI defect) in "
               "%ld of %zu elements, e.g. element %ld (p = %d); collc's algorithms are held to "
               "the exact reference",
               rl_pmpi_names[k->g->coll], k->c->t->name, rl_op_names[k->c->op], bad, k->nout, at,
               k->p);
}

/* Compare k's results (ours and native) with the reference. */
static inline void rl_call_compare(tl_ctx *ctx, rl_call *k) {
  const rl_case *c = k->c;
  rl_reference(c, k->ref, k->bound, k->tmp, k->first, k->nout, k->p, k->seed);
  if (!c->rough) {
    long at = rl_first_diff(c->t, k->ours, k->ref, k->nout);
    int as_nat = rl_native_path(k) && rl_native_defect(c) &&
                 rl_first_diff(c->t, k->ours, k->nat, k->nout) < 0; /* noted below */
    if (at >= 0 && !as_nat)
      rl_call_fail(ctx, k, "differs from the exact rank-order reference", at, k->ours, k->ref);
    at = rl_first_diff(c->t, k->nat, k->ref, k->nout);
    if (at >= 0) rl_native_mismatch(ctx, k, at);
  } else {
    long at = rl_first_far(c, k->ours, k->ref, k->bound, k->nout, k->p);
    if (at >= 0) rl_call_fail(ctx, k, "beyond the rounding bound of the reference", at, NULL, NULL);
    at = rl_first_far(c, k->nat, k->ref, k->bound, k->nout, k->p);
    if (at >= 0) rl_call_fail(ctx, k, "NATIVE result beyond the rounding bound", at, NULL, NULL);
  }
  if (c->t->kind == RK_VEC && tl_first_diff(k->ours, k->nat, k->nout * c->t->size) >= 0)
    rl_call_fail(ctx, k, "holes of the vector type differ from the native result", -1, NULL, NULL);
}

/* Bytes of k's buffers that must not change: after the result, a
 * non-root's receive buffer, the send buffer. */
static inline void rl_call_untouched(tl_ctx *ctx, const rl_call *k) {
  size_t from = k->has_out ? k->nbuf * k->c->t->size : 0, to = k->nbuf * k->c->t->size + RL_SLACK;
  for (size_t i = from; i < to; i++)
    if (k->ours[i] != TL_SENTINEL && !(k->ip && i < k->nin * k->c->t->size)) {
      rl_call_fail(ctx, k, k->has_out ? "wrote past the result" : "wrote a non-root receive buffer",
                   -1, NULL, NULL);
      break;
    }
  if (!k->ip && tl_first_diff(k->in, k->in_copy, k->nin * k->c->t->size) >= 0)
    rl_call_fail(ctx, k, "send buffer modified", -1, NULL, NULL);
}

/* Judge k after ours (error e) and native (error en) ran. */
static inline void rl_call_verify(tl_ctx *ctx, rl_call *k, int e, int en) {
  int exp = rl_expectation(k), cls = MPI_SUCCESS, ncls = MPI_SUCCESS, len = 0;
  char msg[MPI_MAX_ERROR_STRING] = "";
  if (e) MPI_Error_class(e, &cls);
  if (en) MPI_Error_class(en, &ncls);
  if (exp == RL_EXP_ARG) {
    if (cls != MPI_ERR_ARG)
      rl_call_fail(ctx, k, "should be refused with MPI_ERR_ARG", -1, NULL, NULL);
    return;
  }
  if (en && exp != RL_EXP_NATIVE)
    rl_call_fail(ctx, k, "the reference PMPI call failed", -1, NULL, NULL);
  if (exp == RL_EXP_NATIVE && (en || e)) {
    if (cls != ncls)
      rl_call_fail(ctx, k, "error class differs from the native call's", -1, NULL, NULL);
    return;
  }
  if (e) {
    MPI_Error_string(e, msg, &len);
    rl_call_fail(ctx, k, msg, -1, NULL, NULL);
    return;
  }
  if (k->count > 0 && ctx->nonempty == ctx->break_at && k->has_out)
    for (int s = 0; s < 2; s++) /* self-test: this check must now fail */
      for (size_t i = 0; i < k->c->t->sig[s][1]; i++) k->ours[k->c->t->sig[s][0] + i] ^= 0x5a;
  if (k->has_out) rl_call_compare(ctx, k);
  rl_call_untouched(ctx, k);
}

/* Rough allreduce results must be bitwise identical on every rank of the
 * communicator (collective; the native call only gets a note). */
static inline void rl_call_identical(tl_ctx *ctx, rl_call *k) {
  size_t bytes = k->nout * k->c->t->size;
  memcpy(k->tmp, k->ours, bytes);
  PMPI_Bcast(k->tmp, (int)bytes, MPI_BYTE, 0, k->g->comm);
  long at = rl_first_diff(k->c->t, k->ours, k->tmp, k->nout);
  if (at >= 0 && !k->g->native)
    rl_call_fail(ctx, k, "not bitwise identical to rank 0's result", at, k->ours, k->tmp);
  memcpy(k->tmp, k->nat, bytes);
  PMPI_Bcast(k->tmp, (int)bytes, MPI_BYTE, 0, k->g->comm);
  if (rl_first_diff(k->c->t, k->nat, k->tmp, k->nout) >= 0)
    rl_note_once(ctx, k->c->t->name,
                 "native PMPI_Allreduce %s %s (rough) is not bitwise identical "
                 "on all ranks (p = %d, count %d): MPI does not promise it",
                 k->c->t->name, rl_op_names[k->c->op], k->p, k->count);
}

/* One reduction check (collective over g->comm): case c of S, count, in
 * place or not, root (reduce), inputs from seed; g->fn against the exact
 * reference and against the native PMPI_* call (not in place). Returns 1
 * if it failed. */
static inline int rl_check(tl_ctx *ctx, const rl_target *g, const rl_typeset *S, const rl_case *c,
                           int count, int in_place, int root, int seed) {
  rl_call k = {.g = g, .S = S, .c = c, .count = count, .in_place = in_place, .root = root,
               .seed = seed, .null_recv = seed % 3 == 0};
  int before = ctx->fails, e, en;
  if (!c || rl_call_setup(ctx, &k)) return 1;
  if (count > 0) ctx->nonempty++;
  const void *sb = k.ip ? MPI_IN_PLACE : (const void *)k.in;
  void *rb = k.has_out || !k.null_recv ? k.ours : NULL;
  MPI_Op op = S->op[c->op];
  e = g->fn(g->coll, g->algo, sb, rb, count, c->t->type, op, root, g->comm);
  en =
      rl_native_call(g->coll, k.in, k.nat, count, c->t->type, op, root, g->comm); /* not in place */
  rl_call_verify(ctx, &k, e, en);
  if (g->coll == RL_ALLREDUCE && c->rough && count > 0) rl_call_identical(ctx, &k);
  rl_call_free(&k);
  ctx->checks++;
  return ctx->fails != before;
}

/* One bcast check: count elements of the receive type of case ty from
 * root, against PMPI_Bcast, whole buffers (holes too). Returns 1 if it
 * failed. */
static inline int rl_bcast_check(tl_ctx *ctx, const rl_bcast *g, const tl_type *ty, int count,
                                 int root, int seed) {
  int r, p, before = ctx->fails, n = count * ty->rmul;
  MPI_Comm_rank(g->comm, &r);
  MPI_Comm_size(g->comm, &p);
  size_t span = tl_span(ty->rtype, n);
  unsigned char *ours = tl_malloc(ctx, span), *ref = tl_malloc(ctx, span);
  if (!ours || !ref) return free(ours), free(ref), 1;
  memset(ours, TL_SENTINEL, span);
  if (r == root) tl_fill(ours, span - 16, ty->elem, r, seed);
  memcpy(ref, ours, span);
  int e = g->fn(g->algo, ours, n, ty->rtype, root, g->comm);
  int en = PMPI_Bcast(ref, n, ty->rtype, root, g->comm);
  if (count > 0 && ++ctx->nonempty == ctx->break_at && r == (root + 1) % p)
    ours[0] ^= 0x5a; /* self-test */
  long at = tl_first_diff(ours, ref, span);
  if (e || en || at >= 0)
    tl_fail(ctx,
            "bcast %s on %s type %s count %d root %d: returned %d (PMPI %d), first "
            "differing byte %ld of %zu",
            g->algo, g->cname, ty->name, count, root, e, en, at, span);
  free(ours), free(ref);
  ctx->checks++;
  return ctx->fails != before;
}

/* Set by rl_reduce_in_place_probe: this rank is the probe's root. */
static volatile sig_atomic_t rl_probe_root;

/* SIGALRM handler of rl_reduce_in_place_probe: the root reports the
 * deadlock; every rank exits. */
static inline void rl_probe_timeout(int sig) {
  static const char msg[] =
      "FAIL: a reduce with MPI_IN_PLACE at the root only, after the same call without it, "
      "did not complete within 30 s: deadlock (collc: the non-roots find the plan decision "
      "cached; the root's decision key differs in the in-place flag, so it decides alone, "
      "in a collective agreement nobody else joins)\n";
  (void)sig;
  if (rl_probe_root && write(STDOUT_FILENO, msg, sizeof msg - 1) < 0) _exit(3);
  _exit(2);
}

/* The shortest form of a deadlock a plan cache can cause, under a 30 s
 * watchdog (SIGALRM) so that it fails fast and says why: on a fresh
 * duplicate of g->comm (no cached plans, and no later collective that a
 * stray internal one could match), g's reduce of 123 ints (MPI_SUM, root
 * p - 1), then the same with MPI_IN_PLACE at the root, then a barrier on
 * g->comm. The result is checked too. Needs POSIX (alarm, write, _exit). */
static inline void rl_reduce_in_place_probe(tl_ctx *ctx, const rl_target *g) {
  int in[123], out[123], r, p, bad = 0;
  MPI_Comm dup;
  MPI_Comm_rank(g->comm, &r);
  MPI_Comm_size(g->comm, &p);
  MPI_Comm_dup(g->comm, &dup);
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  for (int i = 0; i < 123; i++) in[i] = out[i] = r * 1000 + i;
  rl_probe_root = r == p - 1;
  signal(SIGALRM, rl_probe_timeout);
  alarm(30);
  g->fn(RL_REDUCE, g->algo, in, out, 123, MPI_INT, MPI_SUM, p - 1, dup);
  for (int i = 0; i < 123; i++) out[i] = in[i];
  g->fn(RL_REDUCE, g->algo, r == p - 1 ? MPI_IN_PLACE : (void *)in, out, 123, MPI_INT, MPI_SUM,
        p - 1, dup);
  PMPI_Barrier(g->comm);
  alarm(0);
  signal(SIGALRM, SIG_DFL);
  MPI_Comm_free(&dup);
  for (int i = 0; i < 123 && r == p - 1; i++) bad += out[i] != 1000 * (p * (p - 1) / 2) + p * i;
  if (bad) tl_fail(ctx, "reduce %s in place at root %d: %d wrong elements", g->algo, p - 1, bad);
  ctx->checks++;
}

#endif
