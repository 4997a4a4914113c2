#!/usr/bin/env bash
# bench/tune-native.sh LIBRARY BUILD NP OUTDIR COLLS [COLLC-TUNE ARGS...]
#
# Native tuning, exported (README, "Native tuning, exported"): collc-tune
# once per native algorithm of each collective of COLLS (comma separated),
# forced through the MPI library's own switches (LIBRARY "Open MPI":
# coll_tuned_<coll>_algorithm with coll_tuned_use_dynamic_rules, the values
# ompi_info lists; "MPICH": MPIR_CVAR_<COLL>_INTRA_ALGORITHM, the names
# below), then the fastest per size exported (OUTDIR/native-rules.txt, or
# OUTDIR/native-csel.json for MPICH), then collc-tune again with that file
# in force: OUTDIR/tuning.json, whose baseline is the best native
# configuration, not only the default one. LAUNCH (default: as tests/run.sh)
# is the launcher up to its process-count flag; e.g.
#   bench/tune-native.sh "Open MPI" build-openmpi 2 bench/out/native allreduce --quick
set -eu
lib=$1 build=$2 np=$3 out=$4 colls=$5
shift 5
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out"/native-*.json
declare -A mpich_algos=(
  [allreduce]="recursive_doubling reduce_scatter_allgather"
  [reduce]="binomial reduce_scatter_gather"
  [bcast]="binomial scatter_recursive_doubling_allgather scatter_ring_allgather"
  [allgather]="brucks recursive_doubling ring"
  [alltoall]="brucks pairwise scattered"
  [reduce_scatter_block]="noncommutative recursive_doubling pairwise recursive_halving")
if [[ $lib == "Open MPI" ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  read -ra launch <<<"${LAUNCH:-mpirun.openmpi --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 --mca op ^avx --mca btl_vader_single_copy_mechanism none -np}"
else
  read -ra launch <<<"${LAUNCH:-mpirun.mpich -n}"
fi

# The native algorithms of collective $1 (Open MPI: numbers, 0 "ignore" left out).
algos() {
  if [[ $lib == "Open MPI" ]]; then
    ompi_info --param coll tuned --level 9 --parsable |
      sed -n "s/^mca:coll:tuned:param:coll_tuned_$1_algorithm:enumerator:value:\([1-9][0-9]*\):.*/\1/p"
  else
    echo "${mpich_algos[$1]:-}"
  fi
}
# The environment that forces algorithm $2 of collective $1.
force() {
  if [[ $lib == "Open MPI" ]]; then
    echo "OMPI_MCA_coll_tuned_use_dynamic_rules=1 OMPI_MCA_coll_tuned_$1_algorithm=$2"
  else
    echo "MPIR_CVAR_${1^^}_INTRA_ALGORITHM=$2"
  fi
}

for c in ${colls//,/ }; do
  for a in $(algos "$c"); do
    echo "tune-native: $c algorithm $a" >&2
    # shellcheck disable=SC2046
    env $(force "$c" "$a") "${launch[@]}" "$np" "$build/bin/collc-tune" -C "$c" \
      -o "$out/native-$c-$a.json" "$@" >/dev/null
  done
done
if [[ $lib == "Open MPI" ]]; then
  rules=$out/native-rules.txt
  "$build/bin/collc-tune" --export-ompi "$rules" "$out"/native-*.json
  use=(OMPI_MCA_coll_tuned_use_dynamic_rules=1 OMPI_MCA_coll_tuned_dynamic_rules_filename="$rules")
else
  rules=$out/native-csel.json
  "$build/bin/collc-tune" --export-mpich "$rules" "$out"/native-*.json
  use=(MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="$rules")
fi
echo "tune-native: the best native algorithms: $rules; collc-tune against them" >&2
env "${use[@]}" "${launch[@]}" "$np" "$build/bin/collc-tune" -C "$colls" -o "$out/tuning.json" "$@"
