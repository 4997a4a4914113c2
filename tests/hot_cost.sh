#!/usr/bin/env bash
# tests/hot_cost.sh [BUILD] - the memo's fast path, in instructions (callgrind:
# exact, not a timing). With tests/data/counted_by_total.json (native by the
# total below 13 B) a natively served allgatherv, reduce_scatter, alltoallv,
# gather, gatherv or scatterv at p = 1 must cost collc fewer than MAX
# instructions of its own (its memo lookup, ~90-110), not its slow path
# (the count vector hashed and the rule asked, ~1500). Self-test:
# COLLC_STATS=1 turns the fast path off; the same measure must then read
# above MAX, or the bound tells nothing.
set -u
cd "$(dirname "$0")/.."
lib=${1:-build-openmpi}/libcollc.so
MAX=400
export COLLC_TUNING=$PWD/tests/data/counted_by_total.json N=2000
# own COLL... : the "collc's own" column of bench/dispatch-instr.sh, one per line.
own() {
  local t
  t=$(bench/dispatch-instr.sh "$lib" "$@") || return 1
  echo "$t" >&2
  awk -F'|' 'NR > 2 { print $5 + 0 }' <<<"$t"
}
fast=$(own allgatherv reduce_scatter alltoallv gather gatherv scatterv) || exit 1
slow=$(COLLC_STATS=1 own allgatherv) || exit 1
echo "own instructions per call: fast path $(echo $fast), with COLLC_STATS=1 $slow (bound $MAX)"
(($(wc -w <<<"$fast") == 6)) || { echo "hot_cost: missing counts"; exit 1; }
for c in $fast; do ((c < MAX)) || { echo "hot_cost: a fast-path call costs $c >= $MAX"; exit 1; }; done
((slow > MAX)) || { echo "hot_cost: the slow path reads $slow <= $MAX: the bound tells nothing"; exit 1; }
