/* wisdom.c (fuzz) - libFuzzer target for the wisdom loader (src/ir/wisdom.c).
 *
 * Input: one mode byte, then a file image. Mode bit 0 set: the CRCs are
 * checked (as collc loads files); clear: they are skipped, so the fuzzer
 * reaches the structural checks and the program rebuild behind them. Any
 * accepted image must re-encode to an image that loads again, with the
 * CRCs checked.
 * Built with clang -fsanitize=fuzzer,address,undefined: make fuzz. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "ir/wisdom.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char why[256];
  if (size < 1) return 0;
  int check = data[0] & 1;
  (void)check;
  collc_prog *P = wisdom_decode(data + 1, size - 1, NULL, check, why, sizeof why);
  if (!P) return 0;
  unsigned char *b;
  size_t n;
  const char *layout = (const char *)data + 1 + 8 + 8 + 16 + 64 + 96; /* NUL-terminated: checked */
  if (wisdom_encode(P, layout, &b, &n) == 0) {
    collc_prog *Q = wisdom_decode(b, n, NULL, 1, why, sizeof why);
    if (!Q) abort(); /* what we write, we must read */
    prog_free(Q);
    free(b);
  }
  prog_free(P);
  return 0;
}
