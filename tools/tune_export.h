/* tune_export.h - collc-tune's native side: which native algorithm a run
 * measured (the library's own switches, read from the environment), and
 * --export-ompi / --export-mpich: the native algorithm fastest at each
 * measured size, over tuning files of runs that each forced one (the
 * driver bench/tune-native.sh), as an Open MPI coll_tuned dynamic rules
 * file and an MPICH CSEL JSON file (README, "Native tuning, exported").
 * Rank 0 only; no MPI calls. */
#ifndef COLLC_TOOLS_TUNE_EXPORT_H
#define COLLC_TOOLS_TUNE_EXPORT_H

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/ir.h"
#include "plan/tuning.h"

/* A collective in both libraries' selection: Open MPI's COLLTYPE id,
 * whether its rules count the whole p-block message (collc counts one
 * block), MPICH's function-name part and an algorithm that always fits
 * (the exported CSEL file replaces MPICH's whole selection, so every
 * collective it serves needs a row). */
typedef struct {
  int coll, ompi_id, ompi_blocks;
  const char *mpich, *mpich_fallback;
} xp_coll;

static const xp_coll xp_colls[] = {
    {COLLC_COLL_ALLGATHER, 0, 1, "Allgather", "ring"},
    {COLLC_COLL_ALLREDUCE, 2, 0, "Allreduce", "recursive_doubling"},
    {COLLC_COLL_ALLTOALL, 3, 1, "Alltoall", "pairwise"}, /* (in place: xp_needs) */
    {COLLC_COLL_BARRIER, 6, 0, "Barrier", "dissemination"},
    {COLLC_COLL_BCAST, 7, 0, "Bcast", "binomial"},
    {COLLC_COLL_REDUCE, 11, 0, "Reduce", "binomial"},
    {COLLC_COLL_REDUCE_SCATTER_BLOCK, 13, 1, "Reduce_scatter_block", "recursive_doubling"},
};
#define XP_NCOLL (int)(sizeof xp_colls / sizeof xp_colls[0])
#define XP_MAXPT 64 /* sizes of a collective */

/* The environment variable that forces collective c's native algorithm in
 * library lib (a name or version text; Open MPI:
 * OMPI_MCA_coll_tuned_<coll>_algorithm, else
 * MPIR_CVAR_<COLL>_INTRA_ALGORITHM) into buf. */
static void xp_env_name(const char *lib, int c, char *buf, size_t len) {
  const char *n = coll_name(c);
  if (tune_lib_of(lib) == TUNE_LIB_OPEN_MPI) {
    snprintf(buf, len, "OMPI_MCA_coll_tuned_%s_algorithm", n);
    return;
  }
  snprintf(buf, len, "MPIR_CVAR_%s_INTRA_ALGORITHM", n);
  for (char *s = buf + 10; *s; s++) *s = (char)toupper((unsigned char)*s);
}

/* The native configuration this run measures: {coll: the forced algorithm
 * or "default"} for every collective of the table (lib: the file's). */
static json_t *xp_native_json(const char *lib) {
  json_t *o = json_object();
  for (int i = 0; i < XP_NCOLL; i++) {
    char env[80];
    xp_env_name(lib, xp_colls[i].coll, env, sizeof env);
    const char *v = getenv(env);
    json_object_set_new(o, coll_name(xp_colls[i].coll),
                        json_string(v && *v && strcmp(v, "auto") ? v : "default"));
  }
  return o;
}

/* o's member k as a string, "" if it is none. */
static const char *xp_str(const json_t *o, const char *k) {
  const char *s = json_string_value(json_object_get(o, k));
  return s ? s : "";
}

typedef struct {
  long long bytes;
  double us;          /* the slower mode's median */
  char algo[64];      /* the native configuration's value */
} xp_point;

typedef struct {
  char lib[32];
  int p;
  xp_point pt[XP_NCOLL][XP_MAXPT];
  int n[XP_NCOLL];
} xp_table;

/* Fold file f's native points into T (the fastest configuration per size;
 * MPICH's "default" is no algorithm name, so it never wins there); 0, or -1
 * with a reason in why (unreadable, not a tuning file, another library or p). */
static int xp_add(xp_table *T, const char *f, char *why, size_t len) {
  json_t *doc = json_load_file(f, 0, NULL), *pts, *nat, *q;
  const char *lib = json_string_value(json_object_get(json_object_get(doc, "mpi"), "library"));
  int p = (int)json_integer_value(json_object_get(doc, "p")), rc = -1;
  size_t k;
  pts = json_object_get(doc, "points"), nat = json_object_get(doc, "native");
  if (!doc || !lib || p < 1 || !json_is_array(pts) || !json_is_object(nat))
    snprintf(why, len, "%s: not a tuning file with a native configuration", f);
  else if (*T->lib && (strcmp(T->lib, lib) || T->p != p))
    snprintf(why, len, "%s: %s at p = %d, the others %s at p = %d", f, lib, p, T->lib, T->p);
  else rc = 0;
  if (!rc) snprintf(T->lib, sizeof T->lib, "%s", lib), T->p = p;
  json_array_foreach(rc ? NULL : pts, k, q) {
    int c = coll_from_name(xp_str(q, "coll")), i = 0;
    const char *a = json_string_value(json_object_get(nat, coll_name(c) ? coll_name(c) : ""));
    double us = fmax(json_number_value(json_object_get(q, "b2b_us")),
                     json_number_value(json_object_get(q, "barrier_us")));
    long long b = json_integer_value(json_object_get(q, "bytes"));
    if (strcmp(xp_str(q, "algo"), "native") || !a || strcmp(xp_str(q, "status"), "ok") || !(us > 0) ||
        strlen(a) >= sizeof T->pt[0][0].algo || (strcmp(lib, "Open MPI") && !strcmp(a, "default")))
      continue;
    while (i < XP_NCOLL && xp_colls[i].coll != c) i++;
    if (i == XP_NCOLL) continue;
    int j = 0;
    while (j < T->n[i] && T->pt[i][j].bytes != b) j++;
    if (j == T->n[i] && (j == XP_MAXPT || b < 0)) continue;
    if (j == T->n[i]) T->n[i]++, T->pt[i][j] = (xp_point){.bytes = b, .us = INFINITY};
    if (us < T->pt[i][j].us) T->pt[i][j].us = us, snprintf(T->pt[i][j].algo, 64, "%s", a);
  }
  json_decref(doc);
  return rc;
}

/* qsort's order of points by size. */
static int xp_cmp(const void *a, const void *b) {
  long long x = ((const xp_point *)a)->bytes, y = ((const xp_point *)b)->bytes;
  return (x > y) - (x < y);
}

/* The lowest size of T's point j of collective i (geometric midpoint with
 * the one below, 0 for the first), times m. */
static long long xp_lo(const xp_table *T, int i, int j, int m) {
  return j ? ((long long)sqrt((double)T->pt[i][j - 1].bytes * T->pt[i][j].bytes) + 1) * m : 0;
}

/* Write T as an Open MPI dynamic rules file (collective id, one comm size:
 * p, message sizes from which each algorithm applies, fan-in 0, segment 0:
 * the library's defaults); consecutive sizes with one algorithm merged. */
static int xp_write_ompi(const xp_table *T, const char *f) {
  FILE *o = fopen(f, "w");
  int nc = 0;
  if (!o) return -1;
  for (int i = 0; i < XP_NCOLL; i++) nc += T->n[i] > 0;
  fprintf(o, "# Open MPI coll_tuned dynamic rules, written by collc-tune --export-ompi at p = %d\n"
             "%d # collectives\n", T->p, nc);
  for (int i = 0; i < XP_NCOLL; i++) {
    int m = 0, mul = xp_colls[i].ompi_blocks ? T->p : 1;
    if (!T->n[i]) continue;
    for (int j = 0; j < T->n[i]; j++) m += !j || strcmp(T->pt[i][j].algo, T->pt[i][j - 1].algo);
    fprintf(o, "%d # %s\n1 # comm sizes\n%d # comm size\n%d # message sizes\n", xp_colls[i].ompi_id,
            coll_name(xp_colls[i].coll), T->p, m);
    for (int j = 0; j < T->n[i]; j++)
      if (!j || strcmp(T->pt[i][j].algo, T->pt[i][j - 1].algo))
        fprintf(o, "%lld %d 0 0 # bytes, algorithm, fan-in/out, segment size\n", xp_lo(T, i, j, mul),
                strcmp(T->pt[i][j].algo, "default") ? atoi(T->pt[i][j].algo) : 0);
  }
  return fclose(o) ? -1 : 0;
}

/* MPICH algorithms' restrictions, where their forced use falls back (the
 * CVAR path checks; a CSEL file's choice is not checked, it asserts):
 * commutative operations only, count >= the power of two below p, not in
 * place (alltoall: then pairwise_sendrecv_replace). */
enum { XP_COMM = 1, XP_COUNT = 2, XP_NOINPLACE = 4 };
static const struct {
  const char *coll, *algo;
  int needs;
} xp_needs[] = {
    {"Allreduce", "reduce_scatter_allgather", XP_COMM | XP_COUNT},
    {"Reduce", "reduce_scatter_gather", XP_COMM | XP_COUNT},
    {"Reduce_scatter_block", "recursive_halving", XP_COMM},
    {"Reduce_scatter_block", "pairwise", XP_COMM},
    {"Alltoall", "brucks", XP_NOINPLACE},
    {"Alltoall", "pairwise", XP_NOINPLACE},
    {"Alltoall", "scattered", XP_NOINPLACE},
};

/* {"algorithm=MPIR_<coll>_intra_<a>": {}}. */
static json_t *xp_named(const char *fn, const char *a);
static json_t *xp_leaf(const xp_coll *x, const char *a) {
  char intra[80];
  snprintf(intra, sizeof intra, "intra_%s", a);
  return xp_named(x->mpich, intra);
}

/* MPICH's CSEL node for algorithm a of table row x: the algorithm, behind
 * the tests its restrictions need (where they fail, x's fallback). */
static json_t *xp_mpich_algo(const xp_coll *x, const char *a) {
  int needs = 0;
  json_t *n = xp_leaf(x, a);
  for (size_t i = 0; i < sizeof xp_needs / sizeof xp_needs[0]; i++)
    if (!strcmp(xp_needs[i].coll, x->mpich) && !strcmp(xp_needs[i].algo, a)) needs = xp_needs[i].needs;
  if (needs & XP_COUNT) n = json_pack("{s:o,s:o}", "count<pow2", xp_leaf(x, x->mpich_fallback), "count=any", n);
  if (needs & XP_COMM)
    n = json_pack("{s:o,s:o}", "is_commutative=no", xp_leaf(x, x->mpich_fallback), "is_commutative=yes", n);
  if (needs & XP_NOINPLACE)
    n = json_pack("{s:o,s:o}", "is_sendbuf_inplace=yes", xp_leaf(x, "pairwise_sendrecv_replace"),
                  "is_sendbuf_inplace=no", n);
  return n;
}

/* The rest of MPICH's collectives, which a CSEL file must also serve
 * (MPICH asserts on a call its file has no row for): one algorithm that
 * always fits per communicator kind, "allcomm" ones for both (inter NULL);
 * inplace: the intra one for MPI_IN_PLACE where the other does not take it. */
static const struct {
  const char *coll, *fn, *intra, *inter, *inplace;
} xp_rest[] = {
    {"allgatherv", "Allgatherv", "allcomm_nb", NULL, NULL},
    {"alltoallv", "Alltoallv", "allcomm_nb", NULL, NULL},
    {"alltoallw", "Alltoallw", "allcomm_nb", NULL, NULL},
    {"exscan", "Exscan", "allcomm_nb", NULL, NULL},
    {"gather", "Gather", "allcomm_nb", NULL, NULL},
    {"gatherv", "Gatherv", "allcomm_linear", NULL, NULL},
    {"reduce_scatter", "Reduce_scatter", "allcomm_nb", NULL, NULL},
    {"scan", "Scan", "allcomm_nb", NULL, NULL},
    {"scatter", "Scatter", "allcomm_nb", NULL, NULL},
    {"scatterv", "Scatterv", "allcomm_linear", NULL, NULL},
    {"neighbor_allgather", "Neighbor_allgather", "allcomm_nb", NULL, NULL},
    {"neighbor_allgatherv", "Neighbor_allgatherv", "allcomm_nb", NULL, NULL},
    {"neighbor_alltoall", "Neighbor_alltoall", "allcomm_nb", NULL, NULL},
    {"neighbor_alltoallv", "Neighbor_alltoallv", "allcomm_nb", NULL, NULL},
    {"neighbor_alltoallw", "Neighbor_alltoallw", "allcomm_nb", NULL, NULL},
    {"iallgather", "Iallgather", "intra_sched_ring", "inter_sched_local_gather_remote_bcast", NULL},
    {"iallgatherv", "Iallgatherv", "intra_sched_ring", "inter_sched_remote_gather_local_bcast",
     NULL},
    {"iallreduce", "Iallreduce", "intra_sched_naive", "inter_sched_remote_reduce_local_bcast", NULL},
    {"ialltoall", "Ialltoall", "intra_sched_brucks", "inter_sched_pairwise_exchange",
     "intra_sched_inplace"},
    {"ialltoallv", "Ialltoallv", "intra_sched_blocked", "inter_sched_pairwise_exchange",
     "intra_sched_inplace"},
    {"ialltoallw", "Ialltoallw", "intra_sched_blocked", "inter_sched_pairwise_exchange",
     "intra_sched_inplace"},
    {"ibarrier", "Ibarrier", "intra_sched_recursive_doubling", "inter_sched_bcast", NULL},
    {"ibcast", "Ibcast", "intra_sched_binomial", "inter_sched_flat", NULL},
    {"iexscan", "Iexscan", "intra_sched_recursive_doubling", NULL, NULL},
    {"igather", "Igather", "intra_sched_binomial", "inter_sched_long", NULL},
    {"igatherv", "Igatherv", "allcomm_sched_linear", NULL, NULL},
    {"ineighbor_allgather", "Ineighbor_allgather", "allcomm_sched_linear", NULL, NULL},
    {"ineighbor_allgatherv", "Ineighbor_allgatherv", "allcomm_sched_linear", NULL, NULL},
    {"ineighbor_alltoall", "Ineighbor_alltoall", "allcomm_sched_linear", NULL, NULL},
    {"ineighbor_alltoallv", "Ineighbor_alltoallv", "allcomm_sched_linear", NULL, NULL},
    {"ineighbor_alltoallw", "Ineighbor_alltoallw", "allcomm_sched_linear", NULL, NULL},
    {"ireduce", "Ireduce", "intra_sched_binomial", "inter_sched_local_reduce_remote_send", NULL},
    {"ireduce_scatter", "Ireduce_scatter", "intra_sched_recursive_doubling",
     "inter_sched_remote_reduce_local_scatterv", NULL},
    {"ireduce_scatter_block", "Ireduce_scatter_block", "intra_sched_recursive_doubling",
     "inter_sched_remote_reduce_local_scatterv", NULL},
    {"iscan", "Iscan", "intra_sched_recursive_doubling", NULL, NULL},
    {"iscatter", "Iscatter", "intra_sched_binomial", "inter_sched_linear", NULL},
    {"iscatterv", "Iscatterv", "allcomm_sched_linear", NULL, NULL},
};

/* {"algorithm=MPIR_<fn>_<a>": {}}. */
static json_t *xp_named(const char *fn, const char *a) {
  char k[160];
  snprintf(k, sizeof k, "algorithm=MPIR_%s_%s", fn, a);
  return json_pack("{s:{}}", k);
}

/* xp_rest's rows into doc. */
static void xp_mpich_rest(json_t *doc) {
  for (size_t i = 0; i < sizeof xp_rest / sizeof xp_rest[0]; i++) {
    char k[80];
    json_t *n = xp_named(xp_rest[i].fn, xp_rest[i].intra);
    if (xp_rest[i].inplace)
      n = json_pack("{s:o,s:o}", "is_sendbuf_inplace=yes", xp_named(xp_rest[i].fn, xp_rest[i].inplace),
                    "is_sendbuf_inplace=no", n);
    if (xp_rest[i].inter)
      n = json_pack("{s:o,s:o}", "comm_type=intra", n, "comm_type=inter",
                    xp_named(xp_rest[i].fn, xp_rest[i].inter));
    snprintf(k, sizeof k, "collective=%s", xp_rest[i].coll);
    json_object_set_new(doc, k, n);
  }
}

/* Write T as an MPICH CSEL JSON file: per collective of the table, intra
 * communicators of up to p ranks by average message size (the measured
 * algorithm up to the midpoint to the next size), other intra ones the
 * table's fallback, inter ones the nonblocking algorithm; then xp_rest. */
static int xp_write_mpich(const xp_table *T, const char *f) {
  json_t *doc = json_object();
  for (int i = 0; i < XP_NCOLL; i++) {
    const xp_coll *x = &xp_colls[i];
    json_t *sizes = json_object(), *intra = json_object(), *top = json_object();
    char k[80];
    for (int j = 0; j < T->n[i]; j++) {
      if (j + 1 < T->n[i] && !strcmp(T->pt[i][j].algo, T->pt[i][j + 1].algo)) continue;
      if (j + 1 < T->n[i]) snprintf(k, sizeof k, "avg_msg_size<=%lld", xp_lo(T, i, j + 1, 1) - 1);
      else snprintf(k, sizeof k, "avg_msg_size=any");
      json_object_set_new(sizes, k, xp_mpich_algo(x, T->pt[i][j].algo));
    }
    snprintf(k, sizeof k, "comm_size<=%d", T->p);
    if (T->n[i]) json_object_set_new(intra, k, sizes);
    else json_decref(sizes);
    json_object_set_new(intra, "comm_size=any", xp_mpich_algo(x, x->mpich_fallback));
    json_object_set_new(top, "comm_type=intra", intra);
    json_object_set_new(top, "comm_type=inter", xp_named(x->mpich, "allcomm_nb"));
    snprintf(k, sizeof k, "collective=%s", coll_name(x->coll));
    json_object_set_new(doc, k, top);
  }
  xp_mpich_rest(doc);
  int rc = json_dump_file(doc, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) ? -1 : 0;
  json_decref(doc);
  return rc;
}

/* collc-tune --export-ompi/--export-mpich: fold the tuning files f[n] and
 * write the files asked for (NULL: not asked); 0, or 2 (a message on stderr). */
static int xp_export(const char *ompi, const char *mpich, char **f, int n) {
  static xp_table T;
  char why[600];
  memset(&T, 0, sizeof T);
  for (int i = 0; i < n; i++)
    if (xp_add(&T, f[i], why, sizeof why)) return fprintf(stderr, "collc-tune: %s\n", why), 2;
  for (int i = 0; i < XP_NCOLL; i++) qsort(T.pt[i], (size_t)T.n[i], sizeof T.pt[i][0], xp_cmp);
  if (!n || (ompi && strcmp(T.lib, "Open MPI")) || (mpich && strcmp(T.lib, "MPICH")))
    return fprintf(stderr, "collc-tune: export: no tuning files of that library\n"), 2;
  if ((ompi && xp_write_ompi(&T, ompi)) || (mpich && xp_write_mpich(&T, mpich)))
    return fprintf(stderr, "collc-tune: export: cannot write %s\n", ompi ? ompi : mpich), 2;
  return 0;
}

#endif
