#!/usr/bin/env bash
# tests/wisdom_mpi.sh LAUNCHER... -- PROGRAM: COLLC_WISDOM across runs of an
# MPI test program (which must pass every time, comparing with native):
#  1. an empty directory: plans are compiled and saved (saved >= 1);
#  2. again: plans are loaded (loaded >= 1, saved = 0, ignored = 0);
#  3. files damaged (garbage, truncated, a byte flipped, one from another
#     version): each ignored with a warning, compiled again (ignored >= 1);
#  4. a directory that cannot be written: one warning, still correct.
# Counts are rank 0's collc-wisdom line (COLLC_STATS=1).
set -u
launch=()
while [[ $# -gt 0 && $1 != -- ]]; do launch+=("$1"); shift; done
shift
dir=$(mktemp -d /tmp/collc-wisdom-mpi.XXXXXX)
trap 'rm -rf "$dir"' EXIT
export COLLC_STATS=1

# run ENV...: the program with these variables set.
run() { env "$@" "${launch[@]}" 2>&1; }

# check NAME REGEX ENV...: it must pass and print REGEX.

check() {
  local name=$1 want=$2 out rc
  shift 2
  out=$(run "$@"); rc=$?
  if ((rc != 0)) || ! grep -Eq "$want" <<<"$out"; then
    echo "$out" | tail -20
    echo "wisdom_mpi: step '$name' failed (status $rc, wanted /$want/)"
    exit 1
  fi
  echo "wisdom_mpi: $name: $(grep -E '^collc-wisdom' <<<"$out" | head -1)"
}

check "first run saves" '^collc-wisdom: loaded=[0-9]+ saved=[1-9]' COLLC_WISDOM="$dir"
n=$(ls "$dir" | wc -l)
((n > 0)) || { echo "wisdom_mpi: no files written"; exit 1; }
ls "$dir" | grep -q '\.tmp\.' && { echo "wisdom_mpi: temporary files left"; exit 1; }
check "second run loads" '^collc-wisdom: loaded=[1-9][0-9]* saved=0 ignored=0' COLLC_WISDOM="$dir"
i=0
for f in "$dir"/*.cw; do
  case $((i++ % 4)) in
    0) printf 'garbage' >"$f" ;;
    1) truncate -s $(($(stat -c %s "$f") / 2)) "$f" ;;
    2) printf '\x7f' | dd of="$f" bs=1 seek=$(($(stat -c %s "$f") - 9)) conv=notrunc 2>/dev/null ;;
    3) printf '9' | dd of="$f" bs=1 seek=16 conv=notrunc 2>/dev/null ;; # library version 9.x
  esac
done
WANT2='COLLC_WISDOM: ignoring .*\.cw: ' check "damaged files ignored, with a warning" \
  'collc-wisdom: loaded=[0-9]+ saved=[0-9]+ ignored=[1-9]' COLLC_WISDOM="$dir"
check "unwritable directory" 'COLLC_WISDOM: cannot write into' COLLC_WISDOM=/proc/collc-none
echo "wisdom_mpi: PASS ($n files)"
