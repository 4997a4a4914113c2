/* dims.h - balanced factorisation of a process count (pure, no MPI). */
#ifndef COLLC_DIMS_H
#define COLLC_DIMS_H

#include <stdint.h>

/* Write into out[0..m-1] m factors of q (q >= 1, m >= 1) whose product is q,
 * non-increasing, with the smallest possible max - min; ties go to the
 * lexicographically smallest sequence. Returns 0. */
int dims_balanced(int64_t q, int m, int out[]);

#endif
