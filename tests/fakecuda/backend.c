/* backend.c - a host build of libcollc_cuda.so for tests without a GPU: the
 * same exported functions as src/cuda/batch.cu (the ones
 * src/exec/backend_cuda.c looks up), over the fake CUDA runtime
 * (tests/fakecuda/cudart.c, linked), with each "kernel launch" run by the
 * host batch executor (src/exec/batch_host.c) on the descriptors uploaded
 * to "device" memory, with the kernels of src/exec/kernels.c picked by the
 * same kernel id the device table uses.
 *
 * A launch is deferred as on a real stream: it is queued and runs only
 * when the stream is synchronised (collc_cuda_sync), so a caller that
 * reads or sends a buffer before synchronising sees stale data, as it
 * would on a GPU. Each launch is reported to the fake runtime
 * (fakecuda_launch: counted, order of batches checked). Built as
 * $(BUILD)/tests/fakecuda/libcollc_cuda.so next to a copy of libcollc.so,
 * the directory backend_cuda.c looks in. */
#include "exec/kernels.c"
#include "exec/batch_host.c"

int cudaMalloc(void **p, size_t n);
int cudaFree(void *p);
int cudaMemcpy(void *d, const void *s, size_t n, int kind);
int cudaMallocHost(void **p, size_t n);
int cudaFreeHost(void *p);
int cudaStreamCreateWithFlags(void **st, unsigned flags);
int cudaStreamSynchronize(void *st);
void fakecuda_launch(const void *t, int b, int first, int next);
void fakecuda_table_gone(const void *t);
void fakecuda_device_open(int open);
void fakecuda_kernel_touch(const void *p, size_t n);

enum { Q_MAX = 64, Q_BASES = 8 };

/* One queued launch: batch b's descriptors (device copy), bases by value. */
typedef struct {
  const xdesc *d;
  int64_t nd;
  int kernel;
  char *base[Q_BASES];
} launch;
static launch queue[Q_MAX];
static int queued;

/* Whether kernel id k has a host form here and a device form in batch.cu
 * (-1: no reduction). Long double rows are refused as batch.cu does. */
int collc_cuda_kernel_ok(int k) {
  int rows = (int)(sizeof k_rows / sizeof k_rows[0]);
  if (k < 0) return 1;
  if (k >= rows * K_NOPS || !k_rows[k / K_NOPS].k2[k % K_NOPS]) return 0;
  MPI_Datatype t = k_rows[k / K_NOPS].type;
  return t != MPI_LONG_DOUBLE && t != MPI_LONG_DOUBLE_INT
#ifdef MPI_C_LONG_DOUBLE_COMPLEX
         && t != MPI_C_LONG_DOUBLE_COMPLEX
#endif
      ;
}

/* Bytes of one base element of kernel id k's type (the table's C type). */
static size_t elem_bytes(int k) { return k < 0 ? 1 : k_rows[k / K_NOPS].size; }

/* Upload T's descriptors into fake device memory *dev. 0 or an error. */
int collc_cuda_table(const xbatch_tab *T, void **dev) {
  int e = cudaMalloc(dev, (size_t)(T->nd ? T->nd : 1) * sizeof(xdesc));
  if (!e && T->nd) e = cudaMemcpy(*dev, T->d, (size_t)T->nd * sizeof(xdesc), 1);
  return e;
}

void collc_cuda_table_free(void *dev) {
  fakecuda_table_gone(dev);
  cudaFree(dev);
}

/* Run the queued launches in order, then empty the queue. */
static void drain(void) {
  fakecuda_device_open(1);
  for (int i = 0; i < queued; i++) {
    const launch *L = &queue[i];
    xspan s = {0, L->nd, 0};
    xbatch_tab v = {.d = (xdesc *)L->d, .nd = L->nd, .b = &s, .nb = 1, .kernel = L->kernel};
    kernel_sel k = {0};
    if (L->kernel >= 0)
      k.k2 = k_rows[L->kernel / K_NOPS].k2[L->kernel % K_NOPS],
      k.k3 = k_rows[L->kernel / K_NOPS].k3[L->kernel % K_NOPS], k.elems = 1;
    batch_run_host(&v, 0, L->base, &k);
  }
  fakecuda_device_open(0);
  queued = 0;
}

/* Report the bytes launch L's descriptors read and write (a GPU reaches
 * device and pinned memory only). (Descriptors read from T's host copy's
 * twin: the device copy is protected outside kernel runs.) */
static void touches(const launch *L) {
  fakecuda_device_open(1);
  for (int64_t j = 0; j < L->nd; j++) {
    const xdesc *D = &L->d[j];
    size_t n = D->kind == BATCH_COPY ? (size_t)D->n : (size_t)D->n * elem_bytes(L->kernel);
    fakecuda_kernel_touch(L->base[D->sbuf] + D->s, n);
    fakecuda_kernel_touch(L->base[D->dbuf] + D->d, n);
    if (D->kind == BATCH_COMBINE) fakecuda_kernel_touch(L->base[D->s2buf] + D->s2, n);
  }
  fakecuda_device_open(0);
}

/* The first batch of T after b (-1: from the start) with descriptors,
 * wrapping around; b itself if no other has any. */
static int next_full(const xbatch_tab *T, int b) {
  for (int i = 1; i <= T->nb; i++) {
    int k = (b + i + T->nb) % T->nb;
    if (T->b[k].nd) return k;
  }
  return b;
}

/* Queue batch b of T (device table dev) on the stream. 0, or 1 (a kernel
 * this backend refuses: batch.cu would trap). */
int collc_cuda_batch(void *dev, const xbatch_tab *T, int b, char *const base[], int nbase,
                     void *st) {
  (void)st;
  if (!collc_cuda_kernel_ok(T->kernel)) return 1;
  if (queued == Q_MAX) drain(); /* (in stream order either way) */
  launch *L = &queue[queued++];
  *L = (launch){(const xdesc *)dev + T->b[b].d0, T->b[b].nd, T->kernel, {0}};
  for (int i = 0; i < nbase && i < Q_BASES; i++) L->base[i] = base[i];
  touches(L);
  fakecuda_launch(dev, b, next_full(T, -1), next_full(T, b));
  return 0;
}

int collc_cuda_sync(void *st) {
  drain();
  return cudaStreamSynchronize(st);
}

int collc_cuda_stream_new(void **st) { return cudaStreamCreateWithFlags(st, 1); }
int collc_cuda_copy(void *dst, const void *src, size_t n) { return cudaMemcpy(dst, src, n, 4); }
int collc_cuda_host_alloc(void **p, size_t n) { return cudaMallocHost(p, n ? n : 1); }
int collc_cuda_dev_alloc(void **p, size_t n) { return cudaMalloc(p, n ? n : 1); }
void collc_cuda_dev_free(void *p) { cudaFree(p); }
void collc_cuda_host_free(void *p) { cudaFreeHost(p); }
