#!/usr/bin/env bash
# tests/tune_mpi.sh LIBRARY BUILD NP LAUNCHER...: collc-tune end to end in
# quick mode at NP ranks (LIBRARY "Open MPI" or "MPICH", the one BUILD is
# for; LAUNCHER ends with its process-count flag):
#  1. collc-tune --quick -C allreduce,reduce,iallreduce,allgatherv writes a valid file: format 1,
#     this library,
#     p = NP, rows for this p only that cover every measured size, a point
#     per timed variant, the native configuration (default), the guideline
#     report (each violation slower than its mock-up), the summary table;
#     iallreduce (the nonblocking form) as rows marked nb, covering its sizes too;
#     allgatherv (a counted collective: equal counts) with the decision's
#     bytes, the whole vector's (p blocks);
#  2. the library then uses its decisions: collc-bench's default selection at
#     the measured sizes, with COLLC_TUNING set, must show (COLLC_STATS) for
#     each size the algorithm of the file's row covering it, from=tuning,
#     and nothing decided by the built-in rows; iallreduce (MPI_Iallreduce +
#     MPI_Wait) likewise by the file's nb rows. The truth is the file itself,
#     read with jq, not collc's reader;
#     every pick of a class confirmed (its ratios from the confirmation rounds,
#     at least 0.95x native in its worst tenth of them);
#  3. (p = 2) the test hooks: a planted boundary is refined, a class whose
#     winners were all pruned is timed again with its neighbours' picks, and
#     with native 10^4x faster in the confirmation rounds than in the sweep
#     every pick is dropped there (the rows all native).
set -u
lib=$1 build=$2 np=$3
shift 3
launch=("$@")
dir=$(mktemp -d /tmp/collc-tune-mpi.XXXXXX)
trap 'rm -rf "$dir"' EXIT
f=$dir/tuning.json
fail() { echo "${out:-}" | tail -30; echo "tune_mpi: $*"; exit 1; }

t0=$SECONDS
out=$("${launch[@]}" "$np" "$build/bin/collc-tune" --quick -C allreduce,reduce,iallreduce,allgatherv \
  -o "$f" 2>&1) ||
  fail "collc-tune failed"
echo "tune_mpi: collc-tune --quick at p=$np: $((SECONDS - t0)) s"
grep -q '^# collc-tune, p='"$np"'.*written to' <<<"$out" || fail "no summary line"
grep -Eq '^  allreduce +1000 ' <<<"$out" || fail "no summary table"
grep -Eq '^collc-tune: \[[0-9]+/12\] .*about [0-9]+ s left$' <<<"$out" || fail "no progress lines"
jq -e --arg lib "$lib" --argjson p "$np" '
  .format == "collc-tuning" and .version == 1 and .mpi.library == $lib and .p == $p and
  (.machine.nodes >= 1) and (.machine.ranks_per_node >= 1) and (.machine.hwloc | length > 0) and
  (.points | length >= 12) and (.rules | length >= 4) and .native.allreduce == "default" and
  any(.rules[]; .nb == true and .coll == "allreduce") and
  ([.points[] | .coll] | unique) == ["allgatherv", "allreduce", "iallreduce", "reduce"] and
  all(.points[] | select(.coll == "allgatherv"); .bytes == .count * 8 * $p) and
  (.guidelines | type == "array") and .method.confirm_reps == 2 and
  all(.points[] | select(.algo == "native" and .decision != "native" and (.refined | not));
      (.confirmed_b2b | type == "number") and (.confirmed_barrier | type == "number") and
      .confirmed_floor >= 0.95 and (.dropped | not)) and
  all(.guidelines[]; (.impl == "native" or .impl == "collc") and .us > .mockup_us) and
  all(.rules[]; .pmin == $p and .pmax == $p and .lib == $lib and .bmin <= .bmax)' "$f" \
  >/dev/null || fail "not a valid tuning file: $(head -c 600 "$f")"

# Boundaries refined: between two adjacent measured classes of a collective that
# decided differently lies a refined point (their geometric midpoint, timed with
# both), and every point's decision is the algorithm of the row covering its size.
jq -e '[.points[] | {coll, bytes, count, decision, refined}] | unique | group_by(.coll) |
  all(.[]; (map(select(.refined | not)) | sort_by(.bytes)) as $b | map(select(.refined)) as $r |
    all(range(0; ($b | length) - 1); $b[.].decision == $b[. + 1].decision or
        $b[. + 1].count <= $b[.].count + 1 or
        (. as $i | any($r[]; .bytes > $b[$i].bytes and .bytes < $b[$i + 1].bytes))))' "$f" \
  >/dev/null || fail "a boundary between classes deciding differently was not refined"
jq -e '.rules as $rules | all(.points[]; . as $p | ($p.coll | sub("^i"; "")) as $c |
  ($p.coll | startswith("i")) as $nb | [$rules[] | select(.coll == $c and .nb == $nb and
  .bmin <= $p.bytes and $p.bytes <= .bmax)][0].algo == $p.decision)' "$f" >/dev/null ||
  fail "a point's decision is not the algorithm of the row covering it"
echo "tune_mpi: $(jq '[.points[] | select(.refined) | .bytes] | unique | length' "$f") boundary point(s), rows follow the decisions"

# The refinement for certain: with the test hook native wins by 100x below 5000 B
# and loses by 100x from there, so allreduce decides native at 1000 B and not at
# 100000 B; their midpoint (10000 B) must be timed, decide collc, and the rows
# change algorithm between 1000 and 10000 B. (At p = 2 only: the p = 3 runs add
# nothing here but time.)
if ((np == 2)); then
  h=$dir/hook.json
  out=$(env COLLC_TUNE_TEST_NATIVE=5000 "${launch[@]}" "$np" "$build/bin/collc-tune" --quick --budget 8 \
    -C allreduce -o "$h" 2>&1) || fail "collc-tune with the hook failed"
  grep -Eq '^collc-tune: allreduce boundary 1000-100000 B \(native \| [a-z]' <<<"$out" ||
    fail "no boundary line between 1000 and 100000 B"
  jq -e '[.points[] | select(.refined)] as $r | ($r | length > 0) and
    all($r[]; .bytes > 1000 and .bytes < 100000 and .decision != "native") and
    ([.rules[] | select(.algo == "native")] | max_by(.bmax) | .bmax) as $n |
    $n >= 1000 and $n < 10000' "$h" >/dev/null ||
    fail "the hooked boundary: $(jq -c '[.points[] | select(.refined)], .rules' "$h" | head -c 800)"
  echo "tune_mpi: hooked boundary refined at $(jq '[.points[] | select(.refined) | .bytes][0]' "$h") B"
  # Second opinions: with native 100x slower everywhere collc wins every class, but
  # the hook COLLC_TUNE_TEST_PRUNE keeps nothing but native at 1000 B, as if the
  # simulator had pruned every winner there; the class must be timed again with
  # its neighbours' picks and decide one of them (without the pass: native).
  s=$dir/prune.json
  out=$(env COLLC_TUNE_TEST_NATIVE=1 COLLC_TUNE_TEST_PRUNE=1000 "${launch[@]}" "$np" \
    "$build/bin/collc-tune" --quick --budget 8 -C allreduce -o "$s" 2>&1) ||
    fail "collc-tune with the prune hook failed"
  grep -Eq '^collc-tune: allreduce 1000 B timed again with its neighbours. picks \([a-z].* \| [a-z].*\): native -> [a-z]' <<<"$out" ||
    fail "no second opinion at 1000 B"
  jq -e '([.points[] | select(.bytes == 1000)] | (map(.retimed) | all) and
          (.[0].decision as $d | $d != "native" and any(.[]; .algo == $d))) and
    ([.rules[] | select(.bmin <= 1000 and 1000 <= .bmax and (.nb | not))][0].algo != "native")' "$s" \
    >/dev/null || fail "the pruned class: $(jq -c '[.points[] | select(.bytes == 1000)], .rules' "$s" | head -c 800)"
  echo "tune_mpi: pruned class timed again with its neighbours' picks: $(jq -r '[.points[] | select(.bytes == 1000)][0].decision' "$s")"
  # Confirmation: native 100x slower in the sweep (every class picks collc), then
  # 100x faster in the confirmation rounds (the hook COLLC_TUNE_TEST_DRIFT: the
  # machine changed state): every pick must be dropped and every row be native.
  d=$dir/drift.json
  out=$(env COLLC_TUNE_TEST_NATIVE=1 COLLC_TUNE_TEST_DRIFT=1 "${launch[@]}" "$np" \
    "$build/bin/collc-tune" --quick --budget 8 -C allreduce -o "$d" 2>&1) ||
    fail "collc-tune with the drift hook failed"
  n=$(grep -Ec '^collc-tune: allreduce [0-9]+ B: [a-z].* dropped in confirmation \(0\.[0-9]+x b2b, 0\.[0-9]+x barrier over 2 rounds, 0\.[0-9]+x in the worst tenth\)$' <<<"$out")
  jq -e --argjson n "$n" '$n >= 3 and ([.points[] | select(.algo == "native" and .dropped)] | length) == $n and
    all(.points[]; .decision == "native") and all(.rules[]; .algo == "native")' "$d" >/dev/null ||
    fail "the drifted picks: $n dropped; $(jq -c '[.points[] | select(.algo == "native")], .rules' "$d" | head -c 800)"
  echo "tune_mpi: $n picks dropped in confirmation when native turned faster"
fi

# The file's algorithm (registry name) for collective $1 at $2 bytes
# (i<coll>: the nonblocking form, its nb rows).
algo_at() {
  local c=$1 nb=false
  [[ $c == i* ]] && c=${c#i} nb=true
  jq -r --arg c "$c" --argjson nb $nb --argjson b "$2" \
    '[.rules[] | select(.coll == $c and .nb == $nb and .bmin <= $b and $b <= .bmax)][0].algo
     // "NONE"' "$f" | sed 's/:.*//'
}
for coll in allreduce reduce iallreduce allgatherv; do
  # the measured sizes (quick: 1 B, 1000 B, 100000 B; allgatherv's of the whole
  # vector, count * 8 * p) as count:bytes
  pts=$(jq -r --arg c "$coll" '[.points[] | select(.coll == $c) | "\(.count):\(.bytes)"] | unique |
    join(" ")' "$f")
  counts=$(jq -r --arg c "$coll" '[.points[] | select(.coll == $c) | .count] | unique | join(",")' "$f")
  out=$(env COLLC_STATS=1 COLLC_TUNING="$f" "${launch[@]}" "$np" "$build/bin/collc-bench" \
    -C "$coll" -c "$counts" -a default -w 1 -r 3 2>&1) || fail "collc-bench $coll failed"
  for pt in $pts; do
    b=${pt#*:}
    a=$(algo_at "$coll" "$b")
    [[ $a != NONE ]] || fail "no row covers $coll at $b B"
    grep -Eq "^collc-stats: $coll $a calls=[0-9]+ bytes=[0-9]+ from=tuning$" <<<"$out" ||
      fail "$coll at $b B: the file says $a, stats do not"
    echo "tune_mpi: $coll $b B: $a (from=tuning)"
  done
  ! grep -Eq "^collc-stats: $coll .*from=(builtin|none)$" <<<"$out" ||
    fail "$coll: a decision not from the file"
done
echo "tune_mpi: the library decides as the file says"
# The nb rows decide nonblocking calls, not the blocking rows: the file with every
# nb allreduce row turned into tree (needs no set-up, fits every p) must serve
# MPI_Iallreduce with tree from the file, whatever its blocking rows say.
g=$dir/nb-tree.json
jq '.rules |= map(if .nb and .coll == "allreduce" then .algo = "tree" | .noncomm = "tree"
                  else . end)' "$f" >"$g" || fail "jq could not rewrite the file"
counts=$(jq -r '[.points[] | select(.coll == "iallreduce") | .count] | unique | join(",")' "$f")
out=$(env COLLC_STATS=1 COLLC_TUNING="$g" "${launch[@]}" "$np" "$build/bin/collc-bench" \
  -C iallreduce -c "$counts" -a default -w 1 -r 3 2>&1) || fail "collc-bench iallreduce failed"
grep -Eq "^collc-stats: iallreduce tree calls=[0-9]+ bytes=[0-9]+ from=tuning$" <<<"$out" &&
  ! grep -Eq "^collc-stats: iallreduce .*from=(builtin|none)$" <<<"$out" ||
  fail "iallreduce: the file's nb rows say tree, stats do not"
echo "tune_mpi: an nb row (tree, planted) decides MPI_Iallreduce (from=tuning)"
