#!/bin/bash
# OSU micro-benchmarks against collc, as a user measures: each benchmark run
# natively and with libcollc.so preloaded, PAIRS pairs in turn, the order
# within a pair alternating (native collc, collc native, ...: a drift or the
# second run's place favours neither side); per size the median over pairs
# of native/collc latency (> 1: collc faster), or with STAT=best the best
# (smallest) native latency over all runs over the best collc one: a whole
# run of this 2-core VM lands in a fast or a slow mode (about 2x apart at
# small sizes, for both sides alike), and the best of many runs compares the
# fast modes; STAT=fast the median of each side's fast-mode runs (those within
# 1.5x of that side's best run at that size: a side slower in every run still
# compares), so a side's share of slow-mode runs (luck) does not rank it. OSU
# is the user's to fetch and build (release 7.2 was used).
#   bench/osu-pairs.sh OSU_BUILD_DIR [NP] [PAIRS] [BENCH...]
# e.g. bench/osu-pairs.sh /tmp/osu/build-ompi 2 5 osu_allreduce osu_bcast
# Env: STAT (pairs, the default; best; fast; "pairs best fast": each), LIB (default
# build-openmpi/libcollc.so), OSU_ARGS (default "-m 8:4194304 -i 1000 -x 100"),
# MPIRUN (default: Open MPI, one rank per core); LIB=none: the control, the
# native library on both sides (the machine's noise). Each table ends with the
# geometric mean of every column over its sizes.
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
  for ((i = 0; i < pairs; i++)); do
    if ((i % 2 == 0)); then one "$b" native $i; one "$b" collc $i
    else one "$b" collc $i; one "$b" native $i; fi
  done
done
# The median of the numbers on stdin, sorted (nothing if none).
median() {
  awk '{a[NR] = $1} END {if (NR) print NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'
}

# The median of the latencies on stdin within 1.5x of their smallest (nothing if none).
fast_median() {
  sort -g | awk 'NR == 1 {m = $1} $1 <= 1.5 * m' | median
}

# The cell of benchmark $1 at size $2 under statistic $3 (pairs, best, fast).
cell() {
  local b=$1 s=$2 n c
  if [[ $3 == fast ]]; then
    n=$(cat "$tmp/$b".native.* | awk -v s="$s" '$1 == s {print $2}' | fast_median)
    c=$(cat "$tmp/$b".collc.* | awk -v s="$s" '$1 == s {print $2}' | fast_median)
    if [[ -n $n && -n $c ]]; then awk -v n="$n" -v c="$c" 'BEGIN {printf "%.2f", n / c}'; else printf -- "-"; fi
    return
  fi
  if [[ $3 == best ]]; then
    n=$(cat "$tmp/$b".native.* | awk -v s="$s" '$1 == s {print $2}' | sort -g | head -n 1)
    c=$(cat "$tmp/$b".collc.* | awk -v s="$s" '$1 == s {print $2}' | sort -g | head -n 1)
    if [[ -n $n && -n $c ]]; then awk -v n="$n" -v c="$c" 'BEGIN {printf "%.2f", n / c}'; else printf -- "-"; fi
    return
  fi
  for ((i = 0; i < pairs; i++)); do
    n=$(awk -v s="$s" '$1 == s {print $2}' "$tmp/$b.native.$i")
    c=$(awk -v s="$s" '$1 == s {print $2}' "$tmp/$b.collc.$i")
    if [[ -n $n && -n $c ]]; then awk -v n="$n" -v c="$c" 'BEGIN {printf "%.4f\n", n / c}'; fi
  done | sort -g | median | awk '{printf "%.2f", $1} END {if (!NR) printf "-"}'
}
# Tables (one per statistic of STAT, e.g. STAT="pairs best"): rows sizes,
# columns benchmarks.
sizes=$(cat "$tmp"/*.native.0 | awk '{print $1}' | sort -n -u)
for stat in ${STAT:-pairs}; do
  [[ ${STAT:-pairs} == *' '* ]] && echo "$stat:"
  printf '| bytes |'; printf ' %s |' "${benches[@]#osu_}"; echo
  printf '|---:|'; printf -- '---:|%.0s' "${benches[@]}"; echo
  declare -A all=()
  for s in $sizes; do
    printf '| %s |' "$s"
    for b in "${benches[@]}"; do
      v=$(cell "$b" "$s" "$stat")
      printf ' %s |' "$v"
      all[$b]+=" $v"
    done
    echo
  done
  printf '| geomean |'
  for b in "${benches[@]}"; do
    printf ' %s |' "$(tr ' ' '\n' <<<"${all[$b]}" | awk '$1 + 0 > 0 {l += log($1); n++}
      END {if (n) printf "%.2f", exp(l / n); else printf "-"}')"
  done
  echo
  unset all
done
