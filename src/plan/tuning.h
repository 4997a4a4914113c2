/* tuning.h - tuning files: the default rule's rows as versioned JSON
 * (jansson), read by the library (COLLC_TUNING, and the built-in rule,
 * which is such a file compiled in) and written by collc-tune. Pure C: no
 * MPI. The format is in README, "Tuning files". */
#ifndef COLLC_TUNING_H
#define COLLC_TUNING_H

#include <stddef.h>
#include <jansson.h>

#define TUNE_FORMAT "collc-tuning" /* the "format" member */
#define TUNE_VERSION 1             /* the "version" member */
#define TUNE_TEXT_MAX 160          /* an algorithm text, with its terminator */
#define TUNE_MAX_ROWS 512          /* rows of one file */
#define TUNE_FILE_MAX (16 << 20)   /* bytes of one file */

/* MPI libraries a row is for (TUNE_LIB_ANY: a file's "any"). */
enum { TUNE_LIB_ANY = 0, TUNE_LIB_OPEN_MPI, TUNE_LIB_MPICH, TUNE_LIB_COUNT };

/* One rule row: for calls of coll with pmin <= p <= pmax and bmin <= bytes
 * <= bmax (per block or per vector, as the rule compares them), algo (or
 * noncomm, if not "", for a non-commutative operation); nb: for
 * nonblocking calls only. pmax INT_MAX, bmax LLONG_MAX: unbounded. */
typedef struct tune_row_s {
  int lib, coll, pmin, pmax;
  long long bmin, bmax;
  char algo[TUNE_TEXT_MAX], noncomm[TUNE_TEXT_MAX];
  int nb;
  double ratio; /* measured native time / this algorithm's (0: not given) */
  int source;   /* the caller's tag of the file the row came from */
} tune_row;

/* The library id of a PMPI_Get_library_version text or a row's "lib"
 * name ("Open MPI", "MPICH"); -1 if neither. */
int tune_lib_of(const char *text);
/* The name a file gives library lib ("any" for TUNE_LIB_ANY). */
const char *tune_lib_name(int lib);

/* Parse tuning-file text[len] for MPI library lib: its rows for lib are
 * appended to rows[*n] (at most cap in all), in file order, tagged with
 * source. 0, or -1 with why (nothing appended): not JSON, not an object,
 * another format or version, a file of another library, a bad row. */
int tune_parse(const char *text, size_t len, int lib, int source, tune_row *rows, int *n,
               int cap, char *why, size_t wlen);

/* The built-in rule: tuning/builtin.json, compiled in (generated C). */
extern const char tune_builtin_json[];
extern const size_t tune_builtin_len;

/* The JSON array of rows[n] (a new reference; NULL when out of memory). */
json_t *tune_rows_json(const tune_row *rows, int n);

/* A file's top level without rules: format, version, collc version,
 * library lib (name and version text) and p; a new reference or NULL. */
json_t *tune_doc_new(int lib, const char *lib_version, int p);

#endif
