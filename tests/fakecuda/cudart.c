/* cudart.c - a fake CUDA runtime for tests on machines without a GPU: the
 * runtime (and driver) functions collc and its test programs look up,
 * implemented on host memory. Built as $(BUILD)/tests/fakecuda/libcudart.so
 * (soname libcudart.so, the first name src/exec/memclass.c dlopens) with
 * libcuda.so.1 a link to the same file (memclass.c's driver lookup of
 * cuMemGetAddressRange_v2); a test puts that directory on LD_LIBRARY_PATH.
 *
 * "Device" memory is what this cudaMalloc returned (own mappings, page
 * rounded, at most FC_ALLOCS at once); cudaPointerGetAttributes calls it
 * device (2), cudaMallocHost's pinned host (1), anything else unregistered
 * (0). With FAKECUDA_PROTECT=1 device mappings are PROT_NONE except inside
 * this library's copies and a backend's kernel runs (fakecuda_device_open):
 * host code touching device memory then faults, as it does on a real GPU.
 * (Not with a library that takes device pointers itself: it reads them.)
 *
 * Counters (fakecuda_counts, FC_* indices) let a test prove what happened:
 * copies by direction, allocations, attribute queries, and the launches a
 * backend reports with fakecuda_launch, which also checks that each
 * execution of a batch table launches its batches 0..nb-1 once, in order.
 * Single-threaded use (the tests' ranks are); streams are tokens. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { FC_ALLOCS = 256, FC_TABLES = 256, FC_PAGE = 4096 };

/* Counter indices (fakecuda_counts). Keep in sync with the test programs. */
enum {
  FC_MALLOC, FC_FREE, FC_HOST_ALLOC, FC_ATTR, FC_H2D, FC_D2H, FC_D2D, FC_H2H,
  FC_LAUNCH, FC_ORDER_ERR, FC_SYNC, FC_RANGE, FC_HOST_TOUCH, FC_NCOUNT
};
static long long counts[FC_NCOUNT];

typedef struct {
  uintptr_t lo, hi; /* [lo, hi); hi == 0: free slot */
  int type;         /* 1 pinned host, 2 device */
  size_t map;       /* mapped bytes (page rounded) */
} fc_alloc;
static fc_alloc allocs[FC_ALLOCS];
static int protect = -1; /* FAKECUDA_PROTECT, read on first use */
/* The primary context: made active, as by CUDA 12 and later, by cudaSetDevice
 * and by the first allocation or stream (cuDevicePrimaryCtxGetState). */
static int ctx_active;

typedef struct { /* cudaPointerAttributes as CUDA 13 lays it out (written whole, as the
                   real runtime does: a caller's shorter struct overflows, which ASan shows) */
  int type, device;
  void *devptr, *hostptr;
  long reserved[8];
} fc_attr;

/* The allocation holding p, or NULL. */
static fc_alloc *find(const void *p) {
  uintptr_t a = (uintptr_t)p;
  for (int i = 0; i < FC_ALLOCS; i++)
    if (allocs[i].hi && a >= allocs[i].lo && a < allocs[i].hi) return &allocs[i];
  return NULL;
}

static int protecting(void) {
  if (protect < 0) {
    const char *v = getenv("FAKECUDA_PROTECT");
    protect = v && !strcmp(v, "1");
  }
  return protect;
}

/* Make device allocation a accessible (open) or not, when protecting. */
static void set_open(const fc_alloc *a, int open) {
  if (a && a->type == 2 && protecting())
    mprotect((void *)a->lo, a->map, open ? PROT_READ | PROT_WRITE : PROT_NONE);
}

/* Open (1) or close (0) every device allocation: a backend's kernel run. */
void fakecuda_device_open(int open) {
  for (int i = 0; i < FC_ALLOCS; i++)
    if (allocs[i].hi) set_open(&allocs[i], open);
}

/* A new mapping of n bytes of kind type into *p; 0, or 2 (out of memory). */
static int alloc(void **p, size_t n, int type) {
  size_t map = (n + FC_PAGE - 1) / FC_PAGE * FC_PAGE;
  fc_alloc *a = NULL;
  for (int i = 0; i < FC_ALLOCS && !a; i++)
    if (!allocs[i].hi) a = &allocs[i];
  void *m = a ? mmap(NULL, map ? map : FC_PAGE, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
              : MAP_FAILED;
  if (m == MAP_FAILED) return 2; /* cudaErrorMemoryAllocation */
  *a = (fc_alloc){(uintptr_t)m, (uintptr_t)m + (n ? n : 1), type, map ? map : FC_PAGE};
  set_open(a, 0);
  *p = m;
  return 0;
}

/* Unmap the allocation starting at p of kind type; 0, or 1 (invalid value). */
static int release(void *p, int type) {
  fc_alloc *a = p ? find(p) : NULL;
  if (!p) return 0;
  if (!a || a->lo != (uintptr_t)p || a->type != type) return 1;
  munmap(p, a->map);
  a->hi = 0;
  return 0;
}

int cudaMalloc(void **p, size_t n) {
  counts[FC_MALLOC]++;
  ctx_active = 1;
  return alloc(p, n, 2);
}
int cudaFree(void *p) {
  counts[FC_FREE] += p != NULL;
  return release(p, 2);
}
int cudaMallocHost(void **p, size_t n) {
  counts[FC_HOST_ALLOC]++;
  ctx_active = 1;
  return alloc(p, n, 1);
}
int cudaFreeHost(void *p) { return release(p, 1); }

int cudaGetDeviceCount(int *n) { return *n = 1, 0; }
int cudaSetDevice(int d) { return d == 0 ? (ctx_active = 1, 0) : 101; /* cudaErrorInvalidDevice */ }
int cuDevicePrimaryCtxGetState(int dev, unsigned *flags, int *active) {
  return dev ? 101 : (*flags = 0, *active = ctx_active, 0);
}
int cuCtxGetCurrent(void **ctx) { return *ctx = ctx_active ? (void *)&ctx_active : NULL, 0; }
int cudaGetDevice(int *d) { return *d = 0, 0; }

int cudaPointerGetAttributes(fc_attr *out, const void *p) {
  const fc_alloc *a = find(p);
  counts[FC_ATTR]++;
  *out = (fc_attr){a ? a->type : 0, 0, a && a->type == 2 ? (void *)p : NULL,
                   a && a->type == 2 ? NULL : (void *)p, {0}};
  return 0;
}

/* The driver's range of an allocation (libcuda.so.1 is this file too). */
int cuMemGetAddressRange_v2(uintptr_t *base, size_t *size, uintptr_t p) {
  const fc_alloc *a = find((const void *)p);
  counts[FC_RANGE]++;
  if (!a) return 1; /* CUDA_ERROR_INVALID_VALUE */
  *base = a->lo, *size = a->hi - a->lo;
  return 0;
}

/* n bytes from s to d, any kinds (the kind argument is not trusted: the
 * counters say what the pointers are). */
int cudaMemcpy(void *d, const void *s, size_t n, int kind) {
  static const int dir[2][2] = {{FC_H2H, FC_H2D}, {FC_D2H, FC_D2D}};
  fc_alloc *ad = find(d), *as = find(s);
  int dd = ad && ad->type == 2, sd = as && as->type == 2;
  (void)kind;
  counts[dir[sd][dd]]++;
  set_open(ad, 1), set_open(as, 1);
  memmove(d, s, n);
  set_open(ad, 0), set_open(as, 0);
  return 0;
}
int cudaMemcpyAsync(void *d, const void *s, size_t n, int kind, void *st) {
  (void)st;
  return cudaMemcpy(d, s, n, kind);
}

/* Streams and events: tokens (every operation here is synchronous). */
static char stream_tokens[64];
static int next_stream;
int cudaStreamCreateWithFlags(void **st, unsigned flags) {
  (void)flags;
  ctx_active = 1;
  *st = &stream_tokens[next_stream++ % 64];
  return 0;
}
int cudaStreamCreate(void **st) { return cudaStreamCreateWithFlags(st, 0); }
int cudaStreamDestroy(void *st) { return (void)st, 0; }
int cudaStreamSynchronize(void *st) {
  (void)st;
  counts[FC_SYNC]++;
  return 0;
}
int cudaDeviceSynchronize(void) { return cudaStreamSynchronize(NULL); }
int cudaEventCreate(void **e) { return *e = &stream_tokens[0], 0; }
int cudaEventRecord(void *e, void *st) { return (void)e, (void)st, 0; }
int cudaEventSynchronize(void *e) { return (void)e, 0; }
int cudaEventDestroy(void *e) { return (void)e, 0; }
int cudaGetLastError(void) { return 0; }
const char *cudaGetErrorString(int e) { return e ? "fake CUDA error" : "no error"; }

/* ---- for backends and tests ---- */

static struct {
  const void *table; /* NULL: free */
  int first, next;   /* the table's first batch with descriptors; the one it launches next */
} tables[FC_TABLES];

/* A backend launched batch b of table t, whose first batch with descriptors
 * is first and whose next one after b is next (first after the last):
 * counted, and checked to be the batch t's execution launches now (batches
 * without descriptors are not launched). */
void fakecuda_launch(const void *t, int b, int first, int next) {
  int i = 0;
  counts[FC_LAUNCH]++;
  while (i < FC_TABLES && tables[i].table && tables[i].table != t) i++;
  if (i == FC_TABLES) return (void)counts[FC_ORDER_ERR]++;
  if (!tables[i].table) tables[i].table = t, tables[i].first = tables[i].next = first;
  if (b != tables[i].next) counts[FC_ORDER_ERR]++;
  tables[i].next = next;
}

/* A table is gone (its plan freed): a later table may have its address. */
void fakecuda_table_gone(const void *t) {
  for (int i = 0; i < FC_TABLES; i++)
    if (tables[i].table == t) {
      if (tables[i].next != tables[i].first) counts[FC_ORDER_ERR]++; /* (left unfinished) */
      tables[i].table = NULL;
    }
}

/* Tables whose execution launched some but not all of its batches now. */
int fakecuda_unfinished(void) {
  int n = 0;
  for (int i = 0; i < FC_TABLES; i++) n += tables[i].table && tables[i].next != tables[i].first;
  return n;
}

/* A kernel reads or writes [p, p + n): counted FC_HOST_TOUCH unless it lies
 * in one allocation of this runtime (device or pinned memory, which a GPU
 * reaches; pageable host memory it does not). */
void fakecuda_kernel_touch(const void *p, size_t n) {
  const fc_alloc *a = find(p);
  if (n && (!a || (uintptr_t)p + n > a->hi)) counts[FC_HOST_TOUCH]++;
}

/* The counters (FC_* indices), live. */
const long long *fakecuda_counts(void) { return counts; }
