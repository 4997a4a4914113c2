/* batch.c - the host batch executor (exec/batch_host.c) against the scalar
 * path, byte for byte. One process (any rank count; each rank runs it all):
 * every rank's program of every registry algorithm (tests/unit/algos.h),
 * p = 1..8, bound as a plan with batches; its instructions run three ways
 * on the same random buffers: one by one (local_run, the scalar path),
 * batch by batch through batch_run_host, and batch by batch with each
 * batch's descriptors in reverse order (the batch semantics allow any
 * order: a hazard inside a batch shows there). Messages are emulated: a
 * RECV or GET writes bytes derived from its address into its dst, the same
 * in all three runs, so a batch that wrongly spans one differs. All
 * buffers (SEND, RECV, TMP, SHM) must end identical. Types: MPI_INT SUM,
 * MPI_DOUBLE SUM, MPI_UNSIGNED_CHAR BXOR, MPI_DOUBLE_INT MAXLOC in turn;
 * the block collectives move MPI_DOUBLE. Plans with a user-defined op must
 * have no batches (scalar fallback). Self-tests: a descriptor moved by one
 * element must be caught; of adjacent batches merged across the hazard that
 * cut them, the reversed run must catch some (not all: a hazard on units
 * that an emulated message then overwrites leaves no trace). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include "exec/plan_impl.h"
#include "exec/batch_host.h"
#include "ir/batch.h"
#include "../unit/algos.h"

static long cases, plans, batched, fails, caught, descs, merged, merged_caught;
static int me;

enum { SCALAR, INORDER, REVERSE };

/* Deterministic bytes for RECV/GET instruction a's dst (an emulated message). */
static void emulate_msg(const collc_plan *pl, int a, char *const base[]) {
  const collc_instr *I = &pl->P->ins[a];
  const collc_shape *S = &pl->P->shapes[I->dst.shape];
  MPI_Aint ext = pl->lx.ext[I->dst.buf];
  for (int64_t k = 0; k < S->nruns; k++) {
    int64_t off, len;
    shape_run(pl->P, I->dst.shape, k, &off, &len);
    unsigned char *d = (unsigned char *)base[I->dst.buf] + (I->dst.off + off) * ext;
    for (int64_t i = 0; i < len * ext; i++) d[i] = (unsigned char)(a * 131 + k * 7 + i * 13);
  }
}

/* Batch b of T with its descriptors from last to first. */
static void run_reversed(const xbatch_tab *T, int b, char *const base[], const kernel_sel *k) {
  xbatch_tab one = *T;
  for (int64_t i = T->b[b].d0 + T->b[b].nd - 1; i >= T->b[b].d0; i--) {
    xspan s = {i, 1, T->b[b].end};
    one.b = &s;
    batch_run_host(&one, 0, base, k);
  }
}

/* Run pl's program on base[] the given way. */
static void run_prog(const collc_plan *pl, char *const base[], int how) {
  const collc_prog *P = pl->P;
  for (int a = 0; a < P->nins; a++) {
    int op = P->ins[a].op, b = how == SCALAR ? -1 : pl->bt.of[a];
    if (b >= 0) {
      if (how == INORDER) batch_run_host(&pl->bt, b, base, &pl->ks);
      else run_reversed(&pl->bt, b, base, &pl->ks);
      a = pl->bt.b[b].end - 1;
    } else if (op == COLLC_OP_COPY || op == COLLC_OP_REDUCE || op == COLLC_OP_COMBINE) {
      if (how != SCALAR) fails++, printf("instruction %d: local, in no batch\n", a);
      local_run(P, &P->ins[a], base, &pl->lx);
    } else if (op == COLLC_OP_RECV || op == COLLC_OP_GET) {
      emulate_msg(pl, a, base);
    }
  }
}

/* The buffers of one run: SEND, RECV, TMP, SHM in one block. */
typedef struct {
  char *mem, *base[BUF_COUNT];
  size_t at[BUF_COUNT + 1];
} bufs;

static void bufs_init(bufs *B, const collc_plan *pl, unsigned seed) {
  size_t n[BUF_COUNT] = {0, pl->limit[0], pl->limit[1], pl->tmp_bytes + 64, pl->shm_bytes};
  B->at[0] = 0;
  for (int k = 0; k < BUF_COUNT; k++) B->at[k + 1] = B->at[k] + ((n[k] + 63) & ~(size_t)63);
  B->mem = malloc(B->at[BUF_COUNT] + 1);
  for (size_t i = 0; i < B->at[BUF_COUNT]; i++)
    B->mem[i] = (char)((seed = seed * 1103515245u + 12345u) >> 16);
  for (int k = 0; k < BUF_COUNT; k++) B->base[k] = B->mem + B->at[k];
  B->base[BUF_NONE] = NULL;
  B->base[BUF_TMP] -= pl->tmp_lb;
  B->base[BUF_SHM] -= pl->shm_lb;
}

/* Scalar against in-order and reversed batches; 1 if all identical. */
static int compare(const collc_plan *pl, const char *what) {
  bufs R[3];
  int same = 1;
  for (int h = 0; h < 3; h++) {
    bufs_init(&R[h], pl, 2026u + (unsigned)cases);
    run_prog(pl, R[h].base, h);
  }
  for (int h = 1; h < 3; h++)
    for (int k = 1; k < BUF_COUNT; k++)
      if (memcmp(R[0].mem + R[0].at[k], R[h].mem + R[h].at[k], R[0].at[k + 1] - R[0].at[k])) {
        if (what) printf("%s: %s differs (%s batches)\n", what, buf_name(k), h == 1 ? "in-order" : "reversed");
        same = 0;
      }
  for (int h = 0; h < 3; h++) free(R[h].mem);
  return same;
}

/* A copy descriptor moved by one element must be caught (self-test). */
static void break_one(collc_plan *pl) {
  for (int64_t i = 0; i < pl->bt.nd; i++)
    if (pl->bt.d[i].kind == 0 && pl->bt.d[i].d >= 8) {
      pl->bt.d[i].d -= 8;
      caught += !compare(pl, NULL);
      pl->bt.d[i].d += 8;
      return;
    }
}

/* Two adjacent batches merged (across the hazard that cut them): the
 * reversed run must differ somewhere (self-test of the reversed order). */
static void merge_one(collc_plan *pl) {
  xbatch_tab *T = &pl->bt;
  for (int b = 0; b + 1 < T->nb; b++) {
    int next = T->b[b].end;
    if (T->of[next] != b + 1) continue;
    xspan keep = T->b[b];
    T->b[b].nd += T->b[b + 1].nd, T->b[b].end = T->b[b + 1].end, T->of[next] = -1;
    merged++, merged_caught += !compare(pl, NULL);
    T->b[b] = keep, T->of[next] = b + 1;
    return;
  }
}

static void user_fn(void *in, void *inout, int *len, MPI_Datatype *t) {
  (void)t;
  for (int i = 0; i < *len; i++) ((int *)inout)[i] += ((int *)in)[i];
}

static MPI_Op user_op;

/* sweep_registry's callback: every rank's plan of (s, c). */
static void each(void *arg, const collc_spec *s, const collc_choice *c, const char *text) {
  static const MPI_Datatype ts[4] = {MPI_INT, MPI_DOUBLE, MPI_UNSIGNED_CHAR, MPI_DOUBLE_INT};
  const MPI_Op os[4] = {MPI_SUM, MPI_SUM, MPI_BXOR, MPI_MAXLOC};
  int reduces = coll_reduces(s->coll), per_block = coll_desc_of(s->coll)->per_block;
  int pick = (int)(cases++ % 5); /* 4: a user-defined op */
  (void)arg;
  for (int r = 0; r < s->p; r++) {
    collc_spec sr = spec_rank(s, r);
    char why[200], what[300];
    collc_prog *P = choice_compile(&sr, c, why, sizeof why);
    snprintf(what, sizeof what, "%s %s p=%d rank %d%s root=%d type %d", coll_name(s->coll),
             text, s->p, r, s->in_place ? " in place" : "", s->root, pick);
    if (!P) {
      printf("%s: %s\n", what, why), fails++;
      continue;
    }
    MPI_Datatype t = !reduces ? MPI_DOUBLE : pick == 4 ? MPI_INT : ts[pick];
    exec_bind b = {per_block ? (int)s->count : 1, per_block ? (int)s->count : 1, t, t,
                   !reduces ? MPI_OP_NULL : pick == 4 ? user_op : os[pick], 1};
    collc_plan *pl;
    if (plan_create(P, &b, &pl)) {
      printf("%s: plan_create failed\n", what), fails++;
      continue;
    }
    plans++;
    if (reduces && pick == 4 && plan_batches(pl)) {
      int red = 0;
      for (int a = 0; a < P->nins; a++) red += batch_local(P->ins[a].op) && P->ins[a].op != COLLC_OP_COPY;
      if (red) printf("%s: a user op, yet batches\n", what), fails++;
    }
    if (plan_batches(pl)) {
      batched++, descs += pl->bt.nd;
      if (!compare(pl, what)) fails++;
      if (caught < 3) break_one(pl);
      if (merged < 200) merge_one(pl);
    }
    plan_free(pl);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Op_create(user_fn, 1, &user_op);
  for (int p = 1; p <= 8; p++) sweep_registry(p, each, NULL);
  int ok = fails == 0 && caught > 0 && merged_caught > 0 && batched > 1000;
  if (me == 0 || !ok)
    printf("mpi_batch: %ld cases, %ld plans, %ld with batches (%ld descriptors), %ld failures, "
           "self-tests: a moved descriptor caught %ld, %ld of %ld batches merged across their cut "
           "caught: %s\n", cases, plans, batched, descs, fails, caught, merged_caught, merged,
           ok ? "PASS" : "FAIL");
  MPI_Op_free(&user_op);
  MPI_Finalize();
  return !ok;
}
