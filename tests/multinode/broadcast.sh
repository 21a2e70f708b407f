#!/usr/bin/env bash
# A large broadcast to 6 workers on the 3 simulated nodes goes through one relay per node, and the
# master sends the body to 2 of them (the third relay gets it from one of those: a tree; the
# runtime says how it routed each broadcast at debug level); the test program checks that every
# worker got it, also after a node's relay was killed: so it runs under fiberrun (recovery on;
# the job's end once a worker was lost). It runs twice: with lanes (the default), the workers on
# the master's node get the body from the master, written into their task processes' memory
# (docs/design.md, "The lane"), so the tree spans the other nodes; without (FIBER_LANES=0), every
# node has a relay.
#   tests/multinode/broadcast.sh FIBERRUN MULTINODE_TEST
set -uo pipefail
# shellcheck source=debug_log_run.sh
source "$(dirname "$0")/debug_log_run.sh"
FIBER_MULTINODE_LAUNCHER="$1" run_case broadcast "$2" MultiNode.BroadcastReachesEveryWorkerOnEveryNode
first=$(grep -m1 "broadcast of 'fiber_test::set_parameters'" "$log")
echo "first broadcast, with lanes: ${first#*: }"
laned=$(sed -n 's/.*bytes): \([0-9]*\) into lanes.*/\1/p' <<<"$first")
relays=$(sed -n 's/.* \([0-9]*\) relay(s) for .*/\1/p' <<<"$first")
if [[ "$laned" -lt 1 || "$relays" != $((nodes - 1)) ]]; then
  grep "broadcast of" "$log" >&2
  echo "broadcast: $laned into lanes and $relays relays on $nodes nodes (the master's node's" \
    "workers through lanes, a relay on each other node expected)" >&2
  exit 1
fi
FIBER_LANES=0 FIBER_MULTINODE_LAUNCHER="$1" run_case broadcast "$2" \
  MultiNode.BroadcastReachesEveryWorkerOnEveryNode
first=$(grep -m1 "broadcast of 'fiber_test::set_parameters'" "$log")
echo "first broadcast: ${first#*: }"
relays=$(sed -n 's/.* \([0-9]*\) relay(s) for .*/\1/p' <<<"$first")
if [[ "$relays" != "$nodes" ]]; then
  grep "broadcast of" "$log" >&2
  echo "broadcast: $relays relays for 6 workers on $nodes nodes (one per node expected)" >&2
  exit 1
fi
from_master=$(sed -n 's/.*, \([0-9]*\) sent the body by the master.*/\1/p' <<<"$first")
if [[ "$from_master" != 2 ]]; then
  grep "broadcast of" "$log" >&2
  echo "broadcast: the master sent the body to '$from_master' relays (2 expected: the fan-out)" >&2
  exit 1
fi
