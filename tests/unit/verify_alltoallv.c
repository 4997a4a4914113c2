/* verify_alltoallv.c - alltoallv (each rank its own send and receive
 * vectors) through the verifier, every algorithm that serves it.
 *
 * Truth, per run: the verifier's token check (src/check/verify.c) against
 * the oracle row (coll.c: element u of rank r's receive block from q is
 * element k of q's send block for r, at q's displacement), no races, no
 * deadlock; independently of the generators, exactly the off-diagonal
 * counts move (sum over q != r of what q sends r). That the oracle can
 * fail: programs whose receive displacements are swapped between two
 * blocks of equal size must be rejected. The simulator (paper preset)
 * runs every case too: it must finish, with one message per nonzero
 * off-diagonal count and exactly their bytes.
 *
 * Cases: p = 1..16; count matrices all zero, one rank sending everything,
 * one rank receiving everything, primes (divisible by nothing), and 8
 * random ones with zeros (fixed seed); displacements packed, and in reverse
 * rank order with gaps (send and receive sides apart); in place (symmetric
 * counts, as MPI requires there); algorithms linear, pairwise, torus (d =
 * 2 and 3: messages and units by brute force over its definition), and hier
 * on nodes of 2, of 3 and of ids (q * 7) mod 3 (interleaved, unequal): one
 * message per nonzero column (a node's blocks for one rank of another
 * node), the off-node units moved, whatever the algorithm's own arithmetic. */
#include <stdlib.h>
#include <string.h>
#include "algo/algo.h"
#include "check/verify.h"
#include "check/simulate.h"
#include "unit.h"
#include "rng.h"

#define MAXP 16
#define VLEN (2 * MAXP * MAXP)

static long cases;
static const char *const algos[] = {"linear", "pairwise", "hier", "torus:d=2", "torus:d=3"};
enum { NALGO = 5, NLAYOUT = 3 };

/* Units rank q sends rank r for matrix kind v (symmetric when sym). */
static int64_t count_of(int v, int p, int q, int r, int sym) {
  static const int64_t primes[] = {7, 3, 11, 13, 2, 17, 5, 19, 23, 29, 31, 37, 41};
  if (sym && q > r) return count_of(v, p, r, q, sym);
  switch (v) {
  case 0: return 0;
  case 1: return q == p / 2 ? 37 : 0;      /* one rank sends everything */
  case 2: return r == p - 1 ? 29 : 0;      /* one rank receives everything */
  case 3: return primes[(q * 5 + r) % 13];
  default: return rng() % 3 == 0 ? 0 : (int64_t)(rng() % 17);
  }
}
enum { NKIND = 12 };

/* Every rank's vectors for kind v into c (and displs d, gapped: reverse
 * order with gaps of 1-2 units and one before the first block). */
static void matrix(int v, int p, int sym, int gaps, int64_t *c, int64_t *d) {
  for (int q = 0; q < p; q++)
    for (int r = sym ? q : 0; r < p; r++) {
      int64_t n = count_of(v, p, q, r, sym);
      c[2 * p * q + r] = c[2 * p * r + p + q] = n;           /* q sends r, r receives from q */
      if (sym) c[2 * p * r + q] = c[2 * p * q + p + r] = n;  /* and the reverse */
    }
  for (int q = 0; q < p; q++)
    for (int side = 0; side < 2; side++) {
      int64_t at = gaps ? 1 + side : 0, *row = d + 2 * p * q + side * p;
      const int64_t *n = c + 2 * p * q + side * p;
      for (int k = 0; k < p; k++) {
        int j = gaps ? p - 1 - k : k;
        row[j] = at, at += n[j] + (gaps ? 1 + (j + q) % 2 : 0);
      }
    }
}

/* Rank q's node under L (no layout: every rank its own). */
static int node_of(const collc_layout *L, int q) { return L ? L->node_of[q] : q; }

/* Units of c between ranks of different nodes (L: NULL, every rank its own). */
static int64_t moved(int p, const int64_t *c, const collc_layout *L) {
  int64_t n = 0;
  for (int q = 0; q < p; q++)
    for (int r = 0; r < p; r++) n += node_of(L, q) == node_of(L, r) ? 0 : c[2 * p * q + r];
  return n;
}

/* The messages: (node m, rank r off m) whose column (the units m's ranks
 * send r) is nonzero; without L, the nonzero off-diagonal counts. */
static int64_t nonzero(int p, const int64_t *c, const collc_layout *L) {
  int64_t n = 0;
  for (int m = 0; m < p; m++)
    for (int r = 0; r < p; r++) {
      int64_t col = 0;
      for (int q = 0; q < p; q++) col += node_of(L, q) == m ? c[2 * p * q + r] : 0;
      n += node_of(L, r) != m && col > 0;
    }
  return n;
}

/* The torus's messages and units, by brute force over its definition: block
 * (q, r) moves, dimension by dimension (D[0] fastest, the choice's last),
 * from its holder to the rank with r's digit there; a message is a distinct
 * (dimension, from, to) carrying a nonzero block. */
static void torus_expect(int p, const int64_t *c, const collc_choice *ch, int64_t *msgs,
                         int64_t *units) {
  static char seen[4][MAXP][MAXP];
  int d = ch->nf, D[4], w[4];
  memset(seen, 0, sizeof seen);
  *msgs = *units = 0;
  for (int k = 0, wk = 1; k < d; k++) D[k] = ch->f[d - 1 - k], w[k] = wk, wk *= D[k];
  for (int q = 0; q < p; q++)
    for (int r = 0; r < p; r++) {
      int64_t n = c[2 * p * q + r];
      for (int k = 0, h = q; k < d && n && q != r; k++) {
        int dh = h / w[k] % D[k], dr = r / w[k] % D[k], g = h + (dr - dh) * w[k];
        if (dh == dr) continue;
        *units += n, *msgs += !seen[k][h][g], seen[k][h][g] = 1, h = g;
      }
    }
}

/* Verify c, d under algorithm t; in place ip; node layout L (or NULL). */
static void run(int p, const int64_t *c, const int64_t *d, const char *t, int ip,
                const collc_layout *L) {
  collc_spec s = {.coll = COLLC_COLL_ALLTOALLV, .p = p, .unit_bytes = 1, .in_place = ip,
                  .commutative = 1, .counts = c, .displs = d, .vall = 1, .layout = L};
  collc_choice ch;
  verify_report R;
  char why[200] = "";
  if (!CHECK(!choice_parse(s.coll, t, &ch, why, sizeof why) &&
                 !choice_resolve(&s, &ch, why, sizeof why), "%s: %s", t, why))
    return;
  cases++;
  verify_choice(&s, &ch, &R);
  CHECK(R.ok, "alltoallv %s p=%d%s%s: %lld errors%s: %s", t, p, d ? " displs" : "",
        ip ? " in place" : "", (long long)R.errors, R.deadlock ? " (deadlock)" : "",
        R.first_error);
  int64_t runs = L && layout_shares(L) ? 2 : 1; /* (the verifier runs segment programs twice) */
  int64_t want_units = moved(p, c, L), want_msgs = nonzero(p, c, L);
  if (!strncmp(t, "torus", 5)) torus_expect(p, c, &ch, &want_msgs, &want_units);
  CHECK(R.units == runs * want_units, "%s p=%d %s: %lld units moved, want %lld", t, p,
        L ? L->desc : "", (long long)R.units, (long long)(runs * want_units));
  static sim_params M;
  static int have_m;
  sim_report S = {0};
  if (!have_m) have_m = !sim_params_parse("paper", &M, why, sizeof why);
  CHECK(have_m && sim_choice(&s, &ch, &M, &S), "simulate %s p=%d: %s", t, p, S.error);
  CHECK(S.messages == want_msgs && S.bytes == want_units * s.unit_bytes,
        "simulate %s p=%d %s: %lld messages, %lld bytes; want %lld, %lld", t, p,
        L ? L->desc : "", (long long)S.messages, (long long)S.bytes, (long long)want_msgs,
        (long long)(want_units * s.unit_bytes));
}

/* Rank 0's program compiled with its receive blocks from ranks 1 and 2
 * swapped (equal sizes), verified against the packed layout: must be rejected. */
static void must_fail(const char *t) {
  int p = 3;
  int64_t c[2 * 3 * 3], d[2 * 3 * 3];
  collc_prog *progs[3] = {0};
  collc_choice ch;
  verify_report R;
  char why[200] = "";
  for (int i = 0; i < 2 * p * p; i++) c[i] = 2, d[i] = 2 * (i % p); /* (packed) */
  collc_spec s = {.coll = COLLC_COLL_ALLTOALLV, .p = p, .unit_bytes = 1, .commutative = 1,
                  .counts = c, .displs = d, .vall = 1};
  CHECK(!choice_parse(s.coll, t, &ch, why, sizeof why) && !choice_resolve(&s, &ch, why, sizeof why),
        "%s: %s", t, why);
  for (int r = p - 1; r >= 0; r--) {
    if (r == 0) d[p + 1] = 4, d[p + 2] = 2; /* rank 0's program only: the oracle's stay */
    s.rank = r;
    CHECK((progs[r] = choice_compile(&s, &ch, why, sizeof why)) != NULL, "%s: %s", t, why);
  }
  d[p + 1] = 2, d[p + 2] = 4;
  if (progs[0] && progs[1] && progs[2]) {
    verify_programs(&s, progs, &R);
    CHECK(!R.ok && R.errors > 0, "alltoallv %s: swapped blocks not caught", t);
  }
  for (int r = 0; r < p; r++) prog_free(progs[r]);
}

/* Layout i of p ranks: nodes of 2, of 3, or ids (q * 7) mod 3. */
static collc_layout *layout_of(int i, int p) {
  int id[MAXP];
  for (int q = 0; q < p; q++) id[q] = q * 7 % 3;
  return i == 0 ? layout_regular(p, 2) : i == 1 ? layout_regular(p, 3) : layout_new(p, id);
}

int main(void) {
  static int64_t c[VLEN], d[VLEN];
  rng_state = 15;
  for (int p = 1; p <= MAXP; p++)
    for (int v = 0; v < NKIND; v++)
      for (int sym = 0; sym < 2; sym++)
        for (int gaps = 0; gaps < 2; gaps++) {
          matrix(v, p, sym, gaps, c, d);
          for (int a = 0; a < NALGO; a++) {
            int hier = !strcmp(algos[a], "hier"); /* (on each layout; the others on none) */
            for (int l = 0; l < (hier ? NLAYOUT : 1); l++) {
              collc_layout *L = hier ? layout_of(l, p) : NULL;
              run(p, c, gaps ? d : NULL, algos[a], 0, L);
              if (sym) run(p, c, gaps ? d : NULL, algos[a], 1, L);
              layout_free(L);
            }
          }
        }
  must_fail("linear");
  must_fail("pairwise");
  must_fail("torus:d=1");
  printf("%d cases\n", (int)cases);
  return unit_summary("verify_alltoallv");
}
