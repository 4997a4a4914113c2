/* collc-explain - print the compiled program of one rank.
 *
 *   collc-explain [-x] [-i] <collective> <algorithm> <p> <rank> [count]
 *
 *   -x  expand each operand into the unit indices it addresses
 *   -i  in place (MPI_IN_PLACE)
 * Example: collc-explain -x alltoall torus:4x5 20 0 */
#include <unistd.h>
#include "common.h"

static void usage(void) {
  fprintf(stderr, "usage: collc-explain [-x] [-i] <collective> <algorithm> <p> <rank> [count]\n"
                  "algorithms:\n");
  for (int i = 0; i < algo_count; i++)
    fprintf(stderr, "  %-40s %s\n", algo_registry[i]->syntax, algo_registry[i]->summary);
}

int main(int argc, char **argv) {
  int flags = 0, in_place = 0, opt;
  while ((opt = getopt(argc, argv, "xih")) != -1) {
    if (opt == 'x') flags |= EXPLAIN_EXPAND;
    else if (opt == 'i') in_place = 1;
    else {
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
             argc - optind == 5 ? tool_int(a[4], "count") : 1, in_place, &s, &c);
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
