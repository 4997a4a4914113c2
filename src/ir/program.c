/* program.c - the program builder: append instructions with a sticky error,
 * then check the whole program once in prog_finalize. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir.h"

static const struct {
  const char *name;
  int flags;
  const char *doc;
} ops_table[] = {
#define COLLC_OP_ROW(name, flags, doc) {#name, flags, doc},
    COLLC_OPS(COLLC_OP_ROW)
#undef COLLC_OP_ROW
};

const char *ops_name(int op) {
  return op >= 0 && op < COLLC_OP_COUNT ? ops_table[op].name : NULL;
}

int ops_flags(int op) {
  return op >= 0 && op < COLLC_OP_COUNT ? ops_table[op].flags : 0;
}

const char *ops_doc(int op) {
  return op >= 0 && op < COLLC_OP_COUNT ? ops_table[op].doc : NULL;
}

const char *buf_name(int buf) {
  static const char *const names[BUF_COUNT] = {"-", "SEND", "RECV", "TMP", "SHM"};
  return buf >= 0 && buf < BUF_COUNT ? names[buf] : "?";
}

collc_prog *prog_new(const collc_spec *spec) {
  collc_prog *P = calloc(1, sizeof *P);
  if (!P) return NULL;
  P->spec = *spec;
  size_t len = (size_t)spec_vec_len(spec), n = len * sizeof(int64_t); /* its own copies */
  size_t at = spec->vall ? (size_t)spec->rank * len : 0;               /* (of its rank's) */
  if (spec->counts && !(P->own_counts = malloc(n))) goto fail;
  if (spec->displs && !(P->own_displs = malloc(n))) goto fail;
  if (spec->counts) P->spec.counts = memcpy(P->own_counts, spec->counts + at, n);
  if (spec->displs) P->spec.displs = memcpy(P->own_displs, spec->displs + at, n);
  P->spec.vall = 0;
  return P;
fail:
  prog_free(P);
  return NULL;
}

void prog_free(collc_prog *P) {
  if (!P) return;
  free(P->ins);
  free(P->shapes);
  free(P->pool);
  free(P->groups);
  free(P->own_counts);
  free(P->own_displs);
  free(P);
}

void prog_fail(collc_prog *P, int err, const char *fmt, ...) {
  if (P->err) return;
  P->err = err;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(P->errmsg, sizeof P->errmsg, fmt, ap);
  va_end(ap);
}

collc_spec spec_rank(const collc_spec *s, int r) {
  const coll_desc *d = coll_desc_of(s->coll);
  collc_spec t = *s;
  t.rank = r;
  if (d && d->in_place_at_root && r != t.root) t.in_place = 0;
  if (d && d->always_in_place) t.in_place = 1;
  return t;
}

int coll_counts_shared(const collc_spec *s) {
  const coll_desc *d = coll_desc_of(s->coll);
  return d && !(d->root_counts && !s->agreed) && !(d->counts_local && !s->vall);
}

int64_t prog_buf_units(const collc_prog *P, int buf) {
  const collc_spec *s = &P->spec;
  const coll_desc *d = coll_desc_of(s->coll); /* (NULL: prog_finalize fails) */
  switch (buf) {
  case BUF_SEND: return !d || s->in_place || d->always_in_place ? 0 : d->input_units(s);
  case BUF_RECV: return d ? d->output_units(s) : 0;
  case BUF_TMP: return P->tmp_units;
  case BUF_SHM: return P->shm_units;
  default: return 0;
  }
}

int prog_reserve(collc_prog *P, void **arr, int64_t *cap, int64_t need, size_t elem,
                 const char *what) {
  if (P->err) return -1;
  if (need <= *cap) return 0;
  int64_t n = *cap ? *cap : 8;
  while (n < need) n *= 2;
  void *a = realloc(*arr, (size_t)n * elem);
  if (!a) {
    prog_fail(P, COLLC_ENOMEM, "out of memory for %s", what);
    return -1;
  }
  *arr = a;
  *cap = n;
  return 0;
}

/* Append one instruction; returns it (zeroed) or NULL after a failure. */
static collc_instr *append(collc_prog *P, int op) {
  if (prog_reserve(P, (void **)&P->ins, &P->cap_ins, P->nins + 1, sizeof *P->ins,
                   "instructions"))
    return NULL;
  collc_instr *I = &P->ins[P->nins++];
  memset(I, 0, sizeof *I);
  I->op = (uint8_t)op;
  return I;
}

/* Next free request slot for a posting instruction. */
static int take_slot(collc_prog *P) {
  int s = P->open_hi++;
  if (P->open_hi > P->nslots) P->nslots = P->open_hi;
  return s;
}

/* Operand o of the current view in P's own buffers. */
static collc_opnd vmap(const collc_prog *P, collc_opnd o) {
  if (P->view && o.buf > BUF_NONE && o.buf < BUF_COUNT) {
    o.off += P->view->off[o.buf];
    o.buf = P->view->map[o.buf];
  }
  return o;
}

static void post(collc_prog *P, int op, int peer, collc_opnd src, collc_opnd dst) {
  if (peer < 0 || peer >= P->spec.p || peer == P->spec.rank) {
    prog_fail(P, COLLC_EINVAL, "%s peer %d invalid on rank %d of %d",
              ops_name(op), peer, P->spec.rank, P->spec.p);
    return;
  }
  collc_instr *I = append(P, op);
  if (!I) return;
  I->peer = P->view ? P->view->rank[peer] : peer;
  I->slot = take_slot(P);
  I->src = vmap(P, src);
  I->dst = vmap(P, dst);
}

void prog_send(collc_prog *P, int peer, collc_opnd src) {
  post(P, COLLC_OP_SEND, peer, src, opnd(BUF_NONE, 0, 0));
}

void prog_recv(collc_prog *P, int peer, collc_opnd dst) {
  post(P, COLLC_OP_RECV, peer, opnd(BUF_NONE, 0, 0), dst);
}

void prog_wait(collc_prog *P) {
  if (P->open_hi == P->open_lo) return;
  collc_instr *I = append(P, COLLC_OP_WAIT);
  if (!I) return;
  I->slot = P->open_lo;
  I->n = P->open_hi - P->open_lo;
  P->open_lo = P->open_hi = 0;
}

/* A local instruction op (COPY, REDUCE, COMBINE) over view operands. */
static void local(collc_prog *P, int op, collc_opnd src, collc_opnd src2, collc_opnd dst) {
  collc_instr *I = append(P, op);
  if (!I) return;
  I->src = vmap(P, src);
  I->src2 = vmap(P, src2);
  I->dst = vmap(P, dst);
}

void prog_copy(collc_prog *P, collc_opnd src, collc_opnd dst) {
  local(P, COLLC_OP_COPY, src, opnd(BUF_NONE, 0, 0), dst);
}

void prog_reduce(collc_prog *P, collc_opnd src, collc_opnd dst) {
  local(P, COLLC_OP_REDUCE, src, opnd(BUF_NONE, 0, 0), dst);
}

void prog_combine(collc_prog *P, collc_opnd src, collc_opnd src2, collc_opnd dst) {
  local(P, COLLC_OP_COMBINE, src, src2, dst);
}

void prog_signal(collc_prog *P, int64_t n) {
  collc_instr *I = P->view ? NULL : append(P, COLLC_OP_SIGNAL);
  if (P->view) prog_fail(P, COLLC_EINVAL, "SIGNAL inside a view");
  if (I) I->n = n;
}

void prog_await(collc_prog *P, int peer, int64_t n) {
  collc_instr *I = P->view ? NULL : append(P, COLLC_OP_AWAIT);
  if (P->view) prog_fail(P, COLLC_EINVAL, "AWAIT inside a view");
  if (I) I->peer = peer, I->n = n;
}

void prog_offer(collc_prog *P, collc_opnd src, collc_opnd slot) {
  if (P->view) prog_fail(P, COLLC_EINVAL, "OFFER inside a view");
  else local(P, COLLC_OP_OFFER, src, opnd(BUF_NONE, 0, 0), slot);
}

void prog_get(collc_prog *P, int peer, collc_opnd src, collc_opnd slot, collc_opnd dst) {
  collc_instr *I = P->view ? NULL : append(P, COLLC_OP_GET);
  if (P->view) prog_fail(P, COLLC_EINVAL, "GET inside a view");
  if (I) I->peer = peer, I->src = src, I->src2 = slot, I->dst = dst;
}

void prog_view_push(collc_prog *P, prog_view *v, const collc_spec *sub) {
  if (P->view) {
    prog_fail(P, COLLC_EINVAL, "views do not nest");
    return;
  }
  v->outer = P->spec;
  P->spec = *sub;
  P->view = v;
}

void prog_view_pop(collc_prog *P) {
  if (!P->view) return;
  P->spec = P->view->outer;
  P->view = NULL;
}

void prog_alltoall(collc_prog *P, int group, collc_opnd src, collc_opnd dst,
                   int64_t stride) {
  if (P->view) {
    prog_fail(P, COLLC_EINVAL, "ALLTOALL inside a view");
    return;
  }
  if (group < 0 || group >= P->ngroups) {
    prog_fail(P, COLLC_EINVAL, "ALLTOALL on unknown group %d", group);
    return;
  }
  collc_instr *I = append(P, COLLC_OP_ALLTOALL);
  if (!I) return;
  I->peer = group;
  I->slot = take_slot(P);
  I->n = stride;
  I->src = src;
  I->dst = dst;
  prog_wait(P);
}

int prog_group(collc_prog *P, int n, int base, int stride) {
  if (P->view) prog_fail(P, COLLC_EINVAL, "groups inside a view");
  if (P->err) return -1;
  for (int g = 0; g < P->ngroups; g++)
    if (P->groups[g].n == n && P->groups[g].base == base && P->groups[g].stride == stride)
      return g;
  if (n < 1 || base < 0 || stride < 1 || base + (int64_t)(n - 1) * stride >= P->spec.p) {
    prog_fail(P, COLLC_EINVAL, "group n=%d base=%d stride=%d outside p=%d", n, base,
              stride, P->spec.p);
    return -1;
  }
  if (prog_reserve(P, (void **)&P->groups, &P->cap_groups, P->ngroups + 1,
                   sizeof *P->groups, "groups"))
    return -1;
  P->groups[P->ngroups] = (collc_group){n, base, stride};
  return P->ngroups++;
}

void prog_need_tmp(collc_prog *P, int64_t units) {
  if (P->view) units += P->view->off[BUF_TMP];
  if (units > P->tmp_units) P->tmp_units = units;
}

void prog_need_shm(collc_prog *P, int64_t units) {
  if (units > P->shm_units) P->shm_units = units;
}

/* SIGNAL/AWAIT operands: step values in range, AWAIT peers on this node. */
static void check_sync(collc_prog *P, int addr, const collc_instr *I) {
  const collc_layout *L = P->spec.layout;
  int me = P->spec.rank;
  if (I->op == COLLC_OP_SIGNAL && (I->n < 1 || I->n > STEP_DONE))
    prog_fail(P, COLLC_EINVAL, "addr %d: SIGNAL step %lld out of 1..%d", addr, (long long)I->n,
              STEP_DONE);
  if (!P->shm_units)
    prog_fail(P, COLLC_EINVAL, "addr %d: %s in a program without a node segment", addr,
              ops_name(I->op));
  if (I->op != COLLC_OP_AWAIT) return;
  if (I->n < 0 || I->n > STEP_DONE)
    prog_fail(P, COLLC_EINVAL, "addr %d: AWAIT step %lld out of 0..%d", addr, (long long)I->n,
              STEP_DONE);
  else if (!L || L->p != P->spec.p || I->peer < 0 || I->peer >= P->spec.p || I->peer == me ||
           L->node_of[I->peer] != L->node_of[me])
    prog_fail(P, COLLC_EINVAL, "addr %d: AWAIT on rank %d, not another rank of this node", addr,
              I->peer);
}

/* Check that operand o of instruction at addr lies inside its buffer; for a
 * group instruction all members' parts (span units apart) must. */
static void check_opnd(collc_prog *P, int addr, collc_opnd o, int64_t span, const char *which) {
  if (o.buf <= BUF_NONE || o.buf >= BUF_COUNT || o.shape < 0 || o.shape >= P->nshapes) {
    prog_fail(P, COLLC_EINVAL, "addr %d: bad %s operand", addr, which);
    return;
  }
  const collc_shape *S = &P->shapes[o.shape];
  int64_t lo, hi;
  int ovf = __builtin_add_overflow(o.off, S->lo, &lo);
  ovf |= __builtin_add_overflow(o.off, span, &hi);
  ovf |= __builtin_add_overflow(hi, S->hi, &hi);
  if (S->nunits > 0 && (ovf || lo < 0 || hi > prog_buf_units(P, o.buf)))
    prog_fail(P, COLLC_EINVAL, "addr %d: %s %s+%lld out of bounds (%lld units)", addr,
              which, buf_name(o.buf), (long long)o.off,
              (long long)prog_buf_units(P, o.buf));
}

/* Operand checks of one instruction, driven by its opcode flags. */
static void check_instr(collc_prog *P, int addr) {
  const collc_instr *I = &P->ins[addr];
  int f = ops_flags(I->op);
  if (f & OPF_SYNC) {
    check_sync(P, addr, I);
    return;
  }
  if (I->op >= COLLC_OP_COUNT) {
    prog_fail(P, COLLC_EINVAL, "addr %d: unknown opcode %d", addr, I->op);
    return;
  }
  if ((f & OPF_READS) && I->src.buf == BUF_SEND && P->spec.in_place && !(f & OPF_REMOTE))
    prog_fail(P, COLLC_EINVAL, "addr %d: reads SEND of an in-place call", addr);
  if ((f & OPF_REMOTE) && (I->peer < 0 || I->peer >= P->spec.p || I->peer == P->spec.rank ||
                           I->src.buf == BUF_SHM || I->src2.buf != BUF_SHM))
    prog_fail(P, COLLC_EINVAL, "addr %d: GET needs another rank's buffer and a slot", addr);
  if (I->op == COLLC_OP_OFFER && (I->src.buf == BUF_SHM || I->dst.buf != BUF_SHM))
    prog_fail(P, COLLC_EINVAL, "addr %d: OFFER needs a buffer and a slot", addr);
  if ((f & OPF_WRITES) && I->dst.buf == BUF_SEND)
    prog_fail(P, COLLC_EINVAL, "addr %d: writes SEND, the send buffer", addr);
  if ((f & OPF_READS2) && I->src2.buf == BUF_SEND && P->spec.in_place)
    prog_fail(P, COLLC_EINVAL, "addr %d: reads SEND of an in-place call", addr);
  int64_t span = 0;
  if ((f & OPF_GROUP) && I->peer >= 0 && I->peer < P->ngroups &&
      __builtin_mul_overflow((int64_t)P->groups[I->peer].n - 1, I->n, &span)) /* last part */
    span = INT64_MAX;
  if ((f & OPF_READS) && !(f & OPF_REMOTE)) check_opnd(P, addr, I->src, span, "src");
  if ((f & OPF_REMOTE) && (I->src.shape < 0 || I->src.shape >= P->nshapes)) /* (bounds: the
      peer's buffers, which the verifier checks) */
    prog_fail(P, COLLC_EINVAL, "addr %d: bad src operand", addr);
  if (f & OPF_READS2) check_opnd(P, addr, I->src2, 0, "src2");
  if (f & OPF_WRITES) check_opnd(P, addr, I->dst, span, "dst");
  if (P->err) return;
  if ((f & OPF_READS2) && opnd_units(P, I->src) != opnd_units(P, I->src2))
    prog_fail(P, COLLC_EINVAL, "addr %d: src has %lld units, src2 %lld", addr,
              (long long)opnd_units(P, I->src), (long long)opnd_units(P, I->src2));
  if ((f & OPF_READS) && (f & OPF_WRITES) &&
      opnd_units(P, I->src) != opnd_units(P, I->dst))
    prog_fail(P, COLLC_EINVAL, "addr %d: src has %lld units, dst %lld", addr,
              (long long)opnd_units(P, I->src), (long long)opnd_units(P, I->dst));
}

/* Every posted slot must be waited exactly once before it is reused. */
static void check_slots(collc_prog *P) {
  char *busy = calloc((size_t)P->nslots + 1, 1);
  if (!busy) {
    prog_fail(P, COLLC_ENOMEM, "out of memory in finalize");
    return;
  }
  for (int a = 0; a < P->nins && !P->err; a++) {
    const collc_instr *I = &P->ins[a];
    int f = ops_flags(I->op);
    if (f & OPF_POSTS) {
      if (I->slot < 0 || I->slot >= P->nslots || busy[I->slot])
        prog_fail(P, COLLC_EINVAL, "addr %d: slot %d reused while in flight", a, I->slot);
      else
        busy[I->slot] = 1;
    }
    if (f & OPF_WAITS)
      for (int64_t s = I->slot; s < I->slot + I->n && !P->err; s++) {
        if (s < 0 || s >= P->nslots || !busy[s])
          prog_fail(P, COLLC_EINVAL, "addr %d: waits on idle slot %lld", a, (long long)s);
        else
          busy[s] = 0;
      }
  }
  for (int s = 0; s < P->nslots && !P->err; s++)
    if (busy[s]) prog_fail(P, COLLC_EINVAL, "slot %d never waited", s);
  free(busy);
}

int prog_finalize(collc_prog *P) {
  prog_wait(P);
  if (!coll_desc_of(P->spec.coll))
    prog_fail(P, COLLC_EINVAL, "unknown collective %d", P->spec.coll);
  if (P->view) prog_fail(P, COLLC_EINVAL, "a view is still pushed");
  if (P->shm_units && (!P->spec.layout || P->spec.layout->p != P->spec.p))
    prog_fail(P, COLLC_EINVAL, "uses the node segment without a node layout");
  for (int a = 0; a < P->nins && !P->err; a++) check_instr(P, a);
  if (!P->err) check_slots(P);
  return P->err;
}
