/* node.c - which ranks share a node, and the node segments of a
 * communicator's state.
 *
 * Discovery (collective, once per communicator): MPI_Comm_split_type
 * (MPI_COMM_TYPE_SHARED) gives the real node; COLLC_NODE_SIZE=k cuts it
 * into virtual nodes of k consecutive ranks (for testing node-aware plans
 * on one machine); each node is named by its lowest rank and the names are
 * gathered, so any placement works (irregular, unequal). hwloc counts the
 * cores: when a node holds more ranks than cores, waits yield at once. */
#include <hwloc.h>
#include <pthread.h>
#include <stdlib.h>
#include "internal.h"
#include "../exec/segment.h"
#include "../plan/config.h"

static int ncores = -1; /* processing units of this machine (0: unknown) */
static pthread_once_t cores_once = PTHREAD_ONCE_INIT;

static void count_cores(void) {
  hwloc_topology_t t;
  ncores = 0;
  if (hwloc_topology_init(&t)) return;
  /* The OS backend counts processing units; the x86 (CPUID) one only adds
   * detail we do not use and complains on stderr under valgrind. */
  hwloc_topology_set_components(t, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "x86");
  if (!hwloc_topology_load(t)) ncores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
  hwloc_topology_destroy(t);
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

int state_layout(collc_state *st, MPI_Comm comm) {
  int p, rank, k = 1, id, rc;
  if (st->layout_done) return MPI_SUCCESS;
  st->layout_done = 1;
  st->node = MPI_COMM_NULL;
  if (!config_get()->shm) return MPI_SUCCESS;
  PMPI_Comm_size(comm, &p);
  PMPI_Comm_rank(comm, &rank);
  int *ids = malloc((size_t)p * sizeof *ids);
  if (!ids) return MPI_ERR_NO_MEM;
  if ((rc = node_comm(comm, &st->node)) == MPI_SUCCESS) {
    PMPI_Comm_size(st->node, &k);
    rc = PMPI_Allreduce(&rank, &id, 1, MPI_INT, MPI_MIN, st->node);
  }
  if (!rc) rc = PMPI_Allgather(&id, 1, MPI_INT, ids, 1, MPI_INT, comm);
  if (!rc) st->layout = layout_new(p, ids);
  free(ids);
  pthread_once(&cores_once, count_cores);
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
  return seg_new(st->node, want, st->yield, &st->seg);
}

int state_own_segment(collc_state *st, size_t bytes, shm_seg **out) {
  *out = NULL;
  if (st->node == MPI_COMM_NULL) return MPI_SUCCESS;
  return seg_new(st->node, bytes, st->yield, out);
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
