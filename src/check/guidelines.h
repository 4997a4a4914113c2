/* guidelines.h - the self-consistency rules of MPI performance (PGMPI:
 * S. Hunold, A. Carpen-Amarie, F. D. Lübbe, J. L. Träff, "Automatic
 * Verification of Self-consistent MPI Performance Guidelines", Euro-Par
 * 2016) checked over a table of measured points. Pure: no MPI, no clock; the tuner fills the table, tests plant
 * violations in synthetic ones.
 *
 * Sizes are bytes as the rule counts them: per vector for allreduce,
 * reduce, bcast; per block for reduce_scatter_block, allgather, alltoall,
 * gather, scatter; the whole vector for allgatherv, reduce_scatter.
 * The rules, at p ranks (n: the left side's measured size):
 *   allreduce(n)  <= reduce(n) + bcast(n)
 *   allreduce(n)  <= reduce_scatter_block(n/p) + allgather(n/p)
 *   reduce_scatter_block(n) <= reduce(n p) + scatter(n)   (where scatter is
 *                                                           measured)
 *   coll(n)       <= coll(n')          for the next measured n' > n
 *   coll(n)       <= k coll(m)         m the previous measured size, k = ceil(n/m)
 * A term of a mock-up needing a size not measured uses the smallest measured
 * size above it (an upper bound, given "time grows with n"). A violation is
 * one-sided significant: the left side's samples exceed 1.05 x the mock-up's
 * (sample i: the sum of its terms' samples i, cyclically), Mann-Whitney 95%. */
#ifndef COLLC_CHECK_GUIDELINES_H
#define COLLC_CHECK_GUIDELINES_H

#define GL_MARGIN 1.05 /* the factor a violation must exceed, significantly */

typedef struct {
  int coll;        /* COLLC_COLL_* */
  long long bytes; /* per vector or block */
  const double *x; /* the samples, seconds */
  int n;
} gl_point;

typedef struct {
  int rule;          /* index into the rules (gl_rule_name, gl_realise) */
  int coll;          /* the left side */
  long long bytes;
  double lhs, rhs;   /* medians, seconds: the left side, the mock-up */
  char mock[96];     /* the mock-up in words: "reduce + bcast", "4 x allreduce(250 B)" */
} gl_violation;

/* Whether a's samples exceed factor x b's, one-sided 95% (Mann-Whitney U in
 * the normal approximation, z > 1.645); 0 with fewer than 2 samples each. */
int gl_greater(const double *a, int na, const double *b, int nb, double factor);

/* The violations of the rules in the n points pts (p ranks) into out[max]:
 * how many found (at most max kept). Points with no samples are absent. */
int gl_check(const gl_point *pts, int n, int p, gl_violation *out, int max);

/* The number of rules; rule r's text ("allreduce(n) <= reduce(n) + bcast(n)"),
 * the reason it is skipped (NULL if checked), and the algorithm text of the
 * left side's collective that realises its mock-up in collc (NULL if none). */
int gl_rule_count(void);
const char *gl_rule_name(int r);
const char *gl_rule_skipped(int r);
const char *gl_realise(int r);

/* v in words into buf: "native allreduce(8 KiB) 12.1 us > reduce + bcast
 * 7.9 us (barrier)"; who and mode as given. */
void gl_format(const gl_violation *v, const char *who, const char *mode, char *buf,
               unsigned len);

#endif
