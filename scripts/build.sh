#!/usr/bin/env bash
# Configures and builds fiber (Release) into BUILD_DIR (default: build/). Used by run.sh and
# test.sh after scripts/setup.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build_dir" -j "$(nproc)" "$@"
