#!/usr/bin/env bash
# benchmarks/overhead/round_hops.py measures what it says (its table only, no time is asserted):
#   round_hops_check.sh BUILD_DIR
# Both isolations' tables have every hop and the round's rows; a bad flag ends with a line that
# says what is wrong, and status 2.
# shellcheck source=../support/check_start.sh
source "$(dirname "$0")/../support/check_start.sh" "$1"

script="$root/benchmarks/overhead/round_hops.py"
/usr/bin/python3 "$script" "$build" --task-seconds 0.001 --total 0.05 --csv "$work/hops.csv" \
  >"$work/table.md"
for isolation in process none; do
  expect_line "$work/table.md" "^1 ms tasks, Isolation::$isolation \([0-9]+ chunks\)$"
  expect_line "$work/hops.csv" "^0.001,$isolation,the master's turnaround,[0-9.]+,[0-9.]+"
done
for hop in 'master -> worker' 'ring -> task process starts the task' 'the task \(a sleep' \
  "task's end -> worker has its answer" 'worker -> master' 'a round, send to' \
  "its slowest chunk's trip"; do
  [[ $(grep -cE "^\| $hop.* \| [0-9.]+ \| [0-9.]+ \|$" "$work/table.md") -eq 2 ]] ||
    { cat "$work/table.md" >&2; fail "the row '$hop' is not in both tables"; }
done
expect_usage_error '^round_hops.py: error: --total' /usr/bin/python3 "$script" "$build" --total 0
echo "round_hops: tables as expected"
