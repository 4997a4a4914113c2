/* ir.c - the IR builder, shapes, opcode table and operand printer.
 *
 * Truth: small hand-written programs and shapes whose right answer is worked
 * out by hand in the comments here (unit lists, normal forms, explain
 * strings, error codes), and an opcode table written out independently of
 * ops.h. Covers shape normalisation and interning, prog_opnd_runs, shape_run
 * order, opnd_units, the sticky error, prog_finalize's checks (bounds, SEND
 * written, SEND read in place, COPY unit counts, peers, groups, slots),
 * ops_name/ops_flags/ops_doc, coll_name/coll_from_name, the collectives'
 * rows (units, input regions, results), buf_name and explain_opnd (exact
 * strings, truncation). */
#include <stdlib.h>
#include <string.h>
#include "ir/ir.h"
#include "unit.h"

/* A fresh all-to-all program for p ranks on `rank` (caller frees). */
static collc_prog *mk(int p, int rank, int in_place) {
  collc_spec s = {.coll = COLLC_COLL_ALLTOALL,
      .p = p, .rank = rank, .count = 1, .unit_bytes = 4, .in_place = in_place};
  collc_prog *P = prog_new(&s);
  if (!P) {
    printf("out of memory\n");
    exit(2);
  }
  return P;
}

/* Units of shape id (at offset 0) in message order, as "a,b,c" into buf. */
static char *units_of(const collc_prog *P, int id, char *buf, size_t len) {
  size_t at = 0;
  buf[0] = 0;
  for (int64_t k = 0; k < P->shapes[id].nruns; k++) {
    int64_t off, n;
    shape_run(P, id, k, &off, &n);
    for (int64_t u = 0; u < n && at < len; u++)
      at += (size_t)snprintf(buf + at, len - at, "%s%lld", at ? "," : "", (long long)(off + u));
  }
  return buf;
}

/* Check shape id: its explain text, unit list, nunits, nruns, lo and hi. */
static void expect_shape(const collc_prog *P, int id, const char *text, const char *units,
                         int64_t nunits, int64_t nruns, int64_t lo, int64_t hi) {
  char t[256], u[1024];
  if (!CHECK(id >= 0 && id < P->nshapes, "shape id %d (want %s)", id, text)) return;
  const collc_shape *S = &P->shapes[id];
  explain_opnd(P, opnd(BUF_RECV, 0, id), t, sizeof t);
  CHECK(strcmp(t + strlen("RECV+0 "), text) == 0, "shape %d is %s, want %s", id, t, text);
  CHECK(strcmp(units_of(P, id, u, sizeof u), units) == 0, "shape %s: units %s, want %s", text,
        u, units);
  CHECK(S->nunits == nunits && S->nruns == nruns && S->lo == lo && S->hi == hi,
        "shape %s: nunits %lld nruns %lld lo %lld hi %lld, want %lld %lld %lld %lld", text,
        (long long)S->nunits, (long long)S->nruns, (long long)S->lo, (long long)S->hi,
        (long long)nunits, (long long)nruns, (long long)lo, (long long)hi);
}

/* Strided shape from (count, stride) pairs given inline: lv = {c0, s0, c1, ...}. */
static int strided(collc_prog *P, int64_t run, int nlev, const int64_t *lv) {
  int64_t c[8], s[8];
  for (int l = 0; l < nlev; l++) c[l] = lv[2 * l], s[l] = lv[2 * l + 1];
  return prog_shape_strided(P, run, nlev, c, s);
}

/* Normal forms of strided shapes and interning of equal ones. */
static void test_normalise(void) {
  collc_prog *P = mk(64, 0, 0);
  const int64_t a[] = {1, 5, 3, 7}, b[] = {3, 2}, c[] = {3, 4, 2, 12}, c6[] = {6, 4};
  const int64_t d[] = {3, 10, 2, 2}, e[] = {2, 1, 3, 2}, f[] = {3, 4, 1, 99, 2, 12};
  /* a count-1 level is dropped: 2 units at 0, 7, 14 */
  expect_shape(P, strided(P, 2, 2, a), "[2 | 3*7]", "0,1,7,8,14,15", 6, 3, 0, 16);
  /* stride == run: the level joins the run, which equals a contiguous shape */
  int r6 = strided(P, 2, 1, b);
  expect_shape(P, r6, "[6]", "0,1,2,3,4,5", 6, 1, 0, 6);
  CHECK(r6 == prog_shape_contig(P, 6), "[2 | 3*2] not interned as [6]");
  /* (3,4) then (2,12) continues the level: (6,4) */
  int l64 = strided(P, 1, 2, c);
  expect_shape(P, l64, "[1 | 6*4]", "0,4,8,12,16,20", 6, 6, 0, 21);
  CHECK(l64 == strided(P, 1, 1, c6), "[1 | 3*4 | 2*12] != [1 | 6*4]");
  CHECK(l64 == strided(P, 1, 3, f), "count-1 middle level not dropped");
  /* an outer level with stride == run is NOT merged into the run */
  expect_shape(P, strided(P, 2, 2, d), "[2 | 3*10 | 2*2]", "0,1,10,11,20,21,2,3,12,13,22,23",
               12, 6, 0, 24);
  /* run 1 extended twice: (2,1) makes run 2, then (3,2) makes run 6 */
  CHECK(strided(P, 1, 2, e) == r6, "[1 | 2*1 | 3*2] not [6]");
  /* empty shapes are all one shape */
  const int64_t z1[] = {0, 5}, z2[] = {4, 2}, z3[] = {2, 4, 0, 9};
  int empty = prog_shape_contig(P, 0);
  expect_shape(P, empty, "[0]", "", 0, 0, 0, 0);
  CHECK(strided(P, 3, 1, z1) == empty, "count 0 level not empty");
  CHECK(strided(P, 0, 1, z2) == empty, "run 0 not empty");
  CHECK(strided(P, 3, 2, z3) == empty, "outer count 0 not empty");
  int n = P->nshapes;
  CHECK(strided(P, 2, 2, a) == strided(P, 2, 2, a) && P->nshapes == n,
        "re-interning added shapes (%d -> %d)", n, P->nshapes);
  CHECK(prog_shape_contig(P, 7) != prog_shape_contig(P, 6), "different shapes share an id");
  CHECK(P->err == 0, "unexpected error: %s", P->errmsg);
  const int64_t bad[] = {2, 0};
  CHECK(strided(P, 1, 1, bad) == -1 && P->err == COLLC_EINVAL, "stride 0 accepted");
  prog_free(P);
  P = mk(8, 0, 0);
  CHECK(prog_shape_strided(P, -1, 0, NULL, NULL) == -1 && P->err == COLLC_EINVAL,
        "negative run accepted");
  prog_free(P);
}

/* prog_opnd_runs: merging, one run -> contiguous, order kept, interning. */
static void test_runs(void) {
  collc_prog *P = mk(16, 0, 0);
  char t[256];
  const int64_t o1[] = {3, 5, 9}, l1[] = {2, 1, 2};
  collc_opnd x = prog_opnd_runs(P, BUF_RECV, 3, o1, l1); /* (3,2)+(5,1) merge */
  CHECK(strcmp(explain_opnd(P, x, t, sizeof t), "RECV+0 {3:3,9:2}") == 0, "got %s", t);
  expect_shape(P, x.shape, "{3:3,9:2}", "3,4,5,9,10", 5, 2, 3, 11);
  collc_opnd y = prog_opnd_runs(P, BUF_TMP, 3, o1, l1);
  CHECK(y.shape == x.shape && y.buf == BUF_TMP, "equal run lists got different shapes");
  const int64_t o2[] = {4, 5, 6}, l2[] = {1, 2, 0}; /* one run after merging */
  collc_opnd z = prog_opnd_runs(P, BUF_SEND, 3, o2, l2);
  CHECK(z.off == 4 && z.shape == prog_shape_contig(P, 3), "one run: %s",
        explain_opnd(P, z, t, sizeof t));
  const int64_t o3[] = {5, 4}, l3[] = {1, 1}; /* descending: kept in message order */
  collc_opnd w = prog_opnd_runs(P, BUF_RECV, 2, o3, l3);
  expect_shape(P, w.shape, "{5:1,4:1}", "5,4", 2, 2, 4, 6);
  const int64_t l4[] = {0, 0};
  collc_opnd e = prog_opnd_runs(P, BUF_RECV, 2, o3, l4); /* all empty */
  CHECK(e.off == 0 && e.shape == prog_shape_contig(P, 0) && opnd_units(P, e) == 0,
        "empty runs: %s", explain_opnd(P, e, t, sizeof t));
  collc_opnd v = prog_opnd_runs(P, BUF_RECV, 0, NULL, NULL);
  CHECK(v.shape == e.shape, "no runs is not the empty shape");
  CHECK(opnd_units(P, x) == 5 && opnd_units(P, z) == 3, "opnd_units %lld %lld",
        (long long)opnd_units(P, x), (long long)opnd_units(P, z));
  CHECK(opnd_units(P, opnd(BUF_NONE, 0, x.shape)) == 0, "BUF_NONE has units");
  CHECK(opnd_units(P, opnd(BUF_RECV, 0, P->nshapes)) == 0, "bad shape id has units");
  CHECK(opnd_units(P, opnd(BUF_RECV, 0, -1)) == 0, "shape -1 has units");
  CHECK(P->err == 0, "unexpected error: %s", P->errmsg);
  prog_free(P);
}

/* explain_opnd: exact strings, and truncation to any buffer length. */
static void test_explain_opnd(void) {
  collc_prog *P = mk(64, 0, 0);
  const int64_t c[] = {4}, s[] = {5};
  int sh = prog_shape_strided(P, 1, 1, c, s);
  char t[256], full[256];
  CHECK(strcmp(explain_opnd(P, opnd(BUF_NONE, 9, sh), t, sizeof t), "-") == 0, "got %s", t);
  CHECK(strcmp(explain_opnd(P, opnd(BUF_RECV, 3, sh), t, sizeof t), "RECV+3 [1 | 4*5]") == 0,
        "got %s", t);
  CHECK(strcmp(explain_opnd(P, opnd(BUF_SEND, 7, prog_shape_contig(P, 1)), t, sizeof t),
               "SEND+7 [1]") == 0, "got %s", t);
  const int64_t o[] = {0, 5, 40}, l[] = {2, 1, 3};
  collc_opnd x = prog_opnd_runs(P, BUF_TMP, 3, o, l);
  CHECK(strcmp(explain_opnd(P, x, t, sizeof t), "TMP+0 {0:2,5:1,40:3}") == 0, "got %s", t);
  explain_opnd(P, opnd(BUF_TMP, 12, sh), full, sizeof full);
  for (size_t len = 1; len <= strlen(full) + 1; len++) {
    char buf[64];
    memset(buf, 'Z', sizeof buf);
    explain_opnd(P, opnd(BUF_TMP, 12, sh), buf, len);
    CHECK(strlen(buf) == len - 1 && strncmp(buf, full, len - 1) == 0 && buf[len] == 'Z',
          "len %zu: '%.*s' is not a prefix of '%s'", len, (int)len, buf, full);
  }
  prog_free(P);
}

/* After the first failure, appends are ignored and finalize returns it. */
static void test_sticky(void) {
  collc_prog *P = mk(8, 2, 0);
  int one = prog_shape_contig(P, 1);
  prog_copy(P, opnd(BUF_SEND, 2, one), opnd(BUF_RECV, 2, one));
  prog_send(P, 8, opnd(BUF_SEND, 0, one)); /* peer == p */
  CHECK(P->err == COLLC_EINVAL && strstr(P->errmsg, "peer 8"), "err %d '%s'", P->err,
        P->errmsg);
  char first[sizeof P->errmsg];
  strcpy(first, P->errmsg);
  prog_copy(P, opnd(BUF_SEND, 3, one), opnd(BUF_RECV, 3, one));
  prog_recv(P, -1, opnd(BUF_RECV, 0, one));
  prog_wait(P);
  CHECK(P->nins == 1, "appends after the failure: %d instructions", P->nins);
  CHECK(strcmp(P->errmsg, first) == 0, "message replaced: '%s'", P->errmsg);
  CHECK(prog_shape_contig(P, 5) == -1, "shape interned after the failure");
  CHECK(prog_group(P, 2, 0, 1) == -1, "group interned after the failure");
  CHECK(prog_finalize(P) == COLLC_EINVAL, "finalize returned %d", P->err);
  prog_free(P);
  const int bad[] = {2, -1, 8, 100};
  for (int i = 0; i < 4; i++) { /* self, negative, p, beyond */
    for (int recv = 0; recv < 2; recv++) {
      P = mk(8, 2, 0);
      one = prog_shape_contig(P, 1);
      if (recv) prog_recv(P, bad[i], opnd(BUF_RECV, 0, one));
      else prog_send(P, bad[i], opnd(BUF_SEND, 0, one));
      CHECK(P->nins == 0 && prog_finalize(P) == COLLC_EINVAL,
            "%s peer %d on rank 2 of 8 accepted", recv ? "RECV" : "SEND", bad[i]);
      prog_free(P);
    }
  }
}

/* Build a one-COPY program (src -> dst) on p = 8 and return finalize's code;
 * *msg receives the error message. */
static int finalize_copy(int in_place, int64_t tmp, collc_opnd src, collc_opnd dst,
                         char *msg, size_t len) {
  collc_prog *P = mk(8, 0, in_place);
  prog_shape_contig(P, 1); /* ids 0..3: contiguous 1, 2, 3, 0 */
  prog_shape_contig(P, 2);
  prog_shape_contig(P, 3);
  prog_shape_contig(P, 0);
  prog_need_tmp(P, tmp);
  prog_copy(P, src, dst);
  int rc = prog_finalize(P);
  snprintf(msg, len, "%s", P->errmsg);
  prog_free(P);
  return rc;
}

/* prog_finalize's operand checks on one-instruction programs. */
static void test_finalize_operands(void) {
  enum { C1, C2, C3, C0 };
  char m[200];
  struct {
    int in_place;
    int64_t tmp;
    collc_opnd s, d;
    int rc;
    const char *msg;
  } t[] = {
      {0, 0, opnd(BUF_SEND, 6, C2), opnd(BUF_RECV, 6, C2), 0, ""},      /* last units: fine */
      {0, 0, opnd(BUF_SEND, 7, C2), opnd(BUF_RECV, 0, C2), COLLC_EINVAL, "out of bounds"},
      {0, 0, opnd(BUF_SEND, 0, C1), opnd(BUF_RECV, -1, C1), COLLC_EINVAL, "out of bounds"},
      {0, 0, opnd(BUF_SEND, 0, C1), opnd(BUF_TMP, 0, C1), COLLC_EINVAL, "out of bounds"},
      {0, 3, opnd(BUF_SEND, 0, C3), opnd(BUF_TMP, 0, C3), 0, ""},       /* TMP asked for */
      {0, 3, opnd(BUF_SEND, 0, C1), opnd(BUF_TMP, 3, C1), COLLC_EINVAL, "out of bounds"},
      {0, 0, opnd(BUF_RECV, 0, C1), opnd(BUF_SEND, 1, C1), COLLC_EINVAL, "send buffer"},
      {1, 0, opnd(BUF_SEND, 0, C1), opnd(BUF_RECV, 0, C1), COLLC_EINVAL, "SEND"},
      {1, 0, opnd(BUF_RECV, 0, C1), opnd(BUF_SEND, 0, C1), COLLC_EINVAL, "SEND"},
      {1, 0, opnd(BUF_SEND, 0, C0), opnd(BUF_RECV, 0, C0), COLLC_EINVAL, "in-place"},
      {1, 0, opnd(BUF_RECV, 0, C1), opnd(BUF_RECV, 7, C1), 0, ""},      /* in place, RECV only */
      {0, 0, opnd(BUF_SEND, 0, C2), opnd(BUF_RECV, 0, C3), COLLC_EINVAL, "2 units, dst 3"},
      {0, 0, opnd(BUF_SEND, 0, 4), opnd(BUF_RECV, 0, C1), COLLC_EINVAL, "bad src"}, /* no shape 4 */
      {0, 0, opnd(BUF_NONE, 0, C1), opnd(BUF_RECV, 0, C1), COLLC_EINVAL, "bad src"},
      {0, 0, opnd(BUF_SEND, 0, C1), opnd(BUF_COUNT, 0, C1), COLLC_EINVAL, "bad dst"},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    int rc = finalize_copy(t[i].in_place, t[i].tmp, t[i].s, t[i].d, m, sizeof m);
    CHECK(rc == t[i].rc && strstr(m, t[i].msg), "case %zu: rc %d '%s', want %d '%s'", i, rc,
          m, t[i].rc, t[i].msg);
  }
}

/* Slot assignment: WAIT completes all outstanding; finalize waits the rest. */
static void test_slots(void) {
  collc_prog *P = mk(8, 0, 0);
  int one = prog_shape_contig(P, 1);
  prog_wait(P); /* nothing outstanding: no instruction */
  CHECK(P->nins == 0, "empty wait appended an instruction");
  prog_send(P, 1, opnd(BUF_SEND, 1, one));
  prog_send(P, 2, opnd(BUF_SEND, 2, one));
  prog_recv(P, 3, opnd(BUF_RECV, 3, one));
  prog_wait(P);
  prog_send(P, 4, opnd(BUF_SEND, 4, one));
  CHECK(prog_finalize(P) == 0, "finalize: %s", P->errmsg);
  /* want: SEND 0, SEND 1, RECV 2, WAIT 0 n3, SEND 0, WAIT 0 n1 */
  const int op[] = {COLLC_OP_SEND, COLLC_OP_SEND, COLLC_OP_RECV, COLLC_OP_WAIT,
                    COLLC_OP_SEND, COLLC_OP_WAIT};
  const int slot[] = {0, 1, 2, 0, 0, 0}, n[] = {0, 0, 0, 3, 0, 1};
  CHECK(P->nins == 6 && P->nslots == 3, "%d instructions, %d slots", P->nins, P->nslots);
  for (int a = 0; a < P->nins && a < 6; a++)
    CHECK(P->ins[a].op == op[a] && P->ins[a].slot == slot[a] &&
              (op[a] != COLLC_OP_WAIT || P->ins[a].n == n[a]),
          "addr %d: %s slot %d n %lld, want %s slot %d n %d", a, ops_name(P->ins[a].op),
          P->ins[a].slot, (long long)P->ins[a].n, ops_name(op[a]), slot[a], n[a]);
  prog_free(P);
}

/* Program SEND to 1 then WAIT, finalized, then mutated by `how`:
 * 0 drop the WAIT, 1 duplicate the WAIT, 2 duplicate the SEND before it. */
static int broken_slots(int how, char *msg, size_t len) {
  collc_prog *P = mk(4, 0, 0);
  prog_send(P, 1, opnd(BUF_SEND, 1, prog_shape_contig(P, 1)));
  int rc = prog_finalize(P);
  collc_instr I[3] = {P->ins[0], P->ins[1], P->ins[1]};
  if (how == 2) I[1] = P->ins[0], I[2] = P->ins[1];
  P->nins = 0;
  for (int a = 0; a < (how == 0 ? 1 : 3); a++) {
    prog_reserve(P, (void **)&P->ins, &P->cap_ins, P->nins + 1, sizeof *P->ins, "test");
    P->ins[P->nins++] = I[a];
  }
  rc = rc ? -rc : prog_finalize(P);
  snprintf(msg, len, "%s", P->errmsg);
  prog_free(P);
  return rc;
}

/* finalize's slot discipline on hand-broken programs. */
static void test_slot_errors(void) {
  const char *want[] = {"never waited", "idle slot", "reused while in flight"};
  char m[200];
  for (int how = 0; how < 3; how++) {
    int rc = broken_slots(how, m, sizeof m);
    CHECK(rc == COLLC_EINVAL && strstr(m, want[how]), "mutation %d: rc %d '%s', want '%s'",
          how, rc, m, want[how]);
  }
}

/* Groups and the group all-to-all instruction. */
static void test_groups(void) {
  collc_prog *P = mk(12, 4, 0);
  int g = prog_group(P, 3, 1, 4); /* ranks 1, 5, 9 */
  CHECK(g == 0 && prog_group(P, 3, 1, 4) == 0 && P->ngroups == 1, "group interning: %d %d",
        g, P->ngroups);
  CHECK(prog_group(P, 4, 0, 3) == 1, "second group");
  int sh = prog_shape_contig(P, 4);
  prog_alltoall(P, g, opnd(BUF_SEND, 0, sh), opnd(BUF_RECV, 0, sh), 4);
  CHECK(P->nins == 2 && P->ins[0].op == COLLC_OP_ALLTOALL && P->ins[0].n == 4 &&
            P->ins[0].peer == 0 && P->ins[1].op == COLLC_OP_WAIT && P->ins[1].n == 1,
        "ALLTOALL not followed by its WAIT (%d instructions)", P->nins);
  CHECK(prog_finalize(P) == 0, "finalize: %s", P->errmsg);
  prog_free(P);
  P = mk(12, 0, 0);
  CHECK(prog_group(P, 4, 1, 4) == -1 && P->err == COLLC_EINVAL, "group past p accepted");
  prog_free(P);
  P = mk(12, 0, 0);
  prog_alltoall(P, 0, opnd(BUF_SEND, 0, 0), opnd(BUF_RECV, 0, 0), 1);
  CHECK(P->err == COLLC_EINVAL && P->nins == 0, "ALLTOALL on an unknown group accepted");
  prog_free(P);
}

/* The opcode table against an independent transcription of its contract. */
static void test_ops(void) {
  const struct {
    int op;
    const char *name;
    int flags;
  } want[] = {
      {COLLC_OP_NOP, "NOP", 0},
      {COLLC_OP_SEND, "SEND", OPF_READS | OPF_POSTS | OPF_PEER},
      {COLLC_OP_RECV, "RECV", OPF_WRITES | OPF_POSTS | OPF_PEER},
      {COLLC_OP_WAIT, "WAIT", OPF_WAITS},
      {COLLC_OP_COPY, "COPY", OPF_READS | OPF_WRITES},
      {COLLC_OP_ALLTOALL, "ALLTOALL",
       OPF_READS | OPF_WRITES | OPF_POSTS | OPF_GROUP | OPF_BLOCKS},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    const char *n = ops_name(want[i].op);
    CHECK(n && strcmp(n, want[i].name) == 0 && ops_flags(want[i].op) == want[i].flags,
          "op %d: %s flags %#x, want %s %#x", want[i].op, n ? n : "NULL",
          ops_flags(want[i].op), want[i].name, want[i].flags);
  }
  CHECK(COLLC_OP_COUNT >= 6, "only %d opcodes", COLLC_OP_COUNT);
  for (int op = 0; op < COLLC_OP_COUNT; op++) { /* every opcode, also ones added later */
    int f = ops_flags(op);
    CHECK(ops_name(op) && ops_doc(op) && *ops_doc(op), "op %d lacks a name or doc", op);
    CHECK(!(f & OPF_POSTS) || (f & (OPF_PEER | OPF_GROUP)), "op %d posts without a peer", op);
    CHECK(!((f & OPF_PEER) && (f & OPF_GROUP)), "op %d has both PEER and GROUP", op);
    for (int o = 0; o < op; o++)
      CHECK(strcmp(ops_name(o), ops_name(op)) != 0, "ops %d and %d share a name", o, op);
  }
  const int out[] = {-1, COLLC_OP_COUNT, 255};
  for (int i = 0; i < 3; i++)
    CHECK(!ops_name(out[i]) && !ops_flags(out[i]) && !ops_doc(out[i]),
          "op %d out of range not rejected", out[i]);
}

/* Collective and buffer names. */
static void test_names(void) {
  CHECK(coll_name(COLLC_COLL_ALLTOALL) && !strcmp(coll_name(COLLC_COLL_ALLTOALL), "alltoall"),
        "coll_name(ALLTOALL)");
  CHECK(coll_from_name("alltoall") == COLLC_COLL_ALLTOALL, "coll_from_name(alltoall)");
  for (int c = 0; c < COLLC_COLL_COUNT; c++)
    CHECK(coll_name(c) && coll_from_name(coll_name(c)) == c, "collective %d round trip", c);
  CHECK(!coll_name(-1) && !coll_name(COLLC_COLL_COUNT), "coll_name out of range");
  CHECK(coll_from_name("Alltoall") == -1 && coll_from_name("") == -1 &&
            coll_from_name("alltoal") == -1 && coll_from_name("alltoallx") == -1,
        "coll_from_name accepts a wrong name");
  const char *b[] = {"-", "SEND", "RECV", "TMP", "SHM"};
  for (int i = 0; i < BUF_COUNT; i++)
    CHECK(!strcmp(buf_name(i), b[i]), "buf_name(%d) = %s, want %s", i, buf_name(i), b[i]);
  CHECK(!strcmp(buf_name(-1), "?") && !strcmp(buf_name(BUF_COUNT), "?"), "buf_name range");
  collc_prog *P = mk(8, 0, 0), *Q = mk(8, 0, 1);
  prog_need_tmp(P, 5);
  prog_need_tmp(P, 3); /* never shrinks */
  CHECK(prog_buf_units(P, BUF_SEND) == 8 && prog_buf_units(P, BUF_RECV) == 8 &&
            prog_buf_units(P, BUF_TMP) == 5 && prog_buf_units(P, BUF_NONE) == 0,
        "prog_buf_units");
  CHECK(prog_buf_units(Q, BUF_SEND) == 0 && prog_buf_units(Q, BUF_RECV) == 8,
        "prog_buf_units in place");
  prog_free(P);
  prog_free(Q);
}

/* The collectives' rows: complete, and the buffer sizes, input regions
 * and results of p = 4, count = 3, root 2 as worked out by hand from the
 * MPI standard (units: blocks for alltoall and allgather). */
static void test_colls(void) {
  static const struct {
    int coll, in_place, rank;
    int64_t send, recv, vec; /* prog_buf_units, vector_units */
    int in_buf;
    int64_t in_off, in_units; /* rank's input region */
    int kind, want_rank;
    int64_t want_unit; /* what RECV unit 1 of the rank holds */
  } want[] = {
      {COLLC_COLL_ALLTOALL, 0, 1, 4, 4, 4, BUF_SEND, 0, 4, COLL_LEAF, 1, 1},
      {COLLC_COLL_ALLTOALL, 1, 3, 0, 4, 4, BUF_RECV, 0, 4, COLL_LEAF, 1, 3},
      {COLLC_COLL_ALLGATHER, 0, 1, 1, 4, 4, BUF_SEND, 0, 1, COLL_LEAF, 1, 0},
      {COLLC_COLL_ALLGATHER, 1, 3, 0, 4, 4, BUF_RECV, 3, 1, COLL_LEAF, 1, 0},
      {COLLC_COLL_ALLREDUCE, 0, 1, 3, 3, 3, BUF_SEND, 0, 3, COLL_FOLD, 0, 1},
      {COLLC_COLL_REDUCE_SCATTER_BLOCK, 0, 1, 12, 3, 12, BUF_SEND, 0, 12, COLL_FOLD, 0, 4},
      {COLLC_COLL_REDUCE_SCATTER_BLOCK, 1, 1, 0, 12, 12, BUF_RECV, 0, 12, COLL_FOLD, 0, 4},
      {COLLC_COLL_REDUCE, 1, 1, 3, 0, 3, BUF_SEND, 0, 3, COLL_NOT_RESULT, 0, 0},
      {COLLC_COLL_REDUCE, 1, 2, 0, 3, 3, BUF_RECV, 0, 3, COLL_FOLD, 0, 1},
      {COLLC_COLL_BCAST, 0, 1, 0, 3, 3, BUF_RECV, 0, 0, COLL_LEAF, 2, 1},
      {COLLC_COLL_BCAST, 0, 2, 0, 3, 3, BUF_RECV, 0, 3, COLL_LEAF, 2, 1},
  };
  for (int c = 0; c < COLLC_COLL_COUNT; c++) {
    const coll_desc *d = coll_desc_of(c);
    CHECK(d && d->name && d->input_units && d->output_units && d->vector_units && d->input &&
              d->expect && d->shm_inner && d->native_model && d->sim_candidates,
          "collective %d: incomplete row", c);
    CHECK(d && coll_reduces(c) == d->reduces && coll_name(c) == d->name, "accessors of %d", c);
  }
  CHECK(!coll_desc_of(-1) && !coll_desc_of(COLLC_COLL_COUNT) && !coll_reduces(COLLC_COLL_COUNT),
        "coll_desc_of out of range");
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    collc_spec s = {.coll = want[i].coll, .p = 4, .count = 3, .unit_bytes = 8,
                    .in_place = want[i].in_place, .root = 2};
    s = spec_rank(&s, want[i].rank);
    collc_prog *P = prog_new(&s);
    const coll_desc *d = coll_desc_of(s.coll);
    coll_region in = d->input(&s, s.rank);
    coll_want w = d->expect(&s, s.rank, 1);
    CHECK(P && prog_buf_units(P, BUF_SEND) == want[i].send &&
              prog_buf_units(P, BUF_RECV) == want[i].recv && d->vector_units(&s) == want[i].vec,
          "%s row %zu: buffer units", d->name, i);
    CHECK(in.buf == want[i].in_buf && in.off == want[i].in_off && in.units == want[i].in_units,
          "%s row %zu: input %s+%lld, %lld units", d->name, i, buf_name(in.buf),
          (long long)in.off, (long long)in.units);
    CHECK(w.kind == want[i].kind && (w.kind != COLL_LEAF || w.rank == want[i].want_rank) &&
              (w.kind == COLL_NOT_RESULT || w.unit == want[i].want_unit),
          "%s row %zu: RECV[1] is %d (rank %d unit %lld)", d->name, i, w.kind, w.rank,
          (long long)w.unit);
    prog_free(P);
  }
  collc_spec bad = {.coll = COLLC_COLL_COUNT, .p = 1};
  collc_prog *P = prog_new(&bad);
  CHECK(P && prog_finalize(P) == COLLC_EINVAL && strstr(P->errmsg, "unknown collective"),
        "a program of an unknown collective finalizes");
  prog_free(P);
}

/* Run every group of checks and print the summary. */
int main(void) {
  test_normalise();
  test_runs();
  test_explain_opnd();
  test_sticky();
  test_finalize_operands();
  test_slots();
  test_slot_errors();
  test_groups();
  test_ops();
  test_names();
  test_colls();
  return unit_summary("ir");
}
