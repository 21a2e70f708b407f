#!/usr/bin/env bash
# The whole test suite: installs what is missing (the benchmarks' Python peers too), builds, and
# runs every CTest test (each test executable runs as the master under mpirun, with a timeout).
#   scripts/test.sh [ctest options, e.g. -R pool]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh" --bench  # the benchmarks' peers too: their harness is tested
"$root/scripts/build.sh"
build_dir=${BUILD_DIR:-$root/build}
export GTEST_COLOR=no
# Tests spawn MPI processes that share 2 cores: run them one at a time.
ctest --test-dir "$build_dir" --output-on-failure "$@"
