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

#define COLLC_OPS(X)                                                            \
  X(NOP,      0,                                "does nothing")                 \
  X(SEND,     OPF_READS | OPF_POSTS | OPF_PEER, "start sending src to peer")    \
  X(RECV,     OPF_WRITES | OPF_POSTS | OPF_PEER, "start receiving dst from peer") \
  X(WAIT,     OPF_WAITS,                        "complete request slots [slot, slot+n)") \
  X(COPY,     OPF_READS | OPF_WRITES,           "copy src to dst (same unit count)") \
  X(REDUCE,   OPF_READS | OPF_WRITES | OPF_UPDATES, "dst = src op dst (src: lower ranks)") \
  X(COMBINE,  OPF_READS | OPF_READS2 | OPF_WRITES, "dst = src op src2 (src: lower ranks)") \
  X(ALLTOALL, OPF_READS | OPF_WRITES | OPF_POSTS | OPF_GROUP | OPF_BLOCKS,               \
              "all-to-all on group peer: member j gets src+j*n, dst+j*n from j")

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
