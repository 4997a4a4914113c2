/* kernels.c - the typed reduction kernels (src/exec/kernels.c) against an
 * exact reference and against PMPI_Reduce_local. Any number of ranks; each
 * rank runs every check alone (seeded by its rank).
 *
 * 1. Acceptance: for every predefined datatype listed in make_types (C,
 *    C++, Fortran, and some no reduction may use) and every op (the 12
 *    predefined reduction ops, MPI_REPLACE, MPI_NO_OP), kernel_select must
 *    accept exactly what the MPI standard allows (plus MPI_CHAR, which Open
 *    MPI and MPICH both accept), set elems 1 and commutative 1, never accept
 *    what PMPI_Reduce_local rejects, and leave *k alone when it refuses.
 *    What the MPI library accepts beyond that is printed as a note (collc
 *    falls back for it). PMPI_Reduce_local is not probed for floating
 *    types with LAND/LOR/LXOR: MPICH 4.0 aborts on an assertion there. The
 *    communicator whose error handler MPI_Reduce_local errors invoke is
 *    printed.
 * 2. Values: for every accepted pair, random inputs (fixed seed per rank)
 *    of several lengths and two alignments; the kernels k3, k2, k3 with out
 *    aliasing a or b, kernel_apply2/3 must equal, on every significant byte
 *    (not struct padding, not the 6 unused bytes of an x87 long double), an
 *    exact reference written here independently (a switch per category,
 *    values loaded and stored by size); bytes around the output and the
 *    inputs stay untouched. PMPI_Reduce_local, and kernel_apply2/3 with
 *    k == NULL (which call it), must give the same, except where a known
 *    MPI defect explains every differing element (then rank 0 prints a
 *    note): MAX/MIN of integers with the wrong signedness (MPICH 4.0.2 for
 *    all unsigned types; Open MPI 4.1.4 for MPI_UNSIGNED_LONG and, the other
 *    way, MPI_OFFSET), and, from Open MPI's AVX op component (off with
 *    --mca op ^avx), saturating 8/16-bit SUM and the other zero of a -0/+0
 *    MAX/MIN tie. So 8-bit results are checked against the exact reference,
 *    never against the library alone. Inputs have no NaN (MAX, MIN and
 *    MAXLOC with NaN are not specified), but -0.0, +0.0 and equal values
 *    (ties) on purpose.
 * 3. Derived types: contiguous and dup chains (elems, results; against
 *    PMPI_Reduce_local on the derived type too if the library accepts a
 *    predefined op there, which Open MPI 4.1 and MPICH 4.0 do not);
 *    vector, resized, struct, indexed, hvector, contiguous over those,
 *    contiguous(0), MPI_DATATYPE_NULL, MPI_OP_NULL, MPI_REPLACE, MPI_NO_OP
 *    and user ops must be refused.
 * 4. k == NULL with a user-defined non-commutative op (2x2 matrix product
 *    on contiguous(4, MPI_DOUBLE)): kernel_apply2 gives in x inout,
 *    kernel_apply3 a x b (out == b allowed); out == a and non-dense types
 *    are refused with MPI_ERR_BUFFER / MPI_ERR_TYPE.
 *
 * Self-test: COLLC_TEST_BREAK=N corrupts one byte of the N-th nonempty
 * kernel result on the last rank before it is compared; the program must
 * then fail.
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include "exec/kernels.h"
#include "testlib.h"

/* Categories of the standard's table of reduction ops (TC_NONE: no op). */
enum { TC_INT, TC_FINT, TC_FLT, TC_CPLX, TC_BOOL, TC_BYTE, TC_PAIR, TC_NONE };

/* The 12 predefined reduction ops, then two ops no reduction may use. */
enum {
  OP_MAX, OP_MIN, OP_SUM, OP_PROD, OP_LAND, OP_LOR, OP_LXOR, OP_BAND, OP_BOR, OP_BXOR,
  OP_MAXLOC, OP_MINLOC, OP_REPLACE, OP_NO_OP, OP_COUNT
};
static const char *const op_names[OP_COUNT] = {
    "MAX", "MIN", "SUM", "PROD", "LAND", "LOR", "LXOR", "BAND", "BOR", "BXOR",
    "MAXLOC", "MINLOC", "REPLACE", "NO_OP"};

/* The handle of op o. */
static MPI_Op op_handle(int o) {
  switch (o) {
  case OP_MAX: return MPI_MAX;
  case OP_MIN: return MPI_MIN;
  case OP_SUM: return MPI_SUM;
  case OP_PROD: return MPI_PROD;
  case OP_LAND: return MPI_LAND;
  case OP_LOR: return MPI_LOR;
  case OP_LXOR: return MPI_LXOR;
  case OP_BAND: return MPI_BAND;
  case OP_BOR: return MPI_BOR;
  case OP_BXOR: return MPI_BXOR;
  case OP_MAXLOC: return MPI_MAXLOC;
  case OP_MINLOC: return MPI_MINLOC;
  case OP_REPLACE: return MPI_REPLACE;
  default: return MPI_NO_OP;
  }
}

/* Does the MPI standard allow op o on category c? */
static int std_allows(int c, int o) {
  switch (o) {
  case OP_MAX:
  case OP_MIN: return c == TC_INT || c == TC_FINT || c == TC_FLT;
  case OP_SUM:
  case OP_PROD: return c == TC_INT || c == TC_FINT || c == TC_FLT || c == TC_CPLX;
  case OP_LAND:
  case OP_LOR:
  case OP_LXOR: return c == TC_INT || c == TC_BOOL;
  case OP_BAND:
  case OP_BOR:
  case OP_BXOR: return c == TC_INT || c == TC_FINT || c == TC_BYTE;
  case OP_MAXLOC:
  case OP_MINLOC: return c == TC_PAIR;
  default: return 0;
  }
}

/* A predefined datatype as this test sees it. */
typedef struct {
  const char *name;
  MPI_Datatype t;
  int cls;               /* TC_* */
  int size;              /* sizeof the C type */
  int sign;              /* integers: signed */
  int vcls, vsize;       /* pairs: value category (TC_INT or TC_FLT) and bytes */
  int icls, isize, ioff; /* pairs: index category, bytes, offset */
} ttype;

/* The pair layouts, written here independently of the library. */
typedef struct { float v; int k; } t_fi;
typedef struct { double v; int k; } t_di;
typedef struct { long v; int k; } t_li;
typedef struct { int v; int k; } t_ii;
typedef struct { short v; int k; } t_si;
typedef struct { long double v; int k; } t_ldi;
typedef struct { float v; float k; } t_ff;
typedef struct { double v; double k; } t_dd;

#define TT(t, c, ct, s) {#t, t, c, (int)sizeof(ct), s, 0, 0, 0, 0, 0}
#define TP(t, st, vc, ic)                                                                        \
  {#t, t, TC_PAIR, (int)sizeof(st), 1, vc, (int)sizeof(((st *)0)->v), ic,                        \
   (int)sizeof(((st *)0)->k), (int)offsetof(st, k)}
#define TN(t) {#t, t, TC_NONE, 1, 0, 0, 0, 0, 0, 0}

/* Fill out[] (room for 96) with the datatypes under test; returns how many. */
static int make_types(ttype *out) {
  const ttype all[] = {
      TT(MPI_CHAR, TC_INT, char, CHAR_MIN < 0), TT(MPI_SIGNED_CHAR, TC_INT, signed char, 1),
      TT(MPI_UNSIGNED_CHAR, TC_INT, unsigned char, 0), TT(MPI_SHORT, TC_INT, short, 1),
      TT(MPI_UNSIGNED_SHORT, TC_INT, unsigned short, 0), TT(MPI_INT, TC_INT, int, 1),
      TT(MPI_UNSIGNED, TC_INT, unsigned, 0), TT(MPI_LONG, TC_INT, long, 1),
      TT(MPI_UNSIGNED_LONG, TC_INT, unsigned long, 0),
      TT(MPI_LONG_LONG_INT, TC_INT, long long, 1), TT(MPI_LONG_LONG, TC_INT, long long, 1),
      TT(MPI_UNSIGNED_LONG_LONG, TC_INT, unsigned long long, 0),
      TT(MPI_INT8_T, TC_INT, int8_t, 1), TT(MPI_INT16_T, TC_INT, int16_t, 1),
      TT(MPI_INT32_T, TC_INT, int32_t, 1), TT(MPI_INT64_T, TC_INT, int64_t, 1),
      TT(MPI_UINT8_T, TC_INT, uint8_t, 0), TT(MPI_UINT16_T, TC_INT, uint16_t, 0),
      TT(MPI_UINT32_T, TC_INT, uint32_t, 0), TT(MPI_UINT64_T, TC_INT, uint64_t, 0),
      TT(MPI_AINT, TC_INT, MPI_Aint, 1), TT(MPI_OFFSET, TC_INT, MPI_Offset, 1),
      TT(MPI_COUNT, TC_INT, MPI_Count, 1), TT(MPI_INTEGER, TC_FINT, int, 1),
      TT(MPI_INTEGER1, TC_FINT, int8_t, 1), TT(MPI_INTEGER2, TC_FINT, int16_t, 1),
      TT(MPI_INTEGER4, TC_FINT, int32_t, 1), TT(MPI_INTEGER8, TC_FINT, int64_t, 1),
      TT(MPI_FLOAT, TC_FLT, float, 1), TT(MPI_DOUBLE, TC_FLT, double, 1),
      TT(MPI_LONG_DOUBLE, TC_FLT, long double, 1), TT(MPI_REAL, TC_FLT, float, 1),
      TT(MPI_DOUBLE_PRECISION, TC_FLT, double, 1), TT(MPI_REAL4, TC_FLT, float, 1),
      TT(MPI_REAL8, TC_FLT, double, 1), TT(MPI_C_COMPLEX, TC_CPLX, float[2], 1),
      TT(MPI_C_FLOAT_COMPLEX, TC_CPLX, float[2], 1),
      TT(MPI_C_DOUBLE_COMPLEX, TC_CPLX, double[2], 1),
      TT(MPI_C_LONG_DOUBLE_COMPLEX, TC_CPLX, long double[2], 1),
      TT(MPI_CXX_FLOAT_COMPLEX, TC_CPLX, float[2], 1),
      TT(MPI_CXX_DOUBLE_COMPLEX, TC_CPLX, double[2], 1),
      TT(MPI_CXX_LONG_DOUBLE_COMPLEX, TC_CPLX, long double[2], 1),
      TT(MPI_COMPLEX, TC_CPLX, float[2], 1), TT(MPI_DOUBLE_COMPLEX, TC_CPLX, double[2], 1),
      TT(MPI_COMPLEX8, TC_CPLX, float[2], 1), TT(MPI_COMPLEX16, TC_CPLX, double[2], 1),
      TT(MPI_C_BOOL, TC_BOOL, unsigned char, 0), TT(MPI_CXX_BOOL, TC_BOOL, unsigned char, 0),
      TT(MPI_BYTE, TC_BYTE, unsigned char, 0), TP(MPI_FLOAT_INT, t_fi, TC_FLT, TC_INT),
      TP(MPI_DOUBLE_INT, t_di, TC_FLT, TC_INT), TP(MPI_LONG_INT, t_li, TC_INT, TC_INT),
      TP(MPI_2INT, t_ii, TC_INT, TC_INT), TP(MPI_SHORT_INT, t_si, TC_INT, TC_INT),
      TP(MPI_LONG_DOUBLE_INT, t_ldi, TC_FLT, TC_INT), TP(MPI_2INTEGER, t_ii, TC_INT, TC_INT),
      TP(MPI_2REAL, t_ff, TC_FLT, TC_FLT), TP(MPI_2DOUBLE_PRECISION, t_dd, TC_FLT, TC_FLT),
      TN(MPI_WCHAR), TN(MPI_PACKED), TN(MPI_CHARACTER), TN(MPI_LOGICAL), TN(MPI_REAL16),
      TN(MPI_COMPLEX32)};
  int n = (int)(sizeof all / sizeof all[0]);
  for (int i = 0; i < n; i++) out[i] = all[i];
  return n;
}

/* The row of types[0..nt-1] with handle t, or NULL. */
static const ttype *type_row(const ttype *types, int nt, MPI_Datatype t) {
  for (int i = 0; i < nt; i++)
    if (types[i].t == t) return &types[i];
  return NULL;
}

/* True if t is a usable handle with lower bound 0 and extent bytes. */
static int extent_is(MPI_Datatype t, int bytes) {
  MPI_Aint lb, ext;
  if (t == MPI_DATATYPE_NULL || MPI_Type_get_extent(t, &lb, &ext) != MPI_SUCCESS) return 0;
  return lb == 0 && ext == bytes;
}

/* ---- exact reference ------------------------------------------------- */

/* The integer of size bytes at p, sign- or zero-extended. */
static int64_t ld_int(const void *p, int size, int sign) {
  uint8_t u1;
  uint16_t u2;
  uint32_t u4;
  uint64_t u8;
  switch (size) {
  case 1: memcpy(&u1, p, 1); return sign ? (int64_t)(int8_t)u1 : (int64_t)u1;
  case 2: memcpy(&u2, p, 2); return sign ? (int64_t)(int16_t)u2 : (int64_t)u2;
  case 4: memcpy(&u4, p, 4); return sign ? (int64_t)(int32_t)u4 : (int64_t)u4;
  default: memcpy(&u8, p, 8); return (int64_t)u8;
  }
}

/* Store the low size bytes of v at p, as an integer of that size. */
static void st_int(void *p, int size, uint64_t v) {
  uint8_t u1 = (uint8_t)v;
  uint16_t u2 = (uint16_t)v;
  uint32_t u4 = (uint32_t)v;
  switch (size) {
  case 1: memcpy(p, &u1, 1); break;
  case 2: memcpy(p, &u2, 2); break;
  case 4: memcpy(p, &u4, 4); break;
  default: memcpy(p, &v, 8); break;
  }
}

/* The floating value of size bytes (float, double, long double) at p. */
static long double ld_flt(const void *p, int size) {
  float f;
  double d;
  long double l;
  if (size == (int)sizeof f) return memcpy(&f, p, sizeof f), f;
  if (size == (int)sizeof d) return memcpy(&d, p, sizeof d), d;
  return memcpy(&l, p, sizeof l), l;
}

/* Is integer a < b, as signed or unsigned 64-bit values? */
static int int_less(int sign, int64_t a, int64_t b) {
  return sign ? a < b : (uint64_t)a < (uint64_t)b;
}

/* o = x op y for integers (also C_BOOL and BYTE, as 1-byte unsigned). */
static void ref_int(const ttype *T, int op, const void *x, const void *y, void *o) {
  int64_t a = ld_int(x, T->size, T->sign), b = ld_int(y, T->size, T->sign);
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b, r = 0;
  switch (op) {
  case OP_MAX: memcpy(o, int_less(T->sign, a, b) ? y : x, (size_t)T->size); return;
  case OP_MIN: memcpy(o, int_less(T->sign, b, a) ? y : x, (size_t)T->size); return;
  case OP_SUM: r = ua + ub; break;
  case OP_PROD: r = ua * ub; break;
  case OP_LAND: r = a != 0 && b != 0; break;
  case OP_LOR: r = a != 0 || b != 0; break;
  case OP_LXOR: r = (a != 0) != (b != 0); break;
  case OP_BAND: r = ua & ub; break;
  case OP_BOR: r = ua | ub; break;
  case OP_BXOR: r = ua ^ ub; break;
  }
  st_int(o, T->size, r);
}

/* o = x op y for one real floating value: MAX/MIN copy the larger/smaller
 * operand, the first one when they compare equal (-0.0 vs +0.0). */
static void ref_flt(int size, int op, const void *x, const void *y, void *o) {
  long double a = ld_flt(x, size), b = ld_flt(y, size);
  if (op == OP_MAX || op == OP_MIN) {
    memcpy(o, (op == OP_MAX ? b > a : b < a) ? y : x, (size_t)size);
  } else if (size == (int)sizeof(float)) {
    float fa = (float)a, fb = (float)b, r = op == OP_SUM ? fa + fb : fa * fb;
    memcpy(o, &r, sizeof r);
  } else if (size == (int)sizeof(double)) {
    double da = (double)a, db = (double)b, r = op == OP_SUM ? da + db : da * db;
    memcpy(o, &r, sizeof r);
  } else {
    long double r = op == OP_SUM ? a + b : a * b;
    memcpy(o, &r, sizeof r);
  }
}

/* o = x op y (SUM or PROD) for complex numbers of component type FT: the
 * textbook formula, each product rounded on its own (volatile: no compiler
 * may fuse it into an FMA). */
#define REF_CPLX(FT)                                                                             \
  do {                                                                                           \
    FT p[2], q[2], r[2];                                                                         \
    volatile FT m[4];                                                                            \
    memcpy(p, x, sizeof p);                                                                      \
    memcpy(q, y, sizeof q);                                                                      \
    m[0] = p[0] * q[0], m[1] = p[1] * q[1], m[2] = p[0] * q[1], m[3] = p[1] * q[0];              \
    if (op == OP_SUM) r[0] = p[0] + q[0], r[1] = p[1] + q[1];                                    \
    else r[0] = m[0] - m[1], r[1] = m[2] + m[3];                                                 \
    memcpy(o, r, sizeof r);                                                                      \
  } while (0)

/* o = x op y for a complex element of T. */
static void ref_cplx(const ttype *T, int op, const void *x, const void *y, void *o) {
  if (T->size == 2 * (int)sizeof(float)) REF_CPLX(float);
  else if (T->size == 2 * (int)sizeof(double)) REF_CPLX(double);
  else REF_CPLX(long double);
}

/* The value (part 0) or index (part 1) of the pair at p, exactly. */
static long double pair_part(const ttype *T, const char *p, int part) {
  int cls = part ? T->icls : T->vcls, size = part ? T->isize : T->vsize;
  const char *at = part ? p + T->ioff : p;
  return cls == TC_INT ? (long double)ld_int(at, size, 1) : ld_flt(at, size);
}

/* o = x op y for MAXLOC/MINLOC: the winner's value and index; on equal
 * values the second operand's value (as both MPIs do) and the smaller index. */
static void ref_pair(const ttype *T, int op, const char *x, const char *y, char *o) {
  long double vx = pair_part(T, x, 0), vy = pair_part(T, y, 0);
  const char *w = NULL;
  if (vx != vy) w = (op == OP_MAXLOC) == (vx > vy) ? x : y;
  if (!w) w = pair_part(T, x, 1) < pair_part(T, y, 1) ? x : y;
  memcpy(o, vx != vy ? w : y, (size_t)T->vsize);
  memcpy(o + T->ioff, w + T->ioff, (size_t)T->isize);
}

/* o = x op y for one element of T. */
static void ref_elem(const ttype *T, int op, const char *x, const char *y, char *o) {
  switch (T->cls) {
  case TC_FLT: ref_flt(T->size, op, x, y, o); break;
  case TC_CPLX: ref_cplx(T, op, x, y, o); break;
  case TC_PAIR: ref_pair(T, op, x, y, o); break;
  default: ref_int(T, op, x, y, o); break;
  }
}

/* Bytes of a floating value of size bytes that hold data (x87: 10 of 16). */
static int flt_sig(int size) {
  return size == (int)sizeof(long double) && LDBL_MANT_DIG == 64 ? 10 : size;
}

/* Is byte b of an element of T part of its data (not padding)? */
static int sig_byte(const ttype *T, int b) {
  switch (T->cls) {
  case TC_FLT: return b < flt_sig(T->size);
  case TC_CPLX: return b % (T->size / 2) < flt_sig(T->size / 2);
  case TC_PAIR:
    return b < (T->vcls == TC_FLT ? flt_sig(T->vsize) : T->vsize) ||
           (b >= T->ioff && b < T->ioff + T->isize);
  default: return 1;
  }
}

/* ---- random inputs ----------------------------------------------------- */

/* xorshift64*: the next pseudo-random number of state *s. */
static uint64_t rnd(uint64_t *s) {
  *s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
  return *s * 0x2545F4914F6CDD1DULL;
}

/* Store v as a floating value of size bytes at p (rounded to it). */
static void st_flt(void *p, int size, long double v) {
  float f = (float)v;
  double d = (double)v;
  if (size == (int)sizeof f) memcpy(p, &f, sizeof f);
  else if (size == (int)sizeof d) memcpy(p, &d, sizeof d);
  else memcpy(p, &v, sizeof v);
}

/* A random floating value of size bytes at p: +-0 (1 in 5) or +-[1,2) x 2^(-20..20). */
static void gen_flt(void *p, int size, uint64_t *s) {
  uint64_t r = rnd(s);
  long double v = r % 10 == 0 ? 0.0L : r % 10 == 1 ? -0.0L : 1.0L;
  if (v == 1.0L) {
    v += (long double)(rnd(s) >> 1) / 9223372036854775808.0L;
    v = ldexpl((r >> 8) & 1 ? -v : v, (int)((r >> 16) % 41) - 20);
  }
  st_flt(p, size, v);
}

/* A random pair at p from few values (ties are common) and indices 0..15. */
static void gen_pair(const ttype *T, char *p, uint64_t *s) {
  static const long double vals[] = {-2.5L, -1.0L, -0.0L, 0.0L, 1.0L, 3.75L};
  uint64_t r = rnd(s);
  if (T->vcls == TC_INT) st_int(p, T->vsize, (uint64_t)((int64_t)(r % 7) - 3));
  else st_flt(p, T->vsize, vals[r % 6]);
  if (T->icls == TC_INT) st_int(p + T->ioff, T->isize, (r >> 8) % 16);
  else st_flt(p + T->ioff, T->isize, (long double)((r >> 8) % 16));
}

/* A random element of T at p; tie (or NULL) is one it equals 1 time in 8. */
static void gen_elem(const ttype *T, char *p, const char *tie, uint64_t *s) {
  uint64_t r = rnd(s), v = rnd(s);
  if (tie && r % 8 == 0) {
    memcpy(p, tie, (size_t)T->size);
    return;
  }
  switch (T->cls) {
  case TC_FLT: gen_flt(p, T->size, s); break;
  case TC_CPLX: gen_flt(p, T->size / 2, s), gen_flt(p + T->size / 2, T->size / 2, s); break;
  case TC_PAIR: gen_pair(T, p, s); break;
  case TC_BOOL: p[0] = (char)(v & 1); break;
  default: st_int(p, T->size, r % 8 == 1 ? 0 : v); break;
  }
}

/* ---- value checks ------------------------------------------------------ */

/* One value check: op on n base elements of T, through kernel selection k,
 * the user datatype ut and un elements of it; and what the MPI library's
 * results (mpi: compared at all) did. */
typedef struct {
  const ttype *T;
  int op;
  const kernel_sel *k;
  MPI_Datatype ut;
  size_t un, n;
  const char *uname; /* the user datatype's name */
  int mpi;           /* also compare PMPI_Reduce_local and the k == NULL paths */
  int dense;         /* ut has lb 0, extent == size (kernel_apply3 k == NULL works) */
  long mpi_checks, mpi_bad; /* MPI results compared, wrong by a known defect */
  const char *defect;       /* the last known defect seen */
} vcase;

#define GUARD 32
#define FILLB 0xA5

/* The buffers of a check: inputs, their copies, reference, output; data
 * starts shift elements into each block, GUARD bytes follow it. */
typedef struct {
  char *mem[6];
  char *a, *b, *a0, *b0, *ref, *out;
  size_t len, block, shift;
} vbufs;

/* Free the buffers. */
static void vb_free(vbufs *vb) {
  for (int i = 0; i < 6; i++) free(vb->mem[i]);
}

/* Allocate and fill the buffers of case c (shift elements in, inputs from
 * seed *s, reference computed). Returns 0, or 1 (failure recorded). */
static int vb_make(tl_ctx *ctx, const vcase *c, size_t shift, uint64_t *s, vbufs *vb) {
  size_t sz = (size_t)c->T->size;
  memset(vb, 0, sizeof *vb);
  vb->len = c->n * sz, vb->shift = shift * sz, vb->block = vb->shift + vb->len + GUARD;
  for (int i = 0; i < 6; i++) {
    if (!(vb->mem[i] = tl_malloc(ctx, vb->block))) return vb_free(vb), 1;
    memset(vb->mem[i], FILLB, vb->block);
  }
  char **p[6] = {&vb->a, &vb->b, &vb->a0, &vb->b0, &vb->ref, &vb->out};
  for (int i = 0; i < 6; i++) *p[i] = vb->mem[i] + vb->shift;
  for (size_t i = 0; i < c->n; i++) {
    gen_elem(c->T, vb->a + i * sz, NULL, s);
    gen_elem(c->T, vb->b + i * sz, vb->a + i * sz, s);
    ref_elem(c->T, c->op, vb->a + i * sz, vb->b + i * sz, vb->ref + i * sz);
  }
  memcpy(vb->a0, vb->a, vb->len);
  memcpy(vb->b0, vb->b, vb->len);
  return 0;
}

/* Reset the output block to fill bytes, then copy src's data into it (if any). */
static void vb_out(vbufs *vb, const char *src) {
  memset(vb->mem[5], FILLB, vb->block);
  if (src) memcpy(vb->out, src, vb->len);
}

/* Index of the first element of out whose data differs from ref, or -1;
 * *ndiff gets the number of differing elements. */
static long first_diff(const ttype *T, const char *out, const char *ref, size_t n, long *ndiff) {
  long first = -1;
  *ndiff = 0;
  for (size_t i = 0; i < n; i++) {
    const char *g = out + i * (size_t)T->size, *w = ref + i * (size_t)T->size;
    int d = 0;
    for (int b = 0; b < T->size && !d; b++) d = sig_byte(T, b) && g[b] != w[b];
    if (d && first < 0) first = (long)i;
    *ndiff += d;
  }
  return first;
}

/* Hex dump of the size bytes at p into buf (room for 2 * size + 1). */
static const char *hex(char *buf, const char *p, int size) {
  for (int i = 0; i < size; i++) sprintf(buf + 2 * i, "%02x", (unsigned char)p[size - 1 - i]);
  return buf;
}

/* o = x + y for 8- or 16-bit integers of T, saturating (clamped to the
 * type's range) instead of wrapping. */
static void sat_sum(const ttype *T, const void *x, const void *y, void *o) {
  int64_t r = ld_int(x, T->size, T->sign) + ld_int(y, T->size, T->sign);
  int64_t hi = T->sign ? (INT64_C(1) << (8 * T->size - 1)) - 1 : (INT64_C(1) << 8 * T->size) - 1;
  int64_t lo = T->sign ? -hi - 1 : 0;
  st_int(o, T->size, (uint64_t)(r > hi ? hi : r < lo ? lo : r));
}

/* Is every element of the output either right or what the wrong rule
 * `kind` gives: 0 MAX/MIN with the opposite signedness, 1 saturating SUM?
 * (Vectorised MPI code may apply a wrong rule to only part of a buffer.) */
static int alt_matches(const vcase *c, const vbufs *vb, int kind) {
  ttype F = *c->T;
  size_t sz = (size_t)F.size;
  long nd;
  char alt[8];
  F.sign = kind == 0 ? !F.sign : F.sign;
  for (size_t i = 0; i < c->n; i++) {
    const char *x = vb->a + i * sz, *y = vb->b + i * sz, *g = vb->out + i * sz;
    if (kind == 0) ref_int(&F, c->op, x, y, alt);
    else sat_sum(&F, x, y, alt);
    if (first_diff(&F, g, vb->ref + i * sz, 1, &nd) >= 0 && first_diff(&F, g, alt, 1, &nd) >= 0)
      return 0;
  }
  return 1;
}

/* Do output and reference differ only where both are zeros (-0.0 vs +0.0)? */
static int zero_ties_only(const vcase *c, const vbufs *vb) {
  for (size_t i = 0; i < c->n; i++) {
    const char *g = vb->out + i * (size_t)c->T->size, *w = vb->ref + i * (size_t)c->T->size;
    if (ld_flt(g, c->T->size) != ld_flt(w, c->T->size)) return 0;
  }
  return 1;
}

/* The known MPI library defect that explains a wrong output, or NULL:
 * MAX/MIN of integers with the wrong signedness (MPICH 4.0.2, all unsigned
 * types, pmodels/mpich#6083; Open MPI 4.1.2-4.1.4, MPI_UNSIGNED_LONG,
 * open-mpi/ompi#10525, and MPI_OFFSET the other way), saturating 8- and
 * 16-bit SUM and MAX/MIN returning the other zero of a -0/+0 tie (Open MPI's
 * AVX op component; run with --mca op ^avx). */
static const char *known_defect(const vcase *c, const vbufs *vb) {
  int ints = c->T->cls == TC_INT || c->T->cls == TC_FINT;
  int maxmin = c->op == OP_MAX || c->op == OP_MIN;
  if (ints && maxmin && alt_matches(c, vb, 0)) return "compares with the wrong signedness";
  if (ints && c->op == OP_SUM && c->T->size <= 2 && alt_matches(c, vb, 1))
    return "saturates instead of wrapping";
  if (c->T->cls == TC_FLT && maxmin && zero_ties_only(c, vb))
    return "differs only in the sign of zero results of -0/+0 ties";
  return NULL;
}

/* Compare the output of form `form` with the reference. kernel: a result of
 * the kernels (subject to COLLC_TEST_BREAK); else of the MPI library, where
 * a difference a known defect explains is counted in c and noted, not a
 * failure. Also checks the bytes around the output and that the inputs are
 * unchanged. */
static void vb_check(tl_ctx *ctx, vcase *c, vbufs *vb, const char *form, int kernel) {
  const ttype *T = c->T;
  long nd, at;
  char g[80], w[80];
  if (kernel && c->n > 0 && ++ctx->nonempty == ctx->break_at && ctx->rank == ctx->size - 1)
    vb->out[0] ^= 0x5a; /* self-test: this check must now fail */
  at = first_diff(T, vb->out, vb->ref, c->n, &nd);
  const char *why = at >= 0 && !kernel ? known_defect(c, vb) : NULL;
  if (!kernel) c->mpi_checks++, c->mpi_bad += why != NULL;
  if (why) c->defect = why;
  if (at >= 0 && !why)
    tl_fail(ctx, "%s %s n=%zu shift=%zu %s: %ld elements wrong, first [%ld]: got %s want %s",
            c->uname, op_names[c->op], c->un, vb->shift, form, nd, at,
            hex(g, vb->out + at * T->size, T->size), hex(w, vb->ref + at * T->size, T->size));
  for (size_t i = 0; i < vb->block; i++)
    if ((i < vb->shift || i >= vb->shift + vb->len) && (unsigned char)vb->mem[5][i] != FILLB) {
      tl_fail(ctx, "%s %s n=%zu %s: wrote byte %ld outside the output", c->uname,
              op_names[c->op], c->un, form, (long)i - (long)vb->shift);
      break;
    }
  if (memcmp(vb->a, vb->a0, vb->len) || memcmp(vb->b, vb->b0, vb->len))
    tl_fail(ctx, "%s %s n=%zu %s: an input changed", c->uname, op_names[c->op], c->un, form);
  ctx->checks++;
}

/* Record a failure if an apply call returned rc != MPI_SUCCESS. */
static void expect_ok(tl_ctx *ctx, const vcase *c, const char *form, int rc) {
  if (rc != MPI_SUCCESS)
    tl_fail(ctx, "%s %s n=%zu %s: returned %d", c->uname, op_names[c->op], c->un, form, rc);
}

/* The kernel forms of case c on buffers vb. */
static void run_kernel_forms(tl_ctx *ctx, vcase *c, vbufs *vb) {
  const kernel_sel *k = c->k;
  MPI_Op op = op_handle(c->op);
  vb_out(vb, NULL);
  k->k3(vb->a, vb->b, vb->out, c->n);
  vb_check(ctx, c, vb, "k3", 1);
  vb_out(vb, vb->b);
  k->k2(vb->a, vb->out, c->n);
  vb_check(ctx, c, vb, "k2", 1);
  vb_out(vb, vb->b);
  k->k3(vb->a, vb->out, vb->out, c->n);
  vb_check(ctx, c, vb, "k3 out==b", 1);
  vb_out(vb, vb->a);
  k->k3(vb->out, vb->b, vb->out, c->n);
  vb_check(ctx, c, vb, "k3 out==a", 1);
  vb_out(vb, NULL);
  expect_ok(ctx, c, "kernel_apply3", kernel_apply3(k, vb->a, vb->b, vb->out, c->un, c->ut, op));
  vb_check(ctx, c, vb, "kernel_apply3", 1);
  vb_out(vb, vb->b);
  expect_ok(ctx, c, "kernel_apply2", kernel_apply2(k, vb->a, vb->out, c->un, c->ut, op));
  vb_check(ctx, c, vb, "kernel_apply2", 1);
}

/* The MPI forms of case c: PMPI_Reduce_local and kernel_apply2/3 with k == NULL. */
static void run_mpi_forms(tl_ctx *ctx, vcase *c, vbufs *vb) {
  MPI_Op op = op_handle(c->op);
  vb_out(vb, vb->b);
  expect_ok(ctx, c, "PMPI_Reduce_local", PMPI_Reduce_local(vb->a, vb->out, (int)c->un, c->ut, op));
  vb_check(ctx, c, vb, "PMPI_Reduce_local", 0);
  vb_out(vb, vb->b);
  expect_ok(ctx, c, "kernel_apply2 k=NULL", kernel_apply2(NULL, vb->a, vb->out, c->un, c->ut, op));
  vb_check(ctx, c, vb, "kernel_apply2 k=NULL", 0);
  if (!c->dense) return;
  vb_out(vb, NULL);
  expect_ok(ctx, c, "kernel_apply3 k=NULL",
            kernel_apply3(NULL, vb->a, vb->b, vb->out, c->un, c->ut, op));
  vb_check(ctx, c, vb, "kernel_apply3 k=NULL", 0);
}

/* Rank 0 notes the MPI library's results of case c a known defect made wrong. */
static void note_mpi(const tl_ctx *ctx, const vcase *c) {
  if (ctx->rank == 0 && c->mpi_bad > 0)
    printf("note: the MPI library is wrong for %s MPI_%s in %ld of %ld checks: it %s\n",
           c->uname, op_names[c->op], c->mpi_bad, c->mpi_checks, c->defect);
}

/* Run case template c0 for several user counts and two alignments. */
static void run_values(tl_ctx *ctx, const vcase *c0, uint64_t *s) {
  static const size_t counts[] = {0, 1, 2, 7, 16, 33, 100, 1001};
  MPI_Count size;
  MPI_Aint lb, ext;
  vcase c = *c0;
  MPI_Type_size_x(c.ut, &size);
  MPI_Type_get_extent(c.ut, &lb, &ext);
  c.dense = lb == 0 && ext == size;
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
    for (size_t shift = 0; shift < 2; shift++) {
      vbufs vb;
      c.un = counts[i];
      c.n = c.un * c.k->elems;
      if (vb_make(ctx, &c, shift, s, &vb)) return;
      run_kernel_forms(ctx, &c, &vb);
      if (c.mpi) run_mpi_forms(ctx, &c, &vb);
      vb_free(&vb);
    }
  note_mpi(ctx, &c);
}

/* ---- acceptance -------------------------------------------------------- */

/* Counting error handlers for MPI_COMM_WORLD and MPI_COMM_SELF. */
static int world_errs, self_errs;
static void count_world(MPI_Comm *c, int *e, ...) { (void)c, (void)e, world_errs++; }
static void count_self(MPI_Comm *c, int *e, ...) { (void)c, (void)e, self_errs++; }

/* Does PMPI_Reduce_local accept op o on one element of T? 1 yes, 0 no,
 * -1 not asked (floating types with logical ops: MPICH 4.0 asserts). */
static int mpi_accepts(const ttype *T, int o) {
  unsigned char x[64] = {0}, y[64] = {0};
  if (T->cls == TC_FLT && (o == OP_LAND || o == OP_LOR || o == OP_LXOR)) return -1;
  if (T->t == MPI_DATATYPE_NULL) return 0;
  return PMPI_Reduce_local(x, y, 1, T->t, op_handle(o)) == MPI_SUCCESS;
}

/* kernel_select of (T, o) against the standard and the MPI library; notes
 * what only the library accepts. Returns 1 if the kernel was selected. */
static int check_accept(tl_ctx *ctx, const ttype *T, int o, kernel_sel *k, int *notes) {
  kernel_sel k0;
  memset(&k0, 0x3c, sizeof k0);
  *k = k0;
  int sel = kernel_select(T->t, op_handle(o), k);
  int want = std_allows(T->cls, o) && extent_is(T->t, T->size), mpi = mpi_accepts(T, o);
  if (sel != want)
    tl_fail(ctx, "kernel_select(%s, MPI_%s) = %d, want %d", T->name, op_names[o], sel, want);
  if (!sel && memcmp(k, &k0, sizeof k0))
    tl_fail(ctx, "kernel_select(%s, MPI_%s) refused but changed *k", T->name, op_names[o]);
  if (sel && (k->elems != 1 || k->commutative != 1 || !k->k2 || !k->k3))
    tl_fail(ctx, "kernel_select(%s, MPI_%s): elems %zu commutative %d", T->name, op_names[o],
            k->elems, k->commutative);
  if (sel && mpi == 0)
    tl_fail(ctx, "kernel_select accepts %s MPI_%s, PMPI_Reduce_local rejects it", T->name,
            op_names[o]);
  if (want && mpi == 0)
    tl_fail(ctx, "PMPI_Reduce_local rejects %s MPI_%s, which the standard allows", T->name,
            op_names[o]);
  if (!sel && mpi == 1 && ctx->rank == 0)
    printf("note: the MPI library accepts %s MPI_%s; collc falls back for it\n", T->name,
           op_names[o]), (*notes)++;
  ctx->checks++;
  return sel;
}

/* Acceptance of every (type, op) and the value checks of the accepted ones. */
static void check_predefined(tl_ctx *ctx, const ttype *types, int nt, uint64_t *s) {
  MPI_Errhandler ew, es;
  int notes = 0, pairs = 0;
  MPI_Comm_create_errhandler(count_world, &ew);
  MPI_Comm_create_errhandler(count_self, &es);
  for (int i = 0; i < nt; i++)
    for (int o = 0; o < OP_COUNT; o++) {
      kernel_sel k;
      MPI_Comm_set_errhandler(MPI_COMM_WORLD, ew);
      MPI_Comm_set_errhandler(MPI_COMM_SELF, es);
      int sel = check_accept(ctx, &types[i], o, &k, &notes);
      MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
      MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
      if (!sel) continue;
      vcase c = {&types[i], o, &k, types[i].t, 0, 0, types[i].name, 1, 0, 0, 0, NULL};
      run_values(ctx, &c, s);
      pairs++;
    }
  MPI_Errhandler_free(&ew);
  MPI_Errhandler_free(&es);
  if (ctx->rank == 0)
    printf("kernels: %d (type, op) pairs selected and checked; MPI_Reduce_local errors "
           "invoked the handler of MPI_COMM_WORLD %d times, of MPI_COMM_SELF %d times\n",
           pairs, world_errs, self_errs);
}

/* ---- derived types ----------------------------------------------------- */

/* Commit *t and return it. */
static MPI_Datatype committed(MPI_Datatype t) {
  MPI_Type_commit(&t);
  return t;
}

/* Does PMPI_Reduce_local accept op o on one element of derived type t? */
static int mpi_accepts_derived(MPI_Datatype t, int o) {
  char x[256] = {0}, y[256] = {0};
  MPI_Aint lb, ext;
  MPI_Type_get_extent(t, &lb, &ext);
  if (lb != 0 || ext > (MPI_Aint)sizeof x) return 0;
  return PMPI_Reduce_local(x, y, 1, t, op_handle(o)) == MPI_SUCCESS;
}

/* kernel_select on derived type t (named name) with op o must give elems
 * want (0: refuse, *k untouched); if it selects, check values on it with
 * base type base, and against PMPI_Reduce_local on t if the MPI library
 * accepts predefined ops on derived types (Open MPI 4.1 and MPICH 4.0 do
 * not: MPI_ERR_OP, as the standard allows predefined ops on predefined types
 * only; rank 0 notes it once). Frees t. */
static void check_derived(tl_ctx *ctx, const ttype *types, int nt, const char *name,
                          MPI_Datatype t, int o, MPI_Datatype base, size_t want, uint64_t *s) {
  static int noted;
  kernel_sel k0, k;
  memset(&k0, 0x3c, sizeof k0);
  k = k0;
  int sel = kernel_select(t, op_handle(o), &k);
  if (sel != (want > 0) || (sel && k.elems != want) || (!sel && memcmp(&k, &k0, sizeof k)))
    tl_fail(ctx, "kernel_select(%s, MPI_%s) = %d elems %zu, want %d elems %zu", name,
            op_names[o], sel, sel ? k.elems : 0, want > 0, want);
  const ttype *T = type_row(types, nt, base);
  if (sel && k.elems == want && T) {
    vcase c = {T, o, &k, t, 0, 0, name, mpi_accepts_derived(t, o), 0, 0, 0, NULL};
    if (!c.mpi && ctx->rank == 0 && !noted++)
      printf("note: the MPI library rejects MPI_%s on %s (predefined op on a derived type); "
             "compared with the exact result only\n", op_names[o], name);
    run_values(ctx, &c, s);
  }
  ctx->checks++;
  if (t != MPI_DATATYPE_NULL) MPI_Type_free(&t);
}

/* Contiguous and dup chains kernel_select must accept, with their values. */
static void check_chains(tl_ctx *ctx, const ttype *types, int nt, uint64_t *s) {
  MPI_Datatype t, u;
  MPI_Type_contiguous(3, MPI_DOUBLE, &t);
  check_derived(ctx, types, nt, "contig(3,DOUBLE)", committed(t), OP_SUM, MPI_DOUBLE, 3, s);
  MPI_Type_contiguous(3, MPI_DOUBLE, &t);
  check_derived(ctx, types, nt, "contig(3,DOUBLE)", committed(t), OP_MAX, MPI_DOUBLE, 3, s);
  MPI_Type_contiguous(3, MPI_INT, &u);
  MPI_Type_contiguous(2, u, &t);
  MPI_Type_free(&u);
  check_derived(ctx, types, nt, "contig(2,contig(3,INT))", committed(t), OP_BXOR, MPI_INT, 6, s);
  MPI_Type_contiguous(3, MPI_INT, &u);
  MPI_Type_contiguous(2, committed(u), &t);
  MPI_Type_free(&u);
  check_derived(ctx, types, nt, "contig(2,contig(3,INT))", committed(t), OP_PROD, MPI_INT, 6, s);
  MPI_Type_dup(MPI_FLOAT, &t);
  check_derived(ctx, types, nt, "dup(FLOAT)", t, OP_MIN, MPI_FLOAT, 1, s);
  MPI_Type_contiguous(4, MPI_DOUBLE_INT, &u);
  MPI_Type_dup(u, &t);
  MPI_Type_free(&u);
  check_derived(ctx, types, nt, "dup(contig(4,DOUBLE_INT))", committed(t), OP_MAXLOC,
                MPI_DOUBLE_INT, 4, s);
  MPI_Type_contiguous(3, MPI_LONG_DOUBLE_INT, &t);
  check_derived(ctx, types, nt, "contig(3,LONG_DOUBLE_INT)", committed(t), OP_MINLOC,
                MPI_LONG_DOUBLE_INT, 3, s);
  MPI_Type_dup(MPI_C_DOUBLE_COMPLEX, &u);
  MPI_Type_contiguous(5, u, &t);
  MPI_Type_free(&u);
  check_derived(ctx, types, nt, "contig(5,dup(C_DOUBLE_COMPLEX))", committed(t), OP_PROD,
                MPI_C_DOUBLE_COMPLEX, 5, s);
  MPI_Type_contiguous(7, MPI_UNSIGNED_CHAR, &t);
  check_derived(ctx, types, nt, "contig(7,UNSIGNED_CHAR)", committed(t), OP_SUM,
                MPI_UNSIGNED_CHAR, 7, s);
  MPI_Type_contiguous(2, MPI_C_BOOL, &t);
  check_derived(ctx, types, nt, "contig(2,C_BOOL)", committed(t), OP_LXOR, MPI_C_BOOL, 2, s);
  MPI_Type_contiguous(1, MPI_INT, &t);
  check_derived(ctx, types, nt, "contig(1,INT)", committed(t), OP_SUM, MPI_INT, 1, s);
#if MPI_VERSION >= 4
  MPI_Type_contiguous_c(3, MPI_SHORT, &t);
  check_derived(ctx, types, nt, "contig_c(3,SHORT)", committed(t), OP_SUM, MPI_SHORT, 3, s);
#endif
}

/* Derived types kernel_select must refuse (for MPI_SUM unless noted). */
static void check_refused_types(tl_ctx *ctx, const ttype *types, int nt, uint64_t *s) {
  MPI_Datatype t, u, st[2] = {MPI_INT, MPI_DOUBLE};
  int bl[2] = {1, 1}, idx[2] = {0, 2};
  MPI_Aint dis[2] = {0, 8};
  const char *names[] = {"contig(0,INT)", "vector(2,1,3,INT)", "vector(3,2,2,INT)",
                         "resized(DOUBLE,0,16)", "contig(2,resized)", "struct(INT,DOUBLE)",
                         "indexed", "hvector", "contig(2,vector)", "contig(2,PACKED)",
                         "contig(2,WCHAR)"};
  for (int i = 0; i < 11; i++) {
    switch (i) {
    case 0: MPI_Type_contiguous(0, MPI_INT, &t); break;
    case 1: MPI_Type_vector(2, 1, 3, MPI_INT, &t); break;
    case 2: MPI_Type_vector(3, 2, 2, MPI_INT, &t); break;
    case 3: MPI_Type_create_resized(MPI_DOUBLE, 0, 16, &t); break;
    case 4: MPI_Type_create_resized(MPI_DOUBLE, 0, 16, &u); break;
    case 5: MPI_Type_create_struct(2, bl, dis, st, &t); break;
    case 6: MPI_Type_indexed(2, bl, idx, MPI_INT, &t); break;
    case 7: MPI_Type_create_hvector(2, 1, 4, MPI_INT, &t); break;
    case 8: MPI_Type_vector(2, 1, 3, MPI_INT, &u); break;
    case 9: MPI_Type_contiguous(2, MPI_PACKED, &t); break;
    default: MPI_Type_contiguous(2, MPI_WCHAR, &t); break;
    }
    if (i == 4 || i == 8) MPI_Type_contiguous(2, u, &t), MPI_Type_free(&u);
    check_derived(ctx, types, nt, names[i], committed(t), OP_SUM, MPI_INT, 0, s);
  }
  MPI_Type_contiguous(3, MPI_DOUBLE, &t);
  check_derived(ctx, types, nt, "contig(3,DOUBLE) BAND", committed(t), OP_BAND, MPI_DOUBLE, 0,
                s);
  MPI_Type_dup(MPI_FLOAT, &t);
  check_derived(ctx, types, nt, "dup(FLOAT) LAND", t, OP_LAND, MPI_FLOAT, 0, s);
  check_derived(ctx, types, nt, "MPI_DATATYPE_NULL", MPI_DATATYPE_NULL, OP_SUM, MPI_INT, 0, s);
}

/* ---- user ops and k == NULL -------------------------------------------- */

/* The non-commutative user op: inout[i] = in[i] x inout[i], 2x2 row-major
 * matrices of doubles (one element of the contiguous(4, DOUBLE) type). */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt) {
  const double *a = in;
  double *b = inout;
  (void)dt;
  for (int i = 0; i < *len; i++, a += 4, b += 4) {
    double r[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                   a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
    memcpy(b, r, sizeof r);
  }
}

/* A commutative user op (integer sum) for the refusal checks. */
static void isum(void *in, void *inout, int *len, MPI_Datatype *dt) {
  (void)dt;
  for (int i = 0; i < *len; i++) ((int *)inout)[i] += ((const int *)in)[i];
}

/* The expected products x[i] * y[i] of n 2x2 matrices into r (reference). */
static void matmul_ref(const double *x, const double *y, double *r, int n) {
  for (int i = 0; i < n; i++, x += 4, y += 4, r += 4)
    for (int row = 0; row < 2; row++)
      for (int col = 0; col < 2; col++)
        r[2 * row + col] = x[2 * row] * y[col] + x[2 * row + 1] * y[2 + col];
}

/* kernel_select refuses user ops and the non-reduction ops. */
static void check_refused_ops(tl_ctx *ctx, MPI_Op mm, MPI_Op is, MPI_Datatype mat) {
  const MPI_Op ops[] = {mm, is, mm, MPI_OP_NULL, MPI_REPLACE, MPI_NO_OP};
  const MPI_Datatype ts[] = {mat, MPI_INT, MPI_DOUBLE, MPI_INT, MPI_INT, MPI_DOUBLE};
  const char *what[] = {"matmul on mat", "commutative user op on INT", "matmul on DOUBLE",
                        "MPI_OP_NULL", "MPI_REPLACE", "MPI_NO_OP"};
  for (int i = 0; i < 6; i++) {
    kernel_sel k0, k;
    memset(&k0, 0x3c, sizeof k0);
    k = k0;
    if (kernel_select(ts[i], ops[i], &k) != 0 || memcmp(&k, &k0, sizeof k))
      tl_fail(ctx, "kernel_select(%s) accepted or changed *k", what[i]);
    ctx->checks++;
  }
}

/* Compare n matrices got with want; record a failure named what. */
static void expect_mats(tl_ctx *ctx, const char *what, const double *got, const double *want,
                        int n) {
  if (memcmp(got, want, (size_t)n * 4 * sizeof(double)))
    tl_fail(ctx, "%s: wrong matrix products (operand order?)", what);
  ctx->checks++;
}

/* Record a failure unless rc has error class want. */
static void expect_class(tl_ctx *ctx, const char *what, int rc, int want) {
  int cls = -1;
  if (rc == MPI_SUCCESS || MPI_Error_class(rc, &cls) != MPI_SUCCESS || cls != want)
    tl_fail(ctx, "%s: returned %d (class %d), want class %d", what, rc, cls, want);
  ctx->checks++;
}

/* kernel_apply2/3 with k == NULL on the matrix op: order and refusals. */
static void check_user_op(tl_ctx *ctx, uint64_t *s) {
  enum { N = 25 };
  double a[4 * N], b[4 * N], want[4 * N], rev[4 * N], out[4 * N], io[4 * N];
  MPI_Datatype mat, vec;
  MPI_Op mm, is;
  MPI_Type_contiguous(4, MPI_DOUBLE, &mat);
  MPI_Type_commit(&mat);
  MPI_Op_create(matmul, 0, &mm);
  MPI_Op_create(isum, 1, &is);
  check_refused_ops(ctx, mm, is, mat);
  for (int i = 0; i < 4 * N; i++) a[i] = (double)(rnd(s) % 9) - 4, b[i] = (double)(rnd(s) % 9) - 4;
  matmul_ref(a, b, want, N);
  matmul_ref(b, a, rev, N);
  if (!memcmp(want, rev, sizeof want)) tl_fail(ctx, "test broken: products commute");
  memcpy(io, b, sizeof b);
  if (kernel_apply2(NULL, a, io, N, mat, mm) != MPI_SUCCESS)
    tl_fail(ctx, "kernel_apply2(NULL) matmul failed");
  expect_mats(ctx, "kernel_apply2(NULL) matmul", io, want, N);
  memset(out, 0, sizeof out);
  if (kernel_apply3(NULL, a, b, out, N, mat, mm) != MPI_SUCCESS)
    tl_fail(ctx, "kernel_apply3(NULL) matmul failed");
  expect_mats(ctx, "kernel_apply3(NULL) matmul", out, want, N);
  memcpy(io, b, sizeof b);
  kernel_apply3(NULL, a, io, io, N, mat, mm);
  expect_mats(ctx, "kernel_apply3(NULL) matmul out==b", io, want, N);
  expect_class(ctx, "kernel_apply3(NULL) out==a", kernel_apply3(NULL, a, b, a, N, mat, mm),
               MPI_ERR_BUFFER);
  MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  expect_class(ctx, "kernel_apply3(NULL) vector type",
               kernel_apply3(NULL, a, b, out, 2, vec, MPI_SUM), MPI_ERR_TYPE);
  if (kernel_apply2(NULL, a, io, 1, MPI_FLOAT, MPI_BAND) == MPI_SUCCESS)
    tl_fail(ctx, "kernel_apply2(NULL, FLOAT, BAND) succeeded");
  MPI_Type_free(&vec);
  MPI_Type_free(&mat);
  MPI_Op_free(&mm);
  MPI_Op_free(&is);
}

int main(int argc, char **argv) {
  tl_ctx ctx;
  ttype types[96];
  MPI_Init(&argc, &argv);
  tl_init(&ctx, "kernels");
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  double t0 = tl_now();
  uint64_t s = 0x9E3779B97F4A7C15ULL ^ (uint64_t)(ctx.rank + 1) * 0x100000001B3ULL;
  int nt = make_types(types);
  check_predefined(&ctx, types, nt, &s);
  check_chains(&ctx, types, nt, &s);
  check_refused_types(&ctx, types, nt, &s);
  check_user_op(&ctx, &s);
  int rc = tl_finish(&ctx, t0);
  MPI_Finalize();
  return rc;
}
