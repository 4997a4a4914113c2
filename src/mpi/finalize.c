/* finalize.c - the end of a run: statistics, COMM_WORLD's state, the
 * segments. The work hangs off an MPI_COMM_SELF attribute (the standard's
 * hook at the start of MPI_Finalize), so it is done however MPI_Finalize is
 * reached: collc's MPI_Finalize, or a Fortran binding's PMPI_Finalize. */
#include <stdatomic.h>
#include "dispatch.h"
#include "../plan/config.h"
#include "../exec/segment.h"

static atomic_int hook_set, hook_done;
static int hook_keyval = MPI_KEYVAL_INVALID;

/* The end-of-run work, once; self: whether MPI_COMM_SELF's state is ours to
 * free here (not from inside MPI's deletion of MPI_COMM_SELF's attributes,
 * where MPI frees it itself). */
static void end_of_run(int self) {
  if (atomic_exchange(&hook_done, 1)) return;
  const collc_config *cfg = config_get(); /* (COLLC_DISABLE too: collc_* calls made states) */
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (cfg->stats && !cfg->disable && rank == 0) stats_print();
  request_finalize();
  state_release(MPI_COMM_WORLD);
  if (self) state_release(MPI_COMM_SELF);
  state_free_keyvals();
  seg_finalize(); /* segments of freed requests and unfreed communicators */
}

/* MPI_COMM_SELF's delete callback: MPI_Finalize has begun. */
static int hook_delete(MPI_Comm comm, int keyval, void *attr, void *extra) {
  (void)comm, (void)attr, (void)extra;
  end_of_run(0);
  if (keyval == hook_keyval) PMPI_Comm_free_keyval(&hook_keyval); /* (MPI keeps it till we return) */
  return MPI_SUCCESS;
}

void finalize_hook_install(void) {
  int init = 0, fin = 0, kv = MPI_KEYVAL_INVALID;
  if (atomic_load_explicit(&hook_set, memory_order_acquire)) return;
  PMPI_Initialized(&init);
  PMPI_Finalized(&fin);
  if (!init || fin || atomic_exchange(&hook_set, 1)) return;
  if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, hook_delete, &kv, NULL) != MPI_SUCCESS) return;
  if (PMPI_Comm_set_attr(MPI_COMM_SELF, kv, NULL) != MPI_SUCCESS) PMPI_Comm_free_keyval(&kv);
  else hook_keyval = kv;
}

int MPI_Finalize(void) {
  end_of_run(1);
  if (hook_keyval != MPI_KEYVAL_INVALID) /* (its callback now finds the work done) */
    PMPI_Comm_delete_attr(MPI_COMM_SELF, hook_keyval);
  return PMPI_Finalize();
}
