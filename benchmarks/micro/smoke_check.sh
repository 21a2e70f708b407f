#!/usr/bin/env bash
# fiber_micro_benchmarks runs every benchmark (a tiny --benchmark_min_time: behaviour only, no
# time is asserted) and prints a row for each.
#   smoke_check.sh FIBER_MICRO_BENCHMARKS
set -uo pipefail
program=$1
benchmarks=(BM_BatchAdd BM_ForEachEntry BM_ResultEntryReader BM_JobStoreAndWait BM_ItemRunner
            BM_EncodeDecodeRaw BM_EncodeDecodeArchive BM_WorkerQueueCycle/1024
            BM_SilenceQueueHeard/1024)
fail() { echo "FAIL: $*" >&2; exit 1; }
output=$(mktemp)
trap 'rm -f "$output"' EXIT

"$program" --benchmark_min_time=0.001 >"$output" 2>&1
status=$?
[[ $status -eq 0 ]] || { cat "$output"; fail "fiber_micro_benchmarks exited with $status"; }
for name in "${benchmarks[@]}"; do
  grep -Eq "^$name +[0-9.]+ [mun]?s +[0-9.]+ [mun]?s +[0-9]+" "$output" ||
    { cat "$output"; fail "no row for $name"; }
done
echo "ok: a row for each of the ${#benchmarks[@]} micro-benchmarks"
