/* collc-verify - run all p ranks' programs in one process and check them.
 *
 *   collc-verify [-i] <collective> <algorithm> <p> [count]
 *
 * Reports matched messages, units moved, deadlock and whether every output
 * unit holds the right input unit. Exit status 0 if all checks pass, 1 if
 * not, 2 for bad arguments. */
#include <unistd.h>
#include "common.h"
#include "check/verify.h"

int main(int argc, char **argv) {
  int in_place = 0, opt;
  while ((opt = getopt(argc, argv, "i")) != -1) {
    if (opt != 'i') return 2;
    in_place = 1;
  }
  if (argc - optind < 3 || argc - optind > 4) {
    fprintf(stderr, "usage: collc-verify [-i] <collective> <algorithm> <p> [count]\n");
    return 2;
  }
  char **a = argv + optind, text[128];
  collc_spec s;
  collc_choice c;
  verify_report R;
  tool_setup(a[0], a[1], tool_int(a[2], "p"), 0, argc - optind == 4 ? tool_int(a[3], "count") : 1,
             in_place, &s, &c);
  if (choice_is_native(&c)) {
    printf("native: nothing to verify\n");
    return 0;
  }
  verify_choice(&s, &c, &R);
  printf("%s %s p=%d%s: %s\n", a[0], choice_format(&c, text, sizeof text), s.p,
         in_place ? " in_place" : "", R.ok ? "ok" : "FAILED");
  printf("  messages %lld, units moved %lld, group calls %lld, max units sent by a rank %lld\n",
         (long long)R.messages, (long long)R.units, (long long)R.group_calls,
         (long long)R.max_rank_units);
  if (!R.ok)
    printf("  %lld problem(s)%s; first: %s\n", (long long)R.errors,
           R.deadlock ? ", deadlock" : "", R.first_error);
  return R.ok ? 0 : 1;
}
