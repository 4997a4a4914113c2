/* internal.h - the MPI layer: per-communicator state, plan cache, stats. */
#ifndef COLLC_MPI_INTERNAL_H
#define COLLC_MPI_INTERNAL_H

#include <mpi.h>
#include "../algo/algo.h"
#include "../exec/exec.h"

#define STATE_MAX_FAMILIES 64
#define STATE_MAX_PLANS 16 /* cached plans per communicator (LRU) */

/* What identifies a plan on a communicator. */
typedef struct {
  int coll, in_place;
  int scount, rcount;
  MPI_Datatype stype, rtype;
  long sserial, rserial; /* datatype identities (0 for predefined types) */
  char algo[256];        /* the selection text (unresolved, e.g. "torus:d=2") */
} plan_key;

/* Group communicators of one family: the p/n groups {base + j*stride}. */
typedef struct {
  int n, stride;
  MPI_Comm comm; /* this rank's group */
} family;

typedef struct {
  MPI_Comm priv; /* private duplicate for our messages; MPI_COMM_NULL until used */
  family fam[STATE_MAX_FAMILIES];
  int nfam;
  int torus_d; /* > 0 if made by collc_comm_factorize */
  int torus_dims[COLLC_MAXF];
  struct {
    plan_key key;
    collc_plan *plan;
    int algo; /* registry index of the algorithm the plan runs */
  } cache[STATE_MAX_PLANS];
  int ncache; /* most recently used first */
} collc_state;

/* The state cached on comm; created (empty, local) if create. NULL if none
 * or on failure. */
collc_state *state_get(MPI_Comm comm, int create);
/* Create st's private communicator if missing (collective over comm). */
int state_priv(collc_state *st, MPI_Comm comm);
/* Register an existing group communicator; takes ownership. */
int state_add_family(collc_state *st, int n, int stride, MPI_Comm gcomm);
/* Communicators for P's groups into out[] (collective: splits missing
 * families in program order, identical on every rank). */
int state_group_comms(collc_state *st, const collc_prog *P, MPI_Comm *out);
/* Cached plan for key (moved to the front) and its algorithm, or NULL. */
collc_plan *state_lookup(collc_state *st, const plan_key *key, int *algo);
/* Record the registry index of cached plan pl. */
void state_set_algo(collc_state *st, const collc_plan *pl, int algo);
/* Insert plan under key, evicting the least recently used. */
void state_insert(collc_state *st, const plan_key *key, collc_plan *plan);
/* Identity of a datatype for plan keys: 0 for predefined types, else a
 * serial number attached to the type as an attribute on first sight. */
long type_serial(MPI_Datatype t);
/* Free all state attached to comm (used at finalize for COMM_WORLD). */
void state_release(MPI_Comm comm);
/* Free the attribute keys (at finalize, after the last state_release). */
void state_free_keyvals(void);

/* Statistics (stats.c). */
void stats_add(int coll, int algo, long long bytes);
void stats_print(void);

/* Report err through comm's error handler (MPI_COMM_WORLD's if comm is
 * null) and return it. */
int collc_raise(MPI_Comm comm, int err);
/* One warning per process and key (a short fixed string), on world rank 0. */
void collc_warn_once(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Default algorithm text for spec (select.c). */
const char *select_default(const collc_spec *s);

#endif
