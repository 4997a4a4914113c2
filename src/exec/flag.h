/* flag.h - node flags: one counter per rank on its own cache line in the
 * shared segment, published with release and awaited with acquire.
 *
 * A waiter spins briefly, then yields, then sleeps on a futex (Linux; it
 * keeps yielding elsewhere) until the owner publishes: a spinning waiter
 * on a shared core would otherwise steal the time the owner needs, and
 * sched_yield does not reliably hand the core over. Sleeps are bounded
 * (1 ms) and re-check the counter, so a lost wake-up delays, never hangs. */
#ifndef COLLC_FLAG_H
#define COLLC_FLAG_H

#include <stdatomic.h>
#include <stdint.h>

typedef struct {
  _Atomic uint64_t value;   /* the counter (exec.h: (run - 1) * STEP_DONE + step) */
  _Atomic uint32_t waiters; /* ranks asleep (or about to sleep) on wake */
  _Atomic uint32_t wake;    /* futex word: bumped by a publish that finds waiters */
  char pad[48];
  /* Single copy (GET), on a cache line of its own: written by the owner
   * when its execution begins, read by others after they acquire one of
   * its later steps. */
  int32_t pid;              /* the owner's process */
  uint32_t direct;          /* bit b: its buffer b may be read in place */
  uint64_t base[3];         /* its buffers' addresses: [b - BUF_SEND], b = SEND, RECV, TMP */
  uint64_t limit[3];        /* their sizes in bytes (a GET past them is refused) */
  char pad2[8];
} seg_flag;

#define FLAG_POISON UINT64_MAX /* the owner failed mid-execution */

/* Publish v (release) and wake sleepers. */
void flag_publish(seg_flag *f, uint64_t v);
/* 1 once f's counter >= want, -1 if poisoned; not blocking: 0 if neither
 * yet. crowded: the node has more ranks than cores (stop spinning early). */
int flag_wait(seg_flag *f, uint64_t want, int blocking, int crowded);

#endif
