/* init.c - MPI_Init and MPI_Init_thread: the library's own, then what
 * collc does once every rank is known to take part (collc_after_init).
 * Not under SimGrid SMPI (its ranks start inside its own MPI_Init; the
 * rule's rows are read per rank there, rules.c). */
#include "internal.h"

void collc_after_init(void) {
  finalize_hook_install();
  rules_init();
}

#ifndef SMPI_SHARED_MALLOC
int MPI_Init(int *argc, char ***argv) {
  int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) collc_after_init();
  return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) collc_after_init();
  return rc;
}
#endif
