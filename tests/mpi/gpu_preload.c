/* gpu_preload.c - collectives with CUDA device buffers (issue 16), for a
 * machine with a GPU (tests/gpu/run.sh). An unmodified program: collc comes
 * by LD_PRELOAD, so MPI_<coll> is collc's and PMPI_<coll> the library's.
 * The CUDA runtime (and NCCL) are loaded with dlopen, so this file builds
 * in the normal build, where it is compiled but never run.
 *
 *   mpi_gpu_preload check   every collective, device buffers, vs a host reference
 *   mpi_gpu_preload bench   allreduce 8 B .. 64 MiB: collc vs native vs NCCL
 *
 * check: allreduce, reduce_scatter_block, allgather, reduce, bcast,
 * alltoall at several counts, and (blocking) in place (blocking; nonblocking and persistent too when
 * the library is CUDA-aware: collc hands those to it). Truth: the library's
 * PMPI_<coll> on host copies of the same input; ints must be equal exactly;
 * doubles (allreduce) must be bitwise identical on all ranks (a hash, min
 * and max over ranks) and within 1e-12 of the reference. Ranks share GPU 0
 * (or rank % devices). Exit 0 if all pass.
 * bench: per size 5 warm-ups, 20 repetitions each after a barrier, a
 * repetition's time the maximum over ranks; min and median in us. Native
 * with device buffers only on a CUDA-aware library; NCCL if libnccl.so.2
 * loads. */
#define _GNU_SOURCE /* (RTLD_DEFAULT) */
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#if defined(OPEN_MPI)
#include <mpi-ext.h>
#endif

/* aware: collc's path takes the library for CUDA-aware (the library's own
 * answer, or the test hook); lib_dev: the library itself can be handed
 * device buffers (it is CUDA-aware, or the fake CUDA's device memory is
 * host memory): only then are nonblocking and persistent calls, which
 * collc hands to the library, checked with device buffers. */
static int rank, size, aware, lib_dev;
/* The fake CUDA's counters (tests/fakecuda/cudart.c's FC_* order), or NULL. */
enum { FC_MALLOC, FC_FREE, FC_HOST_ALLOC, FC_ATTR, FC_H2D, FC_D2H, FC_D2D, FC_H2H, FC_LAUNCH,
       FC_ORDER_ERR, FC_SYNC, FC_RANGE, FC_HOST_TOUCH, FC_NCOUNT };
static const long long *fake;
static int (*fake_unfinished)(void);
static long long staged_calls, fake_bad;
static struct { /* the CUDA runtime, by dlopen */
  int (*malloc_)(void **p, size_t n);
  int (*free_)(void *p);
  int (*memcpy_)(void *d, const void *s, size_t n, int kind); /* 4: cudaMemcpyDefault */
  int (*sync)(void);
  int (*count)(int *n);
  int (*set)(int dev);
  int (*stream_new)(void **st);
  int (*stream_sync)(void *st);
  int (*host_alloc)(void **p, size_t n);
} cu;
static struct { /* NCCL, by dlopen (optional) */
  int (*get_id)(void *id);
  int (*init)(void **comm, int n, char id[128], int rank);
  int (*allreduce)(const void *s, void *r, size_t n, int type, int op, void *comm, void *st);
  void *comm, *stream;
} nc;

/* Load the symbols names[i] of library lib into fn[i]; 1 if all are there. */
static int load(const char *lib, const char *const *names, void **fn, int n) {
  void *h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
  for (int i = 0; h && i < n; i++)
    if (!(fn[i] = dlsym(h, names[i]))) return 0;
  return h != NULL;
}

/* Collective calls on host buffers before any CUDA context exists must ask
 * CUDA nothing (memclass's gate), after one exists they ask once per buffer:
 * the fake's attribute queries of one host allreduce (collc's). */
static long long host_queries(void) {
  long long before = fake[FC_ATTR];
  int x = rank, y = 0;
  MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return fake[FC_ATTR] - before;
}
static long long queries_before_context = -1;

static int cuda_init(void) {
  static const char *const names[] = {"cudaMalloc", "cudaFree", "cudaMemcpy", "cudaDeviceSynchronize",
                                      "cudaGetDeviceCount", "cudaSetDevice", "cudaStreamCreate",
                                      "cudaStreamSynchronize", "cudaMallocHost"};
  int n = 0;
  if (!load("libcudart.so", names, (void **)&cu, 9) && !load("libcudart.so.13", names, (void **)&cu, 9) &&
      !load("libcudart.so.12", names, (void **)&cu, 9))
    return 0;
  const long long *(*counts)(void) = (const long long *(*)(void))dlsym(RTLD_DEFAULT, "fakecuda_counts");
  fake = counts ? counts() : NULL;
  fake_unfinished = (int (*)(void))dlsym(RTLD_DEFAULT, "fakecuda_unfinished");
  if (fake) queries_before_context = host_queries(); /* (cudaSetDevice makes the context) */
  return cu.count(&n) == 0 && n > 0 && cu.set(rank % n) == 0;
}

/* A device copy of n host bytes h (NULL: uninitialised). */
static void *dev_of(const void *h, size_t n) {
  void *d = NULL;
  if (cu.malloc_(&d, n ? n : 1)) {
    fprintf(stderr, "rank %d: cudaMalloc(%zu) failed\n", rank, n);
    PMPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (h) cu.memcpy_(d, h, n, 4);
  return d;
}

enum { ALLREDUCE, RSB, ALLGATHER, REDUCE, BCAST, ALLTOALL, NCOLL };
enum { BLOCKING, NONBLOCKING, PERSISTENT, REFERENCE };
static const char *const coll_names[NCOLL] = {"allreduce", "reduce_scatter_block", "allgather",
                                              "reduce", "bcast", "alltoall"};
/* Whether collective c has a significant send buffer apart from its receive
 * buffer, and a significant receive buffer on a rank (root: it is c's root). */
static const int has_send[NCOLL] = {1, 1, 1, 1, 0, 1};
static int has_recv(int c, int root) { return c != REDUCE || root; }

/* What the fake's counters d (after minus before the tested call c, mode m,
 * whose root this rank is or not; in place: MPI_IN_PLACE where MPI allows
 * it, at the root only for reduce) must show; 0 if so. */
static int fake_expect(int c, int m, int root, int in_place, const long long *d) {
  int r = has_recv(c, root), staged = !aware && m == BLOCKING;
  int sent = has_send[c] && !(in_place && (c != REDUCE || root));
  if (staged) staged_calls++;
  if (staged)
    return d[FC_LAUNCH] || d[FC_D2H] != sent + r || d[FC_H2D] != r || d[FC_D2D];
  return d[FC_D2H] || d[FC_D2D] || d[FC_H2D] > d[FC_MALLOC]; /* (table uploads, TMP buffers) */
}

/* Collective c on n elements of t (per block), s into r, in mode m
 * (REFERENCE: PMPI_). MPI code. */
static int coll_run(int c, int m, const void *s, void *r, int n, MPI_Datatype t) {
  MPI_Comm w = MPI_COMM_WORLD;
  MPI_Request q = MPI_REQUEST_NULL;
  int root = c == BCAST ? size - 1 : 1 % size, rc;
#define ALL3(B, I, P, R, ...)                                                                 \
  (m == BLOCKING ? B(__VA_ARGS__) : m == NONBLOCKING ? I(__VA_ARGS__, &q)                     \
   : m == PERSISTENT ? P(__VA_ARGS__, MPI_INFO_NULL, &q) : R(__VA_ARGS__))
#if MPI_VERSION >= 4
#define PI(x) MPI_##x##_init
#else
#define PI(x) MPIX_##x##_init
#endif
  switch (c) {
  case ALLREDUCE:
    rc = ALL3(MPI_Allreduce, MPI_Iallreduce, PI(Allreduce), PMPI_Allreduce, s, r, n, t, MPI_SUM, w);
    break;
  case RSB:
    rc = ALL3(MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, PI(Reduce_scatter_block),
              PMPI_Reduce_scatter_block, s, r, n, t, MPI_SUM, w);
    break;
  case ALLGATHER:
    rc = ALL3(MPI_Allgather, MPI_Iallgather, PI(Allgather), PMPI_Allgather, s, n, t, r, n, t, w);
    break;
  case REDUCE:
    rc = ALL3(MPI_Reduce, MPI_Ireduce, PI(Reduce), PMPI_Reduce, s, r, n, t, MPI_SUM, root, w);
    break;
  case BCAST:
    rc = ALL3(MPI_Bcast, MPI_Ibcast, PI(Bcast), PMPI_Bcast, r, n, t, root, w);
    break;
  default:
    rc = ALL3(MPI_Alltoall, MPI_Ialltoall, PI(Alltoall), PMPI_Alltoall, s, n, t, r, n, t, w);
  }
#undef ALL3
  if (rc || m == BLOCKING || m == REFERENCE) return rc;
  if (m == PERSISTENT) rc = MPI_Start(&q);
  if (!rc) rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
  if (!rc && m == PERSISTENT) rc = MPI_Request_free(&q);
  return rc;
}

/* FNV-1a of n bytes. */
static uint64_t hash(const unsigned char *b, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

/* One check: collective c, mode m, n elements of int (dbl: double) per
 * block, device buffers against the host reference. 1 if it failed here. */
static int check_one(int c, int m, int n, int dbl) {
  size_t esz = dbl ? sizeof(double) : sizeof(int), bytes = (size_t)n * (size_t)size * esz;
  char *hs = malloc(bytes), *hr = malloc(bytes), *out = malloc(bytes), *ref = malloc(bytes);
  MPI_Datatype t = dbl ? MPI_DOUBLE : MPI_INT;
  for (size_t k = 0; k < (size_t)n * (size_t)size; k++) {
    if (dbl) ((double *)hs)[k] = 1.0 / (double)(rank + 3) + (double)k * 1e-3;
    else ((int *)hs)[k] = rank * 1000003 + (int)k * 7 + c;
    if (dbl) ((double *)hr)[k] = -1.0;
    else ((int *)hr)[k] = -1 - (int)k;
  }
  if (c == BCAST && rank == size - 1) memcpy(hr, hs, (size_t)n * esz);
  memcpy(ref, hr, bytes);
  void *ds = dev_of(hs, bytes), *dr = dev_of(hr, bytes);
  long long before[FC_NCOUNT], delta[FC_NCOUNT];
  if (fake) memcpy(before, fake, sizeof before);
  int rc = coll_run(c, m, ds, dr, n, t), rr, bad = 0, fbad = 0;
  for (int i = 0; fake && i < FC_NCOUNT; i++) delta[i] = fake[i] - before[i];
  if (fake && (fbad = fake_expect(c, m, rank == (c == BCAST ? size - 1 : 1 % size), 0, delta))) {
    fake_bad++;
    fprintf(stderr, "rank %d: %s mode %d n=%d: fake CUDA counts: launches=%lld h2d=%lld "
            "d2h=%lld d2d=%lld mallocs=%lld frees=%lld\n", rank, coll_names[c], m, n,
            delta[FC_LAUNCH], delta[FC_H2D], delta[FC_D2H], delta[FC_D2D], delta[FC_MALLOC],
            delta[FC_FREE]);
  }
  rr = coll_run(c, REFERENCE, hs, ref, n, t);
  cu.memcpy_(out, dr, bytes, 4);
  if (!dbl) bad = rc || rr || memcmp(out, ref, bytes);
  else {
    uint64_t h[2] = {hash((unsigned char *)out, (size_t)n * esz), 0}, lo, hi;
    h[1] = h[0];
    PMPI_Allreduce(&h[0], &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    PMPI_Allreduce(&h[1], &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    bad = rc || rr || lo != hi;
    for (int k = 0; k < n && !bad; k++) {
      double a = ((double *)out)[k], b = ((double *)ref)[k];
      bad = (a > b ? a - b : b - a) > 1e-12 * (b > 0 ? b : -b);
    }
  }
  bad |= fbad;
  if (bad)
    fprintf(stderr, "rank %d: %s mode %d n=%d %s: %s\n", rank, coll_names[c], m, n,
            dbl ? "double" : "int", rc || rr ? "error" : fbad ? "fake CUDA counts" : "wrong");
  cu.free_(ds), cu.free_(dr), free(hs), free(hr), free(out), free(ref);
  return bad;
}

/* Blocking collective c (not bcast) in place on n ints per block: the
 * device buffer r holds the input (reduce: at root 0; the others send s).
 * (Root 0: MPICH 4.0.2's own reduce in place at root 1 of 1000 ints copies
 * from MPI_IN_PLACE, with host buffers too.) ref: the library's PMPI_ call,
 * not in place, the input taken from s (allgather: this rank's block of
 * it), the result into r. MPI code. */
static int coll_in_place(int c, int ref, const int *s, int *r, int n) {
  MPI_Comm w = MPI_COMM_WORLD;
  MPI_Datatype t = MPI_INT;
  int root = 0;
  const void *in = !ref ? MPI_IN_PLACE : c == ALLGATHER ? s + (size_t)rank * n : s;
#define CALL(f, ...) (ref ? PMPI_##f(__VA_ARGS__) : MPI_##f(__VA_ARGS__))
  switch (c) {
  case ALLREDUCE: return CALL(Allreduce, in, r, n, t, MPI_SUM, w);
  case RSB: return CALL(Reduce_scatter_block, in, r, n, t, MPI_SUM, w);
  case ALLGATHER: return CALL(Allgather, in, n, t, r, n, t, w);
  case REDUCE: return CALL(Reduce, rank == root ? in : s, r, n, t, MPI_SUM, root, w);
  default: return CALL(Alltoall, in, n, t, r, n, t, w);
  }
#undef CALL
}

/* One in-place check of collective c on n ints per block against the
 * reference (the bytes MPI defines: rsb's first block, reduce's at the
 * root, all of allgather's and alltoall's, none at reduce's other ranks).
 * 1 if it failed here. */
static int check_in_place(int c, int n) {
  size_t all = (size_t)n * (size_t)size, bytes = all * sizeof(int);
  int *hs = malloc(bytes), *hr = malloc(bytes), *out = malloc(bytes), *ref = malloc(bytes);
  int root = rank == 0;
  for (size_t k = 0; k < all; k++) hs[k] = rank * 1009 + (int)k * 3 + c, hr[k] = hs[k] ^ 0x55;
  int *ds = dev_of(hs, bytes), *dr = dev_of(hr, bytes);
  long long before[FC_NCOUNT], delta[FC_NCOUNT];
  if (fake) memcpy(before, fake, sizeof before);
  int rc = coll_in_place(c, 0, ds, dr, n), fbad = 0;
  for (int i = 0; fake && i < FC_NCOUNT; i++) delta[i] = fake[i] - before[i];
  if (fake && (fbad = fake_expect(c, BLOCKING, root, 1, delta)))
    fprintf(stderr, "rank %d: %s in place n=%d: fake CUDA counts: launches=%lld h2d=%lld "
            "d2h=%lld\n", rank, coll_names[c], n, delta[FC_LAUNCH], delta[FC_H2D], delta[FC_D2H]);
  int rr = coll_in_place(c, 1, root || c != REDUCE ? hr : hs, ref, n);
  size_t cmp = c == ALLGATHER || c == ALLTOALL ? bytes : c == REDUCE && !root ? 0 : n * sizeof(int);
  cu.memcpy_(out, dr, bytes, 4);
  int bad = rc || rr || fbad || memcmp(out, ref, cmp);
  if (bad) fprintf(stderr, "rank %d: %s in place n=%d: %s\n", rank, coll_names[c], n,
                   rc || rr ? "error" : fbad ? "fake CUDA counts" : "wrong");
  cu.free_(ds), cu.free_(dr), free(hs), free(hr), free(out), free(ref);
  return bad;
}

/* The per-rank-count collectives on device buffers, blocking, against the
 * library's call on host copies: allgatherv (rank q's block (q + 1) * n ints
 * at a displacement with a gap of q ints, or with bytes: sent as 4x MPI_BYTE,
 * received as ints, which collc copies into place before its program) and
 * reduce_scatter (sum, block q of (q % 3) * n ints). 1 if it failed here. */
static int check_v(int bytes_typed, int n) {
  int c[64], dsp[64], total = 0, end = 0, bad = 0;
  if (size > 64) return 0;
  for (int q = 0; q < size; q++) {
    c[q] = (q + 1) * n, dsp[q] = end + q, end = dsp[q] + c[q], total += c[q];
  }
  size_t rb = (size_t)end * sizeof(int);
  int *hs = malloc((size_t)c[rank] * sizeof(int)), *hr = malloc(rb), *ref = malloc(rb), *out = malloc(rb);
  for (int k = 0; k < c[rank]; k++) hs[k] = rank * 7919 + k;
  for (int k = 0; k < end; k++) hr[k] = ref[k] = -7 - k;
  int *ds = dev_of(hs, (size_t)c[rank] * sizeof(int)), *dr = dev_of(hr, rb);
  int rc = bytes_typed ? MPI_Allgatherv(ds, c[rank] * 4, MPI_BYTE, dr, c, dsp, MPI_INT, MPI_COMM_WORLD)
                       : MPI_Allgatherv(ds, c[rank], MPI_INT, dr, c, dsp, MPI_INT, MPI_COMM_WORLD);
  int rr = PMPI_Allgatherv(hs, c[rank], MPI_INT, ref, c, dsp, MPI_INT, MPI_COMM_WORLD);
  cu.memcpy_(out, dr, rb, 4);
  if (rc || rr || memcmp(out, ref, rb))
    bad = 1, fprintf(stderr, "rank %d: allgatherv%s n=%d: %s\n", rank, bytes_typed ? " (bytes)" : "",
                     n, rc || rr ? "error" : "wrong");
  cu.free_(ds), cu.free_(dr), free(hs), free(hr), free(ref), free(out);
  if (bytes_typed) return bad;
  total = 0;
  for (int q = 0; q < size; q++) c[q] = (q % 3) * n, total += c[q];
  size_t in = (size_t)(total ? total : 1) * sizeof(int), ob = (size_t)(c[rank] ? c[rank] : 1) * sizeof(int);
  hs = malloc(in), hr = malloc(ob), ref = malloc(ob), out = malloc(ob);
  for (int k = 0; k < total; k++) hs[k] = rank * 131 + k;
  ds = dev_of(hs, in), dr = dev_of(NULL, ob);
  rc = MPI_Reduce_scatter(ds, dr, c, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  rr = PMPI_Reduce_scatter(hs, ref, c, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  cu.memcpy_(out, dr, ob, 4);
  if (rc || rr || memcmp(out, ref, (size_t)c[rank] * sizeof(int)))
    bad = 1, fprintf(stderr, "rank %d: reduce_scatter n=%d: %s\n", rank, n, rc || rr ? "error" : "wrong");
  cu.free_(ds), cu.free_(dr), free(hs), free(hr), free(ref), free(out);
  return bad;
}

/* Blocking allreduce of n ints with one buffer on the device and the other
 * in pageable host memory (send on the device if dev_send), against the
 * reference. The CUDA backend's kernels cannot reach the host buffer: such
 * a call is staged (the fake CUDA counts kernel accesses of host memory).
 * 1 if it failed here. */
static int check_mixed(int dev_send, int n) {
  size_t bytes = (size_t)n * sizeof(int);
  int *hs = malloc(bytes), *hr = malloc(bytes), *ref = malloc(bytes), *out = malloc(bytes), bad;
  for (int k = 0; k < n; k++) hs[k] = rank * 17 + k, hr[k] = -1;
  int *ds = dev_send ? dev_of(hs, bytes) : NULL, *dr = dev_send ? NULL : dev_of(hr, bytes);
  int rc = MPI_Allreduce(dev_send ? (void *)ds : hs, dev_send ? (void *)hr : dr, n, MPI_INT,
                         MPI_SUM, MPI_COMM_WORLD);
  int rr = PMPI_Allreduce(hs, ref, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (dev_send) memcpy(out, hr, bytes);
  else cu.memcpy_(out, dr, bytes, 4);
  bad = rc || rr || memcmp(out, ref, bytes);
  if (bad) fprintf(stderr, "rank %d: allreduce %s n=%d: %s\n", rank,
                   dev_send ? "device to host" : "host to device", n, rc || rr ? "error" : "wrong");
  if (ds) cu.free_(ds);
  if (dr) cu.free_(dr);
  free(hs), free(hr), free(ref), free(out);
  return bad;
}

/* The fake CUDA only (its cudaFree unmaps): an allreduce on two device
 * buffers (their ranges cached), cudaFree, host memory mapped at the same
 * addresses, the same allreduce on it: collc's cached ranges are stale and
 * must not send host memory to device kernels (counted by the fake) nor
 * give a wrong result. 1 if it failed here. */
static int check_stale(void) {
  enum { N = 4096 };
  size_t bytes = N * sizeof(int);
  int ref[N], *s, *r, bad = 0;
  if (!fake) return 0;
  s = dev_of(NULL, bytes), r = dev_of(NULL, bytes);
  bad = MPI_Allreduce(s, r, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS;
  cu.free_(s), cu.free_(r);
  int *hs = mmap(s, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  int *hr = mmap(r, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (hs != s || hr != r) { /* (addresses taken meanwhile: nothing to test) */
    fprintf(stderr, "rank %d: stale check: addresses not reusable\n", rank);
    return 1;
  }
  for (int k = 0; k < N; k++) hs[k] = rank + k;
  bad |= MPI_Allreduce(hs, hr, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS;
  PMPI_Allreduce(hs, ref, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (bad || memcmp(hr, ref, bytes)) bad = 1, fprintf(stderr, "rank %d: stale ranges: wrong\n", rank);
  munmap(hs, bytes), munmap(hr, bytes);
  return bad;
}

/* The same blocking allreduce (1000 ints) REPEATS times on the same device
 * buffers, against the reference. With the fake CUDA, every call after the
 * first must do exactly what the second did and allocate nothing: a plan's
 * table stays resident (no upload), the pinned mirror is kept (no host
 * allocation), the launches are the same, and the buffers' class comes from
 * memclass's cache of device ranges (staged: no pointer query; with the CUDA
 * backend (the calls that launch) one per buffer, which a stale cached
 * range would make wrong). 1 if it failed here. */
enum { REPEATS = 3 };
static int check_repeat(void) {
  enum { N = 1000 };
  int hs[N], ref[N], out[N], bad = 0;
  long long before[FC_NCOUNT], first[FC_NCOUNT] = {0};
  for (int k = 0; k < N; k++) hs[k] = rank * 31 + k;
  int *ds = dev_of(hs, sizeof hs), *dr = dev_of(NULL, sizeof hs);
  PMPI_Allreduce(hs, ref, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  for (int i = 0; i < REPEATS && !bad; i++) {
    if (fake) memcpy(before, fake, sizeof before);
    bad = coll_run(ALLREDUCE, BLOCKING, ds, dr, N, MPI_INT) != MPI_SUCCESS;
    for (int j = 0; fake && j < FC_NCOUNT && !bad && i > 1; j++)
      if (j != FC_SYNC && fake[j] - before[j] != first[j])
        bad = 1, fprintf(stderr, "rank %d: repeated allreduce %d: fake CUDA counter %d: %lld, "
                         "first repeat %lld\n", rank, i, j, fake[j] - before[j], first[j]);
    for (int j = 0; fake && i == 1 && j < FC_NCOUNT; j++) first[j] = fake[j] - before[j];
    if (fake && i == 1 && (first[FC_MALLOC] || first[FC_HOST_ALLOC] || first[FC_FREE]))
      bad = 1, fprintf(stderr, "rank %d: repeated allreduce allocates\n", rank);
    if (fake && i == 1 && (first[FC_ATTR] != (first[FC_LAUNCH] ? 2 : 0) || first[FC_RANGE] != first[FC_ATTR]))
      /* (cached device ranges; the CUDA backend's path asks each buffer once, see dispatch.c) */
      bad = 1, fprintf(stderr, "rank %d: repeated allreduce asks CUDA about its buffers: %lld "
                       "attribute and %lld range queries\n", rank, first[FC_ATTR], first[FC_RANGE]);
  }
  cu.memcpy_(out, dr, sizeof out, 4);
  if (!bad && memcmp(out, ref, sizeof out)) bad = 1, fprintf(stderr, "rank %d: repeat wrong\n", rank);
  cu.free_(ds), cu.free_(dr);
  return bad;
}

static int check(void) {
  static const int counts[] = {1, 7, 1000, 65536 + 3};
  int fails = 0, modes = lib_dev ? PERSISTENT : BLOCKING; /* (the library's own must take them) */
  for (int c = 0; c < NCOLL; c++)
    for (int m = BLOCKING; m <= modes; m++)
      for (int i = 0; i < 4; i++) fails += check_one(c, m, counts[i], 0);
  for (int i = 0; i < 4; i++) fails += check_one(ALLREDUCE, BLOCKING, counts[i], 1);
  for (int c = 0; c < NCOLL; c++)
    for (int i = 1; i < 3 && c != BCAST; i++) fails += check_in_place(c, counts[i]);
  /* (allgatherv copies its own block with the library's PMPI_Sendrecv on the
   * CUDA-aware path: not with the test hook on a library that is not) */
  for (int i = 1; i < 3 && (lib_dev || !aware); i++) fails += check_v(0, counts[i]) + check_v(1, counts[i]);
  fails += check_mixed(1, counts[2]) + check_mixed(0, counts[2]);
  fails += check_repeat() + check_stale();
  long long after = fake ? host_queries() : 2;
  if (fake && (queries_before_context != 0 || after != 2)) {
    fprintf(stderr, "rank %d: host allreduce: %lld CUDA pointer queries before a context existed "
            "(want 0), %lld after (want 2)\n", rank, queries_before_context, after);
    fails++;
  }
  int all = 0;
  if (fake && (fake[FC_ORDER_ERR] || fake_unfinished() || fake[FC_HOST_TOUCH])) {
    fprintf(stderr, "rank %d: fake CUDA: %lld launches out of batch order, %d tables unfinished, "
            "%lld kernel accesses of pageable host memory\n", rank, fake[FC_ORDER_ERR],
            fake_unfinished(), fake[FC_HOST_TOUCH]);
    fails++;
  }
  PMPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (!rank) printf("gpu check: p=%d cuda-aware=%d: %s (%d failed)\n", size, aware,
                    all ? "FAILED" : "ok", all);
  if (fake) {
    long long mine[2] = {fake[FC_LAUNCH], staged_calls}, sum[2];
    PMPI_Reduce(mine, sum, 2, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (!rank) printf("fake: launches=%lld staged-calls=%lld\n", sum[0], sum[1]);
  }
  return all != 0;
}

/* ---- bench ---- */

typedef int (*impl_fn)(void *s, void *r, int n);
static int run_collc(void *s, void *r, int n) {
  return MPI_Allreduce(s, r, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}
static int run_native(void *s, void *r, int n) {
  return PMPI_Allreduce(s, r, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}
/* What a program does on a library that is not CUDA-aware: the vector
 * copied to pinned host memory, the library's allreduce there in place,
 * the result copied back. */
static void *stage_host;
static int run_staged(void *s, void *r, int n) {
  size_t b = (size_t)n * sizeof(float);
  int rc = cu.memcpy_(stage_host, s, b, 4) ? MPI_ERR_OTHER : MPI_SUCCESS;
  if (!rc) rc = PMPI_Allreduce(MPI_IN_PLACE, stage_host, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  return rc ? rc : cu.memcpy_(r, stage_host, b, 4) ? MPI_ERR_OTHER : MPI_SUCCESS;
}
/* The library's allreduce on host memory alone (what staging adds copies to). */
static int run_host(void *s, void *r, int n) {
  (void)s, (void)r;
  return PMPI_Allreduce(MPI_IN_PLACE, stage_host, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}
static int run_nccl(void *s, void *r, int n) { /* ncclFloat32 = 7, ncclSum = 0 */
  return nc.allreduce(s, r, (size_t)n, 7, 0, nc.comm, nc.stream) || cu.stream_sync(nc.stream);
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Min and median (us) of implementation f on n floats of device buffers. */
static void time_it(impl_fn f, void *s, void *r, int n, double *mn, double *med) {
  enum { WARM = 5, REPS = 20 };
  double t[REPS];
  for (int i = 0; i < WARM; i++) f(s, r, n);
  for (int i = 0; i < REPS; i++) {
    PMPI_Barrier(MPI_COMM_WORLD);
    PMPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime(), dt;
    f(s, r, n);
    dt = MPI_Wtime() - t0;
    PMPI_Allreduce(&dt, &t[i], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  }
  qsort(t, REPS, sizeof *t, cmp_d);
  *mn = t[0] * 1e6, *med = t[REPS / 2] * 1e6;
}

static const char *nccl_why = "nccl (not loaded)"; /* (the column's title without NCCL) */
static void nccl_init(void) {
  static const char *const names[] = {"ncclGetUniqueId", "ncclCommInitRank", "ncclAllReduce"};
  char id[128] = {0};
  int ok = load("libnccl.so.2", names, (void **)&nc, 3), all = 0;
  if (ok) nccl_why = "nccl (init failed)"; /* (e.g. NCCL refuses two ranks on one GPU) */
  if (ok && !rank) ok = nc.get_id(id) == 0;
  PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all) return;
  PMPI_Bcast(id, 128, MPI_BYTE, 0, MPI_COMM_WORLD);
  ok = cu.stream_new(&nc.stream) == 0 && nc.init(&nc.comm, size, id, rank) == 0;
  PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all) nc.comm = NULL;
}

static int bench(void) {
  size_t most = (size_t)64 << 20;
  void *s = dev_of(NULL, most), *r = dev_of(NULL, most);
  if (cu.host_alloc(&stage_host, most)) return 1;
  nccl_init();
  if (!rank) {
    printf("allreduce, float sum, device buffers, p=%d, cuda-aware=%d, us (min / median)\n", size, aware);
    printf("%10s %22s %22s %22s %22s %22s\n", "bytes", "collc", aware ? "native" : "native (not aware)",
           "native, staged by hand", nc.comm ? "nccl" : nccl_why, "native, host memory");
  }
  static const size_t sizes[] = {8, 64, 512, 4096, 32768, 262144, 2 << 20, 16 << 20, 64 << 20};
  for (int i = 0; i < 9; i++) {
    size_t b = sizes[i];
    int n = (int)(b / sizeof(float));
    double v[5][2] = {{0}};
    time_it(run_collc, s, r, n, &v[0][0], &v[0][1]);
    if (lib_dev) time_it(run_native, s, r, n, &v[1][0], &v[1][1]);
    time_it(run_staged, s, r, n, &v[2][0], &v[2][1]);
    if (nc.comm) time_it(run_nccl, s, r, n, &v[3][0], &v[3][1]);
    time_it(run_host, s, r, n, &v[4][0], &v[4][1]);
    if (!rank)
      printf("%10zu %10.1f / %9.1f %10.1f / %9.1f %10.1f / %9.1f %10.1f / %9.1f %10.1f / %9.1f\n",
             b, v[0][0], v[0][1], v[1][0], v[1][1], v[2][0], v[2][1], v[3][0], v[3][1], v[4][0], v[4][1]);
  }
  cu.free_(s), cu.free_(r);
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int real = 0;
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  real = MPIX_Query_cuda_support();
#endif
  aware = real;
  const char *hook = getenv("COLLC_TEST_CUDA_AWARE"); /* (collc's test hook, tests/fakecuda) */
  if (hook && !strcmp(hook, "1")) aware = 1;
  int ok = cuda_init(), all = 0, rc = 1;
  lib_dev = real || (fake && aware);
  PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all) {
    if (!rank) fprintf(stderr, "gpu: no CUDA runtime or no GPU here\n");
  } else rc = argc > 1 && !strcmp(argv[1], "bench") ? bench() : check();
  MPI_Finalize();
  return rc;
}
