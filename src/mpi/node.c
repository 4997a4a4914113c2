/* node.c - which ranks share a node, and the node segments of a
 * communicator's state.
 *
 * Discovery (collective, once per communicator): MPI_Comm_split_type
 * (MPI_COMM_TYPE_SHARED) gives the real node; COLLC_NODE_SIZE=k cuts it
 * into virtual nodes of k consecutive ranks (for testing node-aware plans
 * on one machine); each node is named by its lowest rank and the names are
 * gathered, so any placement works (irregular, unequal). hwloc counts the
 * cores (when a node holds more ranks than cores, waits yield at once) and
 * finds the memory domain each process is bound to (its NUMA node where a
 * socket has several, else its socket): local ranks in runs of m per
 * domain make the layout's socket level (COLLC_SOCKET_SIZE=m sets it;
 * unbound processes have none). */
#include <hwloc.h>
#include <pthread.h>
#include <stdlib.h>
#include "internal.h"
#include "../exec/segment.h"
#include "../exec/cma.h"
#include "../plan/config.h"

static int ncores = -1;  /* processing units of this machine (0: unknown) */
static int package = -1; /* the one NUMA node or package this process is bound to; -1: none */
static pthread_once_t topo_once = PTHREAD_ONCE_INIT;

/* The object of type ty my binding lies in, if there are several and
 * exactly one holds it all; -1 otherwise. */
static int bound_in(hwloc_topology_t t, hwloc_const_bitmap_t set, hwloc_obj_type_t ty) {
  if (hwloc_get_nbobjs_by_type(t, ty) < 2) return -1;
  hwloc_obj_t o = hwloc_get_next_obj_covering_cpuset_by_type(t, set, ty, NULL);
  if (!o || hwloc_get_next_obj_covering_cpuset_by_type(t, set, ty, o)) return -1;
  return (int)o->logical_index;
}

/* My memory domain: the NUMA node my binding lies in (the finer level where
 * a socket has several), else its package (socket); -1 if unbound. */
static int my_domain(hwloc_topology_t t) {
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  int d = -1;
  if (set && !hwloc_get_cpubind(t, set, HWLOC_CPUBIND_PROCESS)) {
    d = bound_in(t, set, HWLOC_OBJ_NUMANODE);
    if (d < 0) d = bound_in(t, set, HWLOC_OBJ_PACKAGE);
    else d += 1 << 20; /* (numbers of NUMA nodes and packages never meet) */
  }
  hwloc_bitmap_free(set);
  return d;
}

static void read_topology(void) {
  hwloc_topology_t t;
  ncores = 0;
  if (hwloc_topology_init(&t)) return;
  /* The OS backend counts processing units and packages; the x86 (CPUID)
   * one only adds detail we do not use and complains under valgrind. */
  hwloc_topology_set_components(t, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "x86");
  if (!hwloc_topology_load(t)) {
    ncores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
    package = my_domain(t);
  }
  hwloc_topology_destroy(t);
}

/* Ranks per socket on my node of k ranks (collective over node): the
 * override, or the length of the runs of equal packages in local rank
 * order, if all runs are equal and of distinct packages; 0 if unknown. */
static int socket_size(MPI_Comm node, int k) {
  int m = config_get()->socket_size, *pk;
  if (m < 0) collc_warn_once("socket-size", "COLLC_SOCKET_SIZE: not a positive number; ignored");
  if (m) return m > 0 ? m : 0;
  if (node == MPI_COMM_NULL) return 0;
  int have = (pk = malloc((size_t)k * sizeof *pk)) != NULL, all = 0; /* (all take part) */
  if (PMPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, node) || !all ||
      PMPI_Allgather(&package, 1, MPI_INT, pk, 1, MPI_INT, node))
    k = 0;
  while (m < k && pk[m] == pk[0]) m++;
  for (int i = 0; i < k && m; i++)
    if (pk[i] < 0 || pk[i] != pk[i - i % m] || (i % m == 0 && i && pk[i] == pk[i - 1])) m = 0;
  free(pk);
  return k && m && k % m == 0 ? m : 0;
}

/* My node's communicator inside comm (virtual with COLLC_NODE_SIZE). */
static int node_comm(MPI_Comm comm, MPI_Comm *out) {
  int rank, k = config_get()->node_size, lr, rc;
  MPI_Comm real;
  PMPI_Comm_rank(comm, &rank);
  if (k < 0)
    collc_warn_once("node-size", "COLLC_NODE_SIZE: not a positive number; using real nodes");
  if ((rc = PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &real)))
    return rc;
  if (k <= 0) {
    *out = real;
    return MPI_SUCCESS;
  }
  PMPI_Comm_rank(real, &lr);
  rc = PMPI_Comm_split(real, lr / k, lr, out);
  PMPI_Comm_free(&real);
  return rc;
}

/* SimGrid SMPI (smpicc's mpi.h defines SMPI_SHARED_MALLOC) runs every
 * simulated rank in one process, switching ranks only inside MPI calls: a
 * rank waiting on another's shared-memory flag would spin forever. So
 * there, ranks share no node: node-aware plans do not fit. */
#ifdef SMPI_SHARED_MALLOC
#define SHM_POSSIBLE 0
#else
#define SHM_POSSIBLE 1
#endif

int state_layout(collc_state *st, MPI_Comm comm) {
  int p, rank, k = 1, id, rc;
  if (st->layout_done) return MPI_SUCCESS;
  st->layout_done = 1;
  st->version++;
  st->node = MPI_COMM_NULL;
  if (!config_get()->shm || !SHM_POSSIBLE) return MPI_SUCCESS;
  PMPI_Comm_size(comm, &p);
  PMPI_Comm_rank(comm, &rank);
  int *ids = malloc((size_t)p * sizeof *ids);
  if (!ids) return MPI_ERR_NO_MEM;
  if ((rc = node_comm(comm, &st->node)) == MPI_SUCCESS) {
    PMPI_Comm_size(st->node, &k);
    rc = PMPI_Allreduce(&rank, &id, 1, MPI_INT, MPI_MIN, st->node);
  }
  pthread_once(&topo_once, read_topology);
  int m[2] = {0, 0}, all[2] = {0, 0};
  if (!rc) m[0] = socket_size(st->node, k), m[1] = -m[0];
  if (!rc) rc = PMPI_Allgather(&id, 1, MPI_INT, ids, 1, MPI_INT, comm);
  if (!rc) rc = PMPI_Allreduce(m, all, 2, MPI_INT, MPI_MAX, comm); /* the same on every node */
  if (!rc) st->layout = layout_new(p, ids);
  if (st->layout && all[0] == -all[1] && all[0] > 0) layout_set_sockets(st->layout, all[0]);
  free(ids);
  st->yield = ncores <= 0 || k > ncores;
  if (k == 1 && st->node != MPI_COMM_NULL) PMPI_Comm_free(&st->node);
  return rc;
}

int state_segment(collc_state *st, size_t bytes) {
  if (st->node == MPI_COMM_NULL || (st->seg && st->seg->bytes >= bytes)) return MPI_SUCCESS;
  size_t want = st->seg && 2 * st->seg->bytes > bytes ? 2 * st->seg->bytes : bytes;
  if (st->seg) { /* every rank of the node is here, none executes on it */
    seg_free(st->seg);
    st->seg = NULL;
  }
  st->version++;
  int rc = seg_new(st->node, want, st->yield, &st->seg);
  if (!rc) st->seg->cma = st->cma;
  return rc;
}

int state_cma(collc_state *st) {
  if (!st->cma_done) {
    st->cma_done = 1;
    st->cma = st->node != MPI_COMM_NULL && cma_probe(st->node);
    if (st->seg) st->seg->cma = st->cma;
  }
  return st->cma;
}

int state_own_segment(collc_state *st, size_t bytes, shm_seg **out) {
  *out = NULL;
  if (st->node == MPI_COMM_NULL) return MPI_SUCCESS;
  int rc = seg_new(st->node, bytes, st->yield, out);
  if (!rc) (*out)->cma = st->cma;
  return rc;
}

void state_free_nodes(collc_state *st) {
  if (st->seg) seg_free(st->seg);
  st->seg = NULL;
  if (st->node != MPI_COMM_NULL) PMPI_Comm_free(&st->node);
  layout_free(st->layout);
  st->layout = NULL;
}

const collc_layout *node_layout(MPI_Comm comm) {
  collc_state *st = state_get(comm, 1);
  return st && state_layout(st, comm) == MPI_SUCCESS ? st->layout : NULL;
}
