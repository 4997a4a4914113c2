/* guard.c - the native correctness guard: before collc hands a reduction
 * on a predefined (type, op) to the MPI library, it checks once per process
 * that the library computes that pair right, and serves it itself where it
 * does not.
 *
 * The check runs PMPI_Reduce_local and collc's own kernel (exec/kernels.c)
 * on the same test vectors (257 elements: every vector width and a tail;
 * every bit pattern for unsigned and 8/16-bit types, whose C arithmetic is
 * defined on overflow, small values for wider signed and floating types)
 * and compares them byte for byte. Found wrong here: Open MPI 4.1.4's
 * AVX-512 op component saturates 8- and 16-bit sums. The result is per
 * process, so like the default rule it assumes every rank runs the same
 * library on the same kind of CPU.
 *
 * Nonblocking calls (guard_nonblocking) are guarded by table, not by a
 * check: Open MPI 4.1's MPI_Ialltoallv with MPI_IN_PLACE, on a rank that
 * moves nothing, leaves the communicator's schedule tags out of step, so a
 * later MPI_Ialltoallv of the other ranks never matches (a two-rank
 * program of plain MPI hangs so; tests/mpi/alltoallv.c found it).
 *
 * Test hook: COLLC_TEST_NATIVE_WRONG=<type name>:<op name> (e.g.
 * MPI_INT:MPI_SUM) marks that pair wrong whatever the check finds.
 * COLLC_GUARD=0 turns the guard off (native as asked). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "../exec/kernels.h"

enum { F_BITS, F_SMALL_INT, F_SMALL_FLOAT, F_SMALL_DOUBLE }; /* how test values are made */

typedef struct {
  MPI_Datatype t;
  int fill;
} gtype;

#define GUARD_N 257

static const char *const op_names[] = {"MPI_SUM",  "MPI_PROD", "MPI_MAX",  "MPI_MIN",
                                       "MPI_LAND", "MPI_LOR",  "MPI_LXOR", "MPI_BAND",
                                       "MPI_BOR",  "MPI_BXOR"};
#define NOPS (sizeof op_names / sizeof op_names[0])
#define NTYPES 24

static MPI_Op ops[NOPS];
static gtype types[NTYPES];
static unsigned char wrong[NTYPES][NOPS];   /* 1: the library computes the pair wrong */
static atomic_uchar used[NTYPES][NOPS];     /* served by collc because of it (stats) */
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* The tables (MPI handles are not constant expressions in every library). */
static void tables(void) {
  const MPI_Op o[NOPS] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_LAND,
                          MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};
  const gtype t[NTYPES] = {
      {MPI_SIGNED_CHAR, F_BITS},     {MPI_UNSIGNED_CHAR, F_BITS}, {MPI_SHORT, F_BITS},
      {MPI_UNSIGNED_SHORT, F_BITS},  {MPI_INT, F_SMALL_INT},      {MPI_UNSIGNED, F_BITS},
      {MPI_LONG, F_SMALL_INT},       {MPI_UNSIGNED_LONG, F_BITS}, {MPI_LONG_LONG, F_SMALL_INT},
      {MPI_UNSIGNED_LONG_LONG, F_BITS}, {MPI_INT8_T, F_BITS},     {MPI_UINT8_T, F_BITS},
      {MPI_INT16_T, F_BITS},         {MPI_UINT16_T, F_BITS},      {MPI_INT32_T, F_SMALL_INT},
      {MPI_UINT32_T, F_BITS},        {MPI_INT64_T, F_SMALL_INT},  {MPI_UINT64_T, F_BITS},
      {MPI_FLOAT, F_SMALL_FLOAT},    {MPI_DOUBLE, F_SMALL_DOUBLE}, {MPI_BYTE, F_BITS},
      {MPI_AINT, F_SMALL_INT},       {MPI_OFFSET, F_SMALL_INT},   {MPI_COUNT, F_SMALL_INT}};
  memcpy(ops, o, sizeof ops);
  memcpy(types, t, sizeof types);
}

/* The next of a xorshift64 sequence in *x. */
static uint64_t next(uint64_t *x) {
  *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
  return *x;
}

/* Fill n elements of type g (size sz) into buf from seed: random bits, or
 * small values (-20..20: products of two stay exact and in range). */
static void fill(const gtype *g, int sz, char *buf, int n, unsigned seed) {
  uint64_t x = 0x9E3779B97F4A7C15ull * (seed + 1);
  for (int i = 0; i < n; i++) {
    uint64_t v = next(&x);
    long long small = (long long)(v % 41) - 20;
    char *e = buf + (size_t)i * (size_t)sz;
    if (g->fill == F_BITS) memcpy(e, &v, (size_t)sz < sizeof v ? (size_t)sz : sizeof v);
    else if (g->fill == F_SMALL_FLOAT) *(float *)(void *)e = (float)small;
    else if (g->fill == F_SMALL_DOUBLE) *(double *)(void *)e = (double)small;
    else if (sz == 4) *(int *)(void *)e = (int)small;
    else *(long long *)(void *)e = small;
  }
}

/* Whether the library gets pair (ti, oi) right on the test vectors (1:
 * right or not checkable: no kernel of ours, or the library refuses it). */
static int right(int ti, int oi) {
  const gtype *g = &types[ti];
  kernel_sel k;
  int sz = 0;
  if (!kernel_select(g->t, ops[oi], &k) || k.elems != 1 || PMPI_Type_size(g->t, &sz) ||
      sz <= 0 || sz > 16)
    return 1;
  char in[GUARD_N * 16], lib[GUARD_N * 16], ours[GUARD_N * 16];
  fill(g, sz, in, GUARD_N, 17u * (unsigned)oi + 1);
  fill(g, sz, lib, GUARD_N, 31u * (unsigned)ti + 7);
  memcpy(ours, lib, (size_t)GUARD_N * (size_t)sz);
  if (PMPI_Reduce_local(in, lib, GUARD_N, g->t, ops[oi]) != MPI_SUCCESS) return 1;
  k.k2(in, ours, GUARD_N);
  return memcmp(lib, ours, (size_t)GUARD_N * (size_t)sz) == 0;
}

/* Index of type t and op o in the tables (-1: not there). */
static int type_index(MPI_Datatype t) {
  for (int i = 0; i < NTYPES; i++)
    if (types[i].t == t) return i;
  return -1;
}
static int op_index(MPI_Op o) {
  for (size_t i = 0; i < NOPS; i++)
    if (ops[i] == o) return (int)i;
  return -1;
}

/* Mark the pair COLLC_TEST_NATIVE_WRONG names (type name:op name). */
static void test_hook(void) {
  const char *h = getenv("COLLC_TEST_NATIVE_WRONG");
  const char *colon = h ? strchr(h, ':') : NULL;
  if (!colon) return;
  for (int ti = 0; ti < NTYPES; ti++) {
    char name[MPI_MAX_OBJECT_NAME] = "";
    int len = 0;
    PMPI_Type_get_name(types[ti].t, name, &len);
    if ((size_t)len != (size_t)(colon - h) || strncmp(name, h, (size_t)len)) continue;
    for (size_t oi = 0; oi < NOPS; oi++)
      if (!strcmp(op_names[oi], colon + 1)) wrong[ti][oi] = 1;
  }
}

/* The check of every pair, once per process. */
static void check_all(void) {
  tables();
  const char *off = getenv("COLLC_GUARD");
  if (off && !strcmp(off, "0")) return;
  for (int ti = 0; ti < NTYPES; ti++)
    for (size_t oi = 0; oi < NOPS; oi++) wrong[ti][oi] = !right(ti, (int)oi);
  test_hook();
}

const char *guard_text(const collc_spec *s, MPI_Datatype type, MPI_Op op) {
  static const char *const algo[COLLC_COLL_COUNT] = {
      [COLLC_COLL_ALLREDUCE] = "recexch", [COLLC_COLL_REDUCE_SCATTER_BLOCK] = "recexch",
      [COLLC_COLL_REDUCE] = "tree", [COLLC_COLL_REDUCE_SCATTER] = "recexch"};
  if (!coll_reduces(s->coll) || !algo[s->coll]) return NULL;
  pthread_once(&once, check_all);
  int ti = type_index(type), oi = op_index(op);
  if (ti < 0 || oi < 0 || !wrong[ti][oi]) return NULL;
  atomic_store_explicit(&used[ti][oi], 1, memory_order_relaxed);
  return algo[s->coll];
}

/* Whether COLLC_GUARD=0 turned the guard off (read once). */
static int guard_off;
static pthread_once_t off_once = PTHREAD_ONCE_INIT;
static void read_off(void) {
  const char *off = getenv("COLLC_GUARD");
  guard_off = off && !strcmp(off, "0");
}

const char *guard_nonblocking(const collc_spec *s) {
#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION == 4
  static const char *const in_place[COLLC_COLL_COUNT] = {[COLLC_COLL_ALLTOALLV] = "linear"};
  pthread_once(&off_once, read_off);
  if (s->in_place && in_place[s->coll] && !guard_off) return in_place[s->coll];
#else
  (void)s, (void)read_off, (void)off_once, (void)guard_off;
#endif
  return NULL;
}

void guard_print(void) {
  for (int ti = 0; ti < NTYPES; ti++)
    for (size_t oi = 0; oi < NOPS; oi++) {
      char name[MPI_MAX_OBJECT_NAME] = "?";
      int len = 0;
      if (!atomic_load_explicit(&used[ti][oi], memory_order_relaxed)) continue;
      PMPI_Type_get_name(types[ti].t, name, &len);
      fprintf(stderr, "collc-stats: native %s %s is wrong here: served by collc\n", name,
              op_names[oi]);
    }
}
