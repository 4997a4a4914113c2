/* kernel_table.h - the typed reduction kernels' table, defined once: the
 * types (KERNEL_TYPES), the operations (KERNEL_OPS), the element bodies
 * and the preprocessor helpers that expand one inside the other. Included
 * by kernels.c (the host kernels and kernel_select) and by the CUDA batch
 * kernel (src/cuda/batch.cu), so a kernel id (row x op) means the same
 * (type, op) on both. The includer defines the C types of the table's
 * floating-point kinds first: K_LDOUBLE_T, K_FCPLX_T, K_DCPLX_T, K_LDCPLX_T
 * (host: long double, float complex, ...), and includes mpi.h. See
 * kernels.c for what is covered and the semantics. */
#ifndef COLLC_KERNEL_TABLE_H
#define COLLC_KERNEL_TABLE_H

#include <stdint.h>

/* Pair layouts of MAXLOC/MINLOC: value v, index k (MPI's struct order). */
#define KERNEL_PAIRS(P)                                                                          \
  P(kp_float_int, float, int) P(kp_double_int, double, int) P(kp_long_int, long, int)            \
  P(kp_2int, int, int) P(kp_short_int, short, int) P(kp_ldouble_int, K_LDOUBLE_T, int)           \
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
  X(c_ldcplx, MPI_C_LONG_DOUBLE_COMPLEX, K_LDCPLX_T, K_LDCPLX_T, CPLX)
#else
#define KT_LDCPLX(X)
#endif
#if defined(MPI_CXX_BOOL) && defined(MPI_CXX_FLOAT_COMPLEX) && defined(MPI_CXX_DOUBLE_COMPLEX) && \
    defined(MPI_CXX_LONG_DOUBLE_COMPLEX)
#define KT_CXX(X)                                                                                \
  X(cxx_bool, MPI_CXX_BOOL, unsigned char, unsigned, BOOL)                                       \
  X(cxx_fcplx, MPI_CXX_FLOAT_COMPLEX, K_FCPLX_T, K_FCPLX_T, CPLX)                        \
  X(cxx_dcplx, MPI_CXX_DOUBLE_COMPLEX, K_DCPLX_T, K_DCPLX_T, CPLX)                     \
  X(cxx_ldcplx, MPI_CXX_LONG_DOUBLE_COMPLEX, K_LDCPLX_T, K_LDCPLX_T, CPLX)
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
  X(f_cplx8, MPI_COMPLEX8, K_FCPLX_T, K_FCPLX_T, CPLX)                                   \
  X(f_cplx16, MPI_COMPLEX16, K_DCPLX_T, K_DCPLX_T, CPLX)
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
  X(ldouble, MPI_LONG_DOUBLE, K_LDOUBLE_T, K_LDOUBLE_T, FLT)                                     \
  X(f_real, MPI_REAL, float, float, FLT) X(f_dprec, MPI_DOUBLE_PRECISION, double, double, FLT)   \
  X(c_fcplx, MPI_C_FLOAT_COMPLEX, K_FCPLX_T, K_FCPLX_T, CPLX)                            \
  X(c_dcplx, MPI_C_DOUBLE_COMPLEX, K_DCPLX_T, K_DCPLX_T, CPLX)                         \
  KT_LDCPLX(X)                                                                                   \
  X(f_cplx, MPI_COMPLEX, K_FCPLX_T, K_FCPLX_T, CPLX)                                     \
  X(f_dcplx, MPI_DOUBLE_COMPLEX, K_DCPLX_T, K_DCPLX_T, CPLX)                           \
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

#endif
