/* pinit.h - the MPI library's own persistent collective inits, for the
 * pass-through mode: PMPI_<Coll>_init on MPI 4, PMPIX_<Coll>_init on Open
 * MPI 4.1 (its pcollreq extension). PINIT is undefined where neither
 * exists; COLLC_MPIX_INIT is defined where the MPIX_ names are ours to
 * serve too. */
#ifndef COLLC_PINIT_H
#define COLLC_PINIT_H

#include <mpi.h>

#if MPI_VERSION >= 4
#define PINIT(coll) PMPI_##coll##_init
#elif defined(OPEN_MPI)
#include <mpi-ext.h>
#ifdef OMPI_HAVE_MPI_EXT_PCOLLREQ
#define PINIT(coll) PMPIX_##coll##_init
#define COLLC_MPIX_INIT 1
#endif
#endif

#endif
