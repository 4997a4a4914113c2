/* gpu_kernels.c - the batch executor of libcollc_cuda.so against the host
 * kernels, byte for byte: for every (predefined type, predefined op) that
 * kernel_select serves and the executor takes (collc_cuda_kernel_ok), one
 * batch of three descriptors (a REDUCE, a COMBINE and a COPY, disjoint)
 * runs on device buffers, and its results must equal kernels.c's k2 / k3
 * and memcpy on the same random input. Then (bench) the bandwidth of one
 * large COPY and one float SUM batch against the runtime's device copy.
 *
 *   mpi_gpu_kernels LIB [bench]   LIB: a libcollc_cuda.so (make CUDA=1's, on a
 *                                 GPU; tests/fakecuda's host build, anywhere)
 *
 * The reductions at p = 1 are copies, and without a CUDA-aware MPI the
 * CUDA backend never runs at p > 1, so this is where the device reduction
 * kernels meet their truth. Exit 0 if every pair is exact. One process. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "exec/backend_cuda.h"
#include "exec/kernels.h"
#include "exec/memclass.h"
#include "exec/xbatch.h"
#include "ir/batch.h"
#include "ir/ir.h"

static collc_cuda_lib cu; /* libcollc_cuda.so's functions */

static int load(const char *path) {
  int ok = collc_cuda_lib_load(path, &cu);
  if (!ok) fprintf(stderr, "gpu kernels: %s: %s\n", path, dlerror() ? dlerror() : "a function is missing");
  return ok;
}

/* Value classes: how random input is drawn for a type (no NaN, no overflow
 * of a single op that C leaves undefined). */
enum { V_INT, V_BOOL, V_FLOAT, V_DOUBLE, V_CFLOAT, V_CDOUBLE, V_FLOAT_INT, V_DOUBLE_INT,
       V_LONG_INT, V_2INT, V_SHORT_INT };
typedef struct {
  MPI_Datatype t;
  const char *name;
  int v;
  size_t size;
} tcase;

/* Fill n elements of case c at p from seed state *s. */
static void fill(const tcase *c, char *p, size_t n, unsigned *s) {
  for (size_t i = 0; i < n; i++) {
    int r = (int)(rand_r(s) % 101) - 50, k = (int)(rand_r(s) % 1000);
    char *e = p + i * c->size;
    float f = (float)r / 8.0f;
    double d = (double)r / 16.0 + (double)k * 1e-3;
    switch (c->v) {
    case V_INT: for (size_t b = 0; b < c->size; b++) e[b] = b ? 0 : (char)r; /* (small, signed) */
      if (r < 0) memset(e + 1, 0xff, c->size - 1);
      break;
    case V_BOOL: *e = (char)(r & 1); break;
    case V_FLOAT: memcpy(e, &f, 4); break;
    case V_DOUBLE: memcpy(e, &d, 8); break;
    case V_CFLOAT: memcpy(e, &f, 4), f = (float)k / 64.0f, memcpy(e + 4, &f, 4); break;
    case V_CDOUBLE: memcpy(e, &d, 8), d = (double)k / 128.0, memcpy(e + 8, &d, 8); break;
    case V_FLOAT_INT: memcpy(e, &f, 4), memcpy(e + 4, &k, 4); break;
    case V_DOUBLE_INT: memcpy(e, &d, 8), memcpy(e + 8, &k, 4), memset(e + 12, 0, c->size - 12); break;
    case V_LONG_INT: { long l = r; memcpy(e, &l, sizeof l), memcpy(e + sizeof l, &k, 4);
      memset(e + sizeof l + 4, 0, c->size - sizeof l - 4); } break;
    case V_2INT: memcpy(e, &r, 4), memcpy(e + 4, &k, 4); break;
    default: { short h = (short)r; memcpy(e, &h, 2), memset(e + 2, 0, 2), memcpy(e + 4, &k, 4);
      memset(e + 8, 0, c->size - 8); }
    }
  }
}

/* Run one batch of T on the device: bases[] device buffers. 0 or an error. */
static int run(xbatch_tab *T, char *const base[], void *st) {
  void *dev = NULL;
  int rc = cu.table(T, &dev);
  if (!rc) rc = cu.batch(dev, T, 0, base, BUF_COUNT, st);
  if (!rc) rc = cu.sync(st);
  if (dev) cu.table_free(dev);
  return rc;
}

/* Case c with op o: 1 if the device results differ from the host's (or a
 * CUDA call failed), 0 if equal, -1 if the pair is not served. */
static int check(const tcase *c, MPI_Op o, size_t n, void *st) {
  kernel_sel k;
  if (!kernel_select(c->t, o, &k) || !cu.kernel_ok(k.id)) return -1;
  size_t bytes = n * c->size, cnt = n * k.elems;
  char *a = malloc(bytes), *b = malloc(bytes), *h2 = malloc(bytes), *h3 = malloc(bytes),
       *d2 = malloc(bytes), *d3 = malloc(2 * bytes);
  void *da, *db, *di, *dout;
  unsigned s = (unsigned)k.id * 2654435761u;
  fill(c, a, n, &s), fill(c, b, n, &s);
  memset(h3, 0, bytes), memset(d3, 0, 2 * bytes); /* (pair types' padding: zero on both sides) */
  memcpy(h2, b, bytes), k.k2(a, h2, cnt), k.k3(a, b, h3, cnt);
  int bad = cu.dev_alloc(&da, bytes) | cu.dev_alloc(&db, bytes) | cu.dev_alloc(&di, bytes) |
            cu.dev_alloc(&dout, 2 * bytes);
  bad |= cu.copy(da, a, bytes) | cu.copy(db, b, bytes) | cu.copy(di, b, bytes) |
         cu.copy(dout, d3, 2 * bytes);
  xdesc d[3] = {{BATCH_REDUCE, BUF_SEND, 0, BUF_RECV, 0, 0, 0, cnt},       /* inout = a op inout */
                {BATCH_COMBINE, BUF_SEND, BUF_TMP, BUF_SHM, 0, 0, 0, cnt},  /* out = a op b */
                {BATCH_COPY, BUF_SEND, 0, BUF_SHM, 0, 0, bytes, bytes}};    /* out + bytes = a */
  xspan sp = {0, 3, 3};
  xbatch_tab T = {d, 3, &sp, 1, NULL, k.id, NULL};
  char *base[BUF_COUNT] = {NULL, da, di, db, dout};
  bad |= run(&T, base, st);
  bad |= cu.copy(d2, di, bytes) | cu.copy(d3, dout, 2 * bytes);
  if (bad) fprintf(stderr, "gpu kernels: %s: CUDA error\n", c->name);
  else if ((bad = memcmp(d2, h2, bytes) || memcmp(d3, h3, bytes) || memcmp(d3 + bytes, a, bytes)))
    fprintf(stderr, "gpu kernels: %s, kernel %d: device differs from host (%s)\n", c->name,
            k.id, memcmp(d3 + bytes, a, bytes) ? "copy" : memcmp(d2, h2, bytes) ? "reduce" : "combine");
  cu.dev_free(da), cu.dev_free(db), cu.dev_free(di), cu.dev_free(dout);
  free(a), free(b), free(h2), free(h3), free(d2), free(d3);
  return bad;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Bandwidth (GB/s, bytes read + written, best of 10) of a COPY batch and a
 * float SUM REDUCE batch of 256 MiB, and of the runtime's device copy. */
static void bench(void *st) {
  size_t bytes = (size_t)256 << 20;
  void *x, *y;
  kernel_sel k;
  if (cu.dev_alloc(&x, bytes) || cu.dev_alloc(&y, bytes) || !kernel_select(MPI_FLOAT, MPI_SUM, &k))
    return;
  xdesc dc = {BATCH_COPY, BUF_SEND, 0, BUF_RECV, 0, 0, 0, bytes},
        dr = {BATCH_REDUCE, BUF_SEND, 0, BUF_RECV, 0, 0, 0, bytes / 4};
  xspan sp = {0, 1, 1};
  char *base[BUF_COUNT] = {NULL, x, y, NULL, NULL};
  const char *what[3] = {"batch COPY", "batch REDUCE float sum", "runtime device copy"};
  double traffic[3] = {2.0 * (double)bytes, 3.0 * (double)bytes, 2.0 * (double)bytes};
  for (int w = 0; w < 3; w++) {
    xbatch_tab T = {w == 1 ? &dr : &dc, 1, &sp, 1, NULL, w == 1 ? k.id : -1, NULL};
    void *dev = NULL;
    double best = 1e30;
    if (w < 2 && cu.table(&T, &dev)) return;
    for (int i = 0; i < 11; i++) {
      double t0 = now();
      char probe; /* (a device-to-device cudaMemcpy returns early: a 1-byte copy to the host waits) */
      int rc = w < 2 ? cu.batch(dev, &T, 0, base, BUF_COUNT, st) || cu.sync(st)
                     : cu.copy(y, x, bytes) || cu.copy(&probe, y, 1);
      double dt = now() - t0;
      if (rc) return;
      if (i && dt < best) best = dt; /* (the first: warm-up) */
    }
    if (dev) cu.table_free(dev);
    printf("gpu kernels bench: %-24s %8.1f GB/s (%.3f ms for 256 MiB)\n", what[w],
           traffic[w] / best * 1e-9, best * 1e3);
  }
  cu.dev_free(x), cu.dev_free(y);
}

/* Nanoseconds per memclass_of of a host buffer (what every collective pays
 * per buffer), over 100000 lookups. */
static double lookup_ns(void) {
  static char host[64];
  volatile int sink = 0;
  double t0 = now();
  for (int i = 0; i < 100000; i++) sink += memclass_of(host + (i & 7));
  return (now() - t0) * 1e4 + 0 * sink;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  static const tcase types[] = {
      {MPI_CHAR, "char", V_INT, 1}, {MPI_SIGNED_CHAR, "signed char", V_INT, 1},
      {MPI_UNSIGNED_CHAR, "unsigned char", V_INT, 1}, {MPI_BYTE, "byte", V_INT, 1},
      {MPI_SHORT, "short", V_INT, 2}, {MPI_UNSIGNED_SHORT, "unsigned short", V_INT, 2},
      {MPI_INT, "int", V_INT, 4}, {MPI_UNSIGNED, "unsigned", V_INT, 4},
      {MPI_LONG, "long", V_INT, sizeof(long)}, {MPI_UNSIGNED_LONG, "unsigned long", V_INT, sizeof(long)},
      {MPI_LONG_LONG, "long long", V_INT, 8}, {MPI_UNSIGNED_LONG_LONG, "unsigned long long", V_INT, 8},
      {MPI_INT8_T, "int8", V_INT, 1}, {MPI_UINT16_T, "uint16", V_INT, 2}, {MPI_INT32_T, "int32", V_INT, 4},
      {MPI_UINT64_T, "uint64", V_INT, 8}, {MPI_AINT, "aint", V_INT, sizeof(MPI_Aint)},
      {MPI_C_BOOL, "bool", V_BOOL, 1}, {MPI_FLOAT, "float", V_FLOAT, 4},
      {MPI_DOUBLE, "double", V_DOUBLE, 8}, {MPI_C_FLOAT_COMPLEX, "float complex", V_CFLOAT, 8},
      {MPI_C_DOUBLE_COMPLEX, "double complex", V_CDOUBLE, 16},
      {MPI_FLOAT_INT, "float_int", V_FLOAT_INT, 8}, {MPI_DOUBLE_INT, "double_int", V_DOUBLE_INT, 16},
      {MPI_LONG_INT, "long_int", V_LONG_INT, 16}, {MPI_2INT, "2int", V_2INT, 8},
      {MPI_SHORT_INT, "short_int", V_SHORT_INT, 8}};
  MPI_Op ops[] = {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_LOR, MPI_LXOR,
                  MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC};
  void *st = NULL;
  int checked = 0, wrong = 0, rc = 2;
  double before = lookup_ns(); /* (no CUDA context yet) */
  if (argc < 2 || !load(argv[1]) || cu.stream_new(&st)) {
    fprintf(stderr, "usage: mpi_gpu_kernels LIBCOLLC_CUDA [bench] (library not loaded, or no stream)\n");
  } else {
    for (size_t t = 0; t < sizeof types / sizeof *types; t++)
      for (size_t o = 0; o < sizeof ops / sizeof *ops; o++) {
        MPI_Aint lb, ext;
        MPI_Type_get_extent(types[t].t, &lb, &ext);
        if ((size_t)ext != types[t].size) { /* (the table's sizes must be the library's) */
          fprintf(stderr, "gpu kernels: %s: extent %ld\n", types[t].name, (long)ext);
          wrong++;
          break;
        }
        int r = check(&types[t], ops[o], 100003, st);
        checked += r >= 0, wrong += r > 0;
      }
    printf("gpu kernels: %d (type, op) pairs checked, %d wrong\n", checked, wrong);
    printf("gpu kernels: host buffer class (%s): %.1f ns per lookup before a CUDA context, "
           "%.1f ns with one\n", memclass_how(), before, lookup_ns());
    rc = wrong || checked < 100;
    if (!rc && argc > 2 && !strcmp(argv[2], "bench")) bench(st);
  }
  MPI_Finalize();
  return rc;
}
