/* tuning.c - read and write tuning files (tuning.h) with jansson.
 *
 * A file is trusted in nothing: every row names a known collective and an
 * algorithm text that choice_parse accepts for it, sane process and byte
 * ranges, and the file its format, version and MPI library; anything else
 * rejects the whole file (the caller warns once and ignores it). */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "tuning.h"
#include "../algo/algo.h"
#include "collc_version.h"

static const char *const lib_names[TUNE_LIB_COUNT] = {"any", "Open MPI", "MPICH"};

int tune_lib_of(const char *text) {
  if (!text) return -1;
  if (strstr(text, "Open MPI")) return TUNE_LIB_OPEN_MPI;
  if (strstr(text, "MPICH")) return TUNE_LIB_MPICH;
  return strcmp(text, "any") ? -1 : TUNE_LIB_ANY;
}

const char *tune_lib_name(int lib) {
  return lib >= 0 && lib < TUNE_LIB_COUNT ? lib_names[lib] : "unknown";
}

/* Member key of row o as an integer in [lo, hi] into *v: absent or null
 * give unbounded (0 if not allowed). 0 or -1 with why. */
static int get_int(const json_t *o, const char *key, long long lo, long long hi,
                   long long unbounded, long long *v, char *why, size_t wlen) {
  const json_t *j = json_object_get(o, key);
  if ((!j || json_is_null(j)) && unbounded) return (*v = unbounded), 0;
  if (!json_is_integer(j) || json_integer_value(j) < lo || json_integer_value(j) > hi) {
    snprintf(why, wlen, "\"%s\" must be an integer in [%lld, %lld]%s", key, lo, hi,
             unbounded ? " or null" : "");
    return -1;
  }
  *v = json_integer_value(j);
  return 0;
}

/* Member key of row o, an algorithm text for coll, into buf (absent: ""
 * if optional). 0 or -1 with why. */
static int get_algo(const json_t *o, const char *key, int coll, int optional,
                    char buf[TUNE_TEXT_MAX], char *why, size_t wlen) {
  const json_t *j = json_object_get(o, key);
  collc_choice c;
  char w[160];
  buf[0] = 0;
  if (!j && optional) return 0;
  const char *s = json_string_value(j);
  if (!s || strlen(s) >= TUNE_TEXT_MAX)
    return snprintf(why, wlen, "\"%s\" must be a string of < %d bytes", key, TUNE_TEXT_MAX), -1;
  if (choice_parse(coll, s, &c, w, sizeof w))
    return snprintf(why, wlen, "\"%s\": %s: %s", key, s, w), -1;
  snprintf(buf, TUNE_TEXT_MAX, "%s", s);
  return 0;
}

/* Row o of a file whose library is flib into *R. 0 or -1 with why. */
static int parse_row(const json_t *o, int flib, tune_row *R, char *why, size_t wlen) {
  long long pmin, pmax, bmin, bmax;
  const json_t *lib = json_object_get(o, "lib"), *nb = json_object_get(o, "nb"),
               *ratio = json_object_get(o, "ratio");
  memset(R, 0, sizeof *R);
  if (!json_is_object(o)) return snprintf(why, wlen, "not an object"), -1;
  const char *coll = json_string_value(json_object_get(o, "coll"));
  if ((R->coll = coll ? coll_from_name(coll) : -1) < 0) return snprintf(why, wlen, "\"coll\" must name a collective"), -1;
  R->lib = lib ? tune_lib_of(json_string_value(lib)) : flib;
  if (R->lib <= TUNE_LIB_ANY)
    return snprintf(why, wlen, "\"lib\" must be \"Open MPI\" or \"MPICH\""), -1;
  if (nb && !json_is_boolean(nb)) return snprintf(why, wlen, "\"nb\" must be true or false"), -1;
  if (ratio && !(json_is_number(ratio) && json_number_value(ratio) >= 0))
    return snprintf(why, wlen, "\"ratio\" must be a number >= 0"), -1;
  R->nb = json_is_true(nb), R->ratio = ratio ? json_number_value(ratio) : 0;
  if (get_int(o, "pmin", 1, INT_MAX, 0, &pmin, why, wlen) ||
      get_int(o, "pmax", pmin, INT_MAX, INT_MAX, &pmax, why, wlen) ||
      get_int(o, "bmin", 0, LLONG_MAX, 0, &bmin, why, wlen) ||
      get_int(o, "bmax", bmin, LLONG_MAX, LLONG_MAX, &bmax, why, wlen) ||
      get_algo(o, "algo", R->coll, 0, R->algo, why, wlen) ||
      get_algo(o, "noncomm", R->coll, 1, R->noncomm, why, wlen))
    return -1;
  R->pmin = (int)pmin, R->pmax = (int)pmax, R->bmin = bmin, R->bmax = bmax;
  return 0;
}

/* The checked top level of doc for library lib: the file's library into
 * *flib and its rules array, or NULL with why. */
static const json_t *doc_rules(const json_t *doc, int lib, int *flib, char *why, size_t wlen) {
  const json_t *fmt = json_object_get(doc, "format"), *ver = json_object_get(doc, "version");
  const json_t *mpi = json_object_get(doc, "mpi"), *rules = json_object_get(doc, "rules");
  if (!json_is_object(doc)) return snprintf(why, wlen, "not a JSON object"), NULL;
  if (!json_is_string(fmt) || strcmp(json_string_value(fmt), TUNE_FORMAT))
    return snprintf(why, wlen, "not a collc tuning file (\"format\")"), NULL;
  if (!json_is_integer(ver))
    return snprintf(why, wlen, "no format version (\"version\")"), NULL;
  if (json_integer_value(ver) != TUNE_VERSION)
    return snprintf(why, wlen, "format version %lld, this collc reads %d",
                    (long long)json_integer_value(ver), TUNE_VERSION), NULL;
  *flib = tune_lib_of(json_string_value(json_object_get(mpi, "library")));
  if (*flib < 0) return snprintf(why, wlen, "\"mpi\".\"library\" unknown"), NULL;
  if (*flib != TUNE_LIB_ANY && *flib != lib)
    return snprintf(why, wlen, "made with %s, this is %s", tune_lib_name(*flib),
                    tune_lib_name(lib)), NULL;
  if (!json_is_array(rules)) return snprintf(why, wlen, "\"rules\" must be an array"), NULL;
  if (json_array_size(rules) > TUNE_MAX_ROWS)
    return snprintf(why, wlen, "more than %d rules", TUNE_MAX_ROWS), NULL;
  return rules;
}

int tune_parse(const char *text, size_t len, int lib, int source, tune_row *rows, int *n,
               int cap, char *why, size_t wlen) {
  json_error_t e;
  char w[200];
  int flib = 0, k = *n, rc = -1;
  json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &e);
  if (!doc) return snprintf(why, wlen, "line %d: %s", e.line, e.text), -1;
  const json_t *rules = doc_rules(doc, lib, &flib, why, wlen);
  size_t i;
  for (i = 0; rules && i < json_array_size(rules); i++) {
    tune_row R;
    if (parse_row(json_array_get(rules, i), flib, &R, w, sizeof w)) break;
    if (R.lib != lib) continue;
    if (k >= cap) {
      snprintf(w, sizeof w, "too many rows");
      break;
    }
    R.source = source;
    rows[k++] = R;
  }
  if (rules && i == json_array_size(rules)) *n = k, rc = 0;
  else if (rules) snprintf(why, wlen, "rule %zu: %s", i + 1, w);
  json_decref(doc);
  return rc;
}

/* Row R as a JSON object (a new reference, NULL when out of memory), its
 * members in the order of the format's description. */
static json_t *row_json(const tune_row *R) {
  json_t *o = json_object();
  if (!o) return NULL;
  json_object_set_new(o, "lib", json_string(tune_lib_name(R->lib)));
  json_object_set_new(o, "coll", json_string(coll_name(R->coll)));
  json_object_set_new(o, "pmin", json_integer(R->pmin));
  json_object_set_new(o, "pmax", R->pmax == INT_MAX ? json_null() : json_integer(R->pmax));
  json_object_set_new(o, "bmin", json_integer(R->bmin));
  json_object_set_new(o, "bmax", R->bmax == LLONG_MAX ? json_null() : json_integer(R->bmax));
  json_object_set_new(o, "algo", json_string(R->algo));
  if (R->noncomm[0]) json_object_set_new(o, "noncomm", json_string(R->noncomm));
  json_object_set_new(o, "nb", json_boolean(R->nb));
  if (R->ratio > 0) json_object_set_new(o, "ratio", json_real(R->ratio));
  return o;
}

json_t *tune_rows_json(const tune_row *rows, int n) {
  json_t *a = json_array();
  for (int i = 0; a && i < n; i++)
    if (json_array_append_new(a, row_json(&rows[i]))) json_decref(a), a = NULL;
  return a;
}

json_t *tune_doc_new(int lib, const char *lib_version, int p) {
  return json_pack("{s:s,s:i,s:s,s:{s:s,s:s},s:i}", "format", TUNE_FORMAT, "version",
                   TUNE_VERSION, "collc", COLLC_VERSION, "mpi", "library", tune_lib_name(lib),
                   "version", lib_version ? lib_version : "", "p", p);
}
