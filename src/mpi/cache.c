/* cache.c - the two-level plan cache of a communicator.
 *
 * Level 1, decisions: keyed by values every rank shares (collective,
 * selection text, bytes, root, in-place, commutativity); a miss does the
 * collective work (choice, agreement, group communicators). Level 2,
 * bindings: per decision, keyed by this rank's datatypes and counts; a miss
 * compiles and binds locally. Both are small LRU arrays. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

static int decision_equal(const decision_key *a, const decision_key *b, const char *text) {
  return a->coll == b->coll && a->in_place == b->in_place && a->root == b->root &&
         a->commutative == b->commutative && a->bytes == b->bytes && a->ext == b->ext &&
         a->text == b->text && a->chash == b->chash && a->agreed == b->agreed &&
         !strcmp(a->algo, text);
}

static int binding_equal(const binding_key *a, const binding_key *b) {
  return a->in_place == b->in_place && a->scount == b->scount && a->rcount == b->rcount &&
         a->count == b->count &&
         a->stype == b->stype && a->rtype == b->rtype && a->sserial == b->sserial &&
         a->rserial == b->rserial && a->op == b->op && a->chash == b->chash;
}

/* Free binding B's plan (other references may keep it alive). */
static void binding_free(binding *B) {
  plan_free(B->plan);
  free(B->gcomm);
}

/* Free decision D's plans. */
static void decision_clear(decision *D) {
  for (int i = 0; i < D->nbound; i++) binding_free(&D->bound[i]);
  D->nbound = 0;
}

/* (A hit does not reorder: lookups happen on some ranks only, where others
 * took the call cache's fast path, so an order they changed would evict
 * different decisions on different ranks. Insertions are collective, so
 * evicting the oldest insertion is the same everywhere.) */
decision *cache_decision(collc_state *st, const decision_key *key, const char *text) {
  for (int i = 0; i < st->ndec; i++)
    if (decision_equal(&st->dec[i]->key, key, text)) return st->dec[i];
  return NULL;
}

decision *cache_add_decision(collc_state *st, const decision_key *key, const char *text) {
  decision *D = calloc(1, sizeof *D);
  if (!D) return NULL;
  D->key = *key;
  snprintf(D->key.algo, sizeof D->key.algo, "%s", text);
  st->version++; /* (nonblocking calls decide from the decisions) */
  if (st->ndec == STATE_MAX_DECISIONS) {
    call_flush(st);
    decision_clear(st->dec[--st->ndec]);
    free(st->dec[st->ndec]);
  }
  memmove(&st->dec[1], &st->dec[0], (size_t)st->ndec * sizeof st->dec[0]);
  st->dec[0] = D;
  st->ndec++;
  return D;
}

binding *cache_plan(decision *D, const binding_key *key) {
  for (int i = 0; i < D->nbound; i++)
    if (binding_equal(&D->bound[i].key, key)) {
      binding hit = D->bound[i];
      memmove(&D->bound[1], &D->bound[0], (size_t)i * sizeof hit);
      D->bound[0] = hit;
      return &D->bound[0];
    }
  return NULL;
}

binding *cache_add_plan(collc_state *st, decision *D, const binding_key *key, collc_plan *plan,
                        MPI_Comm *gcomm) {
  if (D->nbound == STATE_MAX_BINDINGS) {
    call_flush(st);
    binding_free(&D->bound[--D->nbound]);
  }
  memmove(&D->bound[1], &D->bound[0], (size_t)D->nbound * sizeof D->bound[0]);
  D->bound[0] = (binding){*key, plan, gcomm};
  D->nbound++;
  return &D->bound[0];
}

void cache_clear(collc_state *st) {
  call_flush(st);
  for (int i = 0; i < st->ndec; i++) {
    decision_clear(st->dec[i]);
    free(st->dec[i]);
  }
  st->ndec = 0;
}
