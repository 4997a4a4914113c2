#!/usr/bin/env bash
# bench/run.sh - the main collc benchmark, run by `make bench` (which builds
# build-openmpi/ first): MPI_Alltoall timed the way Träff's torus all-to-all
# paper does (section 5; see tools/collc-bench.c) for the library's own
# MPI_Alltoall, the torus variants and collc's other all-to-alls.
#
#   bench/run.sh
#
# Environment:
#   BENCH_NP="8 16 32"  process counts, one run each (more than the cores:
#                       oversubscribed)
#   BENCH_MPI=openmpi   or mpich (build-mpich/ is built here; MPICH is slow
#                       when oversubscribed)
#   BENCH_ARGS=         extra collc-bench arguments, e.g. "-c 1,100 -r 20" or
#                       "-l 10000:10" (fewer repetitions for counts >= 10000)
#   BENCH_BUILD=build-$BENCH_MPI   build directory to use (brought up to date
#                       with make here)
#
# Writes bench/out/alltoall-<mpi>-p<np>.csv (collc-bench -o), .txt (the table
# collc-bench prints) and .png (gnuplot, bench/plot.gp). Exits with
# collc-bench's status (3 if a variant computed a wrong result).
set -eu
set -o pipefail
cd "$(dirname "$0")/.."

NP=${BENCH_NP:-8 16 32}
MPI=${BENCH_MPI:-openmpi}
ARGS=${BENCH_ARGS:-}
BUILD=${BENCH_BUILD:-build-$MPI}
OUT=bench/out
CORES=$(nproc)

case $MPI in
  openmpi)
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    # Oversubscribed and yielding; Open MPI's AVX ops are wrong on this machine.
    RUN=(mpirun.openmpi --oversubscribe --bind-to none --mca mpi_yield_when_idle 1
         --mca op ^avx -np)
    ESTIMATE="about 20 s on 2 cores (p = 8, 16, 32: 1, 3 and 15 s measured)" ;;
  mpich)
    RUN=(mpirun.mpich -n)
    ESTIMATE="minutes (p=8: about 4 min measured; MPICH polls, slow when oversubscribed)" ;;
  *)
    echo "bench/run.sh: BENCH_MPI must be openmpi or mpich, not '$MPI'" >&2
    exit 2 ;;
esac

mkdir -p "$OUT"
make -s all BUILD="$BUILD" MPICC="mpicc.$MPI"

EXTRA=()
read -r -a EXTRA <<<"$ARGS" # split into words (no quoting: use -a 'A;B' without spaces)
status=0

# bench_one NP: one collc-bench run at NP processes; table, CSV and plot.
bench_one() {
  local np=$1 name=$OUT/alltoall-$MPI-p$1 rc=0 start=$SECONDS
  local cmd=("${RUN[@]}" "$np" "$BUILD/bin/collc-bench" -o "$name.csv"
             "${EXTRA[@]+"${EXTRA[@]}"}")
  echo "== MPI_Alltoall, $MPI, p=$np on $CORES cores"
  ((np > CORES)) && echo "   p=$np > $CORES cores: oversubscribed; compare variants with each other"
  echo "   ${cmd[*]}"
  "${cmd[@]}" | tee "$name.txt" || rc=$?
  local elapsed=$((SECONDS - start))
  printf '# command: %s\n# host: %s cores, %d s wall\n' "${cmd[*]}" "$CORES" "$elapsed" >>"$name.txt"
  local lib title
  lib=$(sed -n '1s/^# collc-bench alltoall, p=[0-9]*, \([^,]*\),.*/\1/p' "$name.txt")
  title="MPI_Alltoall, $np MPI processes"
  ((np > CORES)) && title="$title (oversubscribed on $CORES cores)"
  title="$title, ${lib:-$MPI}"
  [[ -s $name.csv ]] && gnuplot -e "csv='$name.csv'; png='$name.png'; plottitle='$title'" bench/plot.gp
  echo "   $elapsed s; table $name.txt, CSV $name.csv, plot $name.png"
  echo
  if ((rc != 0)); then
    echo "bench/run.sh: *** collc-bench failed with status $rc (3: a variant was WRONG) ***" >&2
    status=$rc
  fi
}

echo "== collc benchmark, $MPI, p in {$NP}; with the defaults this takes $ESTIMATE"
t0=$SECONDS
for np in $NP; do bench_one "$np"; done
echo "== all done in $((SECONDS - t0)) s"
exit "$status"
