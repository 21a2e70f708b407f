#!/usr/bin/env bash
# A simulated node lost, in two cases, each a gtest case of MULTINODE_TEST run under fiberrun with
# oversubscription (so that the pool does try to spawn replacements: the spawn that ended the
# whole job, docs/platform.md "A lost node forbids spawns"):
# - MultiNode.LostNodeCostsOnlyItsItems: every process of nodeC (its node daemon, workers and task
#   processes) SIGKILLed mid-map: the map completes and the pool works on;
# - MultiNode.KilledNodeDaemonLeavesTheJobUsable: nodeC's daemon alone SIGKILLed: its workers
#   leave, a map completes, a resize that would spawn is refused, the pool works on;
# - MultiNode.LostNodeOfIdleWorkersForbidsOnlySpawns: every process of nodeC SIGKILLed while its
#   workers in a pool had no work: a resize that would spawn is refused, the pool works on;
# - MultiNode.KilledNodeDaemonOfIdleWorkersForbidsOnlySpawns: the same with nodeC's daemon alone;
# - MultiNode.LostNodeOfParkedWorkersForbidsOnlySpawns: the same with nodeC's workers parked: a
#   pool that needs a spawn is refused, one of the live parked workers works.
# Each must end with fiberrun's status 0. Each node has a /dev/shm of its own (FAKE_NODE_SHM),
# removed at the end with what the killed node left there, as a lost machine's memory goes with
# it. When only the daemon was killed, nothing may be left in any node's /dev/shm: nodeC's
# workers remove their Open MPI segments themselves (docs/platform.md, "A clean end").
#   tests/multinode/lost_node.sh FIBERRUN MULTINODE_TEST
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
nodes=$(mktemp -d /dev/shm/fiber-test-nodes.XXXXXX)
trap 'rm -rf "$nodes"' EXIT
for test in MultiNode.LostNodeCostsOnlyItsItems MultiNode.KilledNodeDaemonLeavesTheJobUsable \
  MultiNode.LostNodeOfIdleWorkersForbidsOnlySpawns \
  MultiNode.KilledNodeDaemonOfIdleWorkersForbidsOnlySpawns \
  MultiNode.LostNodeOfParkedWorkersForbidsOnlySpawns; do
  status=0
  mkdir "$nodes/$test"
  FAKE_NODE_SHM=$nodes/$test FIBER_OVERSUBSCRIBE=1 FIBER_MULTINODE_LAUNCHER="$1" "$here/run.sh" \
    "$2" --gtest_filter="$test" || status=$?
  if [[ $status -ne 0 ]]; then
    echo "lost_node: $test: the job ended with status $status (0 expected: the job goes on)" >&2
    exit 1
  fi
done
left=$(find "$nodes/MultiNode.KilledNodeDaemonLeavesTheJobUsable" -type f)
if [[ -n $left ]]; then
  echo "lost_node: left in the nodes' /dev/shm after nodeC's daemon was killed:" \
    "$(tr '\n' ' ' <<<"$left")" >&2
  exit 1
fi
