/* args.c - argument checks shared by the MPI entry points. */
#include "args.h"
#include "../exec/exec.h"

int args_comm(MPI_Comm comm, int *inter) {
  *inter = 0;
  if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, inter) != MPI_SUCCESS)
    return MPI_ERR_COMM;
  return MPI_SUCCESS;
}

int args_count_type(int count, MPI_Datatype t) {
  MPI_Count size;
  if (count < 0) return MPI_ERR_COUNT;
  if (t == MPI_DATATYPE_NULL || PMPI_Type_size_x(t, &size) != MPI_SUCCESS) return MPI_ERR_TYPE;
  return MPI_SUCCESS;
}

long long args_bytes(int count, MPI_Datatype t) {
  MPI_Count size = 0;
  if (PMPI_Type_size_x(t, &size) != MPI_SUCCESS || size < 0) return -1;
  return (long long)count * size;
}

int args_buffer(const void *buf, int count, MPI_Datatype t) {
  return buf == NULL && args_bytes(count, t) > 0 && exec_type_named(t) ? MPI_ERR_BUFFER
                                                                       : MPI_SUCCESS;
}

int args_pair(const void *sb, int sc, MPI_Datatype st, const void *rb, int rc, MPI_Datatype rt) {
  int in_place = sb == MPI_IN_PLACE, err;
  if ((err = args_count_type(rc, rt)) || (!in_place && (err = args_count_type(sc, st)))) return err;
  if (rb == MPI_IN_PLACE) return MPI_ERR_BUFFER;
  long long rbytes = args_bytes(rc, rt), sbytes = in_place ? rbytes : args_bytes(sc, st);
  if (rbytes < 0 || sbytes < 0) return MPI_ERR_TYPE;
  if (sbytes != rbytes) return sbytes > rbytes ? MPI_ERR_TRUNCATE : MPI_ERR_ARG;
  if ((err = args_buffer(rb, rc, rt)) || (!in_place && (err = args_buffer(sb, sc, st)))) return err;
  if (!in_place && rbytes && sb == rb && exec_type_named(st) && exec_type_named(rt))
    return MPI_ERR_BUFFER;
  return MPI_SUCCESS;
}

int args_op(MPI_Op op) { return op == MPI_OP_NULL ? MPI_ERR_OP : MPI_SUCCESS; }

int args_root(int root, int p) { return root < 0 || root >= p ? MPI_ERR_ROOT : MPI_SUCCESS; }

/* True for the operations MPI predefines. */
static int predefined_op(MPI_Op op) {
  const MPI_Op ops[] = {MPI_MAX,  MPI_MIN,  MPI_SUM,  MPI_PROD,   MPI_LAND,   MPI_LOR,     MPI_LXOR,
                        MPI_BAND, MPI_BOR,  MPI_BXOR, MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE, MPI_NO_OP};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (op == ops[i]) return 1;
  return 0;
}

int args_reducible(MPI_Datatype t, MPI_Op op) {
  MPI_Aint lb, ext, tlb, text;
  MPI_Count size;
  if (exec_type_named(t)) return 1;
  if (predefined_op(op)) return 0; /* MPI defines these on predefined types only */
  PMPI_Type_size_x(t, &size);
  PMPI_Type_get_extent(t, &lb, &ext);
  PMPI_Type_get_true_extent(t, &tlb, &text);
  return lb == 0 && tlb == 0 && ext == size && text == size;
}
