/* dispatch.c - run a compiled collective: choose, find or build the plan,
 * execute, count. Shared by every collective's entry point. */
#include <stdio.h>
#include <string.h>
#include "internal.h"
#include "dispatch.h"
#include "../plan/config.h"

/* Global AND of ok over comm (1 if the reduction itself fails? no: 0). */
static int agree(MPI_Comm comm, int ok) {
  int all = 0;
  if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) return 0;
  return all;
}

/* Build and cache the plan for key; NULL (on every rank) if any rank could
 * not. Collective over comm. */
static collc_plan *build(const dispatch_call *d, const collc_choice *c, const plan_key *key) {
  collc_state *st = state_get(d->comm, 1);
  char why[200] = "";
  if (!agree(d->comm, st != NULL) || state_priv(st, d->comm) != MPI_SUCCESS) return NULL;
  collc_prog *P = choice_compile(&d->spec, c, why, sizeof why);
  if (!agree(st->priv, P != NULL)) {
    collc_warn_once(key->algo, "cannot compile %s (%s); using native", key->algo, why);
    prog_free(P);
    return NULL;
  }
  MPI_Comm gcomm[COLLC_MAXF + 1];
  collc_plan *pl = NULL;
  int ok = P->ngroups <= COLLC_MAXF && state_group_comms(st, P, gcomm) == MPI_SUCCESS;
  if (ok) ok = plan_create(P, &d->bind, st->priv, gcomm, &pl) == MPI_SUCCESS;
  else prog_free(P);
  if (!agree(st->priv, ok)) {
    plan_free(pl);
    return NULL;
  }
  state_insert(st, key, pl);
  return pl;
}

/* The choice for call d: forced text, else COLLC_<COLL>, else the default.
 * Returns 0, or MPI_ERR_ARG for an unusable forced text. */
static int choose(const dispatch_call *d, const char *forced, collc_choice *c) {
  const char *env = config_get()->algorithm[d->spec.coll];
  const char *text = forced ? forced : *env ? env : select_default(&d->spec);
  char why[200];
  if (choice_parse(d->spec.coll, text, c, why, sizeof why) == 0 &&
      choice_resolve(&d->spec, c, why, sizeof why) == 0)
    return 0;
  if (forced) return MPI_ERR_ARG;
  collc_warn_once(text, "COLLC_%s=%s: %s; using the default rule", coll_name(d->spec.coll),
                  text, why);
  text = select_default(&d->spec);
  if (choice_parse(d->spec.coll, text, c, why, sizeof why) ||
      choice_resolve(&d->spec, c, why, sizeof why))
    return choice_parse(d->spec.coll, "native", c, why, sizeof why);
  return 0;
}

int dispatch(const dispatch_call *d, const char *forced, long long native_bytes) {
  collc_choice c;
  plan_key key;
  int rc = choose(d, forced, &c);
  if (rc) return collc_raise(d->comm, rc);
  if (d->spec.unit_bytes == 0) { /* nothing moves, on every rank */
    stats_add(d->spec.coll, c.algo, 0);
    return MPI_SUCCESS;
  }
  collc_plan *pl = NULL;
  if (!choice_is_native(&c)) {
    memset(&key, 0, sizeof key);
    key.coll = d->spec.coll;
    key.in_place = d->spec.in_place;
    key.scount = d->spec.in_place ? 0 : d->bind.sendcount;
    key.stype = d->spec.in_place ? MPI_DATATYPE_NULL : d->bind.sendtype;
    key.rcount = d->bind.recvcount;
    key.rtype = d->bind.recvtype;
    key.sserial = type_serial(key.stype);
    key.rserial = type_serial(key.rtype);
    choice_format(&c, key.algo, sizeof key.algo);
    collc_state *st = state_get(d->comm, 0);
    pl = st ? state_lookup(st, &key) : NULL;
    if (!pl && key.sserial >= 0 && key.rserial >= 0) pl = build(d, &c, &key);
  }
  if (!pl) {
    stats_add(d->spec.coll, 0, native_bytes);
    return d->native(d);
  }
  rc = plan_execute(pl, d->sendbuf, d->recvbuf);
  if (rc) return collc_raise(d->comm, rc);
  stats_add(d->spec.coll, c.algo, plan_bytes(pl));
  return MPI_SUCCESS;
}
