/* memclass.c - the pointer-class range cache and its CUDA query (memclass.h). */
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include "memclass.h"
#include "../plan/config.h"

#define MC_SLOTS 16
#define MC_PAGE ((uintptr_t)4096)
enum { MC_UNPROBED, MC_OFF, MC_NO_RUNTIME, MC_NO_GPU, MC_GPU, MC_FAKE };

atomic_int memclass_state;

typedef struct {
  atomic_uintptr_t lo, hi; /* [lo, hi); hi == 0: empty */
  atomic_int cls;
} mc_slot;

static struct {
  mc_slot s[MC_SLOTS];
  atomic_uint seq;          /* odd while a writer changes slots */
  unsigned next;            /* round robin victim (under lock) */
  pthread_mutex_t lock;
  memclass_query_fn query;
  atomic_llong misses;
  int how; /* MC_*: what probe() found (memclass_how) */
} mc = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* ---- the CUDA query (runtime API, loaded with dlopen) ---- */

/* cudaPointerAttributes as CUDA 13 lays it out (88 bytes: CUDA 13 added
 * reserved[8], and the runtime writes the whole struct). A shorter copy here
 * let cudaPointerGetAttributes overwrite the caller's stack: on the first
 * GPU run every collective crashed. pad: room for a later runtime's growth. */
typedef struct {
  int type;      /* 0 unregistered, 1 host, 2 device, 3 managed */
  int device;
  void *devptr, *hostptr;
  long reserved[8];
  long pad[16];
} cuda_attr;

static int (*cu_attr)(cuda_attr *a, const void *p);
static int (*cu_range)(uintptr_t *base, size_t *size, uintptr_t p); /* cuMemGetAddressRange_v2 */
/* The driver's context state: whether device memory can exist yet. */
static int (*cu_primary)(int dev, unsigned *flags, int *active); /* cuDevicePrimaryCtxGetState */
static int (*cu_current)(void **ctx);                            /* cuCtxGetCurrent */
static int cu_devices;
static atomic_int cu_ctx_seen; /* a context was seen: from then on, always ask */

/* Whether no CUDA context exists yet, so that no buffer can be device memory
 * and nothing need be asked: no primary context active and none current on
 * this thread (the runtime's cudaMalloc makes the primary one active; a
 * driver-API program's own context is current where it calls MPI). A CPU
 * program on a GPU node so pays two driver reads per buffer, not
 * cudaPointerGetAttributes (whose cost showed in OSU on an H200 node; this
 * gate is not yet measured there: README). Without the two functions: 0 (ask). */
static int no_context(void) {
  void *ctx = NULL;
  int active = 0;
  unsigned flags;
  if (atomic_load_explicit(&cu_ctx_seen, memory_order_relaxed) || !cu_primary || !cu_current)
    return 0;
  if (cu_current(&ctx) == 0 && ctx) active = 1;
  for (int d = 0; d < cu_devices && !active; d++)
    if (cu_primary(d, &flags, &active) != 0) active = 1; /* (cannot tell: ask) */
  if (active) atomic_store(&cu_ctx_seen, 1);
  return !active;
}

static int cuda_query(const void *p, memclass_range *out) {
  static const int cls[4] = {MEM_HOST, MEM_PINNED, MEM_DEVICE, MEM_MANAGED};
  cuda_attr a = {0};
  uintptr_t base;
  size_t size;
  if (cu_attr(&a, p) != 0 || a.type < 0 || a.type > 3) return -1;
  out->cls = cls[a.type];
  out->lo = (uintptr_t)p & ~(MC_PAGE - 1), out->hi = out->lo + MC_PAGE;
  if (a.type >= 2 && cu_range && cu_range(&base, &size, (uintptr_t)p) == 0)
    out->lo = base, out->hi = base + size;
  return 0;
}

/* Load the CUDA runtime; 1 if it is there and sees a device. */
static int cuda_load(void) {
  static const char *const libs[] = {"libcudart.so", "libcudart.so.13", "libcudart.so.12", NULL};
  void *h = NULL, *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  for (int i = 0; libs[i] && !h; i++) h = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
  int (*count)(int *) = h ? (int (*)(int *))dlsym(h, "cudaGetDeviceCount") : NULL;
  int n = 0;
  cu_attr = h ? (int (*)(cuda_attr *, const void *))dlsym(h, "cudaPointerGetAttributes") : NULL;
  if (drv) cu_range = (int (*)(uintptr_t *, size_t *, uintptr_t))dlsym(drv, "cuMemGetAddressRange_v2");
  if (drv) cu_primary = (int (*)(int, unsigned *, int *))dlsym(drv, "cuDevicePrimaryCtxGetState");
  if (drv) cu_current = (int (*)(void **))dlsym(drv, "cuCtxGetCurrent");
  int ok = count && cu_attr && count(&n) == 0 && n > 0;
  cu_devices = ok ? n : 0;
  return ok;
}

/* COLLC_TEST_FAKE_DEVICE's range (config.h): device memory there, host elsewhere. */
static uintptr_t fake_lo, fake_hi;
static int fake_query(const void *p, memclass_range *out) {
  uintptr_t a = (uintptr_t)p, page = a & ~(MC_PAGE - 1);
  int dev = a >= fake_lo && a < fake_hi;
  *out = dev ? (memclass_range){MEM_DEVICE, fake_lo, fake_hi}
             : (memclass_range){MEM_HOST, page, page + MC_PAGE};
  return 0;
}

/* The state memclass_cuda settles on (under mc.lock): COLLC_CUDA=0 never
 * loads the runtime; COLLC_TEST_FAKE_DEVICE answers from its range alone. */
static int probe(void) {
  const collc_config *c = config_get();
  if (c->fake_dev[1]) {
    fake_lo = c->fake_dev[0], fake_hi = c->fake_dev[1];
    if (!mc.query) mc.query = fake_query;
    mc.how = MC_FAKE;
    return 2;
  }
  if (!c->cuda) return mc.how = MC_OFF, 1;
  int gpu = cuda_load();
  mc.how = gpu ? MC_GPU : cu_attr ? MC_NO_GPU : MC_NO_RUNTIME;
  if (gpu && !mc.query) mc.query = cuda_query;
  return gpu ? 2 : 1;
}

int memclass_cuda(void) {
  int s = atomic_load_explicit(&memclass_state, memory_order_acquire);
  if (s) return s == 2;
  pthread_mutex_lock(&mc.lock);
  if (!(s = atomic_load(&memclass_state))) {
    s = probe();
    atomic_store_explicit(&memclass_state, s, memory_order_release);
  }
  pthread_mutex_unlock(&mc.lock);
  return s == 2;
}

const char *memclass_how(void) {
  static const char *const names[] = {"not probed", "off (COLLC_CUDA=0)", "no CUDA runtime",
                                      "CUDA runtime, no GPU", "GPU",
                                      "fake device range (COLLC_TEST_FAKE_DEVICE)"};
  return names[atomic_load(&memclass_state) ? mc.how : MC_UNPROBED];
}

/* ---- the cache ---- */

/* The cached class of p, or -1; a consistent snapshot (sequence lock). */
static int cached(uintptr_t p) {
  for (;;) {
    unsigned q = atomic_load_explicit(&mc.seq, memory_order_acquire);
    int found = -1;
    if (q & 1) {
      sched_yield();
      continue;
    }
    for (int i = 0; i < MC_SLOTS && found < 0; i++) {
      uintptr_t lo = atomic_load(&mc.s[i].lo), hi = atomic_load(&mc.s[i].hi);
      if (p >= lo && p < hi) found = atomic_load(&mc.s[i].cls);
    }
    if (atomic_load(&mc.seq) == q) return found; /* (all sequentially consistent: no fences,
                                                    which ThreadSanitizer cannot check) */
  }
}

/* Writers (under mc.lock): begin and end a change of the slots. */
static void write_begin(void) {
  atomic_fetch_add(&mc.seq, 1);
}
static void write_end(void) { atomic_fetch_add(&mc.seq, 1); }

/* Empty the slots overlapping [lo, hi) (under mc.lock, inside a write). */
static void drop(uintptr_t lo, uintptr_t hi) {
  for (int i = 0; i < MC_SLOTS; i++)
    if (atomic_load(&mc.s[i].lo) < hi && lo < atomic_load(&mc.s[i].hi))
      atomic_store(&mc.s[i].lo, 0), atomic_store(&mc.s[i].hi, 0);
}

int memclass_lookup(const void *ptr) {
  uintptr_t p = (uintptr_t)ptr;
  if (!memclass_cuda() && !mc.query) return MEM_HOST;
  if (mc.query == cuda_query && no_context()) return MEM_HOST; /* (no device memory yet) */
  int c = cached(p);
  if (c >= 0) return c;
  memclass_range r;
  pthread_mutex_lock(&mc.lock);
  atomic_fetch_add_explicit(&mc.misses, 1, memory_order_relaxed);
  if (!mc.query || mc.query(ptr, &r) != 0 || r.hi <= p || r.lo > p) r.cls = MEM_HOST;
  if (r.cls != MEM_DEVICE) { /* never cached: a stale host answer would be wrong */
    pthread_mutex_unlock(&mc.lock);
    return r.cls;
  }
  write_begin();
  drop(r.lo, r.hi);
  mc_slot *s = &mc.s[mc.next++ % MC_SLOTS];
  atomic_store(&s->lo, r.lo), atomic_store(&s->cls, r.cls), atomic_store(&s->hi, r.hi);
  write_end();
  pthread_mutex_unlock(&mc.lock);
  return r.cls;
}

int memclass_fresh(const void *ptr) {
  uintptr_t p = (uintptr_t)ptr;
  memclass_range r;
  if (p < 4096 || (!memclass_cuda() && !mc.query)) return MEM_HOST;
  if (mc.query == cuda_query && no_context()) return MEM_HOST;
  pthread_mutex_lock(&mc.lock);
  if (!mc.query || mc.query(ptr, &r) != 0 || r.hi <= p || r.lo > p) r.cls = MEM_HOST;
  write_begin();
  drop(r.cls == MEM_DEVICE ? r.lo : p, r.cls == MEM_DEVICE ? r.hi : p + 1);
  if (r.cls == MEM_DEVICE) {
    mc_slot *s = &mc.s[mc.next++ % MC_SLOTS];
    atomic_store(&s->lo, r.lo), atomic_store(&s->cls, r.cls), atomic_store(&s->hi, r.hi);
  }
  write_end();
  pthread_mutex_unlock(&mc.lock);
  return r.cls;
}

void memclass_forget(const void *p, size_t len) {
  pthread_mutex_lock(&mc.lock);
  write_begin();
  drop((uintptr_t)p, (uintptr_t)p + (len ? len : 1));
  write_end();
  pthread_mutex_unlock(&mc.lock);
}

void memclass_set_query(memclass_query_fn q) {
  pthread_mutex_lock(&mc.lock);
  write_begin();
  drop(0, UINTPTR_MAX);
  mc.next = 0;
  mc.query = q;
  atomic_store(&mc.misses, 0);
  write_end();
  atomic_store(&memclass_state, q ? 2 : 0);
  pthread_mutex_unlock(&mc.lock);
}

long long memclass_misses(void) { return atomic_load(&mc.misses); }

int memclass_gpu(void) { return memclass_cuda() && mc.how == MC_GPU; }
