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
         a->text == b->text && !strcmp(a->algo, text);
}

static int binding_equal(const binding_key *a, const binding_key *b) {
  return a->in_place == b->in_place && a->scount == b->scount && a->rcount == b->rcount &&
         a->count == b->count &&
         a->stype == b->stype && a->rtype == b->rtype && a->sserial == b->sserial &&
         a->rserial == b->rserial && a->op == b->op;
}

/* Free decision D's plans. */
static void decision_clear(decision *D) {
  for (int i = 0; i < D->nbound; i++) plan_free(D->bound[i].plan);
  D->nbound = 0;
}

decision *cache_decision(collc_state *st, const decision_key *key, const char *text) {
  for (int i = 0; i < st->ndec; i++)
    if (decision_equal(&st->dec[i]->key, key, text)) {
      decision *hit = st->dec[i];
      memmove(&st->dec[1], &st->dec[0], (size_t)i * sizeof hit);
      return st->dec[0] = hit;
    }
  return NULL;
}

decision *cache_add_decision(collc_state *st, const decision_key *key, const char *text) {
  decision *D = calloc(1, sizeof *D);
  if (!D) return NULL;
  D->key = *key;
  snprintf(D->key.algo, sizeof D->key.algo, "%s", text);
  if (st->ndec == STATE_MAX_DECISIONS) {
    decision_clear(st->dec[--st->ndec]);
    free(st->dec[st->ndec]);
  }
  memmove(&st->dec[1], &st->dec[0], (size_t)st->ndec * sizeof st->dec[0]);
  st->dec[0] = D;
  st->ndec++;
  return D;
}

collc_plan *cache_plan(decision *D, const binding_key *key) {
  for (int i = 0; i < D->nbound; i++)
    if (binding_equal(&D->bound[i].key, key)) {
      __typeof__(D->bound[0]) hit = D->bound[i];
      memmove(&D->bound[1], &D->bound[0], (size_t)i * sizeof hit);
      D->bound[0] = hit;
      return hit.plan;
    }
  return NULL;
}

void cache_add_plan(decision *D, const binding_key *key, collc_plan *plan) {
  if (D->nbound == STATE_MAX_BINDINGS) plan_free(D->bound[--D->nbound].plan);
  memmove(&D->bound[1], &D->bound[0], (size_t)D->nbound * sizeof D->bound[0]);
  D->bound[0].key = *key;
  D->bound[0].plan = plan;
  D->nbound++;
}

void cache_clear(collc_state *st) {
  for (int i = 0; i < st->ndec; i++) {
    decision_clear(st->dec[i]);
    free(st->dec[i]);
  }
  st->ndec = 0;
}
