/* hot.h - attributes of the cached-call path, which crosses every layer. */
#ifndef COLLC_HOT_H
#define COLLC_HOT_H

/* A function of the cached-call path, inlined into each entry point (where
 * the key's constant fields fold away). */
#define COLLC_HOT static inline __attribute__((always_inline))
/* A variable that path reads: not exported from libcollc.so, so read
 * directly rather than through the global offset table. */
#define COLLC_LOCAL __attribute__((visibility("hidden")))

#endif
