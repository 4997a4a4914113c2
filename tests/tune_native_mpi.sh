#!/usr/bin/env bash
# tests/tune_native_mpi.sh LIBRARY BUILD: bench/tune-native.sh in quick mode at
# p = 2 for allreduce: one tuning file per native algorithm (Open MPI: each
# value ompi_info lists; MPICH: the driver's two), each recording the algorithm
# it forced; an exported file naming one of them for every size it covers; the
# final tuning file (measured against it) valid, with its guideline report.
set -u
lib=$1 build=$2
dir=$(mktemp -d /tmp/collc-tune-native.XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail() { echo "${out:-}" | tail -30; echo "tune_native: $*"; exit 1; }
out=$(bench/tune-native.sh "$lib" "$build" 2 "$dir" allreduce --quick --budget 3 2>&1) ||
  fail "the driver failed"
if [[ $lib == "Open MPI" ]]; then
  want=$(ompi_info --param coll tuned --level 9 --parsable | sed -n \
    's/^mca:coll:tuned:param:coll_tuned_allreduce_algorithm:enumerator:value:\([1-9][0-9]*\):.*/\1/p')
  rules=$dir/native-rules.txt
  used=$(sed 's/ *#.*//; /^$/d' "$rules" | awk 'NR > 5 { print $2 }')
else
  want="recursive_doubling reduce_scatter_allgather"
  rules=$dir/native-csel.json
  used=$(jq -r '.["collective=allreduce"]["comm_type=intra"]["comm_size<=2"] |
    [.. | objects | keys[] | select(startswith("algorithm="))] | .[]' "$rules" |
    sed "s/.*_intra_//" | sort -u)
fi
for a in $want; do
  f=$dir/native-allreduce-$a.json
  [[ $(jq -r '.native.allreduce' "$f" 2>/dev/null) == "$a" ]] || fail "$f: not a run of $a"
done
[[ -n $used ]] || fail "no allreduce rows in $rules: $(cat "$rules")"
for a in $used; do grep -qx "$a" <<<"${want// /$'\n'}" || fail "$rules names $a"; done
jq -e '(.rules | length >= 1) and (.guidelines | type == "array")' "$dir/tuning.json" \
  >/dev/null || fail "tuning.json not valid"
echo "tune_native: $(wc -w <<<"$want") runs, exported: $(echo $used), tuning.json written"
