#!/bin/sh
# deps.sh - make sure the Debian packages collc builds and tests with are here.
# As root, missing ones are installed with apt-get; otherwise the exact
# command is printed and the script fails.
set -u
need=""
have() { command -v "$1" >/dev/null 2>&1; }
have gcc            || need="$need gcc"
have gfortran       || need="$need gfortran" # (mpifort.openmpi, mpifort.mpich: tests/fortran)
have make           || need="$need make"
have mpicc.openmpi  || need="$need openmpi-bin libopenmpi-dev"
have mpicc.mpich    || need="$need mpich libmpich-dev"
have gnuplot        || need="$need gnuplot-nox"
have valgrind       || need="$need valgrind"
have pkg-config     || need="$need pkg-config"
[ -f /usr/include/zlib.h ] || need="$need zlib1g-dev"
[ -f /usr/include/hwloc.h ] || need="$need libhwloc-dev"
[ -f /usr/include/jansson.h ] || need="$need libjansson-dev" # (tuning files)
have clang          || need="$need clang"
have jq             || need="$need jq" # (tests: tuning files)
have smpicc         || need="$need libsimgrid-dev"
[ -z "$need" ] && exit 0
cmd="apt-get install -y --no-install-recommends$need"
if [ "$(id -u)" != 0 ]; then
  echo "collc: missing packages; run as root:" >&2
  echo "  apt-get update && $cmd" >&2
  exit 1
fi
echo "collc: installing:$need"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null && $cmd >/dev/null || { echo "collc: apt-get failed" >&2; exit 1; }
