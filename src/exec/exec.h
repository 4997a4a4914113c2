/* exec.h - the MPI executor: a program bound to datatypes and communicators.
 *
 * plan_create does all the work a call could repeat: it builds (and commits)
 * one MPI datatype per distinct (buffer, shape) operand, resolves byte
 * offsets, allocates the scratch buffer and the request array. plan_execute
 * then only binds the user's two buffer addresses and walks the program:
 * nothing is allocated, no datatype is created.
 */
#ifndef COLLC_EXEC_H
#define COLLC_EXEC_H

#include <mpi.h>
#include "../ir/ir.h"
#include "flag.h"

/* A node's shared segment as the executor sees it (made by the MPI layer,
 * src/mpi/node.c): data that every rank of the node maps, and one flag
 * counter per local rank on its own cache line. A flag holds
 * (seq - 1) * STEP_DONE + step of that rank's latest SIGNAL, seq counting
 * the executions begun on the segment (the same on every rank of the
 * node: they run the same collectives in the same order). */
typedef struct shm_seg {
  char *data;              /* 64-byte aligned */
  size_t bytes;            /* capacity of data */
  seg_flag *flag;          /* local rank i's flag: flag[i] (flag.h) */
  uint64_t seq;            /* executions begun */
  int yield;               /* the node has more ranks than cores: yield at once */
  int cma;                 /* its ranks may read each other's memory (process_vm_readv) */
  MPI_Win win;             /* (owner's business) */
  struct shm_seg *next;    /* (owner's list) */
} shm_seg;

/* How the user's buffers are typed: a unit of SEND is sendcount x sendtype,
 * a unit of RECV and TMP is recvcount x recvtype; reductions combine units
 * with op (MPI_OP_NULL for the others) and need a dense recvtype (memory
 * without holes: extent = size). */
typedef struct {
  int sendcount, recvcount;
  MPI_Datatype sendtype, recvtype; /* sendtype ignored when in place */
  MPI_Op op;
  shm_seg **seg; /* programs using the node segment: where it is (may be
                    replaced by a larger one between executions) */
} exec_bind;

typedef struct collc_plan collc_plan;

/* Build the executable plan for program P (taken over: freed with the plan)
 * on private communicator comm; gcomm[g] is the communicator of program group
 * g (member j = rank j). Local: no communication. Returns MPI_SUCCESS or an
 * MPI error class (P is freed then too). */
int plan_create(collc_prog *P, const exec_bind *b, MPI_Comm comm, const MPI_Comm *gcomm,
                collc_plan **out);
/* Run the plan on these buffers (recvbuf also the input when in place).
 * Returns MPI_SUCCESS or the class of the first failing MPI call. */
int plan_execute(collc_plan *pl, const void *sendbuf, void *recvbuf);
/* The same, resumable (persistent requests): plan_start begins an execution
 * and runs it until it must wait for messages; plan_test advances it that
 * way; plan_wait runs it to the end, blocking. *done tells whether it has
 * ended. One execution at a time per plan; nothing is allocated. After an
 * error the execution is ended (requests cancelled). */
int plan_start(collc_plan *pl, const void *sendbuf, void *recvbuf, int *done);
int plan_test(collc_plan *pl, int *done);
int plan_wait(collc_plan *pl);
/* End a started execution now: cancel and release its requests. */
void plan_abort(collc_plan *pl);
/* Tag our messages with tag (default: the blocking interface's); plans
 * that may run concurrently on one communicator need distinct tags. */
void plan_set_tag(collc_plan *pl, int tag);
/* The plan takes over seg (a malloc'd cell holding its own segment) and
 * retires the segment when freed. */
void plan_own_segment(collc_plan *pl, shm_seg **seg);
/* Bytes between units of the node segment when bound with b. */
MPI_Aint plan_shm_unit(const exec_bind *b);
/* Bytes of node segment that program P needs when bound with b (0: none). */
size_t plan_shm_bytes(const collc_prog *P, const exec_bind *b);
/* Bytes this rank sends to other ranks per execution. */
long long plan_bytes(const collc_plan *pl);
const collc_prog *plan_prog(const collc_plan *pl);
void plan_free(collc_plan *pl);

/* True if type t is laid out as plain bytes (predefined, no holes, lb 0),
 * so units of it may be moved with memcpy. */
int exec_type_dense(MPI_Datatype t);
/* True if t is a predefined datatype (lower bound 0; pair types may have
 * padding, which a memcpy of whole elements carries along harmlessly). */
int exec_type_named(MPI_Datatype t);

#endif
