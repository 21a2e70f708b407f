#!/usr/bin/env bash
# A reduction on 6 workers over the 3 simulated nodes gives the bits of its layout's tree (the
# test program checks) and sends the master one value per node, no chunk's result (the runtime
# says what reached the master at debug level).
#   tests/multinode/reduction.sh MULTINODE_TEST
set -uo pipefail
# shellcheck source=debug_log_run.sh
source "$(dirname "$0")/debug_log_run.sh"
run_case reduction "$1" MultiNode.ReductionFoldsOnEachNode
reductions=$(grep -c "reduction r[0-9]* of" "$log")
expected="$nodes node value(s) and 0 chunk result(s) reached the master"
one_per_node=$(grep -c "reduction r[0-9]* of .*; $expected" "$log")
grep "reduction r[0-9]* of" "$log"
if [[ $reductions -ne 4 || $one_per_node -ne $reductions ]]; then
  echo "reduction: expected 4 reductions, each with: $expected" >&2
  exit 1
fi
echo "reduction: $reductions reductions, each sent the master one value per node ($nodes nodes)"
