#!/usr/bin/env bash
# tests/tuning_mpi.sh LIBRARY BUILD LAUNCHER...: COLLC_TUNING files at p = 2
# (LIBRARY "Open MPI" or "MPICH", the one BUILD is for; LAUNCHER ends with
# its process-count flag, -np or -n). The program is collc-bench's default
# selection (collc_allreduce, checked against native) at 8 B and 8000 B.
#  1. a file with rows for both sizes (tree:2, and native where the built-in
#     rule says shm): rank 0's stats show both decisions from=tuning;
#  2. damaged, truncated, empty, missing, another format version, another
#     MPI library, a bad row: one warning each, ignored (the built-in rule: its
#     decisions read from tuning/builtin.json with jq, as make tune may regenerate it);
#  3. ranks given different files, or only one rank a file: rank 0's wins
#     (a rank deciding otherwise would hang or fail the check);
#  4. a file of 512 rows (the most) leaves room for the built-in rule.
set -u
lib=$1 build=$2
shift 2
launch=("$@")
npflag=${launch[-1]}
dir=$(mktemp -d /tmp/collc-tuning-mpi.XXXXXX)
trap 'rm -rf "$dir"' EXIT
prog=("$build/bin/collc-bench" -C allreduce -c 1,1000 -a default -w 1 -r 3)
export COLLC_STATS=1
other=$([[ $lib == MPICH ]] && echo "Open MPI" || echo MPICH)

# file NAME LIBRARY VERSION ROWS: a tuning file in $dir/NAME.
file() {
  printf '{"format": "collc-tuning", "version": %s, "mpi": {"library": "%s"},\n "rules": [%s]}\n' \
    "$3" "$2" "$4" >"$dir/$1"
}
row() { printf '{"coll": "allreduce", "pmin": 2, "pmax": 2, "bmin": %s, "bmax": %s, "algo": "%s"}' "$@"; }
file good "$lib" 1 "$(row 8 8 tree:2), $(row 8000 8000 native)"
file other "$lib" 1 "$(row 8 8 recexch), $(row 8000 8000 tree)"
file foreign "$other" 1 "$(row 8 8 tree:2)"
file version2 "$lib" 2 "$(row 8 8 tree:2)"
file badrow "$lib" 1 "$(row 8 8 tree:2), $(row 8000 8000 bogus)"
head -c 60 "$dir/good" >"$dir/truncated"
: >"$dir/empty"
printf '\x00\x17garbage{{' >"$dir/damaged"

# expect NAME OUT REGEX...: every REGEX is in OUT.
expect() {
  local name=$1 out=$2 re
  shift 2
  for re in "$@"; do
    grep -Eq -- "$re" <<<"$out" && continue
    echo "$out" | tail -20
    echo "tuning_mpi: $name: missing /$re/"
    exit 1
  done
}

# run ENV...: the program at p = 2, all ranks with ENV; its output.
run() { env "$@" "${launch[@]}" 2 "${prog[@]}" 2>&1 || echo "tuning_mpi: exit status $?"; }
# run_each ENV0 ENV1: rank 0 with ENV0, rank 1 with ENV1 (one word each).
run_each() {
  "${launch[@]}" 1 env "$1" "${prog[@]}" : "$npflag" 1 env "$2" "${prog[@]}" 2>&1 ||
    echo "tuning_mpi: exit status $?"
}

S='calls=[0-9]+ bytes=[0-9]+'
used=("^collc-stats: allreduce tree $S from=tuning$" "^collc-stats: allreduce native $S from=tuning$"
      "^collc-tuning: $dir/good: 2 rows used")
out=$(run COLLC_TUNING="$dir/good")
expect "the file decides" "$out" "${used[@]}"
! grep -q 'warning\|exit status' <<<"$out" || expect "no warning" "$out" "^no warning$"
echo "tuning_mpi: the file decides: $(grep -c '^collc-stats: .*from=tuning$' <<<"$out") stats lines from it"

# The built-in rule's decision for the program's allreduce at $1 bytes (p = 2, one node,
# MPI_SUM), "ALGO from=SOURCE": the first row of tuning/builtin.json that covers it, read
# with jq (so that the expectation follows the rule when make tune regenerates it).
builtin_at() {
  jq -r --arg lib "$lib" --argjson b "$1" '
    [.rules[] | select(.lib == $lib and .coll == "allreduce" and (.nb | not) and .pmin <= 2 and
                       2 <= (.pmax // 2) and .bmin <= $b and $b <= (.bmax // $b))][0] |
    if . then "\(.algo | sub(":.*"; "")) from=builtin" else "native from=none" end' \
    "$(dirname "$0")/../tuning/builtin.json"
}
builtin=()
for b in 8 8000; do
  a=$(builtin_at $b) || { echo "tuning_mpi: jq could not read the built-in rule"; exit 1; }
  builtin+=("^collc-stats: allreduce ${a% *} $S ${a#* }$")
done
for f in damaged truncated empty missing version2 foreign badrow; do
  out=$(run COLLC_TUNING="$dir/$f")
  n=$(grep -c "^collc: warning: COLLC_TUNING=$dir/$f: .*; ignored$" <<<"$out")
  ((n == 1)) || expect "$f: one warning (not $n)" "$out" "^one warning$"
  ! grep -Eq 'from=tuning|^collc-tuning|exit status' <<<"$out" || expect "$f ignored" "$out" "^ignored$"
  expect "$f: the built-in rule" "$out" "${builtin[@]}"
  echo "tuning_mpi: $f: $(grep '^collc: warning' <<<"$out")"
done

out=$(run_each COLLC_TUNING="$dir/good" COLLC_TUNING="$dir/other")
expect "different files: rank 0's" "$out" "${used[@]}"
out=$(run_each COLLC_TUNING="$dir/good" COLLC_TUNING=)
expect "only rank 0 a file" "$out" "${used[@]}"
out=$(run_each COLLC_TUNING= COLLC_TUNING="$dir/good")
expect "only rank 1 a file" "$out" "${builtin[@]}"
! grep -Eq 'from=tuning|exit status' <<<"$out" || expect "rank 1's file unused" "$out" "^unused$"
echo "tuning_mpi: different files: rank 0's decides, no hang"

# A file of the most rows a file may have (512, for another p) leaves the built-in rule
# whole: both fit (a regenerated built-in rule has hundreds of rows).
jq -n --arg lib "$lib" '{format: "collc-tuning", version: 1, mpi: {library: $lib},
  rules: [range(512) | {coll: "allreduce", pmin: 999, pmax: 999, bmin: ., bmax: ., algo: "tree"}]}' \
  >"$dir/full" || { echo "tuning_mpi: jq could not write the full file"; exit 1; }
out=$(run COLLC_TUNING="$dir/full")
expect "a full file" "$out" "^collc-tuning: $dir/full: 512 rows used" "${builtin[@]}"
! grep -q 'warning' <<<"$out" || expect "a full file: no warning" "$out" "^no warning$"
echo "tuning_mpi: a full file (512 rows) and the built-in rule: both used"
