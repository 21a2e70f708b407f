#!/usr/bin/env bash
# End-to-end checks of fiber-ppo's rollout logs, each a CTest test:
#   rollout_checks.sh BUILD_DIR values|stop
# values: CartPole (return = length): OUTPUT.rollouts.h5 has one row per finished episode, each
#         (slot, episode) once, as the summary log counts and averages them; OUTPUT.tasks.h5 one
#         row per segment; --rollout-log summary writes only the tasks' file, off neither, a bad
#         value is one line; scripts/plot.py draws both files; a finished run's three logs are
#         compressed (shuffle, gzip, Fletcher32), with --no-compress-logs not.
# stop:   SIGTERM leaves the logs compressed; then --resume auto (through the compressed files):
#         every episode and every segment exactly once; also after a resume from an earlier
#         checkpoint (the rows after it dropped).
set -euo pipefail
build=$(cd "$1" && pwd)
ppo=("$build/libfiber/fiberrun" -n 1 "$build/apps/ppo/fiber-ppo")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
python=/usr/bin/python3

fail() { echo "FAIL: $*" >&2; exit 1; }
# shellcheck source=../support/log_filters.sh
source "$(dirname "$0")/../support/log_filters.sh"

cartpole=(--env CartPole-v1 --envs 4 --steps 128 --hidden 16 --eval-every 0 --workers 2
  --minibatches 4 --epochs 2)

# exactly_once N_ITERATIONS NAME: both rollout logs of NAME.h5 agree with its summary log.
exactly_once() {
  $python - "$@" <<'PY'
import sys, h5py, numpy as np
iterations, name = int(sys.argv[1]), sys.argv[2]
def table(path):
    with h5py.File(path) as f:
        n = f["log"].attrs["rows"]
        return {k: f["log/" + k][:n] for k in f["log"]}
s, e, t = table(name + ".h5"), table(name + ".rollouts.h5"), table(name + ".tasks.h5")
assert np.array_equal(s["iteration"], np.arange(iterations)), s["iteration"]
assert np.array_equal(t["iteration"], np.repeat(np.arange(iterations), 4)), t["iteration"]
assert np.array_equal(t["slot"], np.tile(np.arange(4), iterations))
assert (t["steps"] == 128).all() and (t["seconds"] > 0).all() and set(t["worker"]) <= {0, 1}
assert np.array_equal(e["return"], e["length"]), "CartPole: return = length"
for slot in range(4):  # each slot's episodes 0, 1, 2, ... once each
    episodes = e["episode"][e["slot"] == slot]
    assert np.array_equal(episodes, np.arange(len(episodes))), (slot, episodes)
for i in range(iterations):
    mine = e["iteration"] == i
    assert mine.sum() == t["episodes"][t["iteration"] == i].sum()
    before = s["episodes"][i - 1] if i else 0
    assert s["episodes"][i] - before == mine.sum(), (i, mine.sum())
    if mine.any():
        assert np.isclose(e["return"][mine].mean(), s["return_mean"][i])
        assert e["return"][mine].min() == s["return_min"][i]
assert set(e["terminated"]) <= {0, 1}
print(f"{len(e['return'])} episodes and {len(t['slot'])} segments, each once")
PY
}

case "$2" in
values)
  "${ppo[@]}" "${cartpole[@]}" --total-timesteps 5120 --output run.h5 >/dev/null
  exactly_once 10 run || fail "the rollout logs do not match the run"
  expect_filters compressed run.h5 run.rollouts.h5 run.tasks.h5
  "${ppo[@]}" "${cartpole[@]}" --total-timesteps 1024 --no-compress-logs --output plain.h5 >/dev/null
  expect_filters uncompressed plain.h5 plain.rollouts.h5 plain.tasks.h5
  plot="$(dirname "$0")/../../scripts/plot.py"
  $python "$plot" run.rollouts.h5 -o episodes.png |
    grep -qx "plot.py: wrote episodes.png ([0-9]* rollout rows, 10 iterations)" ||
    fail "plot.py did not draw the episodes"
  $python "$plot" run.tasks.h5 -o tasks.png |
    grep -qx "plot.py: wrote tasks.png (40 rollout rows, 40 tasks)" || fail "plot.py: no task times"
  status=0
  "${ppo[@]}" "${cartpole[@]}" --rollout-log bogus --output bad.h5 >out.txt 2>err.txt || status=$?
  [[ $status -eq 2 && $(wc -l <err.txt) -eq 1 ]] && grep -q -- "--rollout-log: bogus not in" err.txt ||
    { cat err.txt; fail "a bad --rollout-log: exit $status"; }
  "${ppo[@]}" "${cartpole[@]}" --total-timesteps 1024 --rollout-log summary --output summary.h5 >/dev/null
  [[ -e summary.tasks.h5 && ! -e summary.rollouts.h5 ]] || fail "--rollout-log summary"
  "${ppo[@]}" "${cartpole[@]}" --total-timesteps 1024 --rollout-log off --output off.h5 >/dev/null
  [[ ! -e off.tasks.h5 && ! -e off.rollouts.h5 ]] || fail "--rollout-log off wrote a file"
  ;;
stop)
  "${ppo[@]}" "${cartpole[@]}" --total-timesteps 10240000 --checkpoint-every 3 --output run.h5 \
    >out.txt 2>&1 &
  fiberrun=$!
  for _ in $(seq 600); do
    [[ $(grep -c '^iter ' out.txt) -ge 5 ]] && break
    sleep 0.1
  done
  kill -TERM "$fiberrun" || true
  status=0
  wait "$fiberrun" || status=$?
  [[ $status -eq 75 ]] || { cat out.txt; fail "exit $status, not 75"; }
  done_before=$(sed -nE 's/^fiber-ppo: stopped by SIGTERM after ([0-9]+) iterations.*/\1/p' out.txt)
  [[ -n $done_before ]] || { cat out.txt; fail "no stop line"; }
  expect_filters compressed run.h5 run.rollouts.h5 run.tasks.h5
  total=$((done_before + 3))
  "${ppo[@]}" "${cartpole[@]}" --total-timesteps $((total * 512)) --checkpoint-every 3 \
    --output run.h5 --resume auto | grep -q "resumed from run.ckpt.h5 at iteration $done_before" ||
    fail "no resume"
  exactly_once "$total" run || fail "not exactly once across the stop"
  # Resumed from an earlier checkpoint: the rows after it (iterations 2 and 3) are dropped.
  "${ppo[@]}" "${cartpole[@]}" --total-timesteps 1024 --output early.h5 >/dev/null
  cp early.ckpt.h5 two.ckpt.h5
  "${ppo[@]}" "${cartpole[@]}" --total-timesteps 2048 --output early.h5 --resume auto >/dev/null
  "${ppo[@]}" "${cartpole[@]}" --total-timesteps 3072 --output early.h5 --resume two.ckpt.h5 |
    grep -q "resumed from two.ckpt.h5 at iteration 2" || fail "no resume from the early checkpoint"
  exactly_once 6 early || fail "not exactly once after a resume from an earlier checkpoint"
  ;;
*)
  fail "unknown check '$2'"
  ;;
esac
echo "rollout_checks $2: passed"
