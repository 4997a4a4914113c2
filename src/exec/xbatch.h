/* xbatch.h - a plan's batches as byte descriptor tables (ir/batch.h bound
 * to a plan's buffers), the form every batch executor runs: the host one
 * (batch_host.c, C loops) and the CUDA one (cuda/batch.cu, one kernel
 * launch per batch, the table resident on the device). Plain C, no MPI, so
 * that nvcc compiles it too.
 *
 * A descriptor reads and writes bytes at base[buf] + offset, base[] being
 * the execution's buffer bases (exec_ctx.base). The batch semantics of
 * batch.h hold: the descriptors of a batch may run in any order or at once.
 */
#ifndef COLLC_XBATCH_H
#define COLLC_XBATCH_H

#include <stdint.h>

/* kind: BATCH_COPY (n bytes), BATCH_REDUCE (dst = src op dst, n base
 * elements of the kernel), BATCH_COMBINE (dst = src op src2, n elements). */
typedef struct {
  uint32_t kind, sbuf, s2buf, dbuf;
  uint64_t s, s2, d, n;
} xdesc;

/* Batch b: descriptors [d0, d0 + nd); the next instruction after it is end. */
typedef struct {
  int64_t d0, nd;
  int end;
} xspan;

typedef struct xbatch_tab {
  xdesc *d;
  int64_t nd;
  xspan *b;
  int nb;
  int *of;      /* of[a]: the batch beginning at instruction a, or -1 */
  int kernel;   /* the reduction kernel's id (kernel_id), -1 for none */
  void *dev;    /* the descriptors' device copy (CUDA backend): uploaded on first
                   use, under its lock, read with an acquire load; freed with the plan */
} xbatch_tab;

#endif
