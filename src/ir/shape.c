/* shape.c - interned buffer shapes: nested strided regions and run lists.
 *
 * Shapes are normalised before interning (count-1 levels dropped, levels that
 * continue their inner level merged, adjacent runs merged) so that equal
 * regions get equal ids and executors see the simplest form. */
#include <stdlib.h>
#include <string.h>
#include "ir.h"

/* Reserve n pool entries; returns the first index or -1. */
static int64_t pool_take(collc_prog *P, int64_t n) {
  if (prog_reserve(P, (void **)&P->pool, &P->cap_pool, P->npool + n, sizeof *P->pool,
                   "shapes"))
    return -1;
  int64_t at = P->npool;
  P->npool += n;
  return at;
}

static int same_shape(const collc_prog *P, const collc_shape *a, const collc_shape *b,
                      const int64_t *bdata) {
  return a->kind == b->kind && a->nlev == b->nlev && a->run == b->run &&
         a->nunits == b->nunits &&
         (a->nlev == 0 ||
          memcmp(P->pool + a->data, bdata, 2 * (size_t)a->nlev * sizeof *bdata) == 0);
}

/* Intern shape S whose 2*nlev pool words are `data`; returns id or -1. */
static int intern(collc_prog *P, collc_shape S, const int64_t *data) {
  if (P->err) return -1;
  for (int i = 0; i < P->nshapes; i++)
    if (same_shape(P, &P->shapes[i], &S, data)) return i;
  if (prog_reserve(P, (void **)&P->shapes, &P->cap_shapes, P->nshapes + 1,
                   sizeof *P->shapes, "shapes"))
    return -1;
  int64_t at = pool_take(P, 2 * (int64_t)S.nlev);
  if (at < 0) return -1;
  if (S.nlev) memcpy(P->pool + at, data, 2 * (size_t)S.nlev * sizeof *data);
  S.data = at;
  P->shapes[P->nshapes] = S;
  return P->nshapes++;
}

int prog_shape_contig(collc_prog *P, int64_t n) {
  return prog_shape_strided(P, n, 0, NULL, NULL);
}

/* a * b and a + b, setting *ovf on int64 overflow (shapes from files). */
static int64_t mul(int64_t a, int64_t b, int *ovf) {
  int64_t r;
  *ovf |= __builtin_mul_overflow(a, b, &r);
  return r;
}

static int64_t add(int64_t a, int64_t b, int *ovf) {
  int64_t r;
  *ovf |= __builtin_add_overflow(a, b, &r);
  return r;
}

int prog_shape_strided(collc_prog *P, int64_t run, int nlev, const int64_t count[],
                       const int64_t stride[]) {
  int64_t lv[2 * COLLC_MAXLEV];
  int m = 0, ovf = 0;
  int64_t nunits = run, span = run, nruns = 1;
  if (run < 0 || nlev < 0 || nlev > COLLC_MAXLEV) {
    prog_fail(P, COLLC_EINVAL, "bad strided shape (run %lld, %d levels)", (long long)run, nlev);
    return -1;
  }
  for (int l = 0; l < nlev && !ovf; l++) {
    if (count[l] < 0 || stride[l] < 1) {
      prog_fail(P, COLLC_EINVAL, "bad level %d (%lld x %lld)", l, (long long)count[l],
                (long long)stride[l]);
      return -1;
    }
    if (count[l] == 1) continue;
    if (count[l] == 0 || run == 0) { /* empty region */
      run = 0;
      m = 0;
      break;
    }
    nunits = mul(nunits, count[l], &ovf);
    span = add(span, mul(count[l] - 1, stride[l], &ovf), &ovf);
    if (m == 0 && stride[l] == run) { /* continues the run */
      run = mul(run, count[l], &ovf);
    } else if (m > 0 && stride[l] == mul(lv[2 * m - 2], lv[2 * m - 1], &ovf)) { /* extends */
      lv[2 * m - 2] = mul(lv[2 * m - 2], count[l], &ovf);
      nruns = mul(nruns, count[l], &ovf);
    } else {
      lv[2 * m] = count[l];
      lv[2 * m + 1] = stride[l];
      nruns = mul(nruns, count[l], &ovf);
      m++;
    }
  }
  if (ovf) {
    prog_fail(P, COLLC_EINVAL, "strided shape too large");
    return -1;
  }
  collc_shape S = {SHAPE_STRIDED, m, run, 0, run ? nunits : 0, 0, run ? span : 0,
                   run ? nruns : 0};
  return intern(P, S, lv);
}

/* Merge (off, len) runs into pairs[], dropping empty runs; returns the count. */
static int merge_runs(int nruns, const int64_t off[], const int64_t len[], int64_t *pairs) {
  int m = 0;
  for (int i = 0; i < nruns; i++) {
    if (len[i] <= 0) continue;
    int64_t end;
    if (m > 0 && !__builtin_add_overflow(pairs[2 * m - 2], pairs[2 * m - 1], &end) &&
        end == off[i]) {
      pairs[2 * m - 1] += len[i];
    } else {
      pairs[2 * m] = off[i];
      pairs[2 * m + 1] = len[i];
      m++;
    }
  }
  return m;
}

collc_opnd prog_opnd_runs(collc_prog *P, int buf, int nruns, const int64_t off[],
                          const int64_t len[]) {
  collc_opnd o = opnd(buf, 0, -1);
  int64_t *pairs = malloc(2 * (size_t)(nruns > 0 ? nruns : 1) * sizeof *pairs);
  if (!pairs) {
    prog_fail(P, COLLC_ENOMEM, "out of memory for runs");
    return o;
  }
  int m = merge_runs(nruns, off, len, pairs);
  int64_t stride = m > 1 ? pairs[2] - pairs[0] : 0;
  int regular = m > 1 && stride > pairs[1];
  for (int i = 1; i < m && regular; i++)
    regular = pairs[2 * i + 1] == pairs[1] && pairs[2 * i] - pairs[2 * i - 2] == stride;
  if (m <= 1) {
    o.off = m ? pairs[0] : 0;
    o.shape = prog_shape_contig(P, m ? pairs[1] : 0);
  } else if (regular) { /* equal runs at a constant positive stride */
    int64_t cnt = m;
    o.off = pairs[0];
    o.shape = prog_shape_strided(P, pairs[1], 1, &cnt, &stride);
  } else {
    collc_shape S = {SHAPE_INDEXED, m, 0, 0, 0, pairs[0], 0, m};
    int ovf = 0;
    for (int i = 0; i < m; i++) {
      int64_t end = add(pairs[2 * i], pairs[2 * i + 1], &ovf);
      S.nunits = add(S.nunits, pairs[2 * i + 1], &ovf);
      if (pairs[2 * i] < S.lo) S.lo = pairs[2 * i];
      if (end > S.hi) S.hi = end;
    }
    if (ovf) prog_fail(P, COLLC_EINVAL, "indexed shape too large");
    else o.shape = intern(P, S, pairs);
  }
  free(pairs);
  return o;
}

void shape_run(const collc_prog *P, int id, int64_t k, int64_t *off, int64_t *len) {
  const collc_shape *S = &P->shapes[id];
  const int64_t *d = P->pool + S->data;
  if (S->kind == SHAPE_INDEXED) {
    *off = d[2 * k];
    *len = d[2 * k + 1];
    return;
  }
  int64_t o = 0;
  for (int l = 0; l < S->nlev; l++) { /* mixed-radix digits of k, inner first */
    o += (k % d[2 * l]) * d[2 * l + 1];
    k /= d[2 * l];
  }
  *off = o;
  *len = S->run;
}

int64_t opnd_units(const collc_prog *P, collc_opnd o) {
  if (o.buf == BUF_NONE || o.shape < 0 || o.shape >= P->nshapes) return 0;
  return P->shapes[o.shape].nunits;
}
