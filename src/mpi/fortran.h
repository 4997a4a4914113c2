/* fortran.h - the Fortran entry points collc defines, one row each, from
 * which fortran.c generates every symbol form (see there):
 *
 *   X(kind, pfx, PFX, lower, Mixed, UPPER, params, args, call)
 *
 * kind: CALL (call is the C call, its result the error code), NEWREQ (call
 * makes a request in q, converted to Fortran in *r), CALL0 and NEWREQ0 (the
 * same for a call without buffers, the barrier: MPICH's mpi_f08 name of it
 * calls PMPI_ directly, so collc defines that one too), OWN (fimpl_<pfx>_<lower>
 * is written by hand in fortran.c: completion calls), FWD (forwarded to the
 * MPI library's own Fortran symbol of the same name, call the fallback
 * when there is none; params include ierr). params: the Fortran arguments
 * (all by reference) before ierr; args: their names. */
#ifndef COLLC_FORTRAN_H
#define COLLC_FORTRAN_H

#define FT_BUF2 void *sb, void *rb
#define FT_RED MPI_Fint *n, MPI_Fint *t, MPI_Fint *op
#define FT_PAIR MPI_Fint *sn, MPI_Fint *st, void *rb, MPI_Fint *rn, MPI_Fint *rt
#define C_RED fint(n), ftype(t), fop(op)
#define C_PAIR fint(sn), ftype(st), fbuf(rb), fint(rn), ftype(rt)
/* Gatherv's receive side (counts, displacements), scatterv's send side. */
#define FT_GV void *sb, MPI_Fint *sn, MPI_Fint *st, void *rb, MPI_Fint *rc, MPI_Fint *dp, \
              MPI_Fint *rt, MPI_Fint *root, MPI_Fint *c
#define C_GV fbuf(sb), fint(sn), ftype(st), fbuf(rb), fints(rc), fints(dp), ftype(rt), \
             fint(root), fcomm(c)
#define FT_SV void *sb, MPI_Fint *sc, MPI_Fint *dp, MPI_Fint *st, void *rb, MPI_Fint *rn, \
              MPI_Fint *rt, MPI_Fint *root, MPI_Fint *c
#define C_SV fbuf(sb), fints(sc), fints(dp), ftype(st), fbuf(rb), fint(rn), ftype(rt), \
             fint(root), fcomm(c)
/* Per-rank counts: allgatherv's (sendcount, sendtype, recvbuf, recvcounts,
 * displs, recvtype), reduce_scatter's (recvcounts, datatype, op). */
#define FT_VPAIR MPI_Fint *sn, MPI_Fint *st, void *rb, MPI_Fint *rc, MPI_Fint *d, MPI_Fint *rt
#define C_VPAIR fint(sn), ftype(st), fbuf(rb), fints(rc), fints(d), ftype(rt)
#define FT_VRED MPI_Fint *rc, MPI_Fint *t, MPI_Fint *op
#define C_VRED fints(rc), ftype(t), fop(op)
/* Alltoallv's (both sides' counts and displacements, comm). */
#define FT_AV void *sb, MPI_Fint *sc, MPI_Fint *sd, MPI_Fint *st, void *rb, MPI_Fint *rc, \
              MPI_Fint *rd, MPI_Fint *rt, MPI_Fint *c
#define C_AV fbuf(sb), fints(sc), fints(sd), ftype(st), fbuf(rb), fints(rc), fints(rd), \
             ftype(rt), fcomm(c)

/* The collectives (the barrier too): blocking, nonblocking, persistent. */
#define FORTRAN_COLLS(X)                                                                         \
  X(CALL, mpi, MPI, allreduce, Allreduce, ALLREDUCE, (FT_BUF2, FT_RED, MPI_Fint *c),             \
    (sb, rb, n, t, op, c), MPI_Allreduce(fbuf(sb), fbuf(rb), C_RED, fcomm(c)))                   \
  X(CALL, mpi, MPI, reduce_scatter_block, Reduce_scatter_block, REDUCE_SCATTER_BLOCK,           \
    (FT_BUF2, FT_RED, MPI_Fint *c), (sb, rb, n, t, op, c),                                       \
    MPI_Reduce_scatter_block(fbuf(sb), fbuf(rb), C_RED, fcomm(c)))                               \
  X(CALL, mpi, MPI, reduce, Reduce, REDUCE, (FT_BUF2, FT_RED, MPI_Fint *root, MPI_Fint *c),      \
    (sb, rb, n, t, op, root, c), MPI_Reduce(fbuf(sb), fbuf(rb), C_RED, fint(root), fcomm(c)))    \
  X(CALL, mpi, MPI, allgather, Allgather, ALLGATHER, (void *sb, FT_PAIR, MPI_Fint *c),           \
    (sb, sn, st, rb, rn, rt, c), MPI_Allgather(fbuf(sb), C_PAIR, fcomm(c)))                      \
  X(CALL, mpi, MPI, alltoall, Alltoall, ALLTOALL, (void *sb, FT_PAIR, MPI_Fint *c),              \
    (sb, sn, st, rb, rn, rt, c), MPI_Alltoall(fbuf(sb), C_PAIR, fcomm(c)))                       \
  X(CALL, mpi, MPI, bcast, Bcast, BCAST,                                                         \
    (void *b, MPI_Fint *n, MPI_Fint *t, MPI_Fint *root, MPI_Fint *c), (b, n, t, root, c),       \
    MPI_Bcast(fbuf(b), fint(n), ftype(t), fint(root), fcomm(c)))                                 \
  X(CALL0, mpi, MPI, barrier, Barrier, BARRIER, (MPI_Fint *c), (c), MPI_Barrier(fcomm(c)))      \
  X(CALL, mpi, MPI, gather, Gather, GATHER, (void *sb, FT_PAIR, MPI_Fint *root, MPI_Fint *c),    \
    (sb, sn, st, rb, rn, rt, root, c), MPI_Gather(fbuf(sb), C_PAIR, fint(root), fcomm(c)))       \
  X(CALL, mpi, MPI, scatter, Scatter, SCATTER, (void *sb, FT_PAIR, MPI_Fint *root, MPI_Fint *c), \
    (sb, sn, st, rb, rn, rt, root, c), MPI_Scatter(fbuf(sb), C_PAIR, fint(root), fcomm(c)))      \
  X(CALL, mpi, MPI, gatherv, Gatherv, GATHERV, (FT_GV), (sb, sn, st, rb, rc, dp, rt, root, c),   \
    MPI_Gatherv(C_GV))                                                                           \
  X(CALL, mpi, MPI, scatterv, Scatterv, SCATTERV, (FT_SV), (sb, sc, dp, st, rb, rn, rt, root, c),\
    MPI_Scatterv(C_SV))                                                                          \
  X(NEWREQ, mpi, MPI, igather, Igather, IGATHER,                                                 \
    (void *sb, FT_PAIR, MPI_Fint *root, MPI_Fint *c, MPI_Fint *r),                               \
    (sb, sn, st, rb, rn, rt, root, c, r),                                                        \
    MPI_Igather(fbuf(sb), C_PAIR, fint(root), fcomm(c), &q))                                     \
  X(NEWREQ, mpi, MPI, iscatter, Iscatter, ISCATTER,                                              \
    (void *sb, FT_PAIR, MPI_Fint *root, MPI_Fint *c, MPI_Fint *r),                               \
    (sb, sn, st, rb, rn, rt, root, c, r),                                                        \
    MPI_Iscatter(fbuf(sb), C_PAIR, fint(root), fcomm(c), &q))                                    \
  X(NEWREQ, mpi, MPI, igatherv, Igatherv, IGATHERV, (FT_GV, MPI_Fint *r),                        \
    (sb, sn, st, rb, rc, dp, rt, root, c, r), MPI_Igatherv(C_GV, &q))                            \
  X(NEWREQ, mpi, MPI, iscatterv, Iscatterv, ISCATTERV, (FT_SV, MPI_Fint *r),                     \
    (sb, sc, dp, st, rb, rn, rt, root, c, r), MPI_Iscatterv(C_SV, &q))                           \
  X(CALL, mpi, MPI, allgatherv, Allgatherv, ALLGATHERV, (void *sb, FT_VPAIR, MPI_Fint *c),       \
    (sb, sn, st, rb, rc, d, rt, c), MPI_Allgatherv(fbuf(sb), C_VPAIR, fcomm(c)))                 \
  X(CALL, mpi, MPI, reduce_scatter, Reduce_scatter, REDUCE_SCATTER,                              \
    (FT_BUF2, FT_VRED, MPI_Fint *c), (sb, rb, rc, t, op, c),                                     \
    MPI_Reduce_scatter(fbuf(sb), fbuf(rb), C_VRED, fcomm(c)))                                    \
  X(CALL, mpi, MPI, alltoallv, Alltoallv, ALLTOALLV, (FT_AV), (sb, sc, sd, st, rb, rc, rd, rt, c), \
    MPI_Alltoallv(C_AV))                                                                         \
  X(NEWREQ, mpi, MPI, ialltoallv, Ialltoallv, IALLTOALLV, (FT_AV, MPI_Fint *r),                  \
    (sb, sc, sd, st, rb, rc, rd, rt, c, r), MPI_Ialltoallv(C_AV, &q))                            \
  X(NEWREQ, mpi, MPI, iallreduce, Iallreduce, IALLREDUCE, (FT_BUF2, FT_RED, MPI_Fint *c,         \
    MPI_Fint *r), (sb, rb, n, t, op, c, r),                                                      \
    MPI_Iallreduce(fbuf(sb), fbuf(rb), C_RED, fcomm(c), &q))                                     \
  X(NEWREQ, mpi, MPI, ireduce_scatter_block, Ireduce_scatter_block, IREDUCE_SCATTER_BLOCK,      \
    (FT_BUF2, FT_RED, MPI_Fint *c, MPI_Fint *r), (sb, rb, n, t, op, c, r),                       \
    MPI_Ireduce_scatter_block(fbuf(sb), fbuf(rb), C_RED, fcomm(c), &q))                          \
  X(NEWREQ, mpi, MPI, ireduce, Ireduce, IREDUCE,                                                 \
    (FT_BUF2, FT_RED, MPI_Fint *root, MPI_Fint *c, MPI_Fint *r), (sb, rb, n, t, op, root, c, r), \
    MPI_Ireduce(fbuf(sb), fbuf(rb), C_RED, fint(root), fcomm(c), &q))                            \
  X(NEWREQ, mpi, MPI, iallgather, Iallgather, IALLGATHER, (void *sb, FT_PAIR, MPI_Fint *c,      \
    MPI_Fint *r), (sb, sn, st, rb, rn, rt, c, r),                                                \
    MPI_Iallgather(fbuf(sb), C_PAIR, fcomm(c), &q))                                              \
  X(NEWREQ, mpi, MPI, ialltoall, Ialltoall, IALLTOALL, (void *sb, FT_PAIR, MPI_Fint *c,         \
    MPI_Fint *r), (sb, sn, st, rb, rn, rt, c, r),                                                \
    MPI_Ialltoall(fbuf(sb), C_PAIR, fcomm(c), &q))                                               \
  X(NEWREQ, mpi, MPI, ibcast, Ibcast, IBCAST,                                                    \
    (void *b, MPI_Fint *n, MPI_Fint *t, MPI_Fint *root, MPI_Fint *c, MPI_Fint *r),              \
    (b, n, t, root, c, r), MPI_Ibcast(fbuf(b), fint(n), ftype(t), fint(root), fcomm(c), &q))     \
  X(NEWREQ0, mpi, MPI, ibarrier, Ibarrier, IBARRIER, (MPI_Fint *c, MPI_Fint *r), (c, r),         \
    MPI_Ibarrier(fcomm(c), &q))                                                                  \
  X(NEWREQ, mpi, MPI, iallgatherv, Iallgatherv, IALLGATHERV,                                     \
    (void *sb, FT_VPAIR, MPI_Fint *c, MPI_Fint *r), (sb, sn, st, rb, rc, d, rt, c, r),           \
    MPI_Iallgatherv(fbuf(sb), C_VPAIR, fcomm(c), &q))                                            \
  X(NEWREQ, mpi, MPI, ireduce_scatter, Ireduce_scatter, IREDUCE_SCATTER,                         \
    (FT_BUF2, FT_VRED, MPI_Fint *c, MPI_Fint *r), (sb, rb, rc, t, op, c, r),                     \
    MPI_Ireduce_scatter(fbuf(sb), fbuf(rb), C_VRED, fcomm(c), &q))                               \
  FORTRAN_INITS(X, mpi, MPI, MPI)                                                                \
  FORTRAN_MPIX_INITS(X)

/* The persistent inits under prefix pfx/PFX, calling C's P_<Coll>_init. */
#define FORTRAN_INITS(X, pfx, PFX, P)                                                            \
  X(NEWREQ, pfx, PFX, allreduce_init, Allreduce_init, ALLREDUCE_INIT,                            \
    (FT_BUF2, FT_RED, MPI_Fint *c, MPI_Fint *info, MPI_Fint *r), (sb, rb, n, t, op, c, info, r), \
    P##_Allreduce_init(fbuf(sb), fbuf(rb), C_RED, fcomm(c), finfo(info), &q))                    \
  X(NEWREQ, pfx, PFX, reduce_scatter_block_init, Reduce_scatter_block_init,                      \
    REDUCE_SCATTER_BLOCK_INIT, (FT_BUF2, FT_RED, MPI_Fint *c, MPI_Fint *info, MPI_Fint *r),      \
    (sb, rb, n, t, op, c, info, r),                                                              \
    P##_Reduce_scatter_block_init(fbuf(sb), fbuf(rb), C_RED, fcomm(c), finfo(info), &q))         \
  X(NEWREQ, pfx, PFX, reduce_init, Reduce_init, REDUCE_INIT,                                     \
    (FT_BUF2, FT_RED, MPI_Fint *root, MPI_Fint *c, MPI_Fint *info, MPI_Fint *r),                 \
    (sb, rb, n, t, op, root, c, info, r),                                                        \
    P##_Reduce_init(fbuf(sb), fbuf(rb), C_RED, fint(root), fcomm(c), finfo(info), &q))           \
  X(NEWREQ, pfx, PFX, allgather_init, Allgather_init, ALLGATHER_INIT,                            \
    (void *sb, FT_PAIR, MPI_Fint *c, MPI_Fint *info, MPI_Fint *r),                               \
    (sb, sn, st, rb, rn, rt, c, info, r),                                                        \
    P##_Allgather_init(fbuf(sb), C_PAIR, fcomm(c), finfo(info), &q))                             \
  X(NEWREQ, pfx, PFX, alltoall_init, Alltoall_init, ALLTOALL_INIT,                               \
    (void *sb, FT_PAIR, MPI_Fint *c, MPI_Fint *info, MPI_Fint *r),                               \
    (sb, sn, st, rb, rn, rt, c, info, r),                                                        \
    P##_Alltoall_init(fbuf(sb), C_PAIR, fcomm(c), finfo(info), &q))                              \
  X(NEWREQ, pfx, PFX, bcast_init, Bcast_init, BCAST_INIT,                                        \
    (void *b, MPI_Fint *n, MPI_Fint *t, MPI_Fint *root, MPI_Fint *c, MPI_Fint *info,            \
     MPI_Fint *r), (b, n, t, root, c, info, r),                                                  \
    P##_Bcast_init(fbuf(b), fint(n), ftype(t), fint(root), fcomm(c), finfo(info), &q))           \
  X(NEWREQ0, pfx, PFX, barrier_init, Barrier_init, BARRIER_INIT,                                 \
    (MPI_Fint *c, MPI_Fint *info, MPI_Fint *r), (c, info, r),                                    \
    P##_Barrier_init(fcomm(c), finfo(info), &q))                                                 \
  X(NEWREQ, pfx, PFX, gather_init, Gather_init, GATHER_INIT,                                     \
    (void *sb, FT_PAIR, MPI_Fint *root, MPI_Fint *c, MPI_Fint *info, MPI_Fint *r),               \
    (sb, sn, st, rb, rn, rt, root, c, info, r),                                                  \
    P##_Gather_init(fbuf(sb), C_PAIR, fint(root), fcomm(c), finfo(info), &q))                    \
  X(NEWREQ, pfx, PFX, scatter_init, Scatter_init, SCATTER_INIT,                                  \
    (void *sb, FT_PAIR, MPI_Fint *root, MPI_Fint *c, MPI_Fint *info, MPI_Fint *r),               \
    (sb, sn, st, rb, rn, rt, root, c, info, r),                                                  \
    P##_Scatter_init(fbuf(sb), C_PAIR, fint(root), fcomm(c), finfo(info), &q))                   \
  X(NEWREQ, pfx, PFX, gatherv_init, Gatherv_init, GATHERV_INIT,                                  \
    (FT_GV, MPI_Fint *info, MPI_Fint *r), (sb, sn, st, rb, rc, dp, rt, root, c, info, r),        \
    P##_Gatherv_init(C_GV, finfo(info), &q))                                                     \
  X(NEWREQ, pfx, PFX, scatterv_init, Scatterv_init, SCATTERV_INIT,                               \
    (FT_SV, MPI_Fint *info, MPI_Fint *r), (sb, sc, dp, st, rb, rn, rt, root, c, info, r),        \
    P##_Scatterv_init(C_SV, finfo(info), &q))                                                      \
  X(NEWREQ, pfx, PFX, allgatherv_init, Allgatherv_init, ALLGATHERV_INIT,                         \
    (void *sb, FT_VPAIR, MPI_Fint *c, MPI_Fint *info, MPI_Fint *r),                              \
    (sb, sn, st, rb, rc, d, rt, c, info, r),                                                     \
    P##_Allgatherv_init(fbuf(sb), C_VPAIR, fcomm(c), finfo(info), &q))                           \
  X(NEWREQ, pfx, PFX, reduce_scatter_init, Reduce_scatter_init, REDUCE_SCATTER_INIT,             \
    (FT_BUF2, FT_VRED, MPI_Fint *c, MPI_Fint *info, MPI_Fint *r), (sb, rb, rc, t, op, c, info, r), \
    P##_Reduce_scatter_init(fbuf(sb), fbuf(rb), C_VRED, fcomm(c), finfo(info), &q))            \
  X(NEWREQ, pfx, PFX, alltoallv_init, Alltoallv_init, ALLTOALLV_INIT,                            \
    (FT_AV, MPI_Fint *info, MPI_Fint *r), (sb, sc, sd, st, rb, rc, rd, rt, c, info, r),          \
    P##_Alltoallv_init(C_AV, finfo(info), &q))

/* Open MPI 4.1's Fortran persistent collectives are its MPIX_ extension. */
#ifdef COLLC_MPIX_INIT
#define FORTRAN_MPIX_INITS(X) FORTRAN_INITS(X, mpix, MPIX, MPIX)
#else
#define FORTRAN_MPIX_INITS(X)
#endif

/* Requests (hand-written conversions in fortran.c), init and finalize. */
#define FORTRAN_REQUESTS(X)                                                                      \
  X(OWN, mpi, MPI, start, Start, START, (MPI_Fint *r), (r), 0)                                   \
  X(OWN, mpi, MPI, startall, Startall, STARTALL, (MPI_Fint *n, MPI_Fint *r), (n, r), 0)          \
  X(OWN, mpi, MPI, wait, Wait, WAIT, (MPI_Fint *r, MPI_Fint *s), (r, s), 0)                      \
  X(OWN, mpi, MPI, test, Test, TEST, (MPI_Fint *r, MPI_Fint *flag, MPI_Fint *s), (r, flag, s),   \
    0)                                                                                           \
  X(OWN, mpi, MPI, waitall, Waitall, WAITALL, (MPI_Fint *n, MPI_Fint *r, MPI_Fint *s),           \
    (n, r, s), 0)                                                                                \
  X(OWN, mpi, MPI, testall, Testall, TESTALL,                                                    \
    (MPI_Fint *n, MPI_Fint *r, MPI_Fint *flag, MPI_Fint *s), (n, r, flag, s), 0)                 \
  X(OWN, mpi, MPI, waitany, Waitany, WAITANY,                                                    \
    (MPI_Fint *n, MPI_Fint *r, MPI_Fint *idx, MPI_Fint *s), (n, r, idx, s), 0)                   \
  X(OWN, mpi, MPI, testany, Testany, TESTANY,                                                    \
    (MPI_Fint *n, MPI_Fint *r, MPI_Fint *idx, MPI_Fint *flag, MPI_Fint *s),                      \
    (n, r, idx, flag, s), 0)                                                                     \
  X(OWN, mpi, MPI, waitsome, Waitsome, WAITSOME,                                                 \
    (MPI_Fint *n, MPI_Fint *r, MPI_Fint *out, MPI_Fint *idx, MPI_Fint *s),                       \
    (n, r, out, idx, s), 0)                                                                      \
  X(OWN, mpi, MPI, testsome, Testsome, TESTSOME,                                                 \
    (MPI_Fint *n, MPI_Fint *r, MPI_Fint *out, MPI_Fint *idx, MPI_Fint *s),                       \
    (n, r, out, idx, s), 0)                                                                      \
  X(OWN, mpi, MPI, request_free, Request_free, REQUEST_FREE, (MPI_Fint *r), (r), 0)             \
  X(OWN, mpi, MPI, request_get_status, Request_get_status, REQUEST_GET_STATUS,                   \
    (MPI_Fint *r, MPI_Fint *flag, MPI_Fint *s), (r, flag, s), 0)                                 \
  X(FWD, mpi, MPI, init, Init, INIT, (MPI_Fint *ierr), (ierr), PMPI_Init(NULL, NULL))            \
  X(FWD, mpi, MPI, init_thread, Init_thread, INIT_THREAD,                                        \
    (MPI_Fint *req, MPI_Fint *prov, MPI_Fint *ierr), (req, prov, ierr),                          \
    fwd_init_thread(req, prov))                                                                  \
  X(FWD, mpi, MPI, finalize, Finalize, FINALIZE, (MPI_Fint *ierr), (ierr), PMPI_Finalize())

#define FORTRAN_ROWS(X) FORTRAN_COLLS(X) FORTRAN_REQUESTS(X)

#endif
