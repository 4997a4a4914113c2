/* simselect.c - the default rule for communicators nobody measured: ask
 * the cost simulator (src/check/simulate.h).
 *
 * From COLLC_SIM_MIN_P ranks (default 65: the measured rows end at 64),
 * where the measured table (select.c) has no row, rank 0 simulates every
 * candidate below that fits the call, and the algorithm the native library
 * documents for it (sim_native_model), under COLLC_SIM_PARAMS (default
 * "paper": a 100 Gbit/s cluster). A candidate replaces native only when
 * predicted 1.2x faster, a margin for the model's error. The pick is
 * broadcast (the call is collective, so every rank is here) and kept per
 * collective, commutativity and half decade of bytes: one simulation per
 * size class and communicator. At p = 1152 all candidates take ~1.5 s of
 * rank 0's time once per class; COLLC_SIM=0 turns this off.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "internal.h"
#include "../check/simulate.h"
#include "../plan/config.h"

/* Candidates per collective (its row's, in order of preference on equal
 * prediction). */
static const char *const *candidates(int coll) { return coll_desc_of(coll)->sim_candidates; }

/* Half decade of b (0 for b < 3.2 B). */
static int bucket(long long b) {
  int k = b > 1 ? (int)floor(2 * log10((double)b)) : 0;
  return k < 0 ? 0 : k >= SIM_BUCKETS ? SIM_BUCKETS - 1 : k;
}

/* Rank 0's pick: the index of the fastest candidate, or -1 for native. */
static int simulate_pick(const collc_spec *s) {
  sim_params M;
  sim_report R = {0};
  collc_choice c;
  char why[200], model[256];
  const char *params = config_get()->sim_params;
  if (sim_params_parse(params, &M, why, sizeof why)) {
    collc_warn_once("sim-params", "COLLC_SIM_PARAMS: %s; the default rule keeps native", why);
    return -1;
  }
  const char *nat = sim_native_model(s, model, sizeof model);
  if (choice_parse(s->coll, nat, &c, why, sizeof why) || choice_resolve(s, &c, why, sizeof why) ||
      !sim_choice(s, &c, &M, &R))
    return -1; /* cannot model native: keep it */
  double t = 0;
  int best = sim_best(s, candidates(s->coll), &M, &t);
  return best >= 0 && t * 1.2 < R.time ? best : -1;
}

const char *select_simulated(const collc_spec *s, MPI_Comm comm, collc_state *st) {
  int comm_ok = !coll_reduces(s->coll) || s->commutative, rank = 0, pick = -1;
  signed char none = 0, *m = st ? &st->simsel[s->coll][comm_ok][bucket(select_bytes(s))] : &none;
  if (*m == 0) { /* every rank is here (the same memo), and joins the broadcast; one without
                    state (out of memory) joins and keeps native, remembering nothing */
    PMPI_Comm_rank(comm, &rank);
    if (rank == 0) pick = simulate_pick(s);
    if (PMPI_Bcast(&pick, 1, MPI_INT, 0, comm) != MPI_SUCCESS) pick = -1;
    *m = (signed char)(st ? pick + 2 : 1);
    if (st) st->version++; /* (nonblocking calls may now use the pick) */
  }
  return *m >= 2 ? candidates(s->coll)[*m - 2] : "native";
}

const char *select_simulated_known(const collc_spec *s, const collc_state *st) {
  int comm_ok = !coll_reduces(s->coll) || s->commutative;
  signed char m = st->simsel[s->coll][comm_ok][bucket(select_bytes(s))];
  return m >= 2 ? candidates(s->coll)[m - 2] : "native";
}
