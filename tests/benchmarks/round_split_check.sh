#!/usr/bin/env bash
# benchmarks/python_pool/round_split.py measures what it says (its tables only, no time is
# asserted):
#   round_split_check.sh BUILD_DIR
# Both tables have every row with two numbers; a bad flag ends with a line that says what is
# wrong, and status 2.
# shellcheck source=../support/check_start.sh
source "$(dirname "$0")/../support/check_start.sh" "$1"

script="$root/benchmarks/python_pool/round_split.py"
/usr/bin/python3 "$script" "$build" --task-seconds 0.001 --rounds 50 >"$work/table.md"
expect_line "$work/table.md" "^Python rounds of 5 apply_async of 1000 us sleeps, [0-9]+ rounds:$"
for row in 'from the first apply_async call to its send' 'from the first send to the last' \
  'from the last answer to every value in the loop' 'master -> worker' \
  'ring -> task process starts the task' 'the task \(a sleep' 'worker -> master' \
  "its slowest chunk's trip" "the master's turnaround"; do
  expect_line "$work/table.md" "^\| $row.* \| [0-9.]+ \| [0-9.]+ \|$"
done
expect_usage_error '^round_split.py: error: --task-seconds must be positive' \
  /usr/bin/python3 "$script" "$build" --rounds 0
echo "round_split: tables as expected"
