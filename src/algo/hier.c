/* hier.c - node-aware collectives: shared memory inside a node, messages
 * between nodes (allreduce, reduce, bcast here; hier_move.c the others).
 *
 * After A. Jocksch et al. (IJHPCA 2026), section 3: the intra-node part of
 * a schedule runs in a shared segment with flag counters instead of
 * messages; the inter-node part is any of our message schedules, run among
 * one rank per node (a lane).
 *
 * Parameters: hier[:node=rs|tree|sockets|copyin[:g=N]|<list>][:net=<algorithm>]
 * (net last: it takes the rest of the text). Allreduce node=rs: every rank copies its
 * input into its region; local rank i < m (m = ranks on the smallest node)
 * reduces block i of all regions (blocks of whole cache lines), lane i
 * allreduces it between nodes (net=, default recexch), and every rank
 * copies the m blocks out. node=tree: local rank 0 reduces everything,
 * allreduces it among the nodes' rank 0s, and the others copy it out.
 * node=<factor list>: hier_steps.c; node=sockets: the factor list that
 * makes the first step among the ranks of a socket (sockets_list).
 * node=copyin (allreduce, reduce, reduce_scatter_block): the node stage
 * is hier_copyin.c's cyclic copy-in reduction in groups instead of the
 * copy-in (hier_stage, hier_node_fold); allreduce then as node=rs on the
 * groups' sums.
 * Reduce and bcast: a tree through one rank per node (the root on its
 * node), net= its inter-node algorithm (default tree).
 * Contributions combine in local order inside a node and in node order
 * between nodes: rank order when every node holds consecutive ranks, so a
 * non-commutative operation needs such a layout (resolve says so).
 *
 * Cost (allreduce rs, n units, k ranks per node, N nodes): segment traffic
 * 2n per rank (copy in, copy out) plus n reduced per rank; between nodes an
 * allreduce of n/m units per lane; 3 flag steps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hier.h"

void hier_init(hx *H, const collc_spec *s, const collc_choice *c, collc_prog *P, int64_t units) {
  const collc_layout *L = s->layout;
  H->s = s, H->P = P, H->L = L;
  H->node = L->node_of[s->rank], H->me = L->local_of[s->rank], H->k = L->size[H->node];
  int64_t line = s->unit_bytes > 0 && 64 % s->unit_bytes == 0 ? 64 / s->unit_bytes : 1;
  H->S = (units + line - 1) / line * line;
  H->g = 0, H->staged = 0, H->next = 2, H->ready = 0;
  if (H->k > 1) prog_need_shm(P, H->S * H->k > 0 ? H->S * H->k : 1); /* (flags even if empty) */
  if (c->variant == HIER_COPYIN) hier_copyin_init(H, c->group);
}

collc_opnd hier_region(hx *H, int j, int64_t off, int64_t n) {
  return compact(H->P, BUF_SHM, j * H->S + off, n);
}

void hier_await_all(hx *H, int64_t step) {
  for (int j = 0; j < H->k; j++)
    if (j != H->me) prog_await(H->P, hier_rank(H, j), step);
}

void hier_enter(hx *H) { hier_await_all(H, 0); }

void hier_leave(hx *H) {
  if (H->k > 1) prog_signal(H->P, STEP_DONE);
}

void hier_fold(collc_prog *P, const collc_opnd *pieces, int n, collc_opnd dst) {
  if (n == 1) {
    prog_copy(P, pieces[0], dst);
    return;
  }
  prog_combine(P, pieces[n - 2], pieces[n - 1], dst);
  for (int j = n - 3; j >= 0; j--) prog_reduce(P, pieces[j], dst);
}

collc_opnd hier_input(hx *H, int64_t off, int64_t n) {
  return compact(H->P, H->s->in_place ? BUF_RECV : BUF_SEND, off, n);
}

void hier_stage(hx *H, int64_t n) {
  H->staged = n;
  if (H->g) {
    hier_copyin_stage(H, n);
    return;
  }
  hier_enter(H);
  prog_copy(H->P, hier_input(H, 0, n), hier_region(H, H->me, 0, n));
  prog_signal(H->P, 1);
  H->next = 2;
}

/* Fold block [off, off+n) of all k regions into dst. */
static void fold_regions(hx *H, int64_t off, int64_t n, collc_opnd dst) {
  collc_opnd *pieces = malloc((size_t)H->k * sizeof *pieces);
  if (!pieces) {
    prog_fail(H->P, COLLC_ENOMEM, "hier: out of memory");
    return;
  }
  for (int j = 0; j < H->k; j++) pieces[j] = hier_region(H, j, off, n);
  hier_fold(H->P, pieces, H->k, dst);
  free(pieces);
}

void hier_node_await(hx *H, const int64_t *off, int nr, int64_t n) {
  if (H->ready) return;
  if (H->g) hier_copyin_await(H, off, nr, n);
  else hier_await_all(H, 1);
  H->ready = 1;
}

void hier_node_fold(hx *H, int64_t off, int64_t n, collc_opnd dst) {
  if (H->g) {
    hier_copyin_fold(H, off, n, dst);
    return;
  }
  hier_node_await(H, &off, 1, n); /* (plain: all regions, complete after step 1) */
  fold_regions(H, off, n, dst);
}

/* The inter-node algorithm text of sub-collective coll: text, or the
 * collective's default (NULL when hier has none for it: why says so). */
static const char *net_text(int coll, const char *text, char *why, size_t wlen) {
  const coll_desc *d = coll_desc_of(coll);
  if (*text) return text;
  if (d && d->hier_net) return d->hier_net;
  snprintf(why, wlen, "hier: no inter-node default for %s", d ? d->name : "an unknown collective");
  return NULL;
}

/* The sub-collective spec among the nodes for x, from this rank. */
static collc_spec sub_spec(const collc_spec *s, const collc_layout *L, int coll, int64_t count,
                           int root, int in_place) {
  collc_spec t = {coll, L->nnodes, L->node_of[s->rank], count, s->unit_bytes, in_place, root,
                  s->commutative, NULL, NULL, NULL, 0, 0};
  return t;
}

int hier_check_sub(const collc_spec *s, int coll, const char *text, int64_t count, char *why,
                   size_t wlen) {
  collc_choice c;
  collc_spec t = sub_spec(s, s->layout, coll, count, 0, 1);
  t.rank = 0;
  if (!(text = net_text(coll, text, why, wlen))) return COLLC_EUNFIT;
  if (choice_parse(coll, text, &c, why, wlen) || choice_resolve(&t, &c, why, wlen))
    return COLLC_EUNFIT;
  if (choice_is_native(&c) || c.algo == algo_find(coll, "hier", 4)) { /* (views do not nest) */
    snprintf(why, wlen, "net=%s: needs a message schedule", text);
    return COLLC_EUNFIT;
  }
  return 0;
}

int hier_emit_sub(hx *H, const hier_sub *x) {
  collc_prog *P = H->P;
  collc_choice c;
  char why[200];
  const char *text = net_text(x->coll, x->text, why, sizeof why);
  if (!text) {
    prog_fail(P, COLLC_EUNFIT, "%s", why);
    return P->err;
  }
  collc_spec t = sub_spec(H->s, H->L, x->coll, x->count, x->root, x->in_place);
  t = spec_rank(&t, t.rank);
  if (choice_parse(x->coll, text, &c, why, sizeof why) || choice_resolve(&t, &c, why, sizeof why)) {
    prog_fail(P, COLLC_EUNFIT, "net=%s: %s", text, why);
    return P->err;
  }
  prog_view v = {.rank = x->rank};
  v.map[BUF_SEND] = x->sbuf, v.off[BUF_SEND] = x->soff;
  v.map[BUF_RECV] = x->rbuf, v.off[BUF_RECV] = x->roff;
  v.map[BUF_TMP] = BUF_TMP, v.off[BUF_TMP] = x->tmp_off;
  prog_view_push(P, &v, &t);
  algo_registry[c.algo]->gen(&t, &c, P);
  prog_wait(P);
  prog_view_pop(P);
  return P->err;
}

/* Lane ranks: rank[n] = local index `lane` of node n (or the root on its node). */
static int *lane_ranks(hx *H, int lane, int root) {
  int *rank = malloc((size_t)H->L->nnodes * sizeof *rank);
  if (!rank) {
    prog_fail(H->P, COLLC_ENOMEM, "hier: out of memory");
    return NULL;
  }
  for (int n = 0; n < H->L->nnodes; n++)
    rank[n] = root >= 0 && H->L->node_of[root] == n ? root : layout_rank(H->L, n, lane);
  return rank;
}

/* Emit x among lane `lane` (the root, root >= 0, standing in for its
 * node), its scratch after everything asked so far; nothing on one node. */
static void emit_lane(hx *H, int lane, int root, hier_sub x) {
  int *rank = H->L->nnodes > 1 && x.count > 0 ? lane_ranks(H, lane, root) : NULL;
  if (!rank) return;
  x.rank = rank;
  x.tmp_off = H->P->tmp_units;
  hier_emit_sub(H, &x);
  free(rank);
}

/* Allreduce in place on RECV[off, off+n) among lane `lane` (no-op alone). */
static void lane_allreduce(hx *H, const collc_choice *c, int lane, int64_t off, int64_t n) {
  hier_sub x = {COLLC_COLL_ALLREDUCE, n, 0, 1, BUF_RECV, BUF_RECV, 0, off, 0, NULL, c->net};
  emit_lane(H, lane, -1, x);
}

/* node=rs, node=copyin: see the file comment. */
static void allreduce_rs(hx *H, const collc_choice *c) {
  collc_prog *P = H->P;
  int64_t n = H->s->count;
  int m = H->L->min_size, me = H->me;
  blocks B;
  if (H->k > 1 && H->L->nnodes == 1 && H->g == H->k) { /* one copy-in group: its sum is all */
    hier_stage(H, n);
    hier_node_fold(H, 0, n, compact(P, BUF_RECV, 0, n));
    hier_leave(H);
    return;
  }
  if (blocks_split(P, &B, m, n, H->s->unit_bytes)) return;
  if (H->k > 1) hier_stage(H, n);
  if (me < m && H->k > 1 && B.len[me])
    hier_node_fold(H, B.start[me], B.len[me], compact(P, BUF_RECV, B.start[me], B.len[me]));
  else if (H->k == 1 && !H->s->in_place)
    prog_copy(P, compact(P, BUF_SEND, 0, n), compact(P, BUF_RECV, 0, n));
  if (me < m) lane_allreduce(H, c, me, B.start[me], B.len[me]);
  if (H->k > 1) {
    if (me < m && B.len[me])
      prog_copy(P, compact(P, BUF_RECV, B.start[me], B.len[me]),
                hier_region(H, me, B.start[me], B.len[me]));
    prog_signal(P, H->next);
    for (int j = 0; j < m; j++)
      if (j != me && B.len[j]) {
        prog_await(P, hier_rank(H, j), H->next);
        prog_copy(P, hier_region(H, j, B.start[j], B.len[j]),
                  compact(P, BUF_RECV, B.start[j], B.len[j]));
      }
    hier_leave(H);
  }
  blocks_free(&B);
}

/* node=tree: local rank 0 reduces, allreduces among nodes, shares. */
static void allreduce_tree(hx *H, const collc_choice *c) {
  collc_prog *P = H->P;
  int64_t n = H->s->count;
  if (H->k > 1) hier_stage(H, n);
  if (H->me == 0) {
    if (H->k > 1) hier_node_fold(H, 0, n, compact(P, BUF_RECV, 0, n));
    else if (!H->s->in_place) prog_copy(P, compact(P, BUF_SEND, 0, n), compact(P, BUF_RECV, 0, n));
    lane_allreduce(H, c, 0, 0, n);
    if (H->k > 1) prog_copy(P, compact(P, BUF_RECV, 0, n), hier_region(H, 0, 0, n));
  }
  if (H->k > 1) {
    prog_signal(P, H->next);
    if (H->me != 0) {
      prog_await(P, hier_rank(H, 0), H->next);
      prog_copy(P, hier_region(H, 0, 0, n), compact(P, BUF_RECV, 0, n));
    }
    hier_leave(H);
  }
}

static int gen_allreduce(const collc_spec *s, const collc_choice *c, collc_prog *P) {
  hx H;
  hier_init(&H, s, c, P, s->count);
  if (c->variant == HIER_TREE) allreduce_tree(&H, c);
  else if (c->variant == HIER_STEPS) hier_allreduce_steps(&H, c, lane_allreduce);
  else allreduce_rs(&H, c);
  return P->err;
}

/* My node's leader for a rooted collective: the root on its node, else
 * local rank 0. */
static int leader_of(const hx *H, int root) {
  return H->node == H->L->node_of[root] ? root : hier_rank(H, 0);
}

/* Reduce: every node's leader (the root on its node) folds the node's
 * regions; the leaders reduce to the root between nodes. */
static int gen_reduce(const collc_spec *s, const collc_choice *c, collc_prog *P) {
  hx H;
  int64_t n = s->count;
  hier_init(&H, s, c, P, n);
  int root_node = H.L->node_of[s->root], leader = leader_of(&H, s->root);
  int is_root = s->rank == s->root, mine = s->rank == leader;
  collc_opnd part = hier_input(&H, 0, n); /* this node's partial, at the leader */
  if (H.k > 1) hier_stage(&H, n);
  if (mine && H.k > 1) {
    part = is_root ? compact(P, BUF_RECV, 0, n) : compact(P, BUF_TMP, 0, n);
    prog_need_tmp(P, is_root ? 0 : n);
    hier_node_fold(&H, 0, n, part);
  } else if (mine && is_root && !s->in_place) {
    prog_copy(P, part, compact(P, BUF_RECV, 0, n));
    part = compact(P, BUF_RECV, 0, n);
  }
  if (mine) {
    hier_sub x = {COLLC_COLL_REDUCE, n, root_node, is_root, part.buf, BUF_RECV, part.off, 0, 0,
                  NULL, c->net};
    emit_lane(&H, 0, s->root, x);
  }
  hier_leave(&H);
  return P->err;
}

/* Bcast: the leaders (the root on its node) broadcast between nodes; each
 * leader shares the vector through the segment in chunks of at least
 * BCAST_CHUNK_BYTES (at most BCAST_MAX_CHUNKS), each signalled as soon as
 * it is in, so the others copy chunk i out while the leader copies i+1 in.
 * Chunks are cut at byte offsets (multiples of BCAST_GRAIN), not element
 * counts, because bcast's ranks may type the same bytes with elements of
 * different sizes; a rank whose element does not divide the grain copies
 * the whole vector at once (a leader signals the last chunk's step, a
 * reader waits for it). */
#define BCAST_CHUNK_BYTES 65536
#define BCAST_MAX_CHUNKS 16
#define BCAST_GRAIN 4096

/* Unit where chunk i of nch begins: its byte offset bytes*i/nch rounded
 * down to BCAST_GRAIN, the same on every rank whatever its element size u
 * (which divides the grain; ranks may type the same bytes differently). */
static int64_t chunk_at(int64_t bytes, int64_t i, int64_t nch, int64_t u) {
  return (i == nch ? bytes : bytes * i / nch / BCAST_GRAIN * BCAST_GRAIN) / u;
}

static int gen_bcast(const collc_spec *s, const collc_choice *c, collc_prog *P) {
  hx H;
  int64_t n = s->count, u = s->unit_bytes;
  hier_init(&H, s, c, P, n);
  int root_node = H.L->node_of[s->root], lead = leader_of(&H, s->root);
  if (s->rank == lead) {
    hier_sub x = {COLLC_COLL_BCAST, n, root_node, 1, BUF_RECV, BUF_RECV, 0, 0, 0, NULL, c->net};
    emit_lane(&H, 0, s->root, x);
  }
  if (H.k == 1) return P->err;
  int64_t bytes = n * u, nch = bytes / BCAST_CHUNK_BYTES;
  nch = nch < 1 ? 1 : nch > BCAST_MAX_CHUNKS ? BCAST_MAX_CHUNKS : nch;
  int whole = u <= 0 || BCAST_GRAIN % u != 0; /* cannot cut at the grain: one copy, step nch */
  if (s->rank == lead) hier_enter(&H);
  for (int64_t i = whole ? nch - 1 : 0; i < nch; i++) { /* copy-out of i overlaps copy-in of i+1 */
    int64_t lo = whole ? 0 : chunk_at(bytes, i, nch, u), len = chunk_at(bytes, i + 1, nch, u) - lo;
    if (s->rank == lead) { /* (the region of local rank 0: its offsets do not depend on u) */
      prog_copy(P, compact(P, BUF_RECV, lo, len), hier_region(&H, 0, lo, len));
      prog_signal(P, i + 1);
    } else {
      prog_await(P, lead, i + 1);
      prog_copy(P, hier_region(&H, 0, lo, len), compact(P, BUF_RECV, lo, len));
    }
  }
  hier_leave(&H);
  return P->err;
}

/* ---- the rows ---- */

#define COLL_BIT(coll) (1u << (coll))
#define REDUCTIONS \
  (COLL_BIT(COLLC_COLL_ALLREDUCE) | COLL_BIT(COLLC_COLL_REDUCE_SCATTER_BLOCK) | COLL_BIT(COLLC_COLL_REDUCE))

/* The node= variants: name (HIER_STEPS: a factor list), the collectives
 * that take it. */
static const struct {
  int variant;
  const char *name;
  unsigned colls;
} node_variants[] = {
    {HIER_RS, "rs", COLL_BIT(COLLC_COLL_ALLREDUCE)},
    {HIER_TREE, "tree", COLL_BIT(COLLC_COLL_ALLREDUCE)},
    {HIER_SOCKETS, "sockets", COLL_BIT(COLLC_COLL_ALLREDUCE)},
    {HIER_COPYIN, "copyin", REDUCTIONS},
    {HIER_STEPS, NULL, COLL_BIT(COLLC_COLL_ALLREDUCE)},
};
#define NODE_VARIANTS (int)(sizeof node_variants / sizeof node_variants[0])

/* Row of node_variants for variant v (the last row for an unknown one). */
static int variant_row(int v) {
  int i = 0;
  while (i < NODE_VARIANTS - 1 && node_variants[i].variant != v) i++;
  return i;
}

/* One "node=..." (or, after node=copyin, "g=N") word of n characters into
 * c; 0, or COLLC_EINVAL (why set when the word was recognised but bad). */
static int parse_node_word(const char *s, size_t n, collc_choice *c, char *why, size_t wlen) {
  char list[160];
  int g;
  if (c->variant == HIER_COPYIN && !c->group && n > 2 && !strncmp(s, "g=", 2)) {
    if (parse_int_list(s + 2, n - 2, ',', &g, 1) != 1 || g < 1) {
      snprintf(why, wlen, "bad copy-in group size '%.*s' (g=N, N >= 1)", (int)n, s);
      return COLLC_EINVAL;
    }
    c->group = g;
    return 0;
  }
  if (c->variant || n < 5 || strncmp(s, "node=", 5)) return COLLC_EINVAL;
  for (int i = 0; node_variants[i].name; i++)
    if (strlen(node_variants[i].name) == n - 5 && !strncmp(s + 5, node_variants[i].name, n - 5)) {
      c->variant = node_variants[i].variant;
      return 0;
    }
  if (n - 5 >= sizeof list) return COLLC_EINVAL;
  snprintf(list, sizeof list, "%.*s", (int)(n - 5), s + 5); /* a factor list */
  if (parse_steps(list, c, "-+", why, wlen)) return COLLC_EINVAL;
  c->variant = HIER_STEPS;
  return 0;
}

static int hier_parse(const char *params, collc_choice *c, char *why, size_t wlen) {
  const char *s = params ? params : "";
  c->variant = c->group = 0;
  why[0] = 0;
  while (*s) {
    size_t n = strcspn(s, ":");
    if (!strncmp(s, "net=", 4)) { /* the rest of the text */
      if (strlen(s + 4) >= sizeof c->net || !s[4]) break;
      snprintf(c->net, sizeof c->net, "%s", s + 4);
      return 0;
    }
    if (parse_node_word(s, n, c, why, wlen)) break;
    s += n + (s[n] == ':');
  }
  if (!*s) return 0;
  if (!why[0])
    snprintf(why, wlen,
             "bad hier parameter '%s' (node=rs|tree|sockets|copyin[:g=N]|<factor list>, "
             "net=<algorithm> last)",
             s);
  return COLLC_EINVAL;
}

/* node=sockets: with m ranks per socket and k per node, the factor list
 * -m,-k/m,k/m,m (the first step among a socket's ranks, the second across
 * sockets on 1/m of the vector; radices of 1 left out); node=rs where the
 * layout knows no sockets. */
static void sockets_list(const collc_layout *L, collc_choice *c) {
  int m = L->socket, r[2] = {m, m ? L->min_size / m : 1};
  c->variant = HIER_RS;
  if (!m) return;
  c->nf = 0;
  for (int i = 0; i < 2; i++)
    if (r[i] > 1) c->step[c->nf] = '-', c->f[c->nf++] = r[i];
  for (int i = c->nf - 1; i >= 0; i--) c->step[c->nf] = '+', c->f[c->nf++] = c->f[i];
  c->variant = HIER_STEPS;
}

static int hier_resolve(const collc_spec *s, collc_choice *c, char *why, size_t wlen) {
  const collc_layout *L = s->layout;
  const coll_desc *d = coll_desc_of(s->coll);
  int net = d && d->hier_net; /* (its plan has an inter-node sub-collective) */
  if (!L || L->p != s->p) {
    snprintf(why, wlen, "hier needs a node layout");
    return COLLC_EUNFIT;
  }
  if (coll_reduces(s->coll) && !s->commutative && !L->consecutive) {
    snprintf(why, wlen, "a non-commutative operation needs nodes of consecutive ranks (layout %s)",
             L->desc);
    return COLLC_EUNFIT;
  }
  int row = variant_row(c->variant);
  if ((c->variant && !(node_variants[row].colls & COLL_BIT(s->coll))) || (c->net[0] && !net)) {
    snprintf(why, wlen, "%s takes no %s%s", coll_name(s->coll), c->variant ? "node=" : "net=",
             c->variant && node_variants[row].name ? node_variants[row].name : "");
    return COLLC_EUNFIT;
  }
  if (c->variant == HIER_COPYIN && hier_copyin_resolve(s, c, why, wlen)) return COLLC_EUNFIT;
  if (s->coll == COLLC_COLL_ALLREDUCE && !c->variant) c->variant = HIER_RS;
  if (c->variant == HIER_SOCKETS) sockets_list(L, c);
  if (c->variant == HIER_STEPS &&
      (L->min_size != L->max_size || steps_product(c, '-') != L->min_size ||
       steps_product(c, '+') != L->min_size)) {
    snprintf(why, wlen, "node= factor list: both products must be the ranks of every node (%s)",
             L->desc);
    return COLLC_EUNFIT;
  }
  if (net && L->nnodes > 1 && hier_check_sub(s, s->coll, c->net, s->count, why, wlen))
    return COLLC_EUNFIT;
  return 0;
}

static void hier_format(const collc_choice *c, char *buf, size_t len) {
  char node[80] = "";
  const char *name = node_variants[variant_row(c->variant)].name;
  if (c->variant == HIER_STEPS) format_steps(c, node, sizeof node);
  else if (c->variant) snprintf(node, sizeof node, "%s", name);
  if (c->variant == HIER_COPYIN && c->group)
    snprintf(node + strlen(node), sizeof node - strlen(node), ":g=%d", c->group);
  snprintf(buf, len, "%s%s%s%s%s", c->variant ? "node=" : "", node,
           c->variant && c->net[0] ? ":" : "", c->net[0] ? "net=" : "", c->net);
}

/* Gatherv, scatterv: the root's counts on every rank (the agreement round). */
static int hier_vresolve(const collc_spec *s, collc_choice *c, char *why, size_t wlen) {
  return algo_agreed(s, "hier", why, wlen) ? COLLC_EUNFIT : hier_resolve(s, c, why, wlen);
}

/* Alltoallv: every local rank's send counts (spec.vall: MPI gives each
 * rank its own; the dispatch layer's agreement round gives them all). */
static int hier_a2av_resolve(const collc_spec *s, collc_choice *c, char *why, size_t wlen) {
  return algo_agreed(s, "hier", why, wlen) ? COLLC_EUNFIT : hier_resolve(s, c, why, wlen);
}

#define HIER_SUMMARY "shared memory in a node, messages between nodes (Jocksch 2026)"
#define HIER_ROW_OF(var, coll, resolve, gen, syntax, agrees) \
  const collc_algo var = {"hier", coll, hier_parse, resolve, gen, hier_format, syntax, \
                          HIER_SUMMARY, ALGO_SHARED_NODES, agrees}
#define HIER_ROW(var, coll, gen, syntax) HIER_ROW_OF(var, coll, hier_resolve, gen, syntax, 0)
HIER_ROW(algo_allreduce_hier, COLLC_COLL_ALLREDUCE, gen_allreduce,
         "hier[:node=rs|tree|sockets|copyin[:g=N]|-a,-b,b,a][:net=<allreduce algorithm>]");
HIER_ROW(algo_reduce_hier, COLLC_COLL_REDUCE, gen_reduce,
         "hier[:node=copyin[:g=N]][:net=<reduce algorithm>]");
HIER_ROW(algo_bcast_hier, COLLC_COLL_BCAST, gen_bcast, "hier[:net=<bcast algorithm>]");
HIER_ROW(algo_allgather_hier, COLLC_COLL_ALLGATHER, hier_gen_allgather, "hier");
HIER_ROW(algo_alltoall_hier, COLLC_COLL_ALLTOALL, hier_gen_alltoall, "hier");
HIER_ROW(algo_rsb_hier, COLLC_COLL_REDUCE_SCATTER_BLOCK, hier_gen_rsb, "hier[:node=copyin[:g=N]]");
HIER_ROW(algo_allgatherv_hier, COLLC_COLL_ALLGATHERV, hier_gen_allgather, "hier");
HIER_ROW(algo_rs_hier, COLLC_COLL_REDUCE_SCATTER, hier_gen_rsb, "hier");
HIER_ROW(algo_barrier_hier, COLLC_COLL_BARRIER, hier_gen_barrier, "hier[:net=<barrier algorithm>]");
HIER_ROW(algo_gather_hier, COLLC_COLL_GATHER, hier_gen_gather, "hier");
HIER_ROW(algo_scatter_hier, COLLC_COLL_SCATTER, hier_gen_scatter, "hier");
HIER_ROW_OF(algo_gatherv_hier, COLLC_COLL_GATHERV, hier_vresolve, hier_gen_gather, "hier", 1);
HIER_ROW_OF(algo_scatterv_hier, COLLC_COLL_SCATTERV, hier_vresolve, hier_gen_scatter, "hier", 1);
HIER_ROW_OF(algo_alltoallv_hier, COLLC_COLL_ALLTOALLV, hier_a2av_resolve, hier_gen_alltoallv,
            "hier", 1);
