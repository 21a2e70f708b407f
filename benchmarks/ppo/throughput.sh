#!/usr/bin/env bash
# fiber-ppo's rollout throughput and the master's share of an iteration, for 1, 2, 4 and 8
# workers, with the workers kept in the pool during the update and with them parked:
#   benchmarks/ppo/throughput.sh [BUILD_DIR] [ENV]
# CartPole-v1 by default: 16 environment slots x 256 steps per iteration, 20 iterations (the first,
# with the spawns, not counted). Prints a Markdown table.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
environment=${2:-CartPole-v1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "| workers | workers in the update | rollout steps/s | rollout s/iter | update s/iter | master share |"
echo "|---:|---|---:|---:|---:|---:|"
for workers in 1 2 4 8; do
  for park in no-park park; do
    "$build/libfiber/fiberrun" -n 1 "$build/apps/ppo/fiber-ppo" --env "$environment" --envs 16 \
      --steps 256 --total-timesteps $((20 * 16 * 256)) --eval-every 0 --workers "$workers" \
      --"$park"-during-update --output "$work/run-$workers-$park.h5" >/dev/null
    /usr/bin/python3 - "$work/run-$workers-$park.h5" "$workers" "$park" <<'PY'
import sys, h5py
path, workers, park = sys.argv[1], sys.argv[2], sys.argv[3]
with h5py.File(path) as f:
    n = f["log"].attrs["rows"]
    steps = f["log/timesteps"][1:n] - f["log/timesteps"][0:n - 1]
    rollout = f["log/rollout_seconds"][1:n]
    update = f["log/update_seconds"][1:n]
    share = update.sum() / (rollout.sum() + update.sum())
    kept = "parked" if park == "park" else "idle in the pool"
    print(f"| {workers} | {kept} | {steps.sum() / rollout.sum():,.0f} | {rollout.mean():.3f} "
          f"| {update.mean():.3f} | {100 * share:.0f} % |")
PY
  done
done
