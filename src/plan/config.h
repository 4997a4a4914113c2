/* config.h - environment configuration, read once per process. */
#ifndef COLLC_CONFIG_H
#define COLLC_CONFIG_H

#include <stdatomic.h>
#include <stdint.h>
#include "../ir/ir.h"
#include "../hot.h"

typedef struct {
  int disable;                          /* COLLC_DISABLE=1: pure pass-through */
  int stats;                            /* COLLC_STATS=1: per-algorithm counts at finalize */
  char wisdom[1024];                    /* COLLC_WISDOM: directory of saved plans, "" = off */
  char tuning[1024];                    /* COLLC_TUNING: the tuning file, "" = none */
  int shm;                              /* COLLC_SHM=0: no shared memory (default on) */
  int cma;                              /* COLLC_CMA=0: no single copy (default on) */
  int cuda;                             /* COLLC_CUDA=0: never load the CUDA runtime (default 1) */
  uintptr_t fake_dev[2];                /* COLLC_TEST_FAKE_DEVICE=<lo>:<hi> (hex): test hook,
                                           [lo, hi) is device memory; {0, 0} = off */
  int test_cuda_aware;                  /* COLLC_TEST_CUDA_AWARE=1: test hook, take the MPI
                                           library for CUDA-aware (a fake CUDA's device
                                           memory is host memory: any library reads it) */
  int batch;                            /* COLLC_EXEC=batch: local instructions run in
                                           batches (ir/batch.h; default: one by one) */
  int node_size;                        /* COLLC_NODE_SIZE=k: virtual nodes of k ranks; 0 = real
                                           nodes; -1 = a bad value (warned, then real nodes) */
  int socket_size;                      /* COLLC_SOCKET_SIZE=m: m consecutive local ranks per
                                           socket; 0 = from hwloc; -1 = a bad value */
  int sim_min_p;                        /* COLLC_SIM_MIN_P: the default rule asks the cost
                                           simulator from this many ranks (default 65;
                                           COLLC_SIM=0: never) */
  char sim_params[1024];                /* COLLC_SIM_PARAMS: its parameters (default "paper") */
  char algorithm[COLLC_COLL_COUNT][256]; /* COLLC_<COLLECTIVE>, "" when unset */
  char env_name[COLLC_COLL_COUNT][32];   /* "COLLC_ALLTOALL", ... */
} collc_config;

/* The configuration, read from the environment on first use (then one
 * load per call: it is on every call's path). */
extern COLLC_LOCAL collc_config config_cfg;
extern COLLC_LOCAL atomic_int config_ready;
const collc_config *config_read_once(void);
static inline const collc_config *config_get(void) {
  if (atomic_load_explicit(&config_ready, memory_order_acquire)) return &config_cfg;
  return config_read_once();
}

#endif
