/* kernels.h - typed reduction kernels for the reduction collectives.
 *
 * A kernel combines two arrays element by element with one predefined MPI
 * operation: the 2-operand form computes inout = in op inout, the
 * 3-operand form out = a op b. The FIRST operand (in, a) always holds the
 * lower ranks' contributions, exactly as MPI_Reduce_local(inbuf, inoutbuf)
 * orders them. kernel_select picks the compiled kernel for a (datatype, op)
 * pair once, at plan time; kernel_apply2/3 run it per call, or fall back to
 * PMPI_Reduce_local when no kernel exists (k == NULL).
 *
 * Covered (see kernels.c for the table): MAX, MIN, SUM, PROD, LAND, LOR,
 * LXOR, BAND, BOR, BXOR, MAXLOC, MINLOC on the predefined types MPI allows
 * them on (C integers incl. MPI_CHAR, floating point, complex, C_BOOL, BYTE,
 * the MAXLOC/MINLOC pair types, and the fixed-layout Fortran types), and on
 * MPI_Type_contiguous / MPI_Type_dup chains over such a type.
 *
 * Two things callers should know. (1) Open MPI 4.1 and MPICH 4.0 reject a
 * predefined op on ANY derived datatype (MPI_ERR_OP, from MPI_Reduce_local
 * and MPI_Allreduce alike; the standard defines predefined ops on
 * predefined types only): kernel_select still accepts contiguous/dup chains
 * (elems > 1), so a caller that wants the native behaviour must refuse
 * non-named types itself. (2) The kernels are exact where these libraries
 * are not (MPICH 4.0.2: MAX/MIN of unsigned types compare signed; Open MPI
 * 4.1.4: MAX/MIN of MPI_UNSIGNED_LONG signed and of MPI_OFFSET unsigned, and
 * its AVX component saturates 8/16-bit SUM): results can differ from the
 * native collective's there.
 */
#ifndef COLLC_KERNELS_H
#define COLLC_KERNELS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <mpi.h>

/* Copy n bytes from s to d (no overlap) as memcpy does, but never through
 * glibc's `rep movsb` where d lies 1-31 bytes past s modulo a page: glibc
 * 2.36 on AMD EPYC (Zen) runs such a copy 15-30x slower (glibc bug 30994;
 * README, "This machine's two states"). There it copies in pieces of
 * COPY_PIECE bytes, below glibc's rep movsb threshold, which glibc's vector
 * loop serves at full speed. Elsewhere, or at most COPY_PIECE bytes: one
 * memcpy. */
#define COPY_PIECE 2048
static inline void copy_bytes(void *d, const void *s, size_t n) {
  if (n <= COPY_PIECE || (((uintptr_t)d - (uintptr_t)s - 1) & 4095) >= 31) {
    memcpy(d, s, n);
    return;
  }
  char *dp = d;
  const char *sp = s;
  for (; n > COPY_PIECE; n -= COPY_PIECE, dp += COPY_PIECE, sp += COPY_PIECE)
    memcpy(dp, sp, COPY_PIECE);
  memcpy(dp, sp, n);
}

/* inout[i] = in[i] op inout[i] for i < n base elements. in may equal inout. */
typedef void (*kernel2_fn)(const void *in, void *inout, size_t n);
/* out[i] = a[i] op b[i] for i < n base elements. out may equal a or b
 * exactly; no other overlap. */
typedef void (*kernel3_fn)(const void *a, const void *b, void *out, size_t n);

typedef struct {
  kernel2_fn k2;
  kernel3_fn k3;
  size_t elems;    /* base elements per element of the user's datatype (1 for predefined
                      types, N for MPI_Type_contiguous(N, predefined) and chains of
                      contiguous/dup) */
  int commutative; /* the op is commutative (predefined ops: 1; user ops: as created) */
  int id;          /* (type row, op) of the table: the same id names the CUDA kernel */
} kernel_sel;

/* Select the compiled kernel for (type, op). Returns 1 and fills *k for a
 * predefined op on a predefined type MPI allows it on, or on a chain of
 * MPI_Type_contiguous / MPI_Type_dup over such a type; returns 0 (and
 * leaves *k alone) for anything else: user ops, MPI_REPLACE, MPI_NO_OP,
 * MPI_OP_NULL, MPI_DATATYPE_NULL, other derived types, combinations MPI
 * rejects. Local; never raises an MPI error. */
int kernel_select(MPI_Datatype type, MPI_Op op, kernel_sel *k);

/* inout = in op inout on n elements of the user's datatype: with k's kernel,
 * or, when k == NULL, with PMPI_Reduce_local(in, inout, n, type, op) (in
 * chunks of at most INT_MAX elements). Returns MPI_SUCCESS or an MPI error
 * code. */
int kernel_apply2(const kernel_sel *k, const void *in, void *inout, size_t n, MPI_Datatype type,
                  MPI_Op op);

/* out = a op b on n elements (a holds the lower ranks' contributions): with
 * k's 3-operand kernel (out may equal a or b), or, when k == NULL, memcpy(out,
 * b) then PMPI_Reduce_local(a, out). The k == NULL path needs a dense type
 * (lb 0, extent == size; else MPI_ERR_TYPE) and out != a (else
 * MPI_ERR_BUFFER). Returns MPI_SUCCESS or an MPI error code. */
int kernel_apply3(const kernel_sel *k, const void *a, const void *b, void *out, size_t n,
                  MPI_Datatype type, MPI_Op op);

#endif
