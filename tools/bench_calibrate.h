/* bench_calibrate.h - collc-bench --calibrate [FILE]: fit the cost
 * simulator's parameters (src/check/simulate.h) to the machine at hand.
 * Part of tools/collc-bench.c (included once, after its helpers).
 *
 * Measured, each as the minimum over repetitions (rank 0 prints):
 *   lat, bw     ping-pong between rank 0 and a rank of its node (levels
 *               socket and node; the socket level where the library knows
 *               the sockets) and of another node (network level), at 8
 *               bytes and 1 MiB: one way = half the round trip; bw from
 *               the difference, lat = t(8 B) - 8 B / bw
 *   nic         with two or more nodes: every rank of the first node sends
 *               4 MiB to a rank of the second at once; bytes / time
 *   o           time to post an MPI_Isend of 8 bytes (of 64, before the waits)
 *   copy        memcpy of 8 MiB; reduce: MPI_Reduce_local MPI_SUM of 1 Mi doubles
 * Where a level has no pair of ranks, it takes the next inner level's
 * values. eager, flag and group keep the "local" preset's. The result is
 * one line of sim_params text: stdout and, when given, FILE. Under SMPI it
 * measures the simulated platform (mpirun there is smpirun). */
#ifndef COLLC_BENCH_CALIBRATE_H
#define COLLC_BENCH_CALIBRATE_H

#include "check/simulate.h"

#define CAL_REPS 20

/* Half the minimum round trip of `bytes` between ranks a and b of comm
 * (the others only join the barriers); valid on rank a. */
static double cal_pingpong(MPI_Comm comm, int a, int b, char *buf, int bytes) {
  int me;
  double best = 1e30;
  PMPI_Comm_rank(comm, &me);
  for (int i = 0; i < CAL_REPS; i++) {
    PMPI_Barrier(comm);
    double t = MPI_Wtime();
    if (me == a) {
      PMPI_Send(buf, bytes, MPI_BYTE, b, 7, comm);
      PMPI_Recv(buf, bytes, MPI_BYTE, b, 7, comm, MPI_STATUS_IGNORE);
    } else if (me == b) {
      PMPI_Recv(buf, bytes, MPI_BYTE, a, 7, comm, MPI_STATUS_IGNORE);
      PMPI_Send(buf, bytes, MPI_BYTE, a, 7, comm);
    }
    t = MPI_Wtime() - t;
    if (t < best) best = t;
  }
  return best / 2;
}

/* lat[l], bw[l] from ping-pongs between rank 0 and b (b < 0: none). */
static void cal_level(MPI_Comm comm, int b, char *buf, sim_params *M, int l) {
  int big = 1 << 20;
  if (b < 0) {
    M->lat[l] = M->lat[l - 1], M->bw[l] = M->bw[l - 1];
    return;
  }
  double t8 = cal_pingpong(comm, 0, b, buf, 8), tb = cal_pingpong(comm, 0, b, buf, big);
  M->bw[l] = tb > t8 ? (big - 8) / (tb - t8) : 1e12;
  M->lat[l] = fmax(t8 - 8 / M->bw[l], 0);
}

/* Seconds per MPI_Isend post (rank 0 to b, 64 messages of 8 bytes). */
static double cal_post(MPI_Comm comm, int b, char *buf) {
  MPI_Request rq[64];
  int me;
  double best = 1e30;
  PMPI_Comm_rank(comm, &me);
  for (int i = 0; i < CAL_REPS && b >= 0; i++) {
    PMPI_Barrier(comm);
    double t = MPI_Wtime();
    for (int k = 0; k < 64 && me <= b; k++)
      if (me == 0) PMPI_Isend(buf, 8, MPI_BYTE, b, 8, comm, &rq[k]);
      else if (me == b) PMPI_Irecv(buf + 8 * k, 8, MPI_BYTE, 0, 8, comm, &rq[k]);
    t = MPI_Wtime() - t;
    for (int k = 0; k < 64 && (me == 0 || me == b); k++) PMPI_Wait(&rq[k], MPI_STATUS_IGNORE);
    if (t < best) best = t;
  }
  return b >= 0 ? best / 64 : 0;
}

/* Node link: ranks of node 0 (local index i) send 4 MiB to local index i
 * of node 1, all at once; bytes per second of the slowest (0: one node). */
static double cal_nic(MPI_Comm comm, const collc_layout *L, char *buf) {
  int me, bytes = 4 << 20, k;
  PMPI_Comm_rank(comm, &me);
  if (!L || L->nnodes < 2) return 0;
  k = L->size[0] < L->size[1] ? L->size[0] : L->size[1];
  double best = 1e30;
  for (int i = 0; i < 3; i++) {
    PMPI_Barrier(comm);
    double t = MPI_Wtime(), all;
    int j = L->local_of[me];
    if (j < k && L->node_of[me] == 0)
      PMPI_Send(buf, bytes, MPI_BYTE, layout_rank(L, 1, j), 9, comm);
    else if (j < k && L->node_of[me] == 1)
      PMPI_Recv(buf, bytes, MPI_BYTE, layout_rank(L, 0, j), 9, comm, MPI_STATUS_IGNORE);
    t = MPI_Wtime() - t;
    PMPI_Allreduce(&t, &all, 1, MPI_DOUBLE, MPI_MAX, comm);
    if (all < best) best = all;
  }
  return (double)k * bytes / best;
}

/* copy_bw and reduce_bw from rank 0's local work. */
static void cal_local(char *buf, sim_params *M) {
  size_t n = 8 << 20;
  double bc = 1e30, br = 1e30;
  for (int i = 0; i < 5; i++) {
    double t = MPI_Wtime();
    memcpy(buf + n, buf, n);
    bc = fmin(bc, MPI_Wtime() - t);
    t = MPI_Wtime();
    MPI_Reduce_local(buf, buf + n, (int)(n / 8), MPI_DOUBLE, MPI_SUM);
    br = fmin(br, MPI_Wtime() - t);
  }
  M->copy_bw = (double)n / bc, M->reduce_bw = (double)n / br;
}

/* The ranks rank 0 measures against: same socket, same node, other node
 * (-1 where there is none). */
static void cal_partners(const collc_layout *L, int p, int b[SIM_LEVELS]) {
  b[SIM_SOCKET] = b[SIM_NODE] = b[SIM_NET] = -1;
  for (int r = 1; r < p; r++) {
    int l = !L ? SIM_NODE : L->node_of[r] != L->node_of[0] ? SIM_NET
          : L->socket > 0 && L->local_of[r] / L->socket != 0 ? SIM_NODE : SIM_SOCKET;
    if (b[l] < 0) b[l] = r;
  }
}

/* Which ranks of comm share a node: the library's layout (with sockets),
 * else MPI_COMM_TYPE_SHARED itself (the library has none with COLLC_SHM=0
 * or under SMPI, where ranks share no memory but do share simulated hosts).
 * *own is set when the caller must free the result. NULL if unknown. */
static const collc_layout *cal_layout(MPI_Comm comm, collc_layout **own) {
  const collc_layout *L = node_layout(comm);
  int p, me, id;
  MPI_Comm node;
  *own = NULL;
  if (L) return L;
  PMPI_Comm_size(comm, &p), PMPI_Comm_rank(comm, &me);
  int *ids = malloc((size_t)p * sizeof *ids);
  if (ids && PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &node) == 0) {
    PMPI_Allreduce(&me, &id, 1, MPI_INT, MPI_MIN, node);
    PMPI_Comm_free(&node);
    PMPI_Allgather(&id, 1, MPI_INT, ids, 1, MPI_INT, comm);
    *own = layout_new(p, ids);
  }
  free(ids);
  return *own;
}

/* Measure the parameters over comm into text[len] (collective; every
 * rank gets them); 0, or -1 when out of memory on some rank. The layout's
 * description into desc[dlen]. */
static int cal_measure(MPI_Comm comm, char *text, size_t len, char *desc, size_t dlen) {
  int p, me, b[SIM_LEVELS];
  char why[200];
  sim_params M;
  PMPI_Comm_size(comm, &p), PMPI_Comm_rank(comm, &me);
  collc_layout *own;
  const collc_layout *L = cal_layout(comm, &own);
  char *buf = calloc(16 << 20, 1);
  int ok = buf != NULL, all = 0;
  PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm); /* no rank leaves the others waiting */
  snprintf(desc, dlen, "%s", L ? L->desc : "no layout");
  if (!all) {
    free(buf), layout_free(own);
    return -1;
  }
  sim_params_parse("local", &M, why, sizeof why);
  cal_partners(L, p, b);
  if (b[SIM_SOCKET] < 0 && b[SIM_NODE] >= 0) b[SIM_SOCKET] = b[SIM_NODE], b[SIM_NODE] = -1;
  for (int l = 0; l < SIM_LEVELS; l++)
    if (l > 0 || b[l] >= 0) cal_level(comm, b[l], buf, &M, l);
  M.o = cal_post(comm, b[SIM_SOCKET] >= 0 ? b[SIM_SOCKET] : b[SIM_NET], buf);
  M.nic_bw = cal_nic(comm, L, buf);
  cal_local(buf, &M);
  free(buf);
  layout_free(own);
  sim_params_format(&M, text, len);
  return 0;
}

/* Measure and print the parameters; 0 or 2 (bad FILE, out of memory). */
static inline int calibrate(MPI_Comm comm, const char *file) {
  int p, me;
  char text[400], desc[200];
  PMPI_Comm_size(comm, &p), PMPI_Comm_rank(comm, &me);
  if (cal_measure(comm, text, sizeof text, desc, sizeof desc)) {
    if (me == 0) fprintf(stderr, "collc-bench --calibrate: out of memory\n");
    return 2;
  }
  if (me == 0) printf("# collc-bench --calibrate, p = %d, %s\n%s\n", p, desc, text);
  if (me != 0) return 0;
  FILE *f = file ? fopen(file, "w") : NULL;
  if (f) fprintf(f, "# collc-bench --calibrate, p = %d\n%s\n", p, text), fclose(f);
  return file && !f ? 2 : 0;
}

#endif
