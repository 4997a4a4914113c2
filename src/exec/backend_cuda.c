/* backend_cuda.c - the CUDA backend (backend_cuda.h). No CUDA header and no
 * link-time CUDA dependency: libcollc_cuda.so (src/cuda/batch.cu) is
 * loaded with dlopen from the directory of libcollc.so, only where
 * memclass_gpu() found a GPU. Tested with the fake CUDA of tests/fakecuda (a
 * host build of libcollc_cuda.so); on a GPU (tests/gpu/run.sh, an H200) at
 * p = 1 only, for want of a CUDA-aware MPI there. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "backend_cuda.h"
#include "memclass.h"
#include "../plan/config.h"
#if defined(OPEN_MPI)
#include <mpi-ext.h>
#endif

/* libcollc_cuda.so's functions (batch.cu), the private stream, the lock of
 * the one-time work (loading, table uploads). */
static struct {
  collc_cuda_lib f;
  void *stream;
  pthread_mutex_t lock;
} cu = {.lock = PTHREAD_MUTEX_INITIALIZER};

int collc_cuda_lib_load(const char *path, collc_cuda_lib *L) {
  static const char *const names[] = {"collc_cuda_kernel_ok", "collc_cuda_table",
                                      "collc_cuda_table_free", "collc_cuda_batch",
                                      "collc_cuda_sync", "collc_cuda_stream_new",
                                      "collc_cuda_copy", "collc_cuda_host_alloc",
                                      "collc_cuda_host_free", "collc_cuda_dev_alloc",
                                      "collc_cuda_dev_free"};
  void **fn[] = {(void **)&L->kernel_ok, (void **)&L->table, (void **)&L->table_free,
                 (void **)&L->batch, (void **)&L->sync, (void **)&L->stream_new,
                 (void **)&L->copy, (void **)&L->host_alloc, (void **)&L->host_free,
                 (void **)&L->dev_alloc, (void **)&L->dev_free};
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  for (size_t i = 0; h && i < sizeof names / sizeof *names; i++)
    if (!(*fn[i] = dlsym(h, names[i]))) h = NULL;
  return h != NULL;
}

/* CUDA error code rc as an MPI code. */
static int cu_rc(int rc) { return rc ? MPI_ERR_OTHER : MPI_SUCCESS; }

int backend_cuda_sync(void) { return cu_rc(cu.f.sync(cu.stream)); }
int backend_cuda_copy(void *dst, const void *src, size_t n) { return cu_rc(cu.f.copy(dst, src, n)); }

int backend_cuda_host_grow(void **buf, size_t *bytes, size_t n) {
  void *p = NULL;
  if (*bytes >= n) return MPI_SUCCESS;
  if (cu.f.host_alloc(&p, n)) return MPI_ERR_NO_MEM;
  if (*buf) cu.f.host_free(*buf);
  *buf = p, *bytes = n;
  return MPI_SUCCESS;
}

void backend_cuda_host_free(void *buf) {
  if (buf && cu.f.host_free) cu.f.host_free(buf);
}

void backend_cuda_table_free(void *dev) {
  if (dev && cu.f.table_free) cu.f.table_free(dev);
}

int backend_cuda_aware(void) {
  if (config_get()->test_cuda_aware) return 1; /* (tests/fakecuda: device memory is host memory) */
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  return MPIX_Query_cuda_support();
#else
  return 0; /* (MPICH 4.0 has no query: staged) */
#endif
}

int backend_cuda_fits(int batchable, int kernel, long long shm_units, int reads) {
  return batchable && !shm_units && !reads && cu.f.kernel_ok(kernel);
}

/* ---- the backend's functions: MPI's, after the stream has drained ---- */

static int cu_send(const void *buf, int count, MPI_Datatype t, int peer, int tag, MPI_Comm comm,
                   MPI_Request *r) {
  int rc = backend_cuda_sync();
  return rc ? rc : exec_backend_mpi.send(buf, count, t, peer, tag, comm, r);
}

static int cu_recv(void *buf, int count, MPI_Datatype t, int peer, int tag, MPI_Comm comm,
                   MPI_Request *r) {
  int rc = backend_cuda_sync();
  return rc ? rc : exec_backend_mpi.recv(buf, count, t, peer, tag, comm, r);
}

static int cu_complete(int n, MPI_Request *r, int blocking, int *done) {
  int rc = backend_cuda_sync();
  return rc ? rc : exec_backend_mpi.complete(n, r, blocking, done);
}

static int cu_group_alltoall(const void *s, MPI_Datatype st, void *d, MPI_Datatype dt,
                             MPI_Comm g, int blocking, MPI_Request *r) {
  int rc = backend_cuda_sync();
  return rc ? rc : exec_backend_mpi.group_alltoall(s, st, d, dt, g, blocking, r);
}

/* What backend_cuda_fits keeps out (scalar local steps, typed copies, node
 * flags, remote reads): refused, never run on device memory by the host. */
static int cu_no_local(const collc_prog *P, const collc_instr *I, char *const base[],
                       const local_ctx *x) {
  (void)P, (void)I, (void)base, (void)x;
  return MPI_ERR_INTERN;
}
static int cu_no_copy(const void *s, int sc, MPI_Datatype st, void *d, int dc, MPI_Datatype dt,
                      int self, MPI_Comm comm) {
  (void)s, (void)sc, (void)st, (void)d, (void)dc, (void)dt, (void)self, (void)comm;
  return MPI_ERR_INTERN;
}
static void cu_no_signal(seg_flag *f, uint64_t v) { (void)f, (void)v; }
static int cu_no_await(seg_flag *f, uint64_t want, int blocking, int crowded) {
  (void)f, (void)want, (void)blocking, (void)crowded;
  return -1;
}
static int cu_no_read(int pid, char *lbase, const struct iovec *l, int nl, uint64_t rbase,
                      const struct iovec *r, int nr) {
  (void)pid, (void)lbase, (void)l, (void)nl, (void)rbase, (void)r, (void)nr;
  return -1;
}

/* Batch b of T: one kernel launch on the private stream (T's descriptors
 * uploaded on the plan's first launch); none for a batch without
 * descriptors (its instructions move no byte on this rank). */
static int cu_batch(const xbatch_tab *T, int b, char *const base[], const kernel_sel *k) {
  xbatch_tab *t = (xbatch_tab *)T; /* (only its device copy is set, once) */
  void *dev = __atomic_load_n(&t->dev, __ATOMIC_ACQUIRE);
  (void)k; /* (the device kernel is T->kernel) */
  if (!T->b[b].nd) return MPI_SUCCESS;
  if (!dev) {
    pthread_mutex_lock(&cu.lock);
    if (!(dev = t->dev) && cu.f.table(T, &dev) == 0) __atomic_store_n(&t->dev, dev, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&cu.lock);
    if (!dev) return MPI_ERR_NO_MEM;
  }
  return cu_rc(cu.f.batch(dev, T, b, base, BUF_COUNT, cu.stream));
}

/* An execution's TMP buffer in device memory (the kernels read and write
 * it; messages into it take device pointers as the user's buffers do). */
static void *cu_tmp_alloc(size_t n) {
  void *p = NULL;
  return cu.f.dev_alloc(&p, n) ? NULL : p;
}
static void cu_tmp_free(void *p) {
  if (p) cu.f.dev_free(p);
}

static const exec_backend exec_backend_cuda = {
    .name = "cuda",
    .send = cu_send,
    .recv = cu_recv,
    .complete = cu_complete,
    .cancel = NULL, /* set from exec_backend_mpi at load (not a constant here) */
    .group_alltoall = cu_group_alltoall,
    .local = cu_no_local,
    .copy_typed = cu_no_copy,
    .signal = cu_no_signal,
    .await = cu_no_await,
    .remote_read = cu_no_read,
    .batch = cu_batch,
    .error_class = NULL,
    .tmp_alloc = cu_tmp_alloc,
    .tmp_free = cu_tmp_free,
};
static exec_backend loaded_be;

/* Load libcollc_cuda.so from libcollc's own directory; 1 if every symbol
 * is there and the private stream was made. */
static int cuda_lib_load(void) {
  Dl_info info;
  char path[4096];
  if (!dladdr((void *)backend_cuda, &info) || !info.dli_fname) return 0;
  const char *slash = strrchr(info.dli_fname, '/');
  int dir = slash ? (int)(slash - info.dli_fname) : 1;
  snprintf(path, sizeof path, "%.*s/libcollc_cuda.so", dir, slash ? info.dli_fname : ".");
  return collc_cuda_lib_load(path, &cu.f) && cu.f.stream_new(&cu.stream) == 0;
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const exec_backend *ready;

static void load_once(void) {
  if (!memclass_gpu() || !cuda_lib_load()) return;
  loaded_be = exec_backend_cuda;
  loaded_be.cancel = exec_backend_mpi.cancel;
  loaded_be.error_class = exec_backend_mpi.error_class;
  ready = &loaded_be;
}

const exec_backend *backend_cuda(void) {
  if (!memclass_gpu()) return NULL; /* (no GPU: never loads anything) */
  pthread_once(&once, load_once);
  return ready;
}
