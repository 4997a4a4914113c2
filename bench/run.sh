#!/usr/bin/env bash
# bench/run.sh - the main collc benchmark, run by `make bench` (which builds
# build-openmpi/ first): MPI collectives timed the way Träff's torus
# all-to-all paper does (section 5; see tools/collc-bench.c), the library's
# own collective side by side with collc's algorithms and its default rule:
# MPI_Alltoall (MPI_INT; native vs. torus, Bruck, direct exchange) and
# MPI_Allreduce, MPI_Reduce_scatter_block, MPI_Allgather, MPI_Reduce,
# MPI_Bcast (MPI_DOUBLE, MPI_SUM, root 0; native vs. recexch, cyclic, tree).
#
#   bench/run.sh
#
# Environment:
#   BENCH_COLLS="alltoall allreduce reduce_scatter_block allgather reduce bcast"
#                       collectives to run (default all, in this order)
#   BENCH_NP="8 16 32"  process counts of alltoall, one run each (more than the
#                       cores: oversubscribed)
#   BENCH_NP_RED="2 4 8"  process counts of the other collectives (p = 2 is not
#                       oversubscribed on 2 cores, 4 and 8 are)
#   BENCH_PERSIST="allreduce"  collectives whose persistent init cost is measured
#                       (collc-bench -P, at BENCH_NP_RED, counts 1, 1000, 10^6;
#                       "" for none)
#   BENCH_MPI=openmpi   or mpich (build-mpich/ is built here; MPICH is slow
#                       when oversubscribed)
#   BENCH_ARGS=         extra collc-bench arguments for every run, e.g.
#                       "-c 1,100 -r 20" or "-l 100000:10" (fewer repetitions
#                       for counts >= 100000)
#   BENCH_BUILD=build-$BENCH_MPI   build directory to use (brought up to date
#                       with make here)
#
# Writes bench/out/<collective>-<mpi>-p<np>.csv (collc-bench -o), .txt (the
# table collc-bench prints) and .png (gnuplot, bench/plot.gp); for -P
# bench/out/<collective>-init-<mpi>-p<np>.csv and .txt. Exits with
# the last failing collc-bench's status (3 if a variant computed a wrong
# result), 0 if none failed.
set -eu
set -o pipefail
cd "$(dirname "$0")/.."

COLLS=${BENCH_COLLS:-alltoall allreduce reduce_scatter_block allgather reduce bcast}
NP=${BENCH_NP:-8 16 32}
NP_RED=${BENCH_NP_RED:-2 4 8}
PERSIST=${BENCH_PERSIST-allreduce}
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
    ESTIMATE="about 1.5 minutes on 2 idle cores (measured: all-to-all at p = 8, 16, 32
   about 35 s, the other five collectives at p = 2, 4, 8 about 50 s; no -l needed),
   up to twice that while other jobs share the cores" ;;
  mpich)
    RUN=(mpirun.mpich -n)
    ESTIMATE="minutes (all-to-all p=8: about 4 min measured; the other collectives
   at p = 2: about 2 s each; MPICH polls, slow when oversubscribed: prefer BENCH_NP_RED=2)" ;;
  *)
    echo "bench/run.sh: BENCH_MPI must be openmpi or mpich, not '$MPI'" >&2
    exit 2 ;;
esac

for coll in $COLLS; do
  case $coll in
    alltoall | allreduce | reduce_scatter_block | allgather | reduce | bcast) ;;
    *) echo "bench/run.sh: unknown collective '$coll' in BENCH_COLLS" >&2; exit 2 ;;
  esac
done

mkdir -p "$OUT"
# The Makefile's tool rule does not list tools/*.h: rebuild collc-bench by hand
# when its collectives table (tools/bench_colls.h) is newer.
[[ tools/bench_colls.h -nt $BUILD/bin/collc-bench ]] && rm -f "$BUILD/bin/collc-bench"
make -s all BUILD="$BUILD" MPICC="mpicc.$MPI"

EXTRA=()
read -r -a EXTRA <<<"$ARGS" # split into words (no quoting: use -a 'A;B' without spaces)
status=0

# header_field TXT SEDEXPR: what the sed expression prints from collc-bench's header.
header_field() { sed -n "$2" "$1" | head -n 1; }

# plot NAME NP: the PNG of NAME.csv, titled from NAME.txt's header.
plot() {
  local name=$1 np=$2 mpiname libtype type per title
  mpiname=$(header_field "$name.txt" 's/^# native = PMPI_\([A-Za-z_]*\) .*/MPI_\1/p')
  libtype=$(header_field "$name.txt" \
            's/^# collc-bench [a-z_]*, p=[0-9]*, \([^,]*\), \(MPI_[A-Z]*\),.*/\1, \2/p')
  type=$(header_field "$name.txt" 's/^# unit: \([^ ]*\) .*/\1/p')
  per=$(header_field "$name.txt" 's/^# unit: [^ ]* \([^;]*\);.*/\1/p')
  title="${mpiname:-$coll}, $np MPI processes"
  ((np > CORES)) && title="$title (oversubscribed on $CORES cores)"
  title="$title, ${libtype:-$MPI}"
  [[ -s $name.csv ]] || return 0
  gnuplot -e "csv='$name.csv'; png='$name.png'; plottitle='$title'; unit='$type'; per='$per'" \
    bench/plot.gp
}

# bench_one COLL NP: one collc-bench run of COLL at NP processes; table, CSV and plot.
bench_one() {
  local coll=$1 np=$2 name=$OUT/$1-$MPI-p$2 rc=0 start=$SECONDS
  local cmd=("${RUN[@]}" "$np" "$BUILD/bin/collc-bench" -C "$coll" -o "$name.csv"
             "${EXTRA[@]+"${EXTRA[@]}"}")
  echo "== $coll, $MPI, p=$np on $CORES cores"
  ((np > CORES)) && echo "   p=$np > $CORES cores: oversubscribed; compare variants with each other"
  echo "   ${cmd[*]}"
  "${cmd[@]}" | tee "$name.txt" || rc=$?
  local elapsed=$((SECONDS - start))
  printf '# command: %s\n# host: %s cores, %d s wall\n' "${cmd[*]}" "$CORES" "$elapsed" >>"$name.txt"
  plot "$name" "$np"
  echo "   $elapsed s; table $name.txt, CSV $name.csv, plot $name.png"
  echo
  if ((rc != 0)); then
    echo "bench/run.sh: *** collc-bench $coll p=$np failed with status $rc (3: a variant was WRONG) ***" >&2
    status=$rc
  fi
}

# persist_one COLL NP: collc-bench -P (init cost next to one execution); table and CSV.
persist_one() {
  local coll=$1 np=$2 name=$OUT/$1-init-$MPI-p$2 rc=0 start=$SECONDS
  local cmd=("${RUN[@]}" "$np" "$BUILD/bin/collc-bench" -P -C "$coll" -c 1,1000,1000000
             -l 100000:10 -o "$name.csv")
  echo "== $coll persistent init vs one execution, $MPI, p=$np on $CORES cores"
  echo "   ${cmd[*]}"
  "${cmd[@]}" | tee "$name.txt" || rc=$?
  printf '# command: %s\n# host: %s cores, %d s wall\n' "${cmd[*]}" "$CORES" \
    $((SECONDS - start)) >>"$name.txt"
  echo
  ((rc == 0)) || status=$rc
}

echo "== collc benchmark, $MPI: $COLLS"
echo "   alltoall at p in {$NP}, the others at p in {$NP_RED}; persistent init: ${PERSIST:-none};"
echo "   with the defaults this takes $ESTIMATE"
t0=$SECONDS
for coll in $COLLS; do
  nps=$NP_RED
  [[ $coll == alltoall ]] && nps=$NP
  for np in $nps; do bench_one "$coll" "$np"; done
done
for coll in $PERSIST; do
  for np in $NP_RED; do persist_one "$coll" "$np"; done
done
echo "== all done in $((SECONDS - t0)) s"
exit "$status"
