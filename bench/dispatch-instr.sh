#!/bin/bash
# What collc adds to a call it hands to the MPI library, in instructions
# (valgrind's callgrind: exact, unlike timings on a shared machine): at p = 1
# every call is served natively; each collective is run N times with and
# without the library preloaded, after 100 calls of warm-up, counting only
# the loop (bench/call_loop.c's timed()); the difference over N is collc's
# own per call. Prints a markdown table.
#   bench/dispatch-instr.sh [LIB] [COLLS...]   (LIB: build-openmpi/libcollc.so;
#   N=calls, default 20000: the counts are exact, a smaller N only runs faster)
set -euo pipefail
cd "$(dirname "$0")/.."
lib=$(realpath "${1:-build-openmpi/libcollc.so}")
shift || true
colls=("$@")
((${#colls[@]})) || colls=(allreduce rsb allgather reduce bcast alltoall barrier iallreduce ibcast)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mpicc.openmpi -O2 bench/call_loop.c -o "$tmp/loop"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_op=^avx
count() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null --toggle-collect=timed "$@" 2>&1 |
    sed -n 's/.*Collected : //p'
}
n=${N:-20000}
echo "| collective | native instructions per call | with collc | collc's own |"
echo "|---|---:|---:|---:|"
for c in "${colls[@]}"; do
  a=$(count "$tmp/loop" "$c" $n) b=$(LD_PRELOAD=$lib count "$tmp/loop" "$c" $n)
  echo "| $c | $((a / n)) | $((b / n)) | $(((b - a) / n)) |"
done
