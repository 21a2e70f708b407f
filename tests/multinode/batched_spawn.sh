#!/usr/bin/env bash
# A pool of 12 workers on the 3 simulated nodes starts with at most one spawn call per node
# (docs/design.md, "Where a change goes": worker_spawner.cpp): the runtime says each spawn at
# debug level, and the test program checks the workers are on every node and all work.
#   tests/multinode/batched_spawn.sh MULTINODE_TEST
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
nodes=$(grep -c . "$here/hostfile")
log=$(mktemp)
trap 'rm -f "$log"' EXIT
FIBER_OVERSUBSCRIBE=1 FIBER_LOG_LEVEL=debug "$here/run.sh" "$1" \
  --gtest_filter=MultiNode.TwelveWorkersStartOnEveryNode >"$log" 2>&1
status=$?
spawns=$(grep -c "with one spawn" "$log")
if [[ $status -ne 0 ]]; then
  cat "$log"
  echo "batched_spawn: the twelve-worker pool failed (status $status)" >&2
  exit 1
fi
echo "12 workers on $nodes nodes: $spawns spawn call(s)"
if [[ $spawns -lt 1 || $spawns -gt $nodes ]]; then
  grep "spawn" "$log" >&2
  echo "batched_spawn: $spawns spawn calls for 12 workers on $nodes nodes (at most $nodes)" >&2
  exit 1
fi
