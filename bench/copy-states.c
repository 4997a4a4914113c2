/* copy-states.c - whether this machine changes state for the copies a
 * node-aware collective makes (README, "This machine's two states").
 *
 *   cc -O2 -o copy-states bench/copy-states.c && ./copy-states [BYTES] [BLOCKS] [SHIFT]
 *
 * Two processes on cores 0 and 1 exchange BYTES (default 256 KiB) per
 * iteration through shared memory, as collc's shm allgather at p = 2
 * does: each copies its private block into its slot, flags, and copies the
 * other's slot into a private buffer; the slot is written anew by the other
 * core every time (two copies, "slot"). Alternated with it, block by block
 * (300 iterations each), the same exchange reading a shared buffer that is
 * never rewritten (one copy from clean memory, "clean"), which is what a
 * single-copy transport (CMA) does in OSU's loop, whose send buffer never
 * changes. Prints per block "slot/clean" in microseconds per iteration,
 * BLOCKS (default 30) blocks: the two side by side in time, so a state of
 * the machine shows in both columns alike, or only in the first. The
 * private buffers start on a page, SHIFT bytes into it (default 0): glibc
 * 2.36's memcpy on this machine's AMD EPYC (rep movsb) runs a 256 KiB copy
 * 15-30x slower when the destination lies 1-31 bytes past the source modulo
 * a page (SHIFT 16: both columns, in every state). */
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* The shared state: flags (a cache line apart), two slots, two clean blocks. */
typedef struct {
  atomic_long *posted, *read; /* [rank * 16]: iterations posted, read by the other */
  char *slot, *clean;
} shared;

/* 300 iterations of rank me's exchange of n bytes from iteration *it on
 * (clean: read the clean block, write nothing shared); microseconds per
 * iteration. */
static double block(const shared *S, int me, size_t n, int clean, const char *src, char *dst,
                    long *it) {
  double t0 = now_us();
  for (int k = 0; k < 300; k++) {
    long i = ++*it;
    while (atomic_load(&S->read[16 * me]) < i - 1) sched_yield(); /* my slot read last time */
    if (!clean) memcpy(S->slot + (size_t)me * n, src, n);
    atomic_store(&S->posted[16 * me], i);
    while (atomic_load(&S->posted[16 * (1 - me)]) < i) sched_yield();
    memcpy(dst, (clean ? S->clean : S->slot) + (size_t)(1 - me) * n, n);
    atomic_store(&S->read[16 * (1 - me)], i);
  }
  return (now_us() - t0) / 300;
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 262144;
  int blocks = argc > 2 ? atoi(argv[2]) : 30, shift = argc > 3 ? atoi(argv[3]) : 0;
  char *sh = mmap(NULL, 4 * n + 8192, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED || n == 0 || blocks <= 0 || shift < 0 || shift > 4095)
    return fprintf(stderr, "copy-states: bad arguments\n"), 2;
  shared S = {(atomic_long *)sh, (atomic_long *)sh + 64, sh + 4096, sh + 4096 + 2 * n};
  int me = fork() == 0;
  cpu_set_t c;
  CPU_ZERO(&c);
  CPU_SET(me, &c);
  sched_setaffinity(0, sizeof c, &c); /* (one core each; fewer cores: shared, still correct) */
  size_t room = (n + 8191) / 4096 * 4096;
  char *src = aligned_alloc(4096, room), *dst = aligned_alloc(4096, room);
  if (!src || !dst) return 2;
  src += shift, dst += shift; /* (both: the shared blocks start on pages) */
  memset(src, me + 1, n), memset(dst, 0, n), memset(S.clean + (size_t)me * n, me + 1, n);
  long it = 0;
  for (int b = 0; b < blocks; b++) {
    double slot = block(&S, me, n, 0, src, dst, &it), clean = block(&S, me, n, 1, src, dst, &it);
    if (!me) printf("%.0f/%.0f%c", slot, clean, b + 1 < blocks ? ' ' : '\n');
  }
  if (!me) wait(NULL);
  return 0;
}
