#!/usr/bin/env bash
# tests/run.sh - run every collc test; called by `make check` after building
# build-openmpi/ and build-mpich/.
#
#   tests/run.sh [regex]    only cases whose name matches regex
#
# Prints PASS/FAIL per case (with the failing output's tail) and ends with
# the line "N passed, N failed"; exits 1 if anything failed.
set -u
cd "$(dirname "$0")/.."
FILTER=${1:-}
OMPI=build-openmpi
MPICH=build-mpich
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# ob1: the point-to-point layer Open MPI picks here anyway (UCX finds no network and
# declines); naming it skips UCX's probe, 0.2 s of each of ~450 launches.
export OMPI_MCA_pml=ob1
# Open MPI: oversubscribed, yielding; its AVX-512 ops are wrong for 8-bit sums here.
OMPIRUN=(mpirun.openmpi --oversubscribe --bind-to none --mca mpi_yield_when_idle 1
         --mca op ^avx --mca btl_vader_single_copy_mechanism none -np)
MPICHRUN=(mpirun.mpich -n)
pass=0
fail=0
failed=()
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

# report NAME SECONDS RC OUTFILE: count one finished case and print its line (with the
# failing output's tail).
report() {
  local name=$1 secs=$2 rc=$3 out=$4
  if ((rc == 0)); then
    pass=$((pass + 1))
    printf 'PASS %-52s %3ds\n' "$name" "$secs"
  else
    fail=$((fail + 1))
    failed+=("$name")
    printf 'FAIL %-52s %3ds (exit %s%s)\n' "$name" "$secs" "$rc" \
      "$( ((rc == 124)) && echo ', timed out')"
    tail -n 15 "$out" | sed 's/^/     | /'
  fi
}

# run_case NAME TIMEOUT CMD... : one test case; passes if CMD exits 0.
run_case() {
  local name=$1 limit=$2
  shift 2
  [[ -n $FILTER && ! $name =~ $FILTER ]] && return 0
  local t0=$SECONDS out="$log/out" pre=() rc=0
  if declare -F "$1" >/dev/null; then # a shell function: timeout needs a program
    export -f "$1"
    pre=(bash -c '"$@"' _)
  fi
  timeout "$limit" "${pre[@]+"${pre[@]}"}" "$@" >"$out" 2>&1 || rc=$?
  report "$name" $((SECONDS - t0)) $rc "$out"
}

# run_pool TIMEOUT NAME PROGRAM [NAME PROGRAM]... : programs that share nothing (no MPI,
# no fixed files: the unit tests), CHECK_JOBS at a time (default: the cores), reported
# in the order given once all have ended.
run_pool() {
  local limit=$1 i=0 rc t
  shift
  local names=() jobs=${CHECK_JOBS:-$(nproc)}
  while (($# >= 2)); do
    names+=("$1")
    if [[ -z $FILTER || $1 =~ $FILTER ]]; then
      while (($(jobs -rp | wc -l) >= jobs)); do wait -n; done
      (t0=$SECONDS; rc=0; timeout "$limit" "$2" >"$log/pool$i" 2>&1 || rc=$?
       echo "$((SECONDS - t0)) $rc" >"$log/pool$i.rc") &
    fi
    i=$((i + 1))
    shift 2
  done
  wait
  for ((i = 0; i < ${#names[@]}; i++)); do
    [[ -f $log/pool$i.rc ]] || continue
    read -r t rc <"$log/pool$i.rc"
    report "${names[i]}" "$t" "$rc" "$log/pool$i"
    rm -f "$log/pool$i" "$log/pool$i.rc"
  done
}

# quick_case NAME QUICK TIMEOUT CMD...: run_case with COLLC_TEST_QUICK=QUICK (0 or 1: the
# test's smaller matrix) set, and " quick" before NAME's " np=" where it is 1.
quick_case() {
  local name=$1 q=$2 limit=$3
  shift 3
  ((q)) && name=${name/ np=/ quick np=}
  run_case "$name" "$limit" env COLLC_TEST_QUICK="$q" "$@"
}

# golden FILE: line 1 is "# collc-explain ARGS"; the rest is the expected output.
export OMPI
golden() {
  local args
  args=$(head -n 1 "$1" | sed -n 's/^# collc-explain //p')
  # shellcheck disable=SC2086
  diff -u <(tail -n +2 "$1") <("$OMPI/bin/collc-explain" $args)
}

# stats_case NAME NP ENV... PROGRAM: the program passes and rank 0 printed
# the expected collc-stats line (last ENV word EXPECT=<regex>).
expect_stats() {
  local want=$1
  shift
  local out
  out=$("$@" 2>&1) || { echo "$out"; return 1; }
  grep -Eq "$want" <<<"$out" || { echo "$out"; echo "missing stats line: $want"; return 1; }
}

# expect_all REGEX... -- PROGRAM...: the program passes and its output matches every REGEX
# (a REGEX written !REGEX: matches no line).
expect_all() {
  local want=() out
  while [[ $1 != -- ]]; do want+=("$1"); shift; done
  shift
  out=$("$@" 2>&1) || { echo "$out"; return 1; }
  for w in "${want[@]}"; do
    if [[ $w == '!'* ]]; then # (!REGEX: no line may match)
      ! grep -Eq "${w#!}" <<<"$out" || { echo "$out"; echo "unexpected line: ${w#!}"; return 1; }
    else
      grep -Eq "$w" <<<"$out" || { echo "$out"; echo "missing line: $w"; return 1; }
    fi
  done
}

# no_stats PROGRAM...: the program passes and nothing printed a collc-stats line
# (COLLC_DISABLE=1 must make the library a pure pass-through).
no_stats() {
  local out
  out=$("$@" 2>&1) || { echo "$out"; return 1; }
  ! grep -q collc-stats <<<"$out" || { echo "$out"; echo "collc engaged although disabled"; return 1; }
}

# section TITLE: end the last section (its wall-clock time) and begin the next.
section_t0=
section() {
  if [[ -n $section_t0 ]]; then echo "   ($((SECONDS - section_t0)) s)"; fi
  section_t0=$SECONDS
  if [[ -n ${1:-} ]]; then echo "== $1"; fi
}

section "unit tests (no MPI; the plain and the sanitizer builds side by side)"
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# The longest first, in both builds (the pool's tail is then short), then the rest; with
# one more pure program, tests/hot_cost.sh (one process, p = 1, MPI_Init as a singleton).
long=(verify_reductions verify_sweep verify_shm paper verify_alltoallv)
order=()
for n in "${long[@]}"; do order+=("build-asan/tests/unit_$n" "$OMPI/tests/unit_$n"); done
order+=(hot_cost)
for t in "$OMPI"/tests/unit_* build-asan/tests/unit_*; do
  [[ " ${long[*]} " == *" ${t##*/unit_} "* ]] || order+=("$t")
done
units=()
for t in "${order[@]}"; do
  case $t in
    hot_cost) units+=("openmpi/memo fast path: natively served calls under 400 instructions np=1"
                      tests/hot_cost.sh) ;;
    *) units+=("$([[ $t == build-asan/* ]] && echo asan/)unit/${t##*/unit_}" "$t") ;;
  esac
done
run_pool 300 "${units[@]}"

section "golden explain listings"
for g in tests/golden/*.txt; do
  run_case "golden/$(basename "$g" .txt)" 30 golden "$g"
done

section "MPI tests, Open MPI"
for np in 1 2 3 4 5 6 7 8 9 10 11 12; do
  run_case "openmpi/alltoall np=$np" 300 "${OMPIRUN[@]}" $np "$OMPI/tests/mpi_alltoall"
done
for np in 1 2 4 5 6 8; do
  run_case "openmpi/factorize np=$np" 120 "${OMPIRUN[@]}" $np "$OMPI/tests/mpi_factorize"
done
for np in 1 3; do
  run_case "openmpi/errors np=$np" 60 "${OMPIRUN[@]}" $np "$OMPI/tests/mpi_errors"
done
run_case "openmpi/errors bad COLLC_ALLTOALL np=3" 60 env COLLC_ALLTOALL=torus:7x7 \
  COLLC_TEST_WARNINGS=1 "${OMPIRUN[@]}" 3 "$OMPI/tests/mpi_errors"
run_case "openmpi/alltoall self-test must fail np=4" 60 bash -c '! "$@"' _ \
  env COLLC_TEST_BREAK=7 "${OMPIRUN[@]}" 4 "$OMPI/tests/mpi_alltoall"
run_case "openmpi/valgrind factorize np=2" 300 tests/valgrind_leaks.sh \
  "${OMPIRUN[@]}" 2 -- "$OMPI/tests/mpi_factorize"
for np in 1 2; do
  run_case "openmpi/kernels np=$np" 120 "${OMPIRUN[@]}" $np "$OMPI/tests/mpi_kernels"
done
run_case "openmpi/kernels with the AVX op component np=2" 120 mpirun.openmpi --oversubscribe \
  --bind-to none --mca mpi_yield_when_idle 1 --mca btl_vader_single_copy_mechanism none \
  -np 2 "$OMPI/tests/mpi_kernels"
run_case "openmpi/kernels self-test must fail np=2" 60 bash -c '! "$@"' _ \
  env COLLC_TEST_BREAK=7 "${OMPIRUN[@]}" 2 "$OMPI/tests/mpi_kernels"
# Barrier (tests/mpi/barrier.c: every exit after every entry, by a shared window):
# every algorithm forced for p = 1, 2, 3, 5, 6, 8 (hier on virtual nodes of 2 and 3: full,
# uneven, single-rank nodes), its stats line, and a broken barrier (one rank leaves at
# once) that must fail. (Every p to 64: tests/unit/verify_barrier.c.)
for np in 1 2 3 5 6 8; do
  for spec in "native" "dissem" "dissem:3" "dissem:$((np > 1 ? np : 2))" "flags" "flags:2" "shm:dissem" \
    "hier 2" "hier:net=dissem:3 3"; do
    read -r algo k <<<"$spec"
    run_case "openmpi/barrier $algo np=$np${k:+ node=$k}" 120 expect_stats \
      "^collc-stats: barrier ${algo%%:*} calls=90 bytes=0" env COLLC_STATS=1 COLLC_BARRIER=$algo \
      ${k:+COLLC_NODE_SIZE=$k} "${OMPIRUN[@]}" $np "$OMPI/tests/mpi_barrier"
  done
done
# The default rule's barrier rows (tuning/builtin.json, measured: README, Barrier):
# flags at p = 8 on one node, native at p = 2, 4, 5, 6 and on virtual nodes of 2.
for spec in "8 flags builtin" "2 native none" "4 native none" "5 native none" "6 native none" \
  "8 native none 2"; do
  read -r np algo from k <<<"$spec"
  run_case "openmpi/barrier default rule np=$np${k:+ node=$k}: $algo" 120 expect_all \
    "^collc-stats: barrier $algo calls=90 bytes=0 from=$from\$" \
    "^collc-stats: ibarrier $algo calls=31 bytes=0 from=$from\$" -- \
    env COLLC_STATS=1 ${k:+COLLC_NODE_SIZE=$k} "${OMPIRUN[@]}" $np "$OMPI/tests/mpi_barrier"
done
for spec in "dissem 0" "hier 2" "flags 0"; do
  read -r algo k <<<"$spec"
  run_case "openmpi/barrier $algo broken must fail np=4" 60 bash -c '! "$@"' _ env \
    COLLC_BARRIER=$algo COLLC_NODE_SIZE=$k COLLC_TEST_BARRIER_EARLY=3 "${OMPIRUN[@]}" 4 \
    "$OMPI/tests/mpi_barrier"
done
# Allgatherv and reduce_scatter (tests/mpi/vcoll.c: every algorithm forced, against
# PMPI_ on the same input), the stats line proving recexch ran, and a corrupted
# result that must fail.
for np in 1 2 3 4 5 6 7 8; do
  run_case "openmpi/vcoll np=$np" 300 expect_stats "^collc-stats: allgatherv recexch calls=" \
    env COLLC_STATS=1 "${OMPIRUN[@]}" $np "$OMPI/tests/mpi_vcoll"
done
run_case "openmpi/vcoll self-test must fail np=4" 120 bash -c '! "$@"' _ \
  env COLLC_TEST_BREAK=9 "${OMPIRUN[@]}" 4 "$OMPI/tests/mpi_vcoll"
# Gather, scatter, gatherv and scatterv (tests/mpi/rooted.c: every root, every algorithm
# forced, against PMPI_ on the same input), the stats lines proving the trees ran; the MPI_
# and MPI_I* entry points forced through COLLC_<COLL> (the stats line of the nonblocking
# tree; gatherv's and scatterv's tree by the agreement round, blocking, persistent and
# nonblocking (the round started at the call, the plan compiled when it completes); on
# elements of two sizes the default rule with a warning); a corrupted result that must
# fail.
for np in 1 2 3 4 5 6 7 8; do
  run_case "openmpi/rooted gather scatter np=$np" 120 expect_all "^collc-stats: gather tree calls=" \
    "^collc-stats: gatherv tree calls=" "^collc-stats: scatterv tree calls=" -- \
    env COLLC_STATS=1 "${OMPIRUN[@]}" $np "$OMPI/tests/mpi_rooted"
done
run_case "openmpi/rooted gather scatter COLLC_<COLL> np=3" 120 \
  expect_stats "^collc-stats: iscatter tree calls=[0-9]+ bytes=[0-9]+ from=env" \
  env COLLC_STATS=1 COLLC_GATHER=tree:3 COLLC_SCATTER=tree COLLC_GATHERV=linear \
  COLLC_SCATTERV=linear "${OMPIRUN[@]}" 3 "$OMPI/tests/mpi_rooted"
run_case "openmpi/rooted gather scatter COLLC_<COLL>, v-forms tree np=5" 120 expect_all \
  "^collc-stats: gatherv tree calls=[0-9]+ bytes=[0-9]+ from=env" \
  "^collc-stats: scatterv tree calls=[0-9]+ bytes=[0-9]+ from=env" \
  "^collc-stats: igatherv tree calls=[0-9]+ bytes=[0-9]+ from=env" \
  "^collc-stats: iscatterv tree calls=[0-9]+ bytes=[0-9]+ from=env" \
  "tree: gatherv needs the root's counts on every rank" -- \
  env COLLC_STATS=1 COLLC_GATHER=tree:3 COLLC_SCATTER=tree COLLC_GATHERV=tree \
  COLLC_SCATTERV=tree:3 "${OMPIRUN[@]}" 5 "$OMPI/tests/mpi_rooted"
run_case "openmpi/rooted gather scatter COLLC_NODE_SIZE=2 np=4" 120 env COLLC_NODE_SIZE=2 \
  COLLC_GATHER=tree COLLC_SCATTER=linear "${OMPIRUN[@]}" 4 "$OMPI/tests/mpi_rooted"
for nn in "5 2" "7 3"; do # (hier over virtual nodes, one of them a single rank)
  read -r np node <<<"$nn"
  run_case "openmpi/rooted gather scatter hier np=$np node=$node" 120 expect_all \
    "^collc-stats: gather hier calls=" "^collc-stats: scatterv hier calls=" \
    "^collc-stats: scatter hier calls=[0-9]+ bytes=[0-9]+ from=env" -- env COLLC_STATS=1 \
    COLLC_NODE_SIZE=$node COLLC_SCATTER=hier "${OMPIRUN[@]}" $np "$OMPI/tests/mpi_rooted"
done
run_case "openmpi/rooted gather scatter self-test must fail np=3" 120 bash -c '! "$@"' _ \
  env COLLC_TEST_BREAK=7 "${OMPIRUN[@]}" 3 "$OMPI/tests/mpi_rooted"
# hier over virtual nodes (one message per node pair, the segment inside).
for spec in "5 2" "7 3"; do
  read -r np k <<<"$spec"
  run_case "openmpi/vcoll allgatherv reduce_scatter hier np=$np node=$k" 120 expect_all \
    "^collc-stats: allgatherv hier calls=[0-9]+ bytes=[1-9]" \
    "^collc-stats: reduce_scatter hier calls=[0-9]+ bytes=[1-9]" -- \
    env COLLC_STATS=1 COLLC_NODE_SIZE=$k "${OMPIRUN[@]}" $np "$OMPI/tests/mpi_vcoll"
done
# Their nonblocking and persistent forms (tests/mpi/vforms.c: 1..16 outstanding,
# mixed with native requests, every algorithm forced; persistent started again
# with new input), under their own stats names; then by COLLC_<COLL>.
for np in 1 2 3 5 8; do
  run_case "openmpi/vforms allgatherv reduce_scatter np=$np" 120 expect_all \
    "^collc-stats: iallgatherv recexch calls=[0-9]+ bytes=[0-9]+ from=call\$" \
    "^collc-stats: ireduce_scatter cyclic calls=[0-9]+ bytes=[0-9]+ from=call\$" \
    "^collc-stats: allgatherv shm calls=[0-9]+ bytes=[0-9]+ from=info\$" \
    "^collc-stats: reduce_scatter recexch calls=[0-9]+ bytes=[0-9]+ from=info\$" -- \
    env COLLC_STATS=1 "${OMPIRUN[@]}" $np "$OMPI/tests/mpi_vforms"
done
run_case "openmpi/vforms allgatherv reduce_scatter by COLLC_<COLL> np=4" 120 expect_all \
  "^collc-stats: iallgatherv recexch calls=[0-9]+ bytes=[0-9]+ from=env\$" \
  "^collc-stats: ireduce_scatter recexch calls=[0-9]+ bytes=[0-9]+ from=env\$" -- \
  env COLLC_STATS=1 COLLC_ALLGATHERV=recexch COLLC_REDUCE_SCATTER=recexch "${OMPIRUN[@]}" 4 \
  "$OMPI/tests/mpi_vforms"
run_case "openmpi/vforms allgatherv reduce_scatter hier persistent np=6 node=4" 120 expect_all \
  "^collc-stats: allgatherv hier calls=30 bytes=[1-9][0-9]* from=info\$" \
  "^collc-stats: reduce_scatter hier calls=15 bytes=[0-9]+ from=info\$" -- \
  env COLLC_STATS=1 COLLC_NODE_SIZE=4 "${OMPIRUN[@]}" 6 "$OMPI/tests/mpi_vforms"
run_case "openmpi/vforms allgatherv reduce_scatter self-test must fail np=4" 120 bash -c '! "$@"' _ \
  env COLLC_TEST_BREAK=9 "${OMPIRUN[@]}" 4 "$OMPI/tests/mpi_vforms"
# Alltoallv (tests/mpi/alltoallv.c: blocking, nonblocking and persistent, every
# algorithm forced, against PMPI_Alltoallv on the same input), on virtual nodes too; COLLC_ALLTOALLV
# forcing the default selection (its stats line); the guard serving Open MPI's
# in-place Ialltoallv (its stats line); a corrupted result must fail.
for np in 1 2 3 4 5 6 7 8; do
  run_case "openmpi/alltoallv np=$np" 120 "${OMPIRUN[@]}" $np "$OMPI/tests/mpi_alltoallv"
done
run_case "openmpi/alltoallv np=5 node=2" 120 env COLLC_NODE_SIZE=2 "${OMPIRUN[@]}" 5 \
  "$OMPI/tests/mpi_alltoallv"
run_case "openmpi/alltoallv COLLC_ALLTOALLV=pairwise np=3" 120 expect_stats \
  "^collc-stats: alltoallv pairwise calls=[0-9]+ bytes=[0-9]+ from=env" \
  env COLLC_ALLTOALLV=pairwise COLLC_STATS=1 "${OMPIRUN[@]}" 3 "$OMPI/tests/mpi_alltoallv"
run_case "openmpi/alltoallv guard: in-place ialltoallv served by linear np=2" 120 expect_stats \
  "^collc-stats: ialltoallv linear calls=[0-9]+ bytes=[0-9]+ from=guard" \
  env COLLC_STATS=1 "${OMPIRUN[@]}" 2 "$OMPI/tests/mpi_alltoallv"
# hier over unequal blocks: its agreement round (every rank's send counts) at
# each blocking call and at the persistent init; forced where the elements
# differ in size, MPI_ERR_ARG. Nodes of 2, of 3 and 1, one node of 3.
for c in "5 2" "4 3" "3 0"; do
  set -- $c
  where="node=$2" && [[ $2 == 0 ]] && where="one node"
  run_case "openmpi/alltoallv hier agreed, forced and persistent np=$1 $where" 120 expect_all \
    "^collc-stats: alltoallv hier calls=84 .*from=call" \
    "^collc-stats: alltoallv hier calls=168 .*from=info" -- \
    env COLLC_TEST_HIER=1 COLLC_NODE_SIZE=$2 COLLC_STATS=1 "${OMPIRUN[@]}" $1 "$OMPI/tests/mpi_alltoallv"
done
# torus over unequal blocks: the same agreement, d = 2 at p = 4 and 6 (2x2, 3x2),
# d = 3 at p = 8 (three rounds: the scratch halves alternate), a prime p (one round);
# nonblocking too (two outstanding: the round at the call, the plan when it completes).
for c in "4 2" "6 2" "8 3" "5 2"; do
  set -- $c
  run_case "openmpi/alltoallv torus:d=$2 agreed, forced, nonblocking and persistent np=$1" 120 \
    expect_all "^collc-stats: alltoallv torus calls=84 .*from=call" \
    "^collc-stats: ialltoallv torus calls=168 .*from=call" \
    "^collc-stats: alltoallv torus calls=168 .*from=info" -- \
    env COLLC_TEST_AGREE=torus:d=$2 COLLC_STATS=1 "${OMPIRUN[@]}" $1 "$OMPI/tests/mpi_alltoallv"
done
# An unusable COLLC_ALLTOALLV falls back to the rule, and the guard still holds
# for the persistent and nonblocking calls (it hung: they reused the blocking
# call's unguarded native decision).
run_case "openmpi/alltoallv unusable COLLC_ALLTOALLV=torus (no dims) keeps the guard np=2" 120 expect_stats \
  "^collc-stats: ialltoallv linear calls=[0-9]+ bytes=[0-9]+ from=guard" \
  env COLLC_ALLTOALLV=torus COLLC_STATS=1 "${OMPIRUN[@]}" 2 "$OMPI/tests/mpi_alltoallv"
run_case "openmpi/alltoallv self-test must fail np=4" 120 bash -c '! "$@"' _ \
  env COLLC_TEST_BREAK=9 "${OMPIRUN[@]}" 4 "$OMPI/tests/mpi_alltoallv"
# Batches (issue 16): the host batch executor against the scalar path, byte
# for byte, every registry algorithm, p = 1..8 in one process; then whole
# collectives with COLLC_EXEC=batch against native (the stats line proves
# the plans had batches).
run_case "openmpi/batch executor np=1" 120 "${OMPIRUN[@]}" 1 "$OMPI/tests/mpi_batch"
run_case "openmpi/batch reductions np=4" 180 expect_stats 'collc-batch: plans=[0-9]+ batched=[1-9]' \
  env COLLC_EXEC=batch COLLC_STATS=1 "${OMPIRUN[@]}" 4 "$OMPI/tests/mpi_reductions"
run_case "openmpi/batch hier reductions np=5 node=2" 180 env COLLC_EXEC=batch COLLC_TEST_HIER=1 \
  COLLC_NODE_SIZE=2 "${OMPIRUN[@]}" 5 "$OMPI/tests/mpi_reductions"
run_case "openmpi/batch alltoall np=6" 180 env COLLC_EXEC=batch "${OMPIRUN[@]}" 6 "$OMPI/tests/mpi_alltoall"
run_case "openmpi/batch persistent np=3" 180 env COLLC_EXEC=batch "${OMPIRUN[@]}" 3 "$OMPI/tests/mpi_persistent"
run_case "openmpi/batch nonblocking np=4 node=2" 180 env COLLC_EXEC=batch COLLC_NODE_SIZE=2 \
  "${OMPIRUN[@]}" 4 "$OMPI/tests/mpi_nonblocking"
# Device buffers without a GPU (tests/mpi/device.c): a fake device range;
# every collective, blocking/nonblocking/persistent, with device buffers
# served by the MPI library (mem=cuda lines with exact counts), host buffers
# in the same run by the forced plans; COLLC_CUDA=0 keeps libcudart out.
DEVICE_ENV=(COLLC_STATS=1 COLLC_ALLREDUCE=recexch COLLC_ALLGATHER=recexch
            COLLC_REDUCE_SCATTER_BLOCK=recexch COLLC_REDUCE=tree COLLC_BCAST=tree COLLC_ALLTOALL=linear)
DEVICE_WANT=()
for c in allreduce:recexch reduce_scatter_block:recexch allgather:recexch reduce:tree bcast:tree \
         alltoall:linear; do
  DEVICE_WANT+=("collc-stats: ${c%%:*} native mem=cuda calls=8 " "collc-stats: i${c%%:*} native mem=cuda calls=4 "
                "collc-stats: ${c%%:*} ${c#*:} calls=12 " "collc-stats: i${c%%:*} ${c#*:} calls=4 ")
done
# device_cases LIB RUN... : the device cases of one MPI library (build dir LIB).
device_cases() {
  local lib=$1 np
  shift
  for np in 1 3; do
    run_case "$lib/device buffers native np=$np" 120 expect_all "${DEVICE_WANT[@]}" \
      'collc-cuda: fake device' -- env "${DEVICE_ENV[@]}" "$@" $np "build-$lib/tests/mpi_device"
  done
  run_case "$lib/device COLLC_CUDA=0 no libcudart np=2" 60 expect_stats 'collc-cuda: off' \
    env COLLC_CUDA=0 COLLC_STATS=1 "$@" 2 "build-$lib/tests/mpi_device" cudart 0
  if ldconfig -p 2>/dev/null | grep -q 'libcudart\.so'; then # (the check can fail: loaded)
    run_case "$lib/device libcudart loaded by default np=2" 60 \
      "$@" 2 "build-$lib/tests/mpi_device" cudart 1
  fi
}
device_cases openmpi "${OMPIRUN[@]}"
# The GPU paths on the fake CUDA (tests/fakecuda: a runtime on host memory and a
# host build of libcollc_cuda.so, next to a copy of libcollc.so that is preloaded):
# tests/mpi/gpu_preload.c, every collective with "device" buffers against PMPI_ on
# host copies, the fake's counters checked around each call (gpu_preload.c).
#  - staged: the library is not CUDA-aware; device memory is PROT_NONE outside the
#    fake's copies (FAKECUDA_PROTECT=1), so host code touching it faults; every
#    blocking call staged (via=staged), no launch, no call to the library;
#  - cuda-aware (COLLC_TEST_CUDA_AWARE=1): the CUDA backend, each batch one
#    launch, checked in order and counted in total (these totals change when the
#    batching of these plans changes, as golden listings do); nonblocking and
#    persistent device calls to the library (native mem=cuda); the three allreduces
#    with a buffer in host memory (one of them host memory at the addresses of freed
#    device buffers: memclass's stale ranges) staged (kernels cannot reach it);
#  - the default rule on the cuda-aware path: every device call is either served
#    by the CUDA backend or counted native mem=cuda (per collective: 6 blocking
#    (4, 2 of them in place; bcast 4, allreduce 13) and 4 persistent calls, and 4
#    nonblocking ones; allgatherv (2 of its 4 calls with a send typing collc copies
#    into place first) and reduce_scatter: blocking only;
#  - COLLC_CUDA=0 with protected device memory must fault (collc then takes
#    device buffers for host ones: the protection can fail a test).
FAKE_FORCE=(COLLC_ALLREDUCE=recexch COLLC_ALLGATHER=recexch COLLC_REDUCE_SCATTER_BLOCK=recexch
            COLLC_REDUCE=tree COLLC_BCAST=tree COLLC_ALLTOALL=linear COLLC_ALLGATHERV=recexch
            COLLC_REDUCE_SCATTER=recexch)
FAKE_ALGOS=(allreduce:recexch:14 reduce_scatter_block:recexch:6 allgather:recexch:6 reduce:tree:6
            bcast:tree:4 alltoall:linear:6 allgatherv:recexch:4 reduce_scatter:recexch:2)
declare -A FAKE_LAUNCHES=([1]=36 [2]=80 [4]=229) # (launches over all ranks, forced plans)
# fake_env LIB [FIRST]: the environment of a program on LIB's fake CUDA (FIRST:
# a library preloaded before collc, e.g. ASan's runtime for an instrumented one).
fake_env() {
  local d=$PWD/build-$1/tests/fakecuda
  echo "LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} LD_PRELOAD=${2:+$2:}$d/libcollc.so COLLC_STATS=1"
}
# mem_totals N PROGRAM...: the program passes, and per collective the device calls
# counted (native mem=cuda + served mem=cuda) are 10 (allreduce 21, bcast 8, allgatherv 4,
# reduce_scatter 2: blocking only), nonblocking 4.
mem_totals() {
  local out
  out=$("$@" 2>&1) || { echo "$out"; return 1; }
  awk 'BEGIN { want["allreduce"] = 21; want["bcast"] = 8; want["allgatherv"] = 4; want["reduce_scatter"] = 2 }
       /^collc-stats: [a-z_]+ [a-z]+ mem=cuda calls=/ { split($5, c, "="); n[$2] += c[2] }
       END { bad = 0
             for (k in n) if (n[k] != (k in want ? want[k] : k ~ /^i/ ? 4 : 10)) { print "device calls of " k ": " n[k]; bad = 1 }
             if (length(n) != 14) { print "collectives counted: " length(n); bad = 1 }
             exit bad }' <<<"$out" || { echo "$out"; return 1; }
}
# fake_exports LIB: the names backend_cuda.c loads are what src/cuda/batch.cu defines
# and what the host build of LIB exports.
fake_exports() {
  local want
  want=$(grep -o '"collc_cuda_[a-z_]*"' src/exec/backend_cuda.c | tr -d '"' | sort)
  diff <(echo "$want") <(grep -oE '^(int|void) collc_cuda_[a-z_]+' src/cuda/batch.cu | awk '{print $2}' | sort) &&
    diff <(echo "$want") <(nm -D --defined-only "build-$1/tests/fakecuda/libcollc_cuda.so" |
                            awk '$3 ~ /^collc_cuda_/ {print $3}' | sort)
}
export -f fake_exports
# fakecuda_cases LIB RUN...: the fake CUDA cases of one MPI library.
fakecuda_cases() {
  local lib=$1 np env want a
  shift
  read -ra env <<<"$(fake_env "$lib")"
  local prog=build-$lib/tests/mpi_gpu_preload
  run_case "$lib/fake cuda backend exports = batch.cu's = what is loaded" 10 fake_exports "$lib"
  run_case "$lib/fake cuda batch kernels = host kernels" 30 expect_all 'pairs checked, 0 wrong' -- \
    env "${env[0]}" "build-$lib/tests/mpi_gpu_kernels" "$PWD/build-$lib/tests/fakecuda/libcollc_cuda.so"
  for np in 1 2 4; do
    want=("gpu check: p=$np cuda-aware=0: ok" "fake: launches=0 staged-calls=$((38 * np))$"
          'collc-cuda: GPU' '!native mem=cuda' '!via=cuda')
    for a in "${FAKE_ALGOS[@]}"; do
      IFS=: read -r c al n <<<"$a"
      [[ $c == allreduce ]] && n=$((n + 3)) # (and the three with a buffer in host memory)
      want+=("collc-stats: $c $al mem=cuda calls=$n via=staged")
    done
    run_case "$lib/fake cuda staged np=$np" 60 expect_all "${want[@]}" -- \
      env "${env[@]}" FAKECUDA_PROTECT=1 "${FAKE_FORCE[@]}" "$@" $np "$prog" check
    want=("gpu check: p=$np cuda-aware=1: ok" "fake: launches=${FAKE_LAUNCHES[$np]} staged-calls=0$"
          'collc-stats: allreduce recexch mem=cuda calls=3 via=staged') # (device and host buffers)
    for a in "${FAKE_ALGOS[@]}"; do
      IFS=: read -r c al n <<<"$a"
      want+=("collc-stats: $c $al mem=cuda calls=$n via=cuda")
      [[ $c == allgatherv || $c == reduce_scatter ]] || # (blocking only)
        want+=("collc-stats: $c native mem=cuda calls=4 " "collc-stats: i$c native mem=cuda calls=4 ")
    done
    run_case "$lib/fake cuda-aware np=$np" 60 expect_all "${want[@]}" -- \
      env "${env[@]}" COLLC_TEST_CUDA_AWARE=1 "${FAKE_FORCE[@]}" "$@" $np "$prog" check
  done
  for np in 2 4; do
    run_case "$lib/fake cuda-aware default rule np=$np" 60 mem_totals \
      env "${env[@]}" COLLC_TEST_CUDA_AWARE=1 "$@" $np "$prog" check
  done
  run_case "$lib/fake cuda COLLC_CUDA=0 protected buffers must fault np=2" 60 bash -c \
    'out=$("$@" 2>&1) && exit 1; grep -Eq "signal 11|Segmentation fault" <<<"$out" || { echo "$out"; exit 1; }' _ \
    env "${env[@]}" FAKECUDA_PROTECT=1 COLLC_CUDA=0 "${FAKE_FORCE[@]}" "$@" 2 "$prog" check
}
fakecuda_cases openmpi "${OMPIRUN[@]}"
# tests/gpu/run.sh runs only on a machine with a GPU: here its syntax, and
# its program built (the normal build compiles it) and refusing to run.
run_case "gpu/run.sh syntax, program built" 30 bash -c \
  'bash -n tests/gpu/run.sh && bash -n tests/gpu/bundle-ompi.sh && test -x "$0/tests/mpi_gpu_preload" &&
   test -x "$0/tests/mpi_gpu_kernels"' "$OMPI"
for np in 1 2 3 4 5 6 7 8 9; do
  run_case "openmpi/reductions np=$np" 180 "${OMPIRUN[@]}" $np "$OMPI/tests/mpi_reductions"
done
# Node-aware plans (hier) on virtual nodes of k ranks: every collective
# against native for p = 1..8, k = 1..4 (uneven and single-rank nodes
# included; p < k is the one node of p = k, run once; the full type and count
# matrix on nodes of 2, uneven at odd p, quick on the others); the stress test of back-to-back
# calls with changing counts.
for k in 1 2 3 4; do
  for np in 1 2 3 4 5 6 7 8; do
    ((np >= k || k == 1)) || continue
    quick_case "openmpi/hier reductions np=$np node=$k" $((k != 2)) 120 env COLLC_TEST_HIER=1 \
      COLLC_NODE_SIZE=$k "${OMPIRUN[@]}" $np "$OMPI/tests/mpi_reductions"
  done
  for np in 2 5 8; do
    ((np >= k)) || continue
    run_case "openmpi/hier alltoall np=$np node=$k" 120 env COLLC_TEST_HIER=1 \
      COLLC_NODE_SIZE=$k "${OMPIRUN[@]}" $np "$OMPI/tests/mpi_alltoall"
  done
  run_case "openmpi/hier stress np=8 node=$k" 180 env COLLC_NODE_SIZE=$k \
    "${OMPIRUN[@]}" 8 "$OMPI/tests/mpi_shm_stress"
done
run_case "openmpi/hier stress np=6 node=4 (4+2)" 180 env COLLC_NODE_SIZE=4 \
  "${OMPIRUN[@]}" 6 "$OMPI/tests/mpi_shm_stress"
run_case "openmpi/hier stress on real nodes np=4" 180 "${OMPIRUN[@]}" 4 "$OMPI/tests/mpi_shm_stress"
# A socket level (COLLC_SOCKET_SIZE; this machine has one socket): node=sockets
# becomes the factor list whose first step stays in a socket.
run_case "openmpi/hier reductions np=8 node=4 sockets of 2" 120 env COLLC_TEST_HIER=1 \
  COLLC_NODE_SIZE=4 COLLC_SOCKET_SIZE=2 "${OMPIRUN[@]}" 8 "$OMPI/tests/mpi_reductions"
run_case "openmpi/hier node=sockets resolves np=8" 120 expect_stats \
  'resolved: hier:node=sockets = hier:node=-2,-2,2,2' env COLLC_NODE_SIZE=4 COLLC_SOCKET_SIZE=2 \
  "${OMPIRUN[@]}" 8 "$OMPI/bin/collc-bench" -C allreduce -c 1,1000 -a 'native;hier:node=sockets' -r 3
# The cost simulator's calibration: its output must read back as parameters.
cal=$(mktemp /tmp/collc-cal.XXXXXX)
run_case "openmpi/calibrate np=4 (2 nodes of 2) -> collc-explain -S" 120 bash -c \
  "COLLC_NODE_SIZE=2 ${OMPIRUN[*]} 4 $OMPI/bin/collc-bench --calibrate $cal && grep -q nic= $cal \
   && $OMPI/bin/collc-explain -S $cal -N 2 allreduce hier 4 0 1000 | grep -q 'predicted time'"
rm -f "$cal"
# collc-bench --overhead: every collective's row (14 blocking, 14 nonblocking), the
# nonblocking ones with the blocking comparison (6 columns), at p = 2 with collc's own
# plans forced.
run_case "openmpi/collc-bench --overhead np=2" 120 bash -c \
  'out=$("$@") && echo "$out" && [ "$(echo "$out" | grep -Ec "^  i[a-z_]+( +-?[0-9.]+){6}$")" = 14 ] &&
   [ "$(echo "$out" | grep -Ec "^  [a-z_]+( +-?[0-9.]+){4}$")" = 14 ]' _ \
  env COLLC_ALLREDUCE=recexch COLLC_BCAST=tree "${OMPIRUN[@]}" 2 "$OMPI/bin/collc-bench" --overhead 1 200
# The default rule asks the simulator from COLLC_SIM_MIN_P ranks where no row applies:
# latency-bound (1 ms per message), p = 9 without shared memory, it predicts linear (one
# round) 4x faster than the modelled native (Bruck, 4 rounds); bad parameters warn and keep
# native. (p = 9 and 5: no all-to-all row there, hand-written or from make tune's p = 2, 4, 8.)
run_case "openmpi/rule by simulation np=9 picks linear" 120 expect_stats \
  '^collc-stats: alltoall linear calls=[0-9]+ bytes=[0-9]+ from=simulator$' \
  env COLLC_SHM=0 COLLC_STATS=1 COLLC_SIM_MIN_P=9 COLLC_SIM_PARAMS="paper lat=1e-3" \
  "${OMPIRUN[@]}" 9 "$OMPI/bin/collc-bench" -c 1 -a 'native;default' -r 2 -w 1
run_case "openmpi/rule by simulation, bad parameters: native" 120 expect_stats \
  'COLLC_SIM_PARAMS.*keeps native' env COLLC_SHM=0 COLLC_STATS=1 COLLC_SIM_MIN_P=5 \
  COLLC_SIM_PARAMS="paper lat=x" "${OMPIRUN[@]}" 5 "$OMPI/bin/collc-bench" -c 1 -a 'native;default' -r 2 -w 1
# shm (any algorithm's messages through the segment) on one node of np ranks
# (np <= 4: above, as hier on one node of np; the quick matrix at odd np here).
for np in 5 6 7 8; do
  quick_case "openmpi/shm reductions np=$np (one node)" $((np % 2)) 120 env COLLC_TEST_HIER=1 \
    COLLC_NODE_SIZE=8 "${OMPIRUN[@]}" $np "$OMPI/tests/mpi_reductions"
done
run_case "openmpi/shm alltoall np=7 (one node)" 120 env COLLC_TEST_HIER=1 \
  "${OMPIRUN[@]}" 7 "$OMPI/tests/mpi_alltoall"
run_case "openmpi/shm stress np=8 (one node)" 180 env COLLC_TEST_SHM=1 \
  "${OMPIRUN[@]}" 8 "$OMPI/tests/mpi_shm_stress"
# Single copy: every message read in place (shm:direct=0), and the same
# plans with Cross Memory Attach off (COLLC_CMA=0: the slots instead).
run_case "openmpi/shm single-copy stress np=6 (one node)" 180 env COLLC_TEST_SHM=2 \
  "${OMPIRUN[@]}" 6 "$OMPI/tests/mpi_shm_stress"
run_case "openmpi/shm single copy off (COLLC_CMA=0) np=5" 120 env COLLC_CMA=0 COLLC_TEST_HIER=1 \
  "${OMPIRUN[@]}" 5 "$OMPI/tests/mpi_reductions"
for k in 2 3; do
  run_case "openmpi/hier persistent np=5 node=$k" 180 env COLLC_TEST_HIER=1 COLLC_NODE_SIZE=$k \
    "${OMPIRUN[@]}" 5 "$OMPI/tests/mpi_persistent"
done
run_case "openmpi/reductions with the AVX op component np=4" 120 mpirun.openmpi --oversubscribe \
  --bind-to none --mca mpi_yield_when_idle 1 --mca btl_vader_single_copy_mechanism none \
  -np 4 "$OMPI/tests/mpi_reductions"
run_case "openmpi/reductions self-test must fail np=4" 60 bash -c '! "$@"' _ \
  env COLLC_TEST_BREAK=7 "${OMPIRUN[@]}" 4 "$OMPI/tests/mpi_reductions"
for coll in allreduce reduce_scatter_block reduce; do
  run_case "openmpi/reductions fallback counted as native ($coll) np=3" 60 expect_stats \
    "^collc-stats: $coll native calls=4 bytes=" \
    env COLLC_STATS=1 COLLC_TEST_FALLBACK=1 "${OMPIRUN[@]}" 3 "$OMPI/tests/mpi_reductions"
done
for spec in "allreduce recexch" "reduce_scatter_block recexch" "reduce tree" "allgather cyclic" \
  "bcast tree"; do
  read -r coll algo <<<"$spec"
  run_case "openmpi/reductions preload stats ($coll $algo) np=6" 120 expect_stats \
    "^collc-stats: $coll $algo calls=[1-9][0-9]* bytes=[1-9]" \
    env COLLC_STATS=1 COLLC_TEST_EXPECT_COLLC=1 COLLC_ALLREDUCE=recexch \
    COLLC_REDUCE_SCATTER_BLOCK=recexch:-3,-2 COLLC_REDUCE=tree:3 COLLC_ALLGATHER=cyclic \
    COLLC_BCAST=tree:2,3 "${OMPIRUN[@]}" 6 -x LD_PRELOAD="$PWD/$OMPI/libcollc.so" \
    "$OMPI/tests/mpi_reductions_preload"
done
# The native correctness guard (src/mpi/guard.c): with Open MPI's defaults (no --mca op ^avx,
# whose AVX-512 8- and 16-bit sums saturate on this CPU; and 4.1.4's MAX of MPI_UNSIGNED_LONG
# compares signed on any CPU), every reduction of the default rule is exact; with the guard
# off the same run must fail; the test hook marks a pair wrong; no false alarm on int sums.
OMPIRUN_DEFAULT=(mpirun.openmpi --oversubscribe --bind-to none --mca mpi_yield_when_idle 1
                 --mca btl_vader_single_copy_mechanism none -np)
run_case "openmpi/guard: native's wrong reductions served by collc, exact np=4" 120 expect_stats \
  '^collc-stats: native MPI_UNSIGNED_LONG MPI_MAX is wrong here: served by collc' \
  env COLLC_STATS=1 COLLC_TEST_EXPECT_COLLC=1 "${OMPIRUN_DEFAULT[@]}" 4 \
  -x LD_PRELOAD="$PWD/$OMPI/libcollc.so" "$OMPI/tests/mpi_reductions_preload"
run_case "openmpi/guard off (COLLC_GUARD=0): the same must fail np=4" 120 bash -c '! "$@"' _ \
  env COLLC_GUARD=0 COLLC_TEST_EXPECT_COLLC=1 COLLC_TEST_QUICK=1 "${OMPIRUN_DEFAULT[@]}" 4 \
  -x LD_PRELOAD="$PWD/$OMPI/libcollc.so" "$OMPI/tests/mpi_reductions_preload"
run_case "openmpi/guard test hook MPI_INT:MPI_SUM np=3" 120 expect_stats \
  '^collc-stats: native MPI_INT MPI_SUM is wrong here: served by collc' \
  env COLLC_STATS=1 COLLC_TEST_QUICK=1 COLLC_TEST_NATIVE_WRONG=MPI_INT:MPI_SUM "${OMPIRUN[@]}" 3 \
  -x LD_PRELOAD="$PWD/$OMPI/libcollc.so" "$OMPI/tests/mpi_reductions_preload"
run_case "openmpi/guard: no false alarm on int and double sums np=3" 120 bash -c \
  'out=$("$@" 2>&1) && echo "$out" | grep -q "^collc-stats: allreduce native" &&
   ! echo "$out" | grep -E "native MPI_(INT|DOUBLE|FLOAT|LONG) MPI_SUM is wrong"' _ \
  env COLLC_STATS=1 COLLC_TEST_QUICK=1 "${OMPIRUN[@]}" 3 \
  -x LD_PRELOAD="$PWD/$OMPI/libcollc.so" "$OMPI/tests/mpi_reductions_preload"
run_case "openmpi/reductions preload cyclic, non-commutative falls back np=5" 120 expect_stats \
  '^collc-stats: allreduce cyclic calls=[1-9][0-9]* bytes=[1-9]' \
  env COLLC_STATS=1 COLLC_ALLREDUCE=cyclic COLLC_REDUCE_SCATTER_BLOCK=cyclic:-3,-3 \
  "${OMPIRUN[@]}" 5 -x LD_PRELOAD="$PWD/$OMPI/libcollc.so" "$OMPI/tests/mpi_reductions_preload"
# Cyclic copy-in forced for the three reductions (virtual nodes of 4: 4 + 2): served for
# commutative operations; every non-commutative call refused, with one warning per text,
# and served by the default rule; every result checked against the reference and PMPI.
copyin_env=(COLLC_STATS=1 COLLC_NODE_SIZE=4 COLLC_ALLREDUCE=hier:node=copyin
            COLLC_REDUCE_SCATTER_BLOCK=hier:node=copyin:g=3 COLLC_REDUCE=hier:node=copyin:g=2)
copyin_want=('^collc-stats: allreduce hier calls=[1-9]' '^collc-stats: reduce hier calls=[1-9]'
  '^collc-stats: reduce_scatter_block hier calls=[1-9]'
  'warning: COLLC_ALLREDUCE=hier:node=copyin: node=copyin: commutative operations only.*using the default rule'
  'warning: COLLC_REDUCE=hier:node=copyin:g=2: node=copyin: commutative.*using the default rule'
  'warning: COLLC_REDUCE_SCATTER_BLOCK=hier:node=copyin:g=3: node=copyin: commutative.*default rule')
run_case "openmpi/reductions preload copyin, non-commutative falls back np=6" 120 expect_all \
  "${copyin_want[@]}" -- env "${copyin_env[@]}" "${OMPIRUN[@]}" 6 \
  -x LD_PRELOAD="$PWD/$OMPI/libcollc.so" "$OMPI/tests/mpi_reductions_preload"
run_case "openmpi/preload stats np=6" 120 expect_stats \
  '^collc-stats: alltoall torus calls=[1-9][0-9]* bytes=[1-9]' \
  env COLLC_STATS=1 COLLC_ALLTOALL=torus:d=2 \
  "${OMPIRUN[@]}" 6 -x LD_PRELOAD="$PWD/$OMPI/libcollc.so" "$OMPI/tests/mpi_alltoall_preload"
run_case "openmpi/preload disabled np=4" 120 no_stats env COLLC_DISABLE=1 COLLC_STATS=1 \
  COLLC_ALLTOALL=bruck "${OMPIRUN[@]}" 4 -x LD_PRELOAD="$PWD/$OMPI/libcollc.so" \
  "$OMPI/tests/mpi_alltoall_preload"
for np in 1 2 3 4 5 6 7 8; do
  run_case "openmpi/persistent np=$np" 180 "${OMPIRUN[@]}" $np "$OMPI/tests/mpi_persistent"
done
run_case "openmpi/persistent self-test must fail np=3" 60 bash -c '! "$@"' _ \
  env COLLC_TEST_BREAK=7 "${OMPIRUN[@]}" 3 "$OMPI/tests/mpi_persistent"
run_case "openmpi/persistent info selects, over the environment np=6" 60 expect_stats \
  '^collc-stats: allreduce recexch calls=3 bytes=[1-9]' env COLLC_STATS=1 COLLC_ALLREDUCE=tree \
  COLLC_TEST_INFO=recexch:-3,-2,2,3 "${OMPIRUN[@]}" 6 "$OMPI/tests/mpi_persistent"
run_case "openmpi/persistent bad info value warns, default rule np=4" 60 expect_stats \
  'info collc_algorithm=recexch:-3,3: .*using the default rule' env COLLC_STATS=1 \
  COLLC_TEST_INFO=recexch:-3,3 "${OMPIRUN[@]}" 4 "$OMPI/tests/mpi_persistent"
run_case "openmpi/persistent disabled: Open MPI's own MPIX_ inits np=3" 120 no_stats \
  env COLLC_DISABLE=1 COLLC_STATS=1 "${OMPIRUN[@]}" 3 "$OMPI/tests/mpi_persistent"
run_case "openmpi/persistent preload, MPIX_ names (allgatherv reduce_scatter too) np=5" 120 \
  expect_all '^collc-stats: alltoall bruck calls=5 bytes=[1-9]' \
  '^collc-stats: allgatherv recexch calls=5 bytes=[1-9]' \
  '^collc-stats: reduce_scatter recexch calls=5 bytes=[1-9]' -- env COLLC_STATS=1 \
  COLLC_ALLTOALL=bruck COLLC_ALLREDUCE=recexch COLLC_ALLGATHERV=recexch \
  COLLC_REDUCE_SCATTER=recexch "${OMPIRUN[@]}" 5 -x LD_PRELOAD="$PWD/$OMPI/libcollc.so" "$OMPI/tests/mpi_persistent_preload"
# Nonblocking collectives: up to 16 at once on one communicator, completed
# out of order by every completion call (also hier on virtual nodes of 2,
# and 4 + 2); then the reductions and all-to-all matrices with every call
# under test nonblocking (COLLC_TEST_NB=1), on virtual nodes too (quick
# there: an MPI_Test loop on a plan waiting for a shared-memory flag never
# yields, so oversubscribed the full matrix takes a minute per case).
for np in 1 2 3 4 5 6 7 8; do
  run_case "openmpi/nonblocking np=$np" 120 "${OMPIRUN[@]}" $np "$OMPI/tests/mpi_nonblocking"
done
for spec in "8 2" "6 4"; do
  read -r np k <<<"$spec"
  run_case "openmpi/nonblocking np=$np node=$k" 120 env COLLC_NODE_SIZE=$k "${OMPIRUN[@]}" $np \
    "$OMPI/tests/mpi_nonblocking"
done
run_case "openmpi/nonblocking self-test must fail np=4" 60 bash -c '! "$@"' _ \
  env COLLC_TEST_BREAK=7 "${OMPIRUN[@]}" 4 "$OMPI/tests/mpi_nonblocking"
run_case "openmpi/nonblocking preload stats (iallreduce recexch) np=6" 120 expect_stats \
  '^collc-stats: iallreduce recexch calls=110 bytes=[1-9]' env COLLC_STATS=1 COLLC_ALLREDUCE=recexch \
  "${OMPIRUN[@]}" 6 -x LD_PRELOAD="$PWD/$OMPI/libcollc.so" "$OMPI/tests/mpi_nonblocking_preload"
# The rule's nonblocking rows (Open MPI, p = 2) decide MPI_Ireduce of 28 and 4000 bytes (the
# program's sizes): as committed a tree; the algorithm is read from tuning/builtin.json with jq
# (builtin_nb: make tune regenerates the rule, and its nb rows cover every size from 0).
builtin_nb() {
  jq -r --arg c "$1" --argjson b "$2" --argjson p "$3" '[.rules[] | select(.lib == "Open MPI" and
    .coll == $c and .nb and .pmin <= $p and $p <= (.pmax // $p) and .bmin <= $b and
    $b <= (.bmax // $b))][0].algo // "NONE" | sub(":.*"; "")' tuning/builtin.json
}
ireduce_nb=()
for b in 28 4000; do
  ireduce_nb+=("^collc-stats: ireduce $(builtin_nb reduce $b 2) calls=[1-9][0-9]* bytes=[0-9]+ from=builtin$")
done
run_case "openmpi/nonblocking preload rule (ireduce $(builtin_nb reduce 4000 2)) np=2" 120 \
  expect_all "${ireduce_nb[@]}" -- env COLLC_STATS=1 \
  "${OMPIRUN[@]}" 2 -x LD_PRELOAD="$PWD/$OMPI/libcollc.so" "$OMPI/tests/mpi_nonblocking_preload"
# ... and a tuning file's row for (blocking) reduce does not hide it.
run_case "openmpi/nonblocking preload rule under a tuning file (ireduce nb row) np=2" 120 \
  expect_all "${ireduce_nb[@]}" -- env \
  COLLC_STATS=1 COLLC_TUNING="$PWD/tests/data/reduce_native_p2.json" \
  "${OMPIRUN[@]}" 2 -x LD_PRELOAD="$PWD/$OMPI/libcollc.so" "$OMPI/tests/mpi_nonblocking_preload"
# COLLC_ALLREDUCE=hier before any blocking call: the nonblocking calls are native, with a warning.
run_case "openmpi/nonblocking preload COLLC_ALLREDUCE=hier unset: native np=4" 120 expect_stats \
  '^collc-stats: iallreduce native calls=110 ' \
  env COLLC_STATS=1 COLLC_ALLREDUCE=hier \
  "${OMPIRUN[@]}" 4 -x LD_PRELOAD="$PWD/$OMPI/libcollc.so" "$OMPI/tests/mpi_nonblocking_preload"
# The call memo across communicators freed and made again (the handle
# reused): default rule, and collc's plans forced for every collective.
MEMO_FORCED=(COLLC_ALLREDUCE=recexch COLLC_BCAST=tree COLLC_ALLGATHER=recexch
  COLLC_ALLTOALL=pairwise COLLC_REDUCE=tree COLLC_REDUCE_SCATTER_BLOCK=recexch COLLC_BARRIER=dissem
  COLLC_GATHER=tree COLLC_SCATTER=tree COLLC_GATHERV=linear COLLC_SCATTERV=linear)
for np in 1 3 4; do
  run_case "openmpi/memo preload np=$np" 120 "${OMPIRUN[@]}" $np \
    -x LD_PRELOAD="$PWD/$OMPI/libcollc.so" "$OMPI/tests/mpi_memo_preload"
  run_case "openmpi/memo preload, plans forced np=$np" 120 env "${MEMO_FORCED[@]}" \
    "${OMPIRUN[@]}" $np -x LD_PRELOAD="$PWD/$OMPI/libcollc.so" "$OMPI/tests/mpi_memo_preload"
done
# Calls naming their algorithm (collc_<coll>_algo), repeated: the forced-call
# cache serves each text's own algorithm (two alternating per key: each
# serves half the calls), refuses a bad text every time, follows a freed
# and remade datatype, and is flushed with the plans it points to.
FORCED_STATS=()
for c in "allreduce recexch" "allreduce native" "reduce_scatter_block recexch" \
  "reduce_scatter_block cyclic" "reduce tree" "reduce native" "allgather native" \
  "bcast tree" "bcast native" "alltoall pairwise" "alltoall linear" "gather tree" \
  "gather linear" "scatter tree" "scatter linear" "barrier dissem" "barrier native"; do
  FORCED_STATS+=("^collc-stats: $c calls=10 ")
done
for np in 1 2 5; do
  run_case "openmpi/forced-call cache np=$np" 120 "${OMPIRUN[@]}" $np "$OMPI/tests/mpi_forced"
done
run_case "openmpi/forced-call cache, each text its calls np=3" 120 expect_all \
  "${FORCED_STATS[@]}" -- env COLLC_STATS=1 "${OMPIRUN[@]}" 3 "$OMPI/tests/mpi_forced"
run_case "openmpi/forced-call cache self-test must fail np=3" 120 bash -c '! "$@"' _ \
  env COLLC_TEST_BREAK=1 "${OMPIRUN[@]}" 3 "$OMPI/tests/mpi_forced"
# COLLC_DISABLE=1: every MPI_ call reaches the library alone (the memo's
# entry points), and what collc_* calls made is freed at MPI_Finalize (a
# shared-memory window freed after MPI's own finalize crashed Open MPI).
run_case "openmpi/memo preload disabled: pass-through np=3" 120 no_stats env COLLC_DISABLE=1 \
  COLLC_STATS=1 "${OMPIRUN[@]}" 3 -x LD_PRELOAD="$PWD/$OMPI/libcollc.so" "$OMPI/tests/mpi_memo_preload"
run_case "openmpi/rooted disabled: pass-through np=3" 120 no_stats env COLLC_DISABLE=1 \
  COLLC_STATS=1 "${OMPIRUN[@]}" 3 "$OMPI/tests/mpi_rooted"
# Counted collectives whose rows change algorithm with the total count
# (native below 13 B, recexch above; tests/data/counted_by_total.json): the
# memo holds the native calls by their total, the plans stay keyed by their
# counts; the results must be right with both on one call site, and (the
# memo off: COLLC_STATS) both must serve.
CBT="$PWD/tests/data/counted_by_total.json"
run_case "openmpi/memo preload, counted rows by total np=4" 120 "${OMPIRUN[@]}" 4 \
  -x COLLC_TUNING="$CBT" -x LD_PRELOAD="$PWD/$OMPI/libcollc.so" "$OMPI/tests/mpi_memo_preload"
run_case "openmpi/memo preload, counted rows by total, stats np=4" 120 expect_all \
  '^collc-stats: allgatherv native .*from=tuning$' '^collc-stats: allgatherv recexch .*from=tuning$' \
  '^collc-stats: reduce_scatter native .*from=tuning$' \
  '^collc-stats: reduce_scatter recexch .*from=tuning$' -- "${OMPIRUN[@]}" 4 -x COLLC_STATS=1 \
  -x COLLC_TUNING="$CBT" -x LD_PRELOAD="$PWD/$OMPI/libcollc.so" "$OMPI/tests/mpi_memo_preload"
run_case "openmpi/valgrind nonblocking np=2" 300 tests/valgrind_leaks.sh \
  "${OMPIRUN[@]}" 2 -- "$OMPI/tests/mpi_nonblocking"
for np in 1 2 3 4 5 6 7 8; do # (the quick matrix from p = 5: the blocking runs have the full one)
  quick_case "openmpi/reductions nonblocking np=$np" $((np >= 5)) 180 env COLLC_TEST_NB=1 \
    "${OMPIRUN[@]}" $np "$OMPI/tests/mpi_reductions"
done
for k in 1 2; do
  for np in 2 5; do
    run_case "openmpi/hier reductions nonblocking quick np=$np node=$k" 120 env COLLC_TEST_NB=1 \
      COLLC_TEST_QUICK=1 COLLC_TEST_HIER=1 COLLC_NODE_SIZE=$k "${OMPIRUN[@]}" $np \
      "$OMPI/tests/mpi_reductions"
  done
done
run_case "openmpi/shm reductions nonblocking quick np=3 (one node)" 120 env COLLC_TEST_NB=1 \
  COLLC_TEST_QUICK=1 COLLC_TEST_HIER=1 COLLC_NODE_SIZE=8 "${OMPIRUN[@]}" 3 \
  "$OMPI/tests/mpi_reductions"
for np in 1 2 3 4 5 6; do
  run_case "openmpi/alltoall nonblocking np=$np" 180 env COLLC_TEST_NB=1 "${OMPIRUN[@]}" $np \
    "$OMPI/tests/mpi_alltoall"
done
run_case "openmpi/wisdom across runs, damaged files np=4 (persistent)" 300 tests/wisdom_mpi.sh \
  "${OMPIRUN[@]}" 4 "$OMPI/tests/mpi_persistent" --
run_case "openmpi/wisdom across runs, damaged files np=6 (reductions)" 300 \
  env COLLC_TEST_QUICK=1 tests/wisdom_mpi.sh "${OMPIRUN[@]}" 6 "$OMPI/tests/mpi_reductions" --
run_case "openmpi/wisdom across runs np=5 (alltoall)" 300 env COLLC_TEST_QUICK=1 \
  tests/wisdom_mpi.sh "${OMPIRUN[@]}" 5 "$OMPI/tests/mpi_alltoall" --
# Tuning files (COLLC_TUNING): a file's rows decide; damaged, truncated, empty, foreign ... files
# are ignored with one warning; ranks given different files follow rank 0's, no hang.
run_case "openmpi/tuning files: used, ignored when bad, rank 0's wins np=2" 300 \
  tests/tuning_mpi.sh "Open MPI" "$OMPI" "${OMPIRUN[@]}"
# collc-tune end to end (quick): a valid file, whose decisions the library then uses.
for np in 2 3; do
  run_case "openmpi/collc-tune --quick, the file decides np=$np" 300 \
    tests/tune_mpi.sh "Open MPI" "$OMPI" $np "${OMPIRUN[@]}"
done
# collc-bench -C i<coll>: each nonblocking form (MPI_I<coll> + MPI_Wait), every default
# variant checked bitwise against PMPI_I<coll>; plans that need set-up (hier, shm) left
# out, said so; no persistent form (-P: bad arguments).
bench_nb() {
  local c out
  for c in ialltoall iallreduce ireduce_scatter_block iallgather ireduce ibcast ibarrier; do
    out=$(COLLC_STATS=1 "$@" "$OMPI/bin/collc-bench" -C $c -c 1,100 -w 1 -r 2 2>&1) ||
      { echo "$out"; echo "collc-bench -C $c failed"; return 1; }
    grep -q "^# each call MPI_I" <<<"$out" && grep -q "needs set-up: served natively" <<<"$out" &&
      grep -Eq "^collc-stats: $c [a-z]+ calls=[0-9]+ .*from=call$" <<<"$out" &&
      ! grep -q "served natively until" <<<"$out" || { echo "$out"; echo "$c: not as said"; return 1; }
  done
  "$@" "$OMPI/bin/collc-bench" -C iallreduce -P >/dev/null 2>&1
  (($? == 2)) || { echo "-P with a nonblocking collective: not refused"; return 1; }
}
run_case "openmpi/collc-bench -C i<coll>: every nonblocking form checked np=3" 120 \
  bench_nb "${OMPIRUN[@]}" 3
# make tune's merge (bench/tune-builtin.sh) on synthetic runs: a valid file, the runs' rows
# before the hand-written ones (kept, marked), bad run files ignored; the library takes it.
run_case "openmpi/tune-builtin.sh: runs merged into the built-in rule np=2" 60 \
  tests/tune_builtin.sh "$OMPI" "${OMPIRUN[@]}"
# Native tuning exported: the rules file collc-tune writes is what Open MPI runs; the driver.
run_case "openmpi/collc-tune --export-ompi: Open MPI runs the rules np=3" 300 \
  tests/native_export.sh "Open MPI" "$OMPI" "${OMPIRUN[@]}"
run_case "openmpi/bench/tune-native.sh --quick allreduce np=2" 300 \
  tests/tune_native_mpi.sh "Open MPI" "$OMPI"
# collc-tune -C barrier: one 0 B class, one row (bmin = bmax = 0, this p), which the
# library then follows (the truth: the file's row read with jq; collc-bench's default).
tune_barrier() {
  local f out a
  f=$(mktemp /tmp/collc-tune-barrier.XXXXXX)
  "$@" "$OMPI/bin/collc-tune" --quick -C barrier -o "$f" || return 1
  a=$(jq -r '[.rules[] | select(.coll == "barrier" and .bmin == 0 and .bmax == 0 and .pmin == 4
             and .pmax == 4)] | if length == 1 and (.[0].algo | length > 0) then .[0].algo
             else "NONE" end' "$f" | sed 's/:.*//')
  out=$(COLLC_STATS=1 COLLC_TUNING=$f "$@" "$OMPI/bin/collc-bench" -C barrier -a default -w 1 -r 3 2>&1)
  rm -f "$f"
  echo "$out"
  [[ $a != NONE ]] && grep -Eq "^collc-stats: barrier $a calls=[0-9]+ bytes=0 from=tuning$" <<<"$out"
}
run_case "openmpi/collc-tune -C barrier: one 0 B row, the library follows it np=4" 120 \
  tune_barrier "${OMPIRUN[@]}" 4
run_case "openmpi/collc-bench -C barrier: every variant timed np=4" 120 expect_all \
  '^# collc-bench barrier, p=4, .*100 calls back to back' \
  '^ +0 +0  native +[0-9.]+ +[0-9.]+ +1.00x' '^ +0 +0  dissem +[0-9.]+ ' '^ +0 +0  flags +[0-9.]+ ' \
  '^ +0 +0  hier +[0-9.]+ ' '^ +0 +0  shm:dissem +[0-9.]+ ' '^ +0 +0  default +[0-9.]+ ' -- \
  "${OMPIRUN[@]}" 4 "$OMPI/bin/collc-bench" -C barrier -w 1 -r 5

section "MPI tests, MPICH (fewer cases: MPICH is slow when oversubscribed)"
# A second MPI library: the irregular and rooted collectives and the barrier at p = 1..5,
# the other programs at a few p, mostly up to 3 (oversubscribed, MPICH polls: 5-28 s a
# case from p = 4 on); Open MPI runs the longer p-sweeps.
for np in 1 2 3 4 5; do # (quick from p = 3)
  quick_case "mpich/vcoll np=$np" $((np >= 3)) 300 "${MPICHRUN[@]}" $np "$MPICH/tests/mpi_vcoll"
done
for np in 1 2 3 4 5; do
  run_case "mpich/rooted gather scatter np=$np" 120 env COLLC_TEST_QUICK=1 "${MPICHRUN[@]}" $np \
    "$MPICH/tests/mpi_rooted"
done
run_case "mpich/vforms allgatherv reduce_scatter np=1" 120 "${MPICHRUN[@]}" 1 \
  "$MPICH/tests/mpi_vforms"
for np in 2 3; do
  run_case "mpich/vforms allgatherv reduce_scatter quick np=$np" 120 env COLLC_TEST_QUICK=1 \
    "${MPICHRUN[@]}" $np "$MPICH/tests/mpi_vforms"
done
for np in 1 2 3 4 5; do
  run_case "mpich/alltoallv quick np=$np" 120 env COLLC_TEST_QUICK=1 "${MPICHRUN[@]}" $np \
    "$MPICH/tests/mpi_alltoallv"
done
run_case "mpich/alltoallv hier agreed quick np=5 node=2" 120 expect_stats \
  "^collc-stats: alltoallv hier calls=[0-9]+ .*from=call" env COLLC_TEST_QUICK=1 COLLC_TEST_HIER=1 \
  COLLC_NODE_SIZE=2 COLLC_STATS=1 "${MPICHRUN[@]}" 5 "$MPICH/tests/mpi_alltoallv"
run_case "mpich/alltoallv torus:d=2 agreed, nonblocking too quick np=4" 120 expect_all \
  "^collc-stats: alltoallv torus calls=[0-9]+ .*from=call" \
  "^collc-stats: ialltoallv torus calls=[0-9]+ .*from=call" -- env COLLC_TEST_QUICK=1 \
  COLLC_TEST_AGREE=torus:d=2 COLLC_STATS=1 "${MPICHRUN[@]}" 4 "$MPICH/tests/mpi_alltoallv"
for np in 1 2 3 4; do
  run_case "mpich/alltoall np=$np" 300 env COLLC_TEST_QUICK=1 "${MPICHRUN[@]}" $np \
    "$MPICH/tests/mpi_alltoall"
done
for np in 1 4; do
  run_case "mpich/factorize np=$np" 120 "${MPICHRUN[@]}" $np "$MPICH/tests/mpi_factorize"
done
for spec in "2 2" "3 2"; do
  read -r np k <<<"$spec"
  run_case "mpich/hier reductions quick np=$np node=$k" 240 env COLLC_TEST_QUICK=1 \
    COLLC_TEST_HIER=1 COLLC_NODE_SIZE=$k "${MPICHRUN[@]}" $np "$MPICH/tests/mpi_reductions"
done
for np in 1 2 3 4 5; do
  for spec in "dissem" "flags" "hier 2"; do
    read -r algo k <<<"$spec"
    run_case "mpich/barrier $algo np=$np${k:+ node=$k}" 240 expect_stats \
      "^collc-stats: barrier $algo calls=90 bytes=0" env COLLC_STATS=1 COLLC_BARRIER=$algo \
      ${k:+COLLC_NODE_SIZE=$k} "${MPICHRUN[@]}" $np "$MPICH/tests/mpi_barrier"
  done
done
run_case "mpich/barrier dissem broken must fail np=4" 240 bash -c '! "$@"' _ env \
  COLLC_BARRIER=dissem COLLC_TEST_BARRIER_EARLY=3 "${MPICHRUN[@]}" 4 "$MPICH/tests/mpi_barrier"
run_case "mpich/hier alltoall np=5 node=2" 240 env COLLC_TEST_QUICK=1 COLLC_TEST_HIER=1 \
  COLLC_NODE_SIZE=2 "${MPICHRUN[@]}" 5 "$MPICH/tests/mpi_alltoall"
run_case "mpich/hier stress np=3 node=2" 240 env COLLC_TEST_ITERS=300 COLLC_NODE_SIZE=2 \
  "${MPICHRUN[@]}" 3 "$MPICH/tests/mpi_shm_stress"
run_case "mpich/shm stress np=3 (one node)" 240 env COLLC_TEST_ITERS=300 COLLC_TEST_SHM=1 \
  "${MPICHRUN[@]}" 3 "$MPICH/tests/mpi_shm_stress"
run_case "mpich/shm single-copy stress np=3 (one node)" 240 env COLLC_TEST_ITERS=300 \
  COLLC_TEST_SHM=2 "${MPICHRUN[@]}" 3 "$MPICH/tests/mpi_shm_stress"
run_case "mpich/hier persistent quick np=3 node=2" 240 env COLLC_TEST_QUICK=1 COLLC_TEST_HIER=1 \
  COLLC_NODE_SIZE=2 "${MPICHRUN[@]}" 3 "$MPICH/tests/mpi_persistent"
run_case "mpich/errors np=2" 60 "${MPICHRUN[@]}" 2 "$MPICH/tests/mpi_errors"
run_case "mpich/kernels np=1" 120 "${MPICHRUN[@]}" 1 "$MPICH/tests/mpi_kernels"
device_cases mpich "${MPICHRUN[@]}"
fakecuda_cases mpich "${MPICHRUN[@]}"
run_case "mpich/batch executor np=1" 120 "${MPICHRUN[@]}" 1 "$MPICH/tests/mpi_batch"
run_case "mpich/batch reductions quick np=3" 240 env COLLC_EXEC=batch COLLC_TEST_QUICK=1 \
  "${MPICHRUN[@]}" 3 "$MPICH/tests/mpi_reductions"
run_case "mpich/valgrind kernels np=1" 300 tests/valgrind_leaks.sh \
  "${MPICHRUN[@]}" 1 -- "$MPICH/tests/mpi_kernels"
for np in 1 2; do
  run_case "mpich/reductions np=$np" 120 "${MPICHRUN[@]}" $np "$MPICH/tests/mpi_reductions"
done
run_case "mpich/reductions quick np=3" 240 env COLLC_TEST_QUICK=1 "${MPICHRUN[@]}" 3 \
  "$MPICH/tests/mpi_reductions"
run_case "mpich/reductions fallback counted as native np=2" 60 expect_stats \
  '^collc-stats: reduce native calls=4 bytes=' \
  env COLLC_STATS=1 COLLC_TEST_FALLBACK=1 "${MPICHRUN[@]}" 2 "$MPICH/tests/mpi_reductions"
run_case "mpich/reductions preload stats np=4" 120 expect_stats \
  '^collc-stats: allreduce recexch calls=[1-9][0-9]* bytes=[1-9]' \
  env COLLC_STATS=1 COLLC_TEST_QUICK=1 COLLC_TEST_EXPECT_COLLC=1 COLLC_ALLREDUCE=recexch \
  COLLC_REDUCE_SCATTER_BLOCK=recexch COLLC_REDUCE=tree COLLC_ALLGATHER=recexch COLLC_BCAST=tree:3 \
  LD_PRELOAD="$PWD/$MPICH/libcollc.so" "${MPICHRUN[@]}" 4 "$MPICH/tests/mpi_reductions_preload"
run_case "mpich/reductions preload copyin, non-commutative falls back np=2" 240 expect_all \
  "${copyin_want[@]}" -- env "${copyin_env[@]}" COLLC_NODE_SIZE=2 \
  LD_PRELOAD="$PWD/$MPICH/libcollc.so" "${MPICHRUN[@]}" 2 "$MPICH/tests/mpi_reductions_preload"
# The guard on MPICH 4.0.2 (its MAX/MIN of unsigned types compare signed): exact; off: must fail.
run_case "mpich/guard: native's wrong reductions served by collc, exact np=3" 120 expect_stats \
  '^collc-stats: native MPI_UNSIGNED_LONG MPI_MAX is wrong here: served by collc' \
  env COLLC_STATS=1 COLLC_TEST_QUICK=1 COLLC_TEST_EXPECT_COLLC=1 \
  LD_PRELOAD="$PWD/$MPICH/libcollc.so" "${MPICHRUN[@]}" 3 "$MPICH/tests/mpi_reductions_preload"
run_case "mpich/guard off (COLLC_GUARD=0): the same must fail np=3" 120 bash -c '! "$@"' _ \
  env COLLC_GUARD=0 COLLC_TEST_QUICK=1 COLLC_TEST_EXPECT_COLLC=1 \
  LD_PRELOAD="$PWD/$MPICH/libcollc.so" "${MPICHRUN[@]}" 3 "$MPICH/tests/mpi_reductions_preload"
run_case "mpich/valgrind reductions np=2" 300 env COLLC_TEST_QUICK=1 tests/valgrind_leaks.sh \
  "${MPICHRUN[@]}" 2 -- "$MPICH/tests/mpi_reductions"
run_case "mpich/errors bad COLLC_ALLTOALL np=2" 60 env COLLC_ALLTOALL=bogus \
  COLLC_TEST_WARNINGS=1 "${MPICHRUN[@]}" 2 "$MPICH/tests/mpi_errors"
run_case "mpich/factorize leak loop np=2" 300 env COLLC_TEST_LOOPS=2500 \
  "${MPICHRUN[@]}" 2 "$MPICH/tests/mpi_factorize"
run_case "mpich/valgrind factorize np=2" 300 tests/valgrind_leaks.sh \
  "${MPICHRUN[@]}" 2 -- "$MPICH/tests/mpi_factorize"
run_case "mpich/valgrind alltoall np=2" 300 env COLLC_TEST_QUICK=1 tests/valgrind_leaks.sh \
  "${MPICHRUN[@]}" 2 -- "$MPICH/tests/mpi_alltoall"
run_case "mpich/valgrind errors np=2" 300 tests/valgrind_leaks.sh \
  "${MPICHRUN[@]}" 2 -- "$MPICH/tests/mpi_errors"
run_case "mpich/forced-call cache np=3" 120 "${MPICHRUN[@]}" 3 "$MPICH/tests/mpi_forced" 4
run_case "mpich/memo preload, plans forced np=3" 120 env "${MEMO_FORCED[@]}" \
  LD_PRELOAD="$PWD/$MPICH/libcollc.so" "${MPICHRUN[@]}" 3 "$MPICH/tests/mpi_memo_preload" 4
# (default rule: the counted collectives' memo, and bad counts that crash MPICH itself)
run_case "mpich/memo preload np=3" 120 env LD_PRELOAD="$PWD/$MPICH/libcollc.so" \
  "${MPICHRUN[@]}" 3 "$MPICH/tests/mpi_memo_preload" 4
run_case "mpich/preload stats np=4" 120 expect_stats \
  '^collc-stats: alltoall bruck calls=[1-9][0-9]* bytes=[1-9]' \
  env COLLC_STATS=1 COLLC_ALLTOALL=bruck:3 LD_PRELOAD="$PWD/$MPICH/libcollc.so" \
  "${MPICHRUN[@]}" 4 "$MPICH/tests/mpi_alltoall_preload"
for np in 1 2 3; do
  run_case "mpich/persistent quick np=$np" 180 env COLLC_TEST_QUICK=1 "${MPICHRUN[@]}" $np \
    "$MPICH/tests/mpi_persistent"
done
run_case "mpich/persistent disabled: MPICH's own inits np=2" 120 no_stats \
  env COLLC_DISABLE=1 COLLC_STATS=1 "${MPICHRUN[@]}" 2 "$MPICH/tests/mpi_persistent"
run_case "mpich/persistent preload np=3" 120 expect_stats \
  '^collc-stats: allreduce recexch calls=5 bytes=[1-9]' env COLLC_STATS=1 COLLC_ALLREDUCE=recexch \
  LD_PRELOAD="$PWD/$MPICH/libcollc.so" "${MPICHRUN[@]}" 3 "$MPICH/tests/mpi_persistent_preload"
run_case "mpich/valgrind persistent np=2" 300 env COLLC_TEST_QUICK=1 tests/valgrind_leaks.sh \
  "${MPICHRUN[@]}" 2 -- "$MPICH/tests/mpi_persistent"
# Nonblocking collectives (see the Open MPI section); quick from p = 3.
for np in 1 2 3 4 5; do
  quick_case "mpich/nonblocking np=$np" $((np >= 3)) 240 "${MPICHRUN[@]}" $np \
    "$MPICH/tests/mpi_nonblocking"
done
for np in 2 3; do
  run_case "mpich/reductions nonblocking quick np=$np" 240 env COLLC_TEST_NB=1 COLLC_TEST_QUICK=1 \
    "${MPICHRUN[@]}" $np "$MPICH/tests/mpi_reductions"
done
run_case "mpich/nonblocking preload stats (iallreduce recexch) np=3" 120 expect_stats \
  '^collc-stats: iallreduce recexch calls=110 bytes=[1-9]' env COLLC_STATS=1 COLLC_ALLREDUCE=recexch \
  LD_PRELOAD="$PWD/$MPICH/libcollc.so" "${MPICHRUN[@]}" 3 "$MPICH/tests/mpi_nonblocking_preload"
run_case "mpich/valgrind nonblocking np=2" 300 tests/valgrind_leaks.sh \
  "${MPICHRUN[@]}" 2 -- "$MPICH/tests/mpi_nonblocking"
run_case "mpich/wisdom across runs, damaged files np=2 (reductions)" 300 \
  env COLLC_TEST_QUICK=1 tests/wisdom_mpi.sh "${MPICHRUN[@]}" 2 "$MPICH/tests/mpi_reductions" --
run_case "mpich/tuning files: used, ignored when bad, rank 0's wins np=2" 300 \
  tests/tuning_mpi.sh MPICH "$MPICH" "${MPICHRUN[@]}"
# (np = 2 only: 27 s at 3; Open MPI and ASan run np = 3)
run_case "mpich/collc-tune --quick, the file decides np=2" 300 \
  tests/tune_mpi.sh MPICH "$MPICH" 2 "${MPICHRUN[@]}"
run_case "mpich/collc-tune --export-mpich: MPICH runs the CSEL file np=2" 300 \
  tests/native_export.sh MPICH "$MPICH" "${MPICHRUN[@]}"
run_case "mpich/bench/tune-native.sh --quick allreduce np=2" 300 \
  tests/tune_native_mpi.sh MPICH "$MPICH"
# (the built-in rule's own file is a valid tuning file: its rows are read twice)
run_case "mpich/valgrind with a tuning file np=2" 300 env COLLC_TUNING="$PWD/tuning/builtin.json" \
  COLLC_STATS=1 COLLC_TEST_QUICK=1 tests/valgrind_leaks.sh "${MPICHRUN[@]}" 2 -- \
  "$MPICH/tests/mpi_reductions"

section "Fortran programs (mpif.h, use mpi, use mpi_f08; unmodified, preloaded)"
# (expect_all above: collc-stats lines prove collc served the calls, their
# counts that each ran once.)
export -f expect_all
# tests/fortran/body.inc's calls per rank: 4 of each blocking collective
# (plain, in place, two persistent starts; bcast: plain, from MPI_BOTTOM, two starts;
# barrier: two plain, two starts; allgatherv, reduce_scatter: one plain, two starts),
# 1 of each nonblocking one (iallreduce 2). Forced algorithms: collc's plans.
FORT_ALGOS=(COLLC_STATS=1 COLLC_ALLREDUCE=recexch COLLC_REDUCE_SCATTER_BLOCK=recexch
            COLLC_REDUCE=tree COLLC_ALLGATHER=recexch COLLC_BCAST=tree COLLC_ALLTOALL=bruck
            COLLC_BARRIER=dissem COLLC_ALLGATHERV=recexch COLLC_REDUCE_SCATTER=recexch)
FORT_STATS=('^collc-stats: allreduce recexch calls=4 ' '^collc-stats: reduce_scatter_block recexch calls=4 '
            '^collc-stats: reduce tree calls=4 ' '^collc-stats: allgather recexch calls=4 '
            '^collc-stats: alltoall bruck calls=4 ' '^collc-stats: bcast tree calls=4 '
            '^collc-stats: iallreduce recexch calls=2 ' '^collc-stats: ireduce_scatter_block recexch calls=1 '
            '^collc-stats: ireduce tree calls=1 ' '^collc-stats: iallgather recexch calls=1 '
            '^collc-stats: ialltoall bruck calls=1 ' '^collc-stats: ibcast tree calls=1 '
            '^collc-stats: barrier dissem calls=4 bytes=0' '^collc-stats: ibarrier dissem calls=1 bytes=0'
            '^collc-stats: allgatherv recexch calls=3 ' '^collc-stats: reduce_scatter recexch calls=3 '
            '^collc-stats: iallgatherv recexch calls=1 ' '^collc-stats: ireduce_scatter recexch calls=1 ')
for lib in openmpi mpich; do
  if [[ $lib == openmpi ]]; then
    B=$OMPI run=("${OMPIRUN[@]}") nps="1 3 4" pre=(-x LD_PRELOAD="$PWD/$OMPI/libcollc.so")
    envs=(); for e in "${FORT_ALGOS[@]}"; do envs+=(-x "$e"); done
    bro=(-x COLLC_BARRIER -x COLLC_TEST_BARRIER_EARLY)
    native=()
  else
    B=$MPICH run=("${MPICHRUN[@]}") nps="3" pre=() envs=() bro=() native=(COLLC_TEST_MPICH_NATIVE=1)
  fi
  lp=(); [[ $lib == mpich ]] && lp=(LD_PRELOAD="$PWD/$MPICH/libcollc.so")
  for t in mpifh usempi f08; do
    [[ -x $B/tests/fortran_$t ]] || continue
    run_case "fortran/$lib $t native np=3" 60 env "${native[@]+"${native[@]}"}" "${run[@]}" 3 \
      "$B/tests/fortran_$t"
    for np in $nps; do
      run_case "fortran/$lib $t preload np=$np" 60 env "${lp[@]+"${lp[@]}"}" "${run[@]}" $np \
        "${pre[@]+"${pre[@]}"}" "$B/tests/fortran_$t"
    done
    run_case "fortran/$lib $t preload, collc's plans, stats np=3" 60 expect_all "${FORT_STATS[@]}" \
      -- env "${lp[@]+"${lp[@]}"}" "${FORT_ALGOS[@]}" "${run[@]}" 3 "${envs[@]+"${envs[@]}"}" \
      "${pre[@]+"${pre[@]}"}" "$B/tests/fortran_$t"
    run_case "fortran/$lib $t self-test must fail np=3" 60 bash -c '! "$@"' _ \
      env "${lp[@]+"${lp[@]}"}" COLLC_TEST_BREAK=1 "${run[@]}" 3 "${pre[@]+"${pre[@]}"}" \
      "$B/tests/fortran_$t"
    run_case "fortran/$lib $t barrier self-test (rank 2 leaves early) must fail np=3" 60 \
      bash -c '! "$@"' _ env "${lp[@]+"${lp[@]}"}" COLLC_BARRIER=dissem COLLC_TEST_BARRIER_EARLY=2 \
      "${run[@]}" 3 "${bro[@]+"${bro[@]}"}" "${pre[@]+"${pre[@]}"}" "$B/tests/fortran_$t"
  done
  if [[ -x $B/tests/fortran_mixed ]]; then
    run_case "fortran/$lib mixed C/Fortran requests native np=3" 60 "${run[@]}" 3 \
      "$B/tests/fortran_mixed"
    run_case "fortran/$lib mixed C/Fortran requests preload np=3" 60 expect_all \
      '^collc-stats: allreduce recexch calls=4 ' '^collc-stats: iallreduce recexch calls=43 ' \
      -- env "${lp[@]+"${lp[@]}"}" COLLC_STATS=1 COLLC_ALLREDUCE=recexch "${run[@]}" 3 \
      "${envs[@]+"${envs[@]}"}" "${pre[@]+"${pre[@]}"}" "$B/tests/fortran_mixed"
    run_case "fortran/$lib mixed self-test must fail np=3" 60 bash -c '! "$@"' _ \
      env "${lp[@]+"${lp[@]}"}" COLLC_TEST_BREAK=1 "${run[@]}" 3 "${pre[@]+"${pre[@]}"}" \
      "$B/tests/fortran_mixed"
  fi
  for t in f08 mixed; do # (the conversions' stack and heap arrays, the end-of-run hook)
    [[ -x $B/tests/fortran_$t ]] || continue
    if [[ $lib == openmpi ]]; then
      run_case "fortran/$lib valgrind $t np=2" 300 tests/valgrind_leaks.sh "${run[@]}" 2 \
        "${pre[@]}" -- "$B/tests/fortran_$t"
    else
      run_case "fortran/$lib valgrind $t np=2" 300 tests/valgrind_leaks.sh "${run[@]}" 2 \
        -genv LD_PRELOAD "$PWD/$MPICH/libcollc.so" -- "$B/tests/fortran_$t"
    fi
  done
  if [[ -x $B/tests/fortran_badargs ]]; then
    run_case "fortran/$lib bad handles: error classes in ierror, preload np=1" 60 \
      env "${lp[@]+"${lp[@]}"}" "${run[@]}" 1 "${pre[@]+"${pre[@]}"}" "$B/tests/fortran_badargs"
    run_case "fortran/$lib bad handles self-test must fail np=1" 60 bash -c '! "$@"' _ \
      env "${lp[@]+"${lp[@]}"}" COLLC_TEST_BREAK=1 "${run[@]}" 1 "${pre[@]+"${pre[@]}"}" \
      "$B/tests/fortran_badargs"
  fi
  if [[ -x $B/tests/fortran_nothing ]]; then
    run_case "fortran/$lib no collective: one stats line np=2" 60 expect_stats \
      '^collc-stats: no collective served by collc$' env "${lp[@]+"${lp[@]}"}" COLLC_STATS=1 \
      "${run[@]}" 2 "${envs[@]+"${envs[@]}"}" "${pre[@]+"${pre[@]}"}" "$B/tests/fortran_nothing"
  fi
  if [[ -x $B/tests/fortran_rooted ]]; then # (tests/fortran/rooted.f90: gather, scatter, v-forms)
    rooted_env=(COLLC_STATS=1 COLLC_GATHER=tree COLLC_SCATTER=tree:3 COLLC_GATHERV=linear
                COLLC_SCATTERV=linear COLLC_ALLTOALLV=pairwise)
    run_case "fortran/$lib rooted gather scatter, alltoallv preload, collc's plans np=3" 60 expect_all \
      '^fortran rooted test passed$' '^collc-stats: gather tree calls=3 ' \
      '^collc-stats: igather tree calls=3 ' '^collc-stats: gatherv linear calls=3 ' \
      '^collc-stats: iscatterv linear calls=3 ' '^collc-stats: alltoallv pairwise calls=1 ' \
      '^collc-stats: ialltoallv pairwise calls=1 ' -- env "${lp[@]+"${lp[@]}"}" "${rooted_env[@]}" \
      "${run[@]}" 3 "${pre[@]+"${pre[@]}"}" "$B/tests/fortran_rooted"
    run_case "fortran/$lib rooted gather scatter self-test must fail np=3" 60 bash -c '! "$@"' _ \
      env "${lp[@]+"${lp[@]}"}" COLLC_TEST_BREAK=1 COLLC_GATHER=tree "${run[@]}" 3 \
      "${pre[@]+"${pre[@]}"}" "$B/tests/fortran_rooted"
  fi
done

section "SimGrid SMPI (simulated ranks; built by make smpi into build-smpi/)"
# The all-to-all suite against SMPI's own all-to-all at p = 16: two simulated
# nodes of the torus paper's machine model (bench/platforms/paper-36x32.xml),
# 8 ranks on each, deterministic, communication only. (p = 64 takes 4 minutes.)
if [[ -x build-smpi/tests/mpi_alltoall ]] && command -v smpirun >/dev/null; then
  hosts=$(mktemp)
  for n in 0 1; do for c in 1 2 3 4 5 6 7 8; do echo "node-$n"; done; done >"$hosts"
  run_case "smpi/alltoall quick np=16 (2 nodes of 8)" 120 env COLLC_TEST_QUICK=1 \
    smpirun -np 16 -platform bench/platforms/paper-36x32.xml -hostfile "$hosts" \
    --cfg=smpi/simulate-computation:no --cfg=smpi/host-speed:1Gf \
    --cfg=smpi/alltoall:basic_linear --log=root.thres:warning build-smpi/tests/mpi_alltoall
  # collc-scale's check mode (bench/scale.sh's driver) at p = 64 on two full
  # nodes: torus plans, Bruck and factor-list allreduces against the exact
  # result; exit status 3 on any WRONG.
  for n in 0 1; do for c in $(seq 32); do echo "node-$n"; done; done >"$hosts"
  smpi64=(smpirun -np 64 -platform bench/platforms/paper-36x32.xml -hostfile "$hosts"
    --cfg=smpi/simulate-computation:no --cfg=smpi/host-speed:1Gf
    --cfg=smpi/send-is-detached-thresh:0 --cfg=smpi/alltoall:basic_linear
    --log=root.thres:critical build-smpi/bin/collc-scale -k)
  run_case "smpi/collc-scale alltoall check np=64 (2 nodes of 32)" 120 "${smpi64[@]}" -c 1,3,50 \
    -a 'native;torus:2x32:native;torus:8x8:linear;torus:4x4x4:native;torus:d=6;bruck:2'
  run_case "smpi/collc-scale allreduce check np=64 (2 nodes of 32)" 120 "${smpi64[@]}" \
    -C allreduce -c 1,100,5000 -a 'native;recexch;recexch:-8,-8,8,8;cyclic;cyclic:-4,-4,-4,4,4,4'
  # No shared memory between simulated ranks (they would spin on each other's
  # flags without entering SMPI): node-aware plans do not fit, and the error
  # raised for them returns instead of crashing in SMPI's handler call.
  run_case "smpi/hier does not fit under SMPI (UNFIT, no hang or crash)" 120 expect_stats \
    'allreduce +64 +1 hier .*UNFIT' "${smpi64[@]}" -C allreduce -c 1 -a 'native;hier'
  # The simulator's calibration on the simulated platform must find the
  # platform file's bandwidths: 20 GB/s in a node, 12.5 GB/s links (+-1%).
  cal=$(mktemp)
  run_case "smpi/calibrate np=64 finds the platform's bandwidths" 120 bash -c \
    "smpirun -np 64 -platform bench/platforms/paper-36x32.xml -hostfile $hosts \
     --cfg=smpi/simulate-computation:no --cfg=smpi/lat-factor:0:1 --cfg=smpi/bw-factor:0:1 \
     --log=root.thres:critical build-smpi/bin/collc-bench --calibrate $cal >/dev/null && cat $cal &&
     tr ' ' '\n' <$cal | awk -F'[=/]' '/^bw=/ { s = \$2; x = \$4 } /^nic=/ { n = \$2 } END {
       exit !(s > 19.8e9 && s < 20.2e9 && x > 12.37e9 && x < 12.63e9 && n > 12.37e9 && n < 12.63e9) }'"
  rm -f "$hosts" "$cal"
else
  run_case "smpi/alltoall (smpirun or build-smpi missing)" 10 false
fi
section "fuzzing the wisdom loader (libFuzzer + ASan/UBSan; longer: make fuzz FUZZ_TIME=600)"
run_case "fuzz/wisdom 10 s" 120 tests/fuzz/run.sh 10

section "sanitizers (build-asan: AddressSanitizer + UBSan, Open MPI)"
# MPI itself leaks at exit under LeakSanitizer; leaks are valgrind's job above.
for np in 1 4 7; do
  run_case "asan/alltoall np=$np" 300 env ASAN_OPTIONS=detect_leaks=0 \
    "${OMPIRUN[@]}" $np build-asan/tests/mpi_alltoall
done
# (detect_stack_use_after_return: a nonblocking call's request must own what it reads
# after the call has returned; the v-form trees' requests compile their plans then)
run_case "asan/rooted gather scatter np=3" 120 env ASAN_OPTIONS=detect_leaks=0 \
  COLLC_GATHER=tree COLLC_SCATTER=tree:3 COLLC_GATHERV=linear COLLC_SCATTERV=linear \
  "${OMPIRUN[@]}" 3 build-asan/tests/mpi_rooted
run_case "asan/rooted v-form trees, nonblocking agreed np=4" 120 \
  env ASAN_OPTIONS=detect_leaks=0:detect_stack_use_after_return=1 \
  COLLC_GATHERV=tree COLLC_SCATTERV=tree:3 "${OMPIRUN[@]}" 4 build-asan/tests/mpi_rooted
run_case "asan/forced-call cache np=3" 120 env ASAN_OPTIONS=detect_leaks=0 \
  "${OMPIRUN[@]}" 3 build-asan/tests/mpi_forced
run_case "asan/alltoallv np=3" 120 env ASAN_OPTIONS=detect_leaks=0 \
  "${OMPIRUN[@]}" 3 build-asan/tests/mpi_alltoallv
run_case "asan/alltoallv hier agreed np=3 node=2" 120 env ASAN_OPTIONS=detect_leaks=0 \
  COLLC_TEST_HIER=1 COLLC_NODE_SIZE=2 "${OMPIRUN[@]}" 3 build-asan/tests/mpi_alltoallv
run_case "asan/alltoallv torus:d=2 agreed, nonblocking too np=4" 120 \
  env ASAN_OPTIONS=detect_leaks=0:detect_stack_use_after_return=1 \
  COLLC_TEST_AGREE=torus:d=2 "${OMPIRUN[@]}" 4 build-asan/tests/mpi_alltoallv
# The fake CUDA under ASan: it writes cudaPointerAttributes whole, as CUDA 13
# does, so a caller's short copy of the struct is a stack overflow here (the
# first GPU run crashed on it).
read -ra ASAN_FAKE <<<"$(fake_env asan "$(gcc -print-file-name=libasan.so)")"
for aw in 0 1; do
  run_case "asan/fake cuda cuda-aware=$aw np=2" 120 expect_all "gpu check: p=2 cuda-aware=$aw: ok" -- \
    env "${ASAN_FAKE[@]}" ASAN_OPTIONS=detect_leaks=0 COLLC_TEST_CUDA_AWARE=$aw "${FAKE_FORCE[@]}" \
    "${OMPIRUN[@]}" 2 build-asan/tests/mpi_gpu_preload check
done
run_case "asan/kernels np=2" 120 env ASAN_OPTIONS=detect_leaks=0 \
  "${OMPIRUN[@]}" 2 build-asan/tests/mpi_kernels
for np in 2 5; do
  run_case "asan/reductions np=$np" 300 env ASAN_OPTIONS=detect_leaks=0 \
    "${OMPIRUN[@]}" $np build-asan/tests/mpi_reductions
done
for np in 3 6; do
  run_case "asan/persistent np=$np" 300 env ASAN_OPTIONS=detect_leaks=0 \
    "${OMPIRUN[@]}" $np build-asan/tests/mpi_persistent
done
run_case "asan/errors np=2" 120 env ASAN_OPTIONS=detect_leaks=0 \
  "${OMPIRUN[@]}" 2 build-asan/tests/mpi_errors
run_case "asan/vforms allgatherv reduce_scatter np=3" 120 env ASAN_OPTIONS=detect_leaks=0 \
  "${OMPIRUN[@]}" 3 build-asan/tests/mpi_vforms
run_case "asan/vcoll allgatherv reduce_scatter hier np=5 node=2" 120 env ASAN_OPTIONS=detect_leaks=0 \
  COLLC_NODE_SIZE=2 "${OMPIRUN[@]}" 5 build-asan/tests/mpi_vcoll
run_case "asan/factorize np=6" 120 env ASAN_OPTIONS=detect_leaks=0 \
  "${OMPIRUN[@]}" 6 build-asan/tests/mpi_factorize
run_case "asan/tuning files np=2" 300 env ASAN_OPTIONS=detect_leaks=0 \
  tests/tuning_mpi.sh "Open MPI" build-asan "${OMPIRUN[@]}"
run_case "asan/collc-tune --quick np=3" 300 env ASAN_OPTIONS=detect_leaks=0 \
  tests/tune_mpi.sh "Open MPI" build-asan 3 "${OMPIRUN[@]}"
# The Fortran entry points (request and status conversions): the sanitized
# library preloaded, after the sanitizer runtimes, into the unmodified programs.
asan_pre="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so):$PWD/build-asan/libcollc.so"
for t in f08 mpifh mixed; do
  [[ -x $OMPI/tests/fortran_$t && -f build-asan/libcollc.so ]] || continue
  run_case "asan/fortran $t preload np=3" 120 "${OMPIRUN[@]}" 3 -x ASAN_OPTIONS=detect_leaks=0 \
    -x LD_PRELOAD="$asan_pre" "$OMPI/tests/fortran_$t"
done
# More nonblocking call keys outstanding than the call cache has slots: a
# replaced entry's plan must outlive the requests running it.
run_case "asan/nonblocking preload (iallreduce recexch) np=3" 120 "${OMPIRUN[@]}" 3 \
  -x ASAN_OPTIONS=detect_leaks=0 -x COLLC_ALLREDUCE=recexch -x LD_PRELOAD="$asan_pre" \
  "$OMPI/tests/mpi_nonblocking_preload"

run_case "asan/memo preload, plans forced np=3" 120 env "${MEMO_FORCED[@]}" "${OMPIRUN[@]}" 3 \
  -x ASAN_OPTIONS=detect_leaks=0 -x LD_PRELOAD="$asan_pre" "$OMPI/tests/mpi_memo_preload" 10

section "ThreadSanitizer (MPI_THREAD_MULTIPLE: 4 threads per rank; build-tsan, tests/tsan.supp)"
# tsan_case LIMIT CMD...: CMD (an MPI run of a build-tsan program, stopped
# after LIMIT s) passes and ThreadSanitizer reports no race, deadlock or
# misuse with a frame of collc's code (src/) or the test's (tests/) in one
# of the report's own stacks (not where threads were created, memory
# allocated or mutexes made); the MPI library's reports are suppressed
# (tests/tsan.supp). Each process logs to its own file; reports of ours are
# printed, also when CMD timed out.
export TSAN_REPORTS_OURS='
  /^WARNING: ThreadSanitizer/ { r = ""; o = 0; skip = 0 }
  { r = r $0 "\n" }
  /^  [^ #]/ { skip = /created (by|at)|allocated by|Location is|As if synchronized/ }
  /^    #[0-9]+ / && !skip && / (src|tests)\/[^ ]*:[0-9]+/ { o = 1 }
  /^SUMMARY: ThreadSanitizer/ && o { printf "%s", r > "/dev/stderr"; c++ }
  END { print c + 0 }'
# One line per report: its kind, then per stack (access, lock) its heading
# and its first frame in collc's or the test's code (else its first frame).
export TSAN_REPORT_LINES='
  function flush() { if (hdr != "") line = line " | " hdr " " (fo != "" ? fo : f0); hdr = "" }
  /^WARNING: ThreadSanitizer/ { k = $0; sub(/.*ThreadSanitizer: /, "", k); sub(/ \(pid=.*/, "", k)
    line = ""; hdr = ""; next }
  /^  [^ #]/ { flush(); h = $0
    if (h ~ /created (by|at)|allocated by|Location is|As if synchronized/) next
    sub(/^ +/, "", h); sub(/ at 0x[0-9a-f]+/, "", h); sub(/ \(mutexes:[^)]*\)/, "", h)
    sub(/ by (main )?thread( T[0-9]+)?/, "", h); sub(/:$/, "", h); hdr = h; f0 = fo = "" }
  /^    #[0-9]+ / && hdr != "" { if (f0 == "") f0 = $2 " " $3
    if (fo == "" && $3 ~ /^(src|tests)\//) fo = $2 " " $3 }
  /^SUMMARY: ThreadSanitizer/ { flush(); print k line }'
tsan_case() {
  local limit=$1 dir rc=0 pre=() f n=0 ours=0
  local probe=(build-tsan/bin/collc-explain allreduce recexch 4 0 100)
  shift
  if [[ ! -x ${probe[0]} ]]; then
    echo "${probe[0]} missing: make tsan builds build-tsan/"
    return 1
  fi
  dir=$(mktemp -d /tmp/collc-tsan.XXXXXX)
  # TSan's shadow memory wants few random bits in mmap addresses: where the
  # kernel gives more (vm.mmap_rnd_bits above 28 with GCC 12's TSan) it dies
  # at start ("unexpected memory mapping"); without address randomisation
  # (setarch -R, inherited by mpirun's processes) it runs.
  if ! "${probe[@]}" >/dev/null 2>"$dir/probe"; then
    pre=(setarch "$(uname -m)" -R)
    if ! "${pre[@]}" "${probe[@]}" >/dev/null 2>>"$dir/probe"; then
      echo "ThreadSanitizer cannot run here (vm.mmap_rnd_bits=$(cat /proc/sys/vm/mmap_rnd_bits \
        2>/dev/null), with and without setarch -R):"
      head -n 5 "$dir/probe"
      rm -rf "$dir"
      return 1
    fi
    echo "(under setarch -R: without address randomisation)"
  fi
  TSAN_OPTIONS="suppressions=$PWD/tests/tsan.supp halt_on_error=0 exitcode=66 \
report_signal_unsafe=0 history_size=7 log_path=$dir/tsan" \
    timeout "$limit" "${pre[@]+"${pre[@]}"}" "$@" >"$dir/out" 2>&1 || rc=$?
  cat "$dir/out"
  for f in "$dir"/tsan.*; do
    [[ -e $f ]] || continue
    n=$((n + $(grep -c '^WARNING: ThreadSanitizer' "$f")))
    ours=$((ours + $(awk "$TSAN_REPORTS_OURS" "$f" 2>>"$dir/ours")))
  done
  if ((ours > 0)); then
    cat "$dir/ours"
    echo "ThreadSanitizer reports in collc's or the test's code (per stack: its first frame there):"
    awk "$TSAN_REPORT_LINES" "$dir/ours" | sort | uniq -c | sort -rn
  fi
  echo "ThreadSanitizer: $n reports, $ours in collc's or the test's code; exit status $rc" \
    "$( ((rc == 124)) && echo '(timed out)')"
  local passed=0
  grep -Eq ': (PASS|SKIP)' "$dir/out" && passed=1
  rm -rf "$dir"
  # exitcode=66: a process had reports (none of ours, then: passes).
  ((ours == 0 && passed && (rc == 0 || (rc == 66 && n > 0))))
}
for np in 2 4; do
  run_case "openmpi/threads np=$np" $((15 + 8 * np)) "${OMPIRUN[@]}" $np "$OMPI/tests/mpi_threads"
done
run_case "openmpi/threads self-test must fail np=2" 20 bash -c '! "$@"' _ \
  env COLLC_TEST_BREAK=7 COLLC_TEST_ITERS=60 "${OMPIRUN[@]}" 2 "$OMPI/tests/mpi_threads"
for np in 2 4; do
  run_case "tsan/threads np=$np" $((35 + 7 * np)) tsan_case $((30 + 7 * np)) env COLLC_TEST_ITERS=300 \
    "${OMPIRUN[@]}" $np build-tsan/tests/mpi_threads
done
section

echo
echo "$pass passed, $fail failed"
for f in "${failed[@]+"${failed[@]}"}"; do echo "  failed: $f"; done
[[ $fail -eq 0 ]]
