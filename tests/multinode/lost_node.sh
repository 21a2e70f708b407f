#!/usr/bin/env bash
# A simulated node lost mid-map: every process of nodeC (its node daemon, workers and task
# processes) SIGKILLed by the test program (MultiNode.LostNodeCostsOnlyItsItems), run under
# fiberrun with oversubscription, so that the pool does try to replace the lost workers (the spawn
# that ended the whole job: docs/platform.md, "A lost node forbids spawns"). The map must complete,
# the pool work on, and fiberrun exit 0 in bounded time. Each node has a /dev/shm of its own
# (FAKE_NODE_SHM), removed at the end with what the killed node left there, as a lost machine's
# memory goes with it.
#   tests/multinode/lost_node.sh FIBERRUN MULTINODE_TEST
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
nodes=$(mktemp -d /dev/shm/fiber-test-nodes.XXXXXX)
trap 'rm -rf "$nodes"' EXIT
status=0
FAKE_NODE_SHM=$nodes FIBER_OVERSUBSCRIBE=1 FIBER_MULTINODE_LAUNCHER="$1" "$here/run.sh" "$2" \
  --gtest_filter=MultiNode.LostNodeCostsOnlyItsItems || status=$?
if [[ $status -ne 0 ]]; then
  echo "lost_node: the job ended with status $status (0 expected: a lost node costs only its items)" >&2
  exit 1
fi
