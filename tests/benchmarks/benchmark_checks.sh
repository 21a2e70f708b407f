#!/usr/bin/env bash
# The benchmarks' programs and reports do what scripts/bench.sh relies on (behaviour only: no
# time is asserted):
#   benchmark_checks.sh BUILD_DIR throughput|overhead|large-results|reports
# throughput: mpi_roundtrip (the floor) prints its row, and rejects a bad flag in one line.
# overhead: sleep_floor prints the loop floor and the no-framework rounds, mpi_rounds the rounds
#           over plain MPI processes and lane_rounds those over task processes reached through
#           shared memory (each rejects a bad flag in one line), and fiber_overhead
#           --workers 1 prints rounds of one worker for both isolation modes, each with the task
#           counts of the protocol (a tiny --total).
# large-results: large_results prints its row with fiber's transports (UCX_TLS=^cma) and with
#           UCX_TLS=all, in both isolation modes (1 MB results), rejects a bad flag in one line,
#           and its report turns the rows into the table with the ratio.
# reports:  every report.py turns the committed CSV of benchmarks/results/ into the committed
#           Markdown, and draws its PNG; with --page, a report replaces its table in a copy of
#           docs/guide/benchmarks.md between its markers and leaves the rest of the page as it was;
#           es_real's report times no generation from the PSS reading's first on.
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python=/usr/bin/python3

# shellcheck source=../support/expect_line.sh
source "$(dirname "$0")/../support/expect_line.sh"

# one_line FILE: FILE holds exactly one line (an error is one clear line).
one_line() { [[ $(wc -l <"$1") -eq 1 ]] || { cat "$1" >&2; fail "$(basename "$1"): not one line"; }; }

case "$2" in
throughput)
  "$build/benchmarks/throughput/mpi_roundtrip" --round-trips 100 >"$work/roundtrip.csv"
  expect_line "$work/roundtrip.csv" '^mpi,roundtrip,1,1,100,[0-9.]+,[0-9.]+$'
  one_line "$work/roundtrip.csv"
  if "$build/benchmarks/throughput/mpi_roundtrip" --round-trips 0 >/dev/null 2>"$work/bad.txt"; then
    fail "mpi_roundtrip --round-trips 0 succeeded"
  fi
  one_line "$work/bad.txt"
  expect_line "$work/bad.txt" '^mpi_roundtrip: .*round-trips'
  echo "mpi_roundtrip: its row, and one line for a bad flag"
  ;;
large-results)
  header="transports,isolation,workers,megabytes,results,seconds,megabytes_per_second"
  echo "$header" >"$work/large.csv"
  for isolation in --in-worker ""; do
    for transports in "-u UCX_TLS" "UCX_TLS=all"; do
      # shellcheck disable=SC2086  # $transports is env's arguments, $isolation one flag or none
      env $transports "$build/libfiber/fiberrun" "$build/benchmarks/large_results/large_results" \
        --megabytes 1 --results 2 $isolation >>"$work/large.csv"
    done
  done
  for row in '^\^cma,none,1,1,2,' '^all,none,1,1,2,' '^\^cma,process,1,1,2,' '^all,process,1,1,2,'; do
    expect_line "$work/large.csv" "$row[0-9.]+,[0-9.]+$"
  done
  if "$build/libfiber/fiberrun" "$build/benchmarks/large_results/large_results" --results 0 \
    >/dev/null 2>"$work/bad.txt"; then
    fail "large_results --results 0 succeeded"
  fi
  one_line "$work/bad.txt"
  expect_line "$work/bad.txt" '^large_results: .*results'
  $python "$root/benchmarks/large_results/report.py" "$work/large.csv" --markdown "$work/large.md"
  expect_line "$work/large.md" '^\| none \| [0-9]+ \| [0-9]+ \| [0-9.]+x \| 1 \|$'
  expect_line "$work/large.md" '^\| process \| [0-9]+ \| [0-9]+ \| [0-9.]+x \| 1 \|$'
  echo "large_results: its rows for both transports and isolations, one line for a bad flag, the report"
  ;;
overhead)
  # 20 ms of 1 ms tasks: 100 tasks over the paper's 5 workers, 20 for one worker.
  "$build/benchmarks/overhead/sleep_floor" --total 0.02 --task-seconds 0.001 --repeats 1 \
    >"$work/floor.csv"
  expect_line "$work/floor.csv" '^floor,loop,0\.001,100,5,[0-9.]+,100$'
  expect_line "$work/floor.csv" '^floor-rounds,apply_async,0\.001,100,5,[0-9.]+,100$'
  "$build/benchmarks/overhead/mpi_rounds" --total 0.02 --task-seconds 0.001 0.0001 --repeats 1 \
    >"$work/mpi.csv"
  expect_line "$work/mpi.csv" '^mpi-rounds,apply_async,0\.001,100,5,[0-9.]+,100$'
  expect_line "$work/mpi.csv" '^mpi-rounds,apply_async,0\.0001,1000,5,[0-9.]+,1000$'
  [[ $(wc -l <"$work/mpi.csv") -eq 2 ]] || { cat "$work/mpi.csv" >&2; fail "not 2 lines"; }
  if "$build/benchmarks/overhead/mpi_rounds" --workers 0 >/dev/null 2>"$work/bad.txt"; then
    fail "mpi_rounds --workers 0 succeeded"
  fi
  one_line "$work/bad.txt"
  expect_line "$work/bad.txt" '^mpi_rounds: .*workers'
  "$build/benchmarks/overhead/lane_rounds" --total 0.02 --task-seconds 0.001 0.0001 --repeats 1 \
    >"$work/lane.csv"
  expect_line "$work/lane.csv" '^lane-rounds,apply_async,0\.001,100,5,[0-9.]+,100$'
  expect_line "$work/lane.csv" '^lane-rounds,apply_async,0\.0001,1000,5,[0-9.]+,1000$'
  [[ $(wc -l <"$work/lane.csv") -eq 2 ]] || { cat "$work/lane.csv" >&2; fail "not 2 lines"; }
  if "$build/benchmarks/overhead/lane_rounds" --total 0 >/dev/null 2>"$work/bad.txt"; then
    fail "lane_rounds --total 0 succeeded"
  fi
  one_line "$work/bad.txt"
  expect_line "$work/bad.txt" '^lane_rounds: .*total'
  "$build/benchmarks/overhead/fiber_overhead" --workers 1 --total 0.02 --task-seconds 0.001 \
    --modes apply_async --repeats 1 >"$work/fiber.csv"
  expect_line "$work/fiber.csv" '^fiber,apply_async,0\.001,20,1,[0-9.]+,20$'
  expect_line "$work/fiber.csv" '^fiber-inline,apply_async,0\.001,20,1,[0-9.]+,20$'
  [[ $(wc -l <"$work/fiber.csv") -eq 2 ]] || { cat "$work/fiber.csv" >&2; fail "not 2 lines"; }
  echo "sleep_floor, mpi_rounds and fiber_overhead --workers 1: the protocol's rows"
  ;;
reports)
  results=$root/benchmarks/results
  for name in throughput overhead es_scaling noise_memory elasticity idle_workers startup; do
    plot=(--plot "$work/$name.png")
    [[ $name == elasticity || $name == idle_workers || $name == startup ]] && plot=()
    $python "$root/benchmarks/$name/report.py" "$results/$name.csv" --markdown "$work/$name.md" \
      "${plot[@]}" >/dev/null || fail "$name report failed"
    diff -u "$results/$name.md" "$work/$name.md" ||
      fail "$name: the report no longer writes what benchmarks/results/$name.md holds"
    [[ $name == elasticity || $name == idle_workers || $name == startup || -s $work/$name.png ]] ||
      fail "$name: no plot"
  done
  # es_real's timed generations end at the PSS reading's first (its row has the PSS; the
  # generations after it read PSS too): a generation appended after the committed 256-worker
  # run's PSS row, however slow, changes none of its medians.
  $python - "$root/benchmarks/es_real" "$results/es_real.csv" <<'PY' ||
import csv, sys
sys.path.insert(0, sys.argv[1])
import report
rows = [r for r in csv.DictReader(open(sys.argv[2]))
        if r["kind"] == "fiber" and r["workers"] == "256"]
last = max(rows, key=lambda r: int(r["generation"]))
assert last["pss_processes"], "the 256-worker run's last row has no PSS"
after = dict(last, generation=str(int(last["generation"]) + 1), wall_seconds="999",
             pss_processes="", pss_worker_bytes="", pss_task_bytes="")
before, longer = report.Count(rows), report.Count(rows + [after])
assert (longer.timed, longer.m) == (before.timed, before.m), (longer.timed, before.timed)
PY
    fail "es_real report: a generation after the PSS reading's first counted as timed"
  # A line that is no row (UCX wrote its warnings to stdout until fiber sent them to stderr):
  # one line that names it, no traceback.
  { head -3 "$results/noise_memory.csv"
    echo "[1796289135.237909] [vm:23245:0] tag_match.c:62 UCX WARN unexpected tag-receive"
  } >"$work/stray.csv"
  if $python "$root/benchmarks/noise_memory/report.py" "$work/stray.csv" 2>"$work/stray.txt"; then
    fail "a CSV with a stray line was reported"
  fi
  one_line "$work/stray.txt"
  expect_line "$work/stray.txt" "^report: .*stray.csv line 4 is not a row of table,workers,"
  # --page: each table scripts/bench.sh writes there, into a copy of the page whose tables are
  # emptied; outside the markers the page stays the same, and each table is the report's.
  page=$root/docs/guide/benchmarks.md
  outside_tables() {
    sed '/^<!-- .* table: written by scripts\/bench.sh -->$/,/^<!-- end of .* table -->$/d' "$1"
  }
  awk '/^<!-- .* table: written by scripts\/bench.sh -->$/ { print; inside = 1; next }
       /^<!-- end of .* table -->$/ { inside = 0 }
       !inside' "$page" >"$work/page.md"
  for name in throughput overhead python_pool es_scaling es_real noise_memory ppo_scaling \
      elasticity idle_workers startup; do
    peers=()
    [[ -e $results/${name}_peers.csv ]] && peers=(--peer-states "$results/${name}_peers.csv")
    $python "$root/benchmarks/$name/report.py" "$results/$name.csv" "${peers[@]}" \
      --page "$work/page.md" >/dev/null || fail "$name report --page failed"
  done
  diff -u <(outside_tables "$page") <(outside_tables "$work/page.md") ||
    fail "--page changed docs/guide/benchmarks.md outside its tables' markers"
  [[ $(grep -c "^<!-- .* table: written by scripts/bench.sh -->$" "$work/page.md") -eq 10 ]] ||
    fail "--page: not 10 tables between markers"
  empty=$(awk '/^<!-- .* table: written by scripts\/bench.sh -->$/ { name = $2; lines = 0; next }
               /^<!-- end of .* table -->$/ { if (lines == 0) print name }
               { lines++ }' "$work/page.md")
  [[ -z $empty ]] || fail "--page wrote no table for: $empty"
  grep -q "^| 1 | 16 | master's host | held |" "$work/page.md" ||
    fail "--page: the idle_workers table is not the report's"
  echo "7 reports: the committed tables, and their plots; a stray line refused in one line;"
  echo "10 reports written into a copy of docs/guide/benchmarks.md (--page)"
  ;;
*)
  fail "unknown check '$2'"
  ;;
esac
