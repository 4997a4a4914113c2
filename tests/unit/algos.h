/* algos.h - every registry algorithm of every collective, as test cases
 * (header-only; shared by tests/unit/batch.c and tests/mpi/batch.c).
 *
 * sweep_registry(p, fn, arg) calls fn for each (spec, choice) that fits p
 * ranks: every registry row with its default parameters plus a few
 * parameter variants, reductions of 37 elements (not divisible by p),
 * block collectives of 2 elements per block, counted ones (allgatherv,
 * reduce_scatter) blocks of (7q + 3) mod 5 elements (alltoallv: rank q
 * sends r (q + r + qr + 3) mod 5, every rank's vectors in the spec), in place and not, commutative
 * and not (where the algorithm serves it), roots 0 and p-1, layouts of
 * nodes of 2 and 4 ranks for node-aware rows and one node for shm. Choices
 * that do not fit (EUNFIT) are skipped; the count is returned. */
#ifndef COLLC_TESTS_ALGOS_H
#define COLLC_TESTS_ALGOS_H

#include <string.h>
#include "algo/algo.h"

typedef void (*sweep_fn)(void *arg, const collc_spec *s, const collc_choice *c, const char *text);

static const char *const sweep_variants[] = {"bruck:3", "torus:d=2", "tree:3", "tree:2,3",
                                             "hier:node=tree", "recexch:flat", NULL};

/* Run fn on spec s with choice text t when it parses and fits; 1 if it ran. */
static inline int sweep_one(const collc_spec *s, const char *t, sweep_fn fn, void *arg) {
  collc_choice c;
  char why[200];
  if (choice_parse(s->coll, t, &c, why, sizeof why)) return 0;
  if (choice_resolve(s, &c, why, sizeof why)) return 0;
  fn(arg, s, &c, t);
  return 1;
}

/* The specs of collective coll on p ranks with layout L, each with text t. */
static inline long sweep_specs(int coll, int p, const collc_layout *L, const char *t,
                               sweep_fn fn, void *arg) {
  const coll_desc *D = coll_desc_of(coll);
  int64_t counts[1024], total = 0; /* counted collectives: unequal blocks, some empty */
  long n = 0;
  if (D->counted && (D->counts_local ? 2 * p * p : p) > 1024) return 0;
  for (int q = 0; D->counted && !D->counts_local && q < p; q++) total += counts[q] = (q * 7 + 3) % 5;
  for (int q = 0; D->counts_local && q < p; q++) /* alltoallv: every rank's send, receive */
    for (int r = 0; r < p; r++) /* sides, symmetric (in place needs it), some empty */
      counts[2 * p * q + r] = counts[2 * p * q + p + r] = (q + r + q * r + 3) % 5;
  for (int ip = 0; ip < 2; ip++)
    for (int comm = D->reduces ? 0 : 1; comm < 2; comm++)
      for (int root = 0; root < (D->rooted && p > 1 ? 2 : 1); root++) {
        collc_spec s = {coll, p, 0, D->per_block ? 2 : D->counted ? total : 37, 8,
                        ip || D->always_in_place, root ? p - 1 : 0, comm, L, NULL, NULL, 0, 0};
        if (D->counted) s.counts = counts, s.vall = D->counts_local, s.agreed = D->root_counts;
        if (D->per_block) s.unit_bytes = 8 * s.count;
        if (ip && D->always_in_place) continue;
        n += sweep_one(&s, t, fn, arg);
      }
  return n;
}

/* Every registry row (and variant) of every collective on p ranks. */
static inline long sweep_registry(int p, sweep_fn fn, void *arg) {
  collc_layout *L2 = layout_regular(p, 2), *L4 = layout_regular(p, 4), *L1 = layout_regular(p, p);
  long n = 0;
  for (int coll = 0; coll < COLLC_COLL_COUNT; coll++)
    for (int i = 0; i < algo_count + 6; i++) {
      const collc_algo *A = i < algo_count ? algo_registry[i] : NULL;
      const char *t = A ? A->name : sweep_variants[i - algo_count];
      if ((A && A->coll >= 0 && A->coll != coll) || !strcmp(t, "native")) continue;
      int needs = algo_text_needs(coll, t);
      if (needs == ALGO_ANY) n += sweep_specs(coll, p, NULL, t, fn, arg);
      else if (needs == ALGO_ONE_NODE) n += sweep_specs(coll, p, L1, t, fn, arg);
      else n += sweep_specs(coll, p, L2, t, fn, arg) + sweep_specs(coll, p, L4, t, fn, arg);
    }
  layout_free(L1), layout_free(L2), layout_free(L4);
  return n;
}

#endif
