/* ops.h - the schedule instruction set, defined once.
 *
 * Every opcode appears exactly once in COLLC_OPS. The enum, the opcode names
 * used by the explain printer, and the operand rules used by the builder's
 * finalize pass and by the verifier are all generated from this table.
 *
 *   X(name, flags, doc)
 *
 * flags (OPF_*):
 *   READS   the src operand is read            WRITES  the dst operand is written
 *   READS2  the src2 operand is read           UPDATES the dst operand is read too
 *   POSTS   starts a request in `slot`         WAITS   completes slots [slot, slot+n)
 *   PEER    `peer` is a rank of the communicator
 *   GROUP   `peer` is a group index (program's group table), `n` the member stride
 *   BLOCKS  the instruction itself blocks until a partner set arrives
 *   SYNC    a shared-memory flag operation (`n` is the step value)
 *   REMOTE  src names buffers of rank `peer` (same node), read in place where
 *           the platform allows (Cross Memory Attach), else from src2, the
 *           copy the owner's OFFER left in the segment
 *
 * Shared-memory flags: every rank of a node has one counter. SIGNAL n
 * publishes "this execution has reached step n" (release); AWAIT n on peer
 * q blocks until q has (acquire); AWAIT 0 means "q has ended its previous
 * execution" (its SIGNAL STEP_DONE). Step values grow within an execution.
 *
 * Single copy: OFFER makes src readable by the node's ranks until they
 * tell (SIGNAL) that they have read it: in place when this rank's buffer
 * allows, else by copying it into dst (a segment slot). GET reads an
 * offered operand: dst = the peer's src, in place or from the slot src2.
 * The owner must not change or leave the offered data before its readers
 * have signalled (the verifier checks it as it checks the segment).
 */
#ifndef COLLC_OPS_H
#define COLLC_OPS_H

#define OPF_READS  0x01
#define OPF_WRITES 0x02
#define OPF_POSTS  0x04
#define OPF_WAITS  0x08
#define OPF_PEER   0x10
#define OPF_GROUP  0x20
#define OPF_BLOCKS 0x40
#define OPF_READS2 0x80
#define OPF_UPDATES 0x100
#define OPF_SYNC   0x200
#define OPF_REMOTE 0x400

#define STEP_DONE (1 << 20) /* the last SIGNAL of every execution that used SHM */

#define COLLC_OPS(X)                                                            \
  X(NOP,      0,                                "does nothing")                 \
  X(SEND,     OPF_READS | OPF_POSTS | OPF_PEER, "start sending src to peer")    \
  X(RECV,     OPF_WRITES | OPF_POSTS | OPF_PEER, "start receiving dst from peer") \
  X(WAIT,     OPF_WAITS,                        "complete request slots [slot, slot+n)") \
  X(COPY,     OPF_READS | OPF_WRITES,           "copy src to dst (same unit count)") \
  X(REDUCE,   OPF_READS | OPF_WRITES | OPF_UPDATES, "dst = src op dst (src: lower ranks)") \
  X(COMBINE,  OPF_READS | OPF_READS2 | OPF_WRITES, "dst = src op src2 (src: lower ranks)") \
  X(ALLTOALL, OPF_READS | OPF_WRITES | OPF_POSTS | OPF_GROUP | OPF_BLOCKS,               \
              "all-to-all on group peer: member j gets src+j*n, dst+j*n from j") \
  X(SIGNAL,   OPF_SYNC,                         "set my node flag to step n (release)") \
  X(AWAIT,    OPF_SYNC | OPF_PEER | OPF_BLOCKS, "wait until peer's node flag reaches step n (acquire)") \
  X(OFFER,    OPF_READS | OPF_WRITES,           "let node ranks read src in place, else copy it to dst") \
  X(GET,      OPF_READS | OPF_READS2 | OPF_WRITES | OPF_PEER | OPF_REMOTE,                \
              "dst = peer's offered src (in place, else its copy src2)")

enum collc_opcode {
#define COLLC_OP_ENUM(name, flags, doc) COLLC_OP_##name,
  COLLC_OPS(COLLC_OP_ENUM)
#undef COLLC_OP_ENUM
  COLLC_OP_COUNT
};

/* Opcode name ("SEND"), flags and one-line description; NULL/0 if out of range. */
const char *ops_name(int op);
int ops_flags(int op);
const char *ops_doc(int op);

#endif
