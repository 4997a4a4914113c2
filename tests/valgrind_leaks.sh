#!/usr/bin/env bash
# tests/valgrind_leaks.sh - run an MPI program under valgrind and fail if
# collc leaks memory or misuses it.
#
#   tests/valgrind_leaks.sh LAUNCHER... -- PROGRAM [ARGS...]
#   e.g. tests/valgrind_leaks.sh mpirun.mpich -n 2 -- build-mpich/tests/mpi_factorize
#
# Every rank runs as `valgrind --leak-check=full --num-callers=50 PROGRAM`,
# with one log per process. Passes if the program exits 0 and no
# "definitely lost" record, and no invalid read/write/free, has a frame in a
# collc source file (this repository's src/ or include/, by full path, so
# the tests' own files do not count): the MPI libraries' own leaks (hwloc,
# ...) are ignored. The programs must be built from this directory. The records found are printed.
# Environment: VALGRIND (default valgrind), VG_KEEP=1 keeps the logs.
set -u
cd "$(dirname "$0")/.."
launcher=()
while [[ $# -gt 0 && $1 != -- ]]; do launcher+=("$1"); shift; done
[[ $# -ge 2 ]] || { echo "usage: $0 LAUNCHER... -- PROGRAM [ARGS...]" >&2; exit 2; }
shift
logs=$(mktemp -d)
[[ ${VG_KEEP:-0} == 1 ]] || trap 'rm -rf "$logs"' EXIT

# A frame in collc's sources, as valgrind prints it with full paths
# (--fullpath-after=): "(/path/to/repo/src/mpi/state.c:35)".
root=$(pwd -P)
collc_frame="\\(${root//./\\.}/(src/[a-z]+|include)/[A-Za-z0-9_]+\\.[ch]:[0-9]+\\)"
# Not collc's: the MPI_INIT/MPI_FINALIZE forms (Fortran's, and C's MPI_Init
# and MPI_Init_thread in init.c), which only forward to the MPI library's
# own (whose allocations they are).
fwd_frame=": (mpi|MPI)_(init|init_thread|finalize|INIT|INIT_THREAD|FINALIZE|Init|Init_thread|Finalize)[a-z0-9_]* \\(.*/src/mpi/(fortran|init)\\.c:"

"${launcher[@]}" "${VALGRIND:-valgrind}" --leak-check=full --num-callers=50 --fullpath-after= \
  --errors-for-leak-kinds=definite --log-file="$logs/vg.%p" "$@"
status=$?
[[ $status -eq 0 ]] || echo "valgrind_leaks: program exited with status $status"

# Print the records (blank-line separated, "==pid==" prefixed) of kind
# regex $2 from log $1 that have a collc frame; return how many.
records() {
  KIND=$2 FRAME=$collc_frame FWD=$fwd_frame awk '
    BEGIN { kind = ENVIRON["KIND"]; frame = ENVIRON["FRAME"]; fwd = ENVIRON["FWD"] }
    { line = $0; sub(/^==[0-9]+== ?/, "", line) }
    line == "" { if (inrec && hit) { printf "%s", rec; n++ } inrec = 0; hit = 0; rec = ""; next }
    !inrec && line ~ kind { inrec = 1 }
    inrec { rec = rec $0 "\n"; if (line ~ frame && line !~ fwd) hit = 1 }
    END { if (inrec && hit) { printf "%s", rec; n++ } exit (n > 0) }' "$1"
}

bad=0
nlogs=0
for log in "$logs"/vg.*; do
  [[ -e $log ]] || continue
  nlogs=$((nlogs + 1))
  records "$log" 'are definitely lost' || bad=1
  records "$log" '^Invalid (read|write|free)|^Mismatched free' || bad=1
done
[[ $nlogs -gt 0 ]] || { echo "valgrind_leaks: no valgrind logs (did valgrind run?)"; exit 1; }
lost=$(grep -h 'definitely lost:' "$logs"/vg.* |
       awk '{gsub(",", "", $4); s += $4} END {print s + 0}')
echo "valgrind_leaks: $nlogs processes; definitely lost in all (MPI's included): $lost bytes"
if [[ $bad -ne 0 ]]; then
  echo "valgrind_leaks: FAIL: records above have frames in collc sources"
  exit 1
fi
echo "valgrind_leaks: no collc leaks or invalid accesses"
exit "$status"
