#!/usr/bin/env bash
# A job's end on the simulated nodes, under fiberrun, each node with a /dev/shm of its own
# (FAKE_NODE_SHM), each a CTest test (docs/platform.md, "A clean end"):
#   clean_end.sh FIBERRUN MULTINODE_TEST normal|killed_worker
# normal:        MultiNode.FullPoolEndsCleanly, 127 workers and the master on 4 nodes of 32 slots
#                (the 2 cores allow no more in the suite; the lines were seen at 1,024): the job
#                prints nothing but the test's own lines. The test checks the same run's start
#                (one spawn, the master's CPU per worker) and its held workers' idle CPU and
#                wake-ups, and prints what it measured (lines "FullPoolEndsCleanly: ...").
# killed_worker: MultiNode.KilledWorkerLeavesACleanEnd, a worker of a spawn of 5 SIGKILLed on
#                nodeB: besides fiber's lines on the loss, at most the one PMIx line of the death
#                itself and the one UCX line of a send to the dead worker; its 4 siblings leave
#                without MPI_Finalize, and none of them may add a line.
# Both: fiberrun's status 0, no process of the job left, no file left in any node's /dev/shm.
set -uo pipefail
fiberrun=$1 program=$2 check=$3
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../support/expect_line.sh
source "$here/../support/expect_line.sh"
work=$(mktemp -d)
nodes=$(mktemp -d /dev/shm/fiber-test-nodes.XXXXXX)
trap 'rm -rf "$work" "$nodes"' EXIT
out="$work/out.txt"
export FIBER_MULTINODE_LAUNCHER=$fiberrun
case "$check" in
normal)
  for node in A B C D; do echo "node$node slots=32"; done >"$work/hostfile"
  export FIBER_MULTINODE_HOSTFILE="$work/hostfile"
  test=MultiNode.FullPoolEndsCleanly
  ;;
killed_worker)
  export FIBER_OVERSUBSCRIBE=1
  test=MultiNode.KilledWorkerLeavesACleanEnd
  ;;
*) fail "unknown check '$check'" ;;
esac
status=0
FAKE_NODE_SHM=$nodes "$here/run.sh" "$program" --gtest_filter="$test" >"$out" 2>&1 || status=$?
[[ $status -eq 0 ]] || { cat "$out" >&2; fail "$check: fiberrun exited $status, not 0"; }

# Every process of the job (mpirun, the node daemons, the master, workers, task processes), and
# only they, inherited FAKE_NODE_SHM; a zombie's environment cannot be read, and it holds nothing.
left=$(grep -lsz "^FAKE_NODE_SHM=$nodes\$" /proc/[0-9]*/environ | cut -d/ -f3 | tr '\n' ' ')
if [[ -n $left ]]; then
  # shellcheck disable=SC2086 # a list of pids
  ps -o pid,stat,args -p ${left// /,} >&2
  # shellcheck disable=SC2086
  kill -KILL $left 2>/dev/null
  fail "$check: processes of the job left behind (listed above)"
fi
# With no process of the job left, nothing will remove what is still there.
files=$(find "$nodes" -type f)
[[ -z $files ]] || fail "$check: left in the nodes' /dev/shm: $(tr '\n' ' ' <<<"$files")"

# What the job printed besides the test's own lines (gtest's, without their colours, and what it
# measured) and mpirun's start-up race with a node's launcher, harmless ("A clean end" says why
# it stays).
printed=$(sed 's/\x1b\[[0-9;]*m//g' "$out" |
  grep -Ev '^(\[( RUN      |       OK |==========|----------|  PASSED  )\]|Note: Google Test filter|$)' |
  grep -Ev '^FullPoolEndsCleanly: ' |
  grep -Ev 'plm:rsh: Warning: setpgid\([0-9]+,[0-9]+\) failed in parent with errno=Permission denied')
death_line='PMIX ERROR: BAD-PARAM in file .*pmix_event_notification.c at line 1033$'
send_line='pml_ucx.c:[0-9]+ +Error: ucx send failed: Endpoint timeout$'
if [[ $check == killed_worker ]]; then
  deaths=$(grep -Ec "$death_line" <<<"$printed")
  sends=$(grep -Ec "$send_line" <<<"$printed")
  [[ $deaths -le 1 && $sends -le 1 ]] ||
    { cat "$out" >&2; fail "$check: $deaths PMIx and $sends UCX lines for 1 lost worker (at most 1 each)"; }
  printed=$(grep -Ev "$death_line|$send_line|^fiber: " <<<"$printed")
fi
[[ -z $printed ]] || { cat "$out" >&2; fail "$check: the job printed (above):"$'\n'"$printed"; }
grep '^FullPoolEndsCleanly: ' "$out"
echo "clean_end $check: passed"
