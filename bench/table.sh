#!/usr/bin/env bash
# bench/table.sh - the README's reduction table from `make bench` output:
# per collective and p, each count's native time / default time (what an
# unmodified program gets), **bold** when that is >= 1.1x (the rule picked
# one of ours), and in parentheses the fastest variant where it beats the
# default by more than 5% and native by 10% or more.
#
#   bench/table.sh [DIR]     (default bench/out; reads <coll>-openmpi-p<p>.txt)
#
# With --columns FILE VARIANT...: one row per count of FILE (a collc-bench
# table): native time (us), then each variant's "time (speedup)", the
# fastest of them in bold (the README's per-collective tables).
set -eu
if [[ ${1:-} == --columns ]]; then
  f=$2
  shift 2
  awk -v want="$*" '
    BEGIN { nv = split(want, v, " ") }
    function us(t) { return t >= 100 ? sprintf("%.0f", t) : t >= 10 ? sprintf("%.1f", t) : sprintf("%.2f", t) }
    function flush(   i, best, cell) {
      if (count == "") return
      best = 0
      for (i = 1; i <= nv; i++) if (v[i] != "default" && t[v[i]] != "" && (best == 0 || t[v[i]] < t[best])) best = v[i]
      cell = "| " count " | " bytes " | " us(nat) " |"
      for (i = 1; i <= nv; i++) {
        c = t[v[i]] == "" ? "" : sprintf("%s (%s)", us(t[v[i]]), x[v[i]])
        if (v[i] == best) c = "**" c "**"
        cell = cell " " c " |"
      }
      print cell
      delete t; delete x
    }
    /^ +[0-9]+ +[0-9]+ / {
      if ($1 != count) { flush(); count = $1; bytes = $2 }
      if ($3 == "native") nat = $4
      else { t[$3] = $4; x[$3] = $6 }
    }
    END { flush() }' "$f"
  exit 0
fi
dir=${1:-bench/out}
echo "| collective | p | 10^0 | 10^1 | 10^2 | 10^3 | 10^4 | 10^5 | 10^6 |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
for coll in allreduce reduce_scatter_block allgather reduce bcast; do
  for p in 2 4 8; do
    f=$dir/$coll-openmpi-p$p.txt
    [[ -f $f ]] || continue
    awk -v coll="$coll" -v p="$p" '
      function flush() {
        if (count == "") return
        cell = sprintf("%.2f", dflt)
        if (dflt >= 1.1) cell = "**" cell "**"
        if (best > 1.05 * dflt && best >= 1.1) cell = cell sprintf(" (%s %.2f)", bestname, best)
        cells[ncell++] = cell
      }
      /^ +[0-9]+ +[0-9]+ / {
        if ($1 != count) { flush(); count = $1; best = 0; dflt = 0 }
        s = $6; sub(/x$/, "", s); s += 0
        if ($3 == "default") dflt = s
        else if ($3 != "native" && s > best) { best = s; bestname = $3 }
      }
      END {
        flush()
        row = "| " coll " | " p " |"
        for (i = 0; i < 7; i++) row = row " " (i < ncell ? cells[i] : "") " |"
        print row
      }' "$f"
  done
done
