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

/* Host C types of the table's floating-point kinds (kernel_table.h). */
#define K_LDOUBLE_T long double
#define K_FCPLX_T float complex
#define K_DCPLX_T double complex
#define K_LDCPLX_T long double complex
#include "kernel_table.h"

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
