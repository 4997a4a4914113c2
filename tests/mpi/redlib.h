/* redlib.h - shared helpers of the reduction tests (header-only; only
 * <mpi.h>, testlib.h and the C library, so that the unmodified program
 * reductions_preload.c can use it as well).
 *
 * A case is (datatype, operation, input mode). Every rank's input is a pure
 * function of (rank in the communicator, seed, global element index), so
 * every rank can compute the reference of a reduction ALONE: it generates
 * the inputs of all p ranks and folds them left to right in rank order
 * (x_0 op x_1 op ... op x_{p-1}), exactly, with arithmetic written here
 * independently of collc and of the MPI library: integers wrap modulo
 * 2^width (8-bit SUM/PROD included), MAXLOC/MINLOC take the smaller index
 * on ties, user-defined operations are evaluated by their own definition.
 *
 * Input modes:
 * - exact: integers, logicals, bytes, pairs, and floating point SUM/PROD on
 *   small dyadic values (+-{1/4, 1/2, 3/4, 1, 3/2, 2, 3}; complex: see
 *   rl_gen_cplx), whose sums and products are exact in float, double and
 *   long double in ANY order, zero signs included, so every algorithm must
 *   give the reference bit for bit;
 * - rough (floating point SUM/PROD and the user double sum only): random
 *   mantissas over 2^-30..2^30 (sums) or in [0.75, 1.5) (PROD), whose
 *   results depend on the order of evaluation: results are compared within
 *   the error bound of ANY order, (4p + 4) eps sum|x| (sums) or
 *   (4p + 4) eps prod|x| (PROD), computed in long double; bitwise equality
 *   across ranks is checked by the caller (redcheck.h).
 *
 * Comparisons look at the significant bytes of each element only (not the
 * 6 unused bytes of an x87 long double, not the padding of the pair types,
 * not the holes of the vector type).
 *
 * Native defects this header knows (rl_native_defect): Open MPI 4.1.4's
 * AVX-512 op component saturates 8- and 16-bit integer SUM (off with
 * --mca op ^avx), and signedness errors in MAX/MIN of unsigned types
 * (MPICH 4.0.2: all unsigned types; Open MPI 4.1.4: MPI_UNSIGNED_LONG).
 * There the native result may differ from the exact reference; callers
 * compare collc with the exact reference and only note the native error.
 * MPICH 4.0.2 (ch4:ucx) also crashes (SIGSEGV in memcpy) in MPI_Reduce
 * with MPI_IN_PLACE at a root other than 0 on more than 2048 bytes
 * (rl_mpich_reduce_in_place_broken): callers must not ask it for that.
 */
#ifndef COLLC_REDLIB_H
#define COLLC_REDLIB_H

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include "testlib.h"

/* Kinds of base elements. */
enum { RK_SINT, RK_UINT, RK_FLT, RK_CPLX, RK_BOOL, RK_BYTE, RK_PAIR, RK_MAT, RK_VEC };

/* Operations: the predefined reduction ops, then the user-defined ones of
 * this header: UMAT 2x2 matrix product mod 2^32 on contiguous(4, MPI_INT)
 * (non-commutative), UFIRST first nonzero on MPI_INT (non-commutative),
 * UMOD sum mod 65521 on MPI_INT (commutative), UVSUM wrapping sum on the
 * strided vector type (commutative), UDSUM sum of doubles on
 * contiguous(3, double) (commutative). */
enum {
  RO_MAX, RO_MIN, RO_SUM, RO_PROD, RO_LAND, RO_LOR, RO_LXOR, RO_BAND, RO_BOR, RO_BXOR,
  RO_MAXLOC, RO_MINLOC, RO_UMAT, RO_UFIRST, RO_UMOD, RO_UVSUM, RO_UDSUM, RO_COUNT
};
static const char *const rl_op_names[RO_COUNT] = {
    "MAX", "MIN", "SUM", "PROD", "LAND", "LOR", "LXOR", "BAND", "BOR", "BXOR", "MAXLOC",
    "MINLOC", "user-matmul", "user-first-nonzero", "user-sum-mod", "user-vec-sum",
    "user-double-sum"};

/* Float flavours (also the value of float pairs). */
enum { RF_NONE, RF_FLOAT, RF_DOUBLE, RF_LDOUBLE };

/* A datatype as these tests see it. */
typedef struct {
  const char *name;
  MPI_Datatype type; /* the handle passed to the collective */
  int kind;          /* RK_* of the base element */
  int width, sgn;    /* integers and integer pair values: bytes, signed */
  int flt;           /* RF_*: floats, complex parts, float pair values */
  int mult;          /* base elements per element (contiguous(3, double): 3) */
  size_t size;       /* bytes of one element (its extent) */
  size_t sig[2][2];  /* significant byte ranges {offset, length} of an element */
  int derived;       /* not a predefined datatype */
} rl_type;

/* A case: type, op (RO_*), rough inputs (floating point SUM/PROD only). */
typedef struct {
  const rl_type *t;
  int op;
  int rough;
} rl_case;

/* The pair layouts, as the MPI standard defines them. */
typedef struct {
  double v;
  int i;
} rl_di;
typedef struct {
  int v;
  int i;
} rl_ii;
typedef struct {
  float v;
  int i;
} rl_fi;
typedef struct {
  long v;
  int i;
} rl_li;
typedef struct {
  short v;
  int i;
} rl_si;

#define RL_MAX_TYPES 32

/* The datatypes of the tests, the derived types and user ops made for them. */
typedef struct {
  rl_type t[RL_MAX_TYPES];
  int n;
  MPI_Datatype contig3, mat4, vec;
  MPI_Op op[RO_COUNT]; /* handle of each RO_* */
} rl_typeset;

/* splitmix64's finaliser: a well-mixed 64-bit function of x. */
static inline uint64_t rl_mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* The random bits of base element i of rank's input under seed. */
static inline uint64_t rl_hash(int rank, int seed, uint64_t i) {
  return rl_mix(rl_mix(((uint64_t)(unsigned)seed << 32) ^ (uint64_t)(unsigned)rank) ^ i);
}

/* Integer of width bytes at p, sign-extended if sgn, as 64 bits. */
static inline uint64_t rl_iload(const void *p, int width, int sgn) {
  switch (width) {
  case 1: {
    uint8_t v;
    memcpy(&v, p, 1);
    return sgn ? (uint64_t)(int64_t)(int8_t)v : v;
  }
  case 2: {
    uint16_t v;
    memcpy(&v, p, 2);
    return sgn ? (uint64_t)(int64_t)(int16_t)v : v;
  }
  case 4: {
    uint32_t v;
    memcpy(&v, p, 4);
    return sgn ? (uint64_t)(int64_t)(int32_t)v : v;
  }
  default: {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
  }
  }
}

/* Store the low width bytes of v at p (two's complement wrap). */
static inline void rl_istore(void *p, int width, uint64_t v) {
  uint8_t a = (uint8_t)v;
  uint16_t b = (uint16_t)v;
  uint32_t c = (uint32_t)v;
  switch (width) {
  case 1: memcpy(p, &a, 1); break;
  case 2: memcpy(p, &b, 2); break;
  case 4: memcpy(p, &c, 4); break;
  default: memcpy(p, &v, 8); break;
  }
}

/* Bytes of a float flavour. */
static inline size_t rl_fsize(int flt) {
  return flt == RF_FLOAT ? sizeof(float) : flt == RF_DOUBLE ? sizeof(double) : sizeof(long double);
}

/* Floating value of flavour flt at p. */
static inline long double rl_fload(const void *p, int flt) {
  float f;
  double d;
  long double l;
  if (flt == RF_FLOAT) return memcpy(&f, p, sizeof f), f;
  if (flt == RF_DOUBLE) return memcpy(&d, p, sizeof d), d;
  return memcpy(&l, p, sizeof l), l;
}

/* Store v at p in flavour flt (rounded to it). */
static inline void rl_fstore(void *p, int flt, long double v) {
  float f = (float)v;
  double d = (double)v;
  if (flt == RF_FLOAT)
    memcpy(p, &f, sizeof f);
  else if (flt == RF_DOUBLE)
    memcpy(p, &d, sizeof d);
  else
    memcpy(p, &v, sizeof v);
}

/* Machine epsilon of flavour flt. */
static inline long double rl_eps(int flt) {
  return flt == RF_FLOAT ? FLT_EPSILON : flt == RF_DOUBLE ? DBL_EPSILON : LDBL_EPSILON;
}

/* a op b on integers (sign-extended if sgn), before truncation to width. */
static inline uint64_t rl_int_op(int op, uint64_t a, uint64_t b, int sgn) {
  int lt = sgn ? (int64_t)a < (int64_t)b : a < b;
  switch (op) {
  case RO_MAX: return lt ? b : a;
  case RO_MIN: return lt ? a : b;
  case RO_SUM: return a + b;
  case RO_PROD: return a * b;
  case RO_LAND: return (a != 0) && (b != 0);
  case RO_LOR: return (a != 0) || (b != 0);
  case RO_LXOR: return (a != 0) != (b != 0);
  case RO_BAND: return a & b;
  case RO_BOR: return a | b;
  case RO_BXOR: return a ^ b;
  case RO_UFIRST: return a != 0 ? a : b;
  case RO_UMOD: return (a + b) % 65521u;
  default: return a;
  }
}

/* a op b on floating values (MAX, MIN, SUM, PROD, UDSUM). */
static inline long double rl_flt_op(int op, long double a, long double b) {
  switch (op) {
  case RO_MAX: return a < b ? b : a;
  case RO_MIN: return b < a ? b : a;
  case RO_PROD: return a * b;
  default: return a + b;
  }
}

/* Pair element at e: value as integer (*iv) or floating (*fv), and index. */
static inline void rl_pair_load(const rl_type *t, const unsigned char *e, uint64_t *iv,
                                long double *fv, int *idx) {
  if (t->flt)
    *fv = rl_fload(e, t->flt);
  else
    *iv = rl_iload(e, t->width, 1);
  memcpy(idx, e + t->sig[1][0], sizeof *idx);
}

/* acc = acc MAXLOC/MINLOC b on one pair element. */
static inline void rl_pair_op(const rl_type *t, int op, unsigned char *acc,
                              const unsigned char *b) {
  uint64_t ia = 0, ib = 0;
  long double fa = 0, fb = 0;
  int xa, xb, cmp;
  rl_pair_load(t, acc, &ia, &fa, &xa);
  rl_pair_load(t, b, &ib, &fb, &xb);
  if (t->flt)
    cmp = fa < fb ? -1 : fa > fb;
  else
    cmp = (int64_t)ia < (int64_t)ib ? -1 : (int64_t)ia > (int64_t)ib;
  if (op == RO_MINLOC) cmp = -cmp;
  if (cmp < 0 || (cmp == 0 && xb < xa)) memcpy(acc, b, t->size);
}

/* acc = acc x b for 2x2 matrices of uint32 (row major), mod 2^32. */
static inline void rl_mat_op(unsigned char *acc, const unsigned char *b) {
  uint32_t x[4], y[4], z[4];
  memcpy(x, acc, sizeof x);
  memcpy(y, b, sizeof y);
  z[0] = x[0] * y[0] + x[1] * y[2];
  z[1] = x[0] * y[1] + x[1] * y[3];
  z[2] = x[2] * y[0] + x[3] * y[2];
  z[3] = x[2] * y[1] + x[3] * y[3];
  memcpy(acc, z, sizeof z);
}

/* acc = acc op b on one base element (acc holds the lower ranks). */
static inline void rl_op1(const rl_case *c, unsigned char *acc, const unsigned char *b) {
  const rl_type *t = c->t;
  size_t fs = t->flt ? rl_fsize(t->flt) : 0;
  switch (t->kind) {
  case RK_SINT:
  case RK_UINT:
  case RK_BOOL:
  case RK_BYTE:
    rl_istore(
        acc, t->width,
        rl_int_op(c->op, rl_iload(acc, t->width, t->sgn), rl_iload(b, t->width, t->sgn), t->sgn));
    break;
  case RK_FLT:
    rl_fstore(acc, t->flt, rl_flt_op(c->op, rl_fload(acc, t->flt), rl_fload(b, t->flt)));
    break;
  case RK_CPLX: {
    long double ar = rl_fload(acc, t->flt), ai = rl_fload(acc + fs, t->flt);
    long double br = rl_fload(b, t->flt), bi = rl_fload(b + fs, t->flt);
    int sum = c->op == RO_SUM;
    rl_fstore(acc, t->flt, sum ? ar + br : ar * br - ai * bi);
    rl_fstore(acc + fs, t->flt, sum ? ai + bi : ar * bi + ai * br);
    break;
  }
  case RK_PAIR: rl_pair_op(t, c->op, acc, b); break;
  case RK_MAT: rl_mat_op(acc, b); break;
  case RK_VEC: /* ints 0 and 3 of the element; 1 and 2 are holes */
    for (int k = 0; k < 4; k += 3)
      rl_istore(acc + 4 * k, 4, rl_iload(acc + 4 * k, 4, 0) + rl_iload(b + 4 * k, 4, 0));
    break;
  }
}

/* Bytes of one base element of t. */
static inline size_t rl_bsize(const rl_type *t) {
  return t->size / (size_t)t->mult;
}

/* acc[i] = acc[i] op b[i] for n elements of c's type. */
static inline void rl_combine(const rl_case *c, void *acc, const void *b, size_t n) {
  size_t bs = rl_bsize(c->t), nb = n * (size_t)c->t->mult;
  for (size_t i = 0; i < nb; i++)
    rl_op1(c, (unsigned char *)acc + i * bs, (const unsigned char *)b + i * bs);
}

/* A nonzero integer (usually random, sometimes only the top bit of width). */
static inline uint64_t rl_nonzero(uint64_t h, int width) {
  uint64_t mask = width >= 8 ? ~0ull : (1ull << (8 * width)) - 1, v = rl_mix(h) & mask;
  if ((h >> 20 & 3) == 0 || v == 0) v = 1ull << (8 * width - 1);
  return v;
}

/* Random integer input for op from bits h: wraps for SUM/PROD, ties and
 * sign bits for MAX/MIN, some zeros for logical ops, dense or sparse bits
 * for BAND/BOR. */
static inline uint64_t rl_gen_int(int op, int width, uint64_t h) {
  uint64_t h2 = rl_mix(h ^ 0x5bd1e995u), sparse = h & h2 & (h2 >> 17);
  switch (op) {
  case RO_PROD: return (h >> 56) == 0 ? 0 : (h >> 58 & 3) ? (h | 1) : h;
  case RO_MAX:
  case RO_MIN: return (h >> 61) == 0 ? (h2 & 3) : h;
  case RO_LAND: return (h >> 60) == 0 ? 0 : rl_nonzero(h, width);
  case RO_LOR: return (h >> 60) == 0 ? rl_nonzero(h, width) : 0;
  case RO_LXOR: return (h >> 63) ? rl_nonzero(h, width) : 0;
  case RO_BAND: return ~sparse;
  case RO_BOR: return sparse;
  case RO_UFIRST: return (h >> 62) ? 0 : rl_nonzero(h, width);
  case RO_UMOD: return h % 65521u;
  default: return h;
  }
}

/* Random floating input for op from bits h (see the header comment). */
static inline long double rl_gen_flt(int op, int rough, uint64_t h) {
  static const long double dyadic[7] = {0.25L, 0.5L, 0.75L, 1.0L, 1.5L, 2.0L, 3.0L};
  static const long double ties[3] = {-1.0L, 0.5L, 2.0L};
  long double sign = (h >> 63) ? -1.0L : 1.0L;
  long double m = 1.0L + (long double)(h & 0xfffffffffffffull) / 4503599627370496.0L;
  if (!rough && op != RO_MAX && op != RO_MIN) return sign * dyadic[(h >> 52) % 7];
  if (op == RO_PROD) return sign * m * 0.75L;
  if ((op == RO_MAX || op == RO_MIN) && (h >> 52 & 3) == 0) return ties[(h >> 54) % 3];
  return sign * ldexpl(m, (int)((h >> 52) % 61) - 30);
}

/* One complex element at e from bits h. Exact inputs have real part 3, 4
 * or 6 and imaginary part +-1/4 or +-1/2 (argument below 9.5 degrees): any
 * product of up to 9 has a positive real part, so no component can become
 * -0 in one evaluation order and +0 in another (exact, order-independent
 * results, zero signs included). */
static inline void rl_gen_cplx(const rl_case *c, unsigned char *e, uint64_t h) {
  static const long double re[3] = {3.0L, 4.0L, 6.0L}, im[2] = {0.25L, 0.5L};
  size_t fs = rl_fsize(c->t->flt);
  if (c->rough) {
    rl_fstore(e, c->t->flt, rl_gen_flt(c->op, 1, h));
    rl_fstore(e + fs, c->t->flt, rl_gen_flt(c->op, 1, rl_mix(h)));
    return;
  }
  rl_fstore(e, c->t->flt, re[h % 3]);
  rl_fstore(e + fs, c->t->flt, ((h >> 63) ? -1.0L : 1.0L) * im[(h >> 8) & 1]);
}

/* One pair element at e from bits h: values with many ties (equal values
 * with different indices), indices in -5..23. */
static inline void rl_gen_pair(const rl_type *t, unsigned char *e, uint64_t h) {
  uint64_t h2 = rl_mix(h ^ 0x27d4eb2fu);
  int idx = (int)(h2 % 29) - 5, small = (h >> 62) != 0;
  if (t->flt)
    rl_fstore(e, t->flt, small ? 0.5L * (long double)(h % 3) : rl_gen_flt(RO_MAX, 0, h));
  else
    rl_istore(e, t->width, small ? h % 3 : h);
  memcpy(e + t->sig[1][0], &idx, sizeof idx);
}

/* One base element at e of c's type from bits h. */
static inline void rl_gen1(const rl_case *c, unsigned char *e, uint64_t h) {
  const rl_type *t = c->t;
  switch (t->kind) {
  case RK_FLT: rl_fstore(e, t->flt, rl_gen_flt(c->op, c->rough, h)); break;
  case RK_CPLX: rl_gen_cplx(c, e, h); break;
  case RK_PAIR: rl_gen_pair(t, e, h); break;
  case RK_MAT:
    for (int k = 0; k < 4; k++) rl_istore(e + 4 * k, 4, rl_mix(h + (uint64_t)k));
    break;
  case RK_VEC:
    rl_istore(e, 4, h);
    rl_istore(e + 12, 4, rl_mix(h));
    break;
  case RK_BOOL: rl_istore(e, 1, rl_gen_int(c->op, 1, h) != 0); break;
  default: rl_istore(e, t->width, rl_gen_int(c->op, t->width, h)); break;
  }
}

/* Rank's input elements [first, first + n) of case c under seed into buf
 * (n elements of c's type; holes of the vector type get 0x5c bytes). */
static inline void rl_gen(const rl_case *c, void *buf, size_t first, size_t n, int rank, int seed) {
  size_t bs = rl_bsize(c->t), m = (size_t)c->t->mult;
  if (c->t->kind == RK_VEC) memset(buf, 0x5c, n * c->t->size);
  for (size_t i = 0; i < n * m; i++)
    rl_gen1(c, (unsigned char *)buf + i * bs, rl_hash(rank, seed, first * m + i));
}

/* |x| summed (SUM) or multiplied (PROD) into bound[i] for the n elements of
 * b (complex: |re| + |im|); first: start the bound from b. */
static inline void rl_bound_add(const rl_case *c, long double *bound, const void *b, size_t n,
                                int first) {
  const rl_type *t = c->t;
  size_t bs = rl_bsize(t), fs = rl_fsize(t->flt), nb = n * (size_t)t->mult;
  for (size_t i = 0; i < nb; i++) {
    const unsigned char *e = (const unsigned char *)b + i * bs;
    long double a = fabsl(rl_fload(e, t->flt));
    if (t->kind == RK_CPLX) a += fabsl(rl_fload(e + fs, t->flt));
    bound[i] = first ? a : c->op != RO_PROD ? bound[i] + a : bound[i] * a;
  }
}

/* The reference of case c: elements [first, first + n) of the inputs of
 * ranks 0..p-1 (seed) folded in rank order into out; for rough cases also
 * the error bound per base element into bound (else bound may be NULL).
 * tmp: room for n elements. */
static inline void rl_reference(const rl_case *c, void *out, long double *bound, void *tmp,
                                size_t first, size_t n, int p, int seed) {
  for (int q = 0; q < p; q++) {
    rl_gen(c, q ? tmp : out, first, n, q, seed);
    if (c->rough && bound) rl_bound_add(c, bound, q ? tmp : out, n, q == 0);
    if (q) rl_combine(c, out, tmp, n);
  }
}

/* First element of n at which a and b differ in a significant byte, or -1. */
static inline long rl_first_diff(const rl_type *t, const void *a, const void *b, size_t n) {
  const unsigned char *x = a, *y = b;
  for (size_t i = 0; i < n; i++)
    for (int s = 0; s < 2; s++) {
      size_t off = i * t->size + t->sig[s][0];
      if (t->sig[s][1] && memcmp(x + off, y + off, t->sig[s][1])) return (long)i;
    }
  return -1;
}

/* First base element of n elements where got is further from ref than the
 * error bound of any evaluation order on p ranks, or -1 (rough cases). */
static inline long rl_first_far(const rl_case *c, const void *got, const void *ref,
                                const long double *bound, size_t n, int p) {
  const rl_type *t = c->t;
  size_t bs = rl_bsize(t), fs = rl_fsize(t->flt), nb = n * (size_t)t->mult;
  long double k = (4.0L * p + 4.0L) * rl_eps(t->flt);
  for (size_t i = 0; i < nb; i++)
    for (int part = 0; part < (t->kind == RK_CPLX ? 2 : 1); part++) {
      size_t off = i * bs + (size_t)part * fs;
      long double g = rl_fload((const unsigned char *)got + off, t->flt);
      long double r = rl_fload((const unsigned char *)ref + off, t->flt);
      if (!(fabsl(g - r) <= k * bound[i])) return (long)i;
    }
  return -1;
}

/* Is a native result that differs from the exact reference explained by a
 * known defect of the MPI library (see the header comment)? */
static inline int rl_native_defect(const rl_case *c) {
  const rl_type *t = c->t;
  if (c->op == RO_SUM && (t->kind == RK_SINT || t->kind == RK_UINT) && t->width <= 2) return 1;
  return (c->op == RO_MAX || c->op == RO_MIN) && t->kind == RK_UINT;
}

/* Is the MPI library MPICH (from MPI_Get_library_version)? */
static inline int rl_is_mpich(void) {
  static int known, mpich;
  char v[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  if (!known && MPI_Get_library_version(v, &len) == MPI_SUCCESS)
    known = 1, mpich = strstr(v, "MPICH") != NULL;
  return mpich;
}

/* Would the native MPI_Reduce crash with MPI_IN_PLACE at root on bytes
 * of data? (MPICH 4.0.2: SIGSEGV for root != 0 and bytes > 2048.) */
static inline int rl_mpich_reduce_in_place_broken(int root, long long bytes) {
  return root != 0 && bytes > 2048 && rl_is_mpich();
}

/* Does MPI define predefined op on kind (the standard's table)? */
static inline int rl_allowed(int kind, int op) {
  int integer = kind == RK_SINT || kind == RK_UINT;
  switch (op) {
  case RO_MAX:
  case RO_MIN: return integer || kind == RK_FLT;
  case RO_SUM:
  case RO_PROD: return integer || kind == RK_FLT || kind == RK_CPLX;
  case RO_LAND:
  case RO_LOR:
  case RO_LXOR: return integer || kind == RK_BOOL;
  case RO_BAND:
  case RO_BOR:
  case RO_BXOR: return integer || kind == RK_BYTE;
  case RO_MAXLOC:
  case RO_MINLOC: return kind == RK_PAIR;
  default: return 0;
  }
}

/* MPI_User_function: inout = in x inout, 2x2 matrices mod 2^32. */
static inline void rl_user_mat(void *in, void *inout, int *len, MPI_Datatype *dt) {
  (void)dt;
  for (int i = 0; i < *len; i++) {
    unsigned char tmp[16];
    memcpy(tmp, (unsigned char *)in + 16 * i, 16);
    rl_mat_op(tmp, (unsigned char *)inout + 16 * i);
    memcpy((unsigned char *)inout + 16 * i, tmp, 16);
  }
}

/* MPI_User_function: inout = in if in != 0, else inout (ints). */
static inline void rl_user_first(void *in, void *inout, int *len, MPI_Datatype *dt) {
  (void)dt;
  for (int i = 0; i < *len; i++)
    if (((int *)in)[i] != 0) ((int *)inout)[i] = ((int *)in)[i];
}

/* MPI_User_function: inout = (in + inout) mod 65521 (non-negative ints). */
static inline void rl_user_mod(void *in, void *inout, int *len, MPI_Datatype *dt) {
  (void)dt;
  for (int i = 0; i < *len; i++)
    ((int *)inout)[i] = (int)(((unsigned)((int *)in)[i] + (unsigned)((int *)inout)[i]) % 65521u);
}

/* MPI_User_function: wrapping sum of ints 0 and 3 of each element of the
 * vector type (extent 4 ints); the holes are not touched. */
static inline void rl_user_vsum(void *in, void *inout, int *len, MPI_Datatype *dt) {
  (void)dt;
  for (int i = 0; i < *len; i++)
    for (int k = 0; k < 4; k += 3) {
      unsigned char *o = (unsigned char *)inout + 16 * i + 4 * k;
      rl_istore(o, 4, rl_iload(o, 4, 0) + rl_iload((unsigned char *)in + 16 * i + 4 * k, 4, 0));
    }
}

/* MPI_User_function: inout = in + inout on doubles (contig3xdouble). */
static inline void rl_user_dsum(void *in, void *inout, int *len, MPI_Datatype *dt) {
  (void)dt;
  for (int i = 0; i < 3 * *len; i++) ((double *)inout)[i] += ((double *)in)[i];
}

/* Append a type to S. */
static inline void rl_add(rl_typeset *S, const char *name, MPI_Datatype h, int kind, int width,
                          int sgn, int flt, size_t size) {
  rl_type *t = &S->t[S->n++];
  memset(t, 0, sizeof *t);
  t->name = name, t->type = h, t->kind = kind, t->width = width, t->sgn = sgn, t->flt = flt;
  t->mult = 1, t->size = size;
  t->sig[0][1] = size;
  if (flt == RF_LDOUBLE && kind == RK_FLT && LDBL_MANT_DIG == 64) t->sig[0][1] = 10;
}

/* Append a pair type whose index is at ioff, value of vsize bytes. */
static inline void rl_add_pair(rl_typeset *S, const char *name, MPI_Datatype h, int width, int flt,
                               size_t vsize, size_t ioff, size_t size) {
  rl_add(S, name, h, RK_PAIR, width, 1, flt, size);
  rl_type *t = &S->t[S->n - 1];
  t->sig[0][1] = vsize;
  t->sig[1][0] = ioff, t->sig[1][1] = sizeof(int);
}

#define RL_INT(S, h, ct, sg)                                                                       \
  rl_add(S, #h, h, (sg) ? RK_SINT : RK_UINT, (int)sizeof(ct), sg, RF_NONE, sizeof(ct))
#define RL_PAIR(S, h, st, w, f)                                                                    \
  rl_add_pair(S, #h, h, w, f, sizeof(((st *)0)->v), offsetof(st, i), sizeof(st))

/* The predefined types of the matrix into S. */
static inline void rl_predefined(rl_typeset *S) {
  RL_INT(S, MPI_INT, int, 1);
  RL_INT(S, MPI_UNSIGNED_CHAR, unsigned char, 0);
  RL_INT(S, MPI_SIGNED_CHAR, signed char, 1);
  RL_INT(S, MPI_INT8_T, int8_t, 1);
  RL_INT(S, MPI_UINT8_T, uint8_t, 0);
  RL_INT(S, MPI_SHORT, short, 1);
  RL_INT(S, MPI_UNSIGNED_SHORT, unsigned short, 0);
  RL_INT(S, MPI_UNSIGNED, unsigned, 0);
  RL_INT(S, MPI_LONG, long, 1);
  RL_INT(S, MPI_UNSIGNED_LONG, unsigned long, 0);
  RL_INT(S, MPI_LONG_LONG, long long, 1);
  RL_INT(S, MPI_UINT64_T, uint64_t, 0);
  rl_add(S, "MPI_FLOAT", MPI_FLOAT, RK_FLT, 0, 1, RF_FLOAT, sizeof(float));
  rl_add(S, "MPI_DOUBLE", MPI_DOUBLE, RK_FLT, 0, 1, RF_DOUBLE, sizeof(double));
  rl_add(S, "MPI_LONG_DOUBLE", MPI_LONG_DOUBLE, RK_FLT, 0, 1, RF_LDOUBLE, sizeof(long double));
  rl_add(S, "MPI_C_BOOL", MPI_C_BOOL, RK_BOOL, 1, 0, RF_NONE, sizeof(_Bool));
  rl_add(S, "MPI_BYTE", MPI_BYTE, RK_BYTE, 1, 0, RF_NONE, 1);
  rl_add(S, "MPI_C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX, RK_CPLX, 0, 1, RF_DOUBLE,
         2 * sizeof(double));
  RL_PAIR(S, MPI_DOUBLE_INT, rl_di, 0, RF_DOUBLE);
  RL_PAIR(S, MPI_2INT, rl_ii, (int)sizeof(int), RF_NONE);
  RL_PAIR(S, MPI_FLOAT_INT, rl_fi, 0, RF_FLOAT);
  RL_PAIR(S, MPI_LONG_INT, rl_li, (int)sizeof(long), RF_NONE);
  RL_PAIR(S, MPI_SHORT_INT, rl_si, (int)sizeof(short), RF_NONE);
}

/* Create (committed) the derived types and user ops, and fill S with every
 * type: the predefined ones, then "contig3xdouble" (contiguous(3, double);
 * MPI defines the predefined ops on predefined types only, and Open MPI
 * 4.1 and MPICH 4.0 refuse them with MPI_ERR_OP, which collc must
 * reproduce; with the user sum collc serves it), "mat4" (contiguous(4,
 * int), for the matrix product), "vec" (vector(2, 1, 3, int): ints 0 and 3
 * of 4, holes between; with the user sum; collc must hand it to the native
 * call). */
static inline void rl_types_create(tl_ctx *ctx, rl_typeset *S) {
  memset(S, 0, sizeof *S);
  rl_predefined(S);
  MPI_Type_contiguous(3, MPI_DOUBLE, &S->contig3);
  MPI_Type_contiguous(4, MPI_INT, &S->mat4);
  MPI_Type_vector(2, 1, 3, MPI_INT, &S->vec);
  tl_commit(ctx, &S->contig3, "contig3xdouble");
  tl_commit(ctx, &S->mat4, "mat4");
  tl_commit(ctx, &S->vec, "vec");
  rl_add(S, "contig3xdouble", S->contig3, RK_FLT, 0, 1, RF_DOUBLE, 3 * sizeof(double));
  S->t[S->n - 1].mult = 3, S->t[S->n - 1].derived = 1;
  rl_add(S, "mat4", S->mat4, RK_MAT, 4, 0, RF_NONE, 4 * sizeof(int));
  S->t[S->n - 1].derived = 1;
  rl_add(S, "vec", S->vec, RK_VEC, 4, 0, RF_NONE, 4 * sizeof(int));
  S->t[S->n - 1].sig[0][1] = 4, S->t[S->n - 1].sig[1][0] = 12, S->t[S->n - 1].sig[1][1] = 4;
  S->t[S->n - 1].derived = 1;
  const MPI_Op pre[RO_UMAT] = {MPI_MAX,  MPI_MIN,  MPI_SUM, MPI_PROD, MPI_LAND,   MPI_LOR,
                               MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC};
  memcpy(S->op, pre, sizeof pre);
  MPI_Op_create(rl_user_mat, 0, &S->op[RO_UMAT]);
  MPI_Op_create(rl_user_first, 0, &S->op[RO_UFIRST]);
  MPI_Op_create(rl_user_mod, 1, &S->op[RO_UMOD]);
  MPI_Op_create(rl_user_vsum, 1, &S->op[RO_UVSUM]);
  MPI_Op_create(rl_user_dsum, 1, &S->op[RO_UDSUM]);
}

/* Free what rl_types_create made. */
static inline void rl_types_free(rl_typeset *S) {
  MPI_Type_free(&S->contig3);
  MPI_Type_free(&S->mat4);
  MPI_Type_free(&S->vec);
  for (int o = RO_UMAT; o < RO_COUNT; o++) MPI_Op_free(&S->op[o]);
}

/* The type of S called name (NULL if none). */
static inline const rl_type *rl_find(const rl_typeset *S, const char *name) {
  for (int i = 0; i < S->n; i++)
    if (!strcmp(S->t[i].name, name)) return &S->t[i];
  return NULL;
}

/* Every case of S into out (room for max): each type with every predefined
 * op MPI allows on it, rough SUM and PROD for the floating and complex
 * types, contig3xdouble with SUM and MAX (refused as MPI refuses them),
 * and the user ops on their types (user-double-sum exact and rough).
 * Returns how many. */
static inline int rl_cases_all(const rl_typeset *S, rl_case *out, int max) {
  int n = 0;
  for (int i = 0; i < S->n; i++) {
    const rl_type *t = &S->t[i];
    for (int o = 0; o < RO_UMAT && n < max; o++) {
      int ok = t->mult == 1 ? rl_allowed(t->kind, o) : (o == RO_SUM || o == RO_MAX);
      if (t->kind == RK_MAT || t->kind == RK_VEC || !ok) continue;
      out[n++] = (rl_case){t, o, 0};
      if ((o == RO_SUM || o == RO_PROD) && t->flt && t->kind != RK_PAIR && t->mult == 1 && n < max)
        out[n++] = (rl_case){t, o, 1};
    }
  }
  const rl_case user[] = {{rl_find(S, "mat4"), RO_UMAT, 0},
                          {rl_find(S, "MPI_INT"), RO_UFIRST, 0},
                          {rl_find(S, "MPI_INT"), RO_UMOD, 0},
                          {rl_find(S, "vec"), RO_UVSUM, 0},
                          {rl_find(S, "contig3xdouble"), RO_UDSUM, 0},
                          {rl_find(S, "contig3xdouble"), RO_UDSUM, 1}};
  for (int k = 0; k < 6 && n < max; k++) out[n++] = user[k];
  return n;
}

/* The case of list L (n cases) with type name, op and rough, or NULL. */
static inline const rl_case *rl_case_find(const rl_case *L, int n, const char *name, int op,
                                          int rough) {
  for (int i = 0; i < n; i++)
    if (L[i].op == op && L[i].rough == rough && !strcmp(L[i].t->name, name)) return &L[i];
  return NULL;
}

/* Must collc behave exactly as the native call (error included)? A
 * predefined op on a derived datatype (MPI defines them on predefined types
 * only; collc hands such calls to the MPI library). */
static inline int rl_as_native(const rl_case *c) {
  return c->t->derived && c->op < RO_UMAT;
}

/* The core subset of the cases all[0..nall-1] into out (room for max): one
 * or more of every kind of type, op, signedness and width, the derived
 * types and the user ops. Returns how many. */
static inline int rl_core_cases(const rl_case *all, int nall, const rl_case **out, int max) {
  static const struct {
    const char *t;
    int op, rough;
  } want[] = {{"MPI_INT", RO_SUM, 0},          {"MPI_UINT8_T", RO_SUM, 0},
              {"MPI_INT8_T", RO_PROD, 0},       {"MPI_UNSIGNED_CHAR", RO_MAX, 0},
              {"MPI_SHORT", RO_MIN, 0},         {"MPI_LONG_LONG", RO_BXOR, 0},
              {"MPI_UNSIGNED_LONG", RO_MAX, 0}, {"MPI_INT", RO_LAND, 0},
              {"MPI_C_BOOL", RO_LXOR, 0},       {"MPI_BYTE", RO_BAND, 0},
              {"MPI_DOUBLE", RO_SUM, 0},        {"MPI_DOUBLE", RO_SUM, 1},
              {"MPI_FLOAT", RO_PROD, 0},        {"MPI_LONG_DOUBLE", RO_SUM, 1},
              {"MPI_C_DOUBLE_COMPLEX", RO_PROD, 0}, {"MPI_DOUBLE_INT", RO_MAXLOC, 0},
              {"MPI_2INT", RO_MINLOC, 0},       {"contig3xdouble", RO_SUM, 0},
              {"contig3xdouble", RO_UDSUM, 1},  {"mat4", RO_UMAT, 0},
              {"MPI_INT", RO_UFIRST, 0},        {"MPI_INT", RO_UMOD, 0}};
  int n = 0;
  for (size_t i = 0; i < sizeof want / sizeof want[0] && n < max; i++) {
    const rl_case *c = rl_case_find(all, nall, want[i].t, want[i].op, want[i].rough);
    if (c) out[n++] = c;
  }
  return n;
}

/* Is case c's operation commutative? */
static inline int rl_commutative(const rl_case *c) {
  return c->op != RO_UMAT && c->op != RO_UFIRST;
}

#endif
