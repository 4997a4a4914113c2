/* layout.c - node layouts: renumbering, member lists, description. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "layout.h"

void layout_free(collc_layout *L) {
  if (!L) return;
  free(L->node_of), free(L->local_of), free(L->size), free(L->first), free(L->members);
  free(L);
}

/* Renumber id[] into L->node_of by first appearance; sets nnodes. */
static int renumber(collc_layout *L, const int *id) {
  int p = L->p;
  for (int r = 0; r < p; r++) {
    L->node_of[r] = -1;
    for (int q = 0; q < r; q++)
      if (id[q] == id[r]) {
        L->node_of[r] = L->node_of[q];
        break;
      }
    if (L->node_of[r] < 0) L->node_of[r] = L->nnodes++;
  }
  return 0;
}

/* Sizes, member lists, local indices, summary fields. */
static void index_nodes(collc_layout *L) {
  int p = L->p, at = 0;
  for (int r = 0; r < p; r++) L->size[L->node_of[r]]++;
  L->min_size = p, L->max_size = 0;
  for (int n = 0; n < L->nnodes; n++) {
    L->first[n] = at, at += L->size[n];
    if (L->size[n] < L->min_size) L->min_size = L->size[n];
    if (L->size[n] > L->max_size) L->max_size = L->size[n];
    L->size[n] = 0;
  }
  L->consecutive = 1;
  for (int r = 0; r < p; r++) {
    int n = L->node_of[r];
    L->local_of[r] = L->size[n];
    L->members[L->first[n] + L->size[n]++] = r;
    if (r > 0 && n != L->node_of[r - 1] && n != L->node_of[r - 1] + 1) L->consecutive = 0;
    if (r > 0 && n == L->node_of[r - 1] + 1 && L->local_of[r] != 0) L->consecutive = 0;
  }
}

/* "4x2", "3+2+3" (consecutive, unequal), or "irregular-<hash>". */
static void describe(collc_layout *L) {
  uint64_t h = 1469598103934665603ULL;
  for (int r = 0; r < L->p; r++) h = (h ^ (uint64_t)L->node_of[r]) * 1099511628211ULL;
  L->hash = h;
  if (L->consecutive && L->min_size == L->max_size) {
    snprintf(L->desc, sizeof L->desc, "%dx%d", L->nnodes, L->min_size);
    return;
  }
  if (L->consecutive && L->nnodes <= 8) {
    size_t at = 0;
    for (int n = 0; n < L->nnodes; n++)
      at += (size_t)snprintf(L->desc + at, sizeof L->desc - at, "%s%d", n ? "+" : "", L->size[n]);
    return;
  }
  snprintf(L->desc, sizeof L->desc, "irregular-%016llx", (unsigned long long)h);
}

collc_layout *layout_new(int p, const int *id) {
  if (p < 1 || !id) return NULL;
  collc_layout *L = calloc(1, sizeof *L);
  if (!L) return NULL;
  L->p = p;
  L->node_of = malloc((size_t)p * sizeof(int)), L->local_of = malloc((size_t)p * sizeof(int));
  L->size = calloc((size_t)p, sizeof(int)), L->first = malloc((size_t)p * sizeof(int));
  L->members = malloc((size_t)p * sizeof(int));
  if (!L->node_of || !L->local_of || !L->size || !L->first || !L->members) {
    layout_free(L);
    return NULL;
  }
  renumber(L, id);
  index_nodes(L);
  describe(L);
  return L;
}

collc_layout *layout_regular(int p, int k) {
  if (p < 1 || k < 1) return NULL;
  int *id = malloc((size_t)p * sizeof(int));
  if (!id) return NULL;
  for (int r = 0; r < p; r++) id[r] = r / k;
  collc_layout *L = layout_new(p, id);
  free(id);
  return L;
}

int layout_set_sockets(collc_layout *L, int m) {
  size_t at = strlen(L->desc);
  if (m < 1 || L->min_size != L->max_size || L->min_size % m || L->min_size == m ||
      at + 12 > sizeof L->desc)
    return -1;
  L->socket = m;
  snprintf(L->desc + at, sizeof L->desc - at, "/s%d", m);
  return 0;
}

/* layout_parse without the "/s<m>" suffix, which ends the text at stop. */
static collc_layout *parse_nodes(int p, const char *text, const char *stop);

collc_layout *layout_parse(int p, const char *text) {
  const char *sl = text ? strstr(text, "/s") : NULL;
  collc_layout *L = parse_nodes(p, text, sl ? sl : text ? text + strlen(text) : NULL);
  if (L && sl) {
    char *end;
    long m = strtol(sl + 2, &end, 10);
    if (*end || end == sl + 2 || m < 1 || m > (1 << 30) || layout_set_sockets(L, (int)m)) {
      layout_free(L);
      return NULL;
    }
  }
  return L;
}

static collc_layout *parse_nodes(int p, const char *text, const char *stop) {
  char *end;
  if (!text || p < 1) return NULL;
  if (!memchr(text, ',', (size_t)(stop - text))) {
    long k = strtol(text, &end, 10);
    return end != stop || end == text || k < 1 || k > (1 << 30) ? NULL : layout_regular(p, (int)k);
  }
  int *id = malloc((size_t)p * sizeof(int)), n = 0;
  const char *s = text;
  while (id && n < p) {
    long v = strtol(s, &end, 10);
    if (end == s || v < 0 || v > (1 << 30)) break;
    id[n++] = (int)v;
    s = end;
    if (*s != ',') break;
    s++;
  }
  collc_layout *L = id && n == p && s == stop ? layout_new(p, id) : NULL;
  free(id);
  return L;
}

int layout_shares(const collc_layout *L) { return L && L->max_size > 1; }
