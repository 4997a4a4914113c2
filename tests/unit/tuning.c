/* tuning.c - tuning files (src/plan/tuning.c), no MPI.
 *
 * The built-in rule parses for both libraries, with as many rows as its
 * text names each library (counted in the text itself). Round trip: rows
 * of every kind (unbounded ranges, non-commutative texts, nonblocking,
 * ratios) written as a file and read back are field-identical. Refused,
 * with a reason and nothing appended: every truncation of a valid file,
 * an empty file, other formats and versions, a file of the other MPI
 * library, and each kind of bad row. Every single-byte change of a file
 * either parses or is refused: never a crash (run under ASan too). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "ir/ir.h"
#include "plan/tuning.h"
#include "unit.h"

static tune_row rows[TUNE_MAX_ROWS + 8];

/* Occurrences of needle in text. */
static int count_in(const char *text, const char *needle) {
  int n = 0;
  for (const char *s = text; (s = strstr(s, needle)); s++) n++;
  return n;
}

static void test_builtin(void) {
  static const char *const names[] = {NULL, "\"lib\": \"Open MPI\"", "\"lib\": \"MPICH\""};
  for (int lib = TUNE_LIB_OPEN_MPI; lib <= TUNE_LIB_MPICH; lib++) {
    char why[300] = "";
    int n = 0, rc = tune_parse(tune_builtin_json, tune_builtin_len, lib, 7, rows, &n,
                               TUNE_MAX_ROWS, why, sizeof why);
    int want = count_in(tune_builtin_json, names[lib]);
    CHECK(rc == 0 && n == want && want > 0, "lib %d: rc %d (%s), %d rows, text names %d", lib,
          rc, why, n, want);
    for (int i = 0; i < n; i++)
      CHECK(rows[i].lib == lib && rows[i].source == 7 && rows[i].algo[0], "row %d", i);
  }
}

/* Sample rows for library lib: n of them, of every kind. */
static int sample_rows(tune_row *r, int lib) {
  static const struct { int coll, pmin, pmax; long long bmin, bmax; const char *a, *nc; int nb; double ratio; } s[] = {
      {COLLC_COLL_ALLREDUCE, 2, 2, 0, 399, "native", "", 0, 1.0},
      {COLLC_COLL_ALLREDUCE, 2, 2, 400, LLONG_MAX, "recexch:-2,2", "recexch", 0, 1.37},
      {COLLC_COLL_ALLTOALL, 16, INT_MAX, 0, 400, "torus:4x4:linear", "", 0, 2.5},
      {COLLC_COLL_REDUCE, 3, 3, 8, 4096, "tree:3", "tree", 1, 0},
      {COLLC_COLL_ALLGATHER, 1, 64, 1, 1, "hier", "", 0, 1.06},
      {COLLC_COLL_BCAST, 5, 9, 1000000, 16777216, "hier:net=tree:3", "", 0, 1.5}};
  int n = (int)(sizeof s / sizeof s[0]);
  for (int i = 0; i < n; i++) {
    r[i] = (tune_row){.lib = lib, .coll = s[i].coll, .pmin = s[i].pmin, .pmax = s[i].pmax,
                      .bmin = s[i].bmin, .bmax = s[i].bmax, .nb = s[i].nb, .ratio = s[i].ratio};
    snprintf(r[i].algo, sizeof r[i].algo, "%s", s[i].a);
    snprintf(r[i].noncomm, sizeof r[i].noncomm, "%s", s[i].nc);
  }
  return n;
}

/* A file of library lib with rows r[n] (malloc'd text). */
static char *file_text(int lib, const tune_row *r, int n) {
  json_t *doc = tune_doc_new(lib, "test library 1.0", 2);
  json_object_set_new(doc, "rules", tune_rows_json(r, n));
  char *t = json_dumps(doc, JSON_INDENT(1));
  json_decref(doc);
  return t;
}

/* Whether a and b hold the same row (source aside). */
static int same_row(const tune_row *a, const tune_row *b) {
  return a->lib == b->lib && a->coll == b->coll && a->pmin == b->pmin && a->pmax == b->pmax &&
         a->bmin == b->bmin && a->bmax == b->bmax && !strcmp(a->algo, b->algo) &&
         !strcmp(a->noncomm, b->noncomm) && a->nb == b->nb && a->ratio == b->ratio;
}

/* Parse text as library lib: 0 or -1, *n rows (starting from 1 dummy). */
static int parse(const char *text, size_t len, int lib, int *n, char *why, size_t wlen) {
  *n = 1;
  why[0] = 0;
  return tune_parse(text, len, lib, 1, rows, n, TUNE_MAX_ROWS, why, wlen);
}

static void test_round_trip(void) {
  tune_row in[16];
  char why[300];
  int n = sample_rows(in, TUNE_LIB_MPICH), got;
  char *t = file_text(TUNE_LIB_MPICH, in, n);
  CHECK(parse(t, strlen(t), TUNE_LIB_MPICH, &got, why, sizeof why) == 0 && got == 1 + n,
        "round trip: %s, %d rows", why, got);
  for (int i = 0; i < n && i + 1 < got; i++)
    CHECK(same_row(&in[i], &rows[1 + i]) && rows[1 + i].source == 1, "row %d differs", i);
  /* every truncation (also the empty file) is refused with a reason, nothing appended */
  size_t len = strlen(t);
  for (size_t k = 0; k < len; k++)
    if (!(parse(t, k, TUNE_LIB_MPICH, &got, why, sizeof why) && got == 1 && why[0]))
      CHECK(0, "truncated to %zu bytes: accepted (%d rows)", k, got);
  /* a single byte changed: parsed or refused, never a crash */
  for (size_t k = 0; k < len; k++) {
    char c = t[k];
    t[k] = (char)(c ^ 0x5a);
    int rc = parse(t, len, TUNE_LIB_MPICH, &got, why, sizeof why);
    CHECK(rc == 0 ? got >= 1 : got == 1 && why[0], "byte %zu changed: rc %d, %d rows", k, rc, got);
    t[k] = c;
  }
  CHECK(parse(t, len, TUNE_LIB_OPEN_MPI, &got, why, sizeof why) && strstr(why, "made with MPICH"),
        "foreign library accepted (%s)", why);
  free(t);
}

/* The sample file with member key of the top level (row < 0) or of rule
 * row set to JSON value v ("" removes it): refused with a reason? */
static int refused(int row, const char *key, const char *v) {
  tune_row in[16];
  char why[300], *t;
  int n = sample_rows(in, TUNE_LIB_OPEN_MPI), got;
  json_t *doc = tune_doc_new(TUNE_LIB_OPEN_MPI, "x", 2);
  json_object_set_new(doc, "rules", tune_rows_json(in, n));
  json_t *o = row < 0 ? doc : json_array_get(json_object_get(doc, "rules"), (size_t)row);
  json_t *val = *v ? json_loads(v, JSON_DECODE_ANY, NULL) : NULL;
  if (*v && !val) return CHECK(0, "bad test value %s", v), 0;
  if (val) json_object_set_new(o, key, val);
  else json_object_del(o, key);
  t = json_dumps(doc, 0);
  json_decref(doc);
  int rc = parse(t, strlen(t), TUNE_LIB_OPEN_MPI, &got, why, sizeof why);
  free(t);
  return rc && got == 1 && why[0];
}

static void test_refused(void) {
  static const struct { int row; const char *key, *v; } bad[] = {
      {-1, "format", "\"collc-wisdom\""}, {-1, "format", ""}, {-1, "version", "2"},
      {-1, "version", "\"1\""}, {-1, "version", ""}, {-1, "mpi", "{\"library\": \"MPICH\"}"},
      {-1, "mpi", "{\"library\": \"LAM\"}"}, {-1, "mpi", ""}, {-1, "rules", "{}"},
      {-1, "rules", ""}, {0, "coll", "\"alltoallw\""}, {0, "coll", "3"}, {0, "coll", ""},
      {1, "algo", "\"bogus\""}, {1, "algo", "\"recexch:-3,x\""}, {1, "algo", ""},
      {1, "algo", "\"torus:2x2\""}, /* (torus is all-to-all's only) */
      {1, "noncomm", "\"cyclic:?\""}, {2, "pmin", "0"}, {2, "pmin", "\"2\""}, {2, "pmin", ""},
      {3, "pmax", "2"}, {3, "bmax", "7"}, {3, "bmin", "-1"}, {3, "bmin", "1.5"},
      {3, "nb", "1"}, {4, "ratio", "\"fast\""}, {4, "ratio", "-1"}, {4, "lib", "\"any\""},
      {4, "lib", "\"LAM\""}, {5, "pmax", "2147483648"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    CHECK(refused(bad[i].row, bad[i].key, bad[i].v), "row %d %s=%s accepted", bad[i].row,
          bad[i].key, bad[i].v);
  CHECK(!refused(1, "note", "\"any text\""), "a note refused");
  CHECK(!refused(-1, "points", "[{\"coll\": \"allreduce\"}]"), "points refused");
  /* an algorithm text too long for a row */
  char longtext[TUNE_TEXT_MAX + 8];
  memset(longtext, 'x', sizeof longtext);
  longtext[0] = '"', longtext[sizeof longtext - 2] = '"', longtext[sizeof longtext - 1] = 0;
  CHECK(refused(1, "algo", longtext), "a long text accepted");
}

/* More rows than a file may hold, and than the caller's room. */
static void test_limits(void) {
  static tune_row many[TUNE_MAX_ROWS + 1];
  tune_row one[16];
  char why[300];
  int got, k = sample_rows(one, TUNE_LIB_OPEN_MPI);
  for (int i = 0; i <= TUNE_MAX_ROWS; i++) many[i] = one[i % k];
  char *t = file_text(TUNE_LIB_OPEN_MPI, many, TUNE_MAX_ROWS + 1);
  CHECK(parse(t, strlen(t), TUNE_LIB_OPEN_MPI, &got, why, sizeof why) && got == 1,
        "%d rows accepted", TUNE_MAX_ROWS + 1);
  free(t);
  t = file_text(TUNE_LIB_OPEN_MPI, many, TUNE_MAX_ROWS);
  got = 10;
  CHECK(tune_parse(t, strlen(t), TUNE_LIB_OPEN_MPI, 1, rows, &got, TUNE_MAX_ROWS, why,
                   sizeof why) && got == 10, "rows beyond the room accepted (%d)", got);
  free(t);
}

int main(void) {
  test_builtin();
  test_round_trip();
  test_refused();
  test_limits();
  return unit_summary("tuning");
}
