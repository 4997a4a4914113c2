/* select.c - the default algorithm rule, used when COLLC_<COLLECTIVE> is unset.
 *
 * The rule must never be knowingly slower than the native collective: it
 * picks one of ours only where the benchmark (make bench, README) measured
 * it faster on the machines we know. */
#include "internal.h"

const char *select_default(const collc_spec *s) {
  (void)s;
  return "native";
}
