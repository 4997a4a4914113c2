/* wisdom.c - the wisdom file format and loader (src/ir/wisdom.c), no MPI.
 *
 * For programs of every collective (group calls, strided and indexed
 * shapes, scratch): encode, decode with the key, and the re-encoding must
 * be byte-identical (an independent truth: the compiler's own program).
 * Every other key, every truncation, every single-byte change, another
 * format or library version must be refused with a reason (and with the
 * CRCs skipped, changed images must still never crash: run under ASan).
 * Files: save/load round trip, a missing file (no reason), garbage (a
 * reason), and 4 processes saving the same file concurrently while this
 * one loads it: never a partial file.
 *
 *   unit_wisdom [--seeds DIR]   --seeds: write fuzzing seed inputs to DIR */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "algo/algo.h"
#include "ir/wisdom.h"
#include "unit.h"

typedef struct {
  int coll;
  const char *algo;
  int p, rank;
  long count;
  int unit_bytes, in_place, root, commutative;
  const char *nodes; /* node layout (layout_parse), NULL: none */
} wcase;

static const wcase cases[] = {
    {COLLC_COLL_ALLTOALL, "torus:d=2:native", 12, 5, 3, 4, 0, 0, 1, NULL},
    {COLLC_COLL_ALLTOALL, "torus:4x3:linear", 12, 7, 2, 4, 1, 0, 1, NULL},
    {COLLC_COLL_ALLTOALL, "bruck:3", 7, 2, 1, 8, 0, 0, 1, NULL},
    {COLLC_COLL_ALLTOALL, "pairwise", 5, 4, 10, 4, 0, 0, 1, NULL},
    {COLLC_COLL_ALLREDUCE, "recexch:-3,-2,2,3", 6, 1, 1000, 8, 0, 0, 1, NULL},
    {COLLC_COLL_ALLREDUCE, "cyclic", 7, 3, 1000, 8, 1, 0, 1, NULL},
    {COLLC_COLL_ALLREDUCE, "tree:3", 9, 4, 77, 8, 0, 0, 0, NULL},
    {COLLC_COLL_REDUCE_SCATTER_BLOCK, "recexch", 8, 6, 100, 8, 0, 0, 1, NULL},
    {COLLC_COLL_ALLGATHER, "cyclic", 5, 0, 9, 8, 1, 0, 1, NULL},
    {COLLC_COLL_REDUCE, "tree", 6, 3, 500, 8, 0, 3, 0, NULL},
    {COLLC_COLL_BCAST, "tree:2,3", 6, 5, 1000, 8, 1, 2, 1, NULL},
    {COLLC_COLL_ALLREDUCE, "shm:direct=0", 5, 2, 100, 8, 0, 0, 1, "5"}, /* OFFER, GET */
    {COLLC_COLL_ALLGATHER, "hier", 6, 4, 9, 8, 0, 0, 1, "3"},
};
#define NCASES (int)(sizeof cases / sizeof cases[0])

/* The compiled program of case w (NULL on failure, reported); s->layout
 * is the case's (free it with layout_free). */
static collc_prog *compile_case(const wcase *w, collc_spec *s) {
  collc_choice c;
  char why[256] = "";
  *s = (collc_spec){w->coll,     w->p,    w->rank,        w->count, w->unit_bytes,
                    w->in_place, w->root, w->commutative, NULL, NULL, NULL, 0, 0};
  if (w->nodes) s->layout = layout_parse(w->p, w->nodes);
  collc_prog *P = NULL;
  if (!choice_parse(w->coll, w->algo, &c, why, sizeof why) &&
      !choice_resolve(s, &c, why, sizeof why))
    P = choice_compile(s, &c, why, sizeof why);
  CHECK(P != NULL, "%s: %s", w->algo, why);
  return P;
}

/* decode(img) with key must give back exactly img when encoded again. */
static void round_trip(const unsigned char *img, size_t n, const wisdom_key *k) {
  char why[256] = "";
  unsigned char *b = NULL;
  size_t m = 0;
  collc_prog *Q = wisdom_decode(img, n, k, 1, why, sizeof why);
  if (!CHECK(Q != NULL, "%s: own image refused: %s", k->algo, why)) return;
  CHECK(wisdom_encode(Q, k->layout, &b, &m) == 0 && m == n && !memcmp(b, img, n),
        "%s: decode + encode changed the image", k->algo);
  free(b);
  prog_free(Q);
}

/* Every other key is stale. */
static void other_keys(const unsigned char *img, size_t n, const wisdom_key *k) {
  char why[256];
  for (int f = 0; f < 6; f++) {
    wisdom_key o = *k;
    if (f == 0) o.spec.rank = (o.spec.rank + 1) % o.spec.p;
    if (f == 1) o.spec.count++;
    if (f == 2) o.spec.unit_bytes *= 2;
    if (f == 3) o.algo = "native";
    if (f == 4) o.layout = "nodes=2";
    if (f == 5) o.spec.commutative = !o.spec.commutative;
    if (f == 0 && o.spec.p == 1) continue;
    why[0] = 0;
    collc_prog *Q = wisdom_decode(img, n, &o, 1, why, sizeof why);
    CHECK(!Q && strstr(why, "stale"), "%s: key change %d accepted (%s)", k->algo, f, why);
    prog_free(Q);
  }
}

/* Truncations and byte changes are refused with a reason; with the CRCs
 * skipped they may pass only as a consistent program (no crash). */
static void damage(const unsigned char *img, size_t n, const wisdom_key *k, int step) {
  unsigned char *b = malloc(n);
  char why[256];
  for (size_t cut = 0; cut < n; cut += (size_t)step) {
    why[0] = 0;
    collc_prog *Q = wisdom_decode(img, cut, k, 1, why, sizeof why);
    CHECK(!Q && why[0], "%s: truncated to %zu accepted", k->algo, cut);
    prog_free(Q);
  }
  for (size_t i = 0; i < n; i += (size_t)step) {
    memcpy(b, img, n);
    b[i] ^= 0x5a;
    why[0] = 0;
    collc_prog *Q = wisdom_decode(b, n, k, 1, why, sizeof why);
    CHECK(!Q && why[0], "%s: byte %zu changed, accepted", k->algo, i);
    prog_free(Q);
    prog_free(wisdom_decode(b, n, k, 0, why, sizeof why)); /* must not crash */
  }
  free(b);
}

/* Another format or library version is refused by name. */
static void versions(const unsigned char *img, size_t n, const wisdom_key *k) {
  unsigned char *b = malloc(n);
  char why[256];
  memcpy(b, img, n);
  b[8] = WISDOM_FORMAT + 1; /* a later format */
  collc_prog *Q = wisdom_decode(b, n, k, 0, why, sizeof why);
  CHECK(!Q && strstr(why, "format"), "a later format accepted (%s)", why);
  memcpy(b, img, n);
  b[16] = '9'; /* library version "9.1.0" */
  Q = wisdom_decode(b, n, k, 0, why, sizeof why);
  CHECK(!Q && strstr(why, "written by"), "another version accepted (%s)", why);
  free(b);
}

/* Save and load through dir; a missing file, a garbage file. */
static void files(const char *dir, const collc_prog *P, const wisdom_key *k) {
  char why[1300] = "x", cmd[1200];
  collc_prog *Q = wisdom_load(dir, k, why, sizeof why);
  CHECK(!Q && !why[0], "%s: missing file: %s", k->algo, why);
  CHECK(wisdom_save(dir, P, k->layout) == 0, "%s: save failed", k->algo);
  Q = wisdom_load(dir, k, why, sizeof why);
  CHECK(Q && Q->nins == P->nins && !strcmp(Q->algo, P->algo), "%s: load: %s", k->algo, why);
  prog_free(Q);
  snprintf(cmd, sizeof cmd, "for f in %s/*.cw; do printf garbage > $f; done", dir);
  CHECK(system(cmd) == 0, "cannot damage the files");
  Q = wisdom_load(dir, k, why, sizeof why);
  CHECK(!Q && strstr(why, "not a wisdom file"), "%s: garbage accepted (%s)", k->algo, why);
  prog_free(Q);
}

/* 4 processes save P 200 times each while this one loads it 2000 times:
 * every load finds nothing or the whole program, never a partial file. */
static void concurrent(const char *dir, const collc_prog *P, const wisdom_key *k) {
  char why[1300], cmd[1200];
  pid_t kids[4];
  int bad = 0, found = 0;
  snprintf(cmd, sizeof cmd, "rm -f %s/*.cw", dir); /* (files() left garbage) */
  CHECK(system(cmd) == 0, "cannot clear %s", dir);
  for (int i = 0; i < 4; i++)
    if ((kids[i] = fork()) == 0) {
      for (int j = 0; j < 200; j++)
        if (wisdom_save(dir, P, k->layout)) _exit(1);
      _exit(0);
    }
  for (int j = 0; j < 2000; j++) {
    collc_prog *Q = wisdom_load(dir, k, why, sizeof why);
    found += Q != NULL;
    bad += !Q && why[0];
    prog_free(Q);
  }
  for (int i = 0; i < 4; i++) {
    int st = 1;
    waitpid(kids[i], &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "writer %d failed", i);
  }
  CHECK(bad == 0, "%d of 2000 loads saw a damaged file (%d whole)", bad, found);
}

/* Write one seed input per case (mode byte 1: CRCs checked) into dir. */
static int seeds(const char *dir) {
  for (int i = 0; i < NCASES; i++) {
    collc_spec s;
    collc_prog *P = compile_case(&cases[i], &s);
    unsigned char *b;
    size_t n;
    char path[1024];
    const char *lay = s.layout ? s.layout->desc : "flat";
    if (!P || wisdom_encode(P, lay, &b, &n)) return 1;
    snprintf(path, sizeof path, "%s/seed%02d", dir, i);
    FILE *f = fopen(path, "wb");
    if (!f) return 1;
    fputc(1, f);
    fwrite(b, 1, n, f);
    fclose(f);
    free(b);
    prog_free(P);
    layout_free((collc_layout *)s.layout);
  }
  return 0;
}

int main(int argc, char **argv) {
  char dir[] = "/tmp/collc-wisdom-XXXXXX";
  if (argc == 3 && !strcmp(argv[1], "--seeds")) return seeds(argv[2]);
  if (!CHECK(mkdtemp(dir) != NULL, "mkdtemp")) return unit_summary("wisdom");
  for (int i = 0; i < NCASES; i++) {
    collc_spec s;
    collc_prog *P = compile_case(&cases[i], &s);
    unsigned char *img = NULL;
    size_t n = 0;
    if (!P) continue;
    const char *lay = s.layout ? s.layout->desc : "flat";
    wisdom_key k = {s, P->algo, lay};
    CHECK(wisdom_encode(P, lay, &img, &n) == 0, "%s: encode", P->algo);
    round_trip(img, n, &k);
    other_keys(img, n, &k);
    damage(img, n, &k, n < 4000 ? 1 : 7);
    if (i == 0) versions(img, n, &k);
    files(dir, P, &k);
    if (i == 4) concurrent(dir, P, &k);
    free(img);
    prog_free(P);
    layout_free((collc_layout *)s.layout);
  }
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd)) printf("note: could not remove %s\n", dir);
  return unit_summary("wisdom");
}
