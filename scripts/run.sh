#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs Evolution Strategies (fiber-es) on
# CartPole-v1 under MPI on this machine, then draws the learning curve.
#   scripts/run.sh [fiber-es options, e.g. --config apps/es/configs/pendulum.toml]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh" --target fiber-es fiberrun | grep -E "error|warning" || true
build_dir=${BUILD_DIR:-$root/build}
output=${FIBER_ES_OUTPUT:-$root/es-run.h5}
# The demo run with no arguments starts anew each time, replacing its own log and checkpoint
# (fiber-es refuses to replace an existing file unless told, docs/guide/rl.md "Data safety"); with
# arguments, fiber-es's refusals apply.
replace=()
[[ $# -eq 0 ]] && replace=(--overwrite)
echo "fiber: running fiber-es under fiberrun (mpirun -n 1: the master spawns its workers)"
"$build_dir/libfiber/fiberrun" -n 1 "$build_dir/apps/es/fiber-es" \
  --config "$root/apps/es/configs/cartpole.toml" --output "$output" "${replace[@]}" "$@"
/usr/bin/python3 "$root/scripts/plot.py" "$output" -o "${output%.h5}.png"
echo "fiber: run log (HDF5) $output, rollouts ${output%.h5}.rollouts.h5, checkpoint ${output%.h5}.ckpt.h5,"
echo "  learning curve ${output%.h5}.png"
