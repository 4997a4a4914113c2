#!/usr/bin/env bash
# tests/gpu/run.sh - the device-buffer checks and benchmark, for a machine
# with one GPU (issue 16). Run on an H200 node on 2026-12-04 (README, GPU
# buffers: about 30 s after the build); where there is no GPU, `bash -n`
# checks it and the normal build compiles its programs (tests/mpi/
# gpu_preload.c, gpu_kernels.c: CUDA, NCCL and libcollc_cuda.so by dlopen).
#
#   tests/gpu/run.sh              build with CUDA=1, check p = 1, 2, 4, benchmark p = 2, 4
#   OMPI_BUNDLE=DIR tests/gpu/run.sh   Debian's Open MPI unpacked by tests/gpu/bundle-ompi.sh DIR
#                                      (on a machine without MPI: DIR/env.sh is sourced)
#   OPAL_PREFIX=/opt/ompi tests/gpu/run.sh   another relocated Open MPI (its bin/ and lib/ are
#                                            put on PATH and LD_LIBRARY_PATH); or put any MPI's
#                                            bin/ on PATH
#   MPICC=mpicc.mpich MPIRUN=mpirun.mpich tests/gpu/run.sh
#   GPU_PREBUILT=1 tests/gpu/run.sh   use build-gpu/ as it is (built elsewhere with
#                                     make CUDA=1 BUILD=build-gpu all build-gpu/tests/mpi_gpu_preload
#                                     build-gpu/tests/mpi_gpu_kernels)
# libcudart and libnccl.so.2 are looked for on LD_LIBRARY_PATH, in CUDA's
# lib64 and in Python's nvidia packages (NCCL_LIB=<dir> names NCCL's).
#
# Ranks share the GPU (rank % devices). Checks: every collective with
# device buffers against the library's PMPI_ call on host copies (ints
# exact; doubles bitwise identical on all ranks), with collc's CUDA path
# (COLLC_STATS lines printed: plans served vs `native mem=cuda`), then with
# COLLC_CUDA=0 and every collective native (device calls to the library:
# CUDA-aware libraries only).
# Benchmark: allreduce 8 B .. 64 MiB, collc vs native (CUDA-aware only) vs
# NCCL (if libnccl.so.2 loads). Exit status: 0 if every check passed.
set -u
cd "$(dirname "$0")/../.." || exit 2
if [[ -n ${OMPI_BUNDLE:-} ]]; then
  . "$OMPI_BUNDLE/env.sh" || exit 2
elif [[ -n ${OPAL_PREFIX:-} ]]; then
  export PATH="$OPAL_PREFIX/bin:$PATH"
  export LD_LIBRARY_PATH="$OPAL_PREFIX/lib/x86_64-linux-gnu:$OPAL_PREFIX/lib:${LD_LIBRARY_PATH:-}"
fi
export PATH="$PATH:/usr/local/cuda/bin"
nccl=${NCCL_LIB:-$(find /usr/local /opt /usr/lib -name 'libnccl.so.2*' 2>/dev/null | head -n 1)}
[[ -z $nccl ]] && nccl=$(python3 -c 'import nvidia.nccl, os; print(list(nvidia.nccl.__path__)[0] + "/lib")' 2>/dev/null)
[[ -f $nccl ]] && nccl=$(dirname "$nccl")
echo "NCCL: ${nccl:-none found}"
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64${nccl:+:$nccl}"
first() { for c in "$@"; do command -v "$c" >/dev/null && { echo "$c"; return; }; done; }
MPICC=${MPICC:-$(first mpicc.openmpi mpicc)}
MPIRUN=${MPIRUN:-$(first mpirun.openmpi mpirun mpiexec)}
[[ -n $MPICC && -n $MPIRUN ]] || { echo "no mpicc/mpirun on PATH (set OPAL_PREFIX or PATH)"; exit 2; }
command -v nvidia-smi >/dev/null && nvidia-smi -L
B=build-gpu
if [[ ${GPU_PREBUILT:-0} == 1 ]]; then
  echo "== prebuilt $B/"
  ls "$B/libcollc.so" "$B/libcollc_cuda.so" "$B/tests/mpi_gpu_preload" "$B/tests/mpi_gpu_kernels" >/dev/null || exit 2
else
  echo "== build ($MPICC, CUDA=1) into $B/"
  make -j"$(nproc)" CUDA=1 BUILD="$B" MPICC="$MPICC" lib "$B/libcollc_cuda.so" \
    "$B/tests/mpi_gpu_preload" "$B/tests/mpi_gpu_kernels" >"$B.log" 2>&1 || { tail -30 "$B.log"; exit 2; }
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
RUN=("$MPIRUN" -np)
if "$MPIRUN" --version 2>&1 | grep -qi 'open mpi\|open-mpi\|OpenRTE'; then
  RUN=("$MPIRUN" --oversubscribe --bind-to none --mca op ^avx -np) # (local ranks inherit the environment)
fi
AWARE=0 # the library takes device buffers itself (Open MPI: ompi_info says so)
command -v ompi_info >/dev/null && ompi_info --parsable --all 2>/dev/null |
  grep -q 'mpi_built_with_cuda_support:value:true' && AWARE=1
echo "MPI library CUDA-aware: $AWARE"
PROG=$B/tests/mpi_gpu_preload
PRE=$PWD/$B/libcollc.so
pass=0
fail=0
# case NAME CMD...: run with a CASE_TIMEOUT (120) s limit; PASS/FAIL and the output.
case_() {
  local name=$1 rc=0
  shift
  echo "== $name"
  timeout "${CASE_TIMEOUT:-120}" "$@" || rc=$?
  if ((rc == 0)); then pass=$((pass + 1)); echo "PASS $name"; else fail=$((fail + 1)); echo "FAIL $name (exit $rc)"; fi
}
# A library that is not CUDA-aware cannot take device buffers itself, so
# there collc must serve every call: algorithms forced (no native rows).
FORCE=(COLLC_ALLREDUCE=recexch COLLC_ALLGATHER=recexch COLLC_REDUCE_SCATTER_BLOCK=recexch
       COLLC_REDUCE=tree COLLC_BCAST=tree COLLC_ALLTOALL=linear COLLC_ALLGATHERV=recexch
       COLLC_REDUCE_SCATTER=recexch)
# COLLC_CUDA=0 makes every buffer host memory to collc, so its plans would
# touch device memory from the host (the fake CUDA of tests/fakecuda shows the
# fault): with it, only calls collc hands to the library may get device buffers.
NATIVE=(COLLC_ALLREDUCE=native COLLC_ALLGATHER=native COLLC_REDUCE_SCATTER_BLOCK=native
        COLLC_REDUCE=native COLLC_BCAST=native COLLC_ALLTOALL=native COLLC_ALLGATHERV=native
        COLLC_REDUCE_SCATTER=native)
# The device reduction kernels against the host ones, every (type, op) pair,
# then their bandwidth (tests/mpi/gpu_kernels.c).
case_ "batch kernels = host kernels" "${RUN[@]}" 1 "$B/tests/mpi_gpu_kernels" "$PWD/$B/libcollc_cuda.so" bench
# At p = 1 no message is sent, so collc's CUDA backend (one kernel launch per
# batch) runs on any library: the test hook takes it for CUDA-aware there.
((AWARE)) || case_ "check collc CUDA backend np=1" env LD_PRELOAD="$PRE" COLLC_STATS=1 \
  COLLC_TEST_CUDA_AWARE=1 "${FORCE[@]}" "${RUN[@]}" 1 "$PROG" check
for np in 1 2 4; do
  case_ "check collc np=$np" env LD_PRELOAD="$PRE" COLLC_STATS=1 "${FORCE[@]}" \
    "${RUN[@]}" $np "$PROG" check
  ((AWARE)) || continue # (below, calls reach the library with device buffers)
  case_ "check collc default rule np=$np" env LD_PRELOAD="$PRE" COLLC_STATS=1 \
    "${RUN[@]}" $np "$PROG" check
  case_ "check COLLC_CUDA=0 all native np=$np" env LD_PRELOAD="$PRE" COLLC_CUDA=0 COLLC_STATS=1 \
    "${NATIVE[@]}" "${RUN[@]}" $np "$PROG" check
done
for np in 2 4; do
  case_ "bench np=$np" env LD_PRELOAD="$PRE" "${FORCE[@]}" "${RUN[@]}" $np "$PROG" bench
done
echo "$pass passed, $fail failed"
((AWARE)) || echo "(not CUDA-aware: only forced algorithms checked, no native timings)"
((fail == 0))
