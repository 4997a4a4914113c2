/* collc-explain - print the compiled program of one rank.
 *
 *   collc-explain [-x] [-i] [-r root] [-n] [-b bytes] <collective> <algorithm> <p> <rank> [count]
 *
 *   -x  expand each operand into the unit indices it addresses
 *   (other options: tools/common.h)
 * Examples: collc-explain -x alltoall torus:4x5 20 0
 *           collc-explain allreduce recexch:-4,-2,2,4 8 3 1000 */
#include <unistd.h>
#include "common.h"

static void usage(void) {
  fprintf(stderr, "usage: collc-explain [-x] [-i] [-r root] [-n] [-b bytes] <collective> "
                  "<algorithm> <p> <rank> [count]\n  -x        list the unit indices of "
                  "every operand\n" TOOL_OPTHELP "algorithms:\n");
  for (int i = 0; i < algo_count; i++)
    fprintf(stderr, "  %-22s %-34s %s\n",
            algo_registry[i]->coll < 0 ? "(all)" : coll_name(algo_registry[i]->coll),
            algo_registry[i]->syntax, algo_registry[i]->summary);
}

int main(int argc, char **argv) {
  int flags = 0, opt;
  tool_opts o = {0, 0, 0, 0, NULL};
  while ((opt = getopt(argc, argv, "xh" TOOL_OPTSTRING)) != -1) {
    if (opt == 'x') flags |= EXPLAIN_EXPAND;
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
  if (choice_is_native(&c)) {
    printf("%s native: the MPI library's own collective, no program\n", a[0]);
    return 0;
  }
  collc_prog *P = choice_compile(&s, &c, why, sizeof why);
  if (!P) {
    fprintf(stderr, "%s\n", why);
    return 1;
  }
  explain_print(P, flags, stdout);
  prog_free(P);
  return 0;
}
