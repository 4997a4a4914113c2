/* batch_host.c - the host batch executor: a plan's descriptor tables
 * (xbatch.h) run by C loops, descriptor after descriptor. It runs the same
 * tables the CUDA backend runs in one kernel launch per batch, so the
 * batching, the tables and the kernels' selection are tested on every
 * machine; on the host it is also the MPI backend's batch step. */
#include <string.h>
#include "batch_host.h"
#include "../ir/batch.h"

typedef void (*desc_fn)(const xdesc *d, char *const base[], const kernel_sel *k);

static void run_copy(const xdesc *d, char *const base[], const kernel_sel *k) {
  (void)k;
  copy_bytes(base[d->dbuf] + d->d, base[d->sbuf] + d->s, (size_t)d->n);
}

static void run_reduce(const xdesc *d, char *const base[], const kernel_sel *k) {
  k->k2(base[d->sbuf] + d->s, base[d->dbuf] + d->d, (size_t)d->n);
}

static void run_combine(const xdesc *d, char *const base[], const kernel_sel *k) {
  k->k3(base[d->sbuf] + d->s, base[d->s2buf] + d->s2, base[d->dbuf] + d->d, (size_t)d->n);
}

static const desc_fn run_desc[BATCH_KINDS] = {
    [BATCH_COPY] = run_copy, [BATCH_REDUCE] = run_reduce, [BATCH_COMBINE] = run_combine};

int batch_run_host(const xbatch_tab *T, int b, char *const base[], const kernel_sel *k) {
  const xdesc *d = T->d + T->b[b].d0, *end = d + T->b[b].nd;
  for (; d < end; d++) run_desc[d->kind](d, base, k);
  return MPI_SUCCESS;
}
