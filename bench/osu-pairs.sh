#!/bin/bash
# OSU micro-benchmarks against collc, as a user measures: each benchmark run
# natively and with libcollc.so preloaded, alternated (native, collc) PAIRS
# times; per size the median over pairs of native/collc latency (> 1: collc
# faster). OSU is the user's to fetch and build (release 7.2 was used).
#   bench/osu-pairs.sh OSU_BUILD_DIR [NP] [PAIRS] [BENCH...]
# e.g. bench/osu-pairs.sh /tmp/osu/build-ompi 2 5 osu_allreduce osu_bcast
# Env: LIB (default build-openmpi/libcollc.so), OSU_ARGS (default
# "-m 8:4194304 -i 1000 -x 100"), MPIRUN (default: Open MPI, one rank per core);
# LIB=none: the control, the native library on both sides (the machine's noise).
set -euo pipefail
cd "$(dirname "$0")/.."
osu=$(realpath "$1")
np=${2:-2}
pairs=${3:-5}
shift $(($# < 3 ? $# : 3))
benches=("$@")
((${#benches[@]})) || benches=(osu_allreduce osu_allgather osu_reduce osu_bcast osu_alltoall)
lib=${LIB:-build-openmpi/libcollc.so}
[[ $lib == none ]] || lib=$(realpath "$lib")
args=${OSU_ARGS:--m 8:4194304 -i 1000 -x 100}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
read -r -a run <<<"${MPIRUN:-mpirun.openmpi --bind-to core --mca op ^avx -np $np}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# one BENCH SIDE N: OSU's "size latency" lines into $tmp/BENCH.SIDE.N
# (osu_barrier's one latency as size 0)
one() {
  local dir pre=()
  dir=$(dirname "$(find "$osu/c/mpi/collective" -name "$1" -type f | head -n 1)")
  [[ $2 == collc && $lib != none ]] && pre=(-x LD_PRELOAD="$lib")
  # shellcheck disable=SC2086
  "${run[@]}" "${pre[@]+"${pre[@]}"}" "$dir/$1" $args | awk '$1 ~ /^[0-9]/ {print (NF == 1 ? 0 : $1), (NF == 1 ? $1 : $2)}' >"$tmp/$1.$2.$3"
}
for b in "${benches[@]}"; do
  for ((i = 0; i < pairs; i++)); do one "$b" native $i; one "$b" collc $i; done
done
# Table: rows sizes, columns benchmarks, cells the median ratio.
printf '| bytes |'; printf ' %s |' "${benches[@]#osu_}"; echo
printf '|---:|'; printf -- '---:|%.0s' "${benches[@]}"; echo
sizes=$(cat "$tmp"/*.native.0 | awk '{print $1}' | sort -n -u)
for s in $sizes; do
  printf '| %s |' "$s"
  for b in "${benches[@]}"; do
    r=$(for ((i = 0; i < pairs; i++)); do
          n=$(awk -v s="$s" '$1 == s {print $2}' "$tmp/$b.native.$i")
          c=$(awk -v s="$s" '$1 == s {print $2}' "$tmp/$b.collc.$i")
          if [[ -n $n && -n $c ]]; then awk -v n="$n" -v c="$c" 'BEGIN {printf "%.4f\n", n / c}'; fi
        done | sort -g | awk '{a[NR] = $1} END {if (NR) printf "%.2f", NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; else printf "-"}')
    printf ' %s |' "$r"
  done
  echo
done
