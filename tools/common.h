/* common.h - argument helpers shared by the command-line tools. */
#ifndef COLLC_TOOLS_COMMON_H
#define COLLC_TOOLS_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "algo/algo.h"

/* Parse a non-negative integer argument or exit with usage status 2. */
static inline long tool_int(const char *s, const char *what) {
  char *end;
  long v = strtol(s, &end, 10);
  if (!*s || *end || v < 0) {
    fprintf(stderr, "bad %s '%s'\n", what, s);
    exit(2);
  }
  return v;
}

/* Build spec and resolved choice from command-line words; exits 2 on error. */
static inline void tool_setup(const char *coll, const char *algo, long p, long rank, long count,
                              int in_place, collc_spec *s, collc_choice *c) {
  char why[200];
  memset(s, 0, sizeof *s);
  s->coll = coll_from_name(coll);
  if (s->coll < 0) {
    fprintf(stderr, "unknown collective '%s'\n", coll);
    exit(2);
  }
  if (p < 1 || p > (1L << 30) || rank >= p) {
    fprintf(stderr, "need 1 <= p and 0 <= rank < p\n");
    exit(2);
  }
  s->p = (int)p, s->rank = (int)rank, s->count = count, s->in_place = in_place;
  s->unit_bytes = 4 * count;
  if (choice_parse(s->coll, algo, c, why, sizeof why) || choice_resolve(s, c, why, sizeof why)) {
    fprintf(stderr, "%s\n", why);
    exit(2);
  }
}

#endif
