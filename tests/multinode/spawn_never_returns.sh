#!/usr/bin/env bash
# Workers that cannot start on other nodes than the master's: nodeB's and nodeC's /dev/shm are a
# tmpfs of kNodeShmKiB each, too small for one worker's MPI start-up (docs/platform.md, "A spawn
# that cannot start never returns"), so the pool's spawn never returns. The runtime must end the
# job once FIBER_SPAWN_TIMEOUT has passed: fiberrun's status not 0, one line of fiber's saying
# why, and no process of the job left.
#   tests/multinode/spawn_never_returns.sh FIBERRUN MULTINODE_TEST
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../support/no_job_left.sh
source "$here/../support/no_job_left.sh"
fiberrun=$1 program=$(realpath "$2")
readonly kNodeShmKiB=1024
readonly kSpawnTimeout=20
# (A hang must fail the check rather than CTest's timeout, so that the cleanup below runs.)
readonly kRunLimit=150s
if [[ $(id -u) -ne 0 ]]; then
  echo "spawn_never_returns: needs root (a mount namespace with small tmpfs); skipped"
  exit 77
fi
nodes=$(mktemp -d /dev/shm/fiber-test-nodes.XXXXXX)
err=$(mktemp)
trap 'rm -rf "$nodes" "$err"' EXIT
status=0
export FAKE_NODE_SHM=$nodes FIBER_SPAWN_TIMEOUT=$kSpawnTimeout FIBER_MULTINODE_LAUNCHER=$fiberrun
# shellcheck disable=SC2016 # expanded by the inner shell
timeout -k 10 "$kRunLimit" unshare --mount --propagation private /bin/sh -c '
  for node in nodeB nodeC; do
    mkdir -p "$FAKE_NODE_SHM/$node" && mount -t tmpfs -o size="$0"k tmpfs "$FAKE_NODE_SHM/$node" ||
      exit 3
  done
  exec "$1" "$2" --gtest_also_run_disabled_tests \
    --gtest_filter=MultiNode.DISABLED_SpawnThatNeverReturnsEndsTheJob' \
  "$kNodeShmKiB" "$here/run.sh" "$program" 2>"$err" || status=$?
expect_no_job_left spawn_never_returns "$program"
said=$(grep -c '^fiber: the spawn of workers 0 to 4 has not returned after' "$err")
if [[ $status -eq 0 || $status -eq 124 || $status -eq 137 || $said -ne 1 ]]; then
  cat "$err" >&2
  echo "spawn_never_returns: status $status, $said line(s) of fiber's about the spawn (the job" \
    "ended by the runtime with one line expected)" >&2
  exit 1
fi
echo "spawn_never_returns: status $status; $(grep '^fiber: the spawn' "$err")"
