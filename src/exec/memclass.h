/* memclass.h - which kind of memory a buffer is: host, or CUDA device,
 * managed or pinned host memory.
 *
 * The CUDA runtime is loaded at run time (dlopen libcudart) on first use,
 * unless COLLC_CUDA=0: collc has no link-time CUDA dependency. Without it,
 * or without a GPU, every pointer is host memory and the check is one load
 * and a branch.
 *
 * With a GPU, misses ask cudaPointerGetAttributes (and the driver's address
 * range of the allocation). collc cannot see cudaFree or munmap, so it
 * caches only answers whose staleness is harmless: device allocations (16
 * ranges, most recent replaced round robin). A stale device range (freed,
 * its addresses reused as host memory) sends a call to the MPI library,
 * which classifies buffers itself, or to the staging path, which copies
 * with cudaMemcpy: slower, never wrong; the CUDA backend's path, whose
 * kernels cannot reach host memory, asks memclass_fresh instead. Host, pinned and
 * managed answers are asked again on every lookup (as a CUDA-aware MPI
 * library does per buffer): cached, a host page unmapped and later reused
 * for a device allocation would have host code touch device memory.
 * Until a CUDA context exists (none active, none current), no buffer can be
 * device memory and nothing is asked (a CPU program on a GPU node: two cheap
 * driver reads per buffer instead of cudaPointerGetAttributes).
 * memclass_forget drops ranges (for a free hook, if one is ever installed).
 * Thread-safe (a sequence lock). */
#ifndef COLLC_MEMCLASS_H
#define COLLC_MEMCLASS_H

#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include "../hot.h"

enum { MEM_HOST = 0, MEM_PINNED, MEM_DEVICE, MEM_MANAGED, MEM_CLASSES };

/* Memory classes that host code may read and write directly. */
static inline int memclass_host_ok(int cls) { return cls != MEM_DEVICE; }

/* What the memory at p is: class, and the range [lo, hi) it holds for. 0,
 * or -1 (the query failed: host memory is assumed, nothing cached). */
typedef struct {
  int cls;
  uintptr_t lo, hi;
} memclass_range;
typedef int (*memclass_query_fn)(const void *p, memclass_range *out);

extern COLLC_LOCAL atomic_int memclass_state; /* 0 not probed, 1 no CUDA, 2 CUDA (see memclass_of) */

/* The class of p, from the cache (memclass.c). */
int memclass_lookup(const void *p);

/* The class of the memory at p (NULL, MPI_IN_PLACE, MPI_BOTTOM: host). */
static inline int memclass_of(const void *p) {
  int s = atomic_load_explicit(&memclass_state, memory_order_relaxed);
  if (s == 1 || (uintptr_t)p < 4096) return MEM_HOST;
  return memclass_lookup(p);
}

/* The class of p asked afresh (no cache; with CUDA only, else host): a
 * device answer is cached as memclass_lookup's, any other drops a cached
 * range holding p (a stale device range). */
int memclass_fresh(const void *p);
/* Drop cached ranges that overlap [p, p + len) (a free hook's call). */
void memclass_forget(const void *p, size_t len);
/* Test hook: answer misses with q instead of CUDA (NULL: back to probing);
 * empties the cache and the counters. */
void memclass_set_query(memclass_query_fn q);
/* Cache misses since the last memclass_set_query. */
long long memclass_misses(void);
/* Whether the CUDA runtime is loaded and sees a GPU (probes once; also true
 * under COLLC_TEST_FAKE_DEVICE, whose range answers misses instead). */
int memclass_cuda(void);
/* Whether a real GPU was found (not the test hook): the CUDA backend's gate. */
int memclass_gpu(void);
/* What the probe found, in words (the collc-cuda line of COLLC_STATS). */
const char *memclass_how(void);

#endif
