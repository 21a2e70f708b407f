#!/usr/bin/env bash
# The rollout log's cost against a generation's time, at 2,048 rollouts per generation:
#   benchmarks/rollout_log/rollout_log_cost.sh BUILD_DIR [WORKERS] [GENERATIONS]
# Runs fiber-es on Humanoid-v5 (apps/es/configs/humanoid_v5.toml, population 2048, no evaluation
# episodes) for the generation time, then rollout_log_cost for the log's time per generation
# (rows built and appended, as the trainer does), and prints both and their ratio. Then the size
# of the rollout logs of real rollouts, --rollout-log full (that run) and summary (one more
# generation), both run with --no-compress-logs: bytes per rollout as written (uncompressed) and
# once compressed as a clean end does (RunLog::close_compressed: shuffle, deflate 6, Fletcher32),
# their ratio, and what compressing and decompressing (on resume) cost per MB and per generation's
# rows, against the generation's time (log_compression_cost).
set -euo pipefail
build=$(cd "$1" && pwd)
workers=${2:-2}
generations=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$build/libfiber/fiberrun" -n 1 "$build/apps/es/fiber-es" \
  --config "$here/../../apps/es/configs/humanoid_v5.toml" --population 2048 --eval-episodes 0 \
  --workers "$workers" --generations "$generations" --no-compress-logs --output es.h5 >/dev/null
"$build/libfiber/fiberrun" -n 1 "$build/apps/es/fiber-es" \
  --config "$here/../../apps/es/configs/humanoid_v5.toml" --population 2048 --eval-episodes 0 \
  --workers "$workers" --generations 1 --rollout-log summary --no-compress-logs \
  --output summary.h5 >/dev/null
log_line=$("$build/benchmarks/rollout_log/rollout_log_cost" --generations 200 --output cost.rollouts.h5)
echo "$log_line"
# The real logs are small: their rows repeated make a log of a long run to time.
for level in es summary; do cp "$level.rollouts.h5" "$level.packed.h5"; done
cp es.rollouts.h5 long.rollouts.h5
compression=$("$build/benchmarks/rollout_log/log_compression_cost" es.packed.h5 summary.packed.h5)
compression+=$'\n'$("$build/benchmarks/rollout_log/log_compression_cost" --repeat 200 long.rollouts.h5)
echo "$compression"
/usr/bin/python3 - "$log_line" "$workers" "$compression" <<'PY'
import re, sys, h5py, numpy as np
line, workers, compression = sys.argv[1], sys.argv[2], sys.argv[3]
build_ms, append_ms = map(float, re.search(r"([\d.]+) ms per generation to build the rows, ([\d.]+) ms", line).groups())
with h5py.File("es.h5") as f:
    n = f["log"].attrs["rows"]
    seconds = np.diff(np.concatenate([[0.0], f["log/seconds"][:n]]))
    steps = np.diff(np.concatenate([[0], f["log/timesteps"][:n]]))
with h5py.File("es.rollouts.h5") as f:
    rows = f["log"].attrs["rows"]
generation_ms = 1e3 * float(np.median(seconds))
share = 100 * (build_ms + append_ms) / generation_ms
print(f"fiber-es Humanoid-v5, 2048 rollouts per generation on {workers} workers: "
      f"{generation_ms:.0f} ms per generation (median of {n}; {steps.mean() / 2048:.0f} steps per "
      f"episode; {rows} rollout rows); the rollout log: {build_ms + append_ms:.2f} ms = {share:.3f} %")
def data_bytes(path):  # the columns' stored chunks: what grows with the rows
    with h5py.File(path) as f:
        return sum(ds.id.get_storage_size() for ds in f["log"].values())
for level, name in (("full", "es"), ("summary", "summary")):
    with h5py.File(f"{name}.rollouts.h5") as f:
        rows = int(f["log"].attrs["rows"])
        rollouts = int(f["log/episodes"][:rows].sum()) if level == "summary" else rows
    written, packed = (data_bytes(f"{name}.{kind}.h5") for kind in ("rollouts", "packed"))
    print(f"--rollout-log {level}: {rows} rows; data bytes per rollout: {written / rollouts:.1f} "
          f"as written, {packed / rollouts:.1f} compressed, ratio {packed / written:.2f}")
# Compressing at the end, decompressing on resume: per generation of 2,048 rollouts' rows, at the
# rate of the long log.
compress, decompress = (float(x) for x in re.search(
    r"long\.rollouts\.h5: .* \(([\d.]+) s per MB\), decompress .* \(([\d.]+) s per MB\)",
    compression).groups())
import os
with h5py.File("es.rollouts.h5") as f:
    generations_logged = len(np.unique(f["log/generation"][:f["log"].attrs["rows"]]))
megabytes_per_generation = os.path.getsize("es.rollouts.h5") / 1e6 / generations_logged
for what, per_megabyte in (("compress", compress), ("decompress", decompress)):
    ms = 1e3 * per_megabyte * megabytes_per_generation
    print(f"{what}: {per_megabyte:.3f} s per MB, {ms:.2f} ms per generation's rows "
          f"({megabytes_per_generation:.3f} MB) = {100 * ms / generation_ms:.3f} % of its time")
PY
