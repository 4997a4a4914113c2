#!/usr/bin/env bash
# bench/tune-builtin.sh BUILTIN OUT RUN.json...
#
# The built-in rule regenerated from collc-tune runs (make tune; README,
# "The built-in rule from make tune"): OUT gets BUILTIN's top level and, in this order,
#  1. the decision rows of every RUN file (collc-tune's tuning files, one
#     per p), ascending p, each marked "origin": "make tune" with a note
#     naming its run;
#  2. BUILTIN's hand-written rows (those not marked "make tune": the rows
#     of earlier runs are replaced, not kept), in their order, marked
#     "origin": "hand" and their note prefixed with why make tune keeps
#     them ("Hand-written, kept by make tune (REASON)."): another MPI
#     library, a collective or a nonblocking form the runs did not time, a
#     p or byte range beyond the runs', or, where the runs' rows cover it
#     at every p it names, that it never decides (kept so that its note
#     and measurements stay with the rule).
# Rows are tried in order, so the runs' rows decide wherever they apply
# (each run's rows cover its p from 0 B up), and the hand-written ones
# elsewhere. Member "make_tune" records the runs (p, library, method,
# calibration, the number of guideline violations); their points are left
# out (the library carries the rule). A RUN file that is not a tuning file
# of one library and one p, or repeats a library and p, is ignored with one
# warning. Exit 0; 2 if no RUN file is usable, BUILTIN is not a tuning file,
# or the result would have more rows than the library reads (512): OUT is
# then not written. OUT may be BUILTIN (written through a temporary file).
set -u -o pipefail
if (($# < 3)); then
  echo "usage: bench/tune-builtin.sh BUILTIN OUT RUN.json..." >&2
  exit 2
fi
builtin=$1 out=$2
shift 2
max_rows=512 # TUNE_MAX_ROWS (src/plan/tuning.h)

jq -e '.format == "collc-tuning" and .version == 1 and (.rules | type == "array")' \
  "$builtin" >/dev/null 2>&1 || { echo "tune-builtin: $builtin: not a tuning file" >&2; exit 2; }

# The usable RUN files, each library and p once.
runs=() seen=" "
for f in "$@"; do
  key=$(jq -er '.p as $p | .mpi.library as $l |
    select(.format == "collc-tuning" and .version == 1 and ($l == "Open MPI" or $l == "MPICH") and
           ($p | type == "number" and . >= 1) and (.rules | type == "array") and
           all(.rules[]; .lib == $l and .pmin == $p and .pmax == $p and
               (.coll | type == "string") and (.algo | type == "string") and
               (.bmin | type == "number"))) | "\($l)/\($p)"' "$f" 2>/dev/null)
  if [[ -z $key ]]; then
    echo "tune-builtin: $f: not a collc-tune file of one library and one p; ignored" >&2
  elif [[ $seen == *" $key "* ]]; then
    echo "tune-builtin: $f: a second run of $key; ignored" >&2
  else
    runs+=("$f") seen+="$key "
  fi
done
((${#runs[@]})) || { echo "tune-builtin: no usable run file" >&2; exit 2; }

tmp=$(mktemp "$out.XXXXXX") || exit 2
trap 'rm -f "$tmp"' EXIT
jq -n --slurpfile base "$builtin" --argjson max $max_rows '
  def mark: "Hand-written, kept by make tune";
  def unmarked: sub("^Hand-written, kept by make tune \\([^)]*\\)\\.( |$)"; "");
  def pset: [.[] | tostring] | join(", ");
  # ascending integers as ranges: [2,3,4,7] -> "2-4, 7"
  def ranges: reduce .[] as $x ([]; (length - 1) as $l |
                                    if $l >= 0 and .[$l][1] + 1 == $x then .[$l][1] = $x
                                    else . + [[$x, $x]] end) |
              map(if .[0] == .[1] then "\(.[0])" else "\(.[0])-\(.[1])" end) | join(", ");

  [inputs] | sort_by(.p) as $runs |
  $base[0] as $b |
  # the rows of the runs, marked
  [$runs[] | . as $r | .rules[] |
   . + (if .ratio then {ratio: (((.ratio * 1000 + 0.5) | floor) / 1000)} else {} end) +
       {origin: "make tune",
        note: "make tune: collc-tune at p = \($r.p), \($r.mpi.version)\(
              if $r.method.quick then ", quick" else "" end), budget \($r.method.budget_s) s"}]
  as $tuned |
  # what the runs cover: per library, collective, nb and p the largest bmax (null: all)
  (reduce $tuned[] as $t ({};
     ("\($t.lib)/\($t.coll)/\($t.nb // false)/\($t.pmin)") as $k |
     .[$k] = (if has($k) and .[$k] == null then null
              elif $t.bmax == null then null
              else [.[$k] // 0, $t.bmax] | max end))) as $cov |
  ([$runs[].p] | unique) as $ps |
  ([$runs[].mpi.library] | unique) as $libs |
  # why make tune keeps hand-written row h
  def reason($h):
    "\($h.lib)/\($h.coll)/\($h.nb // false)" as $k |
    [range($h.pmin; ([$h.pmax // $ps[-1], $ps[-1]] | min) + 1) as $p |
     select($cov | has("\($k)/\($p)") | not) | $p] as $gaps |
    ($h.pmax == null or $h.pmax > $ps[-1]) as $above |
    [range($h.pmin; ($h.pmax // $ps[-1]) + 1) as $p | $cov["\($k)/\($p)"] |
     select(. != null and ($h.bmax == null or $h.bmax > .))] as $short |
    if ($libs | index($h.lib)) == null then "make tune measures \($libs | join(", ")) only"
    elif ([$ps[] as $p | select($cov | has("\($k)/\($p)"))] | length) == 0 then
      "make tune did not time \(if $h.nb then "nonblocking " else "" end)\($h.coll)"
    elif ($gaps | length) > 0 or $above then
      ([$h.pmin, $ps[-1] + 1] | max) as $lo |
      ([$gaps | select(length > 0) | ranges] +
       [select($above) | if $h.pmax == null then "\($lo) and above"
                         elif $h.pmax > $lo then "\($lo)-\($h.pmax)" else "\($lo)" end]) as $un |
      "make tune did not measure p = \($un | join(", ")); it measured p = \($ps | pset)"
    elif $short != [] then "make tune measured up to \($short | min) B"
    else "covered by the measured rows before it at every p it names: it never decides"
    end;
  [$b.rules[] | select(.origin != "make tune") |
   . as $h | (.note // "" | unmarked) as $n |
   . + {origin: "hand", note: ("\(mark) (\(reason($h)))." + (if $n == "" then "" else " " + $n end))}]
  as $hand |
  ($tuned + $hand) as $rules |
  if ($rules | length) > $max then
    error("\($rules | length) rows: the library reads at most \($max)")
  else
    $b + {rules: $rules, points: [],
          make_tune: {merged_by: "bench/tune-builtin.sh",
                      rows: ("the decision rows of the runs first (origin \"make tune\": " +
                             "collc-tune, a candidate where >= 5% faster than native in both " +
                             "timing modes, significantly), then the hand-written rows (origin " +
                             "\"hand\": the note says why each is kept, and what it measured); " +
                             "the top-level note describes the hand-written rule"),
                      runs: [$runs[] | {p, collc, mpi, machine, method, calibration, native,
                                        guidelines: (.guidelines // [] | length)}]}}
  end' "${runs[@]}" |
  # one member a line, and one row a line, spaced as tuning/builtin.json is written by hand
  jq -r 'def row: "{" + (to_entries | map("\(.key | tojson): \(.value | tojson)") | join(", ")) +
                  "}";
         . as $d | [keys_unsorted[] | . as $k |
          if $k == "rules" then " \($k | tojson): [\n" + ($d.rules | map("  " + row) | join(",\n")) +
                               "\n ]"
          else " \($k | tojson): \($d[$k] | tojson)" end] | "{\n" + join(",\n") + "\n}"' \
    >"$tmp" && jq -e '.format' "$tmp" >/dev/null ||
  { echo "tune-builtin: merge failed; $out not written" >&2; exit 2; }
chmod 644 "$tmp" && mv "$tmp" "$out" && trap - EXIT # (mktemp made it 0600)
jq -r --arg out "$out" '"tune-builtin: \($out): \([.rules[] | select(.origin == "make tune")] |
  length) rows of \(.make_tune.runs | length) runs (p = \([.make_tune.runs[].p] | map(tostring) |
  join(", "))), then \([.rules[] | select(.origin == "hand")] | length) hand-written"' "$out" >&2
