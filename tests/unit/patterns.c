/* patterns.c - the rank arithmetic of src/algo/patterns.h against brute
 * force: mixed-radix digits and weights are checked by rebuilding every
 * rank from its digits (and by counting through all ranks in order), base-b
 * digits and digit counts by repeated division and powers, mod_pos by its
 * definition. */
#include <stdint.h>
#include "unit.h"
#include "algo/patterns.h"

/* Every rank of every small radix list equals the sum of digit * weight,
 * and the digits count like an odometer with R[0] fastest. */
static void test_mixed_radix(void) {
  static const int lists[][4] = {{5, 4, 1, 1}, {2, 3, 4, 1}, {4, 3, 3, 4}, {7, 1, 2, 1},
                                 {1, 1, 1, 1}, {2, 2, 2, 2}};
  for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
    const int *R = lists[l];
    int64_t p = 1, w = 1;
    int odo[4] = {0, 0, 0, 0};
    for (int k = 0; k < 4; k++) p *= R[k];
    for (int k = 0; k < 4; k++, w *= R[k - 1])
      CHECK(mr_weight(R, k) == w, "list %zu weight %d: %lld", l, k, (long long)mr_weight(R, k));
    for (int64_t r = 0; r < p; r++) {
      int64_t back = 0;
      for (int k = 0; k < 4; k++) {
        CHECK(mr_digit(r, R, k) == odo[k], "list %zu rank %lld digit %d", l, (long long)r, k);
        back += mr_digit(r, R, k) * mr_weight(R, k);
      }
      CHECK(back == r, "list %zu rank %lld rebuilt as %lld", l, (long long)r, (long long)back);
      for (int k = 0; k < 4 && ++odo[k] == R[k]; k++) odo[k] = 0; /* next rank */
    }
  }
}

/* base_digit by repeated division; base_ndigits as the least d with b^d >= n. */
static void test_base_digits(void) {
  for (int b = 2; b <= 9; b++)
    for (int64_t i = 0; i < 3000; i += 7) {
      int64_t q = i;
      for (int x = 0; x < 8; x++, q /= b)
        CHECK(base_digit(i, b, x) == q % b, "digit %d of %lld base %d", x, (long long)i, b);
    }
  for (int b = 2; b <= 9; b++)
    for (int64_t n = 0; n <= 5000; n++) {
      int d = 0;
      for (int64_t pw = 1; pw < n; pw *= b) d++;
      CHECK(base_ndigits(n, b) == d, "ndigits(%lld, %d) = %d, want %d", (long long)n, b,
            base_ndigits(n, b), d);
    }
  CHECK(base_ndigits(2147483647, 2) == 31, "ndigits(2^31-1, 2)");
  CHECK(base_ndigits((int64_t)1 << 31, 2) == 31, "ndigits(2^31, 2)");
}

/* mod_pos(a, n) is the m in [0, n) with n | a - m. */
static void test_mod_pos(void) {
  for (int64_t n = 1; n <= 40; n++)
    for (int64_t a = -200; a <= 200; a++) {
      int64_t m = mod_pos(a, n);
      CHECK(m >= 0 && m < n && (a - m) % n == 0, "mod_pos(%lld, %lld) = %lld", (long long)a,
            (long long)n, (long long)m);
    }
}

/* Run all groups; exit status 0 if every check passed. */
int main(void) {
  test_mixed_radix();
  test_base_digits();
  test_mod_pos();
  return unit_summary("patterns");
}
