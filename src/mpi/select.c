/* select.c - the default algorithm rule, used when COLLC_<COLLECTIVE> is unset.
 *
 * The rule is data: rows {collective, p range, bytes range, algorithm} tried
 * in order, those of a tuning file (COLLC_TUNING, made by collc-tune) before
 * the built-in ones (tuning/builtin.json, compiled in; rules.c reads both).
 * The built-in rows must never be knowingly slower than the native
 * collective: a row picks one of ours only where collc-bench measured it
 * faster (>= 1.1x in two idle passes of `make bench` plus a p = 6 and p = 16
 * sweep; see README, "Default rule", and each row's note), and native
 * everywhere else, including every process count we could not measure.
 * Bytes: per block for all-to-all and reduce_scatter_block, per vector for
 * the others.
 */
#include <string.h>
#include "internal.h"
#include "../plan/config.h"
#include "../plan/tuning.h"

typedef tune_row rule;

long long select_bytes(const collc_spec *s) {
  if (!coll_counts_shared(s)) return 0; /* (this rank's alone: they decide nothing) */
  if (coll_desc_of(s->coll)->per_block || s->vall) /* (alltoallv agreed: its units size the segment) */
    return s->unit_bytes;
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
  return coll_reduces(s->coll) && !s->commutative && R->noncomm[0] ? R->noncomm : R->algo;
}

/* The first row for s among the nonblocking-only rows (nb) or the others;
 * with shared (the layout assumed to allow node-aware rows) or not (those
 * only where they fit s's layout). NULL: none. */
static const rule *first_row(const collc_spec *s, int assume_shared, int nb) {
  int n;
  const rule *rules = rules_get(&n); /* (this library's rows only) */
  long long b = select_bytes(s);
  for (int i = 0; i < n; i++) {
    const rule *R = &rules[i];
    const char *a = row_algo(R, s);
    if (R->nb != nb) continue;
    if (R->coll == s->coll && s->p >= R->pmin && s->p <= R->pmax &&
        b >= R->bmin && b <= R->bmax && ((assume_shared && node_aware(s->coll, a)) || fits(a, s)))
      return R;
  }
  return NULL;
}

/* Row R's text for s ("native" without a row), its source into *src. */
static const char *row_text(const rule *R, const collc_spec *s, int *src) {
  *src = R ? R->source : SRC_NONE;
  return R ? row_algo(R, s) : "native";
}

const char *select_default(const collc_spec *s, int *src) {
  return row_text(first_row(s, 0, 0), s, src);
}

const char *select_nonblocking(const collc_spec *s, int node_ready, int *src) {
  collc_spec t = *s;
  if (!node_ready) t.layout = NULL; /* (the node-aware rows do not fit) */
  const rule *R = first_row(&t, 0, 1); /* (measured nonblocking: before any file's others) */
  return row_text(R ? R : first_row(&t, 0, 0), &t, src);
}

int select_may_share(const collc_spec *s) {
  const rule *R = first_row(s, 1, 0);
  return (R && node_aware(s->coll, row_algo(R, s))) || select_simulates(s);
}

int select_simulates(const collc_spec *s) {
  int minp = config_get()->sim_min_p;
  return minp > 0 && s->p >= minp && s->unit_bytes > 0 && !first_row(s, 1, 0) &&
         coll_desc_of(s->coll)->sim_candidates[0] && coll_counts_shared(s); /* (else native) */
}

/* Whether row text a names one of collc's algorithms. */
static int ours(const char *a) { return a[0] && strcmp(a, "native") != 0; }

/* Whether a row of s's collective at s->p names one of collc's algorithms
 * (at s's bytes only where at_bytes), or COLLC_<COLL> or the simulator may
 * decide s. */
static int may_be_ours(const collc_spec *s, int at_bytes) {
  int n, minp = config_get()->sim_min_p;
  const rule *rules = rules_get(&n);
  long long b = at_bytes ? select_bytes(s) : 0;
  if (*config_get()->algorithm[s->coll]) return 1;
  if (minp > 0 && s->p >= minp && coll_desc_of(s->coll)->sim_candidates[0]) return 1;
  for (int i = 0; i < n; i++) {
    const rule *R = &rules[i];
    if (R->coll == s->coll && s->p >= R->pmin && s->p <= R->pmax &&
        (!at_bytes || (b >= R->bmin && b <= R->bmax)) && (ours(R->algo) || ours(R->noncomm)))
      return 1;
  }
  return 0;
}

int select_counts_matter(const collc_spec *s) { return may_be_ours(s, 0); }

int select_native_by_total(const collc_spec *s) { return !may_be_ours(s, 1); }
