/* wisdom.c - the wisdom file format and its loader (see wisdom.h).
 *
 * Layout (all integers int64 little-endian; text fields NUL-padded):
 *   "COLLCWIS" | format | library version [16] | coll p rank count
 *   unit_bytes in_place root commutative | algo [96] | layout [64] |
 *   nins nshapes npool ngroups nslots tmp_units shm_units | payload length |
 *   payload CRC | header CRC (of everything before it) || payload:
 *   groups (n base stride) | shapes (kind nlev run data nunits lo hi nruns) |
 *   pool | instructions (op peer slot n, then src, src2, dst as buf shape off)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "wisdom.h"
#include "collc_version.h"

#define MAGIC "COLLCWIS"
enum { LIBLEN = 16, ALGOLEN = 96, LAYOUTLEN = 64 };
#define NSIZES 7
#define HEADER_BYTES (8 + 8 + LIBLEN + 8 * 8 + ALGOLEN + LAYOUTLEN + NSIZES * 8 + 3 * 8)
#define MAX_ITEMS (1 << 24)  /* instructions, shapes, groups */
#define MAX_FILE (1u << 30)

/* ---- encoding ---- */

typedef struct {
  unsigned char *b;
  size_t n, cap;
  int err;
} wbuf;

static void put(wbuf *w, const void *p, size_t n) {
  if (w->err) return;
  if (w->n + n > w->cap) {
    size_t cap = w->cap ? 2 * w->cap : 4096;
    while (cap < w->n + n) cap *= 2;
    unsigned char *b = realloc(w->b, cap);
    if (!b) {
      w->err = 1;
      return;
    }
    w->b = b, w->cap = cap;
  }
  if (n) memcpy(w->b + w->n, p, n);
  w->n += n;
}

static void put_i64(wbuf *w, int64_t v) {
  unsigned char x[8];
  for (int i = 0; i < 8; i++) x[i] = (unsigned char)((uint64_t)v >> (8 * i));
  put(w, x, 8);
}

/* A text field of len bytes (truncated, NUL-padded). */
static void put_text(wbuf *w, const char *s, size_t len) {
  char f[128] = {0};
  snprintf(f, len, "%s", s);
  put(w, f, len);
}

static void put_opnd(wbuf *w, collc_opnd o) {
  put_i64(w, o.buf), put_i64(w, o.shape), put_i64(w, o.off);
}

static void put_payload(wbuf *w, const collc_prog *P) {
  for (int g = 0; g < P->ngroups; g++)
    put_i64(w, P->groups[g].n), put_i64(w, P->groups[g].base), put_i64(w, P->groups[g].stride);
  for (int i = 0; i < P->nshapes; i++) {
    const collc_shape *S = &P->shapes[i];
    int64_t v[8] = {S->kind, S->nlev, S->run, S->data, S->nunits, S->lo, S->hi, S->nruns};
    for (int k = 0; k < 8; k++) put_i64(w, v[k]);
  }
  for (int64_t i = 0; i < P->npool; i++) put_i64(w, P->pool[i]);
  for (int a = 0; a < P->nins; a++) {
    const collc_instr *I = &P->ins[a];
    put_i64(w, I->op), put_i64(w, I->peer), put_i64(w, I->slot), put_i64(w, I->n);
    put_opnd(w, I->src), put_opnd(w, I->src2), put_opnd(w, I->dst);
  }
}

int wisdom_encode(const collc_prog *P, const char *layout, unsigned char **buf, size_t *len) {
  wbuf h = {0}, p = {0};
  const collc_spec *s = &P->spec;
  put_payload(&p, P);
  put(&h, MAGIC, 8);
  put_i64(&h, WISDOM_FORMAT);
  put_text(&h, COLLC_VERSION, LIBLEN);
  int64_t key[8] = {s->coll, s->p, s->rank, s->count, s->unit_bytes, s->in_place, s->root,
                    s->commutative};
  for (int k = 0; k < 8; k++) put_i64(&h, key[k]);
  put_text(&h, P->algo, ALGOLEN);
  put_text(&h, layout, LAYOUTLEN);
  int64_t sz[NSIZES] = {P->nins, P->nshapes, P->npool, P->ngroups, P->nslots, P->tmp_units,
                        P->shm_units};
  for (int k = 0; k < NSIZES; k++) put_i64(&h, sz[k]);
  put_i64(&h, (int64_t)p.n);
  put_i64(&h, (int64_t)crc32(0, p.b, (uInt)p.n));
  put_i64(&h, (int64_t)crc32(0, h.b, (uInt)h.n));
  put(&h, p.b, p.n);
  free(p.b);
  if (h.err || p.err) {
    free(h.b);
    return -1;
  }
  *buf = h.b, *len = h.n;
  return 0;
}

/* ---- decoding ---- */

typedef struct {
  const unsigned char *b;
  size_t n, at;
} rbuf;

static int64_t get_i64(rbuf *r) {
  uint64_t v = 0;
  if (r->at + 8 > r->n) return r->at = r->n + 1, 0; /* (overrun: checked by callers) */
  for (int i = 0; i < 8; i++) v |= (uint64_t)r->b[r->at + (size_t)i] << (8 * i);
  r->at += 8;
  return (int64_t)v;
}

static collc_opnd get_opnd(rbuf *r) {
  collc_opnd o;
  int64_t buf = get_i64(r), shape = get_i64(r);
  o.buf = buf >= 0 && buf < BUF_COUNT ? (int32_t)buf : -1;
  o.shape = shape >= -1 && shape < MAX_ITEMS ? (int32_t)shape : -2;
  o.off = get_i64(r);
  return o;
}

/* The header, as read. */
typedef struct {
  char lib[LIBLEN], algo[ALGOLEN], layout[LAYOUTLEN];
  int64_t format, key[8], nins, nshapes, npool, ngroups, nslots, tmp_units, shm_units, plen, pcrc,
      hcrc;
} header;

static int get_text(rbuf *r, char *out, size_t len) {
  if (r->at + len > r->n) return -1;
  memcpy(out, r->b + r->at, len);
  r->at += len;
  return out[len - 1] == 0 ? 0 : -1; /* must be terminated */
}

/* Read and check the header's form (not the key); 0, or -1 with why. */
static int read_header(rbuf *r, header *H, int check_crc, char *why, size_t wlen) {
  if (r->n < HEADER_BYTES || memcmp(r->b, MAGIC, 8))
    return snprintf(why, wlen, "not a wisdom file (or truncated)"), -1;
  r->at = 8;
  H->format = get_i64(r);
  if (H->format != WISDOM_FORMAT)
    return snprintf(why, wlen, "format %lld, not %d", (long long)H->format, WISDOM_FORMAT), -1;
  int bad = get_text(r, H->lib, LIBLEN);
  for (int k = 0; k < 8; k++) H->key[k] = get_i64(r);
  bad |= get_text(r, H->algo, ALGOLEN) | get_text(r, H->layout, LAYOUTLEN);
  int64_t *sz[NSIZES] = {&H->nins,   &H->nshapes,   &H->npool,    &H->ngroups,
                         &H->nslots, &H->tmp_units, &H->shm_units};
  for (int k = 0; k < NSIZES; k++) *sz[k] = get_i64(r);
  H->plen = get_i64(r), H->pcrc = get_i64(r);
  size_t hbytes = r->at;
  H->hcrc = get_i64(r);
  if (bad) return snprintf(why, wlen, "damaged header text"), -1;
  if (check_crc && (uint64_t)H->hcrc != crc32(0, r->b, (uInt)hbytes))
    return snprintf(why, wlen, "header checksum mismatch"), -1;
  if (strcmp(H->lib, COLLC_VERSION))
    return snprintf(why, wlen, "written by collc %s, this is %s", H->lib, COLLC_VERSION), -1;
  return 0;
}

/* Check the sizes against each other and the image; 0 or -1 with why. */
static int check_sizes(const rbuf *r, const header *H, int check_crc, char *why, size_t wlen) {
  if (H->nins < 0 || H->nins > MAX_ITEMS || H->nshapes < 0 || H->nshapes > MAX_ITEMS ||
      H->npool < 0 || H->npool > MAX_ITEMS || H->ngroups < 0 || H->ngroups > 64 ||
      H->nslots < 0 || H->nslots > H->nins || H->tmp_units < 0 || H->tmp_units > ((int64_t)1 << 48) ||
      H->shm_units < 0 || H->shm_units > ((int64_t)1 << 48))
    return snprintf(why, wlen, "sizes out of range"), -1;
  int64_t want = 8 * (3 * H->ngroups + 8 * H->nshapes + H->npool + 13 * H->nins);
  if (H->plen != want || (uint64_t)H->plen != r->n - r->at)
    return snprintf(why, wlen, "truncated or padded payload"), -1;
  if (check_crc && (uint64_t)H->pcrc != crc32(0, r->b + r->at, (uInt)H->plen))
    return snprintf(why, wlen, "payload checksum mismatch"), -1;
  return 0;
}

/* 1 if header H carries key. */
static int key_matches(const header *H, const wisdom_key *k) {
  const collc_spec *s = &k->spec;
  int64_t want[8] = {s->coll, s->p, s->rank, s->count, s->unit_bytes, s->in_place, s->root,
                     s->commutative};
  return !memcmp(want, H->key, sizeof want) && !strcmp(H->algo, k->algo) &&
         !strcmp(H->layout, k->layout);
}

/* The spec in H's key (node layout: the key's, else none); 0, or -1 if
 * it cannot be one. */
static int spec_of(const header *H, const wisdom_key *key, collc_spec *s) {
  const int64_t *k = H->key;
  if (k[0] < 0 || k[0] >= COLLC_COLL_COUNT || k[1] < 1 || k[1] > (1 << 24) || k[2] < 0 ||
      k[2] >= k[1] || k[3] < 0 || k[3] > INT32_MAX || k[4] < 0 || k[4] > ((int64_t)1 << 40) || k[5] < 0 || k[5] > 1 || k[6] < 0 || k[6] >= k[1] ||
      k[7] < 0 || k[7] > 1 || coll_desc_of((int)k[0])->counted) /* (no counts in the format) */
    return -1;
  *s = (collc_spec){(int)k[0], (int)k[1], (int)k[2], k[3],      k[4],
                    (int)k[5], (int)k[6], (int)k[7], key ? key->spec.layout : NULL, NULL, NULL, 0, 0};
  return 0;
}

/* The file's program text, split into arrays (owned by the caller). */
typedef struct {
  collc_group *groups;
  collc_shape *shapes;
  int64_t *pool;
  collc_instr *ins;
} parts;

static void parts_free(parts *q) { free(q->groups), free(q->shapes), free(q->pool), free(q->ins); }

/* Read the payload into q; 0 or -1 (out of memory). */
static int read_parts(rbuf *r, const header *H, parts *q) {
  q->groups = calloc((size_t)H->ngroups + 1, sizeof *q->groups);
  q->shapes = calloc((size_t)H->nshapes + 1, sizeof *q->shapes);
  q->pool = calloc((size_t)H->npool + 1, sizeof *q->pool);
  q->ins = calloc((size_t)H->nins + 1, sizeof *q->ins);
  if (!q->groups || !q->shapes || !q->pool || !q->ins) return -1;
  for (int g = 0; g < H->ngroups; g++) {
    int64_t v[3];
    for (int k = 0; k < 3; k++) v[k] = get_i64(r);
    q->groups[g] = (collc_group){(int)v[0], (int)v[1], (int)v[2]};
    if (v[0] != q->groups[g].n || v[1] != q->groups[g].base || v[2] != q->groups[g].stride)
      q->groups[g].n = -1; /* rejected by the rebuild */
  }
  for (int i = 0; i < H->nshapes; i++) {
    int64_t v[8];
    for (int k = 0; k < 8; k++) v[k] = get_i64(r);
    q->shapes[i] = (collc_shape){(int32_t)v[0], (int32_t)v[1], v[2], v[3], v[4], v[5], v[6], v[7]};
    if (v[0] != q->shapes[i].kind || v[1] != q->shapes[i].nlev) q->shapes[i].kind = -1;
  }
  for (int64_t i = 0; i < H->npool; i++) q->pool[i] = get_i64(r);
  for (int a = 0; a < H->nins; a++) {
    collc_instr *I = &q->ins[a];
    int64_t op = get_i64(r), peer = get_i64(r), slot = get_i64(r);
    I->op = op >= 0 && op < 256 ? (uint8_t)op : 255;
    I->peer = peer >= INT32_MIN && peer <= INT32_MAX ? (int32_t)peer : -1;
    I->slot = slot >= INT32_MIN && slot <= INT32_MAX ? (int32_t)slot : -1;
    I->n = get_i64(r);
    I->src = get_opnd(r), I->src2 = get_opnd(r), I->dst = get_opnd(r);
  }
  return r->at == r->n ? 0 : -1;
}

/* 1 if every number of q is within +-2^40 (so that the builder's sums of
 * two never overflow; its products are checked there). */
static int values_sane(const parts *q, const header *H) {
  const int64_t lim = (int64_t)1 << 40;
#define SANE(v) ((v) >= -lim && (v) <= lim)
  for (int64_t i = 0; i < H->npool; i++)
    if (!SANE(q->pool[i])) return 0;
  for (int i = 0; i < H->nshapes; i++) {
    const collc_shape *S = &q->shapes[i];
    if (!SANE(S->run) || !SANE(S->data) || !SANE(S->nunits) || !SANE(S->lo) || !SANE(S->hi))
      return 0;
  }
  for (int a = 0; a < H->nins; a++) {
    const collc_instr *I = &q->ins[a];
    if (!SANE(I->n) || !SANE(I->src.off) || !SANE(I->src2.off) || !SANE(I->dst.off)) return 0;
  }
#undef SANE
  return 1;
}

/* Re-intern shape i of q into P; 0 if it gets id i, else -1. */
static int rebuild_shape(collc_prog *P, const parts *q, const header *H, int i) {
  const collc_shape *S = &q->shapes[i];
  int64_t a[COLLC_MAXLEV], b[COLLC_MAXLEV], *off, *len;
  if (S->nlev < 0 || S->data < 0 || S->data > H->npool || S->nlev > (H->npool - S->data) / 2)
    return -1;
  const int64_t *d = q->pool + S->data;
  if (S->kind == SHAPE_STRIDED) {
    if (S->nlev > COLLC_MAXLEV) return -1;
    for (int l = 0; l < S->nlev; l++) a[l] = d[2 * l], b[l] = d[2 * l + 1];
    return prog_shape_strided(P, S->run, S->nlev, a, b) == i ? 0 : -1;
  }
  if (S->kind != SHAPE_INDEXED || S->nlev < 2) return -1;
  off = malloc(2 * (size_t)S->nlev * sizeof *off);
  if (!off) return -1;
  len = off + S->nlev;
  for (int k = 0; k < S->nlev; k++) off[k] = d[2 * k], len[k] = d[2 * k + 1];
  collc_opnd o = prog_opnd_runs(P, BUF_RECV, S->nlev, off, len);
  free(off);
  return o.shape == i && o.off == 0 ? 0 : -1;
}

/* Replay handlers, one per opcode (the table below): instruction I through
 * the builder; 0, or -1 when the builder never emits it. */
typedef int (*rebuild_fn)(collc_prog *P, const collc_instr *I);

static int rebuild_NOP(collc_prog *P, const collc_instr *I) {
  (void)P, (void)I;
  return -1;
}

static int rebuild_SEND(collc_prog *P, const collc_instr *I) {
  return prog_send(P, I->peer, I->src), 0;
}
static int rebuild_RECV(collc_prog *P, const collc_instr *I) {
  return prog_recv(P, I->peer, I->dst), 0;
}
static int rebuild_WAIT(collc_prog *P, const collc_instr *I) {
  return (void)I, prog_wait(P), 0;
}
static int rebuild_COPY(collc_prog *P, const collc_instr *I) {
  return prog_copy(P, I->src, I->dst), 0;
}
static int rebuild_REDUCE(collc_prog *P, const collc_instr *I) {
  return prog_reduce(P, I->src, I->dst), 0;
}
static int rebuild_COMBINE(collc_prog *P, const collc_instr *I) {
  return prog_combine(P, I->src, I->src2, I->dst), 0;
}
static int rebuild_ALLTOALL(collc_prog *P, const collc_instr *I) {
  return prog_alltoall(P, I->peer, I->src, I->dst, I->n), 0;
}
static int rebuild_SIGNAL(collc_prog *P, const collc_instr *I) {
  return prog_signal(P, I->n), 0;
}
static int rebuild_AWAIT(collc_prog *P, const collc_instr *I) {
  return prog_await(P, I->peer, I->n), 0;
}
static int rebuild_OFFER(collc_prog *P, const collc_instr *I) {
  return prog_offer(P, I->src, I->dst), 0;
}
/* (GET: its remote reads are bounded at run time by the owner's sizes.) */
static int rebuild_GET(collc_prog *P, const collc_instr *I) {
  return prog_get(P, I->peer, I->src, I->src2, I->dst), 0;
}

/* The handler of every opcode: a missing rebuild_<NAME> does not compile. */
static const rebuild_fn rebuild_op[COLLC_OP_COUNT] = {
#define REBUILD_ENTRY(name, flags, doc) [COLLC_OP_##name] = rebuild_##name,
    COLLC_OPS(REBUILD_ENTRY)
#undef REBUILD_ENTRY
};

/* Replay instruction I through the builder; 0 or -1 (not one it emits). */
static int rebuild_instr(collc_prog *P, const collc_instr *I) {
  return I->op < COLLC_OP_COUNT ? rebuild_op[I->op](P, I) : -1;
}

/* memcmp that allows NULL for n == 0. */
static int same_bytes(const void *a, const void *b, size_t n) { return !n || !memcmp(a, b, n); }

static int opnd_eq(collc_opnd a, collc_opnd b) {
  return a.buf == b.buf && a.shape == b.shape && a.off == b.off;
}

/* 1 if the rebuilt P is exactly the file's program q (sizes in H). */
static int same_program(const collc_prog *P, const parts *q, const header *H) {
  if (P->nins != H->nins || P->nshapes != H->nshapes || P->npool != H->npool ||
      P->ngroups != H->ngroups || P->nslots != H->nslots || P->tmp_units != H->tmp_units ||
      P->shm_units != H->shm_units)
    return 0;
  for (int a = 0; a < P->nins; a++) {
    const collc_instr *x = &P->ins[a], *y = &q->ins[a];
    if (x->op != y->op || x->peer != y->peer || x->slot != y->slot || x->n != y->n ||
        !opnd_eq(x->src, y->src) || !opnd_eq(x->src2, y->src2) || !opnd_eq(x->dst, y->dst))
      return 0;
  }
  return same_bytes(P->shapes, q->shapes, (size_t)P->nshapes * sizeof *P->shapes) &&
         same_bytes(P->pool, q->pool, (size_t)P->npool * sizeof *P->pool) &&
         same_bytes(P->groups, q->groups, (size_t)P->ngroups * sizeof *P->groups);
}

/* Rebuild the file's program for spec s through the builder; NULL with why. */
static collc_prog *rebuild(const collc_spec *s, const header *H, const parts *q, char *why,
                           size_t wlen) {
  collc_prog *P = values_sane(q, H) ? prog_new(s) : NULL;
  int bad = !P;
  if (P) snprintf(P->algo, sizeof P->algo, "%s", H->algo);
  for (int g = 0; g < H->ngroups && !bad; g++)
    bad = prog_group(P, q->groups[g].n, q->groups[g].base, q->groups[g].stride) != g;
  for (int i = 0; i < H->nshapes && !bad; i++) bad = rebuild_shape(P, q, H, i);
  if (!bad) prog_need_tmp(P, H->tmp_units), prog_need_shm(P, H->shm_units);
  for (int a = 0; a < H->nins && !bad && !P->err; a++) bad = rebuild_instr(P, &q->ins[a]);
  if (!bad && !prog_finalize(P) && same_program(P, q, H)) return P;
  snprintf(why, wlen, "inconsistent program%s%s", P && P->errmsg[0] ? ": " : "",
           P ? P->errmsg : "");
  prog_free(P);
  return NULL;
}

collc_prog *wisdom_decode(const unsigned char *buf, size_t len, const wisdom_key *key,
                          int check_crc, char *why, size_t wlen) {
  rbuf r = {buf, len, 0};
  header H;
  collc_spec s;
  parts q = {0};
  collc_prog *P = NULL;
  if (read_header(&r, &H, check_crc, why, wlen) || check_sizes(&r, &H, check_crc, why, wlen))
    return NULL;
  if (key && !key_matches(&H, key)) {
    snprintf(why, wlen, "stale: written for another call, algorithm or layout");
    return NULL;
  }
  if (spec_of(&H, key, &s)) snprintf(why, wlen, "impossible key");
  else if (read_parts(&r, &H, &q)) snprintf(why, wlen, "unreadable payload");
  else P = rebuild(&s, &H, &q, why, wlen);
  parts_free(&q);
  return P;
}

/* ---- files ---- */

/* The file name of key in dir: collective, p and a 64-bit hash of the rest. */
static void file_name(char *out, size_t len, const char *dir, const wisdom_key *k) {
  const collc_spec *s = &k->spec;
  char text[512];
  int n = snprintf(text, sizeof text, "%d %lld %lld %d %d %d %s %s", s->p, (long long)s->count,
                   (long long)s->unit_bytes, s->in_place, s->root, s->commutative, k->algo,
                   k->layout);
  uLong h1 = crc32(0, (const Bytef *)text, (uInt)n), h2 = adler32(1, (const Bytef *)text, (uInt)n);
  snprintf(out, len, "%s/%s-p%d-%08lx%08lx.r%d.cw", dir, coll_name(s->coll), s->p, h1, h2,
           s->rank);
}

collc_prog *wisdom_load(const char *dir, const wisdom_key *key, char *why, size_t wlen) {
  char path[1200];
  why[0] = 0;
  if (key->spec.counts) return NULL; /* counted collectives: never stored (below) */
  file_name(path, sizeof path, dir, key);
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  unsigned char *b = NULL;
  size_t n = 0, cap = 0, got;
  do {
    unsigned char *nb = NULL;
    if (n == cap && (cap >= MAX_FILE || !(nb = realloc(b, cap ? 2 * cap : 65536)))) break;
    if (nb) b = nb, cap = cap ? 2 * cap : 65536;
    got = fread(b + n, 1, cap - n, f);
    n += got;
  } while (got > 0);
  fclose(f);
  collc_prog *P = b ? wisdom_decode(b, n, key, 1, why, wlen) : NULL;
  if (!b) snprintf(why, wlen, "cannot read");
  free(b);
  if (!P) {
    char msg[200];
    snprintf(msg, sizeof msg, "%s", why);
    snprintf(why, wlen, "%.900s: %s", path, msg);
  }
  return P;
}

int wisdom_save(const char *dir, const collc_prog *P, const char *layout) {
  wisdom_key k = {P->spec, P->algo, layout};
  char path[1200], tmp[1300], host[64] = "";
  unsigned char *b;
  size_t n;
  if (P->spec.counts) return 0; /* the format keys no count vectors: not stored */
  if (wisdom_encode(P, layout, &b, &n)) return errno = ENOMEM, -1;
  file_name(path, sizeof path, dir, &k);
  gethostname(host, sizeof host - 1);
  snprintf(tmp, sizeof tmp, "%s.tmp.%.60s.%ld.%p", path, host, (long)getpid(), (void *)b);
  FILE *f = fopen(tmp, "wb");
  int ok = f && fwrite(b, 1, n, f) == n;
  if (f && fclose(f)) ok = 0;
  free(b);
  if (ok && rename(tmp, path) == 0) return 0;
  int e = errno;
  if (f) unlink(tmp);
  errno = e;
  return -1;
}
