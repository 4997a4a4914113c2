/* coll.c - what each collective means: one row (coll_desc, ir.h) per
 * collective, and the functions its rows name.
 *
 * Adding a collective: its X(SUFFIX) in COLLC_COLLS, its row coll_SUFFIX
 * here (the table below will not compile without it), its generators'
 * registry rows, and its MPI entry points. */
#include <stdio.h>
#include <string.h>
#include "ir.h"

/* ---- buffer sizes in units ---- */

static int64_t units_one(const collc_spec *s) {
  (void)s;
  return 1;
}

static int64_t units_none(const collc_spec *s) {
  (void)s;
  return 0;
}

static int64_t units_p(const collc_spec *s) { return s->p; }

static int64_t units_count(const collc_spec *s) { return s->count; }

static int64_t units_p_count(const collc_spec *s) { return s->p * s->count; }

/* reduce_scatter_block's RECV: its own block, or in place the whole input. */
static int64_t units_rsb_out(const collc_spec *s) {
  return s->in_place ? s->p * s->count : s->count;
}

/* ---- counted collectives: p blocks of spec.counts, packed in rank order ---- */

int64_t spec_block_off(const collc_spec *s, int r) {
  int64_t off = 0;
  if (s->displs) return s->displs[r];
  for (int q = 0; q < r; q++) off += s->counts[q];
  return off;
}

int64_t spec_block_len(const collc_spec *s, int r) { return s->counts[r]; }

#define FNV_START 1469598103934665603ull

/* One FNV-1a step of h over value v. */
static uint64_t fnv(uint64_t h, int64_t v) { return (h ^ (uint64_t)v) * 1099511628211ull; }

/* FNV-1a over v[0..n), or 0 for no vector. */
static uint64_t hash_vec(const int64_t *v, int n) {
  uint64_t h = FNV_START;
  for (int q = 0; v && q < n; q++) h = fnv(h, v[q]);
  return v ? h : 0;
}

int spec_vec_len(const collc_spec *s) {
  const coll_desc *d = coll_desc_of(s->coll);
  return d && d->counts_local ? 2 * s->p : s->p;
}

const int64_t *spec_own_vec(const collc_spec *s, const int64_t *v) {
  return v && s->vall ? v + (size_t)s->rank * (size_t)spec_vec_len(s) : v;
}

uint64_t spec_counts_hash(const collc_spec *s) {
  return hash_vec(spec_own_vec(s, s->counts), spec_vec_len(s));
}

uint64_t spec_displs_hash(const collc_spec *s) {
  return hash_vec(spec_own_vec(s, s->displs), spec_vec_len(s));
}

/* ---- alltoallv: each rank's send and receive vectors ---- */

uint64_t spec_sends_hash(const collc_spec *s) {
  uint64_t h = FNV_START;
  if (!s->counts || !s->vall) return 0;
  for (int r = 0; r < s->p; r++)
    for (int q = 0; q < s->p; q++) h = fnv(h, a2av_count(s, r, A2AV_SEND, q));
  return h;
}

/* Index of rank r's side `side` entry q in counts/displs (in place: the receive side). */
static size_t a2av_at(const collc_spec *s, int r, int side, int q) {
  size_t row = s->vall ? (size_t)r * 2 * (size_t)s->p : 0;
  return row + (size_t)(s->in_place ? A2AV_RECV : side) * (size_t)s->p + (size_t)q;
}

int64_t a2av_count(const collc_spec *s, int r, int side, int q) {
  return s->counts[a2av_at(s, r, side, q)];
}

int64_t a2av_displ(const collc_spec *s, int r, int side, int q) {
  int64_t off = 0;
  if (s->displs) return s->displs[a2av_at(s, r, side, q)];
  for (int j = 0; j < q; j++) off += a2av_count(s, r, side, j);
  return off;
}

/* Units of rank s->rank's buffer on side: up to the end of its last nonempty block. */
static int64_t a2av_end(const collc_spec *s, int side) {
  int64_t end = 0;
  for (int q = 0; q < s->p; q++) {
    int64_t n = a2av_count(s, s->rank, side, q), e = a2av_displ(s, s->rank, side, q) + n;
    if (n && e > end) end = e;
  }
  return end;
}

static int64_t units_a2av_in(const collc_spec *s) {
  return a2av_end(s, s->in_place ? A2AV_RECV : A2AV_SEND);
}

static int64_t units_a2av_out(const collc_spec *s) { return a2av_end(s, A2AV_RECV); }

static int64_t units_a2av_vec(const collc_spec *s) {
  int64_t a = units_a2av_in(s), b = units_a2av_out(s);
  return a > b ? a : b;
}

/* allgatherv's RECV: up to the end of the last block (packed: the sum). */
static int64_t units_gatherv_out(const collc_spec *s) {
  int64_t end = s->displs ? 0 : s->count;
  for (int q = 0; s->displs && q < s->p; q++)
    if (s->counts[q] && s->displs[q] + s->counts[q] > end) end = s->displs[q] + s->counts[q];
  return end;
}

/* allgatherv's input: this rank's block. */
static int64_t units_own_block(const collc_spec *s) { return spec_block_len(s, s->rank); }

/* reduce_scatter's RECV: its own block, or in place the whole input. */
static int64_t units_rs_out(const collc_spec *s) {
  return s->in_place ? s->count : spec_block_len(s, s->rank);
}

/* reduce's RECV: the result at the root, nothing elsewhere. */
static int64_t units_root_count(const collc_spec *s) {
  return s->rank == s->root ? s->count : 0;
}

/* ---- rooted collectives: gather, scatter and their counted forms ---- */

static int at_root(const collc_spec *s) { return s->rank == s->root; }

/* gather's RECV: p blocks at the root, nothing elsewhere. */
static int64_t units_root_p(const collc_spec *s) { return at_root(s) ? s->p : 0; }

/* scatter's RECV: its block, or at the root in place the whole input. */
static int64_t units_scatter_out(const collc_spec *s) {
  return at_root(s) && s->in_place ? s->p : 1;
}

/* gatherv's RECV: the blocks at the root (as allgatherv's), nothing elsewhere. */
static int64_t units_gatherv_root(const collc_spec *s) {
  return at_root(s) ? units_gatherv_out(s) : 0;
}

/* scatterv's SEND: the blocks at the root, nothing elsewhere. */
static int64_t units_scatterv_in(const collc_spec *s) { return units_gatherv_root(s); }

/* scatterv's RECV: its block, or at the root in place the whole input. */
static int64_t units_scatterv_out(const collc_spec *s) {
  return at_root(s) && s->in_place ? units_gatherv_out(s) : spec_block_len(s, s->rank);
}

/* ---- where the input lies ---- */

/* Every rank's whole input: SEND, or RECV from unit 0 in place. */
static coll_region input_own(const collc_spec *s, int r) {
  collc_spec t = spec_rank(s, r);
  coll_region in = {t.in_place ? BUF_RECV : BUF_SEND, 0, coll_desc_of(t.coll)->input_units(&t)};
  return in;
}

/* allgather: one block, in place already at its place r of RECV. */
static coll_region input_allgather(const collc_spec *s, int r) {
  coll_region in = input_own(s, r);
  if (in.buf == BUF_RECV) in.off = r;
  return in;
}

/* allgatherv: rank r's block, in place already at its place in RECV. */
static coll_region input_allgatherv(const collc_spec *s, int r) {
  collc_spec t = spec_rank(s, r);
  coll_region in = {BUF_SEND, 0, spec_block_len(s, r)};
  if (t.in_place) in.buf = BUF_RECV, in.off = spec_block_off(s, r);
  return in;
}

/* bcast: only the root's RECV is input. */
static coll_region input_root(const collc_spec *s, int r) {
  coll_region in = input_own(s, r);
  if (r != s->root) in.units = 0;
  return in;
}

/* ---- the result each unit must hold (the verifier's oracle) ---- */

static coll_want leaf(int rank, int64_t unit) {
  coll_want w = {COLL_LEAF, rank, unit};
  return w;
}

static coll_want fold(int64_t unit) {
  coll_want w = {COLL_FOLD, 0, unit};
  return w;
}

static const coll_want not_result = {COLL_NOT_RESULT, 0, 0};

/* Block u of r's RECV is block r of rank u's input. */
static coll_want expect_alltoall(const collc_spec *s, int r, int64_t u) {
  (void)s;
  return leaf((int)u, r);
}

/* Block u is rank u's input block. */
static coll_want expect_allgather(const collc_spec *s, int r, int64_t u) {
  (void)s, (void)r;
  return leaf((int)u, 0);
}

/* Element u is the root's element u. */
static coll_want expect_bcast(const collc_spec *s, int r, int64_t u) {
  (void)r;
  return leaf(s->root, u);
}

/* Element u is element u of every rank's input combined. */
static coll_want expect_allreduce(const collc_spec *s, int r, int64_t u) {
  (void)s, (void)r;
  return fold(u);
}

/* The same at the root; other ranks have no result. */
static coll_want expect_reduce(const collc_spec *s, int r, int64_t u) {
  return r == s->root ? fold(u) : not_result;
}

/* Element u of r's block r of the combined input (in place, the units
 * after the first block are not result). */
static coll_want expect_rsb(const collc_spec *s, int r, int64_t u) {
  return u < s->count ? fold(r * s->count + u) : not_result;
}

/* Element u is element u - off(q) of the input of the rank q whose block holds it. */
static coll_want expect_allgatherv(const collc_spec *s, int r, int64_t u) {
  (void)r;
  for (int q = 0; q < s->p; q++) {
    int64_t off = spec_block_off(s, q);
    if (u >= off && u < off + s->counts[q]) return leaf(q, u - off);
  }
  return not_result; /* a gap between blocks */
}

/* Element u of r's block of the combined input (in place, the units after
 * the first block are not result). */
static coll_want expect_rs(const collc_spec *s, int r, int64_t u) {
  return u < spec_block_len(s, r) ? fold(spec_block_off(s, r) + u) : not_result;
}

/* gather: block u of the root's RECV is rank u's input block. */
static coll_want expect_gather(const collc_spec *s, int r, int64_t u) {
  return r == s->root ? leaf((int)u, 0) : not_result;
}

/* scatter: a rank's block is block r of the root's input (in place at the
 * root, only its own block r of RECV is result: the input left where it is). */
static coll_want expect_scatter(const collc_spec *s, int r, int64_t u) {
  collc_spec t = spec_rank(s, r);
  if (r == s->root && t.in_place) return u == r ? leaf(r, r) : not_result;
  return u == 0 ? leaf(s->root, r) : not_result;
}

/* gatherv: the root's RECV as allgatherv's; no result elsewhere. */
static coll_want expect_gatherv(const collc_spec *s, int r, int64_t u) {
  return r == s->root ? expect_allgatherv(s, r, u) : not_result;
}

/* scatterv: element u of rank r's block is element off(r) + u of the
 * root's input (in place at the root: its own block, where it lies). */
static coll_want expect_scatterv(const collc_spec *s, int r, int64_t u) {
  collc_spec t = spec_rank(s, r);
  int64_t off = spec_block_off(s, r), len = spec_block_len(s, r);
  if (r == s->root && t.in_place) return u >= off && u < off + len ? leaf(r, u) : not_result;
  return u < len ? leaf(s->root, off + u) : not_result;
}

/* Element u of r's RECV: element k of the block from the rank q whose
 * receive block holds it, which q sent from its send side at its displ. */
static coll_want expect_alltoallv(const collc_spec *s, int r, int64_t u) {
  for (int q = 0; q < s->p; q++) {
    int64_t off = a2av_displ(s, r, A2AV_RECV, q);
    if (u >= off && u < off + a2av_count(s, r, A2AV_RECV, q))
      return leaf(q, a2av_displ(s, q, A2AV_SEND, r) + (u - off));
  }
  return not_result; /* a gap between blocks */
}

/* A barrier has no result: its oracle is synchronizes (every rank's exit
 * causally after every rank's entry), which the verifier checks apart. */
static coll_want expect_none(const collc_spec *s, int r, int64_t u) {
  (void)s, (void)r, (void)u;
  return not_result;
}

/* ---- the native library's algorithms (the simulator's model) ----
 * After MPICH's documented defaults, which Open MPI's tuned rules follow
 * in kind: all-to-all Bruck up to 256 B per block (p >= 8), then all
 * posted at once up to 32 KB, then pairwise; allreduce recursive doubling
 * up to 2 KB (recexch's all-'*' steps of p's prime factors), then
 * Rabenseifner (recexch's default list: reduce-scatter halving, allgather
 * doubling); reduce_scatter_block recursive halving; allgather recursive
 * doubling; reduce and bcast a binomial tree. */

static const char *native_alltoall(const collc_spec *s, char *buf, size_t len) {
  (void)buf, (void)len;
  long long b = s->unit_bytes;
  return b <= 256 && s->p >= 8 ? "bruck" : b <= 32768 ? "linear" : "pairwise";
}

static const char *native_allreduce(const collc_spec *s, char *buf, size_t len) {
  if (s->count * s->unit_bytes > 2048) return "recexch";
  size_t n = (size_t)snprintf(buf, len, "recexch:");
  for (int q = s->p, f = 2; q > 1 && n < len; f++)
    for (; q % f == 0 && n < len; q /= f)
      n += (size_t)snprintf(buf + n, len - n, "%s*%d", q == s->p ? "" : ",", f);
  return buf;
}

static const char *native_recexch(const collc_spec *s, char *buf, size_t len) {
  (void)s, (void)buf, (void)len;
  return "recexch";
}

static const char *native_tree(const collc_spec *s, char *buf, size_t len) {
  (void)s, (void)buf, (void)len;
  return "tree";
}

/* Barrier: MPICH's and Open MPI's (tuned, small p) dissemination, radix 2. */
static const char *native_dissem(const collc_spec *s, char *buf, size_t len) {
  (void)s, (void)buf, (void)len;
  return "dissem";
}

/* ---- the simulator's candidates ---- */

static const char *const cand_alltoall[] = {"torus:d=2", "torus:d=3", "torus:d=4", "hier",
                                            "bruck", "pairwise", "linear", NULL};
static const char *const cand_allreduce[] = {"hier", "hier:node=tree", "hier:node=copyin",
                                             "recexch", "cyclic", "tree", NULL};
static const char *const cand_rsb[] = {"hier", "hier:node=copyin", "recexch", "cyclic", NULL};
static const char *const cand_allgather[] = {"hier", "recexch", "cyclic", NULL};
static const char *const cand_reduce[] = {"hier", "hier:node=copyin", "tree", NULL};
static const char *const cand_bcast[] = {"hier", "tree", NULL};
static const char *const cand_barrier[] = {"hier", "dissem", "dissem:4", NULL};
static const char *const cand_counted[] = {"recexch", "cyclic", NULL};
/* Gather, scatter: none yet (the default stays native until measured);
 * gatherv, scatterv: none (the simulator would compile every rank's
 * program from one rank's counts, which off the root are not known). */
static const char *const cand_none[] = {NULL};

static const char *const cand_a2av[] = {"pairwise", "linear", NULL};

/* Alltoallv: the native library's, after MPICH's default (all posted at once). */
static const char *native_linear(const collc_spec *s, char *buf, size_t len) {
  (void)s, (void)buf, (void)len;
  return "linear";
}

/* ---- the rows ---- */

static const coll_desc coll_ALLTOALL = {
    .family = COLLC_COLL_ALLTOALL,
    .name = "alltoall", .per_block = 1,
    .input_units = units_p, .output_units = units_p, .vector_units = units_p,
    .input = input_own, .expect = expect_alltoall,
    .shm_inner = "pairwise", .hier_net = NULL,
    .native_model = native_alltoall, .sim_candidates = cand_alltoall};

static const coll_desc coll_ALLGATHER = {
    .family = COLLC_COLL_ALLGATHER,
    .name = "allgather", .per_block = 1,
    .input_units = units_one, .output_units = units_p, .vector_units = units_p,
    .input = input_allgather, .expect = expect_allgather,
    .shm_inner = "recexch", .hier_net = NULL,
    .native_model = native_recexch, .sim_candidates = cand_allgather};

static const coll_desc coll_ALLREDUCE = {
    .family = COLLC_COLL_ALLREDUCE,
    .name = "allreduce", .reduces = 1,
    .input_units = units_count, .output_units = units_count, .vector_units = units_count,
    .input = input_own, .expect = expect_allreduce,
    .shm_inner = "recexch", .hier_net = "recexch",
    .native_model = native_allreduce, .sim_candidates = cand_allreduce};

static const coll_desc coll_REDUCE_SCATTER_BLOCK = {
    .family = COLLC_COLL_REDUCE_SCATTER_BLOCK,
    .name = "reduce_scatter_block", .reduces = 1,
    .input_units = units_p_count, .output_units = units_rsb_out, .vector_units = units_p_count,
    .input = input_own, .expect = expect_rsb,
    .shm_inner = "recexch", .hier_net = NULL,
    .native_model = native_recexch, .sim_candidates = cand_rsb};

static const coll_desc coll_REDUCE = {
    .family = COLLC_COLL_REDUCE,
    .name = "reduce", .reduces = 1, .rooted = 1, .in_place_at_root = 1,
    .input_units = units_count, .output_units = units_root_count, .vector_units = units_count,
    .input = input_own, .expect = expect_reduce,
    .shm_inner = "tree", .hier_net = "tree",
    .native_model = native_tree, .sim_candidates = cand_reduce};

static const coll_desc coll_BCAST = {
    .family = COLLC_COLL_BCAST,
    .name = "bcast", .rooted = 1, .always_in_place = 1, .elem_may_differ = 1,
    .input_units = units_count, .output_units = units_count, .vector_units = units_count,
    .input = input_root, .expect = expect_bcast,
    .shm_inner = "tree", .hier_net = "tree",
    .native_model = native_tree, .sim_candidates = cand_bcast};

static const coll_desc coll_BARRIER = {
    .family = COLLC_COLL_BARRIER,
    .name = "barrier", .synchronizes = 1,
    .input_units = units_none, .output_units = units_none, .vector_units = units_none,
    .input = input_own, .expect = expect_none,
    .shm_inner = "dissem", .hier_net = "dissem",
    .native_model = native_dissem, .sim_candidates = cand_barrier};

/* Allgatherv: allgather's generators over unequal blocks of elements, at
 * spec.displs (gaps between them are not result and stay untouched). */
static const coll_desc coll_ALLGATHERV = {
    .family = COLLC_COLL_ALLGATHER,
    .name = "allgatherv", .counted = 1,
    .input_units = units_own_block, .output_units = units_gatherv_out,
    .vector_units = units_gatherv_out,
    .input = input_allgatherv, .expect = expect_allgatherv,
    .shm_inner = "recexch", .hier_net = NULL,
    .native_model = native_recexch, .sim_candidates = cand_counted};

/* Reduce_scatter: reduce_scatter_block's generators over unequal blocks. */
static const coll_desc coll_REDUCE_SCATTER = {
    .family = COLLC_COLL_REDUCE_SCATTER_BLOCK,
    .name = "reduce_scatter", .reduces = 1, .counted = 1,
    .input_units = units_count, .output_units = units_rs_out, .vector_units = units_count,
    .input = input_own, .expect = expect_rs,
    .shm_inner = "recexch", .hier_net = NULL,
    .native_model = native_recexch, .sim_candidates = cand_counted};

/* Gather: p blocks to the root; in place there its own block is at its
 * place root of RECV already. */
static const coll_desc coll_GATHER = {
    .family = COLLC_COLL_GATHER,
    .name = "gather", .rooted = 1, .per_block = 1, .in_place_at_root = 1,
    .input_units = units_one, .output_units = units_root_p, .vector_units = units_p,
    .input = input_allgather, .expect = expect_gather,
    .shm_inner = "tree", .hier_net = NULL,
    .native_model = native_tree, .sim_candidates = cand_none};

/* Scatter: the root's p blocks, one to each rank. In place at the root (the
 * caller's MPI_IN_PLACE recvbuf) the root's RECV is its input: the entry
 * point binds RECV to sendbuf, and the root's block stays where it is. */
static const coll_desc coll_SCATTER = {
    .family = COLLC_COLL_SCATTER,
    .name = "scatter", .rooted = 1, .per_block = 1, .in_place_at_root = 1,
    .input_units = units_root_p, .output_units = units_scatter_out, .vector_units = units_p,
    .input = input_own, .expect = expect_scatter,
    .shm_inner = "tree", .hier_net = NULL,
    .native_model = native_tree, .sim_candidates = cand_none};

/* Gatherv: blocks of elements to the root at its spec.displs (gaps are not
 * result). Counts are known only at the root (root_counts). */
static const coll_desc coll_GATHERV = {
    .family = COLLC_COLL_GATHERV,
    .name = "gatherv", .rooted = 1, .counted = 1, .root_counts = 1, .in_place_at_root = 1,
    .input_units = units_own_block, .output_units = units_gatherv_root,
    .vector_units = units_gatherv_out,
    .input = input_allgatherv, .expect = expect_gatherv,
    .shm_inner = "linear", .hier_net = NULL,
    .native_model = native_linear, .sim_candidates = cand_none};

/* Scatterv: the root's blocks at its spec.displs, one to each rank; in
 * place at the root as scatter. Counts are known only at the root. */
static const coll_desc coll_SCATTERV = {
    .family = COLLC_COLL_SCATTERV,
    .name = "scatterv", .rooted = 1, .counted = 1, .root_counts = 1, .in_place_at_root = 1,
    .input_units = units_scatterv_in, .output_units = units_scatterv_out,
    .vector_units = units_gatherv_out,
    .input = input_own, .expect = expect_scatterv,
    .shm_inner = "linear", .hier_net = NULL,
    .native_model = native_linear, .sim_candidates = cand_none};
/* Alltoallv: units are elements (SEND: of sendtype, RECV: of recvtype);
 * each rank's program knows only its own vectors (counts_local). */
static const coll_desc coll_ALLTOALLV = {
    .family = COLLC_COLL_ALLTOALLV,
    .name = "alltoallv", .counted = 1, .counts_local = 1,
    .input_units = units_a2av_in, .output_units = units_a2av_out,
    .vector_units = units_a2av_vec,
    .input = input_own, .expect = expect_alltoallv,
    .shm_inner = "pairwise", .hier_net = NULL,
    .native_model = native_linear, .sim_candidates = cand_a2av};

/* Every collective's row: a missing coll_<SUFFIX> does not compile. */
static const coll_desc *const coll_descs[COLLC_COLL_COUNT] = {
#define COLLC_COLL_ROW(e) [COLLC_COLL_##e] = &coll_##e,
    COLLC_COLLS(COLLC_COLL_ROW)
#undef COLLC_COLL_ROW
};

const coll_desc *coll_desc_of(int coll) {
  return coll >= 0 && coll < COLLC_COLL_COUNT ? coll_descs[coll] : NULL;
}

const char *coll_name(int coll) {
  const coll_desc *d = coll_desc_of(coll);
  return d ? d->name : NULL;
}

int coll_reduces(int coll) {
  const coll_desc *d = coll_desc_of(coll);
  return d ? d->reduces : 0;
}

int coll_family(int coll) {
  const coll_desc *d = coll_desc_of(coll);
  return d ? d->family : coll;
}

int coll_from_name(const char *name) {
  for (int c = 0; c < COLLC_COLL_COUNT; c++)
    if (strcmp(name, coll_descs[c]->name) == 0) return c;
  return -1;
}
