#!/usr/bin/env bash
# Stages of one-core and two-core workers alternate on the simulated nodes' 6 slots, the wide
# ones made of parked narrow ones (docs/design.md, "Parked workers lend their slots"): the test
# program checks each stage's shape and that no stage after the first spawns; this script, that
# the job left no process behind.
#   tests/multinode/alternating_stages.sh WORKER_SHAPE_MULTINODE_TEST
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../support/no_job_left.sh
source "$here/../support/no_job_left.sh"
program=$(realpath "$1")
status=0
"$here/run.sh" "$program" --gtest_filter='MultiNodeShape.Stages*' || status=$?
expect_no_job_left alternating_stages "$program"
exit "$status"
