/* segment.h - node segments (shm_seg, exec.h): create, free, retire. */
#ifndef COLLC_SEGMENT_H
#define COLLC_SEGMENT_H

#include "exec.h"

/* A segment of at least bytes of data on node communicator node (every
 * rank of node calls, with the same bytes; collective). yield: waits give
 * up the core at once. MPI_SUCCESS or an MPI error code. */
int seg_new(MPI_Comm node, size_t bytes, int yield, shm_seg **out);
/* Free g now (collective over its node). */
void seg_free(shm_seg *g);
/* g is no longer used; it is freed at seg_finalize (local). */
void seg_retire(shm_seg *g);
/* Free every remaining segment, in creation order (collective: at finalize). */
void seg_finalize(void);

#endif
