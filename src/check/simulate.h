/* simulate.h - predicted run time of a compiled collective.
 *
 * Runs all p ranks' programs together against a LogGP-style cost model with
 * three levels (same socket, same node, between nodes): each rank has a
 * clock; a message costs its level's latency plus bytes / bandwidth, and a
 * message between nodes also queues on the sender's node link out and the
 * receiver's node link in (each carries one message's bytes at a time at
 * nic_bw, so a node's ranks share it); local copies and reductions cost
 * bytes / bandwidth.
 * Messages below `eager` bytes leave when sent; larger ones when both sides
 * have posted (rendezvous). Ranks advance in time order, so shared links are
 * granted first come, first served. A native group ALLTOALL is modelled as
 * the point-to-point pattern `group_comp` (linear or pairwise).
 *
 * Pure C, no MPI: it serves the tools (collc-explain --simulate,
 * collc-bench --calibrate) and the default rule for large communicators.
 */
#ifndef COLLC_SIMULATE_H
#define COLLC_SIMULATE_H

#include <stdint.h>
#include "../algo/algo.h"

enum { SIM_SOCKET = 0, SIM_NODE, SIM_NET, SIM_LEVELS };

/* Operations of all ranks together that a simulation may hold (32 bytes
 * each): p = 1152 linear all-to-all needs 2.7 M; larger runs are refused. */
#define SIM_MAX_OPS (1 << 22)

typedef struct {
  double lat[SIM_LEVELS]; /* s per message: same socket, same node, other node */
  double bw[SIM_LEVELS];  /* bytes/s of one message at that level */
  double nic_bw;          /* bytes/s of a node's network link, each direction (0: unshared) */
  double o;               /* s of the rank's time per message it posts (send or receive) */
  double copy_bw;         /* bytes/s of a local copy, a segment copy or a GET (0: free) */
  double reduce_bw;       /* bytes/s of a reduction, per byte of its result (0: free) */
  double flag_lat;        /* s from a SIGNAL until a peer's AWAIT sees it */
  double eager;           /* messages below this many bytes do not wait for the receiver */
  int group_comp;         /* COMP_LINEAR or COMP_PAIRWISE: a native group ALLTOALL */
} sim_params;

typedef struct {
  int ok;                     /* 1: every rank ran to its end */
  double time;                /* s: when the last rank finished */
  int slowest;                /* that rank */
  int64_t messages, bytes;    /* point-to-point between ranks (group calls expanded) */
  int64_t net_messages, net_bytes;          /* of those, between nodes */
  int64_t max_rank_messages, max_rank_bytes; /* most sent by one rank */
  double *trace;              /* in: NULL, or room for the traced rank's nins finish times */
  int trace_rank;             /* in: the rank whose instructions are traced */
  char error[200];
} sim_report;

/* Parameters from text: a preset name ("paper": the torus paper's
 * cluster as modelled in bench/platforms/paper-36x32.xml; "local": this
 * 2-core machine, as calibrated), then "key=value" words (separated by
 * spaces, commas or newlines) that override it: lat=S/N/X bw=S/N/X nic= o=
 * copy= reduce= flag= eager= group=linear|pairwise; or the name of a
 * regular file (not a preset's, without '=') holding such text, at most
 * 4 KiB ('#' starts a comment). 0, or COLLC_EINVAL with why. */
int sim_params_parse(const char *text, sim_params *M, char *why, size_t wlen);
/* M as text that sim_params_parse reads back. */
void sim_params_format(const sim_params *M, char *buf, size_t len);

/* Compile choice c for every rank of spec s (s->rank ignored) and simulate
 * the p programs under M. Returns R->ok (0 with R->error on failure: a
 * choice that does not compile, a deadlock, out of memory, more than
 * SIM_MAX_OPS operations). */
int sim_choice(const collc_spec *s, const collc_choice *c, const sim_params *M, sim_report *R);
/* The same for given programs (progs[r] is rank r's; they stay the caller's). */
int sim_programs(const collc_spec *s, collc_prog *const progs[], const sim_params *M,
                 sim_report *R);

/* Among the candidate texts (NULL-terminated), the one sim_choice
 * predicts fastest for s (ties: the earlier); its predicted time in *t.
 * Candidates that do not parse, fit or simulate are skipped; -1 if none
 * is left, else its index. */
int sim_best(const collc_spec *s, const char *const cand[], const sim_params *M, double *t);

/* The MPI library's own algorithm for s, as one of ours (for the native
 * candidate: its cost model): the native_model of its collective's row,
 * after MPICH's documented defaults (src/ir/coll.c). Returns a constant or
 * buf; NULL for an unknown collective. */
const char *sim_native_model(const collc_spec *s, char *buf, size_t len);

#endif
