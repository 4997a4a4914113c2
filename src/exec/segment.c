/* segment.c - node segments: MPI shared-memory windows with a flag line
 * per local rank, and the list that frees them collectively.
 *
 * Segments come from MPI_Win_allocate_shared, so MPI owns and removes the
 * memory (nothing is left behind in /dev/shm if the job dies). Freeing a
 * window is collective over its node, so a segment that a local event
 * drops (a freed persistent request) is only retired here, and every
 * retired segment is freed at MPI_Finalize, in creation order (the same
 * order on every rank, as their creations were collective). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "segment.h"

static shm_seg *head, *tail; /* every live segment, in creation order */
static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;

static void unlink_seg(shm_seg *g) {
  pthread_mutex_lock(&list_lock);
  shm_seg **at = &head, *prev = NULL;
  while (*at && *at != g) prev = *at, at = &(*at)->next;
  if (*at) {
    *at = g->next;
    if (tail == g) tail = prev;
  }
  pthread_mutex_unlock(&list_lock);
}

int seg_new(MPI_Comm node, size_t bytes, int yield, shm_seg **out) {
  int k, me, rc, du;
  MPI_Aint sz;
  char *base = NULL;
  shm_seg *g = calloc(1, sizeof *g);
  *out = NULL;
  if (!g) return MPI_ERR_NO_MEM;
  PMPI_Comm_size(node, &k);
  PMPI_Comm_rank(node, &me);
  size_t head_bytes = sizeof(seg_flag) * (size_t)k, data = (bytes + 63) / 64 * 64;
  rc = PMPI_Win_allocate_shared(me == 0 ? (MPI_Aint)(head_bytes + data + 64) : 0, 1,
                                MPI_INFO_NULL, node, &base, &g->win);
  if (!rc) rc = PMPI_Win_shared_query(g->win, 0, &sz, &du, &base);
  /* MPI promises no alignment (Open MPI's is 8 bytes): start on a cache line,
   * the same one in every process (mappings keep the offset within a page). */
  if (!rc) base += (64 - (uintptr_t)base % 64) % 64;
  if (!rc && me == 0) memset(base, 0, head_bytes);
  if (!rc) rc = PMPI_Barrier(node); /* flags are zero before anyone looks */
  if (rc) {
    if (g->win != MPI_WIN_NULL && g->win) PMPI_Win_free(&g->win);
    free(g);
    return rc;
  }
  g->flag = (seg_flag *)(void *)base;
  g->data = base + head_bytes;
  g->bytes = data;
  g->yield = yield;
  pthread_mutex_lock(&list_lock);
  if (tail) tail->next = g;
  else head = g;
  tail = g;
  pthread_mutex_unlock(&list_lock);
  *out = g;
  return MPI_SUCCESS;
}

void seg_free(shm_seg *g) {
  if (!g) return;
  unlink_seg(g);
  PMPI_Win_free(&g->win);
  free(g);
}

void seg_retire(shm_seg *g) { (void)g; /* stays listed; freed by seg_finalize */ }

void seg_finalize(void) {
  while (head) seg_free(head);
}
