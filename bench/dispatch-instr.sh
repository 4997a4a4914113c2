#!/bin/bash
# What collc adds to a call it hands to the MPI library, in instructions
# (valgrind's callgrind: exact, unlike timings on a shared machine): at p = 1
# every call is served natively; each collective is run for N and 2N calls with
# and without the library preloaded, and the differences give the per-call
# counts. Prints a markdown table.
#   bench/dispatch-instr.sh [LIB] [COLLS...]   (LIB: build-openmpi/libcollc.so)
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
count() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 | sed -n 's/.*Collected : //p'; }
n=20000
echo "| collective | native instructions per call | with collc | collc's own |"
echo "|---|---:|---:|---:|"
for c in "${colls[@]}"; do
  a1=$(count "$tmp/loop" "$c" $n) a2=$(count "$tmp/loop" "$c" $((2 * n)))
  b1=$(LD_PRELOAD=$lib count "$tmp/loop" "$c" $n) b2=$(LD_PRELOAD=$lib count "$tmp/loop" "$c" $((2 * n)))
  echo "| $c | $(((a2 - a1) / n)) | $(((b2 - b1) / n)) | $((((b2 - b1) - (a2 - a1)) / n)) |"
done
