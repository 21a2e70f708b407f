#!/usr/bin/env bash
# scripts/bench.sh's harness (benchmarks/contained_run.py), with real peers:
#   bench_harness_check.sh BUILD_DIR hung-peer|interrupted|bad-options
# hung-peer: with mpi4py.futures made to hang (FIBER_BENCH_HANG) once its workers are up,
#   `bench.sh --quick --only throughput,overhead` goes on after it: the throughput table says
#   "hung (no output for N s)" in its columns, the overhead table "hung (in throughput ...; not
#   run again)", the other peers' rows are there, its processes (at least the singleton, its
#   orted and a spawned worker) were stopped, and no process of the run is left. Counts and
#   contents only: no time is asserted.
# interrupted: SIGTERM to bench.sh while that peer hangs: it ends (status 130) and leaves none of
#   the run's processes.
# bad-options: each bad option of bench.sh and contained_run.py gives one line on stderr and a
#   non-zero exit.
set -euo pipefail
build=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# shellcheck source=../support/expect_line.sh
source "$(dirname "$0")/../support/expect_line.sh"
hang_wait_polls=300  # seconds to wait for the peer's hang, at most (it comes after fiber's runs)
count_lines() { grep -Ec "$2" "$1" || true; }

case "$2" in
hung-peer)
  hang_limit=20
  export FIBER_BENCH_RUN="harness-check-$$" FIBER_BENCH_HANG=mpi4py.futures
  status=0
  "$root/scripts/bench.sh" --quick --only throughput,overhead --build "$build" \
    --results "$work/results" --hang-limit "$hang_limit" >"$work/out.txt" 2>"$work/err.txt" ||
    status=$?
  results=$work/results
  [[ $status -eq 1 ]] || { tail -20 "$work/err.txt" >&2; fail "bench.sh exited with $status, not 1"; }
  expect_line "$results/run.txt" \
    '^failed: mpi4py\.futures_throughput mpi4py\.futures_overhead$'

  left=$(grep -l "FIBER_BENCH_MEASURED=$FIBER_BENCH_RUN:" /proc/[0-9]*/environ 2>/dev/null || true)
  [[ -z $left ]] || fail "processes of the run left: $left"

  # Hung in throughput (its processes stopped: the singleton, its orted, a spawned worker), so
  # not run again in overhead.
  hung="hung \(no output for $hang_limit s\)"
  hung_earlier="hung \(in throughput earlier in this run; not run again\)"
  states=$results/throughput_peers.csv
  expect_line "$states" "^mpi4py\.futures,hung,no output for $hang_limit s,"
  stopped=$(grep '^mpi4py\.futures,' "$states" | awk -F, '{print $NF}' | tr -d '\r')
  [[ $stopped -ge 3 ]] || fail "only $stopped processes of the hung peer stopped"
  expect_line "$results/throughput.md" \
    "^mpi4py\.futures: $hung, its last line: 'mpi4py\.futures: hanging on purpose"
  states=$results/overhead_peers.csv
  expect_line "$states" "^mpi4py\.futures,hung,in throughput earlier in this run; not run again,,0"
  expect_line "$results/overhead.md" "^- mpi4py\.futures: $hung_earlier"
  for benchmark in throughput overhead; do
    expect_line "$results/${benchmark}_peers.csv" '^multiprocessing,ok,'
    expect_line "$results/${benchmark}_peers.csv" '^ipyparallel,ok,'
  done

  # throughput: 3 worker counts x (map at chunksize 1, at automatic chunks, apply_async) each.
  csv=$results/throughput.csv
  for framework in multiprocessing ipyparallel fiber fiber-inline; do
    [[ $(count_lines "$csv" "^$framework,") -eq 9 ]] || { cat "$csv" >&2; fail "$framework: not 9 rows"; }
  done
  [[ $(count_lines "$csv" '^mpi4py\.futures,') -eq 0 ]] || fail "rows of the hung peer"
  # Every fiber row, with its mp and IPP columns filled and the mpi4py column hung.
  rows=$(count_lines "$results/throughput.md" \
    "^\| (task process|worker) \|.*\| [0-9,]+ \| [0-9.,]+( ok| MISS)? \| $hung \| - \| [0-9,]+ \| ")
  [[ $rows -eq 18 ]] || { cat "$results/throughput.md" >&2; fail "$rows table rows, not 18"; }

  # overhead, 5 workers: (apply_async, map) x (1 ms, 100 us) each; plain MPI: apply_async only.
  csv=$results/overhead.csv
  for expected in multiprocessing:4 ipyparallel:4 fiber:4 fiber-inline:4 mpi-rounds:2 lane-rounds:2; do
    framework=${expected%:*}
    [[ $(count_lines "$csv" "^$framework,[a-z_]+,[0-9.]+,[0-9]+,5,") -eq ${expected#*:} ]] ||
      { cat "$csv" >&2; fail "$framework: not ${expected#*:} rows"; }
  done
  rows=$(count_lines "$results/overhead.md" "^\| (apply_async|map) \|.*\| $hung_earlier \|")
  [[ $rows -eq 4 ]] || { cat "$results/overhead.md" >&2; fail "$rows table rows, not 4"; }
  echo "a hung peer: stopped with its processes, 'hung (...)' in both tables, the rest measured"
  ;;
interrupted)
  # SIGTERM to bench.sh while a peer hangs with its workers up: none of the run's processes stay.
  export FIBER_BENCH_RUN="harness-interrupted-$$" FIBER_BENCH_HANG=mpi4py.futures
  "$root/scripts/bench.sh" --quick --only throughput --build "$build" --results "$work/results" \
    >"$work/out.txt" 2>"$work/err.txt" &
  bench=$!
  for _ in $(seq "$hang_wait_polls"); do
    grep -q 'hanging on purpose' "$work/err.txt" && break
    sleep 1
  done
  grep -q 'hanging on purpose' "$work/err.txt" || { cat "$work/err.txt" >&2; fail "no hang"; }
  kill -TERM "$bench"
  status=0
  wait "$bench" || status=$?
  [[ $status -eq 130 ]] || { tail "$work/err.txt" >&2; fail "bench.sh exited with $status"; }
  expect_line "$work/err.txt" '^bench\.sh: interrupted$'
  left=$(grep -l "FIBER_BENCH_MEASURED=$FIBER_BENCH_RUN:" /proc/[0-9]*/environ 2>/dev/null || true)
  [[ -z $left ]] || fail "processes of the interrupted run left: $left"
  echo "bench.sh interrupted during a hung peer: nothing of the run left"
  ;;
bad-options)
  for options in "--only nosuch" "--hang-limit 0" "--results" "--bogus"; do
    # shellcheck disable=SC2086  # the options are several words
    if "$root/scripts/bench.sh" $options >/dev/null 2>"$work/err.txt"; then
      fail "bench.sh $options succeeded"
    fi
    [[ $(wc -l <"$work/err.txt") -eq 1 ]] || { cat "$work/err.txt" >&2; fail "$options: not one line"; }
    expect_line "$work/err.txt" '^bench\.sh: '
  done
  for options in "--limit 0" "--silence -1" "--states only-states.csv"; do
    # shellcheck disable=SC2086  # the options are several words
    if /usr/bin/python3 "$root/benchmarks/contained_run.py" --name check --output "$work/out.csv" \
      $options -- true 2>"$work/err.txt"; then
      fail "contained_run.py $options succeeded"
    fi
    [[ $(wc -l <"$work/err.txt") -eq 1 ]] || { cat "$work/err.txt" >&2; fail "$options: not one line"; }
    expect_line "$work/err.txt" '^contained_run: '
  done
  echo "bench.sh and contained_run.py: one line for each bad option"
  ;;
*)
  fail "unknown check '$2'"
  ;;
esac
