/* registry.c - the algorithm table and choice handling.
 *
 * Adding an algorithm: one file defining its collc_algo row, one line in
 * algo_registry[] below. Tests and tools iterate this table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "algo.h"

const collc_algo *const algo_registry[] = {
    &algo_native,
    &algo_alltoall_pairwise,
    &algo_alltoall_linear,
    &algo_alltoall_bruck,
    &algo_alltoall_torus,
    &algo_allreduce_recexch,
    &algo_allreduce_cyclic,
    &algo_allreduce_tree,
    &algo_rsb_recexch,
    &algo_rsb_cyclic,
    &algo_allgather_recexch,
    &algo_allgather_cyclic,
    &algo_rs_recexch,
    &algo_rs_cyclic,
    &algo_allgatherv_recexch,
    &algo_allgatherv_cyclic,
    &algo_alltoallv_pairwise,
    &algo_alltoallv_linear,
    &algo_reduce_tree,
    &algo_bcast_tree,
    &algo_allreduce_hier,
    &algo_rsb_hier,
    &algo_allgather_hier,
    &algo_reduce_hier,
    &algo_bcast_hier,
    &algo_alltoall_hier,
    &algo_allgatherv_hier,
    &algo_rs_hier,
    &algo_barrier_dissem,
    &algo_barrier_flags,
    &algo_barrier_hier,
    &algo_shm,
    &algo_gather_linear,
    &algo_scatter_linear,
    &algo_gatherv_linear,
    &algo_scatterv_linear,
    &algo_gather_tree,
    &algo_scatter_tree,
    &algo_gatherv_tree,
    &algo_scatterv_tree,
    &algo_gather_hier,
    &algo_scatter_hier,
    &algo_gatherv_hier,
    &algo_scatterv_hier,
    &algo_alltoallv_hier,
    &algo_alltoallv_torus,
};
const int algo_count = (int)(sizeof algo_registry / sizeof algo_registry[0]);

static const char *const comp_names[COMP_COUNT] = {"native", "linear", "pairwise"};

const char *comp_name(int comp) {
  return comp >= 0 && comp < COMP_COUNT ? comp_names[comp] : "?";
}

int comp_from_name(const char *s, size_t len) {
  for (int c = 0; c < COMP_COUNT; c++)
    if (strlen(comp_names[c]) == len && strncmp(s, comp_names[c], len) == 0) return c;
  return -1;
}

int algo_find(int coll, const char *name, size_t len) {
  for (int i = 0; i < algo_count; i++) {
    const collc_algo *A = algo_registry[i];
    if ((A->coll == coll || A->coll == -1) && strlen(A->name) == len &&
        strncmp(A->name, name, len) == 0)
      return i;
  }
  return -1;
}

/* The row that choice text "name[:params]" names for coll, or NULL. */
static const collc_algo *algo_of_text(int coll, const char *text) {
  const char *colon = strchr(text, ':');
  int i = algo_find(coll, text, colon ? (size_t)(colon - text) : strlen(text));
  return i < 0 ? NULL : algo_registry[i];
}

int algo_text_needs(int coll, const char *text) {
  const collc_algo *A = algo_of_text(coll, text);
  return A ? A->needs : ALGO_ANY;
}

int algo_agreed(const collc_spec *s, const char *name, char *why, size_t wlen) {
  int all = coll_desc_of(s->coll)->counts_local; /* (alltoallv: every rank's send counts) */
  if (all ? s->vall : s->agreed) return 0;
  snprintf(why, wlen, "%s: %s needs %s on every rank: the agreement round gives them where "
           "all elements have one size%s (nonblocking: without the node segment)", name,
           coll_name(s->coll),
           all ? "every rank's send counts" : "the root's counts", all ? ", p <= 256" : "");
  return COLLC_EUNFIT;
}

int algo_text_agrees(int coll, const char *text) {
  const collc_algo *A = algo_of_text(coll, text);
  return A ? A->agrees : 0;
}

int parse_int_list(const char *s, size_t len, char sep, int *out, int max) {
  int n = 0;
  size_t i = 0;
  while (i < len) {
    char *end;
    long v = strtol(s + i, &end, 10);
    size_t used = (size_t)(end - (s + i));
    if (used == 0 || n == max || v < -(1L << 30) || v > (1L << 30)) return -1;
    out[n++] = (int)v;
    i += used;
    if (i < len) {
      if (s[i] != sep || i + 1 == len) return -1;
      i++;
    }
  }
  return n;
}

int parse_steps(const char *params, collc_choice *c, const char *allowed, char *why,
                size_t wlen) {
  const char *order = "-*+", *s = params ? params : "";
  int rank_of_last = 0;
  c->nf = 0;
  while (*s) {
    size_t n = strcspn(s, ",");
    char kind = *s == '-' || *s == '*' || *s == '+' ? *s : '+';
    const char *num = s + (*s == '-' || *s == '*' || *s == '+');
    int v, at = (int)(strchr(order, kind) - order);
    if (parse_int_list(num, n - (size_t)(num - s), ',', &v, 1) != 1 || v < 2 || !strchr(allowed, kind) ||
        at < rank_of_last || c->nf == COLLC_MAXF) {
      snprintf(why, wlen, "bad step '%.*s' (radix >= 2; kinds %s in the order -, *, +)", (int)n,
               s, allowed);
      return COLLC_EINVAL;
    }
    rank_of_last = at;
    c->step[c->nf] = kind;
    c->f[c->nf++] = v;
    s += n + (s[n] == ',');
  }
  return 0;
}

void format_steps(const collc_choice *c, char *buf, size_t len) {
  size_t at = 0;
  if (len) buf[0] = 0;
  for (int i = 0; i < c->nf && at < len; i++)
    at += (size_t)snprintf(buf + at, len - at, "%s%s%d", i ? "," : "",
                           c->step[i] == '+' ? "" : c->step[i] == '-' ? "-" : "*", c->f[i]);
}

int64_t steps_product(const collc_choice *c, char kind) {
  int64_t p = 1;
  for (int i = 0; i < c->nf; i++)
    if (c->step[i] == kind && (p *= c->f[i]) > (INT64_C(1) << 40)) p = INT64_C(1) << 40;
  return p;
}

int steps_of(const collc_choice *c, char kind, int *out) {
  int n = 0;
  for (int i = 0; i < c->nf; i++)
    if (c->step[i] == kind) out[n++] = c->f[i];
  return n;
}

int choice_parse(int coll, const char *text, collc_choice *c, char *why, size_t wlen) {
  memset(c, 0, sizeof *c);
  if (!coll_desc_of(coll)) {
    snprintf(why, wlen, "unknown collective %d", coll);
    return COLLC_EINVAL;
  }
  const char *colon = strchr(text, ':');
  size_t nlen = colon ? (size_t)(colon - text) : strlen(text);
  c->algo = algo_find(coll, text, nlen);
  if (c->algo < 0) {
    snprintf(why, wlen, "unknown %s algorithm '%.*s'", coll_name(coll), (int)nlen, text);
    return COLLC_EINVAL;
  }
  return algo_registry[c->algo]->parse(colon ? colon + 1 : NULL, c, why, wlen);
}

int choice_resolve(const collc_spec *s, collc_choice *c, char *why, size_t wlen) {
  return algo_registry[c->algo]->resolve(s, c, why, wlen);
}

char *choice_format(const collc_choice *c, char *buf, size_t len) {
  const collc_algo *A = algo_registry[c->algo];
  char par[80] = "";
  A->format(c, par, sizeof par);
  snprintf(buf, len, "%s%s%s", A->name, par[0] ? ":" : "", par);
  return buf;
}

int choice_is_native(const collc_choice *c) {
  return algo_registry[c->algo]->gen == NULL;
}

collc_prog *choice_compile(const collc_spec *s, const collc_choice *c, char *why,
                           size_t wlen) {
  const collc_algo *A = algo_registry[c->algo];
  if (!A->gen) {
    snprintf(why, wlen, "%s has no program", A->name);
    return NULL;
  }
  collc_prog *P = prog_new(s);
  if (!P) {
    snprintf(why, wlen, "out of memory");
    return NULL;
  }
  choice_format(c, P->algo, sizeof P->algo);
  if (A->gen(s, c, P) || prog_finalize(P)) {
    snprintf(why, wlen, "%s: %s", P->algo, P->errmsg[0] ? P->errmsg : "generator failed");
    prog_free(P);
    return NULL;
  }
  return P;
}

/* ---- rows without parameters, and the native row ---- */

int algo_parse_none(const char *params, collc_choice *c, char *why, size_t wlen) {
  (void)c;
  if (params) {
    snprintf(why, wlen, "%s takes no parameters", algo_registry[c->algo]->name);
    return COLLC_EINVAL;
  }
  return 0;
}

int algo_resolve_any(const collc_spec *s, collc_choice *c, char *why, size_t wlen) {
  (void)s, (void)c, (void)why, (void)wlen;
  return 0;
}

void algo_format_none(const collc_choice *c, char *buf, size_t len) {
  (void)c;
  if (len) buf[0] = 0;
}

const collc_algo algo_native = {
    "native", -1, algo_parse_none, algo_resolve_any, NULL, algo_format_none, "native",
    "the MPI library's own collective (PMPI)", ALGO_ANY, 0};
