/* backend_cuda.h - device buffers through the CUDA backend (issue 16).
 *
 * Reached only where a GPU exists (memclass_gpu) and libcollc_cuda.so (make
 * CUDA=1) lies next to libcollc.so: backend_cuda() is NULL everywhere else,
 * so a machine without a GPU never gets past that test (its device-buffer
 * calls go to the MPI library). Run on a GPU at p = 1 (tests/gpu/run.sh is the
 * test to run on one); on a CPU, tests/fakecuda's fake runtime and host
 * build of libcollc_cuda.so run every path here (tests/run.sh fake).
 *
 * Two ways, by what the MPI library can do:
 *  - CUDA-aware MPI (Open MPI's MPIX_Query_cuda_support): the plan runs
 *    with the CUDA backend: its batches are one kernel launch each on a
 *    private stream (the table uploaded once per plan), messages and group
 *    calls get the device pointers after the stream is synchronised, and
 *    the execution ends synchronised. Plans qualify when every local
 *    instruction runs in batches with a device kernel, and they use no node
 *    segment and no remote reads (backend_cuda_fits).
 *  - otherwise, whole-buffer staging: the call's buffers are copied to a
 *    pinned host mirror (grown per communicator, never per call), the plan
 *    runs there with the MPI backend as for host buffers, the receive
 *    buffer is copied back. Simple, and slower than per-message staging. */
#ifndef COLLC_BACKEND_CUDA_H
#define COLLC_BACKEND_CUDA_H

#include <stddef.h>
#include "backend.h"

/* libcollc_cuda.so's functions (src/cuda/batch.cu; tests/fakecuda/backend.c
 * is a host build of the same). */
typedef struct {
  int (*kernel_ok)(int k); /* kernel id k (-1: none) has a device form */
  int (*table)(const xbatch_tab *T, void **dev); /* upload T's descriptors */
  void (*table_free)(void *dev);
  int (*batch)(void *dev, const xbatch_tab *T, int b, char *const base[], int nbase, void *st);
  int (*sync)(void *st);
  int (*stream_new)(void **st);
  int (*copy)(void *dst, const void *src, size_t n);
  int (*host_alloc)(void **p, size_t n);
  void (*host_free)(void *p);
  int (*dev_alloc)(void **p, size_t n);
  void (*dev_free)(void *p);
} collc_cuda_lib;
/* Load the libcollc_cuda.so at path into *L; 1 if every function is there. */
int collc_cuda_lib_load(const char *path, collc_cuda_lib *L);

/* The CUDA backend, loaded on the first call (dlopen libcollc_cuda.so from
 * libcollc.so's directory); NULL without a GPU or without that library. */
const exec_backend *backend_cuda(void);
/* Whether the MPI library takes device pointers (then messages use them). */
int backend_cuda_aware(void);
/* Whether a plan whose local instructions all run in batches (batchable,
 * plan_batchable) with reduction kernel id kernel (-1: none), with
 * shm_units node-segment units and remote reads (reads), can run with the
 * CUDA backend. Rank-independent arguments only: every rank of the call
 * must come to the same answer (one rank's plan may have no batch). */
int backend_cuda_fits(int batchable, int kernel, long long shm_units, int reads);
/* Wait for everything launched on the private stream. MPI code. */
int backend_cuda_sync(void);
/* Copy n bytes between any two of host, pinned and device memory
 * (synchronous). MPI code. */
int backend_cuda_copy(void *dst, const void *src, size_t n);
/* Grow the pinned buffer *buf of *bytes to at least n (freed by
 * backend_cuda_host_free). MPI code. */
int backend_cuda_host_grow(void **buf, size_t *bytes, size_t n);
void backend_cuda_host_free(void *buf);
/* Free a plan's device copy of its batch table (plan.c). */
void backend_cuda_table_free(void *dev);

#endif
