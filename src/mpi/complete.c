/* complete.c - MPI's completion calls over PMPI, aware of collc's
 * persistent requests (request.c): MPI_Wait, Waitall, Waitany, Waitsome,
 * Test, Testall, Testany, Testsome, Request_free, Request_get_status.
 *
 * Ours look inactive to MPI, so in a mixed list MPI completes the native
 * requests and gives ours empty statuses; we complete ours and report
 * them. While any of ours runs, waits poll (and yield), so that every
 * running collective moves on whatever the program waits for. */
#include <sched.h>
#include "request.h"

/* What a list holds of ours. Under lock. */
typedef struct {
  int ours, running;
} scan_t;

static scan_t scan(int n, const MPI_Request h[]) {
  scan_t s = {0, 0};
  for (int i = 0; i < n; i++) {
    preq *r = req_find(h[i]);
    s.ours += r != NULL;
    s.running += r && req_state(r) == REQ_RUNNING;
  }
  return s;
}

/* Move ours on and scan h; *nactive gets how many of ours run anywhere. */
static scan_t poll(int n, const MPI_Request h[], int *nactive) {
  req_lock();
  req_progress();
  scan_t s = scan(n, h);
  *nactive = req_nactive();
  req_unlock();
  return s;
}

static MPI_Status *at(MPI_Status *sts, int i) {
  return sts == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &sts[i];
}

/* Report ours of h[] that are DONE: their statuses go to sts[k], sts[k+1],
 * ... and their indices to idx[] (if idx), k counting on from k0 (or, with
 * idx NULL, to sts[i]). Returns the new k; *err gets MPI_ERR_IN_STATUS if
 * one of them failed (and *comm its communicator). */
static int report_done(int n, MPI_Request h[], int k, int idx[], MPI_Status sts[], int *err,
                       MPI_Comm *comm) {
  req_lock();
  for (int i = 0; i < n; i++) {
    preq *r = req_find(h[i]);
    if (!r || req_state(r) != REQ_DONE) continue;
    MPI_Status *st = at(sts, idx ? k : i);
    *comm = req_comm(r);
    int e = req_report(r, st, &h[i]);
    if (e) *err = MPI_ERR_IN_STATUS;
    if (e && st != MPI_STATUS_IGNORE) st->MPI_ERROR = e;
    if (idx) idx[k] = i;
    k++;
  }
  req_unlock();
  return k;
}

/* Finish a Waitall/Testall whose list has completed with native code rc. */
static int all_reported(int n, MPI_Request h[], MPI_Status sts[], int rc) {
  int err = MPI_SUCCESS;
  MPI_Comm c = MPI_COMM_NULL;
  report_done(n, h, 0, NULL, sts, &err, &c);
  return rc ? rc : req_raise(c, err);
}

int MPI_Wait(MPI_Request *h, MPI_Status *st) {
  if (!req_live() || !h) return PMPI_Wait(h, st);
  req_lock();
  preq *r = req_find(*h);
  if (r) {
    req_finish(r);
    MPI_Comm c = req_comm(r);
    int err = req_report(r, st, h);
    req_unlock();
    return req_raise(c, err);
  }
  req_unlock();
  for (int na;;) { /* a native request: poll while ours run */
    int flag = 0, rc;
    poll(0, NULL, &na);
    if (!na) return PMPI_Wait(h, st);
    if ((rc = PMPI_Test(h, &flag, st)) || flag) return rc;
    sched_yield();
  }
}

int MPI_Test(MPI_Request *h, int *flag, MPI_Status *st) {
  if (!req_live() || !h || !flag) return PMPI_Test(h, flag, st);
  req_lock();
  req_progress();
  preq *r = req_find(*h);
  if (!r) {
    req_unlock();
    return PMPI_Test(h, flag, st);
  }
  *flag = req_state(r) != REQ_RUNNING;
  MPI_Comm c = req_comm(r);
  int err = *flag ? req_report(r, st, h) : MPI_SUCCESS;
  req_unlock();
  return req_raise(c, err);
}

int MPI_Waitall(int n, MPI_Request h[], MPI_Status sts[]) {
  if (!req_live() || n <= 0 || !h) return PMPI_Waitall(n, h, sts);
  for (int na;;) {
    int flag = 0, rc;
    scan_t s = poll(n, h, &na);
    if (!s.ours && !na) return PMPI_Waitall(n, h, sts);
    if (!s.running && !na) return all_reported(n, h, sts, PMPI_Waitall(n, h, sts));
    if (!s.running && ((rc = PMPI_Testall(n, h, &flag, sts)) || flag))
      return all_reported(n, h, sts, rc);
    sched_yield();
  }
}

int MPI_Testall(int n, MPI_Request h[], int *flag, MPI_Status sts[]) {
  int na, rc;
  if (!req_live() || n <= 0 || !h || !flag) return PMPI_Testall(n, h, flag, sts);
  scan_t s = poll(n, h, &na);
  if (s.running) { /* not all complete: nothing is touched */
    *flag = 0;
    return MPI_SUCCESS;
  }
  if ((rc = PMPI_Testall(n, h, flag, sts)) || !*flag || !s.ours) return rc;
  return all_reported(n, h, sts, rc);
}

/* One round of Waitany/Testany: ours first, then MPI's. *flag: an answer
 * (an index, or MPI_UNDEFINED when nothing in h is active). */
static int any_round(int n, MPI_Request h[], int *idx, int *flag, MPI_Status *st) {
  int na, rc;
  scan_t s = poll(n, h, &na);
  for (int i = 0; i < n && s.ours; i++) {
    req_lock();
    preq *r = req_find(h[i]);
    if (!r || req_state(r) != REQ_DONE) {
      req_unlock();
      continue;
    }
    MPI_Comm c = req_comm(r);
    int err = req_report(r, st, &h[i]);
    req_unlock();
    *idx = i, *flag = 1;
    return req_raise(c, err);
  }
  if ((rc = PMPI_Testany(n, h, idx, flag, st))) return rc;
  if (*flag && *idx == MPI_UNDEFINED && s.running) *flag = 0; /* ours are active */
  return MPI_SUCCESS;
}

int MPI_Waitany(int n, MPI_Request h[], int *idx, MPI_Status *st) {
  if (!req_live() || n <= 0 || !h || !idx) return PMPI_Waitany(n, h, idx, st);
  for (;;) {
    int flag = 0, rc = any_round(n, h, idx, &flag, st);
    if (rc || flag) return rc;
    sched_yield();
  }
}

int MPI_Testany(int n, MPI_Request h[], int *idx, int *flag, MPI_Status *st) {
  if (!req_live() || n <= 0 || !h || !idx || !flag) return PMPI_Testany(n, h, idx, flag, st);
  return any_round(n, h, idx, flag, st);
}

/* One round of Waitsome/Testsome: MPI's completions, then ours appended.
 * *out: the count (0 if none yet; MPI_UNDEFINED if nothing is active). */
static int some_round(int n, MPI_Request h[], int *out, int idx[], MPI_Status sts[]) {
  int na, err = MPI_SUCCESS, rc;
  MPI_Comm c = MPI_COMM_NULL;
  scan_t s = poll(n, h, &na);
  if ((rc = PMPI_Testsome(n, h, out, idx, sts))) return rc;
  int k = *out == MPI_UNDEFINED ? 0 : *out;
  if (s.ours) k = report_done(n, h, k, idx, sts, &err, &c);
  if (k > 0 || *out != MPI_UNDEFINED || s.running) *out = k;
  return req_raise(c, err);
}

int MPI_Waitsome(int n, MPI_Request h[], int *out, int idx[], MPI_Status sts[]) {
  if (!req_live() || n <= 0 || !h || !out || !idx) return PMPI_Waitsome(n, h, out, idx, sts);
  for (;;) {
    int rc = some_round(n, h, out, idx, sts);
    if (rc || *out != 0) return rc;
    sched_yield();
  }
}

int MPI_Testsome(int n, MPI_Request h[], int *out, int idx[], MPI_Status sts[]) {
  if (!req_live() || n <= 0 || !h || !out || !idx) return PMPI_Testsome(n, h, out, idx, sts);
  return some_round(n, h, out, idx, sts);
}

int MPI_Request_free(MPI_Request *h) {
  if (!req_live() || !h) return PMPI_Request_free(h);
  req_lock();
  preq *r = req_find(*h);
  if (r) {
    req_free(r);
    *h = MPI_REQUEST_NULL;
  }
  req_unlock();
  return r ? MPI_SUCCESS : PMPI_Request_free(h);
}

int MPI_Request_get_status(MPI_Request h, int *flag, MPI_Status *st) {
  if (!req_live() || !flag) return PMPI_Request_get_status(h, flag, st);
  req_lock();
  req_progress();
  preq *r = req_find(h);
  if (r && (*flag = req_state(r) != REQ_RUNNING)) req_empty_status(st);
  req_unlock();
  return r ? MPI_SUCCESS : PMPI_Request_get_status(h, flag, st);
}
