/* dispatch.h - the shared path of every compiled collective entry point. */
#ifndef COLLC_DISPATCH_H
#define COLLC_DISPATCH_H

#include "internal.h"

/* One validated call: what to compile (spec), how buffers are typed (bind),
 * the user's arguments as given, and the native call to fall back to. */
typedef struct dispatch_call {
  collc_spec spec;
  exec_bind bind;
  const void *sendbuf; /* as given (may be MPI_IN_PLACE) */
  void *recvbuf;
  MPI_Comm comm;
  int (*native)(const struct dispatch_call *d);
} dispatch_call;

/* Run call d with algorithm `forced` (NULL: COLLC_<COLL> or the default
 * rule): the cached plan, a newly built one, or the native call (counted with
 * native_bytes). A call whose spec.unit_bytes is 0 moves nothing and returns
 * after the choice is checked. Errors go through the communicator's error handler. A
 * forced text that does not parse or fit returns MPI_ERR_ARG. */
int dispatch(const dispatch_call *d, const char *forced, long long native_bytes);

#endif
