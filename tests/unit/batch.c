/* batch.c - batches of local instructions (ir/batch.h) and their verifier.
 *
 * Truth: a brute-force check of the batch semantics written here (a table
 * of which descriptor writes each unit, then every read looked up), not the
 * verifier's sorted intervals. Cases: every rank's program of every
 * registry algorithm (tests/unit/algos.h), p = 1..8. Each program's batches
 * must pass both checks and every local instruction must be in one; then
 * every pair of adjacent batches that batch_build cut apart is merged by
 * hand, and the verifier must reject the merge exactly when the brute force
 * does (some must be rejected: the verifier can fail). Hand-broken tables:
 * a descriptor one unit too long, a descriptor dropped, a batch holding a
 * SEND. */
#include <stdlib.h>
#include <string.h>
#include "check/verify.h"
#include "unit.h"
#include "algos.h"

static long programs, merges, rejected, descs, batches;

/* Brute force: 1 if batch b of B keeps the semantics (unit by unit). */
static int brute_ok(const collc_batches *B, int b) {
  const batch_span *S = &B->b[b];
  int64_t top[BUF_COUNT] = {0};
  for (int64_t i = S->d0; i < S->d0 + S->nd; i++) {
    const batch_desc *D = &B->d[i];
    if (D->d + D->n > top[D->dbuf]) top[D->dbuf] = D->d + D->n;
  }
  int64_t *who[BUF_COUNT] = {0};
  int ok = 1;
  for (int k = 0; k < BUF_COUNT; k++) {
    who[k] = malloc(((size_t)top[k] + 1) * sizeof **who);
    for (int64_t u = 0; u < top[k]; u++) who[k][u] = -1;
  }
  for (int64_t i = S->d0; i < S->d0 + S->nd; i++) /* two writers of one unit */
    for (int64_t u = 0; u < B->d[i].n; u++) {
      int64_t *w = &who[B->d[i].dbuf][B->d[i].d + u];
      if (*w >= 0) ok = 0;
      *w = i;
    }
  for (int64_t i = S->d0; i < S->d0 + S->nd; i++) { /* a read of another's write */
    const batch_desc *D = &B->d[i];
    for (int r = 0; r < (D->kind == BATCH_COMBINE ? 2 : 1); r++) {
      int buf = r ? D->s2buf : D->sbuf;
      int64_t at = r ? D->s2 : D->s;
      for (int64_t u = 0; u < D->n; u++) {
        int64_t w = at + u < top[buf] ? who[buf][at + u] : -1;
        if (w >= 0 && !(w == i && buf == D->dbuf && at == D->d)) ok = 0;
      }
    }
  }
  for (int k = 0; k < BUF_COUNT; k++) free(who[k]);
  return ok;
}

/* Merge batch b+1 into b (instructions and descriptors are consecutive). */
static void merge(collc_batches *B, int b) {
  B->b[b].end = B->b[b + 1].end;
  B->b[b].nd += B->b[b + 1].nd;
  B->of[B->b[b + 1].first] = -1;
  memmove(&B->b[b + 1], &B->b[b + 2], (size_t)(B->nb - b - 2) * sizeof *B->b);
  B->nb--;
  for (int k = b + 1; k < B->nb; k++) B->of[B->b[k].first] = k;
}

/* Every adjacent cut of P's batches merged in turn: verifier == brute force. */
static void try_merges(const collc_prog *P, const char *what) {
  collc_batches B0;
  if (batch_build(P, &B0)) return;
  for (int b = 0; b + 1 < B0.nb; b++) {
    if (B0.b[b].end != B0.b[b + 1].first) continue;
    collc_batches B;
    char why[256] = "";
    if (batch_build(P, &B)) break;
    merge(&B, b);
    int v = verify_batches(P, &B, why, sizeof why), bf = brute_ok(&B, b);
    CHECK(v == bf, "%s: batches %d+%d merged: verifier %d, brute force %d (%s)", what, b,
          b + 1, v, bf, why);
    merges++, rejected += !v;
    batch_free(&B);
  }
  batch_free(&B0);
}

/* The batches of one program: both checks pass, every local instruction batched. */
static void check_program(const collc_prog *P, const char *what) {
  collc_batches B;
  char why[256] = "";
  if (!CHECK(batch_build(P, &B) == 0, "%s: out of memory", what)) return;
  CHECK(verify_batches(P, &B, why, sizeof why), "%s: %s", what, why);
  for (int b = 0; b < B.nb; b++) CHECK(brute_ok(&B, b), "%s: batch %d fails brute force", what, b);
  int local = 0, inb = 0;
  for (int a = 0; a < P->nins; a++) local += batch_local(P->ins[a].op);
  for (int b = 0; b < B.nb; b++) inb += B.b[b].end - B.b[b].first;
  CHECK(local == inb, "%s: %d local instructions, %d in batches", what, local, inb);
  programs++, descs += B.nd, batches += B.nb;
  batch_free(&B);
  try_merges(P, what);
}

/* sweep_registry's callback: every rank's program of (s, c). */
static void each(void *arg, const collc_spec *s, const collc_choice *c, const char *text) {
  ((long *)arg)[c->algo]++;
  for (int r = 0; r < s->p; r++) {
    collc_spec sr = spec_rank(s, r);
    char why[200], what[300];
    collc_prog *P = choice_compile(&sr, c, why, sizeof why);
    snprintf(what, sizeof what, "%s %s p=%d rank %d%s%s root=%d", coll_name(s->coll), text,
             s->p, r, s->in_place ? " in place" : "", s->commutative ? "" : " noncomm", s->root);
    if (!CHECK(P, "%s: %s", what, why)) continue;
    check_program(P, what);
    prog_free(P);
  }
}

/* Hand-broken tables of one program with several descriptors are rejected. */
static void broken_tables(void) {
  collc_spec s = {COLLC_COLL_REDUCE_SCATTER_BLOCK, 7, 2, 3, 8, 0, 0, 1, NULL, NULL, NULL, 0, 0};
  collc_choice c;
  char why[256];
  choice_parse(s.coll, "cyclic:-2,-2,-2", &c, why, sizeof why);
  choice_resolve(&s, &c, why, sizeof why);
  collc_prog *P = choice_compile(&s, &c, why, sizeof why);
  collc_batches B;
  if (!CHECK(P && !batch_build(P, &B) && B.nd >= 2, "setup")) return;
  CHECK(verify_batches(P, &B, why, sizeof why), "intact: %s", why);
  B.d[0].n++;
  CHECK(!verify_batches(P, &B, why, sizeof why), "a descriptor one unit too long passed");
  B.d[0].n--, B.b[0].nd--, B.nd--;
  for (int b = 1; b < B.nb; b++) B.b[b].d0--;
  memmove(&B.d[0], &B.d[1], (size_t)B.nd * sizeof *B.d);
  CHECK(!verify_batches(P, &B, why, sizeof why), "a dropped descriptor passed");
  batch_free(&B);
  batch_build(P, &B);
  B.b[0].first--; /* now holds instruction 2, a WAIT */
  B.of[B.b[0].first] = 0, B.of[B.b[0].first + 1] = -1;
  CHECK(!verify_batches(P, &B, why, sizeof why), "a batch holding a WAIT passed");
  batch_free(&B);
  prog_free(P);
}

int main(void) {
  long cases = 0, ran[64] = {0};
  for (int p = 1; p <= 8; p++) cases += sweep_registry(p, each, ran);
  for (int i = 0; i < algo_count; i++)
    CHECK(ran[i] || !strcmp(algo_registry[i]->name, "native"), "%s %s never ran",
          algo_registry[i]->coll < 0 ? "(all)" : coll_name(algo_registry[i]->coll),
          algo_registry[i]->name);
  broken_tables();
  printf("%ld cases, %ld programs, %ld batches, %ld descriptors; %ld merges, %ld rejected\n",
         cases, programs, batches, descs, merges, rejected);
  CHECK(cases > 500 && rejected > 0, "too few cases (%ld) or no merge rejected", cases);
  return unit_summary("batch");
}
