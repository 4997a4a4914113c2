/* exec.h - the MPI executor: a program bound to datatypes and communicators.
 *
 * plan_create does all the work a call could repeat: it builds (and commits)
 * one MPI datatype per distinct (buffer, shape) operand and resolves byte
 * offsets. An execution context then only binds the user's two buffer
 * addresses, the communicator and segment, and walks the program: nothing
 * is allocated (once the context has met a plan of that size), no datatype
 * is created. Plans are immutable; contexts hold everything that changes.
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
  int batch; /* run local instructions in batches (ir/batch.h) where the plan can */
} exec_bind;

/* A plan: program P bound to this rank's typing of the buffers (datatypes,
 * offsets, kernels). Immutable once made, so any number of executions may
 * run it at once, each in its own context; reference counted. */
typedef struct collc_plan collc_plan;
/* One execution's state: program counter, request slots, scratch, buffer
 * bases, segment sequence number. Reused for execution after execution. */
typedef struct exec_ctx exec_ctx;

/* Where an execution runs: the communicator of its messages (the rank
 * numbers of the program), their tag, the communicators of the program's
 * groups (gcomm[g], member j = rank j), and the node segment (programs that
 * use one; *seg may be replaced by a larger one between executions). The
 * caller keeps gcomm[] and the segment cell alive while an execution runs. */
typedef struct {
  MPI_Comm comm;
  int tag;
  const MPI_Comm *gcomm;
  shm_seg **seg;
  const struct exec_backend *be; /* the machine (backend.h); NULL: MPI and shared memory */
} exec_where;

/* Build the plan of program P (taken over: freed with the plan) for
 * binding b, holding one reference. Local: no communication. Returns
 * MPI_SUCCESS or an MPI error class (P is freed then too). */
int plan_create(collc_prog *P, const exec_bind *b, collc_plan **out);
/* The plan frees these datatypes (those of its binding; derived ones only,
 * MPI_DATATYPE_NULL for none) when it is freed. */
void plan_adopt_types(collc_plan *pl, MPI_Datatype sendtype, MPI_Datatype recvtype);
/* Take another reference; plan_free drops one (the last frees the plan). */
void plan_ref(collc_plan *pl);
void plan_free(collc_plan *pl);
/* Bytes between units of the node segment when bound with b. */
MPI_Aint plan_shm_unit(const exec_bind *b);
/* Bytes of node segment that program P needs when bound with b (0: none). */
size_t plan_shm_bytes(const collc_prog *P, const exec_bind *b);
/* Batches of pl (xbatch.h), when it was made with b.batch and its local
 * instructions can run as batches (plain bytes, compiled kernels); NULL
 * when its executions run instruction by instruction. */
const struct xbatch_tab *plan_batches(const collc_plan *pl);
/* Whether every local instruction of pl can run in batches (vacuously true
 * without any) and its reduction operation, if it has one, has a compiled
 * kernel, whose id goes to *kernel (-1: no kernel). Unlike whether this
 * rank's plan has batches (a rank may have no local instruction at all),
 * the same on every rank of a call: what a choice all ranks make must ask. */
int plan_batchable(const collc_plan *pl, int *kernel);
/* Bytes this rank sends to other ranks per execution. */
long long plan_bytes(const collc_plan *pl);
const collc_prog *plan_prog(const collc_plan *pl);

/* A new, empty context (NULL when out of memory); free it when no
 * execution runs in it. */
exec_ctx *ctx_new(void);
void ctx_free(exec_ctx *c);
/* Run plan pl in c at w on these buffers (recvbuf also the input when in
 * place), to its end. Nothing is allocated unless pl needs more scratch or
 * request slots than c had. Returns MPI_SUCCESS or the class of the first
 * failing MPI call. */
int ctx_execute(exec_ctx *c, collc_plan *pl, const exec_where *w, const void *sendbuf,
                void *recvbuf);
/* The same, resumable: ctx_start begins an execution and runs it until it
 * must wait (for messages or node flags); ctx_test advances it that way;
 * ctx_wait runs it to the end, blocking. *done tells whether it has ended.
 * After an error the execution is ended (requests cancelled). The caller
 * keeps pl (and w's communicators and segment) alive until it ends. */
int ctx_start(exec_ctx *c, collc_plan *pl, const exec_where *w, const void *sendbuf,
              void *recvbuf, int *done);
int ctx_test(exec_ctx *c, int *done);
int ctx_wait(exec_ctx *c);
/* Whether an execution has begun in c and not ended. */
int ctx_running(const exec_ctx *c);
/* End a started execution now: cancel and release its requests. */
void ctx_abort(exec_ctx *c);

/* True if type t is laid out as plain bytes (predefined, no holes, lb 0),
 * so units of it may be moved with memcpy. */
int exec_type_dense(MPI_Datatype t);
/* True if t is a predefined datatype (lower bound 0; pair types may have
 * padding, which a memcpy of whole elements carries along harmlessly). */
int exec_type_named(MPI_Datatype t);

#endif
