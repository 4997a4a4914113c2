/* select.c - the default algorithm rule, used when COLLC_<COLLECTIVE> is unset.
 *
 * The rule must never be knowingly slower than the native collective: a row
 * picks one of ours only where collc-bench measured it faster (>= 1.1x in two
 * idle passes of `make bench` plus a p = 6 and p = 16 sweep; see README,
 * "Default rule"), and native everywhere else, including every process
 * count we could not measure. Bytes: per block for all-to-all and
 * reduce_scatter_block, per vector for the others. Byte bounds sit at the
 * geometric midpoints between measured decades (e.g. 2.5 KB between 800 B
 * and 8 KB). Measured on one node of 2 cores (p > 2 oversubscribed): the
 * rule describes that machine, and a cluster may differ.
 */
#include <limits.h>
#include <pthread.h>
#include <string.h>
#include "internal.h"
#include "../plan/config.h"

enum { LIB_OPEN_MPI = 1, LIB_MPICH = 2 };

typedef struct {
  int lib, coll, pmin, pmax;
  long long bmin, bmax;   /* inclusive */
  const char *algo;       /* for commutative operations (and non-reductions) */
  const char *noncomm;    /* for non-commutative ones */
  int nb;                 /* 1: for nonblocking calls only (against the library's MPI_I<coll>) */
} rule;

#define ANY_P INT_MAX
#define NO_MAX LLONG_MAX
/* Node-aware rows stop at the largest size measured (8 MB vectors, 10^5
 * doubles per block) times ~3: their segment holds a copy of the data (two
 * for allreduce) for the communicator's life, so larger calls stay native. */
#define SEG_MAX 25000000LL

static const rule rules[] = {
    /* Node-aware plans (shared memory inside the node; two passes of make bench on one
     * node, the minimum speedup of the two): they come first and apply only where
     * ranks share a node (and rank order can be kept for non-commutative ops). */
    /* p = 2 on one node, shm (the default algorithm's messages through the segment):
     * all-to-all 1.4x-2.1x up to 10^4 ints per block; allreduce 1.2x-2.2x from 1 to
     * 10^6 doubles; reduce_scatter_block 1.6x-11x from 1 to 10^5 doubles per block */
    /* ... narrowed where OSU 7.2 (back to back, p = 2, two runs) disagreed: all-to-all
     * below 512 B and at 32 KB per block, allreduce up to 256 B (README, OSU) */
    {LIB_OPEN_MPI, COLLC_COLL_ALLTOALL, 2, 2, 400, 25000, "shm", NULL, 0},
    {LIB_OPEN_MPI, COLLC_COLL_ALLREDUCE, 2, 2, 400, SEG_MAX, "shm", "shm", 0},
    {LIB_OPEN_MPI, COLLC_COLL_REDUCE_SCATTER_BLOCK, 2, 2, 0, 2500000, "shm", "shm", 0},
    /* all-to-all p = 16, 32: 1.6x-5.1x up to 100 ints per block; p = 32 1.35x-1.4x at
     * 1000 and 10000 ints */
    {LIB_OPEN_MPI, COLLC_COLL_ALLTOALL, 16, 32, 0, 400, "hier", NULL, 0},
    {LIB_OPEN_MPI, COLLC_COLL_ALLTOALL, 32, 32, 1265, 40000, "hier", NULL, 0},
    /* allreduce p = 4, 8: node=tree 1.4x-3.4x from 800 B to 800 KB, node=rs 1.9x-2.1x at 8 MB */
    {LIB_OPEN_MPI, COLLC_COLL_ALLREDUCE, 4, 8, 250, 2500000, "hier:node=tree", "hier:node=tree", 0},
    {LIB_OPEN_MPI, COLLC_COLL_ALLREDUCE, 4, 8, 2500001, SEG_MAX, "hier", "hier", 0},
    /* reduce_scatter_block p = 2..8, 800 B-8 KB blocks: 1.3x-2.1x (beyond, recexch:flat) */
    {LIB_OPEN_MPI, COLLC_COLL_REDUCE_SCATTER_BLOCK, 2, 8, 250, 25000, "hier", "hier", 0},
    /* reduce: p = 2 from 800 B 1.2x-4.3x; p = 4, 8 from 8 KB 1.6x-5.8x */
    /* (p = 2 only where OSU 7.2 agreed too: it lost 8 B-2 KB and 16-512 KB back to back) */
    {LIB_OPEN_MPI, COLLC_COLL_REDUCE, 2, 2, 2500, 12000, "hier", "hier", 0},
    {LIB_OPEN_MPI, COLLC_COLL_REDUCE, 2, 2, 750000, SEG_MAX, "hier", "hier", 0},
    {LIB_OPEN_MPI, COLLC_COLL_REDUCE, 4, 8, 2500, SEG_MAX, "hier", "hier", 0},
    /* allgather p = 8, 80 B-800 KB blocks: 1.5x-2.9x (p = 2, 4 lose to the native
     * single-copy transfer at large blocks: no single copy here yet) */
    {LIB_OPEN_MPI, COLLC_COLL_ALLGATHER, 8, 8, 25, 2500000, "hier", NULL, 0},
    /* Open MPI 4.1: all-to-all, p = 16..64, 1..512 ints (the paper's small-count regime) */
    {LIB_OPEN_MPI, COLLC_COLL_ALLTOALL, 32, ANY_P, 0, 400, "torus:d=2", NULL, 0},
    {LIB_OPEN_MPI, COLLC_COLL_ALLTOALL, 16, 31, 16, 256, "linear", NULL, 0},
    /* allreduce: p = 2 at 80 KB-800 KB (cyclic 1.5-1.7x, recexch 1.4x); p = 4..16
     * tree at 8 KB and 80 KB (1.4-2.0x); p = 4, 8 one-step recexch at 8 MB (1.3x) */
    {LIB_OPEN_MPI, COLLC_COLL_ALLREDUCE, 2, 2, 25000, 2500000, "cyclic", "recexch", 0},
    {LIB_OPEN_MPI, COLLC_COLL_ALLREDUCE, 4, 16, 2500, 250000, "tree", "tree", 0},
    {LIB_OPEN_MPI, COLLC_COLL_ALLREDUCE, 4, 8, 2500000, NO_MAX, "recexch:flat", "recexch:flat", 0},
    /* reduce_scatter_block from 8 KB blocks: 1.2x-9.5x at p = 2..16 */
    {LIB_OPEN_MPI, COLLC_COLL_REDUCE_SCATTER_BLOCK, 2, 16, 2500, NO_MAX, "recexch:flat",
     "recexch:flat", 0},
    /* reduce: binomial tree from 80 KB, 1.3x-4.1x at p = 4..16 (p = 2, 1.1-1.25x with
     * collc-bench, lost back to back in OSU 7.2: native) */
    {LIB_OPEN_MPI, COLLC_COLL_REDUCE, 4, 16, 25000, NO_MAX, "tree", "tree", 0},
    /* Nonblocking only, against Open MPI's own MPI_I<coll> (libnbc): its schedule costs
     * more per call than the blocking collective, so collc's cached plans win where its
     * blocking rule keeps native. p = 2, OSU 7.2 osu_ireduce / osu_ialltoall (5 pairs)
     * and collc-bench --overhead (21 rounds) agreeing: reduce tree 1.1x-1.75x at
     * 8 B-4 KB; all-to-all pairwise 1.15x-1.2x at 8 B-1 KB per block. */
    {LIB_OPEN_MPI, COLLC_COLL_REDUCE, 2, 2, 0, 4096, "tree", "tree", 1},
    {LIB_OPEN_MPI, COLLC_COLL_ALLTOALL, 2, 2, 0, 1024, "pairwise", NULL, 1},
    /* MPICH 4.0, measured at p = 2 only (oversubscribed MPICH timings are too coarse) */
    /* on one node (two collc-bench passes, the smaller speedup): all-to-all shm 1.2x-2.5x
     * up to 10^4 ints per block; allreduce shm 1.3x-2.8x from 10 to 10^6 doubles;
     * reduce_scatter_block shm 1.5x-16x from 100 doubles per block; allgather hier
     * 1.5x-4.7x at 100 and 1000 doubles per block (0.7x at 10^4) */
    {LIB_MPICH, COLLC_COLL_ALLTOALL, 2, 2, 0, 40000, "shm", NULL, 0},
    {LIB_MPICH, COLLC_COLL_ALLREDUCE, 2, 2, 25, SEG_MAX, "shm", "shm", 0},
    {LIB_MPICH, COLLC_COLL_REDUCE_SCATTER_BLOCK, 2, 2, 250, 2500000, "shm", "shm", 0},
    {LIB_MPICH, COLLC_COLL_ALLGATHER, 2, 2, 250, 25000, "hier", NULL, 0},
    {LIB_MPICH, COLLC_COLL_ALLREDUCE, 2, 2, 25000, 2500000, "cyclic", "recexch", 0},
    {LIB_MPICH, COLLC_COLL_REDUCE_SCATTER_BLOCK, 2, 2, 2500, NO_MAX, "recexch:flat",
     "recexch:flat", 0},
    {LIB_MPICH, COLLC_COLL_REDUCE, 2, 2, 2500, NO_MAX, "tree", "tree", 0},
};

static int library;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void detect_library(void) {
  char v[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  if (PMPI_Get_library_version(v, &len) != MPI_SUCCESS || len <= 0) return;
  library = strstr(v, "Open MPI") ? LIB_OPEN_MPI : strstr(v, "MPICH") ? LIB_MPICH : 0;
}

long long select_bytes(const collc_spec *s) {
  if (coll_desc_of(s->coll)->per_block) return s->unit_bytes;
  return s->count * s->unit_bytes;
}

/* Whether a node-aware plan can serve s: ranks share a node, and a
 * non-commutative reduction keeps rank order (nodes of consecutive ranks). */
static int hier_fits(const collc_spec *s) {
  const collc_layout *L = s->layout;
  return layout_shares(L) && L->p == s->p &&
         (!coll_reduces(s->coll) || s->commutative || L->consecutive);
}

/* Whether rule text a can serve s: hier where ranks share a node, shm
 * where all of them share one. */
static int fits(const char *a, const collc_spec *s) {
  const collc_layout *L = s->layout;
  switch (algo_text_needs(s->coll, a)) {
  case ALGO_SHARED_NODES: return hier_fits(s);
  case ALGO_ONE_NODE: return L && L->p == s->p && L->nnodes == 1 && s->p > 1;
  default: return 1;
  }
}

/* Whether rule text a (for collective coll) needs the node layout. */
static int node_aware(int coll, const char *a) { return algo_text_needs(coll, a) != ALGO_ANY; }

/* The algorithm text of row R for s. */
static const char *row_algo(const rule *R, const collc_spec *s) {
  return coll_reduces(s->coll) && !s->commutative && R->noncomm ? R->noncomm : R->algo;
}

/* The first row for s, a nonblocking call (nb) or not; with shared (the
 * layout assumed to allow node-aware rows) or not (those only where they
 * fit s's layout). NULL: none. */
static const rule *first_row(const collc_spec *s, int assume_shared, int nb) {
  pthread_once(&once, detect_library);
  long long b = select_bytes(s);
  for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
    const rule *R = &rules[i];
    const char *a = row_algo(R, s);
    if (R->nb > nb) continue;
    if (R->lib == library && R->coll == s->coll && s->p >= R->pmin && s->p <= R->pmax &&
        b >= R->bmin && b <= R->bmax && ((assume_shared && node_aware(s->coll, a)) || fits(a, s)))
      return R;
  }
  return NULL;
}

const char *select_default(const collc_spec *s) {
  const rule *R = first_row(s, 0, 0);
  return R ? row_algo(R, s) : "native";
}

const char *select_nonblocking(const collc_spec *s, int node_ready) {
  collc_spec t = *s;
  if (!node_ready) t.layout = NULL; /* (the node-aware rows do not fit) */
  const rule *R = first_row(&t, 0, 1);
  return R ? row_algo(R, &t) : "native";
}

int select_may_share(const collc_spec *s) {
  const rule *R = first_row(s, 1, 0);
  return (R && node_aware(s->coll, row_algo(R, s))) || select_simulates(s);
}

int select_simulates(const collc_spec *s) {
  int minp = config_get()->sim_min_p;
  return minp > 0 && s->p >= minp && s->unit_bytes > 0 && !first_row(s, 1, 0);
}
