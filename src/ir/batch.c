/* batch.c - group local instructions into batches (batch.h).
 *
 * A run of consecutive local instructions is cut where an instruction
 * conflicts with the batch so far: it reads what an earlier one of the batch
 * writes, or writes what an earlier one reads or writes. Conflicts are found
 * on each operand's bounding units [off + lo, off + hi) of its buffer, which
 * is conservative (interleaved strided operands conflict too; a cut costs a
 * kernel launch, never a wrong result). The verifier (check/verify.h:
 * verify_batches) proves the result on the exact descriptors. */
#include <stdlib.h>
#include "batch.h"
#include "chunk.h"

#define BATCH_MAX_INS 256

int batch_local(int op) {
  return op == COLLC_OP_COPY || op == COLLC_OP_REDUCE || op == COLLC_OP_COMBINE;
}

/* Whether operands a and b (either may be BUF_NONE) share a bounding unit. */
static int touch(const collc_prog *P, collc_opnd a, collc_opnd b) {
  if (a.buf == BUF_NONE || a.buf != b.buf) return 0;
  const collc_shape *A = &P->shapes[a.shape], *B = &P->shapes[b.shape];
  return a.off + A->lo < b.off + B->hi && b.off + B->lo < a.off + A->hi;
}

/* The operands instruction I reads (up to three; BUF_NONE for none). */
static void reads_of(const collc_instr *I, collc_opnd r[3]) {
  collc_opnd none = opnd(BUF_NONE, 0, 0);
  r[0] = I->src;
  r[1] = I->op == COLLC_OP_COMBINE ? I->src2 : none;
  r[2] = I->op == COLLC_OP_REDUCE ? I->dst : none;
}

/* Whether instruction J conflicts with an earlier instruction I of its batch. */
static int conflicts(const collc_prog *P, const collc_instr *I, const collc_instr *J) {
  collc_opnd ri[3], rj[3];
  reads_of(I, ri), reads_of(J, rj);
  if (touch(P, I->dst, J->dst)) return 1;
  for (int k = 0; k < 3; k++)
    if (touch(P, rj[k], I->dst) || touch(P, ri[k], J->dst)) return 1;
  return 0;
}

typedef struct {
  collc_batches *B;
  const collc_instr *I;
  int a;
} desc_arg;

/* Append chunk ch of instruction a as a descriptor (chunk_walk's callback). */
static int add_desc(void *arg, const chunk_t *ch) {
  desc_arg *x = arg;
  collc_batches *B = x->B;
  if (B->nd == B->cap_d) {
    int64_t cap = B->cap_d ? 2 * B->cap_d : 16;
    batch_desc *d = realloc(B->d, (size_t)cap * sizeof *d);
    if (!d) return COLLC_ENOMEM;
    B->d = d, B->cap_d = cap;
  }
  static const uint8_t kind[COLLC_OP_COUNT] = {
      [COLLC_OP_COPY] = BATCH_COPY, [COLLC_OP_REDUCE] = BATCH_REDUCE,
      [COLLC_OP_COMBINE] = BATCH_COMBINE};
  B->d[B->nd++] = (batch_desc){kind[x->I->op], (uint8_t)x->I->src.buf,
                               (uint8_t)x->I->src2.buf, (uint8_t)x->I->dst.buf, x->a,
                               ch->s, ch->s2, ch->d, ch->n};
  return 0;
}

/* Whether instruction a may join the batch that began at instruction first
 * (at most BATCH_MAX_INS instructions: the check is quadratic). */
static int joins(const collc_prog *P, int first, int a) {
  if (a - first >= BATCH_MAX_INS) return 0;
  for (int i = first; i < a; i++)
    if (conflicts(P, &P->ins[i], &P->ins[a])) return 0;
  return 1;
}

int batch_build(const collc_prog *P, collc_batches *B) {
  *B = (collc_batches){0};
  B->b = malloc(((size_t)P->nins + 1) * sizeof *B->b);
  B->of = malloc(((size_t)P->nins + 1) * sizeof *B->of);
  if (!B->b || !B->of) return batch_free(B), COLLC_ENOMEM;
  for (int a = 0; a < P->nins; a++) {
    B->of[a] = -1;
    if (!batch_local(P->ins[a].op)) continue;
    batch_span *open = B->nb ? &B->b[B->nb - 1] : NULL;
    if (!open || open->end != a || !joins(P, open->first, a)) {
      B->of[a] = B->nb;
      open = &B->b[B->nb++];
      *open = (batch_span){a, a, B->nd, 0};
    }
    desc_arg x = {B, &P->ins[a], a};
    if (chunk_walk(P, &P->ins[a], add_desc, &x)) return batch_free(B), COLLC_ENOMEM;
    open->end = a + 1;
    open->nd = B->nd - open->d0;
  }
  return 0;
}

void batch_free(collc_batches *B) {
  free(B->b), free(B->d), free(B->of);
  *B = (collc_batches){0};
}

void batch_print(const collc_batches *B, FILE *out) {
  static const char *const kind[BATCH_KINDS] = {"COPY", "REDUCE", "COMBINE"};
  fprintf(out, "batches: %d, descriptors: %lld\n", B->nb, (long long)B->nd);
  for (int b = 0; b < B->nb; b++) {
    const batch_span *S = &B->b[b];
    fprintf(out, "batch %d: instructions %d..%d, %lld descriptors\n", b, S->first, S->end - 1,
            (long long)S->nd);
    for (int64_t i = S->d0; i < S->d0 + S->nd; i++) {
      const batch_desc *D = &B->d[i];
      fprintf(out, "  %4d  %-8s %s+%lld", D->ins, kind[D->kind], buf_name(D->sbuf),
              (long long)D->s);
      if (D->kind == BATCH_COMBINE) fprintf(out, ", %s+%lld", buf_name(D->s2buf), (long long)D->s2);
      fprintf(out, " -> %s+%lld  n=%lld\n", buf_name(D->dbuf), (long long)D->d, (long long)D->n);
    }
  }
}
