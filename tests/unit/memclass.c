/* memclass.c - the pointer-class range cache (src/exec/memclass.h).
 *
 * Truth: a fake device allocator written here (a table of ranges and the
 * class each was allocated as; its free calls memclass_forget, as a hook on
 * cudaFree must) answers the cache's misses and counts them. Checks: a
 * first lookup misses and asks once, any pointer inside the same device
 * allocation then hits with no query; host, pinned and managed answers are
 * never cached (asked each time); the free rule (memclass.h): a device
 * range freed without a forget and reused as host memory stays device until
 * forgotten, memory answered as host or managed and then reallocated as
 * device is device at once; more ranges than slots evict (and re-ask); four threads looking
 * up stable ranges all get the right class. Without CUDA (or a GPU: this
 * is what a machine without one sees) every pointer is host memory. The
 * cost of a call is printed: host pointers without CUDA, cache hits. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include "exec/memclass.h"
#include "unit.h"

#define NFAKE 64
static struct {
  uintptr_t lo, hi;
  int cls;
} fake[NFAKE];
static long queries;

/* The fake driver: the allocation holding p, else a host page. */
static int fake_query(const void *p, memclass_range *out) {
  uintptr_t a = (uintptr_t)p;
  __atomic_fetch_add(&queries, 1, __ATOMIC_RELAXED);
  for (int i = 0; i < NFAKE; i++)
    if (a >= fake[i].lo && a < fake[i].hi) {
      *out = (memclass_range){fake[i].cls, fake[i].lo, fake[i].hi};
      return 0;
    }
  *out = (memclass_range){MEM_HOST, a & ~(uintptr_t)4095, (a & ~(uintptr_t)4095) + 4096};
  return 0;
}

/* "Allocate" [lo, lo + n) as class cls in fake slot i; free it. */
static void fake_alloc(int i, void *lo, size_t n, int cls) {
  fake[i].lo = (uintptr_t)lo, fake[i].hi = (uintptr_t)lo + n, fake[i].cls = cls;
}
static void fake_free(int i) {
  memclass_forget((void *)fake[i].lo, fake[i].hi - fake[i].lo);
  fake[i].lo = fake[i].hi = 0;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Nanoseconds per memclass_of(p), over n calls. */
static double cost(void *p, long n) {
  volatile int sink = 0;
  double t0 = now();
  for (long i = 0; i < n; i++) sink += memclass_of((char *)p + (i & 63));
  (void)sink;
  return (now() - t0) / (double)n * 1e9;
}

static char *arena;

static void *reader(void *arg) {
  long bad = 0;
  for (int k = 0; k < 200000; k++) {
    int i = k % 8;
    bad += memclass_of(arena + i * 65536 + (k % 1000)) != (i % 2 ? MEM_DEVICE : MEM_MANAGED);
  }
  *(long *)arg = bad;
  return NULL;
}

int main(void) {
  long long misses;
  arena = calloc(64, 65536);
  char *host = calloc(1, 100);
  CHECK(memclass_of(host) == MEM_HOST, "host malloc not host");
  printf("CUDA with a GPU here: %s\n", memclass_cuda() ? "yes" : "no");
  /* Without CUDA the probe's answer is remembered (state 1), so a host
   * pointer takes memclass_of's inline test; its time is printed, never
   * asserted (a timed check fails on a busy machine). */
  double t_host = memclass_cuda() ? -1 : cost(host, 50000000);
  CHECK(memclass_cuda() || atomic_load(&memclass_state) == 1,
        "no CUDA, yet the probe is not remembered (state %d)", atomic_load(&memclass_state));

  memclass_set_query(fake_query);
  fake_alloc(0, arena, 65536, MEM_DEVICE);
  CHECK(memclass_of(arena + 10) == MEM_DEVICE && queries == 1, "first lookup: %ld queries", queries);
  CHECK(memclass_of(arena) == MEM_DEVICE && memclass_of(arena + 65535) == MEM_DEVICE &&
        queries == 1, "inside the allocation: %ld queries", queries);
  CHECK(memclass_of(arena + 65536) == MEM_HOST && queries == 2, "past its end: %ld", queries);
  CHECK(memclass_of(host) == MEM_HOST && memclass_of(host + 8) == MEM_HOST,
        "host pointer not host");
  long q = queries;
  CHECK(memclass_of(host + 1) == MEM_HOST && queries == q + 1, "host page cached");
  misses = memclass_misses();
  CHECK(misses == queries, "misses %lld, queries %ld", misses, queries);
  /* The free rule: collc sees no cudaFree. A device range freed without a
   * forget and its addresses reused as host memory stays device (the safe
   * direction: the MPI library serves the call) until forgotten. */
  fake[0].cls = MEM_HOST;
  CHECK(memclass_of(arena + 10) == MEM_DEVICE && queries == q + 1, "stale device range asked");
  memclass_forget(arena, 1);
  CHECK(memclass_of(arena + 10) == MEM_HOST && queries == q + 2, "forgotten range still cached");
  /* The other direction must never be stale: memory just answered as host
   * (or pinned, managed), then reused as device memory, is device at once. */
  fake_free(0);
  fake_alloc(1, arena, 4096, MEM_MANAGED);
  CHECK(memclass_of(arena + 10) == MEM_MANAGED && memclass_of(arena + 11) == MEM_MANAGED,
        "managed range: wrong class");
  fake[1].cls = MEM_DEVICE; /* freed without a forget, reallocated as device memory */
  CHECK(memclass_of(arena + 10) == MEM_DEVICE, "managed range reused as device: stale class");
  fake_free(1);
  CHECK(memclass_of(arena + 64) == MEM_HOST, "freed range");
  fake_alloc(2, arena, 4096, MEM_DEVICE); /* a host page, now a device allocation */
  CHECK(memclass_of(arena + 64) == MEM_DEVICE, "host page reused as device: stale class");
  fake_free(2);
  fake_alloc(2, arena + 4096, 4096, MEM_PINNED);
  CHECK(memclass_of(arena + 5000) == MEM_PINNED && memclass_host_ok(MEM_PINNED) &&
        memclass_host_ok(MEM_MANAGED) && !memclass_host_ok(MEM_DEVICE), "pinned");
  fake_free(2);

  for (int i = 0; i < 20; i++) fake_alloc(i, arena + i * 65536, 65536, MEM_DEVICE);
  q = queries;
  for (int i = 0; i < 20; i++) memclass_of(arena + i * 65536 + 7);
  CHECK(queries == q + 20, "20 ranges: %ld queries", queries - q);
  q = queries;
  for (int i = 4; i < 20; i++) memclass_of(arena + i * 65536 + 9); /* the 16 newest: cached */
  CHECK(queries == q, "the 16 newest not cached: %ld queries", queries - q);
  memclass_of(arena + 9); /* evicted */
  CHECK(queries == q + 1, "evicted range: %ld queries", queries - q);
  double t_hit = cost(arena + 19 * 65536, 20000000);

  for (int i = 0; i < 20; i++) fake_free(i);
  for (int i = 0; i < 8; i++) fake_alloc(i, arena + i * 65536, 65536, i % 2 ? MEM_DEVICE : MEM_MANAGED);
  pthread_t th[4];
  long bad[4];
  for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, reader, &bad[i]);
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  CHECK(!bad[0] && !bad[1] && !bad[2] && !bad[3], "threads: %ld %ld %ld %ld wrong", bad[0],
        bad[1], bad[2], bad[3]);
  memclass_set_query(NULL);
  CHECK(memclass_of(arena) == (memclass_cuda() ? memclass_of(arena) : MEM_HOST), "after the hook");
  if (t_host >= 0) printf("memclass_of: host pointer without CUDA %.2f ns per call\n", t_host);
  printf("memclass_of: cache hit (16 ranges cached, the last one asked) %.2f ns per call\n", t_hit);
  free(arena), free(host);
  return unit_summary("memclass");
}
