/* cma.h - Cross Memory Attach: reading another process's memory on the
 * same node (process_vm_readv), for single-copy GETs. */
#ifndef COLLC_CMA_H
#define COLLC_CMA_H

#include <mpi.h>
#include <stdint.h>
#include <sys/uio.h>

/* Copy the bytes at base + remote pieces r[0..nr) of process pid into
 * local pieces at lbase + l[0..nl) (iov_base holds offsets; equal totals).
 * 0, or -1 (errno set). No allocation. */
int cma_read(int pid, char *lbase, const struct iovec *l, int nl, uint64_t rbase,
             const struct iovec *r, int nr);
/* Whether every rank of node may read the others' memory (collective over
 * node; every rank takes part whatever it finds): allows it for ours
 * (Yama's ptrace scope), then each reads a word of the next rank. 0 if
 * not, or disabled (COLLC_CMA=0). Call it only for plans that read in
 * place: allowing ptrace-attach is a relaxation. */
int cma_probe(MPI_Comm node);

#endif
