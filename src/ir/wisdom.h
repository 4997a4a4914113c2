/* wisdom.h - compiled programs saved and reloaded across runs
 * (COLLC_WISDOM=<dir>). Pure: no MPI.
 *
 * A wisdom file holds one rank's program under a header: magic, format
 * version, library version, the key (the whole spec: collective, p, rank,
 * count, unit bytes, in-place, root, commutativity; the resolved algorithm
 * text; the node layout), sizes, and CRC-32s (zlib) of header and payload;
 * all integers little-endian 64-bit. Loading trusts nothing: after the
 * checks, the program is rebuilt through the IR builder (groups, shapes,
 * instructions in file order), which must reproduce the file exactly, and
 * passes prog_finalize (operands in bounds, every slot waited). */
#ifndef COLLC_WISDOM_H
#define COLLC_WISDOM_H

#include <stddef.h>
#include "ir.h"

#define WISDOM_FORMAT 2 /* 2: node segment size, SIGNAL/AWAIT */

/* What a wisdom file must match. */
typedef struct {
  collc_spec spec;
  const char *algo;   /* resolved algorithm text, e.g. "recexch:-4,-2,2,4" */
  const char *layout; /* node layout: "flat" or collc_layout.desc (spec.layout) */
} wisdom_key;

/* The file image of P under layout into *buf (malloc'd), *len. 0 or -1. */
int wisdom_encode(const collc_prog *P, const char *layout, unsigned char **buf, size_t *len);
/* The program in image buf[0..len): NULL (why says what) unless it is
 * whole, consistent and for key (NULL: any key; check_crc 0 skips the
 * CRCs: for fuzzing the checks behind them). */
collc_prog *wisdom_decode(const unsigned char *buf, size_t len, const wisdom_key *key,
                          int check_crc, char *why, size_t wlen);

/* The program for key from directory dir: NULL with why "" if there is no
 * file, NULL with why set if it is unusable. */
collc_prog *wisdom_load(const char *dir, const wisdom_key *key, char *why, size_t wlen);
/* Write P's file into dir atomically (temporary file, then rename), so
 * concurrent writers never leave a partial file. 0 or -1 (errno). */
int wisdom_save(const char *dir, const collc_prog *P, const char *layout);

#endif
