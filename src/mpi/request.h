/* request.h - persistent requests, for the MPI completion calls.
 * Everything named req_* except req_live and req_raise runs under req_lock. */
#ifndef COLLC_REQUEST_H
#define COLLC_REQUEST_H

#include "dispatch.h"

enum { REQ_IDLE, REQ_RUNNING, REQ_DONE }; /* DONE: complete, not yet reported */

typedef struct preq preq;

void req_lock(void);
void req_unlock(void);
/* True if any persistent request of ours exists (no lock needed). */
int req_live(void);
/* Number of started requests not yet complete. */
int req_nactive(void);
/* Our request behind handle h, or NULL. */
preq *req_find(MPI_Request h);
int req_state(const preq *r);
MPI_Comm req_comm(const preq *r);
/* Move every running request on, without blocking. */
void req_progress(void);
/* Run r to its end: alone it blocks in MPI; with others running all are
 * polled (the lock dropped while yielding), so ranks that wait for
 * different collectives never wait for each other. */
void req_finish(preq *r);
/* Report r's completion: IDLE again; st gets the empty status of a
 * collective (MPI's own, from the inactive handle). A nonblocking call's
 * request is destroyed and its handle *h set to MPI_REQUEST_NULL. Returns
 * r's error class. */
int req_report(preq *r, MPI_Status *st, MPI_Request *h);
/* st gets the empty status of MPI (unless MPI_STATUS_IGNORE). */
void req_empty_status(MPI_Status *st);
/* MPI_Request_free: now, or when r ends if it is running. */
void req_free(preq *r);
/* collc_raise(comm, err) unless err is MPI_SUCCESS (call without the lock). */
int req_raise(MPI_Comm comm, int err);

#endif
