/* plan_impl.h - the inside of plans and execution contexts, shared by the
 * plan builder (plan.c) and the interpreter (interp.c); nobody else. */
#ifndef COLLC_PLAN_IMPL_H
#define COLLC_PLAN_IMPL_H

#include <stdatomic.h>
#include <sys/uio.h>
#include "exec.h"
#include "kernels.h"
#include "local.h"
#include "xbatch.h"

typedef struct {
  MPI_Datatype t; /* the user's type */
  int c;          /* user elements per unit */
  MPI_Aint ext;   /* bytes between units */
  MPI_Aint bytes; /* data bytes of a unit */
  int dense;      /* predefined type without holes (exec_type_dense) */
  int flat;       /* exactly `bytes` contiguous bytes from the unit's start */
} unit;

typedef struct {
  int buf;
  MPI_Aint off; /* bytes */
  int count;
  MPI_Datatype type;
} xopnd;

typedef struct {
  xopnd src, dst; /* GET: src is the slot (the copy path) */
  int memcpy_ok;
  int flag;       /* AWAIT, GET: the peer's local index (its flag) */
  int iv, nl, nr; /* GET: its local, then remote pieces in the plan's iov pool */
  uint64_t rend;  /* GET: the end of the remote pieces (bytes from the peer's base) */
  int stage;      /* GET: dst is not plain bytes: read into the stage, then unpack */
} xins;

/* The immutable part: everything resolved once per (program, binding).
 * Shared by every execution context that runs it (exec.h). */
struct collc_plan {
  collc_prog *P;
  int self;       /* my rank (in every communicator an execution runs on) */
  unit u[3];      /* kinds: SEND, RECV and TMP, SHM */
  xins *x;
  MPI_Datatype *dt; /* [kind * nshapes + shape], MPI_DATATYPE_NULL if not built */
  int *dtcount;
  MPI_Datatype *owned; /* every type this plan created, freed with it */
  int nowned;
  kernel_sel ks;  /* typed kernel of a reduction, if one exists */
  local_ctx lx;   /* how local instructions treat units */
  size_t tmp_bytes;      /* scratch an execution needs (0: none) */
  MPI_Aint tmp_lb;       /* its base is shifted by the recv type's true lower bound */
  long long bytes;
  struct iovec *iov;     /* GET pieces (iov_base: offsets from a buffer's base) */
  int niov;
  size_t stage_bytes;    /* GETs into buffers that are not plain bytes read there first */
  uint32_t flat;         /* bit b: buffer b may be read in place (BUF_SEND, RECV, TMP) */
  int remote;            /* the program OFFERs or GETs: publish buffers at each start */
  int pid;
  uint64_t limit[3];     /* bytes of SEND, RECV, TMP as published (fixed by the binding) */
  MPI_Aint shm_lb;       /* true lower bound of a segment unit: the base is shifted by it */
  size_t shm_bytes;      /* segment bytes this plan touches */
  int flag;              /* my local index (my flag) */
  atomic_int refs;       /* owners: a cache, requests, running contexts */
  MPI_Datatype adopted[2]; /* datatypes freed with the plan (plan_adopt_types) */
  xbatch_tab bt;         /* batches (bt.nb > 0 only when made with exec_bind.batch and
                            every local instruction is plain bytes or a compiled kernel) */
};

/* The mutable part: one execution of a plan (exec.h). Buffers grow to the
 * largest plan run in the context, so a context allocates only when it
 * first meets a larger plan. */
struct exec_ctx {
  collc_plan *pl;        /* running (pc < nins), or last run */
  exec_where w;          /* where it runs */
  int pc;                /* next instruction of a started execution */
  char *base[BUF_COUNT]; /* buffer bases of the current execution */
  uint64_t seq;          /* this execution's number on the segment */
  MPI_Request *req;
  int nreq;              /* capacity of req */
  void *tmp_mem;
  size_t tmp_cap;
  void (*tmp_free)(void *p); /* how tmp_mem was allocated: its backend's tmp_free (NULL: free) */
  char *stage;
  size_t stage_cap;
  int batched;           /* this execution runs pl's batches (bt) through its backend */
};

/* Kind of buffer buf's units: 0 SEND, 1 RECV and TMP, 2 SHM. */
static inline int kind_of(int buf) { return buf == BUF_SEND ? 0 : buf == BUF_SHM ? 2 : 1; }

#endif
