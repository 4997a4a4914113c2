/* local.h - the executor's local instructions: COPY, REDUCE, COMBINE over
 * shaped operands of dense buffers. */
#ifndef COLLC_LOCAL_H
#define COLLC_LOCAL_H

#include <mpi.h>
#include "../ir/ir.h"
#include "kernels.h"

/* How units are combined: a unit is c elements of t; units of buffer b
 * are ext[b] bytes apart (a COPY's two buffers alike). */
typedef struct {
  MPI_Aint ext[BUF_COUNT];
  int c;
  MPI_Datatype t;
  MPI_Op op;
  const kernel_sel *k; /* compiled kernel, or NULL for PMPI_Reduce_local */
} local_ctx;

/* Run local instruction I of program P on buffer bases base[] (each operand
 * is base[buf] + units * ext[buf]): COPY with memcpy, REDUCE dst = src op dst,
 * COMBINE dst = src op src2. Operand run structures may differ; they are
 * walked in lockstep. Returns MPI_SUCCESS or an MPI error code. */
int local_run(const collc_prog *P, const collc_instr *I, char *const base[], const local_ctx *x);

#endif
