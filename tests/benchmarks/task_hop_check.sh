#!/usr/bin/env bash
# benchmarks/task_hop counts what it says (counts only, no time is asserted):
#   task_hop_check.sh BUILD_DIR
# task_hop prints each counter for the master, the worker and, with Isolation::process, the task
# process; the hop goes through shared memory, so neither the task process nor the worker makes a
# write call per task (with Isolation::process or none); the floor rows (a pipe write and read, a
# sched_yield) are there; a bad flag is one line; task_hop.py turns interleaved runs into its table.
# shellcheck source=../support/check_start.sh
source "$(dirname "$0")/../support/check_start.sh" "$1"

"$build/benchmarks/task_hop/task_hop" --tasks 500 --repeats 1 >"$work/hop.csv"
expect_line "$work/hop.csv" '^none,all,500,wall_us,[0-9.]+$'
expect_line "$work/hop.csv" '^process,all,500,wall_us,[0-9.]+$'
for counter in cpu_us runqueue_us timeslices voluntary involuntary reads writes; do
  for row in none,master none,worker process,master process,worker process,task_process; do
    expect_line "$work/hop.csv" "^$row,500,$counter,[0-9.]+$"
  done
done
for floor in pipe_write_read_us sched_yield_us; do
  expect_line "$work/hop.csv" "^floor,self,[0-9]+,$floor,[0-9.]+$"
done
grep -q '^none,task_process,' "$work/hop.csv" && fail "a task process with Isolation::none"
expect_line "$work/hop.csv" '^process,task_process,500,writes,0\.0000$'
expect_line "$work/hop.csv" '^process,worker,500,writes,0\.0000$'
expect_line "$work/hop.csv" '^none,worker,500,writes,0\.0000$'

if "$build/benchmarks/task_hop/task_hop" --tasks 0 >/dev/null 2>"$work/bad.txt"; then
  fail "task_hop --tasks 0 succeeded"
fi
[[ $(wc -l <"$work/bad.txt") -eq 1 ]] || { cat "$work/bad.txt" >&2; fail "not one line"; }
expect_line "$work/bad.txt" '^task_hop: --tasks'

/usr/bin/python3 "$root/benchmarks/task_hop/task_hop.py" "$build" --tasks 500 --runs 2 \
  >"$work/table.md"
floors='in one process, a small pipe write and read: [0-9.]+ us, a sched_yield: [0-9.]+ us'
expect_line "$work/table.md" "^MPI round trip \(spawned process, best of the runs\): [0-9.]+ us; $floors\.\$"
expect_line "$work/table.md" '^\| wall time / MPI round trip \| [0-9.]+ \| [0-9.]+ \| -?[0-9.]+ \|$'
grep -q '^| task_process: write calls' "$work/table.md" && fail "the table has task process writes"
echo "task_hop: its counters for every process, no write per task either way, the table"
