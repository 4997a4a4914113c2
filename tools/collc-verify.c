/* collc-verify - run all p ranks' programs in one process and check them.
 *
 *   collc-verify [-i] [-r root] [-n] [-b bytes] <collective> <algorithm> <p> [count]
 *
 * Reports matched messages, units moved, deadlock and whether every output
 * unit holds the right input unit. Exit status 0 if all checks pass, 1 if
 * not, 2 for bad arguments. */
#include <unistd.h>
#include "common.h"
#include "check/verify.h"

int main(int argc, char **argv) {
  int opt;
  tool_opts o = {0, 0, 0, 0, NULL, NULL};
  while ((opt = getopt(argc, argv, TOOL_OPTSTRING)) != -1)
    if (tool_option(opt, optarg, &o)) return 2;
  if (argc - optind < 3 || argc - optind > 4) {
    fprintf(stderr, "usage: collc-verify [options] <collective> <algorithm> <p> [count]\n"
                    TOOL_OPTHELP);
    return 2;
  }
  char **a = argv + optind, text[128];
  collc_spec s;
  collc_choice c;
  verify_report R;
  tool_setup(a[0], a[1], tool_int(a[2], "p"), 0, argc - optind == 4 ? tool_int(a[3], "count") : 1,
             &o, &s, &c);
  if (choice_is_native(&c)) {
    printf("native: nothing to verify\n");
    return 0;
  }
  verify_choice(&s, &c, &R);
  printf("%s %s p=%d count=%lld%s%s: %s\n", a[0], choice_format(&c, text, sizeof text), s.p,
         (long long)s.count, o.in_place ? " in_place" : "",
         coll_reduces(s.coll) && o.noncommutative ? " noncommutative" : "", R.ok ? "ok" : "FAILED");
  printf("  messages %lld, units moved %lld, group calls %lld, max units sent by a rank %lld\n",
         (long long)R.messages, (long long)R.units, (long long)R.group_calls,
         (long long)R.max_rank_units);
  if (!R.ok)
    printf("  %lld problem(s)%s; first: %s\n", (long long)R.errors,
           R.deadlock ? ", deadlock" : "", R.first_error);
  return R.ok ? 0 : 1;
}
