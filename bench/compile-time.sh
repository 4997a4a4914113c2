#!/bin/bash
# Plan compilation time per rank as p grows (issue 6): every rank's program
# compiled in one process (collc-explain -T), time / p = what one rank spends
# compiling its own plan at its first call; next to it, the simulator's
# prediction for one execution on the torus paper's cluster (32 ranks per
# node). The least of three runs. Prints a markdown table.  Usage: bench/compile-time.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build-openmpi}/bin
cases=("alltoall torus:d=2 1" "alltoall torus:d=3 1" "alltoall bruck 1" "alltoall linear 1"
       "allreduce recexch 1" "allreduce recexch 1000" "allreduce hier 1000" "allreduce tree 1000")
echo "| collective | algorithm | count | p | us per rank | instructions per rank | predicted run (us) | compile / run |"
echo "|---|---|---|---|---|---|---|---|"
for p in 64 1152 4096; do
  for c in "${cases[@]}"; do
    read -r coll algo count <<<"$c"
    us=
    for rep in 1 2 3; do # the least of three: the machine is shared
      line=$("$B/collc-explain" -T -N 32 "$coll" "$algo" "$p" 0 "$count")
      t=$(sed -E 's/.*s, ([0-9.]+) us per rank.*/\1/' <<<"$line")
      us=$(awk -v a="${us:-$t}" -v b="$t" 'BEGIN { print (b < a ? b : a) }')
    done
    ins=$(sed -E 's/.* ([0-9.]+) instructions.*/\1/' <<<"$line")
    run=$("$B/collc-explain" -S paper -N 32 "$coll" "$algo" "$p" 0 "$count" 2>&1 |
          sed -nE 's/^predicted time ([0-9.]+) us.*/\1/p' || true)
    ratio=$([[ -n $run ]] && awk -v a="$us" -v b="$run" 'BEGIN { printf "%.2f", a / b }' || echo "-")
    echo "| $coll | $algo | $count | $p | $us | $ins | ${run:-too large} | $ratio |"
  done
done
