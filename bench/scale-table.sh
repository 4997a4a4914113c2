#!/usr/bin/env bash
# bench/scale-table.sh - markdown tables from a merged collc-scale CSV
# (bench/scale.sh): one row per count; the time of every variant in
# microseconds, then the speedup of every variant over the best native
# selector at that count (> 1: faster than every native). Variants in order
# of first appearance; "WRONG" or "-" where a variant was wrong or unfit.
#
#   bench/scale-table.sh FILE.csv TITLE
set -eu
csv=$1 title=$2
awk -F'"' -v title="$title" '
  NR == 1 { next }
  {
    split($1, a, ","); split($3, b, ",")
    n = a[3]; v = $2; t = b[2] + 0; chk = b[4]
    if (!(v in seen)) { seen[v] = 1; vs[++nv] = v }
    if (!(n in cseen)) { cseen[n] = 1; cs[++nc] = n }
    T[n, v] = chk == "WRONG" ? "WRONG" : t > 0 ? t : "-"
    if (v ~ /^native/ && t > 0 && (!(n in best) || t < best[n])) best[n] = t
  }

  # table(what, speedup): one markdown table of times or of speedups.
  function table(what, speedup,   i, j, x) {
    printf "**%s: %s**\n\n| count |", title, what
    for (i = 1; i <= nv; i++) printf " %s |", vs[i]
    printf "\n|---:|"
    for (i = 1; i <= nv; i++) printf "---:|"
    printf "\n"
    for (j = 1; j <= nc; j++) {
      printf "| %s |", cs[j]
      for (i = 1; i <= nv; i++) {
        x = T[cs[j], vs[i]]
        if (x !~ /^[0-9.e+-]+$/ || x == "-") printf " %s |", x == "" ? "-" : speedup && x != "WRONG" ? "-" : x
        else if (!speedup) printf " %.2f |", x
        else printf " %s |", (cs[j] in best) ? sprintf("%.2f", best[cs[j]] / x) : "-"
      }
      printf "\n"
    }
    printf "\n"
  }
  END {
    table("time (us), min over repetitions of the slowest rank", 0)
    table("speedup over the best native selector (best native time / time)", 1)
  }' "$csv"
