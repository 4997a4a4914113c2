/* batch.h - batches: runs of local instructions fused into one step.
 *
 * The GPU section of Jocksch et al. runs the consecutive copies and
 * reductions of a schedule as one fused kernel; any send, receive or flag
 * operation ends such a batch. batch_build groups the local instructions
 * (COPY, REDUCE, COMBINE) of a finished program that way, once, and lists
 * each batch's work as a descriptor table: one descriptor per contiguous
 * chunk (ir/chunk.h), in units of the buffers. Pure C.
 *
 * Batch semantics (what an executor may do, what the verifier checks): the
 * descriptors of one batch may run in any order, or all at once, element by
 * element. So within a batch no unit is written by two descriptors, and no
 * unit a descriptor reads is written by another descriptor; a descriptor
 * may read what it writes only at the same unit (REDUCE's dst; a COMBINE
 * whose dst is one of its sources exactly). A local instruction that would
 * break this with the batch so far starts a new batch, so a run of local
 * instructions may become several consecutive batches; running them one
 * after the other gives exactly the instructions' sequential result.
 */
#ifndef COLLC_BATCH_H
#define COLLC_BATCH_H

#include "ir.h"

enum { BATCH_COPY = 0, BATCH_REDUCE, BATCH_COMBINE, BATCH_KINDS };

/* dst = src (COPY), dst = src op dst (REDUCE), dst = src op src2 (COMBINE),
 * on n units at the unit offsets s, s2, d of buffers sbuf, s2buf, dbuf. */
typedef struct {
  uint8_t kind, sbuf, s2buf, dbuf;
  int32_t ins; /* the instruction it is a chunk of */
  int64_t s, s2, d, n;
} batch_desc;

/* Instructions [first, end) of the program, descriptors [d0, d0 + nd). */
typedef struct {
  int first, end;
  int64_t d0, nd;
} batch_span;

typedef struct {
  batch_span *b;
  int nb;
  batch_desc *d;
  int64_t nd, cap_d;
  int *of; /* of[a]: the batch that begins at instruction a, else -1 (P->nins entries) */
} collc_batches;

/* Whether opcode op is a local instruction a batch may hold. */
int batch_local(int op);
/* Group the local instructions of finished program P into batches (file
 * comment), filling *B (free with batch_free). 0 or COLLC_ENOMEM. */
int batch_build(const collc_prog *P, collc_batches *B);
void batch_free(collc_batches *B);
/* Print B's batches and descriptors (explain -g). */
void batch_print(const collc_batches *B, FILE *out);

#endif
