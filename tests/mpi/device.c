/* device.c - calls with device buffers go to the MPI library (issue 16),
 * tested without a GPU.
 *
 *   mpi_device            every collective with "device" buffers
 *   mpi_device cudart 0|1 host collectives, then libcudart must (not) be mapped
 *
 * First mode: before MPI_Init the program allocates an arena and names it
 * in COLLC_TEST_FAKE_DEVICE, so collc's pointer check calls it device
 * memory (it is host memory, so the MPI library can read it). Each of the
 * six collectives, blocking, nonblocking and persistent, runs at two
 * counts with host, device, host, device buffers (the same arguments: a
 * call-cache hit of a host call must not serve the device call). Truth:
 * PMPI_<coll> on host buffers, the same input, byte for byte (ints: sums
 * are exact). That device calls went to the library and host calls to
 * collc is what the stats lines show (tests/run.sh checks them: per
 * collective `native mem=cuda calls=8` (4 blocking + 4 persistent inits)
 * and `i<coll> native mem=cuda calls=4`, and the forced algorithms' lines).
 *
 * Second mode: truth is /proc/self/maps (COLLC_CUDA=0 must keep the CUDA
 * runtime out of the process; without it, on a machine with CUDA
 * installed, the first collective loads it: the case that shows the check
 * can fail). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collc.h"

enum { ALLREDUCE, RSB, ALLGATHER, REDUCE, BCAST, ALLTOALL, NCOLL };
enum { BLOCKING, NONBLOCKING, PERSISTENT, REFERENCE, NMODE };
static const char *const coll_names[NCOLL] = {"allreduce", "reduce_scatter_block", "allgather",
                                              "reduce", "bcast", "alltoall"};
static const char *const mode_names[NMODE] = {"blocking", "nonblocking", "persistent", "ref"};
static int rank, size;

/* Collective c, of n ints per block, from s into r (bcast: r only), in
 * mode m (REFERENCE: the library's PMPI_ call). MPI code. */
static int coll_run(int c, int m, const int *s, int *r, int n) {
  MPI_Comm w = MPI_COMM_WORLD;
  MPI_Info i = MPI_INFO_NULL;
  MPI_Datatype t = MPI_INT;
  MPI_Request q = MPI_REQUEST_NULL;
  int root = c == BCAST ? size - 1 : 1 % size, rc = 0;
#define ALL3(B, I, P, R, ...)                                                                 \
  (m == BLOCKING ? B(__VA_ARGS__) : m == NONBLOCKING ? I(__VA_ARGS__, &q)                     \
   : m == PERSISTENT ? P(__VA_ARGS__, i, &q) : R(__VA_ARGS__))
  switch (c) {
  case ALLREDUCE:
    rc = ALL3(MPI_Allreduce, MPI_Iallreduce, MPI_Allreduce_init, PMPI_Allreduce, s, r, n, t,
              MPI_SUM, w);
    break;
  case RSB:
    rc = ALL3(MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, MPI_Reduce_scatter_block_init,
              PMPI_Reduce_scatter_block, s, r, n, t, MPI_SUM, w);
    break;
  case ALLGATHER:
    rc = ALL3(MPI_Allgather, MPI_Iallgather, MPI_Allgather_init, PMPI_Allgather, s, n, t, r, n,
              t, w);
    break;
  case REDUCE:
    rc = ALL3(MPI_Reduce, MPI_Ireduce, MPI_Reduce_init, PMPI_Reduce, s, r, n, t, MPI_SUM, root,
              w);
    break;
  case BCAST:
    rc = ALL3(MPI_Bcast, MPI_Ibcast, MPI_Bcast_init, PMPI_Bcast, r, n, t, root, w);
    break;
  default:
    rc = ALL3(MPI_Alltoall, MPI_Ialltoall, MPI_Alltoall_init, PMPI_Alltoall, s, n, t, r, n, t,
              w);
  }
#undef ALL3
  if (rc || m == BLOCKING || m == REFERENCE) return rc;
  for (int k = 0; k < (m == PERSISTENT ? 2 : 1) && !rc; k++) /* persistent: started twice */
    rc = (m == PERSISTENT ? MPI_Start(&q) : 0) || MPI_Wait(&q, MPI_STATUS_IGNORE);
  if (m == PERSISTENT) rc = rc || MPI_Request_free(&q);
  return rc;
}

/* Input of collective c (distinct per rank and element) into s, and the
 * sentinel into r; bcast's input is the root's r. */
static void fill(int c, int *s, int *r, int n) {
  for (int k = 0; k < n * size; k++) s[k] = rank * 1000003 + k * 7 + c, r[k] = -1 - k;
  if (c == BCAST && rank == size - 1) memcpy(r, s, (size_t)n * sizeof *r);
}

/* Every collective and mode at count n, buffers alternately host (hs, hr)
 * and device (ds, dr), against the reference; failures printed. */
static int check_all(int n, int *hs, int *hr, int *ds, int *dr, int *ts, int *tr) {
  int fails = 0;
  for (int c = 0; c < NCOLL; c++)
    for (int m = BLOCKING; m < REFERENCE; m++)
      for (int k = 0; k < 4; k++) {
        int *s = k % 2 ? ds : hs, *r = k % 2 ? dr : hr;
        fill(c, s, r, n);
        fill(c, ts, tr, n);
        int rc = coll_run(c, m, s, r, n), rr = coll_run(c, REFERENCE, ts, tr, n);
        if (rc || rr || memcmp(r, tr, (size_t)n * (size_t)size * sizeof *r)) {
          fails++;
          fprintf(stderr, "rank %d: %s %s n=%d %s buffers: %s\n", rank, coll_names[c],
                  mode_names[m], n, k % 2 ? "device" : "host", rc || rr ? "error" : "differs");
        }
      }
  return fails;
}

/* 1 if a mapping of this process names libcudart. */
static int cudart_mapped(void) {
  char line[4096];
  int found = 0;
  FILE *f = fopen("/proc/self/maps", "r");
  while (f && fgets(line, sizeof line, f)) found |= strstr(line, "libcudart") != NULL;
  if (f) fclose(f);
  return found;
}

int main(int argc, char **argv) {
  enum { NMAX = 1000 };
  int cudart = argc > 2 && !strcmp(argv[1], "cudart"), want = cudart ? atoi(argv[2]) : 0;
  size_t bytes = (size_t)NMAX * 64 * sizeof(int); /* up to 64 ranks */
  char *arena = malloc(2 * bytes), env[64];
  snprintf(env, sizeof env, "%jx:%jx", (uintmax_t)(uintptr_t)arena,
           (uintmax_t)(uintptr_t)(arena + 2 * bytes));
  if (!cudart) setenv("COLLC_TEST_FAKE_DEVICE", env, 1);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int *hs = malloc(bytes), *hr = malloc(bytes), *ts = malloc(bytes), *tr = malloc(bytes);
  int fails = size > 64;
  if (cudart) {
    fails += check_all(5, hs, hr, hs, hr, ts, tr) > 0;
    if (cudart_mapped() != want)
      fails++, fprintf(stderr, "rank %d: libcudart %smapped\n", rank, want ? "not " : "");
  } else {
    fails += check_all(5, hs, hr, (int *)arena, (int *)(arena + bytes), ts, tr);
    fails += check_all(NMAX, hs, hr, (int *)arena, (int *)(arena + bytes), ts, tr);
  }
  int all = 0;
  PMPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("device%s: p=%d %s\n", cudart ? " cudart" : "", size, all ? "FAILED" : "ok");
  MPI_Finalize();
  free(hs), free(hr), free(ts), free(tr), free(arena);
  return all != 0;
}
