/* batch.cu - the CUDA batch executor: one kernel launch runs one batch's
 * descriptor table (exec/xbatch.h) on device buffers. Built by make CUDA=1
 * into libcollc_cuda.so (the only object that links the CUDA runtime),
 * which src/exec/backend_cuda.c loads with dlopen where a GPU exists.
 *
 * The reductions come from the same table as the host kernels
 * (exec/kernel_table.h), so kernel id = row x op names the same (type, op)
 * on host and device (compiled with the same mpi.h). Long double and long
 * double complex have no device arithmetic: their ids are refused
 * (collc_cuda_kernel_ok), so such calls stay with the host path/the library.
 * Grid: blockIdx.y walks descriptors, x threads walk a descriptor's
 * elements (grid-stride); the batch semantics (ir/batch.h) make every
 * element independent. The table is uploaded once per plan and stays
 * resident; a launch passes the buffer bases by value. */
#include <mpi.h>
#include <stdint.h>
#include <cuda_runtime.h>
extern "C" {
#include "../exec/xbatch.h"
}

/* Device forms of the table's complex kinds: + and * as C99 computes them
 * (no FMA contraction: -fmad=false). */
template <typename R> struct kcplx {
  R re, im;
  __device__ kcplx operator+(const kcplx &o) const { return {re + o.re, im + o.im}; }
  __device__ kcplx operator*(const kcplx &o) const {
    return {re * o.re - im * o.im, re * o.im + im * o.re};
  }
};
/* Long double: no device arithmetic; its kernels trap and are refused. */
struct kld_none {
  double v[2];
  __device__ kld_none operator+(const kld_none &) const { __trap(); return *this; }
  __device__ kld_none operator*(const kld_none &) const { __trap(); return *this; }
  __device__ bool operator<(const kld_none &) const { __trap(); return false; }
  __device__ bool operator>(const kld_none &) const { __trap(); return false; }
  __device__ bool operator==(const kld_none &) const { __trap(); return false; }
};
#define K_LDOUBLE_T kld_none
#define K_FCPLX_T kcplx<float>
#define K_DCPLX_T kcplx<double>
#define K_LDCPLX_T kld_none
#include "../exec/kernel_table.h"

enum {
#define K_OP_ENUM(unused, on, oh, body, flags) K_OP_##on,
  KERNEL_OPS(K_OP_ENUM, 0) K_NOPS
#undef K_OP_ENUM
};

typedef void (*dk2_fn)(const void *in, void *inout, uint64_t i);
typedef void (*dk3_fn)(const void *a, const void *b, void *out, uint64_t i);

/* Element i of the kernels of type tn and op on. */
#define KD_DEFINE(tn, T, AT, on, body)                                                           \
  __device__ static void d2_##tn##_##on(const void *in, void *inout, uint64_t i) {               \
    const T *a = (const T *)in;                                                                  \
    T *b = (T *)inout;                                                                           \
    body(b[i], a[i], b[i], T, AT);                                                               \
  }                                                                                              \
  __device__ static void d3_##tn##_##on(const void *a_, const void *b_, void *out, uint64_t i) { \
    const T *a = (const T *)a_;                                                                  \
    const T *b = (const T *)b_;                                                                  \
    T *o = (T *)out;                                                                             \
    body(o[i], a[i], b[i], T, AT);                                                               \
  }
#define KD_GEN_CELL(tn, T, AT, cat, on, oh, body, flags)                                         \
  K_IF(K_PICK(cat, flags), KD_DEFINE, K_NOTHING)(tn, T, AT, on, body)
#define KD_GEN_TYPE(tn, h, T, AT, cat) KERNEL_OPS(KD_GEN_CELL, tn, T, AT, cat)
KERNEL_TYPES(KD_GEN_TYPE)

#define KD_CELL2(tn, cat, on, oh, body, flags) K_IF(K_PICK(cat, flags), d2_##tn##_##on, NULL),
#define KD_CELL3(tn, cat, on, oh, body, flags) K_IF(K_PICK(cat, flags), d3_##tn##_##on, NULL),
#define KD_ROW2(tn, h, T, AT, cat) KERNEL_OPS(KD_CELL2, tn, cat)
#define KD_ROW3(tn, h, T, AT, cat) KERNEL_OPS(KD_CELL3, tn, cat)
__device__ static const dk2_fn d_k2[] = {KERNEL_TYPES(KD_ROW2)};
__device__ static const dk3_fn d_k3[] = {KERNEL_TYPES(KD_ROW3)};

/* Whether a row's type has device arithmetic (no long double in it). */
template <typename T> struct k_dev_ok { static const bool value = true; };
template <> struct k_dev_ok<kld_none> { static const bool value = false; };
template <> struct k_dev_ok<kp_ldouble_int> { static const bool value = false; };
#define KD_OK(tn, h, T, AT, cat) k_dev_ok<T>::value,
static const bool row_ok[] = {KERNEL_TYPES(KD_OK)};

typedef struct {
  char *b[8];
} bases;

/* One batch: descriptors d[0..nd) (blockIdx.y, then strided), elements by x. */
__global__ static void run_batch(const xdesc *d, int64_t nd, bases base, int kernel) {
  for (int64_t j = blockIdx.y; j < nd; j += gridDim.y) {
    const xdesc D = d[j];
    const char *s = base.b[D.sbuf] + D.s, *s2 = base.b[D.s2buf] + D.s2;
    char *o = base.b[D.dbuf] + D.d;
    uint64_t i0 = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint64_t step = (uint64_t)gridDim.x * blockDim.x;
    if (D.kind == 0)
      for (uint64_t i = i0; i < D.n; i += step) o[i] = s[i];
    else if (D.kind == 1)
      for (uint64_t i = i0; i < D.n; i += step) d_k2[kernel](s, o, i);
    else
      for (uint64_t i = i0; i < D.n; i += step) d_k3[kernel](s, s2, o, i);
  }
}

extern "C" {

/* Whether kernel id k has a device form (-1: no reduction, always). */
int collc_cuda_kernel_ok(int k) {
  int rows = (int)(sizeof row_ok / sizeof row_ok[0]);
  return k < 0 || (k < rows * K_NOPS && row_ok[k / K_NOPS]);
}

/* Upload T's descriptors once (resident for the plan's life) into *dev.
 * 0, or a CUDA error code. */
int collc_cuda_table(const xbatch_tab *T, void **dev) {
  cudaError_t e = cudaMalloc(dev, (size_t)(T->nd ? T->nd : 1) * sizeof(xdesc));
  if (e == cudaSuccess && T->nd)
    e = cudaMemcpy(*dev, T->d, (size_t)T->nd * sizeof(xdesc), cudaMemcpyHostToDevice);
  return (int)e;
}

void collc_cuda_table_free(void *dev) { cudaFree(dev); }

/* Launch batch b of T (its device table dev) on stream st with buffer
 * bases base[0..nbase); no host-to-device copy. 0 or a CUDA error code.
 * The caller synchronises st before anything else touches the buffers. */
int collc_cuda_batch(void *dev, const xbatch_tab *T, int b, char *const base[], int nbase,
                     void *st) {
  bases B = {{0}};
  const xspan *S = &T->b[b];
  uint64_t most = 1;
  for (int i = 0; i < nbase && i < 8; i++) B.b[i] = base[i];
  for (int64_t j = S->d0; j < S->d0 + S->nd; j++)
    if (T->d[j].n > most) most = T->d[j].n;
  dim3 grid((unsigned)((most + 255) / 256 < 1024 ? (most + 255) / 256 : 1024),
            (unsigned)(S->nd < 65535 ? (S->nd ? S->nd : 1) : 65535));
  run_batch<<<grid, 256, 0, (cudaStream_t)st>>>((const xdesc *)dev + S->d0, S->nd, B, T->kernel);
  return (int)cudaGetLastError();
}

int collc_cuda_sync(void *st) { return (int)cudaStreamSynchronize((cudaStream_t)st); }

/* A private stream (not synchronising with the legacy default stream). */
int collc_cuda_stream_new(void **st) {
  return (int)cudaStreamCreateWithFlags((cudaStream_t *)st, cudaStreamNonBlocking);
}

/* n bytes from src to dst, any memory kinds (unified addressing); synchronous. */
int collc_cuda_copy(void *dst, const void *src, size_t n) {
  return (int)cudaMemcpy(dst, src, n, cudaMemcpyDefault);
}

/* Device memory of n bytes into *p (an execution's TMP buffer); and its free. */
int collc_cuda_dev_alloc(void **p, size_t n) { return (int)cudaMalloc(p, n ? n : 1); }
void collc_cuda_dev_free(void *p) { cudaFree(p); }

/* Pinned host memory of n bytes into *p; and its free. */
int collc_cuda_host_alloc(void **p, size_t n) { return (int)cudaMallocHost(p, n ? n : 1); }
void collc_cuda_host_free(void *p) { cudaFreeHost(p); }
}
