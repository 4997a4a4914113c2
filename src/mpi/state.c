/* state.c - per-communicator state cached as an attribute: the private
 * communicator, group (dimension) communicators, and the plan cache. The
 * attribute's delete callback frees all of it when the user frees the
 * communicator (collective, as MPI_Comm_free itself). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "../exec/backend_cuda.h"
#include "dispatch.h"
#include "request.h"
#include "../exec/segment.h"

static int comm_keyval = MPI_KEYVAL_INVALID;
static int type_keyval = MPI_KEYVAL_INVALID;
static long type_next_serial = 1;
static pthread_once_t keyvals_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t serial_lock = PTHREAD_MUTEX_INITIALIZER;

/* The fast path's lookup (state_find): a few (communicator, state) pairs
 * per thread, valid while no state has been freed since (MPI reuses the
 * handles of freed communicators), which saves the attribute lookup
 * (about 20 ns in Open MPI 4.1) on every cached call. */
#define STATE_MEMO_WAYS 4
typedef struct {
  MPI_Comm comm;
  collc_state *st;
  unsigned gen;
} comm_memo;
static atomic_uint state_gen = 1; /* bumped whenever a state is freed */
#ifndef SMPI_SHARED_MALLOC
static __thread comm_memo memo[STATE_MEMO_WAYS] __attribute__((tls_model("initial-exec")));
#endif

/* Free st; collective (in MPI_Comm_free) or not (the last persistent
 * request of an orphan): then its node segment is only retired. */
static void state_free(collc_state *st, int collective) {
  atomic_fetch_add_explicit(&state_gen, 1, memory_order_acq_rel); /* (memos are stale) */
  calls_changed();
  nb_clear(st);
  cache_clear(st);
  if (st->priv_req != MPI_REQUEST_NULL) { /* (every rank started it) */
    PMPI_Wait(&st->priv_req, MPI_STATUS_IGNORE);
    st->priv = st->priv_new;
  }
  free(st->nb_busy);
  backend_cuda_host_free(st->stage);
  if (!collective && st->seg) seg_retire(st->seg), st->seg = NULL;
  state_free_nodes(st);
  for (int i = 0; i < st->nfam; i++)
    if (st->fam[i].comm != MPI_COMM_NULL) PMPI_Comm_free(&st->fam[i].comm);
  if (st->priv != MPI_COMM_NULL) PMPI_Comm_free(&st->priv);
  ctx_free(st->bctx);
  ctx_free(st->dctx);
  free(st->calls);
  free(st->fcalls);
  free(st->agreed);
  free(st);
}

static int state_delete(MPI_Comm comm, int keyval, void *attr, void *extra) {
  collc_state *st = attr;
  (void)comm, (void)keyval, (void)extra;
  req_lock(); /* (requests drop their references under it, in any thread) */
  int used = st->refs > 0;
  if (used) st->orphan = 1; /* requests still use it */
  req_unlock();
  if (!used) state_free(st, 1);
  return MPI_SUCCESS;
}

/* (Both under the request lock.) */
void state_ref(collc_state *st) { st->refs++; }

void state_unref(collc_state *st) {
  if (--st->refs == 0 && st->orphan) state_free(st, 0);
}

int state_next_tag(collc_state *st) {
  int t = st->next_tag;
  st->next_tag = (t + 1) % TAG_PERSIST;
  return t;
}

/* Both attribute keys, created once per process (threads may race here). */
static void keyvals_create(void) {
  finalize_hook_install(); /* (before any state on MPI_COMM_SELF: see internal.h) */
  PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, state_delete, &comm_keyval, NULL);
  PMPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &type_keyval, NULL);
}

collc_state *state_get(MPI_Comm comm, int create) {
  void *attr = NULL;
  int flag = 0;
  pthread_once(&keyvals_once, keyvals_create);
  if (comm_keyval == MPI_KEYVAL_INVALID) return NULL;
  if (PMPI_Comm_get_attr(comm, comm_keyval, &attr, &flag) == MPI_SUCCESS && flag) return attr;
  if (!create) return NULL;
  collc_state *st = calloc(1, sizeof *st);
  if (!st) return NULL;
  st->priv = st->node = st->priv_new = MPI_COMM_NULL;
  st->priv_req = MPI_REQUEST_NULL;
  PMPI_Comm_size(comm, &st->p);
  PMPI_Comm_rank(comm, &st->rank);
  if (PMPI_Comm_set_attr(comm, comm_keyval, st) != MPI_SUCCESS) {
    free(st);
    return NULL;
  }
  return st;
}

#ifdef SMPI_SHARED_MALLOC /* SMPI loads a copy per simulated rank: no static TLS to spare */
collc_state *state_find(MPI_Comm comm) { return state_get(comm, 0); }
#else
collc_state *state_find(MPI_Comm comm) {
  unsigned g = atomic_load_explicit(&state_gen, memory_order_acquire);
  comm_memo *m = &memo[((uint64_t)(uintptr_t)comm * 0x9E3779B97F4A7C15ull) >> 62];
  if (m->comm == comm && m->gen == g) return m->st;
  collc_state *st = state_get(comm, 0);
  if (st) *m = (comm_memo){comm, st, g};
  return st;
}
#endif

void state_release(MPI_Comm comm) {
  if (state_get(comm, 0)) PMPI_Comm_delete_attr(comm, comm_keyval);
}

void state_free_keyvals(void) {
  if (comm_keyval != MPI_KEYVAL_INVALID) PMPI_Comm_free_keyval(&comm_keyval);
  if (type_keyval != MPI_KEYVAL_INVALID) PMPI_Type_free_keyval(&type_keyval);
  comm_keyval = type_keyval = MPI_KEYVAL_INVALID; /* (not re-created after finalize) */
}

int state_priv(collc_state *st, MPI_Comm comm) {
  if (st->priv == MPI_COMM_NULL) request_priv_wait(st); /* (one a nonblocking call began) */
  if (st->priv != MPI_COMM_NULL) return MPI_SUCCESS;
  MPI_Group g;
  int rc = PMPI_Comm_group(comm, &g);
  if (rc) return rc;
  rc = PMPI_Comm_create(comm, g, &st->priv); /* unlike dup, copies no attributes */
  PMPI_Group_free(&g);
  if (!rc) PMPI_Comm_set_errhandler(st->priv, MPI_ERRORS_RETURN);
  return rc;
}

int state_add_family(collc_state *st, int n, int stride, MPI_Comm gcomm) {
  if (st->nfam == STATE_MAX_FAMILIES) return MPI_ERR_NO_MEM;
  st->fam[st->nfam++] = (family){n, stride, gcomm};
  st->version++;
  return MPI_SUCCESS;
}

int state_group_comms(collc_state *st, const collc_prog *P, MPI_Comm *out, int create) {
  for (int g = 0; g < P->ngroups; g++) {
    const collc_group *G = &P->groups[g];
    int f = 0;
    while (f < st->nfam && !(st->fam[f].n == G->n && st->fam[f].stride == G->stride)) f++;
    if (f == st->nfam && !create) return MPI_ERR_INTERN;
    if (f == st->nfam) {
      MPI_Comm c;
      int rc = PMPI_Comm_split(st->priv, G->base, (P->spec.rank - G->base) / G->stride, &c);
      if (rc) return rc;
      PMPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
      if ((rc = state_add_family(st, G->n, G->stride, c))) {
        PMPI_Comm_free(&c);
        return rc;
      }
    }
    out[g] = st->fam[f].comm;
  }
  return MPI_SUCCESS;
}

long type_serial(MPI_Datatype t) {
  int ni, na, nd, comb, flag = 0;
  void *v = NULL;
  if (t == MPI_DATATYPE_NULL ||
      PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb) != MPI_SUCCESS ||
      comb == MPI_COMBINER_NAMED)
    return 0;
  pthread_once(&keyvals_once, keyvals_create);
  if (type_keyval == MPI_KEYVAL_INVALID) return -1;
  pthread_mutex_lock(&serial_lock); /* look up and attach as one step */
  long s = -1;
  if (PMPI_Type_get_attr(t, type_keyval, &v, &flag) == MPI_SUCCESS && flag) s = (long)(intptr_t)v;
  else if (PMPI_Type_set_attr(t, type_keyval, (void *)(intptr_t)type_next_serial) == MPI_SUCCESS)
    s = type_next_serial++;
  pthread_mutex_unlock(&serial_lock);
  return s;
}
