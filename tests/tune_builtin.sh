#!/usr/bin/env bash
# tests/tune_builtin.sh BUILD LAUNCHER...: bench/tune-builtin.sh (make tune's
# merge) on synthetic run files, no timing. BUILD is an Open MPI build;
# LAUNCHER ends with its process-count flag.
#  1. two runs (p = 2, 4) merged with tuning/builtin.json (its hand-written
#     rows; those of an earlier make tune replaced): a valid tuning file, the runs' rows first (ascending p, marked
#     "make tune", with their own nb rows), then every hand-written row, in
#     order, each marked "hand" and its note saying why it is kept; the merge
#     of the output with the same runs (in another order) is the same file;
#  2. bad run files: a truncated one, one of two p, a second run of one p:
#     each ignored with one warning; none usable: exit 2, nothing written;
#  3. the library takes the file: with COLLC_TUNING=<merged>, at p = 2
#     collc-bench's default selection shows the runs' rows (allreduce tree,
#     iallreduce cyclic: nb) and, where no run row applies, a hand-written one
#     (reduce 8000 B: hier), all from=tuning, and no warning.
set -u
build=$1
shift
launch=("$@")
dir=$(mktemp -d /tmp/collc-tune-builtin.XXXXXX)
trap 'rm -rf "$dir"' EXIT
merge=bench/tune-builtin.sh
fail() { echo "${out:-}" | tail -30; echo "tune_builtin: $*"; exit 1; }

# A synthetic collc-tune file at p = $1 (Open MPI): allreduce tree up to
# 1 MB then native; iallreduce (nb) cyclic; the members collc-tune writes.
run_file() {
  jq -n --argjson p "$1" '{format: "collc-tuning", version: 1, collc: "0.1.0",
    mpi: {library: "Open MPI", version: "Open MPI v4.1.4"},
    machine: {hwloc: "synthetic", nodes: 1, ranks_per_node: $p}, p: $p,
    calibration: "local", method: {quick: true, budget_s: 1, min_reps: 3, max_reps: 10},
    native: {allreduce: "default"}, points: [], guidelines: [],
    rules: [
      {lib: "Open MPI", coll: "allreduce", pmin: $p, pmax: $p, bmin: 0, bmax: 1000000,
       algo: "tree", noncomm: "tree", nb: false, ratio: 1.23456},
      {lib: "Open MPI", coll: "allreduce", pmin: $p, pmax: $p, bmin: 1000001, bmax: 30000000,
       algo: "native", nb: false, ratio: 1},
      {lib: "Open MPI", coll: "allreduce", pmin: $p, pmax: $p, bmin: 0, bmax: 30000000,
       algo: "cyclic", noncomm: "native", nb: true, ratio: 1.5}]}'
}
run_file 2 >"$dir/p2.json" && run_file 4 >"$dir/p4.json" || fail "jq could not write the inputs"

# 1. the merge
m=$dir/merged.json
out=$("$merge" tuning/builtin.json "$m" "$dir/p4.json" "$dir/p2.json" 2>&1) || fail "merge failed"
jq -e --slurpfile b tuning/builtin.json '
  [$b[0].rules[] | select(.origin != "make tune") | del(.origin, .note)] as $hand |
  ($hand | length) as $nh |
  .format == "collc-tuning" and .version == 1 and .mpi.library == "any" and
  (.rules | length) == 6 + $nh and
  ([.rules[:6][] | .pmin] == [2, 2, 2, 4, 4, 4]) and
  all(.rules[:6][]; .origin == "make tune" and (.note | startswith("make tune: collc-tune at p ="))) and
  ([.rules[:6][] | select(.nb)] | length) == 2 and .rules[0].ratio == 1.235 and
  all(.rules[6:][]; .origin == "hand" and
      (.note | test("^Hand-written, kept by make tune \\([^)]+\\)\\."))) and
  ([.rules[6:][] | del(.origin, .note)] == $hand) and
  ([.make_tune.runs[].p] == [2, 4])' "$m" >/dev/null ||
  fail "not the merged file: $(head -c 800 "$m")"
# the reasons (all four kinds appear among the built-in rule's rows)
for why in "measures Open MPI only" "did not time barrier" "did not measure p = 5-8; it measured p = 2, 4" \
           "did not time reduce"; do
  grep -q "kept by make tune ([^)]*$why" "$m" || fail "no hand-written row kept because: $why"
done
# one row a line, spaced as by hand (tests/unit/tuning.c counts a library's rows in the text)
for l in "Open MPI" MPICH; do
  (($(grep -c "^  {\"lib\": \"$l\", " "$m") == $(jq --arg l "$l" '[.rules[] | select(.lib == $l)] | length' "$m"))) ||
    fail "$l: not one row a line as tuning/builtin.json"
done
"$merge" "$m" "$dir/again.json" "$dir/p2.json" "$dir/p4.json" 2>/dev/null &&
  cmp -s "$m" "$dir/again.json" || fail "merging the merged file again changed it"
echo "tune_builtin: merged: $(jq '.rules | length' "$m") rows, the same when merged again"

# 2. bad run files
head -c 300 "$dir/p2.json" >"$dir/trunc.json"
jq '.rules[1].pmin = 3 | .rules[1].pmax = 3' "$dir/p2.json" >"$dir/twop.json"
out=$("$merge" tuning/builtin.json "$dir/b.json" "$dir/trunc.json" "$dir/p2.json" \
  "$dir/twop.json" "$dir/p2.json" 2>&1) || fail "one good run: the merge failed"
(($(grep -c 'ignored$' <<<"$out") == 3)) && grep -q 'trunc.json: not a collc-tune file' <<<"$out" &&
  grep -q 'twop.json: not a collc-tune file' <<<"$out" && grep -q 'a second run of Open MPI/2' <<<"$out" ||
  fail "bad run files: not one warning each"
jq -e '[.make_tune.runs[].p] == [2]' "$dir/b.json" >/dev/null || fail "bad run files: not ignored"
out=$("$merge" tuning/builtin.json "$dir/none.json" "$dir/trunc.json" 2>&1)
(($? == 2)) && [[ ! -e $dir/none.json ]] || fail "no usable run: not exit 2, or a file written"
echo "tune_builtin: bad run files ignored with one warning each; none usable: exit 2"

# 3. the library takes it
out=$(env COLLC_STATS=1 COLLC_TUNING="$m" "${launch[@]}" 2 "$build/bin/collc-bench" \
  -C allreduce -c 1,1000 -a default -w 1 -r 2 2>&1) || fail "collc-bench allreduce failed"
for want in "^collc-stats: allreduce tree calls=[0-9]+ bytes=[0-9]+ from=tuning$" \
            "^collc-tuning: $m: [0-9]+ rows used"; do
  grep -Eq "$want" <<<"$out" || fail "missing: $want"
done
! grep -q 'warning' <<<"$out" || fail "a warning"
out=$(env COLLC_STATS=1 COLLC_TUNING="$m" "${launch[@]}" 2 "$build/bin/collc-bench" \
  -C iallreduce -c 1000 -a default -w 1 -r 2 2>&1) || fail "collc-bench iallreduce failed"
grep -Eq "^collc-stats: iallreduce cyclic calls=[0-9]+ bytes=[0-9]+ from=tuning$" <<<"$out" ||
  fail "iallreduce: not the runs' nb row"
out=$(env COLLC_STATS=1 COLLC_TUNING="$m" "${launch[@]}" 2 "$build/bin/collc-bench" \
  -C reduce -c 1000 -a default -w 1 -r 2 2>&1) || fail "collc-bench reduce failed"
grep -Eq "^collc-stats: reduce hier calls=[0-9]+ bytes=[0-9]+ from=tuning$" <<<"$out" ||
  fail "reduce 8000 B: not the hand-written row (hier)"
echo "tune_builtin: the library takes the merged file (from=tuning: runs' rows, nb, hand-written)"
