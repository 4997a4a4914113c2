/* unit.h - the few check helpers shared by the unit tests (no MPI runtime).
 *
 * CHECK(cond, fmt, ...) counts a check; when cond is false it prints one line
 * "FAIL file:line: cond: message" (the first UNIT_MAXPRINT failures only, the
 * rest are counted). unit_summary() prints the one-line summary
 * "unit_<name>: N checks, M failed (T s)" and returns the exit status
 * (0 = all passed). Header-only: every test is a single .c file. */
#ifndef COLLC_TESTS_UNIT_H
#define COLLC_TESTS_UNIT_H

#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <time.h>

#ifndef UNIT_MAXPRINT
#define UNIT_MAXPRINT 60
#endif

static long unit_checks, unit_fails;

/* Record one check; print a failure line when ok is 0. Returns ok. */
__attribute__((format(printf, 5, 6))) static inline int
unit_check(int ok, const char *file, int line, const char *expr, const char *fmt, ...) {
  unit_checks++;
  if (ok) return 1;
  if (unit_fails++ < UNIT_MAXPRINT) {
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL %s:%d: %s: ", file, line, expr);
    vprintf(fmt, ap);
    putchar('\n');
    va_end(ap);
    fflush(stdout);
  } else if (unit_fails == UNIT_MAXPRINT + 1) {
    printf("FAIL ... (further failures counted, not printed)\n");
  }
  return 0;
}

#define CHECK(cond, ...) unit_check(!!(cond), __FILE__, __LINE__, #cond, __VA_ARGS__)

/* Seconds of CPU time since the program started. */
static inline double unit_seconds(void) { return (double)clock() / CLOCKS_PER_SEC; }

/* Print the summary line for test `name`; returns 0 if nothing failed, else 1. */
static inline int unit_summary(const char *name) {
  printf("unit_%s: %ld checks, %ld failed (%.2f s)\n", name, unit_checks, unit_fails,
         unit_seconds());
  return unit_fails ? 1 : 0;
}

/* 1 in a sanitizer build (ASan: tests there thin their sweeps, whose
 * value is memory errors rather than more cases), else 0. */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif
#ifndef UNDER_SANITIZER
#define UNDER_SANITIZER 0
#endif

/* Whether a sweep is thinned: in a sanitizer build, or with COLLC_TEST_THIN=1. */
static inline int unit_thin(void) {
  const char *t = getenv("COLLC_TEST_THIN");
  return UNDER_SANITIZER || (t && atoi(t) > 0);
}

#endif
