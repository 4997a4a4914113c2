/* alltoall_torus.c - the d-factor ("torus") all-to-all.
 *
 * J. L. Träff, "Effective MPI: User-defined Datatypes and Cartesian
 * Communicators for Zero-copy All-to-all Communication in Multidimensional
 * Tori", 2026, Algorithm 1 and Listings 1-3.
 *
 * p = D[0] x ... x D[d-1]; the rank's coordinates are its mixed-radix digits
 * with D[0] varying fastest. Round k exchanges, among the D[k] ranks that
 * differ only in coordinate k, composite blocks: member j's composite is
 * block run [j*s(k), (j+1)*s(k)) repeated over the later dimensions,
 * s(k) = D[0]*...*D[k-1]; the dimension with the largest stride is the
 * innermost level (the paper's index order, e.g. [0,6,12,18,2,8,...]).
 * Send and receive use the same composite shapes, so no block is ever
 * reordered by a local copy: zero-copy, double buffered between RECV and TMP
 * (first round reads SEND, last writes RECV).
 *
 * Parameters: torus:<dims>[:<comp>[,<comp>...]]. dims "AxBxC" in MPI
 * Cartesian order (as MPI_Dims_create returns; the LAST dimension varies
 * fastest and is exchanged first) or "d=N" for collc_dims_create(p, N).
 * comp per dimension (same order as dims), or one for all: native (one
 * PMPI_Alltoall per round on the cached dimension communicator with a
 * cached tiled datatype, the paper's Listing 3), linear, pairwise.
 * The paper's example p = 5 x 4 (D[0] = 5 fastest) is torus:4x5.
 *
 * Cost: d rounds; round k sends (D[k]-1) messages of p/D[k] blocks:
 *   sum_k [(D[k]-1) alpha + (D[k]-1) p/D[k] m beta],  m = block bytes;
 *   total blocks sent per rank dp - sum_k p/D[k] (Theorem 1).
 * Scratch: p blocks (2p in place with an odd number of rounds > 1).
 * Restrictions: product of dims = p; dims of size 1 are skipped.
 * In place: rounds alternate RECV and TMP (an even number of rounds needs no
 * copy at all; one round copies the input once to TMP).
 */
#include <stdio.h>
#include <string.h>
#include "algo.h"
#include "patterns.h"
#include "../plan/dims.h"

int algo_torus_parse(const char *params, collc_choice *c, char *why, size_t wlen) {
  if (!params || !*params) {
    snprintf(why, wlen, "torus needs dims, e.g. torus:4x3 or torus:d=2");
    return COLLC_EINVAL;
  }
  const char *colon = strchr(params, ':');
  size_t dlen = colon ? (size_t)(colon - params) : strlen(params);
  if (dlen > 2 && strncmp(params, "d=", 2) == 0) {
    int d;
    if (parse_int_list(params + 2, dlen - 2, ',', &d, 1) != 1 || d < 1 || d > COLLC_MAXF) {
      snprintf(why, wlen, "torus: bad d in '%.*s'", (int)dlen, params);
      return COLLC_EINVAL;
    }
    c->auto_d = d;
  } else {
    c->nf = parse_int_list(params, dlen, 'x', c->f, COLLC_MAXF);
    for (int i = 0; i < c->nf; i++)
      if (c->f[i] < 1) c->nf = -1;
    if (c->nf < 1) {
      snprintf(why, wlen, "torus: bad dims '%.*s'", (int)dlen, params);
      return COLLC_EINVAL;
    }
  }
  if (!colon) return 0;
  const char *s = colon + 1;
  while (*s && c->ncomp < COLLC_MAXF) {
    size_t n = strcspn(s, ",");
    int comp = comp_from_name(s, n);
    if (comp < 0) {
      snprintf(why, wlen, "torus: unknown component '%.*s' (native, linear, pairwise)",
               (int)n, s);
      return COLLC_EINVAL;
    }
    c->comp[c->ncomp++] = comp;
    s += n + (s[n] == ',');
  }
  return 0;
}

int algo_torus_resolve(const collc_spec *s, collc_choice *c, char *why, size_t wlen) {
  if (c->auto_d) {
    if (c->auto_d > COLLC_MAXF) return COLLC_EUNFIT;
    c->nf = c->auto_d;
    dims_balanced(s->p, c->nf, c->f);
    c->auto_d = 0;
  }
  int64_t prod = 1;
  for (int i = 0; i < c->nf && prod <= s->p; i++) prod *= c->f[i]; /* stops before overflow */
  if (prod != s->p) {
    snprintf(why, wlen, "torus: product of dims %lld is not p = %d", (long long)prod, s->p);
    return COLLC_EUNFIT;
  }
  if (c->ncomp != 0 && c->ncomp != 1 && c->ncomp != c->nf) {
    snprintf(why, wlen, "torus: %d components for %d dims", c->ncomp, c->nf);
    return COLLC_EUNFIT;
  }
  int fill = c->ncomp ? c->comp[0] : COMP_LINEAR;
  if (c->ncomp != c->nf)
    for (int i = 0; i < c->nf; i++) c->comp[i] = fill;
  c->ncomp = c->nf;
  return 0;
}

void algo_torus_format(const collc_choice *c, char *buf, size_t len) {
  size_t at = 0;
  if (c->auto_d) {
    snprintf(buf, len, "d=%d", c->auto_d);
    return;
  }
  for (int i = 0; i < c->nf && at < len; i++)
    at += (size_t)snprintf(buf + at, len - at, "%s%d", i ? "x" : "", c->f[i]);
  int uniform = 1;
  for (int i = 1; i < c->ncomp; i++) uniform &= c->comp[i] == c->comp[0];
  for (int i = 0; i < (uniform ? (c->ncomp > 0) : c->ncomp) && at < len; i++)
    at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? "," : ":", comp_name(c->comp[i]));
}

typedef struct {
  int buf;
  int64_t off;
} place;

/* Buffers of rounds 0..K: b[0] the input, b[K] RECV, neighbours distinct. */
static void torus_buffers(collc_prog *P, int K, place *b) {
  int64_t p = P->spec.p;
  int in_place = P->spec.in_place;
  b[0] = (place){in_place ? BUF_RECV : BUF_SEND, 0};
  b[K] = (place){BUF_RECV, 0};
  if (in_place && K == 1) { /* one round cannot run in place: copy once */
    int all = prog_shape_contig(P, p);
    prog_copy(P, opnd(BUF_RECV, 0, all), opnd(BUF_TMP, 0, all));
    prog_need_tmp(P, p);
    b[0] = (place){BUF_TMP, 0};
  } else if (in_place && K % 2) { /* odd: alternate two scratch halves */
    for (int j = 1; j < K; j++) b[j] = (place){BUF_TMP, (j % 2) ? 0 : p};
    prog_need_tmp(P, 2 * p);
  } else {
    for (int j = 1; j < K; j++) b[j] = (place){(K - j) % 2 ? BUF_TMP : BUF_RECV, 0};
    if (K > 1) prog_need_tmp(P, p);
  }
}

/* Composite block shape of round k: run s(k), levels m = d-1 .. k+1. */
static int composite_shape(collc_prog *P, int d, const int *D, int k) {
  int64_t cnt[COLLC_MAXF], str[COLLC_MAXF];
  int n = 0;
  for (int m = d - 1; m > k; m--) {
    cnt[n] = D[m];
    str[n++] = mr_weight(D, m);
  }
  return prog_shape_strided(P, mr_weight(D, k), n, cnt, str);
}

static int torus_gen(const collc_spec *s, const collc_choice *c, collc_prog *P) {
  int d = c->nf, D[COLLC_MAXF], comp[COLLC_MAXF], rounds[COLLC_MAXF], K = 0;
  for (int k = 0; k < d; k++) { /* algorithm order: D[0] fastest = last MPI dim */
    D[k] = c->f[d - 1 - k];
    comp[k] = c->comp[d - 1 - k];
    if (D[k] > 1) rounds[K++] = k;
  }
  if (K == 0) { /* p == 1 */
    if (!s->in_place) {
      int one = prog_shape_contig(P, 1);
      prog_copy(P, opnd(BUF_SEND, 0, one), opnd(BUF_RECV, 0, one));
    }
    return P->err;
  }
  place b[COLLC_MAXF + 1];
  torus_buffers(P, K, b);
  for (int j = 0; j < K; j++) {
    int k = rounds[j], me = mr_digit(s->rank, D, k);
    int64_t sig = mr_weight(D, k);
    int shape = composite_shape(P, d, D, k);
    gen_group_exchange(P, comp[k], D[k], (int)(s->rank - me * sig), (int)sig, me,
                       opnd(b[j].buf, b[j].off, shape), opnd(b[j + 1].buf, b[j + 1].off, shape),
                       sig);
  }
  return P->err;
}

const collc_algo algo_alltoall_torus = {
    "torus", COLLC_COLL_ALLTOALL, algo_torus_parse, algo_torus_resolve, torus_gen, algo_torus_format,
    "torus:<AxBx..|d=N>[:<native|linear|pairwise>[,...]]",
    "d-factor torus all-to-all (Traff 2026): d rounds on dimension groups, zero-copy",
    ALGO_ANY, 0};
