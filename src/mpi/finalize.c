/* finalize.c - MPI_Finalize: print statistics, free COMM_WORLD's state. */
#include "dispatch.h"
#include "../plan/config.h"
#include "../exec/segment.h"

int MPI_Finalize(void) {
  const collc_config *cfg = config_get();
  if (!cfg->disable) {
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (cfg->stats && rank == 0) stats_print();
    request_finalize();
    state_release(MPI_COMM_WORLD);
    state_release(MPI_COMM_SELF);
    state_free_keyvals();
    seg_finalize(); /* segments of freed requests and unfreed communicators */
  }
  return PMPI_Finalize();
}
