/* explain.c - print a program like SQLite's EXPLAIN.
 *
 * Operand notation: BUF+off shape, where a strided shape is
 * [run | c1*s1 | c2*s2 ...] (a contiguous run of `run` units repeated c1
 * times at stride s1, that c2 times at stride s2, ...) and an indexed shape
 * is {off:len, ...}. With EXPLAIN_EXPAND each operand is followed by the list
 * of unit indices it addresses, in message order (the paper's R' tables);
 * REDUCE and COMBINE label theirs src=, src2= and dst=. */
#include <stdio.h>
#include <string.h>
#include "ir.h"

#define EXPAND_MAX 48 /* units listed before eliding */

/* Append formatted text to buf at *at, never overflowing len. */
#define PUT(...)                                                           \
  do {                                                                     \
    if (*at < len) *at += (size_t)snprintf(buf + *at, len - *at, __VA_ARGS__); \
  } while (0)

static void put_shape(const collc_prog *P, int id, char *buf, size_t len, size_t *at) {
  const collc_shape *S = &P->shapes[id];
  const int64_t *d = P->pool + S->data;
  if (S->kind == SHAPE_STRIDED) {
    PUT("[%lld", (long long)S->run);
    for (int l = 0; l < S->nlev; l++)
      PUT(" | %lld*%lld", (long long)d[2 * l], (long long)d[2 * l + 1]);
    PUT("]");
  } else {
    PUT("{");
    for (int i = 0; i < S->nlev; i++)
      PUT("%s%lld:%lld", i ? "," : "", (long long)d[2 * i], (long long)d[2 * i + 1]);
    PUT("}");
  }
}

char *explain_opnd(const collc_prog *P, collc_opnd o, char *buf, size_t len) {
  size_t at0 = 0, *at = &at0;
  buf[0] = 0;
  if (o.buf == BUF_NONE) {
    PUT("-");
    return buf;
  }
  PUT("%s+%lld ", buf_name(o.buf), (long long)o.off);
  put_shape(P, o.shape, buf, len, at);
  return buf;
}

/* Print the unit indices of operand o: " <label>[i, j, ...]". */
static void print_expansion(const collc_prog *P, collc_opnd o, const char *label, FILE *out) {
  const collc_shape *S = &P->shapes[o.shape];
  int64_t shown = 0;
  fprintf(out, " %s[", label);
  for (int64_t k = 0; k < S->nruns && shown < EXPAND_MAX; k++) {
    int64_t off, n;
    shape_run(P, o.shape, k, &off, &n);
    for (int64_t u = 0; u < n && shown < EXPAND_MAX; u++, shown++)
      fprintf(out, "%s%lld", shown ? ", " : "", (long long)(o.off + off + u));
  }
  fprintf(out, "%s]", S->nunits > shown ? ", ..." : "");
}

/* One listing line for instruction a (prefixed by its time t in us
 * when t >= 0). */
static void print_instr(const collc_prog *P, int a, int flags, double t, FILE *out) {
  const collc_instr *I = &P->ins[a];
  int f = ops_flags(I->op);
  char s[512], s2[520] = "", d[512], peer[16] = "", slot[16] = "", n[24] = "";
  if (f & (OPF_PEER | OPF_GROUP)) snprintf(peer, sizeof peer, "%d", I->peer);
  if (f & (OPF_POSTS | OPF_WAITS)) snprintf(slot, sizeof slot, "%d", I->slot);
  if (f & (OPF_WAITS | OPF_GROUP | OPF_SYNC)) snprintf(n, sizeof n, "%lld", (long long)I->n);
  explain_opnd(P, (f & OPF_READS) ? I->src : opnd(BUF_NONE, 0, 0), s, sizeof s);
  if (f & OPF_READS2) {
    s2[0] = ',', s2[1] = ' ';
    explain_opnd(P, I->src2, s2 + 2, sizeof s2 - 2);
  }
  explain_opnd(P, (f & OPF_WRITES) ? I->dst : opnd(BUF_NONE, 0, 0), d, sizeof d);
  if (t >= 0) fprintf(out, "%10.3f  ", t);
  fprintf(out, "%4d  %-8s  %5s  %4s  %4s  %s%s -> %s", a, ops_name(I->op), peer, slot, n,
          s, s2, d);
  if (flags & EXPLAIN_EXPAND) { /* combining instructions name each operand */
    int named = (f & OPF_READS2) || (f & OPF_UPDATES);
    if (f & OPF_READS) print_expansion(P, I->src, named ? "src=" : "= ", out);
    if (f & OPF_READS2) print_expansion(P, I->src2, "src2=", out);
    if ((f & OPF_WRITES) && (named || !(f & OPF_READS)))
      print_expansion(P, I->dst, named ? "dst=" : "= ", out);
  }
  fputc('\n', out);
}

void explain_print(const collc_prog *P, int flags, FILE *out) {
  explain_print_times(P, flags, NULL, out);
}

void explain_print_times(const collc_prog *P, int flags, const double *t, FILE *out) {
  const collc_spec *sp = &P->spec;
  fprintf(out, "%s %s p=%d rank=%d count=%lld%s", coll_name(sp->coll), P->algo, sp->p,
          sp->rank, (long long)sp->count, sp->in_place ? " in_place" : "");
  const coll_desc *d = coll_desc_of(sp->coll);
  if (d && d->rooted)
    fprintf(out, " root=%d", sp->root);
  if (coll_reduces(sp->coll)) fprintf(out, "%s", sp->commutative ? " commutative" : " noncommutative");
  if (sp->layout)
    fprintf(out, " nodes=%s (node %d of %d, local %d of %d)", sp->layout->desc,
            sp->layout->node_of[sp->rank], sp->layout->nnodes, sp->layout->local_of[sp->rank],
            sp->layout->size[sp->layout->node_of[sp->rank]]);
  fputc('\n', out);
  if (P->shm_units) fprintf(out, "node segment: %lld units\n", (long long)P->shm_units);
  fprintf(out, "%d instructions, %d request slots, tmp=%lld units, %d groups\n", P->nins,
          P->nslots, (long long)P->tmp_units, P->ngroups);
  for (int g = 0; g < P->ngroups; g++)
    fprintf(out, "group %d: %d members, rank = %d + %d*j\n", g, P->groups[g].n,
            P->groups[g].base, P->groups[g].stride);
  if (t) fprintf(out, "  done (us)  ");
  fprintf(out, "addr  opcode     peer  slot     n  src -> dst\n");
  if (t) fprintf(out, "----------  ");
  fprintf(out, "----  --------  -----  ----  ----  ----------\n");
  for (int a = 0; a < P->nins; a++) print_instr(P, a, flags, t ? t[a] * 1e6 : -1, out);
}
