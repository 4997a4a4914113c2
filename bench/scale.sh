#!/usr/bin/env bash
# bench/scale.sh - the torus paper's all-to-all experiment at p = 36 x 32 =
# 1152 simulated ranks under SimGrid SMPI with the real collc library
# (build-smpi/bin/collc-scale, built by `make smpi`; `make bench-scale` runs
# this), then the same for allreduce with factor lists.
#
#   bench/scale.sh [--full] [--platform paper|torus3d|fatnode] [--counts LIST]
#                  [--variants 'V1;V2'] [--no-allreduce] [--timeout S]
#
#   --platform  paper: bench/platforms/paper-36x32.xml (default; 36 nodes x 32
#               cores on one switch), torus3d: torus3d-4x3x3.xml (the same
#               nodes on a 3-D torus network), fatnode: fatnode-128.xml (one
#               node of 128 cores; p = 128)
#   --full      all-to-all counts up to 10^4, allreduce up to 10^5, SMPI's
#               basic_linear as a native baseline too, more repetitions (takes
#               hours: basic_linear alone costs ~p^3 simulator work)
#   --counts    all-to-all counts (default 1,10,100; 1000 costs minutes and ~13 GB
#               per native selector at p = 1152)
#   --variants  collc all-to-all variants (default: the paper's four
#               factorisations, each with native and linear components)
#   --timeout   seconds per smpirun (default 300; a run killed by it is
#               reported, the others go on)
#
# One smpirun per native selector (--cfg=smpi/alltoall:ompi, mpich, impi;
# allreduce: ompi, mpich) and one for all collc variants, which runs with
# --cfg=smpi/alltoall:basic_linear because SMPI 3.32's bruck (what the
# selectors pick for small blocks) corrupts memory with the torus plans'
# resized datatypes at 24+ ranks. Every run: communication only,
# deterministic, sends not detached (docs/scale.md says why).
#
# On the paper platform it then compares the cost simulator's predictions
# with these runs (bench/sim-vs-smpi.sh; needs build-openmpi/bin/collc-explain):
# paper-validation.md.
#
# Writes bench/out/scale/<platform>-<coll>.csv (all variants; the native
# ones named native:<selector>), <platform>-runs.csv (per smpirun: wall
# seconds, peak RSS, exit status), <platform>-<coll>.md (tables: time and
# speedup over the best native selector) and .png (bench/plot.gp). Exit
# status: 3 if any check was WRONG, 1 if a run failed, else 0.
set -u
cd "$(dirname "$0")/.."

platform=paper full=0 counts="" variants="" allreduce=1 tmo=300
while [[ $# -gt 0 ]]; do
  case $1 in
  --full) full=1 ;;
  --platform) platform=$2; shift ;;
  --counts) counts=$2; shift ;;
  --variants) variants=$2; shift ;;
  --no-allreduce) allreduce=0 ;;
  --timeout) tmo=$2; shift ;;
  *) sed -n '2,/^set -u/p' "$0" | sed 's/^# \{0,1\}//; /^set -u/d'; exit 2 ;;
  esac
  shift
done

case $platform in
paper | torus3d)
  xml=bench/platforms/$([[ $platform == paper ]] && echo paper-36x32 || echo torus3d-4x3x3).xml
  nodes=36 cores=32 prefix=node-
  # The paper's factorisations; collc_dims_create (torus:d=2,3,4,11) gives
  # exactly these for 1152 (collc-explain alltoall torus:d=3 1152 0).
  dims="36x32 12x12x8 8x6x6x4 3x3x2x2x2x2x2x2x2"
  red="recexch;recexch:-32,-36,36,32;recexch:-4,-4,-8,-9,9,8,4,4;cyclic" ;;
fatnode)
  xml=bench/platforms/fatnode-128.xml nodes=1 cores=128 prefix=fat-
  dims="16x8 8x4x4 4x4x4x2 2x2x2x2x2x2x2"
  red="recexch;recexch:-8,-16,16,8;recexch:-4,-4,-8,8,4,4;cyclic" ;;
*) echo "unknown platform '$platform'" >&2; exit 2 ;;
esac
p=$((nodes * cores))
if [[ -z $variants ]]; then
  variants=""
  for d in $dims; do variants+="torus:$d:native;torus:$d:linear;"; done
  variants=${variants%;}
fi
if ((full)); then
  counts=${counts:-1,10,100,1000,10000} rcounts=1,10,100,1000,10000,100000
  natives="ompi mpich impi basic_linear" rnatives="ompi mpich" reps="-w 2 -r 5"
else
  counts=${counts:-1,10,100} rcounts=1,100,10000
  natives="ompi mpich impi" rnatives="ompi mpich" reps="-w 1 -r 2"
fi

out=bench/out/scale
mkdir -p "$out"
hosts=$out/hosts-$platform
for ((n = 0; n < nodes; n++)); do for ((c = 0; c < cores; c++)); do echo "$prefix$n"; done; done >"$hosts"
runs=$out/$platform-runs.csv
echo "platform,p,coll,run,config,wall_s,maxrss_mb,status" >"$runs"
status=0

# smpi COLL NAME SELECTION CSV ARGS...: one smpirun of collc-scale with
# --cfg=smpi/SELECTION (e.g. alltoall:ompi), recorded in $runs.
smpi() {
  local coll=$1 name=$2 cfg=$3 csv=$4 tfile rc
  shift 4
  tfile=$(mktemp)
  echo "== $platform p=$p $coll $name ($cfg)"
  /usr/bin/time -f "%e %M" -o "$tfile" timeout "$tmo" smpirun -np "$p" -platform "$xml" \
    -hostfile "$hosts" --cfg=smpi/simulate-computation:no --cfg=smpi/host-speed:1Gf \
    --cfg=smpi/lat-factor:0:1 --cfg=smpi/bw-factor:0:1 --cfg=smpi/send-is-detached-thresh:0 \
    --cfg=smpi/auto-shared-malloc-thresh:1048576 --cfg="smpi/$cfg" \
    --log=root.thres:critical build-smpi/bin/collc-scale -C "$coll" -o "$csv" "$@"
  rc=$?
  read -r wall kb < <(tail -1 "$tfile")
  rm -f "$tfile"
  printf '%s,%d,%s,%s,%s,%s,%d,%d\n' "$platform" "$p" "$coll" "$name" "$cfg" "${wall:-0}" \
    $((${kb:-0} / 1024)) "$rc" >>"$runs"
  echo "   wall ${wall:-?} s, peak RSS $((${kb:-0} / 1024)) MB, exit $rc"
  if ((rc == 3)); then status=3; elif ((rc != 0 && status == 0)); then status=1; fi
}

# experiment COLL COUNTS VARIANTS NATIVES: natives one run each (CSV variant
# renamed native:<selector>), then the collc variants in one run; merged.
experiment() {
  local coll=$1 cnt=$2 vars=$3 nats=$4 all=$out/$platform-$1.csv sel
  echo "coll,p,count,variant,time_us,ratio,check" >"$all"
  for sel in $nats; do
    smpi "$coll" "native:$sel" "$coll:$sel" "$out/$platform-$coll-$sel.csv" -c "$cnt" -a native $reps
    [[ -f $out/$platform-$coll-$sel.csv ]] &&
      sed 1d "$out/$platform-$coll-$sel.csv" | sed "s/\"native\"/\"native:$sel\"/" >>"$all"
  done
  smpi "$coll" collc alltoall:basic_linear "$out/$platform-$coll-collc.csv" -c "$cnt" -a "$vars" $reps
  [[ -f $out/$platform-$coll-collc.csv ]] && sed 1d "$out/$platform-$coll-collc.csv" >>"$all"
  bench/scale-table.sh "$all" "$coll, p = $p, $xml" >"$out/$platform-$coll.md"
  cat "$out/$platform-$coll.md"
  gnuplot -e "csv='$all'; png='$out/$platform-$coll.png'; plottitle='MPI_${coll^}, p = $p (SMPI, $(basename "$xml"))'; per='$([[ $coll == alltoall ]] && echo per block || echo per process)'" bench/plot.gp
}

experiment alltoall "$counts" "$variants" "$natives"
((allreduce)) && experiment allreduce "$rcounts" "$red" "$rnatives"

# The cost simulator against these runs (paper platform: the simulator's
# "paper" preset is this platform; sends not detached there: eager=0).
if [[ $platform == paper ]]; then
  f=$out/paper
  BUILD=build-openmpi bench/sim-vs-smpi.sh -S "paper eager=0" -N "$cores" -l 40000 \
    "$f-alltoall-collc.csv" "$f-alltoall-ompi.csv=bruck" "$f-alltoall-impi.csv=bruck" \
    "$f-alltoall-mpich.csv=mpich" $( ((allreduce)) && echo "$f-allreduce-collc.csv" \
    "$f-allreduce-mpich.csv=mpich") >"$out/paper-validation.md" && head -12 "$out/paper-validation.md"
fi
echo "== runs ($runs)"
column -s, -t "$runs"
exit $status
