/* common.h - argument helpers shared by the command-line tools. */
#ifndef COLLC_TOOLS_COMMON_H
#define COLLC_TOOLS_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "algo/algo.h"

/* Parse a non-negative integer argument or exit with usage status 2. */
static inline long tool_int(const char *s, const char *what) {
  char *end;
  long v = strtol(s, &end, 10);
  if (!*s || *end || v < 0) {
    fprintf(stderr, "bad %s '%s'\n", what, s);
    exit(2);
  }
  return v;
}

/* Options shared by collc-explain and collc-verify. */
typedef struct {
  int in_place;       /* -i */
  int root;           /* -r ROOT (reduce, bcast) */
  int noncommutative; /* -n: the operation does not commute */
  long elem_bytes;    /* -b BYTES per element (default 8, a double) */
  const char *nodes;  /* -N LAYOUT: ranks per node, or a node id per rank */
  const char *counts; /* -V C0,C1,...: allgatherv, reduce_scatter block sizes */
} tool_opts;

#define TOOL_OPTSTRING "ir:nb:N:V:"
#define TOOL_OPTHELP                                                                   \
  "  -i        in place (MPI_IN_PLACE)\n"                                              \
  "  -r ROOT   root of reduce and bcast (default 0)\n"                                 \
  "  -n        the reduction operation is not commutative\n"                           \
  "  -b BYTES  bytes per element (default 8): reductions split vectors into blocks\n"   \
  "            of at least 64 bytes\n"                                                \
  "  -N NODES  node layout: K (consecutive nodes of K ranks) or a node id per rank\n"  \
  "            (\"0,1,0,1\"), then /sM for M ranks per socket (\"4/s2\");\n"        \
  "            shared-memory plans (hier, shm) need one\n"                        \
  "  -V C,...  allgatherv, reduce_scatter: elements of each rank's block (p of them;\n" \
  "            default: count each); alltoallv: rank q sends each rank Cq (in place\n" \
  "            q and r exchange min(Cq, Cr))\n"

/* Apply one of the shared options; 0 if opt was one of them, else -1. */
static inline int tool_option(int opt, const char *arg, tool_opts *o) {
  switch (opt) {
  case 'i': o->in_place = 1; return 0;
  case 'r': o->root = (int)tool_int(arg, "root"); return 0;
  case 'n': o->noncommutative = 1; return 0;
  case 'b': o->elem_bytes = tool_int(arg, "bytes"); return 0;
  case 'N': o->nodes = arg; return 0;
  case 'V': o->counts = arg; return 0;
  default: return -1;
  }
}

/* Counted collectives: s->counts from list (NULL: count each; kept for the
 * tool's lifetime) and s->count their sum; exits 2 on a bad list. */
static inline void tool_counts(collc_spec *s, const char *list, long count) {
  int64_t *c = malloc((size_t)s->p * sizeof *c);
  const char *at = list;
  s->count = 0;
  for (int q = 0; c && q < s->p; q++) {
    char *end = NULL;
    c[q] = list ? strtoll(at, &end, 10) : count;
    if (list && (end == at || c[q] < 0 || (*end != ',' && *end != 0) || (*end == 0 && q < s->p - 1))) {
      fprintf(stderr, "-V needs %d non-negative counts\n", s->p);
      exit(2);
    }
    if (list) at = end + (*end == ',');
    s->count += c[q];
  }
  if (!c) exit(2);
  s->counts = c;
}

/* Alltoallv: every rank's vectors from tool_counts' p counts C (rank q
 * sends each rank C[q] elements, so rank r receives C[q] from each q; in
 * place, where MPI needs them symmetric, q and r exchange min(C[q], C[r])),
 * packed; s->vall. */
static inline void tool_a2av_counts(collc_spec *s) {
  int p = s->p;
  int64_t *m = malloc((size_t)p * 2 * (size_t)p * sizeof *m);
  const int64_t *C = s->counts;
  for (int q = 0; m && q < p; q++)
    for (int r = 0; r < p; r++) {
      int64_t out = C[q], in = C[r], both = C[q] < C[r] ? C[q] : C[r];
      m[2 * p * q + r] = s->in_place ? both : out, m[2 * p * q + p + r] = s->in_place ? both : in;
    }
  if (!m) exit(2);
  s->counts = m, s->vall = 1, s->count = 0;
}

/* Build spec and resolved choice from command-line words; exits 2 on error. */
static inline void tool_setup(const char *coll, const char *algo, long p, long rank, long count,
                              const tool_opts *o, collc_spec *s, collc_choice *c) {
  char why[200];
  memset(s, 0, sizeof *s);
  s->coll = coll_from_name(coll);
  if (s->coll < 0) {
    fprintf(stderr, "unknown collective '%s'\n", coll);
    exit(2);
  }
  if (p < 1 || p > (1L << 30) || rank >= p || o->root >= p) {
    fprintf(stderr, "need 1 <= p and 0 <= rank, root < p\n");
    exit(2);
  }
  long eb = o->elem_bytes > 0 ? o->elem_bytes : 8;
  const coll_desc *d = coll_desc_of(s->coll);
  s->p = (int)p, s->rank = (int)rank, s->count = count, s->root = o->root;
  s->in_place = o->in_place || d->always_in_place;
  s->commutative = !o->noncommutative;
  s->unit_bytes = d->per_block ? eb * count : eb;
  if (d->counted) tool_counts(s, o->counts, count);
  if (d->counts_local) tool_a2av_counts(s);
  s->agreed = d->root_counts; /* (a tool knows every count) */
  if (o->nodes && !(s->layout = layout_parse(s->p, o->nodes))) {
    fprintf(stderr, "bad node layout '%s' for p = %ld\n", o->nodes, p);
    exit(2);
  }
  *s = spec_rank(s, (int)rank);
  if (choice_parse(s->coll, algo, c, why, sizeof why) || choice_resolve(s, c, why, sizeof why)) {
    fprintf(stderr, "%s\n", why);
    exit(2);
  }
}

#endif
