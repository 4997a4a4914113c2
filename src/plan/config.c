/* config.c - read COLLC_* environment variables once. */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"

collc_config config_cfg;
atomic_int config_ready;
#define cfg config_cfg
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* 1 if variable name is set to something other than "" or "0". */
static int env_flag(const char *name) {
  const char *v = getenv(name);
  return v && *v && strcmp(v, "0") != 0;
}

/* A positive count in variable name: 0 if unset or empty, -1 if bad. */
static int env_count(const char *name) {
  const char *v = getenv(name);
  char *end;
  if (!v || !*v) return 0;
  long k = strtol(v, &end, 10);
  return *end || k < 1 || k > (1 << 30) ? -1 : (int)k;
}

/* COLLC_TEST_FAKE_DEVICE=<lo>:<hi> (hex addresses) into r; {0, 0} if unset or bad. */
static void env_range(const char *name, uintptr_t r[2]) {
  const char *v = getenv(name);
  char *mid, *end;
  r[0] = r[1] = 0;
  if (!v || !*v) return;
  unsigned long long lo = strtoull(v, &mid, 16), hi = *mid == ':' ? strtoull(mid + 1, &end, 16) : 0;
  if (*mid == ':' && !*end && lo < hi) r[0] = (uintptr_t)lo, r[1] = (uintptr_t)hi;
}

static void config_read(void) {
  cfg.disable = env_flag("COLLC_DISABLE");
  cfg.stats = env_flag("COLLC_STATS");
  const char *shm = getenv("COLLC_SHM");
  cfg.shm = !(shm && !strcmp(shm, "0"));
  const char *cma = getenv("COLLC_CMA");
  cfg.cma = !(cma && !strcmp(cma, "0"));
  const char *cuda = getenv("COLLC_CUDA");
  cfg.cuda = !(cuda && !strcmp(cuda, "0"));
  env_range("COLLC_TEST_FAKE_DEVICE", cfg.fake_dev);
  cfg.test_cuda_aware = env_flag("COLLC_TEST_CUDA_AWARE");
  const char *ex = getenv("COLLC_EXEC");
  cfg.batch = ex && !strcmp(ex, "batch");
  cfg.node_size = env_count("COLLC_NODE_SIZE");
  cfg.socket_size = env_count("COLLC_SOCKET_SIZE");
  const char *sim = getenv("COLLC_SIM"), *sp = getenv("COLLC_SIM_PARAMS");
  int minp = env_count("COLLC_SIM_MIN_P");
  cfg.sim_min_p = sim && !strcmp(sim, "0") ? 0 : minp > 0 ? minp : 65;
  snprintf(cfg.sim_params, sizeof cfg.sim_params, "%s", /* too long: a bad word (warned) */
           !sp || !*sp ? "paper" : strlen(sp) < sizeof cfg.sim_params ? sp : "too-long");
  const char *w = getenv("COLLC_WISDOM");
  snprintf(cfg.wisdom, sizeof cfg.wisdom, "%s", w && strlen(w) < sizeof cfg.wisdom ? w : "");
  const char *t = getenv("COLLC_TUNING"); /* (too long: a file that cannot be opened) */
  snprintf(cfg.tuning, sizeof cfg.tuning, "%s",
           !t ? "" : strlen(t) < sizeof cfg.tuning ? t : "/too-long");
  for (int c = 0; c < COLLC_COLL_COUNT; c++) {
    char *name = cfg.env_name[c];
    size_t n = (size_t)snprintf(name, sizeof cfg.env_name[c], "COLLC_");
    for (const char *s = coll_name(c); *s && n < sizeof cfg.env_name[c] - 1; s++)
      name[n++] = (char)toupper((unsigned char)*s);
    name[n] = 0;
    const char *v = getenv(name);
    snprintf(cfg.algorithm[c], sizeof cfg.algorithm[c], "%s", v ? v : "");
  }
}

const collc_config *config_read_once(void) {
  pthread_once(&once, config_read);
  atomic_store_explicit(&config_ready, 1, memory_order_release);
  return &cfg;
}
