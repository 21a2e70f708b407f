#!/usr/bin/env bash
# End-to-end checks of fiber-es's rollout log (OUTPUT.rollouts.h5), each a CTest test:
#   rollout_checks.sh BUILD_DIR values|resume|stop|damaged|bad-input
# values:    CartPole (return = length), 2 episodes per perturbation: one row per rollout, and
#            the summary log's returns, episodes and timesteps recomputed from the rows; the same
#            rows (but for where they ran) with 1 worker as with 2; --rollout-log summary is one
#            row per task; --rollout-log off writes no file; scripts/plot.py draws the rollouts;
#            a finished run's logs are compressed (shuffle, gzip, Fletcher32), with
#            --no-compress-logs not.
# resume:    a run resumed from an earlier checkpoint drops the rows after it: its rollouts are
#            those of one uninterrupted run, every generation once.
# stop:      SIGTERM in the middle of a generation leaves the logs compressed; then --resume
#            auto (through the compressed files): every generation's rollouts exactly once, each
#            generation whole.
# damaged:   a damaged chunk of /log/return (of the compressed log a finished run leaves) is
#            refused on resume in one line, the file left as it was; a rollout log compressed by
#            h5repack resumes.
# bad-input: a bad --rollout-log or --compress-logs value, a foreign file or an earlier run's rollouts at
#            OUTPUT.rollouts.h5, --checkpoint naming it, a resume with another --rollout-log:
#            one line, exit 2, nothing overwritten.
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
es=("$build/libfiber/fiberrun" -n 1 "$build/apps/es/fiber-es")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
python=/usr/bin/python3

fail() { echo "FAIL: $*" >&2; exit 1; }
# shellcheck source=../support/expect_status.sh
source "$here/../support/expect_status.sh"
# shellcheck source=../support/log_filters.sh
source "$here/../support/log_filters.sh"

cartpole=(--env CartPole-v1 --hidden 8 --population 8 --pairs-per-task 2 --eval-episodes 2
  --noise-size 100000 --no-stop-at-target)

case "$2" in
values)
  "${es[@]}" "${cartpole[@]}" --episodes-per-perturbation 2 --generations 3 --workers 2 \
    --output two.h5 >/dev/null
  "${es[@]}" "${cartpole[@]}" --episodes-per-perturbation 2 --generations 3 --workers 1 \
    --output one.h5 >/dev/null
  "${es[@]}" "${cartpole[@]}" --episodes-per-perturbation 2 --generations 3 --workers 2 \
    --rollout-log summary --output summary.h5 >/dev/null
  "${es[@]}" "${cartpole[@]}" --generations 1 --workers 1 --rollout-log off --output off.h5 >/dev/null
  [[ ! -e off.rollouts.h5 ]] || fail "--rollout-log off wrote a rollout log"
  "${es[@]}" "${cartpole[@]}" --generations 1 --workers 1 --no-compress-logs --output plain.h5 \
    >/dev/null
  expect_filters compressed two.h5 two.rollouts.h5 summary.rollouts.h5 off.h5
  expect_filters uncompressed plain.h5 plain.rollouts.h5
  $python - "$(hostname)" <<'PY' || fail "the rollout log does not match the tasks"
import sys, h5py, numpy as np
host = sys.argv[1]
def table(name):
    with h5py.File(name) as f:
        n = f["log"].attrs["rows"]
        return {k: f["log/" + k][:n] for k in f["log"]}, f["meta/hosts"][()].decode().split(",")
r, hosts = table("two.rollouts.h5")
s, _ = table("two.h5")
pairs, episodes, evals, generations = 4, 2, 2, 3
per_generation = pairs * 2 * episodes + evals
assert len(r["return"]) == generations * per_generation, len(r["return"])
assert np.array_equal(r["return"], r["length"]), "CartPole: a rollout's return is its length"
assert hosts == [host] and set(r["host"]) == {0}, hosts
assert set(r["worker"]) <= {0, 1} and (r["task_seconds"] > 0).all()
for g in range(generations):
    mine = r["generation"] == g
    perturbed = mine & (r["sign"] != 0)
    assert perturbed.sum() == pairs * 2 * episodes
    assert (r["noise_index"][mine & (r["sign"] == 0)] == -1).all()
    # a perturbation's return: the mean of its member's episodes, as the summary log has them
    returns = r["return"][perturbed].reshape(pairs, episodes, 2).mean(axis=1)
    assert np.isclose(returns.mean(), s["return_mean"][g]), (returns.mean(), s["return_mean"][g])
    assert returns.min() == s["return_min"][g] and returns.max() == s["return_max"][g]
    assert np.isclose(r["return"][mine & (r["sign"] == 0)].mean(), s["eval_return"][g])
    episodes_before = s["episodes"][g - 1] if g else 0
    steps_before = s["timesteps"][g - 1] if g else 0
    assert s["episodes"][g] - episodes_before == perturbed.sum()
    assert s["timesteps"][g] - steps_before == r["length"][perturbed].sum()
    for task in set(r["task"][mine]):  # one task: one worker, one time
        t = mine & (r["task"] == task)
        assert len(set(r["worker"][t])) == 1 and len(set(r["task_seconds"][t])) == 1
o, _ = table("one.rollouts.h5")
for column in ("generation", "task", "noise_index", "sign", "episode", "return", "length"):
    assert np.array_equal(o[column], r[column]), column
assert set(o["worker"]) == {0}
m, _ = table("summary.rollouts.h5")
assert len(m["task"]) == generations * (pairs // 2 + evals), len(m["task"])
assert m["episodes"].sum() == generations * per_generation
assert m["timesteps"].sum() == r["length"].sum()
print(f"{len(r['return'])} rollouts as the tasks returned them; summary: {len(m['task'])} tasks")
PY
  # scripts/plot.py draws a rollout log as return percentiles and task times per worker.
  $python "$here/../../scripts/plot.py" two.rollouts.h5 -o rollouts.png |
    grep -qx "plot.py: wrote rollouts.png (54 rollout rows, 3 generations, 12 tasks)" ||
    fail "plot.py did not draw the rollout log"
  [[ $(head -c 8 rollouts.png | od -An -tx1 | tr -d ' ') == 89504e470d0a1a0a ]] || fail "not a PNG"
  ;;
resume)
  common=("${cartpole[@]}" --workers 2 --checkpoint-every 1)
  "${es[@]}" "${common[@]}" --generations 5 --output whole.h5 >/dev/null
  "${es[@]}" "${common[@]}" --generations 2 --output split.h5 >/dev/null
  cp split.ckpt.h5 early.ckpt.h5
  "${es[@]}" "${common[@]}" --generations 4 --output split.h5 --resume auto >/dev/null
  # back to generation 2: the rows of generations 2 and 3 are after that checkpoint
  "${es[@]}" "${common[@]}" --generations 5 --output split.h5 --resume early.ckpt.h5 |
    grep -q "resumed from early.ckpt.h5 at generation 2" || fail "no resume"
  $python - <<'PY' || fail "the resumed rollout log is not the uninterrupted run's"
import h5py, numpy as np
with h5py.File("whole.rollouts.h5") as a, h5py.File("split.rollouts.h5") as b:
    na, nb = a["log"].attrs["rows"], b["log"].attrs["rows"]
    assert na == nb == 5 * 10, (na, nb)
    for column in ("generation", "task", "noise_index", "sign", "episode", "return", "length"):
        assert np.array_equal(a["log/" + column][:na], b["log/" + column][:nb]), column
print("generations 0..4 once each, as in one run")
PY
  ;;
stop)
  common=(--env CartPole-v1 --no-stop-at-target --workers 2 --population 2048 --eval-episodes 2
    --noise-size 1000000)
  "${es[@]}" "${common[@]}" --generations 50 --output run.h5 >out.txt 2>&1 &
  fiberrun=$!
  for _ in $(seq 600); do
    [[ $(grep -c '^gen ' out.txt) -ge 1 ]] && break
    sleep 0.1
  done
  sleep 0.3  # into the next generation
  kill -TERM "$fiberrun" || true
  status=0
  wait "$fiberrun" || status=$?
  [[ $status -eq 75 ]] || { cat out.txt; fail "exit $status, not 75"; }
  done_before=$(sed -nE 's/^fiber-es: stopped by SIGTERM after ([0-9]+) generations.*/\1/p' out.txt)
  [[ -n $done_before ]] || { cat out.txt; fail "no stop line"; }
  expect_filters compressed run.h5 run.rollouts.h5
  "${es[@]}" "${common[@]}" --generations $((done_before + 2)) --output run.h5 --resume auto |
    grep -q "resumed from run.ckpt.h5 at generation $done_before" || fail "no resume"
  $python - $((done_before + 2)) <<'PY' || fail "rollouts not exactly once across the stop"
import sys, h5py, numpy as np
n = int(sys.argv[1])
with h5py.File("run.rollouts.h5") as f:
    rows = f["log"].attrs["rows"]
    g = f["log/generation"][:rows]
    task = f["log/task"][:rows]
assert np.array_equal(np.unique(g), np.arange(n)), np.unique(g)
counts = np.bincount(g)
assert (counts == 2048 + 2).all(), counts  # each generation whole, once
assert all((np.diff(task[g == k]) >= 0).all() for k in range(n))
print(f"generations 0..{n - 1}: {counts[0]} rollouts each, once")
PY
  ;;
damaged)
  "${es[@]}" "${cartpole[@]}" --workers 1 --generations 2 --output damaged.h5 >/dev/null
  offset=$($python -c 'import h5py; print(h5py.File("damaged.rollouts.h5", "r")["log/return"].id.get_chunk_info(0).byte_offset)')
  printf '\x7f\x7f\x7f\x7f' | dd of=damaged.rollouts.h5 bs=1 seek=$((offset + 8)) conv=notrunc status=none
  before=$(sha256sum <damaged.rollouts.h5)
  expect_status 2 "damaged.rollouts.h5: damaged (checksum mismatch in /log/return, rows 0-19" \
    "${es[@]}" "${cartpole[@]}" --workers 1 --generations 3 --output damaged.h5 --resume auto
  [[ $(sha256sum <damaged.rollouts.h5) == "$before" ]] || fail "the damaged rollout log was changed"
  [[ ! -e damaged.rollouts.h5.tmp ]] || fail "the refused decompression left its copy"
  "${es[@]}" "${cartpole[@]}" --workers 1 --generations 2 --no-compress-logs --output packed.h5 \
    >/dev/null
  h5repack -f SHUF -f GZIP=6 -f FLET packed.rollouts.h5 compressed.h5
  mv compressed.h5 packed.rollouts.h5
  "${es[@]}" "${cartpole[@]}" --workers 1 --generations 3 --output packed.h5 --resume auto |
    grep -q "resumed from packed.ckpt.h5 at generation 2" || fail "no resume of an h5repack'ed log"
  $python -c 'import h5py, numpy as np
with h5py.File("packed.rollouts.h5", "r") as f:
    g = f["log/generation"][:f["log"].attrs["rows"]]
assert np.array_equal(np.bincount(g), [10, 10, 10]), np.bincount(g)' ||
    fail "the h5repack'ed rollout log did not resume with every generation once"
  ;;
bad-input)
  for value in bogus "" full,summary; do
    expect_status 2 "--rollout-log" "${es[@]}" "${cartpole[@]}" --rollout-log "$value" --output x.h5
  done
  for value in maybe tru; do
    expect_status 2 "--compress-logs" "${es[@]}" "${cartpole[@]}" --compress-logs="$value" \
      --output x.h5
  done
  printf 'compress-logs = "maybe"\n' >bad.toml
  expect_status 2 "--compress-logs = maybe" "${es[@]}" "${cartpole[@]}" --config bad.toml \
    --output x.h5
  [[ ! -e x.h5 && ! -e x.rollouts.h5 ]] || fail "a refused run wrote a file"
  echo "someone's notes" >notes.rollouts.h5
  notes=$(sha256sum <notes.rollouts.h5)
  expect_status 2 "notes.rollouts.h5 exists and is not a run log of this program" \
    "${es[@]}" "${cartpole[@]}" --workers 1 --generations 1 --output notes.h5
  [[ $(sha256sum <notes.rollouts.h5) == "$notes" && ! -e notes.h5 ]] || fail "notes overwritten"
  "${es[@]}" "${cartpole[@]}" --workers 1 --generations 1 --output earlier.h5 >/dev/null
  rm earlier.h5 earlier.ckpt.h5
  earlier=$(sha256sum <earlier.rollouts.h5)
  expect_status 2 "earlier.rollouts.h5 holds the log of an earlier run" \
    "${es[@]}" "${cartpole[@]}" --workers 1 --generations 1 --output earlier.h5
  [[ $(sha256sum <earlier.rollouts.h5) == "$earlier" ]] || fail "earlier rollouts overwritten"
  # --checkpoint naming the rollout log's file
  expect_status 2 "--checkpoint same.rollouts.h5 is the rollout log's file" \
    "${es[@]}" "${cartpole[@]}" --workers 1 --generations 1 --output same.h5 \
    --checkpoint same.rollouts.h5
  [[ ! -e same.h5 && ! -e same.rollouts.h5 ]] || fail "a refused run wrote a file"
  # resumed with another level: refused, not mixed
  "${es[@]}" "${cartpole[@]}" --workers 1 --generations 1 --output level.h5 >/dev/null
  expect_status 2 "has other columns (written with another --rollout-log)" \
    "${es[@]}" "${cartpole[@]}" --workers 1 --generations 2 --rollout-log summary \
    --output level.h5 --resume auto
  ;;
*)
  fail "unknown check '$2'"
  ;;
esac
echo "rollout_checks $2: passed"
