/* request.c - persistent collective requests over PMPI.
 *
 * The user's handle is a real MPI request: an inactive persistent receive
 * from MPI_PROC_NULL, never started. A table maps it to our request, so the
 * completion calls below can tell ours from native ones; MPI itself treats
 * ours as inactive, which gives them empty statuses in mixed lists.
 *
 * Progress: a started plan runs until it must wait for messages, and moves
 * on inside every completion call of this file (all active requests, not
 * only those asked about, so that ranks waiting for different collectives
 * never wait for each other). With nothing of ours active and none of ours
 * in the list, every call is the native one after one counter load. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "request.h"
#include "../exec/exec.h"
#include "../exec/segment.h"

struct preq {
  MPI_Request handle; /* the user's */
  int kind, state, freed, err;
  req_plan rp;      /* REQ_PLAN: what it runs */
  exec_ctx *ctx;    /* REQ_PLAN: where it runs */
  exec_where w;
  dispatch_call d;  /* the call, with our own datatypes */
  MPI_Request nreq; /* REQ_NATIVE: the running native call */
  int algo;
  long long bytes;
  collc_state *st;             /* referenced while we live (REQ_PLAN) */
  /* Nonblocking calls (one-shot): reported once, then destroyed (the
   * user's handle becomes MPI_REQUEST_NULL). */
  int oneshot;
  int started;                 /* its execution has begun (else it waits at its gate) */
  int excl;                    /* runs on the segment or group communicators: in order */
  unsigned ticket, tticket;    /* its places in st's exclusive and tag orders */
  int tagi;                    /* its tag: NB_TAG_BASE + tagi */
  MPI_Comm gcopy[COLLC_MAXF + 1]; /* its group communicators (st's families) */
  /* REQ_AGREE (a nonblocking call waiting for its agreement round, nreq):
   * the selection text and whether the call forced it; its counts,
   * displacements and the round's values (abuf, kept with the object). */
  char text[256];
  int forced;
  int64_t *abuf, *am;
  size_t acap;
  struct preq *fnext;          /* free list */
  struct preq *hnext;          /* hash chain */
  struct preq *anext, *aprev;  /* active list */
  int busy;                    /* a thread runs it to its end outside the lock: others skip it */
};

#define NBUCKETS 1024
static preq *table[NBUCKETS];
static preq *active;
/* Counts read without the lock (relaxed) and changed only under it, so a
 * change is a plain load and store, not a locked read-modify-write. */
atomic_int request_nactive;
static atomic_int nlive;

/* *n += by (under lock). */
static void count_add(atomic_int *n, int by) {
  atomic_store_explicit(n, atomic_load_explicit(n, memory_order_relaxed) + by,
                        memory_order_relaxed);
}
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The lock is taken only when MPI runs with MPI_THREAD_MULTIPLE: with any
 * other level calls never overlap, and the lock would be pure cost. The
 * level is read at the first take (-1 until then; threads that race there
 * store the same value), a relaxed load after that (pthread_once cost 2%
 * of a nonblocking call). */
static atomic_int threaded = -1;

static int threaded_read(void) {
  int level = MPI_THREAD_SINGLE, t;
  t = PMPI_Query_thread(&level) == MPI_SUCCESS && level == MPI_THREAD_MULTIPLE;
  atomic_store_explicit(&threaded, t, memory_order_relaxed);
  return t;
}

int request_threaded(void) {
  int t = atomic_load_explicit(&threaded, memory_order_relaxed);
  return t < 0 ? threaded_read() : t;
}

static void take(void) {
  if (request_threaded()) pthread_mutex_lock(&lock);
}

static void give(void) {
  if (atomic_load_explicit(&threaded, memory_order_relaxed) > 0) pthread_mutex_unlock(&lock);
}

/* Handles of destroyed requests, kept for reuse rather than freed: MPICH
 * 4.0.2 corrupts a freed inactive persistent receive's request object, and
 * the next persistent collective to get that object hangs (its own
 * MPI_Allgather_init of 80 KB, reproduced without collc). Freed at finalize. */
static MPI_Request *spare;
static int nspare, maxspare;

/* A fresh handle: a spare one, or a new inactive PROC_NULL receive. */
static int handle_new(MPI_Request *h) {
  if (nspare > 0) {
    *h = spare[--nspare];
    return MPI_SUCCESS;
  }
  return PMPI_Recv_init(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF, h);
}

/* Keep h for reuse (or free it if the list cannot grow). */
static void handle_drop(MPI_Request *h) {
  if (nspare == maxspare) {
    int n = maxspare ? 2 * maxspare : 16;
    MPI_Request *s = realloc(spare, (size_t)n * sizeof *s);
    if (!s) {
      PMPI_Request_free(h);
      return;
    }
    spare = s, maxspare = n;
  }
  spare[nspare++] = *h;
  *h = MPI_REQUEST_NULL;
}

static unsigned bucket(MPI_Request h) {
  uint64_t k = 0;
  memcpy(&k, &h, sizeof h < sizeof k ? sizeof h : sizeof k);
  return (unsigned)((k * 0x9E3779B97F4A7C15ull) >> 54) % NBUCKETS;
}

void req_lock(void) { take(); }
void req_unlock(void) { give(); }
int req_nactive(void) { return atomic_load_explicit(&request_nactive, memory_order_relaxed); }

int req_state(const preq *r) { return r->state; }
MPI_Comm req_comm(const preq *r) { return r->d.comm; }

preq *req_find(MPI_Request h) {
  if (h == MPI_REQUEST_NULL) return NULL;
  preq *r = table[bucket(h)];
  while (r && r->handle != h) r = r->hnext;
  return r;
}

int req_live(void) { return atomic_load_explicit(&nlive, memory_order_relaxed) > 0; }

static int is_named(MPI_Datatype t) { return t == MPI_DATATYPE_NULL || exec_type_named(t); }

int request_dup_types(dispatch_call *c) {
  MPI_Datatype *t[2] = {&c->bind.sendtype, &c->bind.recvtype};
  if (c->spec.in_place && !c->prestart) c->bind.sendtype = MPI_DATATYPE_NULL; /* (prestart: sends) */
  for (int i = 0; i < 2; i++)
    if (!is_named(*t[i]) && PMPI_Type_dup(*t[i], t[i]) != MPI_SUCCESS) {
      if (i == 1 && !is_named(*t[0])) PMPI_Type_free(t[0]);
      return MPI_ERR_TYPE;
    }
  return MPI_SUCCESS;
}

void request_free_types(dispatch_call *c) {
  if (!is_named(c->bind.sendtype)) PMPI_Type_free(&c->bind.sendtype);
  if (!is_named(c->bind.recvtype)) PMPI_Type_free(&c->bind.recvtype);
}

static void active_add(preq *r) {
  r->aprev = NULL, r->anext = active;
  if (active) active->aprev = r;
  active = r;
  count_add(&request_nactive, 1);
}

static void active_remove(preq *r) {
  if (r->aprev) r->aprev->anext = r->anext;
  else active = r->anext;
  if (r->anext) r->anext->aprev = r->aprev;
  count_add(&request_nactive, -1);
}

/* One-shot requests kept for reuse (with their contexts' buffers). A kept
 * one's plan, types and state are released; what its creators
 * (request_nb, request_nb_done) do not set is reset (destroy). */
#define MAX_FREE 64
static preq *freelist;
static int nfree;

/* Free r and everything it owns (a one-shot request's object and context
 * are kept for the next). Under lock; r is not REQ_RUNNING. */
static void destroy(preq *r) {
  preq **p = &table[bucket(r->handle)];
  while (*p != r) p = &(*p)->hnext;
  *p = r->hnext;
  handle_drop(&r->handle);
  if (!r->oneshot) request_free_plan(&r->rp), request_free_types(&r->d);
  else if (r->rp.lent) r->st->nb_lent--, r->rp.lent = 0; /* (the entry's plan) */
  else plan_free(r->rp.pl); /* (a one-shot one owns no types, groups or segment) */
  r->rp.pl = NULL;
  if (r->st) state_unref(r->st);
  count_add(&nlive, -1);
  if (r->oneshot && nfree < MAX_FREE) { /* (not zeroed whole: that was a third of the cost) */
    r->freed = r->err = r->started = r->busy = 0;
    r->st = NULL;
    r->fnext = freelist;
    freelist = r, nfree++;
    return;
  }
  ctx_free(r->ctx);
  free(r->abuf);
  free(r);
}

void request_free_plan(req_plan *rp) {
  plan_free(rp->pl);
  for (int i = 0; i < rp->ngdup; i++) PMPI_Comm_free(&rp->gdup[i]);
  if (rp->seg && *rp->seg) seg_retire(*rp->seg);
  free(rp->seg);
  rp->pl = NULL, rp->ngdup = 0, rp->seg = NULL, rp->tag = 0; /* (gdup[] is read up to ngdup) */
}

void request_unborrow(collc_state *st, const collc_plan *pl) {
  take();
  for (int b = 0; st->nb_lent > 0 && b < NBUCKETS; b++)
    for (preq *r = table[b]; r; r = r->hnext)
      if (r->st == st && r->rp.lent && r->rp.pl == pl) {
        plan_ref(r->rp.pl);
        r->rp.lent = 0;
        st->nb_lent--;
      }
  give();
}

/* Enter r under its handle (under lock). */
static void table_add(preq *r) {
  unsigned b = bucket(r->handle);
  r->hnext = table[b];
  table[b] = r;
  count_add(&nlive, 1);
}

int request_create(const dispatch_call *d, int kind, req_plan *rp, int algo, long long bytes) {
  preq *r = calloc(1, sizeof *r);
  if (r && kind == REQ_PLAN && !(r->ctx = ctx_new())) free(r), r = NULL;
  take();
  int rc = r ? handle_new(&r->handle) : MPI_ERR_NO_MEM;
  give();
  if (rc) {
    dispatch_call c = *d;
    request_free_types(&c);
    if (rp) request_free_plan(rp);
    if (r) ctx_free(r->ctx);
    free(r);
    return rc;
  }
  r->kind = kind, r->algo = algo, r->bytes = bytes;
  if (rp) r->rp = *rp, *rp = (req_plan){0};
  r->d = *d;
  r->d.request = NULL, r->d.hint = NULL, r->d.ck = NULL;
  r->d.spec.counts = r->d.spec.displs = NULL; /* (the caller's stack; the plan has its own) */
  r->nreq = MPI_REQUEST_NULL;
  if (kind == REQ_PLAN && (r->st = state_get(d->comm, 0)))
    r->w = (exec_where){r->st->priv, r->rp.tag, r->rp.gdup, r->rp.seg, NULL};
  take();
  if (r->st) state_ref(r->st); /* (under the lock, as every unref) */
  table_add(r);
  give();
  *d->request = r->handle;
  return MPI_SUCCESS;
}

static void try_start(preq *r);

/* A one-shot request object: a kept one, or a new one (NULL: no memory),
 * with what no one-shot request changes set: no call-cache key, hint,
 * request pointers, own datatypes or native request. */
static preq *preq_new(void) {
  preq *r = freelist;
  if (r) {
    freelist = r->fnext, nfree--;
    r->fnext = NULL;
    return r;
  }
  if (!(r = calloc(1, sizeof *r))) return NULL;
  r->oneshot = 1;
  r->d.bind.sendtype = r->d.bind.recvtype = MPI_DATATYPE_NULL;
  r->nreq = MPI_REQUEST_NULL;
  return r;
}


int request_nb(const dispatch_call *d, collc_state *st, const call_entry *e, int lent) {
  int rc = MPI_SUCCESS;
  take(); /* (other threads' progress completes the idup) */
  if (st->priv == MPI_COMM_NULL && st->priv_req == MPI_REQUEST_NULL) /* all ranks, this call */
    rc = PMPI_Comm_idup(d->comm, &st->priv_new, &st->priv_req);
  if (!rc && !st->nb_busy && !(st->nb_busy = calloc(2 * NB_TAGS, 1))) rc = MPI_ERR_NO_MEM;
  preq *r = rc ? NULL : preq_new();
  if (r && !r->ctx && !(r->ctx = ctx_new())) rc = MPI_ERR_NO_MEM;
  if (!rc) rc = r ? handle_new(&r->handle) : MPI_ERR_NO_MEM;
  if (rc) {
    if (r) r->fnext = freelist, freelist = r, nfree++;
    give();
    return rc;
  }
  collc_plan *pl = e->plan;
  int ng = plan_prog(pl)->ngroups, excl = e->excl, algo = e->algo;
  long long bytes = e->bytes;
  for (int g = 0; g < ng && g <= COLLC_MAXF; g++) r->gcopy[g] = e->gcomm[g];
  if (lent) st->nb_lent++; /* (a plain count: the lock guards it) */
  else plan_ref(pl);
  r->rp.lent = lent;
  r->kind = REQ_PLAN, r->excl = excl, r->algo = algo, r->bytes = bytes;
  r->rp.pl = pl;
  r->d.spec.coll = d->spec.coll; /* (only what a one-shot run reads: d may be partial) */
  r->d.src = d->src;
  r->d.sendbuf = d->sendbuf, r->d.recvbuf = d->recvbuf, r->d.comm = d->comm;
  state_ref(r->st = st);
  r->tagi = (int)(st->nb_seq++ % NB_TAGS);
  r->tticket = st->nb_busy[r->tagi]++; /* (executions with one tag run in call order) */
  if (excl) r->ticket = st->excl_next++;
  r->w = (exec_where){MPI_COMM_NULL, NB_TAG_BASE + r->tagi, r->gcopy, &st->seg, NULL};
  r->state = REQ_RUNNING;
  active_add(r);
  try_start(r); /* (first: the messages leave before the bookkeeping) */
  table_add(r);
  stats_add(d->spec.coll + COLLC_COLL_COUNT, algo, d->src, bytes);
  *d->ireq = r->handle;
  give();
  return MPI_SUCCESS;
}

int request_nb_done(const dispatch_call *d, int algo) {
  take();
  preq *r = preq_new();
  int rc = r ? handle_new(&r->handle) : MPI_ERR_NO_MEM;
  if (rc) {
    if (r) r->fnext = freelist, freelist = r, nfree++;
    give();
    return rc;
  }
  r->kind = REQ_EMPTY, r->algo = algo, r->state = REQ_DONE;
  r->d.comm = d->comm;
  table_add(r);
  stats_add(d->spec.coll + COLLC_COLL_COUNT, algo, d->src, 0);
  *d->ireq = r->handle;
  give();
  return MPI_SUCCESS;
}

/* r's own copies of d's count vectors (gatherv, scatterv: vown's p + 3),
 * displacements and room for the round (abuf, grown, kept), d's spec
 * pointed at them. MPI_SUCCESS or MPI_ERR_NO_MEM. */
static int agree_copy(preq *r, const dispatch_call *d) {
  size_t n = (size_t)spec_vec_len(&d->spec), nc = d->vown ? (size_t)d->spec.p + 3 : n;
  size_t nd = d->spec.displs ? n : 0, need = nc + nd + dispatch_agree_values(d);
  if (need > r->acap) {
    int64_t *b = realloc(r->abuf, need * sizeof *b);
    if (!b) return MPI_ERR_NO_MEM;
    r->abuf = b, r->acap = need;
  }
  memcpy(r->abuf, d->vown ? d->vown : d->spec.counts, nc * sizeof *r->abuf);
  r->d.spec.counts = r->abuf;
  r->d.vown = d->vown ? r->abuf : NULL;
  if (nd) memcpy(r->abuf + nc, d->spec.displs, nd * sizeof *r->abuf), r->d.spec.displs = r->abuf + nc;
  r->am = r->abuf + nc + nd;
  return MPI_SUCCESS;
}

int request_nb_agree(const dispatch_call *d, collc_state *st, const char *text, int forced) {
  int rc = MPI_SUCCESS;
  take();
  if (st->priv == MPI_COMM_NULL && st->priv_req == MPI_REQUEST_NULL) /* all ranks, this call */
    rc = PMPI_Comm_idup(d->comm, &st->priv_new, &st->priv_req);
  if (!rc && !st->nb_busy && !(st->nb_busy = calloc(2 * NB_TAGS, 1))) rc = MPI_ERR_NO_MEM;
  preq *r = rc ? NULL : preq_new();
  if (r && !r->ctx && !(r->ctx = ctx_new())) rc = MPI_ERR_NO_MEM;
  if (!rc && !r) rc = MPI_ERR_NO_MEM;
  if (!rc) {
    r->d = *d, r->d.ck = NULL, r->d.hint = NULL, r->d.request = NULL, r->d.ireq = NULL;
    r->d.prestart = NULL;
    rc = agree_copy(r, d);
  }
  if (!rc && (rc = request_dup_types(&r->d)) == MPI_SUCCESS &&
      (rc = dispatch_agree_start(&r->d, r->am, &r->nreq)) != MPI_SUCCESS)
    request_free_types(&r->d);
  if (!rc && (rc = handle_new(&r->handle)) != MPI_SUCCESS) /* (the round runs on: erroneous) */
    request_free_types(&r->d);
  if (rc) {
    if (r) r->fnext = freelist, freelist = r, nfree++;
    give();
    return rc;
  }
  snprintf(r->text, sizeof r->text, "%s", text);
  r->forced = forced;
  r->kind = REQ_AGREE, r->excl = 0, r->algo = 0, r->bytes = 0, r->rp.lent = 0, r->rp.pl = NULL;
  state_ref(r->st = st);
  r->tagi = (int)(st->nb_seq++ % NB_TAGS); /* (its place in the tag order: taken now) */
  r->tticket = st->nb_busy[r->tagi]++;
  r->w = (exec_where){MPI_COMM_NULL, NB_TAG_BASE + r->tagi, r->gcopy, &st->seg, NULL};
  r->state = REQ_RUNNING;
  active_add(r);
  table_add(r);
  *d->ireq = r->handle;
  give();
  return MPI_SUCCESS;
}

void request_quiesce(collc_state *st) {
  take();
  while (st->excl_done != st->excl_next) {
    req_progress();
    give();
    sched_yield();
    take();
  }
  give();
}

/* Start r (under lock). An error starts nothing: r stays REQ_IDLE. */
static int start(preq *r) {
  int done = 1, rc = MPI_SUCCESS;
  if (r->state != REQ_IDLE) return MPI_ERR_REQUEST;
  if (r->kind == REQ_PLAN && r->d.prestart) rc = r->d.prestart(&r->d);
  if (r->kind == REQ_PLAN && !rc)
    rc = ctx_start(r->ctx, r->rp.pl, &r->w, r->d.sendbuf, r->d.recvbuf, &done);
  else if (r->kind == REQ_NATIVE) done = 0, rc = r->d.inative(&r->d, &r->nreq);
  if (rc) {
    PMPI_Error_class(rc, &rc);
    return rc;
  }
  stats_add(r->d.spec.coll, r->algo, r->d.src, r->bytes);
  r->err = MPI_SUCCESS;
  r->state = done ? REQ_DONE : REQ_RUNNING;
  if (!done) active_add(r);
  return MPI_SUCCESS;
}

/* r has ended with code rc (under lock). */
static void ended(preq *r, int rc) {
  if (rc) PMPI_Error_class(rc, &r->err);
  r->state = REQ_DONE;
  active_remove(r);
  if (r->oneshot && r->kind != REQ_EMPTY) { /* later executions may start now */
    r->st->nb_busy[NB_TAGS + r->tagi]++;
    if (r->excl) r->st->excl_done++;
  }
  if (r->freed) destroy(r);
}

/* Whether st's private communicator is there (completing the idup that a
 * nonblocking call started, under lock). */
static int priv_ready(collc_state *st) {
  int flag = 0;
  if (st->priv != MPI_COMM_NULL) return 1;
  if (st->priv_req == MPI_REQUEST_NULL || PMPI_Test(&st->priv_req, &flag, MPI_STATUS_IGNORE) ||
      !flag)
    return 0;
  st->priv = st->priv_new;
  PMPI_Comm_set_errhandler(st->priv, MPI_ERRORS_RETURN);
  return 1;
}

void request_priv_wait(collc_state *st) {
  take();
  while (st->priv == MPI_COMM_NULL && st->priv_req != MPI_REQUEST_NULL && !priv_ready(st)) {
    req_progress();
    give();
    sched_yield();
    take();
  }
  give();
}

/* Begin one-shot r's execution if its gate is open (under lock): the
 * private communicator is there, every earlier execution with its tag has
 * ended, and (exclusive) every earlier exclusive one. */
static void try_start(preq *r) {
  collc_state *st = r->st;
  int done = 0;
  if (!priv_ready(st) || (unsigned char)r->tticket != st->nb_busy[NB_TAGS + r->tagi] ||
      (r->excl && st->excl_done != r->ticket))
    return;
  r->started = 1;
  r->w.comm = st->priv;
  int rc = ctx_start(r->ctx, r->rp.pl, &r->w, r->d.sendbuf, r->d.recvbuf, &done);
  if (done || rc) ended(r, rc);
}

/* REQ_AGREE r's round has completed (under lock): its plan compiled
 * (nb_agreed) and started if its gate is open; an error ends r. */
static void agreed(preq *r) {
  call_entry e = {0};
  dispatch_agree_end(&r->d, r->am);
  int rc = nb_agreed(&r->d, r->st, r->text, r->forced, &e);
  request_free_types(&r->d); /* (the plan holds its own) */
  free((void *)e.gcomm);     /* (none: such plans have no groups) */
  if (rc) {
    ended(r, rc);
    return;
  }
  r->kind = REQ_PLAN, r->rp.pl = e.plan, r->rp.lent = 0;
  r->algo = e.algo, r->bytes = e.bytes;
  stats_add(r->d.spec.coll + COLLC_COLL_COUNT, r->algo, r->d.src, r->bytes);
  try_start(r);
}

/* Move r on without blocking (under lock). */
static void advance(preq *r) {
  int done = 0, rc;
  if (r->kind == REQ_AGREE) {
    if ((rc = PMPI_Test(&r->nreq, &done, MPI_STATUS_IGNORE))) ended(r, rc);
    else if (done) agreed(r);
    return;
  }
  if (r->oneshot && r->kind == REQ_PLAN && !r->started) {
    try_start(r);
    return;
  }
  if (r->kind == REQ_PLAN) rc = ctx_test(r->ctx, &done);
  else rc = PMPI_Test(&r->nreq, &done, MPI_STATUS_IGNORE);
  if (done || rc) ended(r, rc);
}

void req_progress(void) {
  for (preq *r = active, *next; r; r = next) {
    next = r->anext;
    if (!r->busy) advance(r);
  }
}

/* Run r to its end blocking in MPI, outside the lock (other threads skip
 * it meanwhile); under lock on entry and return. */
static void run_alone(preq *r) {
  r->busy = 1;
  give();
  int rc = r->kind == REQ_PLAN ? ctx_wait(r->ctx) : PMPI_Wait(&r->nreq, MPI_STATUS_IGNORE);
  take();
  r->busy = 0;
  ended(r, rc);
}

void req_finish(preq *r) {
  while (r->state == REQ_RUNNING) {
    if (req_nactive() == 1 &&
        (r->kind == REQ_NATIVE || (r->kind == REQ_PLAN && (!r->oneshot || r->started)))) {
      run_alone(r);
      return;
    }
    req_progress();
    if (r->state != REQ_RUNNING) return;
    give();
    sched_yield();
    take();
  }
}

void req_empty_status(MPI_Status *st) {
  if (st == MPI_STATUS_IGNORE) return; /* (the MPI standard's empty status) */
  st->MPI_SOURCE = MPI_ANY_SOURCE, st->MPI_TAG = MPI_ANY_TAG, st->MPI_ERROR = MPI_SUCCESS;
  PMPI_Status_set_elements(st, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(st, 0);
}

int req_report(preq *r, MPI_Status *st, MPI_Request *h) {
  int err = r->err;
  req_empty_status(st);
  r->state = REQ_IDLE;
  r->err = MPI_SUCCESS;
  if (r->oneshot) { /* a nonblocking call's request ends here */
    destroy(r);
    *h = MPI_REQUEST_NULL;
  }
  return err;
}

int req_raise(MPI_Comm comm, int err) { return err ? collc_raise(comm, err) : MPI_SUCCESS; }

void req_free(preq *r) {
  if (r->state == REQ_RUNNING) r->freed = 1; /* freed when it ends */
  else destroy(r);
}

void request_finalize(void) {
  take();
  while (active) { /* erroneous program: finalize with a collective running */
    preq *r = active;
    active_remove(r);
    if (r->kind == REQ_PLAN) ctx_abort(r->ctx);
    r->state = REQ_IDLE;
  }
  for (int b = 0; b < NBUCKETS; b++)
    while (table[b]) destroy(table[b]);
  while (freelist) {
    preq *r = freelist;
    freelist = r->fnext;
    ctx_free(r->ctx);
    free(r->abuf);
    free(r);
  }
  nfree = 0;
  while (nspare > 0) PMPI_Request_free(&spare[--nspare]);
  free(spare);
  spare = NULL, maxspare = 0;
  give();
}

/* Move every running request on (takes the lock). */
static void progress_all(void) {
  take();
  req_progress();
  give();
}

int request_run(exec_ctx *c, collc_plan *pl, const exec_where *w, const void *sendbuf,
                void *recvbuf) {
  if (!request_busy()) return ctx_execute(c, pl, w, sendbuf, recvbuf);
  int done = 0, rc = ctx_start(c, pl, w, sendbuf, recvbuf, &done);
  while (!rc && !done) {
    progress_all();
    if (!(rc = ctx_test(c, &done)) && !done) sched_yield();
  }
  return rc;
}

int request_wait_native(MPI_Request *q) {
  int rc = MPI_SUCCESS, flag = 0;
  while (!rc && !flag) {
    progress_all();
    if (!(rc = PMPI_Test(q, &flag, MPI_STATUS_IGNORE)) && !flag) sched_yield();
  }
  return rc;
}

/* Always the blocking call: whether requests of ours run differs between
 * ranks, and MPI never matches a blocking collective with a nonblocking one
 * (so the native call cannot move our requests on meanwhile). */
int request_native(const dispatch_call *d) { return d->native(d); }

int MPI_Start(MPI_Request *h) {
  if (!req_live() || !h) return PMPI_Start(h);
  take();
  preq *r = req_find(*h);
  int rc = r ? start(r) : MPI_SUCCESS;
  MPI_Comm c = r ? r->d.comm : MPI_COMM_NULL;
  give();
  return r ? req_raise(c, rc) : PMPI_Start(h);
}

int MPI_Startall(int n, MPI_Request h[]) {
  if (!req_live() || n < 0 || (n > 0 && !h)) return PMPI_Startall(n, h);
  for (int i = 0; i < n; i++) {
    int rc = MPI_Start(&h[i]);
    if (rc) return rc;
  }
  return MPI_SUCCESS;
}
