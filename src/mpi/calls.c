/* calls.c - the call cache: the first thing a collective call meets.
 *
 * A call's arguments apart from its buffers (collective, counts, datatypes,
 * operation, root, in-place) are hashed to a direct-mapped slot of the
 * communicator's table, which says what served the same call last time:
 * the native call, a plan (with its group communicators), or nothing to
 * move. A hit costs the hash, one key comparison and, for derived
 * datatypes and user operations only, a check that the handle still names
 * the same object (MPI reuses the handles of freed ones). The decision and
 * binding caches behind it (cache.c) are only consulted on a miss; they own
 * the plans, so any eviction there flushes this table. */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

/* Slot of k (one multiply: the fields mixed, then the high bits). */
static unsigned slot_of(const call_key *k) {
  uint64_t h = (uint64_t)(uintptr_t)k->rtype ^ ((uint64_t)(uint32_t)k->rcount << 24) ^
               ((uint64_t)(uintptr_t)k->op << 3) ^ ((uint64_t)(uintptr_t)k->stype << 7) ^
               ((uint64_t)(uint32_t)k->scount << 40) ^ ((uint64_t)k->coll << 56) ^
               ((uint64_t)(uint32_t)k->root << 12) ^ (uint64_t)k->in_place ^ k->chash;
  return (unsigned)((h * 0x9E3779B97F4A7C15ull) >> 58) % CALL_SLOTS;
}

/* Whether the objects behind e's handles are the ones e was made for. */
static int still_same(const call_entry *e) {
  int commute = 1;
  if (e->rserial && type_serial(e->key.rtype) != e->rserial) return 0;
  if (e->sserial && type_serial(e->key.stype) != e->sserial) return 0;
  if (e->user_op && (PMPI_Op_commutative(e->key.op, &commute) || commute != e->commute)) return 0;
  return 1;
}

const call_entry *call_find(const call_entry *tab, const call_key *k) {
  if (!tab) return NULL;
  const call_entry *e = &tab[slot_of(k)];
  if (!e->kind || !call_key_equal(&e->key, k)) return NULL;
  if ((e->rserial | e->sserial | e->user_op) && !still_same(e)) return NULL;
  if (k->chash && e->kind == CALL_PLAN && !plan_counts_are(e->plan, k->counts, k->displs))
    return NULL;
  return e;
}

int plan_counts_are(const collc_plan *pl, const int64_t *counts, const int64_t *displs) {
  const collc_spec *s = &plan_prog(pl)->spec;
  size_t n = (size_t)spec_vec_len(s) * sizeof *counts;
  if (!s->counts) return 1;
  if (!s->displs != !displs || (displs && memcmp(s->displs, displs, n))) return 0;
  return !memcmp(s->counts, counts, n);
}

uint64_t binding_chash(const collc_spec *s) {
  return spec_counts_hash(s) ^ (spec_displs_hash(s) * 0x9E3779B97F4A7C15ull);
}

/* Whether op is one of MPI's predefined operations. */
static int predefined(MPI_Op op) {
  static const MPI_Op ops[] = {MPI_OP_NULL, MPI_MAX,  MPI_MIN,  MPI_SUM,    MPI_PROD,
                               MPI_LAND,    MPI_LOR,  MPI_LXOR, MPI_BAND,   MPI_BOR,
                               MPI_BXOR,    MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE, MPI_NO_OP};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (op == ops[i]) return 1;
  return 0;
}

int call_prepare(call_entry *e, const call_key *k) {
  e->key = *k;
  e->rserial = type_serial(k->rtype);
  e->sserial = k->stype == MPI_DATATYPE_NULL ? 0 : type_serial(k->stype);
  e->user_op = !predefined(k->op);
  e->commute = 1;
  if (e->rserial < 0 || e->sserial < 0) return -1;
  if (e->user_op && PMPI_Op_commutative(k->op, &e->commute)) return -1;
  return 0;
}

call_entry *call_slot(call_entry **tab, const call_key *k) {
  calls_changed(); /* (the caller overwrites the slot: memos of it are stale) */
  if (!*tab && !(*tab = calloc(CALL_SLOTS, sizeof **tab))) return NULL;
  return &(*tab)[slot_of(k)];
}

void call_add(collc_state *st, const call_key *k, const call_entry *e) {
  call_entry n = *e, *slot;
  if (call_prepare(&n, k) == 0 && (slot = call_slot(&st->calls, k))) *slot = n;
}

void call_flush(collc_state *st) {
  calls_changed();
  if (st->calls) memset(st->calls, 0, CALL_SLOTS * sizeof *st->calls);
  if (st->fcalls) memset(st->fcalls, 0, CALL_SLOTS * sizeof *st->fcalls);
}

/* The forced-call slot of (k, text), *len the text's length: k's slot
 * moved by the text's hash (FNV-1a), so that calls alternating between
 * algorithms keep one slot each. */
static unsigned forced_slot(const call_key *k, const char *text, size_t *len) {
  uint64_t h = 14695981039346656037ull;
  size_t n = 0;
  for (; text[n]; n++) h = (h ^ (unsigned char)text[n]) * 1099511628211ull;
  *len = n;
  return (slot_of(k) + (unsigned)(h >> 32)) % CALL_SLOTS;
}

const call_entry *forced_find(const collc_state *st, const call_key *k, const char *text) {
  size_t n;
  if (!st->fcalls || k->chash || k->counts) return NULL;
  const forced_entry *f = &st->fcalls[forced_slot(k, text, &n)];
  if (!f->e.kind || n >= FORCED_TEXT || memcmp(f->text, text, n + 1) ||
      !call_key_equal(&f->e.key, k))
    return NULL;
  return (f->e.rserial | f->e.sserial | f->e.user_op) && !still_same(&f->e) ? NULL : &f->e;
}

void forced_add(collc_state *st, const call_key *k, const char *text, const call_entry *e) {
  size_t n;
  unsigned s = forced_slot(k, text, &n);
  call_entry c = *e;
  if (n >= FORCED_TEXT || k->chash || k->counts || call_prepare(&c, k)) return;
  if (!st->fcalls && !(st->fcalls = calloc(CALL_SLOTS, sizeof *st->fcalls))) return;
  st->fcalls[s].e = c;
  memcpy(st->fcalls[s].text, text, n + 1);
}

atomic_uint calls_gen = 1;
call_memo call_memos[2 * COLLC_COLL_COUNT][MEMO_WAYS];

void calls_changed(void) { atomic_fetch_add_explicit(&calls_gen, 1, memory_order_acq_rel); }

void memo_put(MPI_Comm comm, const call_key *k, int nb, const call_entry *e, collc_state *st) {
#ifdef SMPI_SHARED_MALLOC
  (void)comm, (void)k, (void)nb, (void)e, (void)st;
#else
  const collc_config *cfg = config_get();
  if (e->rserial | e->sserial | e->user_op || k->chash || k->counts || cfg->stats || cfg->disable ||
      request_threaded())
    return;
  call_memo *m = call_memos[2 * k->coll + nb]; /* (most recent first) */
  memmove(m + 1, m, (MEMO_WAYS - 1) * sizeof *m);
  const call_key *q = &e->key;
  m[0] = (call_memo){.comm = comm, .gen = atomic_load_explicit(&calls_gen, memory_order_acquire),
                     .p = st->p, .native = e->kind == CALL_NATIVE,
                     .in_place = q->in_place, .root = q->root, .scount = q->scount,
                     .rcount = q->rcount, .stype = q->stype, .rtype = q->rtype, .op = q->op,
                     .e = e, .st = st};
#endif
}
