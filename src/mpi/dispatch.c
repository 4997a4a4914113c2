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

/* The selection text for call d: forced, else COLLC_<COLL>, else the
 * default rule. Plans are cached under this text: with p fixed by the
 * communicator and the counts in the key, it determines the plan. */
static const char *selection(const dispatch_call *d, const char *forced) {
  const char *env = config_get()->algorithm[d->spec.coll];
  return forced ? forced : *env ? env : select_default(&d->spec);
}

/* Parse and resolve text for d into c. An unusable forced text is
 * MPI_ERR_ARG; an unusable environment text warns once and falls back to
 * the default rule (and that to native). Returns 0 or MPI_ERR_ARG. */
static int choose(const dispatch_call *d, const char *text, int forced, collc_choice *c) {
  char why[200] = "text too long";
  if (strlen(text) < sizeof ((plan_key *)0)->algo &&
      choice_parse(d->spec.coll, text, c, why, sizeof why) == 0 &&
      choice_resolve(&d->spec, c, why, sizeof why) == 0)
    return 0;
  if (forced) return MPI_ERR_ARG;
  collc_warn_once(text, "%s=%s: %s; using the default rule",
                  config_get()->env_name[d->spec.coll], text, why);
  text = select_default(&d->spec);
  if (choice_parse(d->spec.coll, text, c, why, sizeof why) ||
      choice_resolve(&d->spec, c, why, sizeof why))
    return choice_parse(d->spec.coll, "native", c, why, sizeof why);
  return 0;
}

/* The plan cache key of call d under selection text. */
static void make_key(const dispatch_call *d, const char *text, plan_key *key) {
  memset(key, 0, sizeof *key);
  key->coll = d->spec.coll;
  key->in_place = d->spec.in_place;
  key->scount = d->spec.in_place ? 0 : d->bind.sendcount;
  key->stype = d->spec.in_place ? MPI_DATATYPE_NULL : d->bind.sendtype;
  key->rcount = d->bind.recvcount;
  key->rtype = d->bind.recvtype;
  key->sserial = type_serial(key->stype);
  key->rserial = type_serial(key->rtype);
  snprintf(key->algo, sizeof key->algo, "%s", text);
}

/* Compile, cache and return the plan for d (NULL: use the native call);
 * *algo gets the registry index served. Returns 0 or MPI_ERR_ARG. */
static int plan_for(const dispatch_call *d, const char *text, int forced, const plan_key *key,
                    collc_plan **pl, int *algo) {
  collc_choice c;
  int rc = choose(d, text, forced, &c);
  *pl = NULL;
  *algo = c.algo;
  if (rc || d->spec.unit_bytes == 0 || choice_is_native(&c)) return rc;
  if (key->sserial >= 0 && key->rserial >= 0) *pl = build(d, &c, key);
  if (*pl) state_set_algo(state_get(d->comm, 0), *pl, c.algo);
  return 0;
}

int dispatch(const dispatch_call *d, const char *forced, long long native_bytes) {
  const char *text = selection(d, forced);
  int algo = 0, rc;
  collc_plan *pl = NULL;
  if (strcmp(text, "native") != 0) {
    plan_key key;
    make_key(d, text, &key);
    collc_state *st = state_get(d->comm, 0);
    pl = st ? state_lookup(st, &key, &algo) : NULL;
    if (!pl && (rc = plan_for(d, text, forced != NULL, &key, &pl, &algo)))
      return collc_raise(d->comm, rc);
  }
  if (d->spec.unit_bytes == 0) { /* nothing moves, on every rank */
    stats_add(d->spec.coll, algo, 0);
    return MPI_SUCCESS;
  }
  if (!pl) {
    stats_add(d->spec.coll, 0, native_bytes);
    return d->native(d);
  }
  if ((rc = plan_execute(pl, d->sendbuf, d->recvbuf))) return collc_raise(d->comm, rc);
  stats_add(d->spec.coll, algo, plan_bytes(pl));
  return MPI_SUCCESS;
}
