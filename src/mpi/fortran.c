/* fortran.c - Fortran entry points (mpif.h, use mpi, and on Open MPI use
 * mpi_f08) for every MPI call collc defines in C, generated from the rows of
 * fortran.h. Open MPI's Fortran library calls PMPI_* directly, so without
 * these a Fortran program never reaches collc; MPICH's calls the C MPI_*
 * names (collc's already), and a program that calls these instead of
 * MPICH's runs each call once all the same.
 *
 * Each entry converts handles (f2c/c2f), the Fortran sentinels
 * (MPI_IN_PLACE, MPI_BOTTOM, MPI_STATUS(ES)_IGNORE: addresses of the MPI
 * library's Fortran common blocks, found at run time with dlsym so one
 * libcollc serves whichever library it was built for) and statuses, calls
 * collc's C function (whose errors go through the communicator's error
 * handler as the C call's do) and stores its result in ierror (optional in
 * mpi_f08: NULL when absent).
 *
 * Symbol forms per row: name, name_, name__, NAME (gfortran, other
 * manglings), the mpi_f08 module's name_f08_ (see F08_ below), and on Open
 * MPI the profiling names Name_f, Name_f08. MPICH's mpi_f08 collectives
 * (name_f08ts_, descriptors) reach collc's C names through MPICH's own code
 * and are not redefined.
 * Not built under SimGrid SMPI (its Fortran support is not MPI's ABI). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include "collc.h"
#include "internal.h"
#include "pinit.h"
#include "fortran.h"

#ifndef SMPI_SHARED_MALLOC

#ifdef MPI_F_STATUS_SIZE
#define FSTATUS MPI_F_STATUS_SIZE
#else
#define FSTATUS ((int)(sizeof(MPI_Status) / sizeof(MPI_Fint)))
#endif
#define FSTACK 16 /* requests and statuses converted on the stack */

/* The Fortran sentinels of the library in this process. Open MPI: the
 * addresses of common blocks (several manglings; libmpi and
 * libmpi_usempif08 each define a copy, the first loaded is the one bound);
 * MPICH: its mpi_f08 objects, and pointers it sets at Fortran init. */
enum { S_IN_PLACE, S_BOTTOM, S_STATUS_IGNORE, S_STATUSES_IGNORE, S_COUNT, S_NAMES = 5 };
static const char *const sentinel_names[S_COUNT][S_NAMES] = {
    {"mpi_fortran_in_place_", "mpi_fortran_in_place", "mpi_fortran_in_place__",
     "MPI_FORTRAN_IN_PLACE", "MPIR_F08_MPI_IN_PLACE"},
    {"mpi_fortran_bottom_", "mpi_fortran_bottom", "mpi_fortran_bottom__", "MPI_FORTRAN_BOTTOM",
     "MPIR_F08_MPI_BOTTOM"},
    {"mpi_fortran_status_ignore_", "mpi_fortran_status_ignore", "mpi_fortran_status_ignore__",
     "MPI_FORTRAN_STATUS_IGNORE", "MPIR_F08_MPI_STATUS_IGNORE_OBJ"},
    {"mpi_fortran_statuses_ignore_", "mpi_fortran_statuses_ignore",
     "mpi_fortran_statuses_ignore__", "MPI_FORTRAN_STATUSES_IGNORE",
     "MPIR_F08_MPI_STATUSES_IGNORE_OBJ"}};
/* MPICH's pointers to its sentinels (mpif.h's, set at Fortran init; the
 * mpi_f08 module's status objects). */
static const char *const sentinel_ptrs[S_COUNT] = {"MPIR_F_MPI_IN_PLACE", "MPIR_F_MPI_BOTTOM",
                                                   "MPI_F08_STATUS_IGNORE",
                                                   "MPI_F08_STATUSES_IGNORE"};
static void *sentinel_addr[S_COUNT][S_NAMES];
static void **sentinel_ptr[S_COUNT];
static int *mpich_need_init;
static void (*mpich_initf)(void);
static pthread_once_t sentinels_once = PTHREAD_ONCE_INIT;

/* Look the sentinels up (once). */
static void sentinels_find(void) {
  for (int s = 0; s < S_COUNT; s++) {
    for (int k = 0; k < S_NAMES; k++) sentinel_addr[s][k] = dlsym(RTLD_DEFAULT, sentinel_names[s][k]);
    if (sentinel_ptrs[s]) sentinel_ptr[s] = dlsym(RTLD_DEFAULT, sentinel_ptrs[s]);
  }
  mpich_need_init = dlsym(RTLD_DEFAULT, "MPIR_F_NeedInit");
  *(void **)&mpich_initf = dlsym(RTLD_DEFAULT, "mpirinitf_");
}

/* Sentinels usable: MPICH's are set by its Fortran initialisation, which
 * its own wrappers run on first use when MPI was initialised from C. */
static void sentinels_ready(void) {
  pthread_once(&sentinels_once, sentinels_find);
  if (mpich_need_init && *mpich_need_init && mpich_initf) mpich_initf(), *mpich_need_init = 0;
}

/* Whether p is Fortran sentinel s. */
static int is_sentinel(const void *p, int s) {
  if (!p) return 0;
  for (int k = 0; k < S_NAMES; k++)
    if (p == sentinel_addr[s][k]) return 1;
  if (sentinel_ptr[s] && p == *sentinel_ptr[s]) return 1;
  if (s == S_STATUS_IGNORE) return p == (const void *)MPI_F_STATUS_IGNORE;
  if (s == S_STATUSES_IGNORE) return p == (const void *)MPI_F_STATUSES_IGNORE;
  return 0;
}

/* A Fortran buffer argument in C: MPI_IN_PLACE and MPI_BOTTOM mapped. */
static void *fbuf(void *b) {
  sentinels_ready();
  if (is_sentinel(b, S_IN_PLACE)) return MPI_IN_PLACE;
  if (is_sentinel(b, S_BOTTOM)) return MPI_BOTTOM;
  return b;
}

/* Whether a status argument is MPI_STATUS_IGNORE (or absent). */
static int fstatus_ignored(const MPI_Fint *s) {
  sentinels_ready();
  return !s || is_sentinel(s, S_STATUS_IGNORE);
}

static int fstatuses_ignored(const MPI_Fint *s) {
  sentinels_ready();
  return !s || is_sentinel(s, S_STATUSES_IGNORE);
}

/* Scalar arguments; a missing one (NULL) becomes invalid, so that the C
 * call reports it. */
static int fint(const MPI_Fint *n) { return n ? (int)*n : -1; }

/* An INTEGER array (recvcounts, displs) as C's int array (NULL stays
 * NULL: the C call reports it). */
_Static_assert(sizeof(MPI_Fint) == sizeof(int), "MPI_Fint arrays are read as int arrays");
static const int *fints(const MPI_Fint *a) { return (const int *)a; }

static MPI_Comm fcomm(const MPI_Fint *c) {
  MPI_Comm h = c ? MPI_Comm_f2c(*c) : MPI_COMM_NULL;
  return h == (MPI_Comm)0 ? MPI_COMM_NULL : h; /* (Open MPI: NULL for an unknown index) */
}

static MPI_Datatype ftype(const MPI_Fint *t) {
  MPI_Datatype h = t ? MPI_Type_f2c(*t) : MPI_DATATYPE_NULL;
  return h == (MPI_Datatype)0 ? MPI_DATATYPE_NULL : h;
}

static MPI_Op fop(const MPI_Fint *o) {
  MPI_Op h = o ? MPI_Op_f2c(*o) : MPI_OP_NULL;
  return h == (MPI_Op)0 ? MPI_OP_NULL : h;
}

static MPI_Info finfo(const MPI_Fint *i) {
  MPI_Info h = i ? MPI_Info_f2c(*i) : MPI_INFO_NULL;
  return h == (MPI_Info)0 ? MPI_INFO_NULL : h;
}

/* A local argument error, through MPI_COMM_WORLD's handler. */
static int ferr(int err) { return collc_raise(MPI_COMM_NULL, err); }

/* *q gets the C request of Fortran handle *r: MPI_SUCCESS or
 * MPI_ERR_REQUEST (missing, or unknown to MPI). */
static int freq(const MPI_Fint *r, MPI_Request *q) {
  if (!r) return MPI_ERR_REQUEST;
  *q = MPI_Request_f2c(*r);
  if (*q == (MPI_Request)0) return MPI_ERR_REQUEST;
  return MPI_SUCCESS;
}

/* Fortran LOGICAL (gfortran and both libraries: 1 is .TRUE.). */
static void fflag(MPI_Fint *f, int v) {
  if (f) *f = v ? 1 : 0;
}

/* n requests and statuses in C: on the stack up to FSTACK, else on the
 * heap. */
typedef struct {
  MPI_Request qs[FSTACK], *q;
  MPI_Status ss[FSTACK], *s; /* MPI_STATUSES_IGNORE when ignored */
  int n;
} flist;

/* Convert the n Fortran requests r[] (and room for statuses unless fs is
 * MPI_STATUSES_IGNORE); MPI_SUCCESS or an error class (nothing to free). */
static int flist_in(flist *l, const MPI_Fint *n, const MPI_Fint *r, const MPI_Fint *fs) {
  int err = MPI_SUCCESS;
  l->n = fint(n);
  if (l->n < 0) return MPI_ERR_COUNT;
  if (l->n > 0 && !r) return MPI_ERR_REQUEST;
  l->q = l->n <= FSTACK ? l->qs : malloc(sizeof *l->q * (size_t)l->n);
  int ignored = fstatuses_ignored(fs); /* (Open MPI's MPI_STATUSES_IGNORE is NULL) */
  l->s = ignored ? MPI_STATUSES_IGNORE
         : l->n <= FSTACK ? l->ss
                          : calloc((size_t)l->n, sizeof *l->s);
  if (!l->q || (!ignored && !l->s)) err = MPI_ERR_NO_MEM;
  for (int i = 0; i < l->n && !err; i++) err = freq(&r[i], &l->q[i]);
  if (err) {
    if (l->q != l->qs) free(l->q);
    if (!ignored && l->s != l->ss) free(l->s);
  }
  return err;
}

/* Write the requests back to r[] (and k statuses, or every one if k < 0,
 * to fs) and free what flist_in took. */
static void flist_out(flist *l, MPI_Fint *r, MPI_Fint *fs, int k) {
  for (int i = 0; i < l->n; i++) r[i] = MPI_Request_c2f(l->q[i]);
  if (l->s != MPI_STATUSES_IGNORE)
    for (int i = 0; i < (k < 0 ? l->n : k); i++) MPI_Status_c2f(&l->s[i], fs + (size_t)i * FSTATUS);
  if (l->q != l->qs) free(l->q);
  if (l->s != l->ss && l->s != MPI_STATUSES_IGNORE) free(l->s);
}

/* A status to fill in: tmp, or MPI_STATUS_IGNORE for an ignored one. */
static MPI_Status *fstatus_in(const MPI_Fint *fs, MPI_Status *tmp) {
  return fstatus_ignored(fs) ? MPI_STATUS_IGNORE : tmp;
}

static void fstatus_out(const MPI_Status *cs, MPI_Fint *fs) {
  if (cs != MPI_STATUS_IGNORE) MPI_Status_c2f(cs, fs);
}

/* The completion calls (rows OWN): each converts and calls collc's C
 * function, so a collc request is always completed by collc, never by the
 * MPI library's call on its placeholder. */
static int fimpl_mpi_start(MPI_Fint *r) {
  MPI_Request q;
  int err = freq(r, &q);
  if (err) return ferr(err);
  err = MPI_Start(&q);
  *r = MPI_Request_c2f(q);
  return err;
}

static int fimpl_mpi_startall(MPI_Fint *n, MPI_Fint *r) {
  flist l;
  int err = flist_in(&l, n, r, NULL);
  if (err) return ferr(err);
  err = MPI_Startall(l.n, l.q);
  flist_out(&l, r, NULL, 0);
  return err;
}

static int fimpl_mpi_wait(MPI_Fint *r, MPI_Fint *s) {
  MPI_Request q;
  MPI_Status tmp = {0}, *cs = fstatus_in(s, &tmp);
  int err = freq(r, &q);
  if (err) return ferr(err);
  err = MPI_Wait(&q, cs);
  *r = MPI_Request_c2f(q);
  fstatus_out(cs, s);
  return err;
}

static int fimpl_mpi_test(MPI_Fint *r, MPI_Fint *flag, MPI_Fint *s) {
  MPI_Request q;
  MPI_Status tmp = {0}, *cs = fstatus_in(s, &tmp);
  int f = 0, err = flag ? freq(r, &q) : MPI_ERR_ARG;
  if (err) return ferr(err);
  err = MPI_Test(&q, &f, cs);
  *r = MPI_Request_c2f(q);
  fflag(flag, f);
  if (f) fstatus_out(cs, s);
  return err;
}

static int fimpl_mpi_waitall(MPI_Fint *n, MPI_Fint *r, MPI_Fint *s) {
  flist l;
  int err = flist_in(&l, n, r, s);
  if (err) return ferr(err);
  err = MPI_Waitall(l.n, l.q, l.s);
  flist_out(&l, r, s, -1);
  return err;
}

static int fimpl_mpi_testall(MPI_Fint *n, MPI_Fint *r, MPI_Fint *flag, MPI_Fint *s) {
  flist l;
  int f = 0, err = flag ? flist_in(&l, n, r, s) : MPI_ERR_ARG;
  if (err) return ferr(err);
  err = MPI_Testall(l.n, l.q, &f, l.s);
  flist_out(&l, r, s, f ? -1 : 0);
  fflag(flag, f);
  return err;
}

/* Fortran index of C index i (1-based; MPI_UNDEFINED kept). */
static MPI_Fint findex(int i) { return i == MPI_UNDEFINED ? MPI_UNDEFINED : i + 1; }

static int fimpl_mpi_waitany(MPI_Fint *n, MPI_Fint *r, MPI_Fint *idx, MPI_Fint *s) {
  flist l;
  MPI_Status tmp = {0}, *cs = fstatus_in(s, &tmp);
  int i = MPI_UNDEFINED, err = idx ? flist_in(&l, n, r, NULL) : MPI_ERR_ARG;
  if (err) return ferr(err);
  err = MPI_Waitany(l.n, l.q, &i, cs);
  flist_out(&l, r, NULL, 0);
  *idx = findex(i);
  fstatus_out(cs, s);
  return err;
}

static int fimpl_mpi_testany(MPI_Fint *n, MPI_Fint *r, MPI_Fint *idx, MPI_Fint *flag,
                             MPI_Fint *s) {
  flist l;
  MPI_Status tmp = {0}, *cs = fstatus_in(s, &tmp);
  int i = MPI_UNDEFINED, f = 0, err = idx && flag ? flist_in(&l, n, r, NULL) : MPI_ERR_ARG;
  if (err) return ferr(err);
  err = MPI_Testany(l.n, l.q, &i, &f, cs);
  flist_out(&l, r, NULL, 0);
  *idx = findex(i);
  fflag(flag, f);
  if (f) fstatus_out(cs, s);
  return err;
}

/* Waitsome and Testsome (C function some): the same conversions. */
static int fsome(int (*some)(int, MPI_Request[], int *, int[], MPI_Status[]), MPI_Fint *n,
                 MPI_Fint *r, MPI_Fint *out, MPI_Fint *idx, MPI_Fint *s) {
  flist l;
  int k = 0, stack[FSTACK], *ci = NULL, err = out && idx ? flist_in(&l, n, r, s) : MPI_ERR_ARG;
  if (err) return ferr(err);
  ci = l.n <= FSTACK ? stack : malloc(sizeof *ci * (size_t)l.n);
  if (!ci) {
    flist_out(&l, r, s, 0);
    return ferr(MPI_ERR_NO_MEM);
  }
  err = some(l.n, l.q, &k, ci, l.s);
  flist_out(&l, r, s, k == MPI_UNDEFINED ? 0 : k);
  *out = k;
  for (int i = 0; i < k && k != MPI_UNDEFINED; i++) idx[i] = ci[i] + 1;
  if (ci != stack) free(ci);
  return err;
}

static int fimpl_mpi_waitsome(MPI_Fint *n, MPI_Fint *r, MPI_Fint *out, MPI_Fint *idx,
                              MPI_Fint *s) {
  return fsome(MPI_Waitsome, n, r, out, idx, s);
}

static int fimpl_mpi_testsome(MPI_Fint *n, MPI_Fint *r, MPI_Fint *out, MPI_Fint *idx,
                              MPI_Fint *s) {
  return fsome(MPI_Testsome, n, r, out, idx, s);
}

static int fimpl_mpi_request_free(MPI_Fint *r) {
  MPI_Request q;
  int err = freq(r, &q);
  if (err) return ferr(err);
  err = MPI_Request_free(&q);
  *r = MPI_Request_c2f(q);
  return err;
}

static int fimpl_mpi_request_get_status(MPI_Fint *r, MPI_Fint *flag, MPI_Fint *s) {
  MPI_Request q;
  MPI_Status tmp = {0}, *cs = fstatus_in(s, &tmp);
  int f = 0, err = flag ? freq(r, &q) : MPI_ERR_ARG;
  if (err) return ferr(err);
  err = MPI_Request_get_status(q, &f, cs);
  fflag(flag, f);
  if (f) fstatus_out(cs, s);
  return err;
}

/* MPI_INIT_THREAD's fallback where the library has no Fortran symbol. */
static int fwd_init_thread(const MPI_Fint *req, MPI_Fint *prov) {
  int p = 0, err = PMPI_Init_thread(NULL, NULL, fint(req), &p);
  if (prov) *prov = p;
  return err;
}

/* Generated: one fimpl_<pfx>_<lower> per CALL/NEWREQ row. */
#define FIMPL_CALL(pfx, lower, params, call) \
  static int fimpl_##pfx##_##lower params { return call; }
#define FIMPL_NEWREQ(pfx, lower, params, call) \
  static int fimpl_##pfx##_##lower params {    \
    MPI_Request q = MPI_REQUEST_NULL;           \
    if (!r) return ferr(MPI_ERR_REQUEST);       \
    int err = call;                             \
    *r = MPI_Request_c2f(q);                    \
    return err;                                 \
  }
#define FIMPL_CALL0 FIMPL_CALL
#define FIMPL_NEWREQ0 FIMPL_NEWREQ
#define FIMPL_OWN(pfx, lower, params, call)
#define FIMPL_FWD(pfx, lower, params, call)
#define GEN_IMPL(kind, pfx, PFX, lower, Mixed, UPPER, params, args, call) \
  FIMPL_##kind(pfx, lower, params, call)
FORTRAN_ROWS(GEN_IMPL)

/* Generated: every symbol form of every row. */
#define PLUS_IERR(...) (__VA_ARGS__, MPI_Fint *ierr)
#define FORM_CALL(sym, lower, pfx, params, args, call) \
  void sym PLUS_IERR params;                           \
  void sym PLUS_IERR params {                          \
    int err_ = fimpl_##pfx##_##lower args;             \
    if (ierr) *ierr = err_;                            \
  }
#define FORM_NEWREQ FORM_CALL
#define FORM_CALL0 FORM_CALL
#define FORM_NEWREQ0 FORM_CALL
#define FORM_OWN FORM_CALL
/* Forwarded: the library's own symbol of the same name (found once), then
 * what collc does after MPI_Init (the hook that ends collc's run however
 * MPI_Finalize is reached, the rule's tuning file; nothing after finalize). */
#define FORM_FWD(sym, lower, pfx, params, args, call)        \
  void sym params;                                           \
  void sym params {                                          \
    static void(*next) params;                               \
    finalize_hook_install();                                 \
    if (!next) *(void **)&next = dlsym(RTLD_NEXT, #sym);     \
    if (next) next args;                                     \
    else {                                                   \
      int err_ = call;                                       \
      if (ierr) *ierr = err_;                                \
    }                                                        \
    collc_after_init();                                      \
  }

/* The mpi_f08 module's names: on Open MPI every row's name_f08_ (buffers
 * by address); on MPICH the requests', the barrier's and init/finalize's
 * only: its collectives with buffers are name_f08ts_ (buffers by
 * descriptor) and call collc's C names, but its mpi_wait_f08_,
 * mpi_start_f08_, mpi_barrier_f08_, mpi_finalize_f08_, ... call PMPI_*
 * directly (MPICH 4.0.2), which must not see collc's requests (and would
 * not reach collc's barrier). */
#define F08_OWN FORM_OWN
#define F08_FWD FORM_FWD
#define F08_CALL0 FORM_CALL
#define F08_NEWREQ0 FORM_CALL
#ifdef OPEN_MPI /* also its profiling names */
#define F08_CALL FORM_CALL
#define F08_NEWREQ FORM_CALL
#define FORMS_OMPI(kind, pfx, PFX, lower, Mixed, UPPER, params, args, call) \
  FORM_##kind(PFX##_##Mixed##_f, lower, pfx, params, args, call)            \
  FORM_##kind(PFX##_##Mixed##_f08, lower, pfx, params, args, call)
#else
#define F08_CALL(sym, lower, pfx, params, args, call)
#define F08_NEWREQ(sym, lower, pfx, params, args, call)
#define FORMS_OMPI(kind, pfx, PFX, lower, Mixed, UPPER, params, args, call)
#endif
#define GEN_FORMS(kind, pfx, PFX, lower, Mixed, UPPER, params, args, call) \
  FORM_##kind(pfx##_##lower, lower, pfx, params, args, call)               \
  FORM_##kind(pfx##_##lower##_, lower, pfx, params, args, call)            \
  FORM_##kind(pfx##_##lower##__, lower, pfx, params, args, call)           \
  FORM_##kind(PFX##_##UPPER, lower, pfx, params, args, call)               \
  F08_##kind(pfx##_##lower##_f08_, lower, pfx, params, args, call)         \
  FORMS_OMPI(kind, pfx, PFX, lower, Mixed, UPPER, params, args, call)
FORTRAN_ROWS(GEN_FORMS)

#endif /* SMPI_SHARED_MALLOC */
