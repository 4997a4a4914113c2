/* flag.c - publishing and awaiting node flags (see flag.h). */
#ifndef _DEFAULT_SOURCE /* (smpicc defines it) */
#define _DEFAULT_SOURCE /* syscall() */
#endif
#include <sched.h>
#include <time.h>
#include "flag.h"
#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

_Static_assert(sizeof(seg_flag) == 128, "a flag fills two cache lines: counter, publication");

void flag_publish(seg_flag *f, uint64_t v) {
  atomic_store_explicit(&f->value, v, memory_order_seq_cst);
  if (atomic_load_explicit(&f->waiters, memory_order_seq_cst) == 0) return;
  atomic_fetch_add_explicit(&f->wake, 1, memory_order_seq_cst);
#ifdef __linux__
  syscall(SYS_futex, &f->wake, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
#endif
}

/* Sleep until f->wake moves from w (or 1 ms passes). */
static void doze(seg_flag *f, uint32_t w) {
#ifdef __linux__
  struct timespec ms = {0, 1000000};
  syscall(SYS_futex, &f->wake, FUTEX_WAIT, w, &ms, NULL, 0);
#else
  (void)f, (void)w;
  sched_yield();
#endif
}

/* The counter against want: 1 reached, -1 poisoned, 0 not yet. */
static int look(seg_flag *f, uint64_t want, memory_order mo) {
  uint64_t v = atomic_load_explicit(&f->value, mo);
  return v == FLAG_POISON ? -1 : v >= want;
}

int flag_wait(seg_flag *f, uint64_t want, int blocking, int crowded) {
  int got;
  unsigned spins = crowded ? 8 : 1u << 16, yields = 16; /* (not crowded: ~50 us of spinning) */
  for (unsigned i = 0; i < spins + yields; i++) {
    if ((got = look(f, want, memory_order_acquire))) return got;
    if (!blocking) { /* a polling caller (MPI_Test loops) must not starve the owner */
      if (crowded) sched_yield();
      return 0;
    }
    if (i >= spins) sched_yield();
  }
  for (;;) { /* announce, re-check, sleep: a publish after the re-check wakes us */
    uint32_t w = atomic_load_explicit(&f->wake, memory_order_seq_cst);
    atomic_fetch_add_explicit(&f->waiters, 1, memory_order_seq_cst);
    if (!(got = look(f, want, memory_order_seq_cst))) doze(f, w);
    atomic_fetch_sub_explicit(&f->waiters, 1, memory_order_seq_cst);
    if (got || (got = look(f, want, memory_order_acquire))) return got;
  }
}
