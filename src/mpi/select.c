/* select.c - the default algorithm rule, used when COLLC_<COLLECTIVE> is unset.
 *
 * The rule must never be knowingly slower than the native collective: it
 * picks one of ours only where the benchmark measured it faster, and native
 * everywhere else. Measurements (README, "Default rule"; collc-bench, 40
 * repetitions, min of the slowest rank, 2-core machine, oversubscribed):
 *
 *   Open MPI 4.1, all-to-all (bench/out/alltoall-openmpi-p*.txt and a count
 *   sweep 1..512 ints at p = 16, 24, 32, 48, 64):
 *     p = 16..31, blocks of 16..256 bytes: linear (all sends and receives
 *       posted at once) 1.15x - 2.2x faster than native; torus d=2 no
 *       better; at 4-8 bytes within noise (0.95x - 1.28x), left native;
 *     p >= 32, blocks <= 400 bytes: torus with 2 balanced dims (point-to-
 *       point rounds) 1.1x - 3.1x faster than native and ahead of linear
 *       (p = 32: 2.5x at 4 bytes, 2.8x at 400 bytes) - the paper's
 *       finding for <= 100 ints at p = 1152;
 *     larger blocks, and every size at p <= 12: native as fast or faster.
 *   MPICH 4.0: no size where ours is reliably faster on this machine (its
 *     polling progress engine quantises oversubscribed timings to ~32 ms
 *     scheduler slices), so native throughout.
 */
#include <pthread.h>
#include <string.h>
#include "internal.h"

static int is_open_mpi;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void detect_library(void) {
  char v[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  if (PMPI_Get_library_version(v, &len) == MPI_SUCCESS && len > 0)
    is_open_mpi = strstr(v, "Open MPI") != NULL;
}

/* All-to-all: Open MPI's small- and medium-block window where ours win. */
static const char *alltoall_rule(const collc_spec *s) {
  pthread_once(&once, detect_library);
  if (!is_open_mpi || s->p < 16) return "native";
  if (s->p >= 32 && s->unit_bytes <= 400) return "torus:d=2";
  if (s->unit_bytes >= 16 && s->unit_bytes <= 256) return "linear";
  return "native";
}

const char *select_default(const collc_spec *s) {
  if (s->coll == COLLC_COLL_ALLTOALL) return alltoall_rule(s);
  return "native";
}
