/* verify.h - run all p ranks' programs in one process on symbolic data. */
#ifndef COLLC_VERIFY_H
#define COLLC_VERIFY_H

#include <stdint.h>
#include "../algo/algo.h"
#include "../ir/batch.h"

typedef struct {
  int ok;                 /* 1: all checks passed */
  int deadlock;           /* 1: ranks left blocked with no progress possible */
  int64_t messages;       /* point-to-point messages matched */
  int64_t units;          /* units moved between ranks (messages and group calls) */
  int64_t group_calls;    /* group collective instances executed */
  int64_t max_rank_units; /* most units sent by one rank */
  int64_t errors;         /* problems found (first one in first_error) */
  char first_error[256];
} verify_report;

/* Compile choice c for every rank of spec s (s->rank ignored) and run the p
 * programs together with rendezvous message semantics (a send completes only
 * when matched), checking: message sizes agree, group calls agree, no
 * buffer is touched while a request on it is in flight, no deadlock, and
 * every output unit holds exactly the right input unit. Returns R->ok. */
int verify_choice(const collc_spec *s, const collc_choice *c, verify_report *R);

/* The same checks on given programs: progs[r] is rank r's finalized program
 * for spec s (all must share s but for rank). The programs stay the caller's.
 * Lets tests prove the verifier catches hand-broken schedules. */
int verify_programs(const collc_spec *s, collc_prog *const progs[], verify_report *R);

/* Whether batches B of finished program P keep the batch semantics
 * (ir/batch.h), checked on the exact descriptors (batchcheck.c); 1, or 0
 * with why. */
int verify_batches(const collc_prog *P, const collc_batches *B, char *why, size_t len);

#endif
