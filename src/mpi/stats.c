/* stats.c - per-process counts of collective calls by algorithm and where
 * its decision came from (COLLC_STATS=1), printed by world rank 0 at
 * MPI_Finalize, and of wisdom files (COLLC_WISDOM) this rank loaded, saved
 * and ignored. */
#include <stdio.h>
#include "internal.h"
#include "../plan/config.h"
#include "../exec/memclass.h"

#define STATS_MAX_ALGOS 64

static struct {
  long long calls, bytes;
} stats[2 * COLLC_COLL_COUNT][STATS_MAX_ALGOS][SRC_COUNT]; /* blocking and persistent, then
                                                              nonblocking */

/* The stats lines' names of the SRC_* sources. */
static const char *const src_names[SRC_COUNT] = {"none", "tuning", "builtin", "simulator",
                                                 "env", "info", "call", "guard"};

void stats_count(int coll, int algo, int src, long long bytes) {
  if (coll < 0 || coll >= 2 * COLLC_COLL_COUNT || algo < 0 || algo >= STATS_MAX_ALGOS) return;
  if (src < 0 || src >= SRC_COUNT) src = SRC_NONE;
  __atomic_fetch_add(&stats[coll][algo][src].calls, 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&stats[coll][algo][src].bytes, bytes, __ATOMIC_RELAXED);
}

static long long wisdom[3]; /* loaded, saved, ignored */
static long long batch_plans[2]; /* COLLC_EXEC=batch: plans one by one, in batches */

static long long device_calls[2 * COLLC_COLL_COUNT];
static long long device_plans[COLLC_COLL_COUNT][STATS_MAX_ALGOS][2]; /* CUDA backend, staged */
static const char *const device_via[2] = {"cuda", "staged"};

void stats_device(int coll) {
  if (coll >= 0 && coll < 2 * COLLC_COLL_COUNT)
    __atomic_fetch_add(&device_calls[coll], 1, __ATOMIC_RELAXED);
}

void stats_device_plan(int coll, int algo, int staged) {
  if (coll >= 0 && coll < COLLC_COLL_COUNT && algo >= 0 && algo < STATS_MAX_ALGOS)
    __atomic_fetch_add(&device_plans[coll][algo][!!staged], 1, __ATOMIC_RELAXED);
}

void stats_batch(int batched) {
  __atomic_fetch_add(&batch_plans[!!batched], 1, __ATOMIC_RELAXED);
}

void stats_wisdom(int loaded, int saved, int ignored) {
  __atomic_fetch_add(&wisdom[0], loaded, __ATOMIC_RELAXED);
  __atomic_fetch_add(&wisdom[1], saved, __ATOMIC_RELAXED);
  __atomic_fetch_add(&wisdom[2], ignored, __ATOMIC_RELAXED);
}

void stats_print(void) {
  int any = 0;
  for (int c = 0; c < 2 * COLLC_COLL_COUNT; c++)
    for (int a = 0; a < algo_count && a < STATS_MAX_ALGOS; a++)
      for (int s = 0; s < SRC_COUNT; s++)
        if (stats[c][a][s].calls && ++any)
          fprintf(stderr, "collc-stats: %s%s %s calls=%lld bytes=%lld from=%s\n",
                  c >= COLLC_COLL_COUNT ? "i" : "", coll_name(c % COLLC_COLL_COUNT),
                  algo_registry[a]->name, stats[c][a][s].calls, stats[c][a][s].bytes,
                  src_names[s]);
  for (int c = 0; c < 2 * COLLC_COLL_COUNT; c++)
    if (device_calls[c])
      fprintf(stderr, "collc-stats: %s%s native mem=cuda calls=%lld (device buffers: the MPI "
              "library's call)\n", c >= COLLC_COLL_COUNT ? "i" : "",
              coll_name(c % COLLC_COLL_COUNT), device_calls[c]);
  for (int c = 0; c < COLLC_COLL_COUNT; c++)
    for (int a = 0; a < algo_count && a < STATS_MAX_ALGOS; a++)
      for (int v = 0; v < 2; v++)
        if (device_plans[c][a][v])
          fprintf(stderr, "collc-stats: %s %s mem=cuda calls=%lld via=%s\n", coll_name(c),
                  algo_registry[a]->name, device_plans[c][a][v], device_via[v]);
  if (!any) fprintf(stderr, "collc-stats: no collective served by collc\n");
  if (atomic_load(&memclass_state)) fprintf(stderr, "collc-cuda: %s\n", memclass_how());
  rules_print();
  guard_print();
  if (batch_plans[0] || batch_plans[1])
    fprintf(stderr, "collc-batch: plans=%lld batched=%lld scalar=%lld\n",
            batch_plans[0] + batch_plans[1], batch_plans[1], batch_plans[0]);
  if (wisdom[0] || wisdom[1] || wisdom[2])
    fprintf(stderr, "collc-wisdom: loaded=%lld saved=%lld ignored=%lld\n", wisdom[0], wisdom[1],
            wisdom[2]);
  fflush(stderr);
}
