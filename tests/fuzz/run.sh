#!/usr/bin/env bash
# tests/fuzz/run.sh SECONDS - fuzz the wisdom loader for SECONDS (make fuzz;
# make check runs it briefly). Seeds are real wisdom files written by
# unit_wisdom --seeds; the corpus grows in build-fuzz/corpus across runs.
# Exits non-zero if libFuzzer finds a crash, a leak or an abort (the input
# is left in build-fuzz/ as crash-*).
set -eu
cd "$(dirname "$0")/../.."
secs=${1:-600}
mkdir -p build-fuzz/corpus
build-openmpi/tests/unit_wisdom --seeds build-fuzz/corpus
exec build-fuzz/wisdom_fuzz -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix=build-fuzz/ build-fuzz/corpus
