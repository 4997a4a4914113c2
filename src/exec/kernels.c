/* kernels.c - typed reduction kernels: one compiled loop per (type, op).
 *
 * What: for every predefined reduction operation and every predefined
 * datatype MPI allows it on, a 2-operand kernel (inout = in op inout) and a
 * 3-operand kernel (out = a op b), plus kernel_select, which maps a
 * (datatype, op) pair (also a contiguous/dup chain over a predefined type)
 * to them, and the kernel_apply2/3 wrappers with their PMPI_Reduce_local
 * fallback. The first operand always holds the lower ranks' data.
 *
 * Which: categories of the MPI standard (section "Predefined Reduction
 * Operations"), one column each in the op table below:
 *   INT   C integers: MPI_CHAR (Open MPI and MPICH both accept it),
 *         [UNSIGNED_]CHAR, SIGNED_CHAR, [UNSIGNED_]SHORT, INT, UNSIGNED,
 *         [UNSIGNED_]LONG, LONG_LONG_INT, UNSIGNED_LONG_LONG, INTn_T, UINTn_T,
 *         AINT, OFFSET, COUNT          MAX MIN SUM PROD LAND LOR LXOR BAND BOR BXOR
 *   FINT  Fortran INTEGER[n]            MAX MIN SUM PROD BAND BOR BXOR
 *   FLT   FLOAT, DOUBLE, LONG_DOUBLE, Fortran REAL[4|8], DOUBLE_PRECISION
 *                                       MAX MIN SUM PROD
 *   CPLX  C_[FLOAT_|DOUBLE_|LONG_DOUBLE_]COMPLEX, CXX_*_COMPLEX, Fortran
 *         COMPLEX[8|16], DOUBLE_COMPLEX SUM PROD
 *   BOOL  C_BOOL, CXX_BOOL              LAND LOR LXOR
 *   BYTE  BYTE                          BAND BOR BXOR
 *   PAIR  FLOAT_INT, DOUBLE_INT, LONG_INT, 2INT, SHORT_INT, LONG_DOUBLE_INT,
 *         2INTEGER, 2REAL, 2DOUBLE_PRECISION   MAXLOC MINLOC
 * Not covered (PMPI_Reduce_local / the native call serve them): MPI_WCHAR
 * (both MPIs reject it), MPI_CHARACTER, MPI_LOGICAL (.TRUE. is compiler
 * specific), MPI_REAL16/COMPLEX32 (quad precision, not long double), and
 * extensions one MPI accepts and the standard does not (e.g. Open MPI's
 * MAX/SUM/LAND on MPI_BYTE, MPICH's LXOR on MPI_FLOAT).
 *
 * Open MPI 4.1 and MPICH 4.0 reject predefined ops on derived types
 * (MPI_ERR_OP); the contiguous/dup chains accepted here are an extension
 * (see kernels.h). Where those libraries compute wrong results (unsigned
 * MAX/MIN, Open MPI's saturating AVX sums), these kernels are exact.
 *
 * Semantics, as both MPIs compute them: SUM/PROD of integers wrap (done in
 * an unsigned type at least as wide as int, converted back); logical ops
 * give 0 or 1; MAX/MIN return the first operand on ties (visible only for
 * -0.0 vs +0.0); MAXLOC/MINLOC keep the second operand's value on ties and
 * take the smaller index. Floating point: one IEEE operation per element,
 * no reassociation, so the vectorised loops are bit-identical to scalar ones.
 * MPI_C_BOOL is handled as unsigned char (same size and values 0/1).
 *
 * How the table is generated: KERNEL_TYPES lists each type once (name,
 * handle, C type, arithmetic type, category); KERNEL_OPS lists each op once
 * (name, handle, body macro, a 0/1 flag per category). Expanding one inside
 * the other defines the kernels that apply (K_IF on the category's flag)
 * and a static const table of rows {handle, sizeof, k2[op], k3[op]}; MPI
 * handles are address or integer constants in both MPIs, so the table needs
 * no run-time construction. Lookup compares handles: ~60 types x 12 ops.
 * Types that an MPI header may lack are included under #ifdef; a row is
 * used only if the MPI extent of its type equals sizeof its C type.
 */
#include <complex.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include "kernels.h"

/* Pair layouts of MAXLOC/MINLOC: value v, index k (MPI's struct order). */
#define KERNEL_PAIRS(P)                                                                          \
  P(kp_float_int, float, int) P(kp_double_int, double, int) P(kp_long_int, long, int)            \
  P(kp_2int, int, int) P(kp_short_int, short, int) P(kp_ldouble_int, long double, int)           \
  P(kp_2float, float, float) P(kp_2double, double, double)
#define K_PAIR_TYPEDEF(name, V, K) typedef struct { V v; K k; } name;
KERNEL_PAIRS(K_PAIR_TYPEDEF)

/* Types an MPI header may lack. */
#ifdef MPI_COUNT
#define KT_COUNT(X) X(count, MPI_COUNT, MPI_Count, uintmax_t, INT)
#else
#define KT_COUNT(X)
#endif
#ifdef MPI_C_LONG_DOUBLE_COMPLEX
#define KT_LDCPLX(X)                                                                             \
  X(c_ldcplx, MPI_C_LONG_DOUBLE_COMPLEX, long double complex, long double complex, CPLX)
#else
#define KT_LDCPLX(X)
#endif
#if defined(MPI_CXX_BOOL) && defined(MPI_CXX_FLOAT_COMPLEX) && defined(MPI_CXX_DOUBLE_COMPLEX) && \
    defined(MPI_CXX_LONG_DOUBLE_COMPLEX)
#define KT_CXX(X)                                                                                \
  X(cxx_bool, MPI_CXX_BOOL, unsigned char, unsigned, BOOL)                                       \
  X(cxx_fcplx, MPI_CXX_FLOAT_COMPLEX, float complex, float complex, CPLX)                        \
  X(cxx_dcplx, MPI_CXX_DOUBLE_COMPLEX, double complex, double complex, CPLX)                     \
  X(cxx_ldcplx, MPI_CXX_LONG_DOUBLE_COMPLEX, long double complex, long double complex, CPLX)
#else
#define KT_CXX(X)
#endif
#if defined(MPI_INTEGER1) && defined(MPI_INTEGER2) && defined(MPI_INTEGER4) && defined(MPI_INTEGER8)
#define KT_FINTN(X)                                                                              \
  X(f_int1, MPI_INTEGER1, int8_t, unsigned, FINT) X(f_int2, MPI_INTEGER2, int16_t, unsigned, FINT) \
  X(f_int4, MPI_INTEGER4, int32_t, uint32_t, FINT) X(f_int8, MPI_INTEGER8, int64_t, uint64_t, FINT)
#else
#define KT_FINTN(X)
#endif
#if defined(MPI_REAL4) && defined(MPI_REAL8) && defined(MPI_COMPLEX8) && defined(MPI_COMPLEX16)
#define KT_FREALN(X)                                                                             \
  X(f_real4, MPI_REAL4, float, float, FLT) X(f_real8, MPI_REAL8, double, double, FLT)            \
  X(f_cplx8, MPI_COMPLEX8, float complex, float complex, CPLX)                                   \
  X(f_cplx16, MPI_COMPLEX16, double complex, double complex, CPLX)
#else
#define KT_FREALN(X)
#endif

/* X(name, MPI handle, C type, arithmetic type, category). The arithmetic
 * type of an integer is unsigned and at least as wide as int (wrapping, no
 * promotion to signed int); of a pair, unused. */
#define KERNEL_TYPES(X)                                                                          \
  X(char, MPI_CHAR, char, unsigned, INT)                                                         \
  X(schar, MPI_SIGNED_CHAR, signed char, unsigned, INT)                                          \
  X(uchar, MPI_UNSIGNED_CHAR, unsigned char, unsigned, INT)                                      \
  X(short, MPI_SHORT, short, unsigned, INT)                                                      \
  X(ushort, MPI_UNSIGNED_SHORT, unsigned short, unsigned, INT)                                   \
  X(int, MPI_INT, int, unsigned, INT)                                                            \
  X(uint, MPI_UNSIGNED, unsigned, unsigned, INT)                                                 \
  X(long, MPI_LONG, long, unsigned long, INT)                                                    \
  X(ulong, MPI_UNSIGNED_LONG, unsigned long, unsigned long, INT)                                 \
  X(llong, MPI_LONG_LONG_INT, long long, unsigned long long, INT)                                \
  X(ullong, MPI_UNSIGNED_LONG_LONG, unsigned long long, unsigned long long, INT)                 \
  X(i8, MPI_INT8_T, int8_t, unsigned, INT) X(u8, MPI_UINT8_T, uint8_t, unsigned, INT)            \
  X(i16, MPI_INT16_T, int16_t, unsigned, INT) X(u16, MPI_UINT16_T, uint16_t, unsigned, INT)      \
  X(i32, MPI_INT32_T, int32_t, uint32_t, INT) X(u32, MPI_UINT32_T, uint32_t, uint32_t, INT)      \
  X(i64, MPI_INT64_T, int64_t, uint64_t, INT) X(u64, MPI_UINT64_T, uint64_t, uint64_t, INT)      \
  X(aint, MPI_AINT, MPI_Aint, uintmax_t, INT) X(offset, MPI_OFFSET, MPI_Offset, uintmax_t, INT)  \
  KT_COUNT(X)                                                                                    \
  X(f_int, MPI_INTEGER, int, unsigned, FINT) KT_FINTN(X)                                         \
  X(float, MPI_FLOAT, float, float, FLT) X(double, MPI_DOUBLE, double, double, FLT)              \
  X(ldouble, MPI_LONG_DOUBLE, long double, long double, FLT)                                     \
  X(f_real, MPI_REAL, float, float, FLT) X(f_dprec, MPI_DOUBLE_PRECISION, double, double, FLT)   \
  X(c_fcplx, MPI_C_FLOAT_COMPLEX, float complex, float complex, CPLX)                            \
  X(c_dcplx, MPI_C_DOUBLE_COMPLEX, double complex, double complex, CPLX)                         \
  KT_LDCPLX(X)                                                                                   \
  X(f_cplx, MPI_COMPLEX, float complex, float complex, CPLX)                                     \
  X(f_dcplx, MPI_DOUBLE_COMPLEX, double complex, double complex, CPLX)                           \
  KT_FREALN(X) KT_CXX(X)                                                                         \
  X(c_bool, MPI_C_BOOL, unsigned char, unsigned, BOOL)                                           \
  X(byte, MPI_BYTE, unsigned char, unsigned, BYTE)                                               \
  X(float_int, MPI_FLOAT_INT, kp_float_int, int, PAIR)                                           \
  X(double_int, MPI_DOUBLE_INT, kp_double_int, int, PAIR)                                        \
  X(long_int, MPI_LONG_INT, kp_long_int, int, PAIR)                                              \
  X(two_int, MPI_2INT, kp_2int, int, PAIR)                                                       \
  X(short_int, MPI_SHORT_INT, kp_short_int, int, PAIR)                                           \
  X(ldouble_int, MPI_LONG_DOUBLE_INT, kp_ldouble_int, int, PAIR)                                 \
  X(f_2int, MPI_2INTEGER, kp_2int, int, PAIR)                                                    \
  X(f_2real, MPI_2REAL, kp_2float, int, PAIR)                                                    \
  X(f_2dprec, MPI_2DOUBLE_PRECISION, kp_2double, int, PAIR)

/* Op bodies: o = x op y for one element (x the lower ranks' operand) of C
 * type T with arithmetic type AT. o may be the same object as y. */
#define KB_MAX(o, x, y, T, AT) (o) = (y) > (x) ? (y) : (x)
#define KB_MIN(o, x, y, T, AT) (o) = (y) < (x) ? (y) : (x)
#define KB_SUM(o, x, y, T, AT) (o) = (T)((AT)(x) + (AT)(y))
#define KB_PROD(o, x, y, T, AT) (o) = (T)((AT)(x) * (AT)(y))
#define KB_LAND(o, x, y, T, AT) (o) = (T)(((x) != 0) & ((y) != 0))
#define KB_LOR(o, x, y, T, AT) (o) = (T)(((x) != 0) | ((y) != 0))
#define KB_LXOR(o, x, y, T, AT) (o) = (T)(((x) != 0) ^ ((y) != 0))
#define KB_BAND(o, x, y, T, AT) (o) = (T)((x) & (y))
#define KB_BOR(o, x, y, T, AT) (o) = (T)((x) | (y))
#define KB_BXOR(o, x, y, T, AT) (o) = (T)((x) ^ (y))
#define KB_LOC(o, x, y, T, cmp)                                                                  \
  do {                                                                                           \
    T r_;                                                                                        \
    r_.v = (x).v cmp (y).v ? (x).v : (y).v;                                                      \
    r_.k = (x).v cmp (y).v ? (x).k : (x).v == (y).v && (x).k < (y).k ? (x).k : (y).k;             \
    (o).v = r_.v;                                                                                \
    (o).k = r_.k;                                                                                \
  } while (0)
#define KB_MAXLOC(o, x, y, T, AT) KB_LOC(o, x, y, T, >)
#define KB_MINLOC(o, x, y, T, AT) KB_LOC(o, x, y, T, <)

/* X(..., name, MPI handle, body, (INT, FINT, FLT, CPLX, BOOL, BYTE, PAIR)):
 * the categories the op applies to. */
#define KERNEL_OPS(X, ...)                                                                       \
  X(__VA_ARGS__, MAX, MPI_MAX, KB_MAX, (1, 1, 1, 0, 0, 0, 0))                                    \
  X(__VA_ARGS__, MIN, MPI_MIN, KB_MIN, (1, 1, 1, 0, 0, 0, 0))                                    \
  X(__VA_ARGS__, SUM, MPI_SUM, KB_SUM, (1, 1, 1, 1, 0, 0, 0))                                    \
  X(__VA_ARGS__, PROD, MPI_PROD, KB_PROD, (1, 1, 1, 1, 0, 0, 0))                                 \
  X(__VA_ARGS__, LAND, MPI_LAND, KB_LAND, (1, 0, 0, 0, 1, 0, 0))                                 \
  X(__VA_ARGS__, LOR, MPI_LOR, KB_LOR, (1, 0, 0, 0, 1, 0, 0))                                    \
  X(__VA_ARGS__, LXOR, MPI_LXOR, KB_LXOR, (1, 0, 0, 0, 1, 0, 0))                                 \
  X(__VA_ARGS__, BAND, MPI_BAND, KB_BAND, (1, 1, 0, 0, 0, 1, 0))                                 \
  X(__VA_ARGS__, BOR, MPI_BOR, KB_BOR, (1, 1, 0, 0, 0, 1, 0))                                    \
  X(__VA_ARGS__, BXOR, MPI_BXOR, KB_BXOR, (1, 1, 0, 0, 0, 1, 0))                                 \
  X(__VA_ARGS__, MAXLOC, MPI_MAXLOC, KB_MAXLOC, (0, 0, 0, 0, 0, 0, 1))                           \
  X(__VA_ARGS__, MINLOC, MPI_MINLOC, KB_MINLOC, (0, 0, 0, 0, 0, 0, 1))

/* Preprocessor helpers: K_PICK(cat, flags) is the flag of category cat;
 * K_IF(f, a, b) is a if f is 1, b if it is 0. */
#define K_APPLY(m, args) m args
#define K_PICK(cat, flags) K_APPLY(K_PICK_##cat, flags)
#define K_PICK_INT(i, fi, f, c, l, b, p) i
#define K_PICK_FINT(i, fi, f, c, l, b, p) fi
#define K_PICK_FLT(i, fi, f, c, l, b, p) f
#define K_PICK_CPLX(i, fi, f, c, l, b, p) c
#define K_PICK_BOOL(i, fi, f, c, l, b, p) l
#define K_PICK_BYTE(i, fi, f, c, l, b, p) b
#define K_PICK_PAIR(i, fi, f, c, l, b, p) p
#define K_IF(f, a, b) K_IF_(f, a, b)
#define K_IF_(f, a, b) K_IF_##f(a, b)
#define K_IF_1(a, b) a
#define K_IF_0(a, b) b
#define K_NOTHING(...)

enum {
#define K_OP_ENUM(unused, on, oh, body, flags) K_OP_##on,
  KERNEL_OPS(K_OP_ENUM, 0) K_NOPS
#undef K_OP_ENUM
};

/* Plain loops; GCC's -O2 cost model does not vectorise loops of unknown trip
 * count, so allow it here (vectorisation never changes the results). No
 * FMA contraction (a complex product must round each product), whatever
 * the compiler's default. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE__)
#pragma GCC push_options
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic", "fp-contract=off")
#endif
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* The kernels of type tn and op on (both forms). */
#define K_DEFINE(tn, T, AT, on, body)                                                            \
  static void k2_##tn##_##on(const void *in, void *inout, size_t n) {                            \
    const T *a = in;                                                                             \
    T *b = inout;                                                                                \
    for (size_t i = 0; i < n; i++) body(b[i], a[i], b[i], T, AT);                                \
  }                                                                                              \
  static void k3_##tn##_##on(const void *a_, const void *b_, void *out, size_t n) {              \
    const T *a = a_;                                                                             \
    const T *b = b_;                                                                             \
    T *o = out;                                                                                  \
    for (size_t i = 0; i < n; i++) body(o[i], a[i], b[i], T, AT);                                \
  }
#define K_GEN_CELL(tn, T, AT, cat, on, oh, body, flags)                                          \
  K_IF(K_PICK(cat, flags), K_DEFINE, K_NOTHING)(tn, T, AT, on, body)
#define K_GEN_TYPE(tn, h, T, AT, cat) KERNEL_OPS(K_GEN_CELL, tn, T, AT, cat)
KERNEL_TYPES(K_GEN_TYPE)

#if defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE__)
#pragma GCC pop_options
#endif

/* One row of the lookup table: a type's kernels per op (NULL: not allowed). */
typedef struct {
  MPI_Datatype type;
  size_t size; /* sizeof the C type: must be the MPI extent */
  kernel2_fn k2[K_NOPS];
  kernel3_fn k3[K_NOPS];
} k_row;

#define K_CELL2(tn, cat, on, oh, body, flags) K_IF(K_PICK(cat, flags), k2_##tn##_##on, NULL),
#define K_CELL3(tn, cat, on, oh, body, flags) K_IF(K_PICK(cat, flags), k3_##tn##_##on, NULL),
#define K_ROW(tn, h, T, AT, cat)                                                                 \
  {h, sizeof(T), {KERNEL_OPS(K_CELL2, tn, cat)}, {KERNEL_OPS(K_CELL3, tn, cat)}},
static const k_row k_rows[] = {KERNEL_TYPES(K_ROW)};

#define K_OP_HANDLE(unused, on, oh, body, flags) oh,
static const MPI_Op k_ops[K_NOPS] = {KERNEL_OPS(K_OP_HANDLE, 0)};

/* Index of predefined op op in k_ops, or -1 (user ops, MPI_REPLACE, ...). */
static int find_op(MPI_Op op) {
  for (int i = 0; i < K_NOPS; i++)
    if (k_ops[i] == op) return i;
  return -1;
}

/* The table row of predefined type t, or NULL. t != MPI_DATATYPE_NULL. */
static const k_row *find_row(MPI_Datatype t) {
  for (size_t i = 0; i < sizeof k_rows / sizeof k_rows[0]; i++)
    if (k_rows[i].type == t) return &k_rows[i];
  return NULL;
}

/* True if t has lower bound 0 and extent bytes. */
static int extent_is(MPI_Datatype t, size_t bytes) {
  MPI_Aint lb, ext;
  if (PMPI_Type_get_extent(t, &lb, &ext) != MPI_SUCCESS) return 0;
  return lb == 0 && ext >= 0 && (size_t)ext == bytes;
}

/* One constructor step of t: its combiner, and for a contiguous or dup type
 * the count (1 for dup) and the old type in *child (a new handle if derived).
 * Returns 0, or -1 if MPI fails or t is made by any other constructor. */
static int type_step(MPI_Datatype t, int *comb, long long *count, MPI_Datatype *child) {
  int ints[1] = {1};
  MPI_Aint addrs[1];
#if MPI_VERSION >= 4
  MPI_Count ni, na, nc, nd, counts[1] = {1};
  if (PMPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, comb) != MPI_SUCCESS) return -1;
#else
  int ni, na, nc = 0, nd;
  if (PMPI_Type_get_envelope(t, &ni, &na, &nd, comb) != MPI_SUCCESS) return -1;
#endif
  if (*comb == MPI_COMBINER_NAMED) return 0;
  if ((*comb != MPI_COMBINER_CONTIGUOUS && *comb != MPI_COMBINER_DUP) || ni + nc > 1 ||
      na != 0 || nd != 1)
    return -1;
#if MPI_VERSION >= 4
  if (PMPI_Type_get_contents_c(t, ni, 0, nc, 1, ints, addrs, counts, child) != MPI_SUCCESS)
    return -1;
  *count = nc ? (long long)counts[0] : ints[0];
#else
  if (PMPI_Type_get_contents(t, ni, 0, 1, ints, addrs, child) != MPI_SUCCESS) return -1;
  *count = ints[0];
#endif
  if (*comb == MPI_COMBINER_DUP) *count = 1;
  return 0;
}

/* Free a handle MPI_Type_get_contents returned, unless it is predefined. */
static void release(MPI_Datatype t) {
  int ni, na, nd, comb;
  if (PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb) == MPI_SUCCESS &&
      comb != MPI_COMBINER_NAMED)
    PMPI_Type_free(&t);
}

/* Follow contiguous/dup constructors from t to a predefined type *base;
 * *elems = product of the counts. Returns 1, or 0 for any other type or an
 * element count of 0 or overflowing. Frees every handle it obtained. */
static int unwrap(MPI_Datatype t, MPI_Datatype *base, size_t *elems) {
  MPI_Datatype cur = t;
  int ok = 0;
  *elems = 1;
  for (int depth = 0; depth < 1000; depth++) {
    int comb;
    long long count = 1;
    MPI_Datatype child;
    if (type_step(cur, &comb, &count, &child) != 0) break;
    if (comb == MPI_COMBINER_NAMED) {
      *base = cur;
      ok = *elems > 0;
      break;
    }
    if (cur != t) release(cur);
    cur = child;
    if (count < 0 || (count > 0 && *elems > SIZE_MAX / (unsigned long long)count)) break;
    *elems *= (size_t)count;
  }
  if (!ok && cur != t) release(cur);
  return ok;
}

int kernel_select(MPI_Datatype type, MPI_Op op, kernel_sel *k) {
  int o = find_op(op);
  MPI_Datatype base = type;
  size_t elems = 1;
  if (o < 0 || type == MPI_DATATYPE_NULL) return 0;
  const k_row *r = find_row(type);
  if (!r && unwrap(type, &base, &elems)) r = find_row(base);
  if (!r || !r->k2[o] || !extent_is(base, r->size)) return 0;
  if (elems != 1 && (elems > SIZE_MAX / r->size || !extent_is(type, r->size * elems))) return 0;
  k->k2 = r->k2[o];
  k->k3 = r->k3[o];
  k->elems = elems;
  k->commutative = 1;
  k->id = (int)(r - k_rows) * K_NOPS + o;
  return 1;
}

/* PMPI_Reduce_local on n elements of type, in chunks of at most INT_MAX. */
static int reduce_local(const void *in, void *inout, size_t n, MPI_Datatype type, MPI_Op op) {
  MPI_Aint lb, ext = 0;
  if (n > INT_MAX && PMPI_Type_get_extent(type, &lb, &ext) != MPI_SUCCESS) return MPI_ERR_TYPE;
  while (n > 0) {
    int c = n > INT_MAX ? INT_MAX : (int)n;
    int rc = PMPI_Reduce_local(in, inout, c, type, op);
    if (rc != MPI_SUCCESS) return rc;
    in = (const char *)in + (size_t)c * (size_t)ext;
    inout = (char *)inout + (size_t)c * (size_t)ext;
    n -= (size_t)c;
  }
  return MPI_SUCCESS;
}

int kernel_apply2(const kernel_sel *k, const void *in, void *inout, size_t n, MPI_Datatype type,
                  MPI_Op op) {
  if (n == 0) return MPI_SUCCESS;
  if (k) {
    k->k2(in, inout, n * k->elems);
    return MPI_SUCCESS;
  }
  return reduce_local(in, inout, n, type, op);
}

int kernel_apply3(const kernel_sel *k, const void *a, const void *b, void *out, size_t n,
                  MPI_Datatype type, MPI_Op op) {
  MPI_Aint lb, ext;
  MPI_Count size;
  if (n == 0) return MPI_SUCCESS;
  if (k) {
    k->k3(a, b, out, n * k->elems);
    return MPI_SUCCESS;
  }
  if (out == a) return MPI_ERR_BUFFER;
  if (type == MPI_DATATYPE_NULL || PMPI_Type_size_x(type, &size) != MPI_SUCCESS ||
      PMPI_Type_get_extent(type, &lb, &ext) != MPI_SUCCESS || lb != 0 || ext != size)
    return MPI_ERR_TYPE;
  if (out != b) memcpy(out, b, n * (size_t)ext);
  return reduce_local(a, out, n, type, op);
}
