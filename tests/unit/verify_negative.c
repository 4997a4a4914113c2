/* verify_negative.c - the verifier can fail: hand-broken schedules.
 *
 * Truth: each case starts from programs that are correct by construction
 * (compiled by a generator, or written here by hand) and checks first that
 * verify_programs() accepts them unchanged; then it applies one mutation
 * whose effect is worked out in the comment (wrong peer, missing WAIT,
 * shifted offset, swapped sends, a COPY racing a pending receive or send,
 * a deadlock under rendezvous semantics, wrong sizes, wrong group) and
 * checks that the verifier rejects the result, where the failure has a
 * specific cause also with the expected kind of first error. */
#include <stdlib.h>
#include <string.h>
#include "algo/algo.h"
#include "check/verify.h"
#include "unit.h"
#include "mutate.h"

/* Compile algo for every rank of a p-rank all-to-all of one 4-byte int into G. */
static int compile_a2a(const char *algo, int p, int in_place, progs *G) {
  collc_spec s = {.coll = COLLC_COLL_ALLTOALL, .p = p, .count = 1, .unit_bytes = 4,
                  .in_place = in_place};
  return compile_all(&s, algo, G);
}


/* Verify G's programs; returns the report's ok. */
static int verify(progs *G, verify_report *R) {
  return verify_programs(&G->s, G->P, R);
}

/* Expect the unmutated programs G to pass (the control of every case). */
static int control(const char *what, progs *G) {
  verify_report R;
  return CHECK(verify(G, &R), "%s: the unmutated programs fail: %s", what, R.first_error);
}

/* Expect the mutated programs G to fail, with `why` (if not NULL) in the
 * first error; also deadlock expected when dead is 1. */
static void expect_fail(const char *what, progs *G, const char *why, int dead) {
  verify_report R;
  int ok = verify(G, &R);
  CHECK(!ok && R.errors > 0, "%s: the verifier accepts the broken schedule", what);
  if (!ok) printf("caught %s: %s\n", what, R.first_error);
  if (!ok && why)
    CHECK(strstr(R.first_error, why) != NULL, "%s: first error '%s', want '%s'", what,
          R.first_error, why);
  if (!ok && dead) CHECK(R.deadlock, "%s: no deadlock reported (%s)", what, R.first_error);
}

/* The mutated program P must still pass prog_finalize (well-formed), so
 * that only the verifier can catch the mutation. */
static void still_wellformed(const char *what, collc_prog *P) {
  CHECK(prog_finalize(P) == 0, "%s: mutation not well-formed: %s", what, P->errmsg);
}

/* Pairwise p=4: rank 1's first RECV names rank 2 instead of rank 0. */
static void case_wrong_peer(void) {
  progs G;
  if (compile_a2a("pairwise", 4, 0, &G) == 0 && control("wrong peer", &G)) {
    int a = find(G.P[1], COLLC_OP_RECV, 0, 0);
    CHECK(a >= 0 && G.P[1]->ins[a].peer == 0, "pairwise rank 1 does not receive from 0 first");
    G.P[1]->ins[a].peer = 2;
    still_wellformed("wrong peer", G.P[1]);
    expect_fail("wrong RECV peer", &G, NULL, 0);
  }
  free_all(&G);
}

/* torus:3x2:linear p=6: rank 0 loses the WAIT ending round 0, so round 1
 * reads TMP units 1, 3, 5 (copy, sends) that round 0's receive still writes. */
static void case_missing_wait(void) {
  progs G;
  if (compile_a2a("torus:3x2:linear", 6, 0, &G) == 0 && control("missing wait", &G)) {
    delete_ins(G.P[0], find(G.P[0], COLLC_OP_WAIT, 0, 0));
    expect_fail("missing WAIT", &G, "while a receive writes", 0);
  }
  free_all(&G);
}

/* linear p=5: rank 2's SEND to rank 3 reads unit 4 instead of unit 3, so
 * rank 3's RECV[2] ends up holding 2.4 instead of 2.3. */
static void case_shifted_send(void) {
  progs G;
  if (compile_a2a("linear", 5, 0, &G) == 0 && control("shifted send", &G)) {
    int a = find(G.P[2], COLLC_OP_SEND, 0, 0);
    CHECK(a >= 0 && G.P[2]->ins[a].peer == 3 && G.P[2]->ins[a].src.off == 3,
          "linear rank 2's first SEND is not unit 3 to rank 3");
    G.P[2]->ins[a].src.off++;
    still_wellformed("shifted send", G.P[2]);
    expect_fail("SEND offset + 1", &G, "rank 3 RECV[2] holds unit 4 of rank 2", 0);
  }
  free_all(&G);
}

/* Find on P two SENDs a < b of one batch (no WAIT between) to the same
 * peer with different operands; returns 1 and sets *pa, *pb. */
static int same_peer_sends(const collc_prog *P, int *pa, int *pb) {
  for (int a = 0; a < P->nins; a++)
    for (int b = a + 1; b < P->nins && P->ins[b].op != COLLC_OP_WAIT; b++) {
      const collc_instr *A = &P->ins[a], *B = &P->ins[b];
      if (A->op == COLLC_OP_SEND && B->op == COLLC_OP_SEND && A->peer == B->peer &&
          (A->src.buf != B->src.buf || A->src.shape != B->src.shape ||
           A->src.off != B->src.off)) {
        *pa = a, *pb = b;
        return 1;
      }
    }
  return 0;
}

/* bruck:2 p=6: in phase 0 rank 0 sends rank 1 block 1 (bound for its
 * RECV, 1 unit) and blocks 3, 5 (bound for its TMP, 2 units) as two
 * messages; swapped, FIFO matching pairs them with the wrong receives, whose
 * sizes disagree. */
static void case_swapped_sends(void) {
  progs G;
  int a = -1, b = -1;
  if (compile_a2a("bruck:2", 6, 0, &G) == 0 && control("swapped sends", &G)) {
    if (CHECK(same_peer_sends(G.P[0], &a, &b), "bruck:2 p=6 rank 0: no two sends to one peer")) {
      collc_instr t = G.P[0]->ins[a];
      G.P[0]->ins[a] = G.P[0]->ins[b];
      G.P[0]->ins[b] = t;
      still_wellformed("swapped sends", G.P[0]);
      expect_fail("two SENDs to one peer swapped", &G, "units", 0);
    }
  }
  free_all(&G);
}

/* linear p=4: rank 0 copies its own input unit 3 into RECV[3] while its
 * RECV from rank 3 (into RECV[3]) is pending. The final data is still right
 * (rank 3's block lands later), so only the race check can catch it. */
static void case_copy_races_recv(void) {
  progs G;
  if (compile_a2a("linear", 4, 0, &G) == 0 && control("copy races recv", &G)) {
    collc_prog *P = G.P[0];
    int a = find(P, COLLC_OP_SEND, 0, 0), one = prog_shape_contig(P, 1);
    collc_instr I = {.op = COLLC_OP_COPY, .src = opnd(BUF_SEND, 3, one),
                     .dst = opnd(BUF_RECV, 3, one)};
    insert_ins(P, a, I);
    still_wellformed("copy races recv", P);
    expect_fail("COPY into a unit a pending RECV writes", &G, "while a request uses it", 0);
  }
  free_all(&G);
}

/* torus:4x5:linear p=20: before rank 0's last WAIT, a COPY overwrites
 * TMP[5..9], which its pending SEND to rank 5 reads. */
static void case_copy_races_send(void) {
  progs G;
  if (compile_a2a("torus:4x5:linear", 20, 0, &G) == 0 && control("copy races send", &G)) {
    collc_prog *P = G.P[0];
    int a = find(P, COLLC_OP_WAIT, 1, 0), five = prog_shape_contig(P, 5);
    collc_instr I = {.op = COLLC_OP_COPY, .src = opnd(BUF_RECV, 0, five),
                     .dst = opnd(BUF_TMP, 5, five)};
    CHECK(a > 0, "torus:4x5:linear rank 0 has no second WAIT");
    insert_ins(P, a, I);
    still_wellformed("copy races send", P);
    expect_fail("COPY over a unit a pending SEND reads", &G, "while a request uses it", 0);
  }
  free_all(&G);
}

/* Hand-written p = 2 all-to-all on rank r: copy the own block, then
 * order 0: RECV, SEND, WAIT (correct); 1: RECV, WAIT, SEND, WAIT (both
 * ranks wait for a receive nobody sends: deadlock); 2: SEND, WAIT, RECV,
 * WAIT (needs eager buffering, which rendezvous semantics do not give). */
static collc_prog *pair_prog(int r, int order) {
  collc_spec s = {.coll = COLLC_COLL_ALLTOALL,
      .p = 2, .rank = r, .count = 1, .unit_bytes = 4, .in_place = 0};
  collc_prog *P = prog_new(&s);
  int one = prog_shape_contig(P, 1), o = 1 - r;
  prog_copy(P, opnd(BUF_SEND, r, one), opnd(BUF_RECV, r, one));
  if (order == 2) {
    prog_send(P, o, opnd(BUF_SEND, o, one));
    prog_wait(P);
  }
  prog_recv(P, o, opnd(BUF_RECV, o, one));
  if (order == 1) prog_wait(P);
  if (order != 2) prog_send(P, o, opnd(BUF_SEND, o, one));
  CHECK(prog_finalize(P) == 0, "hand-written pair program: %s", P->errmsg);
  return P;
}

/* Deadlocks under rendezvous semantics are reported as such. */
static void case_deadlock(void) {
  const char *what[] = {"correct pair", "recv-wait-send on both ranks",
                        "send-wait-recv on both ranks (eager only)"};
  for (int order = 0; order < 3; order++) {
    progs G;
    G.s = (collc_spec){.coll = COLLC_COLL_ALLTOALL,
        .p = 2, .rank = 0, .count = 1, .unit_bytes = 4, .in_place = 0};
    G.P[0] = pair_prog(0, order);
    G.P[1] = pair_prog(1, order);
    if (order == 0) control(what[0], &G);
    else expect_fail(what[order], &G, "deadlock", 1);
    free_all(&G);
  }
}

/* linear p=4: rank 0 sends 2 units (1, 2) to rank 1, which receives 1. */
static void case_size_mismatch(void) {
  progs G;
  if (compile_a2a("linear", 4, 0, &G) == 0 && control("size mismatch", &G)) {
    collc_prog *P = G.P[0];
    int a = find(P, COLLC_OP_SEND, 0, 0);
    CHECK(a >= 0 && P->ins[a].peer == 1, "linear rank 0's first SEND is not to rank 1");
    P->ins[a].src.shape = prog_shape_contig(P, 2);
    still_wellformed("size mismatch", P);
    expect_fail("SEND of 2 units to a RECV of 1", &G, "units", 0);
  }
  free_all(&G);
}

/* torus:3x2:native p=6 (groups {0,1},{2,3},{4,5} then {0,2,4},{1,3,5}):
 * how 0: rank 1's round 0 uses its round 1 group {1,3,5}: the rounds no
 * longer line up, and the third part lies outside the buffer, which
 * prog_finalize already rejects; 1: rank 1's round 0 uses group {2,3}, which does not
 * contain it; 2: rank 0's round 1 member stride n = 2 becomes 1, so its
 * parts overlap and the data is wrong. */
static void case_group(int how) {
  progs G;
  const char *what[] = {"ALLTOALL on another round's group", "ALLTOALL on a foreign group",
                        "ALLTOALL member stride"};
  if (compile_a2a("torus:3x2:native", 6, 0, &G) == 0 && control(what[how], &G)) {
    collc_prog *P = G.P[how == 2 ? 0 : 1];
    int a0 = find(P, COLLC_OP_ALLTOALL, 0, 0), a1 = find(P, COLLC_OP_ALLTOALL, 1, 0);
    if (CHECK(a0 >= 0 && a1 >= 0 && P->ins[a1].n == 2, "torus:3x2:native is not 2 rounds")) {
      if (how == 0) P->ins[a0].peer = P->ins[a1].peer;
      if (how == 1) P->ins[a0].peer = prog_group(P, 2, 2, 1);
      if (how == 2) P->ins[a1].n = 1;
      if (how == 0) { /* 3 parts of stride 1 from SEND+0: the last one leaves the buffer */
        CHECK(prog_finalize(P) != 0 && strstr(P->errmsg, "out of bounds"),
              "%s: prog_finalize accepted it (%s)", what[how], P->errmsg);
      } else {
        still_wellformed(what[how], P);
        expect_fail(what[how], &G, how == 1 ? "not a member" : NULL, 0);
      }
    }
  }
  free_all(&G);
}

/* linear p=4: rank 2's SEND to rank 3 is dropped (slots kept well-formed),
 * so rank 3 waits forever for it. */
static void case_dropped_send(void) {
  progs G;
  if (compile_a2a("linear", 4, 0, &G) == 0 && control("dropped send", &G)) {
    collc_prog *P = G.P[2];
    int a = find(P, COLLC_OP_SEND, 0, 0);
    CHECK(a >= 0 && P->ins[a].peer == 3, "linear rank 2's first SEND is not to rank 3");
    drop_post(P, a);
    still_wellformed("dropped send", P);
    expect_fail("SEND dropped", &G, "deadlock", 1);
  }
  free_all(&G);
}

/* linear p=4: every rank loses its final WAIT, so all requests are still in
 * flight when the programs end (MPI would leave RECV undefined). */
static void case_final_wait(void) {
  progs G;
  if (compile_a2a("linear", 4, 0, &G) == 0 && control("final wait", &G)) {
    for (int r = 0; r < 4; r++) {
      collc_prog *P = G.P[r];
      CHECK(P->nins > 0 && P->ins[P->nins - 1].op == COLLC_OP_WAIT, "rank %d ends without WAIT",
            r);
      P->nins--;
    }
    expect_fail("requests never waited", &G, NULL, 0);
  }
  free_all(&G);
}

/* Run every case and print the summary. */
int main(void) {
  case_wrong_peer();
  case_missing_wait();
  case_shifted_send();
  case_swapped_sends();
  case_copy_races_recv();
  case_copy_races_send();
  case_deadlock();
  case_size_mismatch();
  for (int how = 0; how < 3; how++) case_group(how);
  case_dropped_send();
  case_final_wait();
  return unit_summary("verify_negative");
}
