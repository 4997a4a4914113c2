/* batchcheck.c - prove a program's batches keep the batch semantics.
 *
 * Independent of how batch.c chose the cuts: it looks only at the exact
 * descriptors. Checks (batch.h): the batches are consecutive runs of local
 * instructions and cover every local instruction once; each instruction's
 * descriptors cover exactly the units of its operands; within a batch no
 * two writes overlap, and no descriptor reads a unit another one writes (its
 * own write only at the same units). Sorting makes it O(n log n). */
#include <stdlib.h>
#include <string.h>
#include "verify.h"

/* Units [lo, hi) of buffer buf, touched by descriptor who. */
typedef struct {
  int64_t lo, hi;
  int buf;
  int64_t who;
} ival;

static int by_start(const void *a, const void *b) {
  const ival *x = a, *y = b;
  if (x->buf != y->buf) return x->buf < y->buf ? -1 : 1;
  return x->lo < y->lo ? -1 : x->lo > y->lo;
}

#define FAIL(...) (snprintf(why, len, __VA_ARGS__), 0)

/* Sort v[0..n) and merge touching intervals; returns the new count. */
static int64_t normalise(ival *v, int64_t n) {
  int64_t m = 0;
  qsort(v, (size_t)n, sizeof *v, by_start);
  for (int64_t i = 0; i < n; i++) {
    if (m && v[m - 1].buf == v[i].buf && v[i].lo <= v[m - 1].hi) {
      if (v[i].hi > v[m - 1].hi) v[m - 1].hi = v[i].hi;
    } else {
      v[m++] = v[i];
    }
  }
  return m;
}

/* Whether the descriptors of instruction a (dsc[0..n)) cover exactly the
 * units of its operand o; which: 0 src, 1 src2, 2 dst. tmp: room for
 * max(n, runs of o) intervals, twice. */
static int covers(const collc_prog *P, collc_opnd o, const batch_desc *dsc, int64_t n,
                  int which, ival *tmp, int64_t room) {
  const collc_shape *S = &P->shapes[o.shape];
  ival *A = tmp, *D = tmp + room;
  for (int64_t k = 0; k < S->nruns; k++) {
    int64_t off, l;
    shape_run(P, o.shape, k, &off, &l);
    A[k] = (ival){o.off + off, o.off + off + l, o.buf, 0};
  }
  for (int64_t i = 0; i < n; i++) {
    int64_t at = which == 0 ? dsc[i].s : which == 1 ? dsc[i].s2 : dsc[i].d;
    int buf = which == 0 ? dsc[i].sbuf : which == 1 ? dsc[i].s2buf : dsc[i].dbuf;
    D[i] = (ival){at, at + dsc[i].n, buf, 0};
  }
  int64_t na = normalise(A, S->nruns), nd = normalise(D, n);
  if (na != nd) return 0;
  for (int64_t i = 0; i < na; i++)
    if (A[i].buf != D[i].buf || A[i].lo != D[i].lo || A[i].hi != D[i].hi) return 0;
  return 1;
}

/* The batches are consecutive local runs covering each local instruction
 * once, and descriptor ranges follow each other. */
static int check_spans(const collc_prog *P, const collc_batches *B, char *why, size_t len) {
  int at = 0;
  int64_t d = 0;
  for (int b = 0; b < B->nb; b++) {
    const batch_span *S = &B->b[b];
    if (S->first < at || S->end <= S->first || S->end > P->nins || S->d0 != d || S->nd < 0)
      return FAIL("batch %d: bad span %d..%d", b, S->first, S->end);
    for (; at < S->first; at++)
      if (batch_local(P->ins[at].op) || B->of[at] != -1)
        return FAIL("instruction %d: local but in no batch", at);
    if (B->of[at] != b) return FAIL("batch %d: not marked at instruction %d", b, at);
    for (at++; at < S->end; at++)
      if (B->of[at] != -1) return FAIL("instruction %d: marked inside batch %d", at, b);
    for (int a = S->first; a < S->end; a++)
      if (!batch_local(P->ins[a].op)) return FAIL("batch %d: instruction %d is not local", b, a);
    for (int64_t i = S->d0; i < S->d0 + S->nd; i++)
      if (B->d[i].ins < S->first || B->d[i].ins >= S->end || (i > S->d0 && B->d[i].ins < B->d[i - 1].ins))
        return FAIL("batch %d: descriptor %lld of instruction %d", b, (long long)i, B->d[i].ins);
    d += S->nd;
  }
  for (; at < P->nins; at++)
    if (batch_local(P->ins[at].op) || B->of[at] != -1)
      return FAIL("instruction %d: local but in no batch", at);
  return d == B->nd ? 1 : FAIL("%lld descriptors, batches hold %lld", (long long)B->nd, (long long)d);
}

/* Each instruction of a batch has descriptors of its kind (in order) that
 * cover its operands. */
static int check_cover(const collc_prog *P, const collc_batches *B, ival *tmp, int64_t room,
                       char *why, size_t len) {
  static const int kind[COLLC_OP_COUNT] = {
      [COLLC_OP_COPY] = BATCH_COPY, [COLLC_OP_REDUCE] = BATCH_REDUCE,
      [COLLC_OP_COMBINE] = BATCH_COMBINE};
  for (int b = 0; b < B->nb; b++) {
    int64_t i = B->b[b].d0, j, end = B->b[b].d0 + B->b[b].nd;
    for (int a = B->b[b].first; a < B->b[b].end; a++, i = j) {
      const collc_instr *I = &P->ins[a];
      for (j = i; j < end && B->d[j].ins == a; j++)
        if (B->d[j].kind != kind[I->op]) return FAIL("descriptor %lld: wrong kind", (long long)j);
      int ok = covers(P, I->src, B->d + i, j - i, 0, tmp, room) &&
               covers(P, I->dst, B->d + i, j - i, 2, tmp, room) &&
               (I->op != COLLC_OP_COMBINE || covers(P, I->src2, B->d + i, j - i, 1, tmp, room));
      if (!ok) return FAIL("instruction %d: descriptors do not cover its operands", a);
    }
    if (i != end) return FAIL("batch %d: descriptor %lld of no instruction", b, (long long)i);
  }
  return 1;
}

/* The first write of w[0..nw) (sorted, disjoint) that may overlap r. */
static int64_t first_overlap(const ival *w, int64_t nw, const ival *r) {
  int64_t lo = 0, hi = nw;
  while (lo < hi) { /* first with (buf, hi) > (r->buf, r->lo) */
    int64_t m = (lo + hi) / 2;
    if (w[m].buf < r->buf || (w[m].buf == r->buf && w[m].hi <= r->lo)) lo = m + 1;
    else hi = m;
  }
  return lo;
}

/* Batch S: writes disjoint, no read of another descriptor's write. */
static int check_hazards(const collc_batches *B, int b, ival *w, char *why, size_t len) {
  const batch_span *S = &B->b[b];
  for (int64_t i = 0; i < S->nd; i++) {
    const batch_desc *D = &B->d[S->d0 + i];
    w[i] = (ival){D->d, D->d + D->n, D->dbuf, S->d0 + i};
  }
  qsort(w, (size_t)S->nd, sizeof *w, by_start);
  for (int64_t i = 1; i < S->nd; i++)
    if (w[i].buf == w[i - 1].buf && w[i].lo < w[i - 1].hi)
      return FAIL("batch %d: descriptors %lld and %lld write the same units of %s", b,
                  (long long)w[i - 1].who, (long long)w[i].who, buf_name(w[i].buf));
  for (int64_t i = S->d0; i < S->d0 + S->nd; i++) {
    const batch_desc *D = &B->d[i];
    ival r[2] = {{D->s, D->s + D->n, D->sbuf, i}, {D->s2, D->s2 + D->n, D->s2buf, i}};
    for (int k = 0; k < (D->kind == BATCH_COMBINE ? 2 : 1); k++)
      for (int64_t j = first_overlap(w, S->nd, &r[k]);
           j < S->nd && w[j].buf == r[k].buf && w[j].lo < r[k].hi; j++) {
        int own = w[j].who == i && w[j].lo == r[k].lo && w[j].hi == r[k].hi;
        if (!own)
          return FAIL("batch %d: descriptor %lld reads units of %s that descriptor %lld writes",
                      b, (long long)i, buf_name(r[k].buf), (long long)w[j].who);
      }
  }
  return 1;
}

int verify_batches(const collc_prog *P, const collc_batches *B, char *why, size_t len) {
  int64_t room = B->nd + 1;
  for (int s = 0; s < P->nshapes; s++)
    if (P->shapes[s].nruns + 1 > room) room = P->shapes[s].nruns + 1;
  ival *tmp = malloc(2 * (size_t)room * sizeof *tmp);
  int ok = tmp ? 1 : FAIL("out of memory");
  if (ok) ok = check_spans(P, B, why, len) && check_cover(P, B, tmp, room, why, len);
  for (int b = 0; ok && b < B->nb; b++) ok = check_hazards(B, b, tmp, why, len);
  free(tmp);
  return ok;
}
