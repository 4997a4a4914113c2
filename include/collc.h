/* collc.h - compiled MPI collectives.
 *
 * collc compiles each collective once into a schedule and executes it many
 * times. Linked before the MPI library (or LD_PRELOADed) it serves the
 * standard MPI calls of an unmodified program over the PMPI interface; the
 * functions below are its own API. All return MPI error classes.
 */
#ifndef COLLC_H
#define COLLC_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "collc_version.h"

/* MPI_Dims_create semantics (nonzero entries of dims are kept, the others
 * filled in non-increasing order), but the free factors are really as close
 * to each other as possible: the smallest max - min, ties broken towards the
 * smallest largest factor. Needs no MPI_Init; errors are returned, not
 * raised: MPI_ERR_DIMS (nnodes < 1, ndims < 0, negative entries, fixed
 * entries that do not divide nnodes), MPI_ERR_ARG (dims NULL). */
int collc_dims_create(int nnodes, int ndims, int dims[]);

/* Träff's Comm_factorize (Listings 1-2): a Cartesian communicator over comm
 * with dims order[0..d-1] (periodic, no reordering; the last dimension
 * varies fastest), and its d dimension communicators, cached on it as an
 * attribute freed with it. Collective. Errors (through comm's error
 * handler): MPI_ERR_COMM, MPI_ERR_DIMS (d < 1, an order < 1, product !=
 * size), MPI_ERR_ARG (NULL arrays). */
int collc_comm_factorize(MPI_Comm comm, int d, const int order[], MPI_Comm *factorcomm);

/* The d-factor ("torus") all-to-all on a communicator made by
 * collc_comm_factorize: one PMPI_Alltoall per dimension on the cached
 * dimension communicators with cached tiled datatypes (zero-copy). Same
 * semantics as MPI_Alltoall (any datatypes with matching signatures,
 * MPI_IN_PLACE). On any other communicator it computes the same result with
 * collc's default all-to-all. */
int collc_alltoall_torus(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                         void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);

/* MPI_Alltoall with the algorithm chosen as for MPI_Alltoall itself
 * (COLLC_ALLTOALL, else the default rule). */
int collc_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                   void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);

/* MPI_Alltoall with an explicit algorithm, e.g. "torus:4x3:linear",
 * "bruck:4", "native" (syntax as COLLC_ALLTOALL). An algorithm that does not
 * fit the call returns MPI_ERR_ARG; the choice must be the same on all
 * ranks. */
int collc_alltoall_algo(const char *algorithm, const void *sendbuf, int sendcount,
                        MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm);

/* The reduction and redistribution collectives, with MPI semantics (any
 * predefined or user-defined operation; predefined datatypes and derived
 * ones without holes; MPI_IN_PLACE). The plain forms select the algorithm
 * as the MPI_ call does (COLLC_<COLLECTIVE>, else the default rule); the
 * _algo forms take it explicitly, e.g. "recexch:-4,-2,2,4", "cyclic",
 * "tree:3,2", "native" (MPI_ERR_ARG if it does not fit the call). */
int collc_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                    MPI_Op op, MPI_Comm comm);
int collc_allreduce_algo(const char *algorithm, const void *sendbuf, void *recvbuf, int count,
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int collc_reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int collc_reduce_scatter_block_algo(const char *algorithm, const void *sendbuf, void *recvbuf,
                                    int recvcount, MPI_Datatype datatype, MPI_Op op,
                                    MPI_Comm comm);
int collc_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int collc_allgather_algo(const char *algorithm, const void *sendbuf, int sendcount,
                         MPI_Datatype sendtype, void *recvbuf, int recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm);
int collc_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 int root, MPI_Comm comm);
int collc_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                     MPI_Comm comm);
int collc_allgatherv_algo(const char *algorithm, const void *sendbuf, int sendcount,
                          MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                          const int displs[], MPI_Datatype recvtype, MPI_Comm comm);
int collc_reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int collc_reduce_scatter_algo(const char *algorithm, const void *sendbuf, void *recvbuf,
                              const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm);
/* Alltoallv (per-rank send and receive counts): the decision is made on
 * p and the algorithm alone (each rank knows only its own counts), the
 * counts bind this rank's plan. */
int collc_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
int collc_alltoallv_algo(const char *algorithm, const void *sendbuf, const int sendcounts[],
                         const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                         const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                         MPI_Comm comm);
int collc_reduce_algo(const char *algorithm, const void *sendbuf, void *recvbuf, int count,
                      MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm);
int collc_bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm);
int collc_bcast_algo(const char *algorithm, void *buffer, int count, MPI_Datatype datatype,
                     int root, MPI_Comm comm);
int collc_barrier(MPI_Comm comm);
int collc_barrier_algo(const char *algorithm, MPI_Comm comm);
/* Rooted collectives: gather and scatter (linear, tree[:k1,...]), gatherv
 * and scatterv (linear). */
int collc_gather_algo(const char *algorithm, const void *sendbuf, int sendcount,
                      MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                      int root, MPI_Comm comm);
int collc_scatter_algo(const char *algorithm, const void *sendbuf, int sendcount,
                       MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, int root, MPI_Comm comm);
int collc_gatherv_algo(const char *algorithm, const void *sendbuf, int sendcount,
                       MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                       const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm);
int collc_scatterv_algo(const char *algorithm, const void *sendbuf, const int sendcounts[],
                        const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        MPI_Datatype recvtype, int root, MPI_Comm comm);

/* Nonblocking forms (MPI_I<coll> with an explicit algorithm, same syntax):
 * *request is a real MPI request, completed by MPI's completion calls as
 * MPI_I<coll>'s is. Like those, they never synchronise: a node-aware
 * algorithm (hier, shm) serves them once a blocking call of the same kind
 * (collective, bytes, root, in-place, operation's commutativity, algorithm)
 * has set up its node segment on the communicator; until then, and where
 * the group communicators of a torus with native components do not exist
 * yet, the call is served natively. */
int collc_ialltoall_algo(const char *algorithm, const void *sendbuf, int sendcount,
                         MPI_Datatype sendtype, void *recvbuf, int recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int collc_ialltoallv_algo(const char *algorithm, const void *sendbuf, const int sendcounts[],
                          const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                          const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                          MPI_Comm comm, MPI_Request *request);
int collc_iallreduce_algo(const char *algorithm, const void *sendbuf, void *recvbuf, int count,
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request);
int collc_ireduce_scatter_block_algo(const char *algorithm, const void *sendbuf, void *recvbuf,
                                     int recvcount, MPI_Datatype datatype, MPI_Op op,
                                     MPI_Comm comm, MPI_Request *request);
int collc_iallgather_algo(const char *algorithm, const void *sendbuf, int sendcount,
                          MPI_Datatype sendtype, void *recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
int collc_ireduce_algo(const char *algorithm, const void *sendbuf, void *recvbuf, int count,
                       MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                       MPI_Request *request);
int collc_ibcast_algo(const char *algorithm, void *buffer, int count, MPI_Datatype datatype,
                      int root, MPI_Comm comm, MPI_Request *request);
int collc_ibarrier_algo(const char *algorithm, MPI_Comm comm, MPI_Request *request);
int collc_iallgatherv_algo(const char *algorithm, const void *sendbuf, int sendcount,
                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                           const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Request *request);
int collc_ireduce_scatter_algo(const char *algorithm, const void *sendbuf, void *recvbuf,
                               const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                               MPI_Comm comm, MPI_Request *request);

/* MPI-4 persistent collectives. collc defines these (and, on Open MPI 4.1,
 * the MPIX_ names of its pcollreq extension too): init compiles and binds
 * the plan, MPI_Start/MPI_Startall run it, and MPI's completion calls
 * (Wait/Test, all/any/some, Request_free, Request_get_status) complete it,
 * mixed freely with native requests. Info key "collc_algorithm" selects the
 * algorithm for this request, over COLLC_<COLLECTIVE> (same syntax).
 * An MPI 3.1 mpi.h (Open MPI 4.1) lacks the prototypes; here they are. */
#if MPI_VERSION < 4
int MPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request);
int MPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount,
                                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                  MPI_Request *request);
int MPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                    MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request);
int MPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request);
int MPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                      MPI_Request *request);
int MPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                   MPI_Info info, MPI_Request *request);
int MPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request);
int MPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                    MPI_Request *request);
int MPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                     MPI_Info info, MPI_Request *request);
int MPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                     MPI_Comm comm, MPI_Info info, MPI_Request *request);
int MPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[],
                      MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                      int root, MPI_Comm comm, MPI_Info info, MPI_Request *request);
int MPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                        void *recvbuf, const int recvcounts[], const int displs[],
                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request);
int MPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[],
                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                            MPI_Request *request);
int MPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                       MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                       const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request);
#endif

#ifdef __cplusplus
}
#endif
#endif
