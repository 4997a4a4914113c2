#!/usr/bin/env bash
# bench/table.sh - the README's reduction table from `make bench` output:
# per collective and p, each count's native time / default time (what an
# unmodified program gets), **bold** when that is >= 1.1x (the rule picked
# one of ours), and in parentheses the fastest variant where it beats the
# default by more than 5% and native by 10% or more.
#
#   bench/table.sh [DIR]     (default bench/out; reads <coll>-openmpi-p<p>.txt)
set -eu
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
