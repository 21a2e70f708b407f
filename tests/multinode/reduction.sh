#!/usr/bin/env bash
# A reduction on 6 workers over the 3 simulated nodes gives the bits of its layout's tree (the
# test program checks) and sends the master one value per node, no chunk's result (the runtime
# says what reached the master at debug level).
#   tests/multinode/reduction.sh MULTINODE_TEST
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
nodes=$(grep -c . "$here/hostfile")
log=$(mktemp)
trap 'rm -f "$log"' EXIT
FIBER_OVERSUBSCRIBE=1 FIBER_LOG_LEVEL=debug "$here/run.sh" "$1" \
  --gtest_filter=MultiNode.ReductionFoldsOnEachNode >"$log" 2>&1
status=$?
if [[ $status -ne 0 ]]; then
  cat "$log"
  echo "reduction: the test program failed (status $status)" >&2
  exit 1
fi
reductions=$(grep -c "reduction r[0-9]* of" "$log")
expected="$nodes node value(s) and 0 chunk result(s) reached the master"
one_per_node=$(grep -c "reduction r[0-9]* of .*; $expected" "$log")
grep "reduction r[0-9]* of" "$log"
if [[ $reductions -ne 4 || $one_per_node -ne $reductions ]]; then
  echo "reduction: expected 4 reductions, each with: $expected" >&2
  exit 1
fi
echo "reduction: $reductions reductions, each sent the master one value per node ($nodes nodes)"
