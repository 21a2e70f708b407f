#!/usr/bin/env bash
# benchmarks/queue_pipe measures what it says (its rows and table only, no rate is asserted):
#   queue_pipe_check.sh BUILD_DIR
# queue_pipe prints its three rows; a bad flag is one line and status 2; queue_pipe.py sets them
# beside Python's multiprocessing in one table with the ratios.
# shellcheck source=../support/check_start.sh
source "$(dirname "$0")/../support/check_start.sh" "$1"

bin="$build/benchmarks/queue_pipe/queue_pipe"
"$bin" --items 2000 --round-trips 200 --batch 100 >"$work/rows.csv"
for measure in queue_items queue_items_batched pipe_round_trips; do
  expect_line "$work/rows.csv" "^fiber,$measure,[0-9]+,[0-9.]+,[0-9.]+$"
done
status=0
"$bin" --items 0 2>"$work/bad.err" >/dev/null || status=$?
[[ $status -eq 2 ]] || fail "a bad flag exited with $status, not 2"
[[ $(wc -l <"$work/bad.err") -eq 1 ]] || { cat "$work/bad.err" >&2; fail "not one line"; }

/usr/bin/python3 "$root/benchmarks/queue_pipe/queue_pipe.py" "$build" --items 2000 \
  --round-trips 200 --batch 100 --runs 1 --csv "$work/best.csv" >"$work/table.md"
expect_line "$work/table.md" '^\| Queue items/s, one put/get per item \| [0-9,]+ \| [0-9,]+ \| [0-9.]+ \|$'
expect_line "$work/table.md" '^\| Pipe round trips/s \| [0-9,]+ \| [0-9,]+ \| [0-9.]+ \|$'
expect_line "$work/best.csv" '^multiprocessing,pipe,[0-9.]+'
echo "queue_pipe: rows, flags and table as expected"
