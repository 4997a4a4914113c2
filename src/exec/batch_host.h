/* batch_host.h - the host batch executor (batch_host.c). */
#ifndef COLLC_BATCH_HOST_H
#define COLLC_BATCH_HOST_H

#include <mpi.h>
#include "kernels.h"
#include "xbatch.h"

/* Run batch b of table T on buffer bases base[] with C loops: COPY by
 * memcpy, REDUCE and COMBINE with k's compiled kernels (a table exists only
 * when they do). Returns MPI_SUCCESS. */
int batch_run_host(const xbatch_tab *T, int b, char *const base[], const kernel_sel *k);

#endif
