/* alltoallv_torus.c - the d-factor ("torus") all-to-all with per-rank
 * counts (MPI_Alltoallv): alltoall_torus.c's rounds over unequal blocks.
 *
 * p = D[0] x ... x D[d-1] (D[0] fastest, as in alltoall_torus.c). Block
 * (s, t), c(s, t) units from rank s to rank t, moves one dimension per
 * round: before round j it lies at the rank whose digits are t's on the
 * dimensions already done and s's on the others, and round j (dimension k)
 * gives it to the rank of t's digit k. So a rank sends D[k] - 1 messages in
 * round k, sum(D[k] - 1) in all instead of p - 1, each block travelling
 * once per digit in which s and t differ.
 *
 * What it needs: the counts of blocks passing through a rank, which are
 * other ranks' (a relay forwards (s, t) for s and t both elsewhere). MPI
 * gives each rank only its own vectors, so this row agrees (spec.vall: the
 * dispatch layer's agreement round, src/mpi/agree.c, one allgather of every
 * rank's p send counts before the first call of a count matrix; its plan is
 * then cached by the matrix's hash, and repeated calls with the same counts
 * pay nothing more). A nonblocking call starts the round when called and
 * compiles its plan when the round completes (every call: its plans are
 * not cached). It reads no other rank's displacements.
 *
 * Layout: a rank holds p blocks before every round; they are numbered x in
 * [0, p) by the digits of x (the done dimensions: s's, the others: t's) and
 * packed in x order in TMP (two regions, alternating); the first round
 * reads SEND at the send displacements (x = t), the last writes RECV at the
 * receive displacements (x = s). A message carries its blocks in x order on
 * both sides (a runs operand: no packing copy); the blocks that stay (t's
 * digit k is the rank's own) are one local copy per round. In place with
 * one round, RECV is first copied to TMP. Rounds: linear (all receives and
 * sends of the round posted, then one wait). Empty blocks are skipped, and
 * a message with none is not sent (both sides compute the same total).
 * Cost: sum_k [(D[k]-1) alpha + beta (units leaving in round k)]; scratch
 * two regions of the largest holding.
 *
 * Parameters: torus:<dims> as alltoall_torus.c ("AxB..." or "d=N"); the
 * component, where given, must be linear.
 */
#include <stdio.h>
#include <stdlib.h>
#include "algo.h"
#include "patterns.h"

typedef struct {
  const collc_spec *s;
  collc_prog *P;
  int d, D[COLLC_MAXF];
  int done[COLLC_MAXF]; /* dimension m already exchanged */
  int64_t *cnt, *off;   /* per x: units, offset in the state's buffer (two states) */
  int64_t *ro, *rl;     /* runs of one operand */
} tv;

/* Rank with digit m taken from a where want[m], else from b. */
static int64_t mix(const tv *T, const int *want, int64_t a, int64_t b) {
  int64_t r = 0;
  for (int m = 0; m < T->d; m++)
    r += (int64_t)mr_digit(want[m] ? a : b, T->D, m) * mr_weight(T->D, m);
  return r;
}

/* Block x of holder h in the current state: its source and destination. */
static void block_of(const tv *T, int64_t h, int64_t x, int64_t *src, int64_t *dst) {
  int rest[COLLC_MAXF];
  for (int m = 0; m < T->d; m++) rest[m] = !T->done[m];
  *src = mix(T, T->done, x, h), *dst = mix(T, rest, x, h);
}

/* Units and offsets of my blocks in the current state into cnt, off: base
 * plus, packed, their running sum, or (first and last state) the user's
 * displacements; returns their total. */
static int64_t state(tv *T, int first, int last, int64_t base, int64_t *cnt, int64_t *off) {
  const collc_spec *s = T->s;
  int64_t at = 0, src, dst;
  for (int64_t x = 0; x < s->p; x++) {
    block_of(T, s->rank, x, &src, &dst);
    cnt[x] = a2av_count(s, (int)src, A2AV_SEND, (int)dst);
    off[x] = base + (first ? a2av_displ(s, s->rank, A2AV_SEND, (int)dst)
                     : last ? a2av_displ(s, s->rank, A2AV_RECV, (int)src) : at);
    at += cnt[x];
  }
  return at;
}

/* Operand of blocks x with digit k == v of buffer buf (cnt, off), in x
 * order; *units: their sum. */
static collc_opnd blocks(tv *T, int buf, const int64_t *cnt, const int64_t *off, int k, int v,
                         int64_t *units) {
  int n = 0;
  *units = 0;
  for (int64_t x = 0; x < T->s->p; x++)
    if (mr_digit(x, T->D, k) == v && cnt[x])
      T->ro[n] = off[x], T->rl[n++] = cnt[x], *units += cnt[x];
  return prog_opnd_runs(T->P, buf, n, T->ro, T->rl);
}

/* Round on dimension k from buffer ib (state cnt0/off0) into ob (cnt1/off1):
 * messages to and from the other D[k] - 1 ranks of my line, my own blocks
 * copied. */
static void round_on(tv *T, int k, int ib, const int64_t *c0, const int64_t *o0, int ob,
                     const int64_t *c1, const int64_t *o1) {
  const collc_spec *s = T->s;
  int me = mr_digit(s->rank, T->D, k);
  int64_t w = mr_weight(T->D, k), base = s->rank - me * w, n;
  for (int j = 1; j < T->D[k]; j++) { /* from (me - j): its blocks are mine-to-be, digit k theirs */
    int v = (me - j + T->D[k]) % T->D[k];
    collc_opnd o = blocks(T, ob, c1, o1, k, v, &n);
    if (n) prog_recv(T->P, (int)(base + v * w), o);
  }
  for (int j = 1; j < T->D[k]; j++) {
    int v = (me + j) % T->D[k];
    collc_opnd o = blocks(T, ib, c0, o0, k, v, &n);
    if (n) prog_send(T->P, (int)(base + v * w), o);
  }
  collc_opnd from = blocks(T, ib, c0, o0, k, me, &n), to = blocks(T, ob, c1, o1, k, me, &n);
  if (n) prog_copy(T->P, from, to);
  prog_wait(T->P);
}

/* The dims in algorithm order into T (D[0] fastest), the rounds into r;
 * returns their number. */
static int dims(tv *T, const collc_choice *c, int *r) {
  int K = 0;
  T->d = c->nf;
  for (int k = 0; k < T->d; k++) {
    T->D[k] = c->f[T->d - 1 - k], T->done[k] = 0;
    if (T->D[k] > 1) r[K++] = k;
  }
  return K;
}

/* The largest holding of the states between rounds (TMP's region). */
static int64_t largest(tv *T, const int *r, int K) {
  int64_t most = 0;
  for (int j = 1; j < K; j++) {
    T->done[r[j - 1]] = 1;
    int64_t t = state(T, 0, 0, 0, T->cnt, T->off);
    if (t > most) most = t;
  }
  for (int k = 0; k < T->d; k++) T->done[k] = 0;
  return most;
}

static int torusv_gen(const collc_spec *s, const collc_choice *c, collc_prog *P) {
  tv T = {.s = s, .P = P};
  int r[COLLC_MAXF], K = dims(&T, c, r), in = s->in_place ? BUF_RECV : BUF_SEND;
  size_t p = (size_t)s->p;
  int64_t *mem = malloc(6 * p * sizeof *mem);
  if (!mem) return prog_fail(P, COLLC_ENOMEM, "torus: out of memory"), P->err;
  int64_t *c0 = mem, *o0 = mem + p, *c1 = mem + 2 * p, *o1 = mem + 3 * p;
  T.ro = mem + 4 * p, T.rl = mem + 5 * p, T.cnt = c1, T.off = o1;
  int64_t region = largest(&T, r, K), all = prog_buf_units(P, BUF_RECV);
  if (K == 0 || (s->in_place && K == 1)) { /* (p = 1; or one round reading what it writes) */
    if (K == 0 && !s->in_place) K = 1, r[0] = 0; /* one "round" on a dimension of 1: the copy */
    else if (K == 1 && all) {
      prog_need_tmp(P, all + 2 * region);
      prog_copy(P, opnd(BUF_RECV, 0, prog_shape_contig(P, all)),
                opnd(BUF_TMP, 2 * region, prog_shape_contig(P, all)));
      in = BUF_TMP;
    }
  }
  if (region) prog_need_tmp(P, 2 * region + (in == BUF_TMP ? all : 0));
  state(&T, 1, 0, in == BUF_TMP ? 2 * region : 0, c0, o0);
  for (int j = 0; j < K; j++) { /* (between rounds: TMP's two regions in turn) */
    int last = j == K - 1, ob = last ? BUF_RECV : BUF_TMP;
    T.done[r[j]] = 1;
    state(&T, 0, last, !last && j % 2 ? region : 0, c1, o1);
    round_on(&T, r[j], in, c0, o0, ob, c1, o1);
    int64_t *t = c0;
    c0 = c1, c1 = t, t = o0, o0 = o1, o1 = t;
    in = ob;
  }
  free(mem);
  return P->err;
}

/* Dims as alltoall_torus.c's; a component other than linear does not fit. */
static int torusv_resolve(const collc_spec *s, collc_choice *c, char *why, size_t wlen) {
  int rc = algo_agreed(s, "torus", why, wlen) ? COLLC_EUNFIT : algo_torus_resolve(s, c, why, wlen);
  for (int i = 0; !rc && i < c->ncomp; i++)
    if (c->comp[i] != COMP_LINEAR) {
      snprintf(why, wlen, "torus (alltoallv): rounds are linear; no '%s' component",
               comp_name(c->comp[i]));
      return COLLC_EUNFIT;
    }
  return rc;
}

const collc_algo algo_alltoallv_torus = {
    "torus", COLLC_COLL_ALLTOALLV, algo_torus_parse, torusv_resolve, torusv_gen,
    algo_torus_format, "torus:<AxBx..|d=N>",
    "d-factor torus over unequal blocks: sum(D[k]-1) messages, every rank's counts agreed",
    ALGO_ANY, 1};
