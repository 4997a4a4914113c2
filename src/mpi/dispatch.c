/* dispatch.c - run a compiled collective: decide, bind, execute, count.
 * Shared by every collective's entry point.
 *
 * A decision (which algorithm, or native) depends only on values that are
 * the same on every rank, so all ranks find it cached or all decide anew;
 * deciding is collective (agreement, group communicators). A binding (the
 * plan for this rank's datatypes and counts) is local: a miss compiles and
 * binds without talking to other ranks. MPI allows ranks to type the same
 * data differently, so bindings may hit on one rank and miss on another. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "dispatch.h"
#include "args.h"
#include "../plan/config.h"
#include "../ir/wisdom.h"
#include "../exec/segment.h"
#include "../exec/memclass.h"
#include "../exec/backend_cuda.h"

/* The program of choice c for spec s: from the wisdom directory if one is
 * set and holds it (a damaged or stale file: one warning, compiled again),
 * else compiled (and saved there). NULL with why on failure. */
collc_prog *dispatch_compile(const collc_spec *s, const collc_choice *c, char *why, size_t wlen) {
  const char *dir = config_get()->wisdom;
  char algo[96], bad[1200];
  if (!*dir) return barrier_test_break(s, choice_compile(s, c, why, wlen));
  const char *layout = s->layout ? s->layout->desc : "flat";
  wisdom_key k = {*s, choice_format(c, algo, sizeof algo), layout};
  collc_prog *P = wisdom_load(dir, &k, bad, sizeof bad);
  stats_wisdom(P ? 1 : 0, 0, P || !bad[0] ? 0 : 1);
  if (P) return P;
  if (bad[0]) collc_warn_here("wisdom-bad", "COLLC_WISDOM: ignoring %s; compiling again", bad);
  if ((P = choice_compile(s, c, why, wlen)) && wisdom_save(dir, P, layout))
    collc_warn_here("wisdom-save", "COLLC_WISDOM: cannot write into %s", dir);
  else if (P)
    stats_wisdom(0, 1, 0);
  return P;
}

/* Global AND of ok over comm (0 if the reduction itself fails). */
static int agree(MPI_Comm comm, int ok) {
  int all = 0;
  MPI_Request q; /* (nonblocking on every rank, as MPI matches it; our requests move on
                    while we wait, since peers may need them first) */
#ifdef SMPI_SHARED_MALLOC /* (SMPI: a polling loop never lets simulated time advance) */
  (void)q;
  return PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm) == MPI_SUCCESS ? all : 0;
#endif
  if (PMPI_Iallreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm, &q) != MPI_SUCCESS) return 0;
  return request_wait_native(&q) == MPI_SUCCESS ? all : 0;
}

/* The selection text for call d, its source into d->src: forced, else
 * the info hint, else COLLC_<COLL>, else the default rule: its rows, else
 * (large communicators) the simulator's pick, which is collective (st: d's
 * state, NULL if none). */
static const char *selection(dispatch_call *d, const char *forced, collc_state *st) {
  const char *env = config_get()->algorithm[d->spec.coll], *t;
  if (forced) return (d->src = SRC_CALL), forced;
  if (d->hint) d->src = SRC_INFO, t = d->hint;
  else if (*env) d->src = SRC_ENV, t = env;
  else if (select_simulates(&d->spec)) d->src = SRC_SIM, t = select_simulated(&d->spec, d->comm, st);
  else t = select_default(&d->spec, &d->src);
  return dispatch_guarded(d, t);
}

const char *dispatch_guarded(dispatch_call *d, const char *text) {
  const char *g = strcmp(text, "native") ? NULL
                                          : guard_text(&d->spec, d->bind.recvtype, d->bind.op);
  if (!g && !strcmp(text, "native") && (d->ireq || d->request)) g = guard_nonblocking(&d->spec);
  if (g) d->src = SRC_GUARD;
  return g ? g : text;
}

/* Parse and resolve text for d into c. An unusable forced text is
 * MPI_ERR_ARG; an unusable environment text warns once and falls back to
 * the default rule (and that to native). Returns 0 or MPI_ERR_ARG. */
int dispatch_choose(dispatch_call *d, const char *text, int forced, collc_choice *c) {
  char why[200] = "text too long";
  d->fell_back = 0;
  if (strlen(text) < sizeof((decision_key *)0)->algo &&
      choice_parse(d->spec.coll, text, c, why, sizeof why) == 0 &&
      choice_resolve(&d->spec, c, why, sizeof why) == 0)
    return 0;
  if (forced) return MPI_ERR_ARG;
  d->fell_back = 1;
  const char *env = config_get()->algorithm[d->spec.coll];
  if (d->hint || *env)
    collc_warn_once(text, "%s=%s: %s; using the default rule",
                    d->hint ? "info collc_algorithm" : config_get()->env_name[d->spec.coll], text,
                    why);
  else /* the simulator's pick for another call of its size class */
    collc_warn_once(text, "default rule: %s does not fit (%s); using native", text, why);
  text = dispatch_guarded(d, select_default(&d->spec, &d->src));
  if (choice_parse(d->spec.coll, text, c, why, sizeof why) ||
      choice_resolve(&d->spec, c, why, sizeof why))
    return choice_parse(d->spec.coll, "native", c, why, sizeof why);
  return 0;
}

/* The rank-independent key of call d (the selection text travels apart). */
void dispatch_decision_key(const dispatch_call *d, decision_key *k) {
  const collc_spec *s = &d->spec;
  k->coll = s->coll, k->root = s->root;
  /* reduce, gather, scatter: the root's own business; else the caller's MPI_IN_PLACE, the same on every rank
   * (allgatherv: a rank whose send typing is not its block's runs in place, vcoll.c) */
  k->in_place = coll_desc_of(s->coll)->in_place_at_root ? 0
                : coll_desc_of(s->coll)->always_in_place ? 1 : d->sendbuf == MPI_IN_PLACE;
  k->commutative = s->commutative;
  k->bytes = select_bytes(s);
  k->ext = k->text = 0; /* reductions: the type's (the same on every rank), which sizes the segment */
  if (coll_reduces(s->coll)) {
    MPI_Aint lb, ext, tlb, text;
    PMPI_Type_get_extent(d->bind.recvtype, &lb, &ext);
    PMPI_Type_get_true_extent(d->bind.recvtype, &tlb, &text);
    k->ext = (long long)ext, k->text = (long long)text;
  }
  k->algo[0] = 0;
  k->chash = s->vall ? spec_sends_hash(s) /* (agreed: what every rank holds alike) */
             : coll_counts_shared(s) ? spec_counts_hash(s) : 0; /* (else only this rank's) */
  k->agreed = s->agreed;
}

/* This rank's binding of call d. */
void dispatch_binding_key(const dispatch_call *d, binding_key *k) {
  k->in_place = d->spec.in_place;
  k->scount = d->spec.in_place ? 0 : d->bind.sendcount;
  k->stype = d->spec.in_place ? MPI_DATATYPE_NULL : d->bind.sendtype;
  k->rcount = d->bind.recvcount, k->rtype = d->bind.recvtype;
  k->count = d->spec.count, k->op = d->bind.op;
  k->sserial = type_serial(k->stype);
  k->rserial = type_serial(k->rtype);
  k->chash = binding_chash(&d->spec);
}

/* The plan of compiled program P (taken over) for d's binding, in batches
 * under COLLC_EXEC=batch or where a GPU exists (the CUDA backend runs them). */
static int make_plan(const dispatch_call *d, collc_prog *P, collc_plan **pl) {
  exec_bind b = d->bind;
  b.batch = config_get()->batch || memclass_gpu(); /* (the CUDA backend runs batches) */
  int rc = plan_create(P, &b, pl);
  if (!rc && b.batch) stats_batch(plan_batches(*pl) != NULL);
  return rc;
}

/* Bind the compiled program P for d (local; P taken over) into *pl, with
 * its group communicators into *gcomm (malloc'd; NULL without groups).
 * With create, missing group communicators are split off (collective). */
static int bind(const dispatch_call *d, collc_state *st, collc_prog *P, int create,
                collc_plan **pl, MPI_Comm **gcomm) {
  MPI_Comm g[COLLC_MAXF + 1];
  int n = P->ngroups, rc = n <= COLLC_MAXF ? state_group_comms(st, P, g, create) : MPI_ERR_INTERN;
  *pl = NULL, *gcomm = NULL;
  if (!rc && n && !(*gcomm = malloc((size_t)n * sizeof **gcomm))) rc = MPI_ERR_NO_MEM;
  if (rc) {
    prog_free(P);
    return rc;
  }
  if (n) memcpy(*gcomm, g, (size_t)n * sizeof g[0]);
  if ((rc = make_plan(d, P, pl))) free(*gcomm), *gcomm = NULL;
  return rc;
}

/* Whether choice c reads other ranks' memory in place (shm:direct=): the
 * node's permission is probed then (the same on every rank). */
static int reads_in_place(const collc_choice *c) {
  return algo_registry[c->algo]->needs == ALGO_ONE_NODE && c->direct >= 0;
}

/* Whether choice c may use the node segment (the same on every rank, so
 * the agreement below is made by all ranks or none). */
int dispatch_uses_segment(const collc_choice *c) {
  return algo_registry[c->algo]->needs != ALGO_ANY;
}

/* Segment bytes for program P of call d, agreed over comm (collective):
 * the most any rank needs; -1 if a reduction's ranks space the segment's
 * units differently (typed differently, which MPI does not allow). Other
 * collectives store packed bytes: their offsets are bytes on every rank
 * (bcast's elements may differ in size between ranks). */
static long long shm_need(const dispatch_call *d, const collc_prog *P) {
  long long v[3] = {0, LLONG_MIN, LLONG_MIN}, all[3] = {0, 0, 0}; /* (no segment: no say) */
  if (P && P->shm_units && coll_reduces(d->spec.coll)) {
    v[1] = (long long)plan_shm_unit(&d->bind), v[2] = -v[1];
  }
  if (P && P->shm_units) v[0] = (long long)plan_shm_bytes(P, &d->bind);
  if (PMPI_Allreduce(v, all, 3, MPI_LONG_LONG, MPI_MAX, d->comm)) return -1;
  if (v[1] != LLONG_MIN && (all[1] != v[1] || -all[2] != v[1])) return -1;
  return all[0];
}

/* Decide call d anew under key dk (collective): the choice, and on every
 * rank a bound plan, or native on every rank. *err gets MPI_ERR_ARG for an
 * unusable forced text; NULL means "native, uncached". */
static decision *decide(dispatch_call *d, const char *text, int forced,
                        const decision_key *dk, const binding_key *bk, int *err) {
  collc_choice c;
  char why[200] = "";
  collc_state *st = state_get(d->comm, 1);
  if (!agree(d->comm, st != NULL)) return (*err = 0), NULL;
  request_quiesce(st); /* (the segment and groups may change) */
  if ((*err = dispatch_choose(d, text, forced, &c))) return NULL;
  decision *D = cache_add_decision(st, dk, text);
  if (!agree(d->comm, D != NULL)) return NULL; /* (an orphan D stays cached as native) */
  D->choice = c, D->fell_back = d->fell_back, D->src = d->src;
  if (choice_is_native(&c)) return D;
  collc_prog *P = dispatch_compile(&d->spec, &c, why, sizeof why);
  collc_plan *pl = NULL;
  MPI_Comm *gcomm = NULL;
  int ok = agree(d->comm, P != NULL) && state_priv(st, d->comm) == MPI_SUCCESS;
  long long shm = ok && dispatch_uses_segment(&c) ? shm_need(d, P) : 0;
  if (ok && reads_in_place(&c)) state_cma(st); /* (collective, once per communicator) */
  if (shm < 0) snprintf(why, sizeof why, "ranks type the segment differently");
  if (ok) ok = agree(d->comm, shm >= 0 && state_segment(st, (size_t)shm) == MPI_SUCCESS);
  if (ok) ok = bind(d, st, P, 1, &pl, &gcomm) == MPI_SUCCESS;
  else prog_free(P);
  if (!agree(d->comm, ok)) {
    collc_warn_once(text, "cannot build %s (%s); using native", text,
                    why[0] ? why : "plan creation failed");
    plan_free(pl);
    free(gcomm);
    return D; /* native from now on */
  }
  D->algo = c.algo;
  if (bk->sserial >= 0 && bk->rserial >= 0) cache_add_plan(st, D, bk, pl, gcomm);
  else plan_free(pl), free(gcomm); /* cannot be keyed: bound again per call */
  return D;
}

/* The binding of decision D for this rank's typing: cached, or compiled
 * and bound now (local). A binding that cannot be cached (types without
 * identity) is returned in *tmp, to be freed by the caller. */
int dispatch_plan_of(const dispatch_call *d, decision *D, const binding_key *bk, binding **B,
                   binding *tmp) {
  char why[200];
  collc_plan *pl;
  MPI_Comm *gcomm;
  int cacheable = bk->sserial >= 0 && bk->rserial >= 0;
  const int64_t *c = spec_own_vec(&d->spec, d->spec.counts), *dp = spec_own_vec(&d->spec, d->spec.displs);
  if ((*B = cache_plan(D, bk)) && !plan_counts_are((*B)->plan, c, dp))
    cacheable = 0, *B = NULL; /* counts of another call with the same hash: bound per call */
  if (*B) return MPI_SUCCESS;
  collc_prog *P = dispatch_compile(&d->spec, &D->choice, why, sizeof why);
  collc_state *st = state_get(d->comm, 0);
  int rc = P ? bind(d, st, P, 0, &pl, &gcomm) : MPI_ERR_NO_MEM;
  if (rc) return rc;
  if (cacheable) {
    *B = cache_add_plan(st, D, bk, pl, gcomm);
    return MPI_SUCCESS;
  }
  *tmp = (binding){*bk, pl, gcomm};
  *B = tmp;
  return MPI_SUCCESS;
}

static void remember(const dispatch_call *d, collc_state *st, call_entry e);

int dispatch_persist(dispatch_call *d, const persist_args *pa, char *buf, int len) {
  int flag = 0, vlen = 0;
  if (!pa) return MPI_SUCCESS;
  if (!pa->request) return MPI_ERR_ARG;
  *pa->request = MPI_REQUEST_NULL;
  if (pa->oneshot) return (d->ireq = pa->request), MPI_SUCCESS;
  d->request = pa->request;
  if (pa->info == MPI_INFO_NULL) return MPI_SUCCESS;
  if (PMPI_Info_get_valuelen(pa->info, "collc_algorithm", &vlen, &flag)) return MPI_ERR_INFO;
  if (!flag) return MPI_SUCCESS;
  if (vlen >= len) { /* cannot name an algorithm: ignored, as a bad value */
    collc_warn_once("info-long", "info collc_algorithm: value too long; using the default rule");
    return MPI_SUCCESS;
  }
  if (PMPI_Info_get(pa->info, "collc_algorithm", len - 1, buf, &flag) || !flag)
    return MPI_ERR_INFO;
  d->hint = buf;
  return MPI_SUCCESS;
}

int dispatch_native(const dispatch_call *d, long long bytes) {
  if (d->ireq) return nb_native(d, bytes);
  if (d->request) {
    dispatch_call c = *d;
    int rc = request_dup_types(&c);
    if (!rc) rc = request_create(&c, REQ_NATIVE, NULL, 0, bytes);
    return rc ? collc_raise(d->comm, rc) : MPI_SUCCESS;
  }
  stats_add(d->spec.coll, 0, d->src, bytes);
  if (d->ck)
    remember(d, state_get(d->comm, 1),
             (call_entry){.kind = CALL_NATIVE, .bytes = bytes, .src = d->src});
  return request_native(d);
}

/* The plan of persistent request d under decision D into *pl (a reference
 * of its own): the communicator's cached plan when d's datatypes are
 * predefined (it is compiled once, at the decision), else one bound to the
 * request's own duplicates of them (the user may free the originals). */
static int persist_plan(const dispatch_call *d, decision *D, const binding_key *bk,
                        collc_plan **pl) {
  binding *B, tmp = {0};
  char why[200];
  if (!bk->sserial && !bk->rserial) {
    int rc = dispatch_plan_of(d, D, bk, &B, &tmp);
    if (!rc && B != &tmp) plan_ref(B->plan);
    free(tmp.gcomm);
    *pl = rc ? NULL : B->plan;
    return rc;
  }
  collc_prog *P = dispatch_compile(&d->spec, &D->choice, why, sizeof why);
  return P ? make_plan(d, P, pl) : MPI_ERR_NO_MEM;
}

/* A persistent request for call d under decision D: the plan, and its own
 * tag, group communicators and segment, so that it may run while other
 * collectives do. */
static int persist(const dispatch_call *call, decision *D, const binding_key *bk) {
  dispatch_call c = *call, *d = &c; /* with its own datatypes */
  collc_state *st = state_get(d->comm, 0);
  MPI_Comm g[COLLC_MAXF + 1];
  req_plan rp = {.seg = calloc(1, sizeof(shm_seg *))};
  int rc = request_dup_types(d);
  if (rc) return free(rp.seg), rc;
  if (!rp.seg) rc = MPI_ERR_NO_MEM;
  if (!rc) rc = persist_plan(d, D, bk, &rp.pl);
  const collc_prog *P = rc ? NULL : plan_prog(rp.pl);
  if (!rc) rc = P->ngroups <= COLLC_MAXF ? state_group_comms(st, P, g, 0) : MPI_ERR_INTERN;
  for (; !rc && rp.ngdup < P->ngroups; rp.ngdup++) /* collective over each group, in order */
    if ((rc = PMPI_Comm_dup(g[rp.ngdup], &rp.gdup[rp.ngdup]))) break;
  long long shm = rc || !dispatch_uses_segment(&D->choice) ? 0 : shm_need(d, P);
  if (!rc && shm < 0) rc = MPI_ERR_TYPE;
  if (!rc && reads_in_place(&D->choice)) state_cma(st);
  if (!rc && shm > 0) rc = state_own_segment(st, (size_t)shm, rp.seg);
  if (rc) {
    request_free_plan(&rp);
    request_free_types(d);
    return rc;
  }
  rp.tag = state_next_tag(st);
  return request_create(d, REQ_PLAN, &rp, D->algo, plan_bytes(rp.pl));
}

/* Whether call d's choice may depend on the node layout: a default rule
 * that would pick a node-aware plan on a shared node, or a text naming one
 * (a registry row that needs shared nodes: hier, shm). */
static int wants_layout(const dispatch_call *d, const char *forced) {
  const char *env = config_get()->algorithm[d->spec.coll];
  const char *t = forced ? forced : d->hint ? d->hint : *env ? env : NULL;
  return t ? algo_text_needs(d->spec.coll, t) != ALGO_ANY : select_may_share(&d->spec);
}

/* Remember in st's call cache that d is served as e says (blocking calls
 * with a key: of the default selection, or naming their algorithm, whose
 * text keys them too; persistent inits are not keyed by their arguments
 * alone). */
static void remember(const dispatch_call *d, collc_state *st, call_entry e) {
  if (!d->ck || d->request || !st) return;
  dispatch_entry_buffers(&d->spec, &e);
  if (d->ftext) forced_add(st, d->ck, d->ftext, &e);
  else call_add(st, d->ck, &e);
}

/* Run plan B of call d in st's blocking context. */
static int execute(const dispatch_call *d, collc_state *st, const binding *B) {
  const collc_prog *P = plan_prog(B->plan);
  if (!st->bctx && !(st->bctx = ctx_new())) return MPI_ERR_NO_MEM;
  if (P->shm_units || P->ngroups) request_quiesce(st); /* (they run on the same ones) */
  exec_where w = {st->priv, TAG_BLOCKING, B->gcomm, &st->seg, NULL};
  return request_run(st->bctx, B->plan, &w, d->sendbuf, d->recvbuf);
}

/* The bytes count x t at buf covers, units times over, from *lo (0: none). */
static size_t span(const void *buf, int64_t units, int count, MPI_Datatype t, const char **lo) {
  MPI_Aint lb, ext, tlb, text;
  if (!buf || buf == MPI_IN_PLACE || units <= 0 || count <= 0) return 0;
  PMPI_Type_get_extent(t, &lb, &ext);
  PMPI_Type_get_true_extent(t, &tlb, &text);
  *lo = (const char *)buf + tlb;
  return (size_t)((units * count - 1) * ext + text);
}

/* Run plan B of device-buffer call d on host copies of its buffers in st's
 * pinned mirror (whole-buffer staging, backend_cuda.h): copy in, run as
 * for host buffers, copy the receive buffer back. */
static int execute_staged(const dispatch_call *d, collc_state *st, const binding *B) {
  const coll_desc *c = coll_desc_of(d->spec.coll);
  int64_t in = c->input_units(&d->spec), out = c->output_units(&d->spec);
  const char *slo = NULL, *rlo = NULL;
  size_t ns = d->sendbuf == d->recvbuf ? 0
              : span(d->sendbuf, in, d->bind.sendcount, d->bind.sendtype, &slo);
  size_t nr = span(d->recvbuf, d->spec.in_place && in > out ? in : out, d->bind.recvcount,
                   d->bind.recvtype, &rlo);
  size_t off = (ns + 63) & ~(size_t)63;
  int rc = backend_cuda_host_grow(&st->stage, &st->stage_bytes, off + nr);
  char *m = st->stage;
  dispatch_call h = *d;
  if (!rc && ns) rc = backend_cuda_copy(m, slo, ns);
  if (!rc && nr) rc = backend_cuda_copy(m + off, rlo, nr);
  if (nr) h.recvbuf = m + off + ((const char *)d->recvbuf - rlo);
  if (ns) h.sendbuf = m + ((const char *)d->sendbuf - slo);
  else if (d->sendbuf == d->recvbuf) h.sendbuf = h.recvbuf;
  if (!rc) rc = execute(&h, st, B);
  if (!rc && nr) rc = backend_cuda_copy((void *)(uintptr_t)rlo, m + off, nr);
  return rc;
}

/* Whether plan B of decision D can serve device-buffer call d: always
 * staged; with a CUDA-aware library when the CUDA backend runs it. */
static int device_fits(const decision *D, const binding *B) {
  int kernel, all = plan_batchable(B->plan, &kernel);
  return !backend_cuda_aware() ||
         backend_cuda_fits(all, kernel, plan_prog(B->plan)->shm_units, reads_in_place(&D->choice));
}

/* Whether a significant buffer of call d is pageable host memory, which
 * the CUDA backend's kernels cannot reach: a call with one buffer on the
 * device and the other on the host, or a buffer whose cached device range
 * is stale (freed, its addresses reused for host memory: memclass.h's free
 * rule), so each is asked afresh (one pointer query per buffer and call,
 * on this path only). */
static int host_buffer(const dispatch_call *d) {
  const coll_desc *c = coll_desc_of(d->spec.coll);
  int send = d->sendbuf && d->sendbuf != MPI_IN_PLACE && d->sendbuf != d->recvbuf &&
             c->input_units(&d->spec) > 0; /* (bcast: none, its input is in recvbuf) */
  return (send && memclass_fresh(d->sendbuf) == MEM_HOST) ||
         (c->output_units(&d->spec) > 0 && memclass_fresh(d->recvbuf) == MEM_HOST);
}

/* Run plan B of device-buffer call d: staged, or with the CUDA backend be
 * (ending synchronised). Staged and backend executions run the same plan
 * with the same messages: ranks may differ in this. */
static int execute_device(const dispatch_call *d, collc_state *st, const binding *B,
                          const exec_backend *be, int staged) {
  if (staged) return execute_staged(d, st, B);
  if (!st->dctx && !(st->dctx = ctx_new())) return MPI_ERR_NO_MEM;
  if (plan_prog(B->plan)->ngroups) request_quiesce(st);
  exec_where w = {st->priv, TAG_BLOCKING, B->gcomm, &st->seg, be};
  int rc = request_run(st->dctx, B->plan, &w, d->sendbuf, d->recvbuf), rs = backend_cuda_sync();
  return rc ? rc : rs;
}

int dispatch_device_native(const dispatch_call *d, long long bytes) {
  stats_device(d->spec.coll + (d->ireq ? COLLC_COLL_COUNT : 0));
  return dispatch_native(d, bytes);
}

/* The decision for call d under text (forced: text is the call's own):
 * cached, else made now (collective); *st refreshed. NULL: native
 * (uncached), with *rc an error class or 0 (MPI_ERR_ARG: forced text
 * whose cached decision fell back, as deciding anew would refuse it). */
static decision *decision_of(dispatch_call *d, const char *text, const char *forced,
                             const decision_key *dk, const binding_key *bk, collc_state **st,
                             int *rc) {
  decision *D = *st ? cache_decision(*st, dk, text) : NULL;
  if (D && forced && D->fell_back) return (*rc = MPI_ERR_ARG), NULL;
  if (D && D->fell_back) d->src = D->src; /* (counted as the rule's, as when it was made) */
  if (!D) D = decide(d, text, forced != NULL, dk, bk, rc);
  *st = state_get(d->comm, 0);
  return D;
}

int dispatch(const dispatch_call *d0, const char *forced, long long native_bytes) {
  dispatch_call call = *d0, *d = &call; /* with the node layout */
  decision_key dk;
  binding_key bk;
  collc_choice c;
  int rc;
  const exec_backend *dev = NULL;
  if (on_device(d->sendbuf, d->recvbuf)) { /* device buffers: not remembered */
    call.ck = NULL;
    if (d->ireq || d->request || !(dev = backend_cuda())) /* (no GPU: always) */
      return dispatch_device_native(d, native_bytes);
  }
  if (d->ireq) return nb_dispatch(d, forced, native_bytes); /* (local: no layout discovery) */
  collc_state *st = state_get(d->comm, 0);
  if (wants_layout(d, forced) && (st || (st = state_get(d->comm, 1))) &&
      state_layout(st, d->comm) == MPI_SUCCESS) /* (collective, once per communicator) */
    call.spec.layout = st->layout;
  const char *text = selection(d, forced, st);
  if ((rc = dispatch_agree(d, text))) return collc_raise(d->comm, rc);
  if (dispatch_empty(&d->spec)) { /* nothing moves, on every rank */
    if ((rc = dispatch_choose(d, text, forced != NULL, &c))) return collc_raise(d->comm, rc);
    if (d->request) { /* counted at each start; needs no datatypes */
      dispatch_call e = *d;
      e.bind.sendtype = e.bind.recvtype = MPI_DATATYPE_NULL;
      rc = request_create(&e, REQ_EMPTY, NULL, c.algo, 0);
      return rc ? collc_raise(d->comm, rc) : MPI_SUCCESS;
    }
    stats_add(d->spec.coll, c.algo, d->src, 0);
    remember(d, st, (call_entry){.kind = CALL_EMPTY, .algo = c.algo, .src = d->src});
    return MPI_SUCCESS;
  }
  decision *D = NULL;
  const char *g;
  if (strcmp(text, "native") != 0 || d->request) /* (keys: only where a decision is looked up) */
    dispatch_decision_key(d, &dk), dispatch_binding_key(d, &bk);
  if (strcmp(text, "native") != 0 && !(D = decision_of(d, text, forced, &dk, &bk, &st, &rc)) && rc)
    return collc_raise(d->comm, rc);
  if ((!D || D->algo == 0) && d->request && (g = guard_nonblocking(&d->spec)) && strcmp(text, g)) {
    d->src = SRC_GUARD; /* (native is unsafe here, whatever led to it: the guard's) */
    if (!(D = decision_of(d, g, NULL, &dk, &bk, &st, &rc)) && rc) return collc_raise(d->comm, rc);
  }
  if (!D || D->algo == 0) {
    if (dev) stats_device(d->spec.coll); /* (marked as the other device calls the library gets) */
    return dispatch_native(d, native_bytes);
  }
  if (d->request) return (rc = persist(d, D, &bk)) ? collc_raise(d->comm, rc) : MPI_SUCCESS;
  binding *B, tmp = {0};
  if ((rc = dispatch_plan_of(d, D, &bk, &B, &tmp))) return collc_raise(d->comm, rc);
  if (dev && !device_fits(D, B)) { /* (the same on every rank: the same plan) */
    if (B == &tmp) plan_free(tmp.plan), free(tmp.gcomm);
    stats_device(d->spec.coll);
    return dispatch_native(d, native_bytes);
  }
  int staged = dev && (!backend_cuda_aware() || host_buffer(d)); /* (CUDA-aware: kernels) */
  rc = dev ? execute_device(d, st, B, dev, staged) : execute(d, st, B);
  stats_add(d->spec.coll, D->algo, d->src, plan_bytes(B->plan));
  if (dev) stats_device_plan(d->spec.coll, D->algo, staged);
  if (B == &tmp) plan_free(tmp.plan), free(tmp.gcomm);
  else if (!rc)
    remember(d, st, (call_entry){.kind = CALL_PLAN, .algo = D->algo, .plan = B->plan,
                                 .gcomm = B->gcomm, .bytes = plan_bytes(B->plan),
                                 .src = d->src});
  return rc ? collc_raise(d->comm, rc) : MPI_SUCCESS;
}

void dispatch_entry_buffers(const collc_spec *s, call_entry *e) {
  const coll_desc *c = coll_desc_of(s->coll);
  e->need_recv = c->output_units(s) > 0;
  e->need_send = !c->always_in_place && !s->in_place && c->input_units(s) > 0;
}

int dispatch_empty(const collc_spec *s) {
  return s->unit_bytes == 0 && !coll_desc_of(s->coll)->synchronizes;
}

const call_entry *dispatch_fast_find(MPI_Comm comm, const call_key *k, int nb,
                                    collc_state **st) {
  const call_entry *e;
  *st = NULL;
  if (comm == MPI_COMM_NULL || config_get()->disable || !(*st = state_find(comm))) return NULL;
  if ((e = call_find(nb ? (*st)->nbcalls : (*st)->calls, k))) memo_put(comm, k, nb, e, *st);
  return e;
}

int dispatch_fast(MPI_Comm comm, const call_key *k, const void *sendbuf, void *recvbuf,
                       int *rc) {
  collc_state *st;
  const call_entry *e = dispatch_fast_find(comm, k, 0, &st);
  int how = e ? dispatch_fast_hit(st, e, comm, k, sendbuf, recvbuf, rc, 1) : FAST_MISS;
  if (how != FAST_MISS) stats_add(k->coll, e->algo, e->src, e->bytes);
  return how;
}

int dispatch_forced(MPI_Comm comm, const call_key *k, const char *text, const void *sendbuf,
                    void *recvbuf, int *rc) {
  collc_state *st = comm == MPI_COMM_NULL ? NULL : state_find(comm);
  const call_entry *e = st ? forced_find(st, k, text) : NULL;
  int how = e ? dispatch_fast_hit(st, e, comm, k, sendbuf, recvbuf, rc, 1) : FAST_MISS;
  if (how != FAST_MISS) stats_add(k->coll, e->algo, e->src, e->bytes);
  return how;
}

int dispatch_loose(dispatch_call *d, const call_key *k, int *rc) {
  collc_state *st;
  int nb = d->ireq != NULL;
  const call_entry *e = dispatch_fast_find(d->comm, k, nb, &st);
  d->ck = NULL;
  if (e && native_usable(e, st, nb) && !on_device(d->sendbuf, d->recvbuf)) {
    stats_add(k->coll + (nb ? COLLC_COLL_COUNT : 0), e->algo, e->src, e->bytes);
    return (*rc = nb ? d->inative(d, d->ireq) : d->native(d)), FAST_DONE;
  }
  if (e ? e->kind != CALL_PLAN : !select_counts_matter(&d->spec)) d->ck = k;
  return FAST_MISS;
}

int dispatch_fast_run(collc_state *st, const call_entry *e, MPI_Comm comm, const void *sendbuf,
                      void *recvbuf) {
  exec_where w = {st->priv, TAG_BLOCKING, e->gcomm, &st->seg, NULL};
  int rc = ctx_execute(st->bctx, e->plan, &w, sendbuf, recvbuf);
  return rc ? collc_raise(comm, rc) : MPI_SUCCESS;
}

int dispatch_pair(int coll, const char *forced, const pair_args *a, MPI_Comm comm,
                  const persist_args *pa, int (*native)(const dispatch_call *),
                  int (*inative)(const dispatch_call *, MPI_Request *)) {
  char hint[256];
  int inter, p = 1, rank = 0, err = args_comm(comm, &inter);
  if (err) return collc_raise(MPI_COMM_NULL, err);
  PMPI_Comm_size(comm, &p);
  PMPI_Comm_rank(comm, &rank);
  dispatch_call d = {.spec = {.coll = coll, .p = p, .rank = rank, .count = a->rc,
                              .in_place = a->sb == MPI_IN_PLACE},
                     .bind = {a->sc, a->rc, a->st, a->rt, MPI_OP_NULL},
                     .sendbuf = a->sb,
                     .recvbuf = a->rb,
                     .comm = comm,
                     .native = native,
                     .inative = inative,
                     .ck = a->ck,
                     .ftext = a->ck ? forced : NULL};
  if ((err = dispatch_persist(&d, pa, hint, sizeof hint))) return collc_raise(comm, err);
  if (inter) return dispatch_native(&d, 0);
  if ((err = args_pair(a->sb, a->sc, a->st, a->rb, a->rc, a->rt))) return collc_raise(comm, err);
  d.spec.unit_bytes = args_bytes(a->rc, a->rt); /* (only now: the types are valid) */
  return dispatch(&d, forced, (p - 1) * d.spec.unit_bytes);
}

int dispatch_pair_slow(int coll, pair_args *a, MPI_Comm comm, pair_fn pmpi,
                       int (*native)(const dispatch_call *),
                       int (*inative)(const dispatch_call *, MPI_Request *)) {
  call_key k = dispatch_pair_key(coll, a);
  int rc, how = dispatch_fast(comm, &k, a->sb, a->rb, &rc);
  if (how == FAST_DONE) return rc;
  if (how == FAST_NATIVE || config_get()->disable)
    return pmpi(a->sb, a->sc, a->st, a->rb, a->rc, a->rt, comm);
  a->ck = &k;
  return dispatch_pair(coll, NULL, a, comm, NULL, native, inative);
}

int dispatch_pair_forced(int coll, const char *text, pair_args *a, MPI_Comm comm, pair_fn pmpi,
                         int (*native)(const dispatch_call *),
                         int (*inative)(const dispatch_call *, MPI_Request *)) {
  call_key k = dispatch_pair_key(coll, a);
  int rc, how = dispatch_forced(comm, &k, text, a->sb, a->rb, &rc);
  if (how == FAST_DONE) return rc;
  if (how == FAST_NATIVE) return pmpi(a->sb, a->sc, a->st, a->rb, a->rc, a->rt, comm);
  a->ck = &k;
  return dispatch_pair(coll, text, a, comm, NULL, native, inative);
}

int dispatch_on_device(const void *sb, const void *rb) {
  return !memclass_host_ok(memclass_of(sb)) || !memclass_host_ok(memclass_of(rb));
}

int dispatch_ipair(int coll, pair_args *a, MPI_Comm comm, MPI_Request *req, ipair_fn ipmpi,
                   int (*native)(const dispatch_call *),
                   int (*inative)(const dispatch_call *, MPI_Request *)) {
  call_key k = dispatch_pair_key(coll, a);
  int rc, how = nb_fast(comm, &k, a->sb, a->rb, req, &rc);
  if (how == FAST_NATIVE || (how == FAST_MISS && config_get()->disable))
    return ipmpi(a->sb, a->sc, a->st, a->rb, a->rc, a->rt, comm, req);
  if (how == FAST_DONE) return rc;
  a->ck = &k;
  return dispatch_pair(coll, NULL, a, comm, &(persist_args){.request = req, .oneshot = 1}, native,
                       inative);
}
