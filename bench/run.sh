#!/usr/bin/env bash
# bench/run.sh - the main collc benchmark, run by `make bench` (which builds
# build-openmpi/ first): MPI_Alltoall timed the way Träff's torus all-to-all
# paper does (section 5; see tools/collc-bench.c) for the library's own
# MPI_Alltoall, the torus variants and collc's other all-to-alls.
#
#   bench/run.sh
#
# Environment:
#   BENCH_NP=8          MPI processes (more than the cores: oversubscribed)
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

NP=${BENCH_NP:-8}
MPI=${BENCH_MPI:-openmpi}
ARGS=${BENCH_ARGS:-}
BUILD=${BENCH_BUILD:-build-$MPI}
OUT=bench/out
NAME=$OUT/alltoall-$MPI-p$NP
CORES=$(nproc)

case $MPI in
  openmpi)
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    # Oversubscribed and yielding; Open MPI's AVX ops are wrong on this machine.
    RUN=(mpirun.openmpi --oversubscribe --bind-to none --mca mpi_yield_when_idle 1
         --mca op ^avx -np "$NP")
    ESTIMATE="a few seconds (p=8: 1.5 s measured)" ;;
  mpich)
    RUN=(mpirun.mpich -n "$NP")
    ESTIMATE="minutes (p=8: about 4 min measured; MPICH polls, slow when oversubscribed)" ;;
  *)
    echo "bench/run.sh: BENCH_MPI must be openmpi or mpich, not '$MPI'" >&2
    exit 2 ;;
esac

mkdir -p "$OUT"
make -s all BUILD="$BUILD" MPICC="mpicc.$MPI"

echo "== collc benchmark: MPI_Alltoall, $MPI, p=$NP on $CORES cores"
if ((NP > CORES)); then
  echo "   p=$NP > $CORES cores: oversubscribed, so processes share cores and times include"
  echo "   scheduling; compare variants with each other, not with a real cluster."
fi
echo "   with the default arguments this takes $ESTIMATE"

EXTRA=()
read -r -a EXTRA <<<"$ARGS" # split into words (no quoting: use -a 'A;B' without spaces)
CMD=("${RUN[@]}" "$BUILD/bin/collc-bench" -o "$NAME.csv" "${EXTRA[@]+"${EXTRA[@]}"}")
echo "   ${CMD[*]}"
echo
status=0
start=$SECONDS
"${CMD[@]}" | tee "$NAME.txt" || status=$?
elapsed=$((SECONDS - start))
printf '# command: %s\n# host: %s cores, %d s wall\n' "${CMD[*]}" "$CORES" "$elapsed" >>"$NAME.txt"

LIB=$(sed -n '1s/^# collc-bench alltoall, p=[0-9]*, \([^,]*\),.*/\1/p' "$NAME.txt")
TITLE="MPI_Alltoall, $NP MPI processes"
((NP > CORES)) && TITLE="$TITLE (oversubscribed on $CORES cores)"
TITLE="$TITLE, ${LIB:-$MPI}"
if [[ -s $NAME.csv ]]; then
  gnuplot -e "csv='$NAME.csv'; png='$NAME.png'; plottitle='$TITLE'" bench/plot.gp
fi

echo "== done in ${elapsed} s"
echo "   CSV:   $NAME.csv"
echo "   table: $NAME.txt"
echo "   plot:  $NAME.png"
if ((status != 0)); then
  echo "bench/run.sh: *** collc-bench failed with status $status (3: a variant was WRONG) ***" >&2
fi
exit "$status"
