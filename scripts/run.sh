#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs the demo under MPI on this machine.
#   scripts/run.sh [fiber-pi options, e.g. --workers 4 --tasks 400]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh" --target fiber-pi fiberrun | grep -E "error|warning" || true
build_dir=${BUILD_DIR:-$root/build}
echo "fiber: running $build_dir/apps/pi/fiber-pi under fiberrun (mpirun -n 1: the master spawns its workers)"
exec "$build_dir/libfiber/fiberrun" -n 1 "$build_dir/apps/pi/fiber-pi" "$@"
