/* barrier_dissem.c - the dissemination barrier with a radix per step over
 * point-to-point messages: "dissem[:k1,k2,...]".
 *
 * D. Hensgen, R. Finkel, U. Manber, "Two algorithms for barrier
 * synchronization", IJPP 17(1), 1988; the radix-k ("n-way") form after
 * T. Hoefler et al., "Fast barrier synchronization for InfiniBand", 2006.
 *
 * Step t has radix k_t and distance d_t = k_1*...*k_{t-1}: rank r sends a
 * zero-byte message to r + j*d_t and receives one from r - j*d_t (mod p),
 * j = 1..k_t-1 while j*d_t < p, then waits for all of them. After step t
 * rank r has heard, through chains of messages, from ranks r - x for every
 * x < d_{t+1}, so once the product reaches p every rank's exit follows
 * every rank's entry (the verifier proves it per p: collc_spec's
 * synchronizes oracle). Any p, no power of two needed.
 *
 * Parameters: radices >= 2; the last repeats until the product reaches p,
 * and steps after that are dropped ("dissem:4" at p = 64: 4,4,4; at
 * p = 1 no step). Default 2 (ceil(log2 p) steps). Cost: sum over steps of
 * alpha + (k_t - 1) message overheads, no bytes, no scratch.
 */
#include <stdio.h>
#include "algo.h"
#include "patterns.h"

int dissem_parse(const char *params, collc_choice *c, char *why, size_t wlen) {
  return parse_steps(params, c, "+", why, wlen);
}

void dissem_steps(int p, int k0, collc_choice *c) {
  int64_t reach = 1;
  int n = 0;
  if (c->nf == 0) c->f[0] = k0, c->step[0] = '+', c->nf = 1;
  for (; reach < p && n < COLLC_MAXF; n++) {
    if (n >= c->nf) c->f[n] = c->f[c->nf - 1], c->step[n] = '+';
    reach *= c->f[n];
  }
  c->nf = n;
}

void dissem_format(const collc_choice *c, char *buf, size_t len) {
  format_steps(c, buf, len);
}

/* Fill the list for s->p ranks (default radix 2). */
static int dissem_resolve(const collc_spec *s, collc_choice *c, char *why, size_t wlen) {
  (void)why, (void)wlen;
  dissem_steps(s->p, 2, c);
  return 0;
}

/* One step per radix: post the receives, then the sends, then wait. */
static int dissem_gen(const collc_spec *s, const collc_choice *c, collc_prog *P) {
  collc_opnd none = opnd(BUF_RECV, 0, prog_shape_contig(P, 0));
  int64_t d = 1;
  for (int t = 0; t < c->nf; d *= c->f[t++]) {
    for (int64_t j = 1; j < c->f[t] && j * d < s->p; j++)
      prog_recv(P, dissem_peer(s->p, s->rank, d, j, -1), none);
    for (int64_t j = 1; j < c->f[t] && j * d < s->p; j++)
      prog_send(P, dissem_peer(s->p, s->rank, d, j, +1), none);
    prog_wait(P);
  }
  return P->err;
}

const collc_algo algo_barrier_dissem = {
    "dissem", COLLC_COLL_BARRIER, dissem_parse, dissem_resolve, dissem_gen, dissem_format,
    "dissem[:k1,k2,...]",
    "dissemination with a radix per step, zero-byte messages (the last radix repeats)",
    ALGO_ANY, 0};
