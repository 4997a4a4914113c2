/* alltoall_bruck.c - Bruck's message-combining all-to-all with radix k.
 *
 * J. Bruck, C.-T. Ho, S. Kipnis, E. Upfal, D. Weathersby, "Efficient
 * algorithms for all-to-all communications in multiport message-passing
 * systems", IEEE TPDS 8(11), 1997; zero-copy form after J. L. Träff,
 * A. Rougier, S. Hunold, "Implementing a classic: zero-copy all-to-all
 * communication with MPI datatypes", ICS 2014.
 *
 * Blocks are named by their relative index i = (dest - source) mod p. Phase x
 * (weight w = k^x) handles digit x of i in base k: for each digit value
 * z = 1..k-1 the blocks with that digit go to rank r + z*w (and arrive from
 * r - z*w), all k-1 partners at once, one wait per phase. No block is ever
 * copied locally: a block is read from SEND (position (r+i) mod p) until its
 * first move, lives in TMP half (c mod 2) at index i after its c-th move, and
 * its last move lands it in RECV at (r-i) mod p. A message therefore falls
 * into up to four parts by (source, destination) buffer, each sent as one
 * message with an indexed shape (merged runs).
 *
 * Cost: ceil(log_k p) phases, each (k-1) alpha + ~p/k m beta per partner;
 * about (k-1)/k p log_k p blocks sent per rank (vs p-1 for direct exchange).
 * Scratch: 2p blocks (3p in place: the input is copied to TMP once).
 * Restrictions: 2 <= k; k >= p is direct exchange in one phase.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "algo.h"
#include "patterns.h"

static int bruck_parse(const char *params, collc_choice *c, char *why, size_t wlen) {
  c->nf = 1;
  c->f[0] = 2;
  if (params && (parse_int_list(params, strlen(params), ',', c->f, 1) != 1 || c->f[0] < 2)) {
    snprintf(why, wlen, "bruck: radix must be an integer >= 2, not '%s'", params);
    return COLLC_EINVAL;
  }
  return 0;
}

static int bruck_resolve(const collc_spec *s, collc_choice *c, char *why, size_t wlen) {
  (void)why, (void)wlen;
  if (c->nf != 1) bruck_parse(NULL, c, why, wlen);
  if (c->f[0] > s->p && s->p >= 2) c->f[0] = s->p;
  return 0;
}

static void bruck_format(const collc_choice *c, char *buf, size_t len) {
  snprintf(buf, len, "%d", c->f[0]);
}

typedef struct {
  int64_t *soff, *doff, *len; /* per part: up to p runs each */
  int n[4];
} parts;

/* Sort the blocks of phase x, digit z into the four (source, destination)
 * parts; part = 2*(source is TMP) + (destination is TMP). The blocks are
 * i = (h*k + z)*w + l (l < w = k^x), ascending; nz[l] holds the nonzero
 * base-k digits of l: the moves block i made before this phase. */
static void collect(const collc_spec *s, int64_t in_off, int k, int64_t w, int z,
                    const int64_t *nz, parts *pt) {
  int64_t p = s->p, r = s->rank;
  memset(pt->n, 0, sizeof pt->n);
  for (int64_t h = 0; (h * k + z) * w < p; h++)
    for (int64_t l = 0, i = (h * k + z) * w; l < w && i < p; l++, i++) {
      int c = (int)nz[l];
      int src_tmp = c > 0, dst_tmp = i >= w * k;
      int q = 2 * src_tmp + dst_tmp, at = (int)(q * p + pt->n[q]++);
      pt->soff[at] = src_tmp ? (c % 2) * p + i : in_off + (r + i) % p;
      pt->doff[at] = dst_tmp ? ((c + 1) % 2) * p + i : mod_pos(r - i, p);
    }
}

static int bruck_gen(const collc_spec *s, const collc_choice *c, collc_prog *P) {
  int k = c->f[0];
  int64_t p = s->p, in_off = 0;
  int one = prog_shape_contig(P, 1), inbuf = BUF_SEND;
  if (s->in_place) { /* input copied once to TMP[2p, 3p) */
    int all = prog_shape_contig(P, p);
    prog_copy(P, opnd(BUF_RECV, 0, all), opnd(BUF_TMP, 2 * p, all));
    prog_need_tmp(P, 3 * p);
    inbuf = BUF_TMP;
    in_off = 2 * p;
  }
  prog_copy(P, opnd(inbuf, in_off + s->rank, one), opnd(BUF_RECV, s->rank, one));
  if (p == 1) return P->err;
  prog_need_tmp(P, 2 * p);
  parts pt;
  int64_t *mem = malloc(13 * (size_t)p * sizeof *mem);
  if (!mem) {
    prog_fail(P, COLLC_ENOMEM, "bruck: out of memory");
    return P->err;
  }
  pt.soff = mem, pt.doff = mem + 4 * p, pt.len = mem + 8 * p;
  int64_t *nz = mem + 12 * p; /* nonzero base-k digits of l < p */
  for (int64_t i = 0; i < 4 * p; i++) pt.len[i] = 1;
  for (int64_t l = 0; l < p; l++) nz[l] = l ? nz[l / k] + (l % k != 0) : 0;
  int ndig = base_ndigits(p, k);
  int64_t w = 1;
  for (int x = 0; x < ndig; x++, w *= k) {
    for (int z = 1; z < k && z * w < p; z++) {
      int to = (int)((s->rank + z * w) % p), from = (int)mod_pos(s->rank - z * w, p);
      collect(s, in_off, k, w, z, nz, &pt);
      for (int q = 0; q < 4; q++) {
        if (!pt.n[q]) continue;
        prog_recv(P, from, prog_opnd_runs(P, (q & 1) ? BUF_TMP : BUF_RECV, pt.n[q],
                                          pt.doff + q * p, pt.len));
        prog_send(P, to, prog_opnd_runs(P, (q & 2) ? BUF_TMP : inbuf, pt.n[q],
                                        pt.soff + q * p, pt.len));
      }
    }
    prog_wait(P);
  }
  free(mem);
  return P->err;
}

const collc_algo algo_alltoall_bruck = {
    "bruck", COLLC_COLL_ALLTOALL, bruck_parse, bruck_resolve, bruck_gen, bruck_format,
    "bruck[:<k>]", "Bruck message combining, radix k (default 2), zero-copy", ALGO_ANY, 0};
