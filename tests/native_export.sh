#!/usr/bin/env bash
# tests/native_export.sh LIBRARY BUILD LAUNCHER...: collc-tune --export-ompi
# (LIBRARY "Open MPI") or --export-mpich ("MPICH") on synthetic tuning files,
# and the MPI library accepting what it wrote (LAUNCHER ends with its
# process-count flag):
#  1. three files of runs forcing one native allreduce algorithm each (B
#     fastest at 32 KiB; at 8 B "default", exportable to Open MPI only, as
#     algorithm 0, else A) plus bcast: the exported
#     file says, by the sizes, what the points say (checked against the
#     expected text / with jq); bad input files (not JSON, another p,
#     missing) make it exit 2 with a message and write nothing;
#  2. tests/mpi/native_rules_preload under the file: every collective right,
#     nothing on stderr; Open MPI: the allreduce's rounding (p = 3, 32 KiB)
#     is that of the file's algorithm forced through
#     coll_tuned_allreduce_algorithm, not the default's; MPICH: a copy of the
#     file without bcast aborts at MPI_Bcast (the file is what MPICH uses);
#  3. what the library does with a broken file (shown; Open MPI: silently
#     its defaults; MPICH: an assertion).
set -u
lib=$1 build=$2
shift 2
launch=("$@")
dir=$(mktemp -d /tmp/collc-native-export.XXXXXX)
trap 'rm -rf "$dir"' EXIT
prog=$build/tests/mpi_native_rules_preload
fail() { echo "${out:-}" | tail -30; echo "native_export: $*"; exit 1; }

# mk P ALGO US8 US32K: a tuning file of a run forcing native allreduce ALGO.
mk() {
  jq -n --arg lib "$lib" --argjson p "$1" --arg a "$2" --argjson s "$3" --argjson l "$4" '
    def pt(c; b; us): {coll: c, bytes: b, count: (b / 8), algo: "native", status: "ok",
                       b2b_us: us, barrier_us: us};
    {format: "collc-tuning", version: 1, mpi: {library: $lib}, p: $p,
     native: {allreduce: $a, bcast: "default"},
     points: [pt("allreduce"; 8; $s), pt("allreduce"; 32768; $l), pt("bcast"; 8; 3),
              (pt("allreduce"; 8; 0.1) | .algo = "tree")]}'
}

if [[ $lib == "Open MPI" ]]; then
  np=3
  mk $np 4 4 30 >"$dir/a.json" && mk $np 3 5 20 >"$dir/b.json" && mk $np default 1 99 >"$dir/c.json"
  "$build/bin/collc-tune" --export-ompi "$dir/rules.txt" "$dir"/[abc].json || fail "export failed"
  # bad input: not JSON, another p, no file: exit 2 with a message, nothing written
  echo garbage >"$dir/g.json" && mk 2 3 1 1 >"$dir/p2.json"
  for bad in "$dir/g.json" "$dir/p2.json" "$dir/none.json"; do
    "$build/bin/collc-tune" --export-ompi "$dir/x.txt" "$dir/a.json" "$bad" 2>"$dir/err"
    rc=$?
    [[ $rc == 2 && -s $dir/err && ! -e $dir/x.txt ]] || fail "$bad: exit $rc, $(cat "$dir/err")"
  done
  # allreduce (id 2): default (0) from 0 B, 3 from 513 B (the midpoint of 8 and 32768);
  # bcast (id 7): 0
  want=$'2\n2\n1\n3\n2\n0 0 0 0\n513 3 0 0\n7\n1\n3\n1\n0 0 0 0'
  got=$(sed 's/ *#.*//; /^$/d' "$dir/rules.txt")
  [[ $got == "$want" ]] || fail "rules file: $(cat "$dir/rules.txt")"
  run() { "${launch[@]}" $np "$@" "$prog" 4096 2>"$dir/err"; }
  forced3=$(run --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 3) &&
    dflt=$(run) || fail "the program failed natively"
  [[ $forced3 != "$dflt" ]] || fail "algorithms 3 and the default round alike: no evidence"
  out=$(run --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename \
    "$dir/rules.txt") || fail "the program failed under the rules file"
  [[ ! -s $dir/err ]] || fail "stderr under the rules file: $(cat "$dir/err")"
  [[ $out == "$forced3" ]] || fail "not algorithm 3's result: $out (3: $forced3; default: $dflt)"
  echo "native_export: Open MPI ran the file's allreduce 3 at 32 KiB, p = 3 (${out%%$'\n'*})"
  printf '2\n2\n1\n3\nbogus\n' >"$dir/bad.txt"
  out=$(run --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename \
    "$dir/bad.txt") || fail "the program failed under a broken rules file"
  [[ $out == "$dflt" ]] || fail "a broken file changed the algorithm"
  echo "native_export: a broken rules file: Open MPI keeps its defaults, prints: $(wc -c <"$dir/err") bytes"
  exit 0
fi

np=2
mk $np reduce_scatter_allgather 4 30 >"$dir/a.json" && mk $np recursive_doubling 5 20 >"$dir/b.json" &&
  mk $np default 1 99 >"$dir/c.json"
"$build/bin/collc-tune" --export-mpich "$dir/sel.json" "$dir"/[abc].json || fail "export failed"
out=$(cat "$dir/sel.json")
jq -e --arg s "comm_size<=$np" '
  def algo: [.. | objects | keys[] | select(startswith("algorithm="))];
  (keys | length) == 44 and (to_entries[:7] | all(.[]; .value["comm_type=intra"]["comm_size=any"] | algo | length >= 1)) and
  (.["collective=allreduce"]["comm_type=intra"][$s] | keys_unsorted) ==
    ["avg_msg_size<=512", "avg_msg_size=any"] and
  (.["collective=allreduce"]["comm_type=intra"][$s]["avg_msg_size<=512"] | algo | index(
    "algorithm=MPIR_Allreduce_intra_reduce_scatter_allgather")) != null and
  (.["collective=allreduce"]["comm_type=intra"][$s]["avg_msg_size=any"] | algo) ==
    ["algorithm=MPIR_Allreduce_intra_recursive_doubling"] and
  (.["collective=bcast"]["comm_type=intra"] | has($s) | not)' "$dir/sel.json" >/dev/null ||
  fail "not the CSEL file expected"
run() { env MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="$1" "${launch[@]}" $np "$prog" "$2" 2>"$dir/err"; }
for n in 1 4096; do
  out=$(run "$dir/sel.json" $n) || fail "the program failed under the CSEL file (count $n)"
  [[ ! -s $dir/err && $out == *ok ]] || fail "count $n: $(cat "$dir/err")"
done
echo "native_export: MPICH ran every collective right under the exported file"
jq 'del(.["collective=bcast"])' "$dir/sel.json" >"$dir/nobcast.json"
! out=$(run "$dir/nobcast.json" 64) || fail "a file without bcast did not stop MPICH: it is not read"
echo "native_export: without bcast's rows MPICH stops: $(grep -m1 -o 'Assertion failed.*' "$dir/err")"
head -c 300 "$dir/sel.json" >"$dir/bad.json"
! out=$(run "$dir/bad.json" 64) || fail "a broken file was taken"
echo "native_export: a broken CSEL file: $(grep -m1 -o 'Assertion failed.*' "$dir/err")"
