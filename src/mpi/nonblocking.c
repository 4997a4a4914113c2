/* nonblocking.c - MPI's nonblocking collectives (MPI_Iallreduce, ...) from
 * the same plans as the blocking and persistent ones.
 *
 * MPI requires a nonblocking call to be local: it returns whatever the other
 * ranks do. So nothing here communicates. The choice is the one every rank
 * makes alike from what all ranks share: the environment (COLLC_<COLL>),
 * the default rule over the node layout once a blocking call has
 * discovered it, the simulator's picks and the decisions of blocking calls
 * (all made collectively, at the same point of every rank's sequence of
 * collectives). The rule has rows of its own for nonblocking calls
 * (where the library's MPI_I<coll> is slower than its blocking call). A
 * plan that needs collective setup (the node segment) serves a
 * nonblocking call only where a blocking call with the same decision key
 * has set it up; until then the rule's rows that need none decide (an
 * algorithm asked for by name: native). Group communicators only where
 * they exist; otherwise the call is native. An algorithm that needs an
 * agreement round (and no node segment) starts it as a native nonblocking
 * collective and is decided when it completes (nb_defers, nb_agreed). A nonblocking call whose plan is compiled
 * here binds its own duplicates of derived datatypes (MPI lets the user
 * free a type while the call runs).
 *
 * Choices are remembered per call key in st->nbcalls under st->version,
 * which every change of those inputs bumps, so a remembered choice is
 * always the one a fresh decision would make. The request itself
 * (request.c) waits, when it must, for the private communicator, for the
 * earlier executions holding its tag, and for the earlier exclusive ones. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dispatch.h"
#include "../plan/config.h"
#include "../exec/exec.h"

/* The selection text of nonblocking call d, its source into d->src:
 * COLLC_<COLL>, else the rule with its nonblocking rows (without
 * simulating: the simulator's pick only where a blocking call has asked
 * for it). */
static const char *nb_selection(dispatch_call *d, const char *forced, const collc_state *st) {
  const char *env = config_get()->algorithm[d->spec.coll], *t;
  if (forced) return (d->src = SRC_CALL), forced;
  if (*env) d->src = SRC_ENV, t = env;
  else if (select_simulates(&d->spec)) d->src = SRC_SIM, t = select_simulated_known(&d->spec, st);
  else t = select_nonblocking(&d->spec, 1, &d->src);
  return dispatch_guarded(d, t);
}

/* Whether t is a predefined datatype (or unused). */
static int named(MPI_Datatype t) { return t == MPI_DATATYPE_NULL || exec_type_named(t); }

/* Bind a plan of choice c for d compiled here, with its own duplicates of
 * derived datatypes, into e (plan and group communicators, owned).
 * MPI_SUCCESS, or -1 when it cannot serve (native), or an error class. */
static int nb_bind(const dispatch_call *d, collc_state *st, const collc_choice *c,
                   call_entry *e) {
  char why[200];
  dispatch_call b = *d;
  MPI_Comm g[COLLC_MAXF + 1];
  if (request_dup_types(&b)) return MPI_ERR_TYPE;
  collc_prog *P = dispatch_compile(&d->spec, c, why, sizeof why);
  int rc = P ? MPI_SUCCESS : MPI_ERR_INTERN, ng = P ? P->ngroups : 0;
  if (!rc && (ng > COLLC_MAXF || state_group_comms(st, P, g, 0))) rc = -1; /* no families */
  MPI_Comm *gc = ng && !rc ? malloc((size_t)ng * sizeof *gc) : NULL;
  if (!rc && ng && !gc) rc = MPI_ERR_NO_MEM;
  if (rc) prog_free(P);
  collc_plan *pl = NULL;
  if (!rc && !(rc = plan_create(P, &b.bind, &pl))) {
    if (ng) memcpy(gc, g, (size_t)ng * sizeof g[0]);
    plan_adopt_types(pl, b.bind.sendtype, b.bind.recvtype);
    e->plan = pl, e->gcomm = gc;
    return MPI_SUCCESS;
  }
  if (rc > 0) collc_warn_here("nb-compile", "nonblocking %s: %s", coll_name(d->spec.coll),
                              P ? "cannot bind its plan" : why);
  free(gc);
  request_free_types(&b);
  return rc;
}

/* The plan of nonblocking call d under choice c (decision D if a blocking
 * call made one) into e. MPI_SUCCESS, -1 (native) or an error class. */
static int nb_plan(const dispatch_call *d, collc_state *st, decision *D, const collc_choice *c,
                   call_entry *e) {
  binding_key bk;
  binding *B, tmp = {0};
  if (!named(d->bind.recvtype) || (!d->spec.in_place && !named(d->bind.sendtype)) || !D)
    return nb_bind(d, st, c, e);
  dispatch_binding_key(d, &bk);
  int rc = dispatch_plan_of(d, D, &bk, &B, &tmp), ng = 0;
  if (rc) return rc;
  ng = plan_prog(B->plan)->ngroups;
  MPI_Comm *gc = ng ? malloc((size_t)ng * sizeof *gc) : NULL;
  if (ng && !gc) rc = MPI_ERR_NO_MEM;
  if (gc) memcpy(gc, B->gcomm, (size_t)ng * sizeof *gc);
  if (B != &tmp && !rc) plan_ref(B->plan);
  if (B == &tmp) free(tmp.gcomm);
  if (rc) {
    if (B == &tmp) plan_free(tmp.plan);
    return rc;
  }
  e->plan = B->plan, e->gcomm = gc;
  return MPI_SUCCESS;
}

/* Whether text names a node-aware algorithm while d's node layout is not
 * known yet (no blocking collective has run on the communicator). */
static int nb_awaits_layout(const dispatch_call *d, const char *text) {
  collc_choice c;
  char why[120];
  return !d->spec.layout && choice_parse(d->spec.coll, text, &c, why, sizeof why) == 0 &&
         dispatch_uses_segment(&c);
}

/* Serve nonblocking d by choice c (decision D if a blocking call made
 * one) into e. MPI_SUCCESS (e empty: native), or an error class. */
static int nb_serve_by(dispatch_call *d, collc_state *st, decision *D, const collc_choice *c,
                    call_entry *e) {
  int rc = nb_plan(d, st, D, c, e);
  if (rc < 0) return MPI_SUCCESS;
  if (rc) return rc;
  const collc_prog *P = plan_prog(e->plan);
  e->kind = CALL_PLAN, e->algo = c->algo, e->bytes = plan_bytes(e->plan);
  e->excl = P->shm_units > 0 || P->ngroups > 0;
  return MPI_SUCCESS;
}

/* Serve nonblocking d natively into e (left empty), unless the native
 * call is unsafe here (guard_nonblocking): then by the guard's algorithm.
 * Every native outcome of nb_decide comes through here, so a fallback
 * (an unusable text, a blocking decision for native, no segment yet) never
 * reaches a native call the guard exists to avoid. */
static int nb_native_guarded(dispatch_call *d, collc_state *st, call_entry *e) {
  const char *g = guard_nonblocking(&d->spec);
  collc_choice c;
  if (!g || dispatch_choose(d, g, 0, &c) || choice_is_native(&c)) return MPI_SUCCESS;
  d->src = SRC_GUARD;
  return nb_serve_by(d, st, NULL, &c, e);
}

/* Serve d natively (by the guard where native is unsafe) into e because
 * node-aware text has no node segment yet; says so once. */
static int nb_unset(dispatch_call *d, collc_state *st, const char *text, call_entry *e) {
  collc_warn_once("nb-setup", "nonblocking %s %s: served natively (or by the guard) until a "
                  "blocking call of the same kind has set up its node segment",
                  coll_name(d->spec.coll), text);
  return nb_native_guarded(d, st, e);
}

/* What serves a nonblocking call whose agreeing algorithm does not fit
 * once the round has shown every rank's counts (elements of two sizes):
 * the collective's direct algorithm, which needs no round (every
 * collective with an agreeing algorithm has one: gatherv, scatterv,
 * alltoallv). Native cannot serve it there: its call would come later
 * than the caller's next collectives on some ranks. */
#define NB_AGREE_FALLBACK "linear"

/* Whether nonblocking call d under text makes its agreement round
 * (request_nb_agree): text parses and names an algorithm that agrees and
 * uses no node segment (a nonblocking call cannot make one; those that
 * agree have no group communicators). Not under SMPI, whose simulated
 * time a polling wait does not advance. */
static int nb_defers(const dispatch_call *d, const char *text) {
#ifdef SMPI_SHARED_MALLOC
  (void)d, (void)text;
  return 0;
#else
  collc_choice c;
  char why[120];
  return dispatch_agree_needed(d, text) && !dispatch_empty(&d->spec) &&
         choice_parse(d->spec.coll, text, &c, why, sizeof why) == 0 && !dispatch_uses_segment(&c);
#endif
}

int nb_agreed(dispatch_call *d, collc_state *st, const char *text, int forced, call_entry *e) {
  collc_choice c;
  char why[200];
  if (choice_parse(d->spec.coll, text, &c, why, sizeof why) ||
      choice_resolve(&d->spec, &c, why, sizeof why)) {
    char key[64];
    if (forced) return MPI_ERR_ARG;
    snprintf(key, sizeof key, "nb-agree %s %s", coll_name(d->spec.coll), text);
    collc_warn_once(key, "nonblocking %s %s: %s; served by %s", coll_name(d->spec.coll), text,
                    why, NB_AGREE_FALLBACK);
    if (choice_parse(d->spec.coll, NB_AGREE_FALLBACK, &c, why, sizeof why) ||
        choice_resolve(&d->spec, &c, why, sizeof why))
      return MPI_ERR_INTERN;
  }
  int rc = nb_serve_by(d, st, NULL, &c, e);
  if (!rc && e->kind == CALL_PLAN && e->excl) /* (took no place in the exclusive order) */
    plan_free(e->plan), free((void *)e->gcomm), e->gcomm = NULL, e->kind = 0;
  return rc || e->kind == CALL_PLAN ? rc : MPI_ERR_INTERN; /* (native, exclusive: never) */
}

/* Decide nonblocking call d (d->spec.layout set if known) with algorithm
 * forced (NULL: selection) into e (kind and algo; a plan and its group
 * communicators, owned), or (*deferred) make its request now, which
 * decides when its agreement round completes. MPI_SUCCESS, MPI_ERR_ARG
 * for a forced text that does not parse or fit, or another class (a plan
 * unusable on this rank only, which would leave the ranks disagreeing:
 * out of memory). */
static int nb_decide(dispatch_call *d, const char *forced, collc_state *st, call_entry *e,
                     int *deferred) {
  collc_choice c;
  decision_key dk;
  const char *text = nb_selection(d, forced, st);
  int by_name = forced || *config_get()->algorithm[d->spec.coll];
  if (by_name && nb_awaits_layout(d, text)) return nb_unset(d, st, text, e);
  if (nb_defers(d, text)) return (*deferred = 1), request_nb_agree(d, st, text, forced != NULL);
  int rc = strcmp(text, "native") ? dispatch_choose(d, text, forced != NULL, &c) : -1;
  if (rc > 0) return rc;
  if (dispatch_empty(&d->spec)) { /* nothing moves, on every rank */
    e->kind = CALL_EMPTY, e->algo = rc ? 0 : c.algo;
    return MPI_SUCCESS;
  }
  if (rc || choice_is_native(&c)) return nb_native_guarded(d, st, e);
  dispatch_decision_key(d, &dk);
  decision *D = cache_decision(st, &dk, text);
  if (D && D->algo == 0) return nb_native_guarded(d, st, e); /* (the blocking call could not build it) */
  if (D) c = D->choice;
  else if (dispatch_uses_segment(&c)) { /* no segment set up for it */
    if (by_name) return nb_unset(d, st, text, e);
    text = dispatch_guarded(d, select_nonblocking(&d->spec, 0, &d->src)); /* rows needing no set-up */
    if (!strcmp(text, "native") || dispatch_choose(d, text, 0, &c) || choice_is_native(&c))
      return nb_native_guarded(d, st, e);
  }
  return nb_serve_by(d, st, D, &c, e);
}

/* Empty e's contents (what a nonblocking entry owns); lender: the state
 * whose call cache holds e, whose requests may borrow its plan (NULL: none
 * can). */
static void entry_free(collc_state *lender, call_entry *e) {
  if (e->kind == CALL_PLAN) {
    if (lender) request_unborrow(lender, e->plan);
    plan_free(e->plan), free((void *)e->gcomm);
  }
  e->kind = 0;
}

/* Serve d as e says; lent: e is st's call-cache entry (its plan is lent). */
static int nb_serve(const dispatch_call *d, collc_state *st, const call_entry *e, int lent) {
  if (e->kind == CALL_EMPTY) return request_nb_done(d, e->algo);
  return request_nb(d, st, e, lent);
}

int nb_native(const dispatch_call *d, long long bytes) {
  collc_state *st = d->ck ? state_get(d->comm, 1) : NULL;
  call_entry n = {.kind = CALL_NATIVE, .bytes = bytes, .src = d->src}, *slot;
  if (st && !call_prepare(&n, d->ck) && (slot = call_slot(&st->nbcalls, d->ck))) {
    entry_free(st, slot);
    n.version = st->version;
    dispatch_entry_buffers(&d->spec, &n);
    *slot = n;
  }
  stats_add(d->spec.coll + COLLC_COLL_COUNT, 0, d->src, bytes);
  return d->inative(d, d->ireq);
}

int nb_dispatch(const dispatch_call *d0, const char *forced, long long native_bytes) {
  dispatch_call call = *d0, *d = &call;
  call_entry e = {0}, *slot;
  collc_state *st = state_get(d->comm, 1);
  if (!st) return collc_raise(d->comm, MPI_ERR_NO_MEM);
  if (st->layout_done) call.spec.layout = st->layout;
  int deferred = 0, rc = nb_decide(d, forced, st, &e, &deferred);
  if (rc) return collc_raise(d->comm, rc);
  if (deferred) return MPI_SUCCESS; /* (its request made: never remembered, as a round's) */
  e.src = d->src;
  if (!e.kind) return nb_native(d, native_bytes);
  if (d->ck && !call_prepare(&e, d->ck) && (slot = call_slot(&st->nbcalls, d->ck))) {
    entry_free(st, slot);
    e.version = st->version;
    dispatch_entry_buffers(&d->spec, &e);
    *slot = e;
    return (rc = nb_serve(d, st, slot, 1)) ? collc_raise(d->comm, rc) : MPI_SUCCESS;
  }
  rc = nb_serve(d, st, &e, 0); /* (not remembered: served once, then let go) */
  entry_free(NULL, &e);
  return rc ? collc_raise(d->comm, rc) : MPI_SUCCESS;
}

int nb_fast(MPI_Comm comm, const call_key *k, const void *sendbuf, void *recvbuf,
            MPI_Request *req, int *rc) {
  const call_memo *m = memo_find(comm, k, 1);
  const call_entry *e;
  collc_state *st;
  if (!req) return FAST_MISS;
  if (m) e = m->e, st = m->st;
  else if (!(e = dispatch_fast_find(comm, k, 1, &st))) return FAST_MISS;
  if (e->version != st->version || !dispatch_buffers_plain(e, k, sendbuf, recvbuf) ||
      on_device(sendbuf, recvbuf))
    return FAST_MISS;
  if (e->kind == CALL_NATIVE) {
    if (!m) stats_add(k->coll + COLLC_COLL_COUNT, 0, e->src, e->bytes); /* (see memo_put) */
    return FAST_NATIVE;
  }
  dispatch_call d; /* (what nb_serve reads, no more: zeroing all of it cost 15 ns a call) */
  d.spec.coll = k->coll, d.sendbuf = sendbuf, d.recvbuf = recvbuf, d.comm = comm, d.ireq = req;
  d.src = e->src;
  *req = MPI_REQUEST_NULL;
  if ((*rc = nb_serve(&d, st, e, 1))) *rc = collc_raise(comm, *rc);
  return FAST_DONE;
}

void nb_clear(collc_state *st) {
  if (!st->nbcalls) return;
  calls_changed();
  for (int i = 0; i < CALL_SLOTS; i++) /* (no request lives: st has no references) */
    entry_free(NULL, &st->nbcalls[i]);
  free(st->nbcalls);
  st->nbcalls = NULL;
}
