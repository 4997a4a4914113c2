#!/bin/bash
# The cost simulator against SMPI (issue 6): for every row of collc-scale CSV
# files (coll,p,count,variant,time_us,ratio,check), predict the same plan with
# collc-explain -S and report, per (collective, count), both times, their
# ratio, and Spearman's rank correlation between the two orders of the
# variants; then over all rows with at least LARGE bytes per message the
# largest relative error.
#
#   bench/sim-vs-smpi.sh [-S PARAMS] [-N RANKS_PER_NODE] [-n NATIVE_MODEL]
#                        [-l LARGE] FILE.csv[=MODEL]...
#
#   -S PARAMS  simulator parameters (default paper: bench/platforms/paper-36x32.xml)
#   -N K       ranks per node as the hostfile placed them (default 32)
#   -n TEXT    the collc algorithm that models a "native" row (default linear:
#              SMPI's basic_linear all-to-all); FILE=MODEL models the native rows
#              of that file (another SMPI selector) by MODEL instead, and names
#              them native(MODEL); MODEL "mpich" is MPICH's documented rule, as
#              SMPI's mpich selector follows it: the library's own cost model of
#              native (sim_native_model, also the default rule's)
#   -l BYTES   "large" for the error bound: bytes per block (all-to-all) or per
#              vector (allreduce), default 4000
# Elements are MPI_INT (4 bytes), as collc-scale uses. Prints markdown.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${BUILD:-build-openmpi}/bin
params=paper nodes=32 large=4000
declare -A model=([native]=linear)
while getopts "S:N:n:l:" o; do
  case $o in
  S) params=$OPTARG ;;
  N) nodes=$OPTARG ;;
  n) model[native]=$OPTARG ;;
  l) large=$OPTARG ;;
  *) sed -n '2,20p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
for arg in "$@"; do
  f=${arg%%=*} own=
  [[ $arg == *=* ]] && own=${arg#*=}
  [[ -r $f ]] || { echo "sim-vs-smpi: skipping $f (missing)" >&2; continue; }
  # (the variant is quoted: a factor list holds commas)
  tail -n +2 "$f" | sed -E 's/^([^,]*),([^,]*),([^,]*),"?(.*[^"])"?,([^,]*),([^,]*),([^,]*)$/\1 \2 \3 \4 \5 \6 \7/' |
  while read -r coll p count variant t _ check; do
    [[ $check == WRONG || $check == UNFIT || -z $t ]] && continue
    algo=${model[$variant]:-$variant}
    if [[ $variant == native* && -n $own ]]; then
      algo=$own
      variant="native($own)"
    fi
    [[ $algo == mpich ]] && algo=native # collc-explain -S: the library's model of native
    [[ $algo == native* && $own != mpich ]] && continue
    pred=$("$B/collc-explain" -b 4 -S "$params" -N "$nodes" "$coll" "$algo" "$p" 0 "$count" 2>/dev/null |
           sed -nE 's/^predicted time ([0-9.e+-]+) us.*/\1/p' || true)
    if [[ -n $pred ]]; then echo "$coll $p $count $variant $t $pred"; fi
  done
done | sort -s -k1,1 -k2,2n -k3,3n >"$rows"
awk -v large="$large" '
function spearman(n,   i, j, a, b, sx, sy, sxy, sxx, syy, rx, ry) {
  for (i = 1; i <= n; i++) { rx[i] = 1; ry[i] = 1
    for (j = 1; j <= n; j++) {
      rx[i] += (X[j] < X[i]) + 0.5 * (j != i && X[j] == X[i])
      ry[i] += (Y[j] < Y[i]) + 0.5 * (j != i && Y[j] == Y[i]) } }
  for (i = 1; i <= n; i++) { sx += rx[i]; sy += ry[i] }
  for (i = 1; i <= n; i++) { a = rx[i] - sx / n; b = ry[i] - sy / n; sxy += a * b; sxx += a * a; syy += b * b }
  return sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : 1
}
function flush(   k) {
  if (n == 0) return
  rho = (n > 1) ? spearman(n) : 1
  printf "| %s | %d | %d | %s | %.2f |\n", gcoll, gp, gcount, n, rho
  if (n > 1) { rhos += rho; groups++ }
  n = 0
}
BEGIN { print "| collective | p | count | variants | Spearman rho |"; print "|---|---|---|---|---|" }
{
  key = $1 " " $2 " " $3
  if (key != gkey) { flush(); gkey = key; gcoll = $1; gp = $2; gcount = $3 }
  n++; X[n] = $5; Y[n] = $6
  line[++nl] = sprintf("| %s | %d | %d | %s | %.2f | %.2f | %.2f |", $1, $2, $3, $4, $5, $6, $6 / $5)
  bytes = 4 * $3
  if (bytes >= large) { e = ($6 - $5) / $5; if (e < 0) e = -e; if (e > maxe) { maxe = e; worst = $4 " count " $3 } nlarge++ }
}
END {
  flush()
  printf "\nmean Spearman rho over %d (collective, count) groups: %.2f\n", groups, groups ? rhos / groups : 0
  if (nlarge) printf "largest relative error at >= %d bytes: %.0f%% (%s; %d rows)\n", large, 100 * maxe, worst, nlarge
  print "\n| collective | p | count | variant | SMPI (us) | predicted (us) | predicted / SMPI |"
  print "|---|---|---|---|---|---|---|"
  for (i = 1; i <= nl; i++) print line[i]
}' "$rows"
