#!/usr/bin/env bash
# A pool of 12 workers on the 3 simulated nodes starts with at most one spawn call per node
# (docs/design.md, "Where a change goes": worker_spawner.cpp): the runtime says each spawn at
# debug level, and the test program checks the workers are on every node and all work.
#   tests/multinode/batched_spawn.sh MULTINODE_TEST
set -uo pipefail
# shellcheck source=debug_log_run.sh
source "$(dirname "$0")/debug_log_run.sh"
run_case batched_spawn "$1" MultiNode.TwelveWorkersStartOnEveryNode
spawns=$(grep -c "with one spawn" "$log")
echo "12 workers on $nodes nodes: $spawns spawn call(s)"
if [[ $spawns -lt 1 || $spawns -gt $nodes ]]; then
  grep "spawn" "$log" >&2
  echo "batched_spawn: $spawns spawn calls for 12 workers on $nodes nodes (at most $nodes)" >&2
  exit 1
fi
