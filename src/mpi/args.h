/* args.h - argument checks shared by the MPI entry points. Each returns an
 * MPI error class, or MPI_SUCCESS. */
#ifndef COLLC_ARGS_H
#define COLLC_ARGS_H

#include <mpi.h>

/* comm usable (not null, a valid handle); *inter set if intercommunicator. */
int args_comm(MPI_Comm comm, int *inter);
/* count >= 0 and t a datatype. */
int args_count_type(int count, MPI_Datatype t);
/* buf usable for count elements of t: NULL with data and a predefined type
 * is MPI_ERR_BUFFER (with derived types NULL may be MPI_BOTTOM). */
int args_buffer(const void *buf, int count, MPI_Datatype t);
/* Bytes of count elements of t (64-bit: types over 2 GiB are fine). */
long long args_bytes(int count, MPI_Datatype t);
/* A send/receive pair of all-to-all or allgather: counts, types, matching
 * sizes (MPI_ERR_TRUNCATE if more is sent than received), buffers, and no
 * aliasing (checked for predefined types only: with derived types equal
 * pointers may be MPI_BOTTOM with disjoint absolute displacements). */
int args_pair(const void *sb, int sc, MPI_Datatype st, const void *rb, int rc, MPI_Datatype rt);
/* op is an operation. */
int args_op(MPI_Op op);
/* 0 <= root < p. */
int args_root(int root, int p);
/* Data of t can be combined by collc's reductions with op: a predefined
 * type, or a derived one without holes under a user-defined operation (MPI
 * defines the predefined operations on predefined types only); else the
 * call goes to the native collective (which reports what MPI reports). */
int args_reducible(MPI_Datatype t, MPI_Op op);

#endif
