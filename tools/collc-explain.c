/* collc-explain - print the compiled program of one rank.
 *
 *   collc-explain [-x] [-S params] [-i] [-r root] [-n] [-b bytes] [-N nodes]
 *                 <collective> <algorithm> <p> <rank> [count]
 *
 *   -x         expand each operand into the unit indices it addresses
 *   -g         after the listing, the batches of local instructions and their
 *              descriptor tables (ir/batch.h), checked by verify_batches
 *   -S PARAMS  simulate all p ranks (src/check/simulate.h; PARAMS: a preset,
 *              "key=value" words or a file) and print when each of this
 *              rank's instructions completes, then the predicted totals;
 *              "native" is simulated as its cost model (sim_native_model)
 *   -T         compile every rank's program and print the time per rank
 *              (what one rank spends compiling its own plan), not the listing
 *   (other options: tools/common.h)
 * Examples: collc-explain -x alltoall torus:4x5 20 0
 *           collc-explain allreduce recexch:-4,-2,2,4 8 3 1000 */
#include <time.h>
#include <unistd.h>
#include "common.h"
#include "check/simulate.h"
#include "check/verify.h"

static void usage(void) {
  fprintf(stderr, "usage: collc-explain [-x] [-g] [-S params] [-i] [-r root] [-n] [-b bytes] "
                  "[-N nodes] <collective> <algorithm> <p> <rank> [count]\n"
                  "  -x        list the unit indices of every operand\n"
                  "  -g        print the batches of local instructions (descriptor tables)\n"
                  "  -S PARAMS simulate all ranks: PARAMS is a preset (paper, local), "
                  "key=value\n            words (lat=S/N/X bw=S/N/X nic= o= copy= reduce= "
                  "flag= eager=\n            group=) or a file; prints each instruction's "
                  "predicted end\n"
                  "  -T        time compiling every rank's program (per rank), no listing\n"
                  TOOL_OPTHELP "algorithms:\n");
  for (int i = 0; i < algo_count; i++)
    fprintf(stderr, "  %-22s %-34s %s\n",
            algo_registry[i]->coll < 0 ? "(all)" : coll_name(algo_registry[i]->coll),
            algo_registry[i]->syntax, algo_registry[i]->summary);
}

/* Simulate every rank of s's choice c under params text and print P
 * with rank s->rank's predicted times, then the totals; exit status. */
static int explain_simulated(const collc_spec *s, const collc_choice *c, const collc_prog *P,
                             const char *params, int flags) {
  sim_params M;
  char why[200], text[300];
  if (sim_params_parse(params, &M, why, sizeof why)) {
    fprintf(stderr, "%s\n", why);
    return 2;
  }
  sim_report R = {.trace = calloc((size_t)P->nins + 1, sizeof(double)), .trace_rank = s->rank};
  if (!R.trace || !sim_choice(s, c, &M, &R)) {
    fprintf(stderr, "simulation failed: %s\n", R.trace ? R.error : "out of memory");
    free(R.trace);
    return 1;
  }
  sim_params_format(&M, text, sizeof text);
  explain_print_times(P, flags, R.trace, stdout);
  printf("simulated: %s\npredicted time %.3f us (slowest rank %d); %lld messages, %lld bytes "
         "(between nodes: %lld, %lld); per rank at most %lld messages, %lld bytes\n",
         text, R.time * 1e6, R.slowest, (long long)R.messages, (long long)R.bytes,
         (long long)R.net_messages, (long long)R.net_bytes, (long long)R.max_rank_messages,
         (long long)R.max_rank_bytes);
  free(R.trace);
  return 0;
}

/* Print P's batches and whether the verifier accepts them; exit status. */
static int explain_batches(const collc_prog *P) {
  collc_batches B;
  char why[256];
  if (batch_build(P, &B)) {
    fprintf(stderr, "out of memory\n");
    return 1;
  }
  batch_print(&B, stdout);
  int ok = verify_batches(P, &B, why, sizeof why);
  printf("batches %s%s\n", ok ? "verified" : "WRONG: ", ok ? "" : why);
  batch_free(&B);
  return !ok;
}

/* Compile choice c for every rank of s and print the wall time per rank;
 * exit status. */
static int time_compile(const collc_spec *s, const collc_choice *c) {
  struct timespec t0, t1;
  long long ins = 0;
  char why[200];
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int r = 0; r < s->p; r++) {
    collc_spec sr = spec_rank(s, r);
    collc_prog *P = choice_compile(&sr, c, why, sizeof why);
    if (!P) {
      fprintf(stderr, "rank %d: %s\n", r, why);
      return 1;
    }
    ins += P->nins;
    prog_free(P);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double t = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  printf("%s p=%d count=%lld: %d programs in %.3f s, %.2f us per rank, %.1f instructions "
         "per rank\n", coll_name(s->coll), s->p, (long long)s->count, s->p, t, t / s->p * 1e6,
         (double)ins / s->p);
  return 0;
}

int main(int argc, char **argv) {
  int flags = 0, opt, timing = 0, batches = 0;
  const char *params = NULL;
  tool_opts o = {0, 0, 0, 0, NULL, NULL};
  while ((opt = getopt(argc, argv, "xgS:Th" TOOL_OPTSTRING)) != -1) {
    if (opt == 'x') flags |= EXPLAIN_EXPAND;
    else if (opt == 'g') batches = 1;
    else if (opt == 'S') params = optarg;
    else if (opt == 'T') timing = 1;
    else if (tool_option(opt, optarg, &o)) {
      usage();
      return opt == 'h' ? 0 : 2;
    }
  }
  if (argc - optind < 4 || argc - optind > 5) {
    usage();
    return 2;
  }
  char **a = argv + optind;
  collc_spec s;
  collc_choice c;
  char why[200];
  tool_setup(a[0], a[1], tool_int(a[2], "p"), tool_int(a[3], "rank"),
             argc - optind == 5 ? tool_int(a[4], "count") : 1, &o, &s, &c);
  if (choice_is_native(&c) && params) { /* simulate its cost model */
    char model[256];
    const char *m = sim_native_model(&s, model, sizeof model);
    printf("%s native: the MPI library's own collective, modelled as %s\n", a[0], m);
    if (choice_parse(s.coll, m, &c, why, sizeof why) || choice_resolve(&s, &c, why, sizeof why)) {
      fprintf(stderr, "%s\n", why);
      return 1;
    }
  } else if (choice_is_native(&c)) {
    printf("%s native: the MPI library's own collective, no program\n", a[0]);
    return 0;
  }
  if (timing) return time_compile(&s, &c);
  collc_prog *P = choice_compile(&s, &c, why, sizeof why);
  if (!P) {
    fprintf(stderr, "%s\n", why);
    return 1;
  }
  int rc = 0;
  if (params) rc = explain_simulated(&s, &c, P, params, flags);
  else explain_print(P, flags, stdout);
  if (batches && !rc) rc = explain_batches(P);
  prog_free(P);
  return rc;
}
