#!/usr/bin/env bash
# End-to-end checks of fiber-ppo, each a CTest test:
#   ppo_checks.sh BUILD_DIR learns|workers|learner|resume|humanoid|stop|bad-input|data-safety|
#                 checkpoint-safety|scaling
# learns:    CartPole-v1 (CleanRL's settings) reaches an eval return >= 475 within 150k steps.
# workers:   the same seed with 1 and with 4 workers gives bit-identical trajectories and
#            parameters (CartPole; Pendulum with normalization, the 4 workers parked during the
#            updates).
# learner:   --learner-cores 2: the update runs on a learner, a worker bound to 2 cores, on 2
#            threads (its line says so), and the run is bit-identical to --learner-cores 1 (the
#            update in the master), CartPole and Pendulum; a run stopped with 2 and resumed with 1
#            too. Needs 2 cores.
# resume:    3 iterations (--stop-after) + resume to 6 gives bit-identical parameters and log to
#            6 in one go, and the log has every iteration exactly once.
# humanoid:  Humanoid-v5 (its MuJoCo state travelling with the slots' tasks, episodes ending
#            within segments and running across them): 1 and 4 workers give bit-identical logs
#            and checkpoints, and 2 iterations + resume to 4 the same as 4 in one go.
# stop:      SIGTERM to fiberrun mid-run: the iteration in flight ends, a checkpoint of it is
#            written, exit 75; resumed, the run is bit-identical to one never stopped, and the log
#            has every iteration once.
# bad-input: damaged, truncated and foreign checkpoints, bad values, unknown keys and
#            environments: one line, a non-zero exit.
# data-safety: --output refuses a foreign file and an earlier run's log, and --output and
#            --checkpoint as one file; a live run's files are locked (also with
#            HDF5_USE_FILE_LOCKING=FALSE); a checkpoint ahead of its log, an fiber-es checkpoint
#            and a missing --checkpoint folder are refused; storage errors exit 2; disk full (a
#            small tmpfs in a private mount namespace) is one line, no segfault at exit, and the
#            last checkpoint survives.
# checkpoint-safety: a file already at --checkpoint (not a checkpoint, or another run's) is
#            refused unless --overwrite; a resume continues a log only from its own run's
#            checkpoint; a FIFO, a directory or a device as --checkpoint, --output or --resume is
#            one line and exit 2 at once (tests/support/checkpoint_safety.sh).
# scaling:   benchmarks/ppo_scaling (small) writes every run and update, its report the
#            comparison and the target; benchmarks/ppo_update refuses bad flags with one line,
#            and with --threads 2 reports the same parameters as on one thread.
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
configs="$here/../../apps/ppo/configs"
ppo=("$build/libfiber/fiberrun" -n 1 "$build/apps/ppo/fiber-ppo")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
python=/usr/bin/python3

fail() { echo "FAIL: $*" >&2; exit 1; }
# shellcheck source=../support/expect_status.sh
source "$here/../support/expect_status.sh"
# shellcheck source=../support/config_refusals.sh
source "$here/../support/config_refusals.sh"
# shellcheck source=../support/checkpoint_safety.sh
source "$here/../support/checkpoint_safety.sh"

# same_run A B: bit-identical checkpoints, and logs equal but for the timings and pool size.
same_run() {
  $python - "$1" "$2" <<'PY' || fail "$1 and $2 differ"
import sys, h5py, numpy as np
a, b = sys.argv[1], sys.argv[2]
with h5py.File(a + ".ckpt.h5") as x, h5py.File(b + ".ckpt.h5") as y:
    assert sorted(x.keys()) == sorted(y.keys())
    for name in x.keys():
        if name in ("seconds", "run_id"):  # the time taken; each run's own id
            continue
        assert np.array_equal(x[name][()], y[name][()]), name
with h5py.File(a + ".h5") as x, h5py.File(b + ".h5") as y:
    rx, ry = x["log"].attrs["rows"], y["log"].attrs["rows"]
    assert rx == ry and list(y["log/iteration"][:ry]) == list(range(ry)), (rx, ry)
    for column in x["log"].keys():
        if column in ("rollout_seconds", "update_seconds", "seconds", "workers"):
            continue
        assert np.array_equal(x["log/" + column][:rx], y["log/" + column][:ry], equal_nan=True), column
    print(f"{a} and {b}: identical over {rx} iterations")
PY
}

case "$2" in
learns)
  "${ppo[@]}" --config "$configs/cartpole.toml" --total-timesteps 150000 --eval-every 5 \
    --stop-at-target --workers 2 --output run.h5 | tail -3
  $python - <<'PY' || fail "CartPole not solved"
import h5py, numpy as np
with h5py.File("run.h5") as f:
    rows = f["log"].attrs["rows"]
    evals = f["log/eval_return"][:rows]
    best = np.nanmax(evals)
    print(f"best eval return {best} in {rows} iterations, {f['log/timesteps'][rows - 1]} steps")
    assert best >= 475, best
PY
  ;;
workers)
  cartpole=(--config "$configs/cartpole.toml" --envs 6 --total-timesteps 3840 --eval-every 2
            --eval-episodes 3)
  "${ppo[@]}" "${cartpole[@]}" --workers 1 --output one.h5 >/dev/null
  "${ppo[@]}" "${cartpole[@]}" --workers 4 --output four.h5 >/dev/null
  same_run one four
  pendulum=(--config "$configs/pendulum.toml" --steps 256 --minibatches 8 --total-timesteps 5120
            --eval-every 2 --eval-episodes 2)
  "${ppo[@]}" "${pendulum[@]}" --workers 1 --output pendulum-one.h5 >/dev/null
  "${ppo[@]}" "${pendulum[@]}" --workers 4 --park-during-update --output pendulum-four.h5 >out.txt
  grep -q "4 workers" out.txt ||
    fail "not 4 workers"
  same_run pendulum-one pendulum-four
  ;;
learner)
  cartpole=(--config "$configs/cartpole.toml" --total-timesteps 2048 --workers 2 --eval-every 2
            --eval-episodes 2 --checkpoint-every 1)
  "${ppo[@]}" "${cartpole[@]}" --learner-cores 1 --output one.h5 >one.txt
  ! grep -q "learner" one.txt || fail "a learner with --learner-cores 1"
  "${ppo[@]}" "${cartpole[@]}" --learner-cores 2 --output two.h5 >two.txt
  grep -qx "fiber-ppo: the update on a learner bound to 2 cores, on 2 threads" two.txt ||
    { cat two.txt; fail "no learner of 2 cores on 2 threads"; }
  grep -q "^fiber-ppo: learner: 4 updates in " two.txt || { cat two.txt; fail "not 4 updates"; }
  same_run one two
  "${ppo[@]}" "${cartpole[@]}" --learner-cores 2 --stop-after 2 --output split.h5 >/dev/null
  "${ppo[@]}" "${cartpole[@]}" --learner-cores 1 --output split.h5 --resume auto |
    grep -q "resumed" || fail "no resume"
  same_run one split
  pendulum=(--config "$configs/pendulum.toml" --steps 256 --minibatches 4 --total-timesteps 2048
            --eval-every 2 --eval-episodes 1 --workers 2)
  "${ppo[@]}" "${pendulum[@]}" --output pendulum-one.h5 >/dev/null
  "${ppo[@]}" "${pendulum[@]}" --learner-cores 2 --output pendulum-two.h5 >/dev/null
  same_run pendulum-one pendulum-two
  ;;
resume)
  common=(--config "$configs/pendulum.toml" --steps 200 --minibatches 8 --eval-every 2
          --eval-episodes 2 --workers 2 --checkpoint-every 3)
  "${ppo[@]}" "${common[@]}" --total-timesteps 4800 --output whole.h5 >/dev/null
  "${ppo[@]}" "${common[@]}" --total-timesteps 4800 --stop-after 3 --output split.h5 >/dev/null
  "${ppo[@]}" "${common[@]}" --total-timesteps 4800 --output split.h5 --resume auto |
    grep -q "resumed" ||
    fail "no resume"
  same_run whole split
  ;;
humanoid)
  small=(--config "$configs/humanoid.toml" --envs 4 --steps 64 --epochs 2 --minibatches 4
         --total-timesteps 1024 --eval-every 2 --eval-episodes 1 --checkpoint-every 2)
  "${ppo[@]}" "${small[@]}" --workers 1 --output one.h5 >/dev/null
  "${ppo[@]}" "${small[@]}" --workers 4 --output four.h5 >out.txt
  grep -q "4 workers" out.txt || fail "not 4 workers"
  same_run one four
  "${ppo[@]}" "${small[@]}" --workers 2 --stop-after 2 --output split.h5 >/dev/null
  "${ppo[@]}" "${small[@]}" --workers 2 --output split.h5 --resume auto | grep -q "resumed" ||
    fail "no resume"
  same_run one split
  ;;
stop)
  common=(--config "$configs/pendulum.toml" --steps 200 --minibatches 8 --eval-every 0
          --workers 2 --checkpoint-every 1000 --total-timesteps 4000000)
  "${ppo[@]}" "${common[@]}" --output split.h5 >out.txt 2>&1 &
  fiberrun=$!
  for _ in $(seq 600); do
    [[ $(grep -c '^iter ' out.txt) -ge 2 ]] && break
    sleep 0.1
  done
  kill -TERM "$fiberrun" || true
  status=0
  wait "$fiberrun" || status=$?
  [[ $status -eq 75 ]] || { cat out.txt; fail "exit $status, not 75"; }
  done_before=$(sed -nE 's/^fiber-ppo: stopped by SIGTERM after ([0-9]+) iterations; checkpoint split.ckpt.h5; resume with --resume auto$/\1/p' out.txt)
  [[ -n $done_before ]] || { cat out.txt; fail "no stop line"; }
  [[ $(grep -c '^iter ' out.txt) -eq $done_before ]] || fail "an iteration was logged but not checkpointed"
  "${ppo[@]}" "${common[@]}" --stop-after $((done_before + 2)) --output split.h5 --resume auto |
    grep -q "resumed" || fail "no resume"
  "${ppo[@]}" "${common[@]}" --stop-after $((done_before + 2)) --output whole.h5 >/dev/null
  same_run whole split
  ;;
bad-input)
  expect_error() {  # expect_error PATTERN ARGS...: one line matching, non-zero exit
    local pattern="$1"
    shift
    local status=0
    "${ppo[@]}" "$@" >out.txt 2>err.txt || status=$?
    [[ $status -ne 0 ]] || fail "exit 0 for: $*"
    grep -q -- "$pattern" err.txt || { cat err.txt >&2; fail "no '$pattern' for: $*"; }
    [[ $(grep -c "fiber-ppo" err.txt) -eq 1 ]] || { cat err.txt >&2; fail "not one line: $*"; }
  }
  "${ppo[@]}" --help >help.txt
  grep -q -- "--total-timesteps" help.txt || fail "--help"
  "${ppo[@]}" --config "$configs/cartpole.toml" --total-timesteps 1024 --workers 2 \
    --output good.h5 >/dev/null
  echo garbage >garbage.h5
  head -c 2000 good.ckpt.h5 >truncated.h5
  cp good.ckpt.h5 damaged.h5
  theta=$($python -c 'import h5py; print(h5py.File("damaged.h5")["theta"].id.get_chunk_info(0).byte_offset)')
  printf '\xff\xff\xff\xff\xff\xff\xff\xff' | dd of=damaged.h5 bs=1 seek=$((theta + 64)) conv=notrunc status=none
  expect_error "not an HDF5 file" --output x.h5 --resume garbage.h5
  expect_error "checkpoint truncated.h5" --output x.h5 --resume truncated.h5
  expect_error "checkpoint damaged.h5" --output x.h5 --resume damaged.h5
  expect_error "not a fiber checkpoint" --output x.h5 --resume good.h5
  expect_error "nowhere.h5: cannot open" --output x.h5 --resume nowhere.h5
  expect_error "another environment" --env Acrobot-v1 --output good.h5 --resume good.ckpt.h5
  expect_error "made for 4 environments" --envs 8 --output good.h5 --resume good.ckpt.h5
  expect_error "unknown environment 'Nope'" --env Nope
  expect_error "unknown environment 'Humanoid'" --env Humanoid
  expect_error "envs" --envs 0
  expect_error "gamma" --gamma 1.5
  expect_error "clip" --clip -0.1
  expect_error "fewer than 2 samples" --envs 1 --steps 4 --minibatches 4
  expect_error "less than one iteration" --total-timesteps 100
  printf 'learning-rate = 0.1\nlearning_rat = 2\n' >bad.toml
  expect_error "learning_rat" --config bad.toml
  expect_error "hidden" --hidden 64 abc
  # Refused before the run: exit 2 (no 300-digit range limit in the line).
  expect_refused() { expect_status 2 "$1" "${ppo[@]}" "${@:2}"; }
  # A network far too large for any node's memory (10^10 weights a layer): refused at once.
  expect_refused "--hidden: the networks. [0-9]* parameters would need about .* GiB on this node" \
    --hidden 100000 100000 --workers 2
  # --task-timeout: a task longer than it (a segment of a million steps) is killed, tried again
  # twice, then ends the run with one line.
  grep -q -- "--task-timeout FLOAT:FINITE in \[0, 4000000\]=600" <("${ppo[@]}" --help) ||
    fail "--task-timeout default"
  expect_status 1 "^fiber-ppo: error: .*timed out 3 times.*raise --task-timeout" \
    "${ppo[@]}" --env Pendulum-v1 --envs 1 --steps 1000000 --total-timesteps 1000000 \
    --minibatches 1 --hidden 256 256 --eval-every 0 --workers 1 --task-timeout 1 \
    --output timeout.h5
  expect_toml_faults_located
  expect_non_finite_refused learning-rate gamma gae-lambda clip value-coefficient \
    entropy-coefficient max-gradient-norm initial-log-std target-return
  expect_refused "--gamma: must be a finite number in \[0, 1\], not 1.5" --gamma 1.5
  expect_refused "--entropy-coefficient: must be a finite number >= 0, not -1" \
    --entropy-coefficient -1
  # --step-sleep-us: a whole number of microseconds in [0, 10^7], on the command line or in a
  # config; a valid one is slept in the worker, at least steps x the sleep per segment task.
  expect_refused "--step-sleep-us: must be a finite number in \[0, 10000000\], not -1" \
    --step-sleep-us -1
  expect_refused "--step-sleep-us: .*not 20000000" --step-sleep-us 20000000
  expect_refused "--step-sleep-us" --step-sleep-us 2.5
  expect_refused "--step-sleep-us" --step-sleep-us abc
  # --learner-cores: a whole number of cores, at least 1, at most this node's.
  expect_refused "--learner-cores: .*not 0" --learner-cores 0
  expect_refused "--learner-cores: .*not -2" --learner-cores -2
  expect_refused "--learner-cores" --learner-cores 1.5
  expect_refused "--learner-cores" --learner-cores two
  cores=$(getconf _NPROCESSORS_ONLN)
  expect_refused "--learner-cores $((cores + 1)): more than this node's $cores cores" \
    --learner-cores $((cores + 1))
  printf 'learner-cores = 0\n' >learner.toml
  expect_refused "learner-cores" --config learner.toml
  printf 'step-sleep-us = -5\n' >sleep.toml
  expect_refused "step-sleep-us" --config sleep.toml
  "${ppo[@]}" --config "$configs/cartpole.toml" --envs 2 --steps 50 --total-timesteps 200 \
    --minibatches 2 --workers 2 --step-sleep-us 2000 --output sleep.h5 >/dev/null
  $python - <<'PY' || fail "--step-sleep-us 2000 not slept in the segment tasks"
import h5py
with h5py.File("sleep.tasks.h5") as f:
    rows = f["log"].attrs["rows"]
    seconds = f["log/seconds"][:rows]
    assert rows == 4 and all(seconds >= 50 * 2000e-6), (rows, seconds)
PY
  ;;
data-safety)
  cartpole=(--config "$configs/cartpole.toml" --workers 2)
  small=("${cartpole[@]}" --total-timesteps 1024)  # 2 iterations
  # refused STATUS PATTERN ARGS...: the program exits STATUS with one line matching PATTERN.
  refused() { expect_status "$1" "$2" "${ppo[@]}" "${@:3}"; }
  echo "someone's notes" >notes.txt
  notes=$(sha256sum <notes.txt)
  refused 2 "exists and is not a run log of this program" "${small[@]}" --output notes.txt
  [[ $(sha256sum <notes.txt) == "$notes" ]] || fail "notes.txt was changed"
  "${ppo[@]}" "${small[@]}" --output earlier.h5 >/dev/null
  refused 2 "holds the log of an earlier run (2 rows)" "${small[@]}" --output earlier.h5
  refused 2 "are the same file" "${small[@]}" --output ./one.h5 --checkpoint sub/../one.h5
  refused 2 "cannot create the lock file nowhere/c.h5.lock" "${small[@]}" --output fresh.h5 \
    --checkpoint nowhere/c.h5
  [[ ! -e fresh.h5 ]] || fail "a run refused at the start created its log"
  # A checkpoint ahead of its log (an older copy of the run's own log put back), and one of
  # fiber-es.
  "${ppo[@]}" "${small[@]}" --output ahead.h5 >/dev/null
  cp ahead.h5 behind.h5
  "${ppo[@]}" "${cartpole[@]}" --total-timesteps 2048 --output ahead.h5 --resume auto >/dev/null
  cp behind.h5 ahead.h5
  refused 2 "has 2 rows, but the checkpoint ahead.ckpt.h5 is at row 4" "${cartpole[@]}" \
    --total-timesteps 4096 --output ahead.h5 --resume auto
  "$build/libfiber/fiberrun" -n 1 "$build/apps/es/fiber-es" --population 8 --workers 1 \
    --noise-size 100000 --generations 1 --output es.h5 >/dev/null
  refused 2 "written by fiber-es, not fiber-ppo" "${small[@]}" --output earlier.h5 --resume es.ckpt.h5

  # Two runs on one file, without HDF5's locking: the second is refused by fiber's lock.
  export HDF5_USE_FILE_LOCKING=FALSE
  "${ppo[@]}" --config "$configs/pendulum.toml" --steps 200 --minibatches 8 --eval-every 0 \
    --workers 2 --total-timesteps 4000000 --output live.h5 >live.txt 2>&1 &
  live=$!
  for _ in $(seq 600); do
    grep -q '^iter ' live.txt && break
    sleep 0.1
  done
  grep -q '^iter ' live.txt || { cat live.txt; fail "the first run did not start"; }
  refused 2 "live.h5: in use by another run (host $(hostname), pid [0-9]*;" "${small[@]}" \
    --output live.h5 --overwrite
  refused 2 "live.ckpt.h5: in use by another run" "${small[@]}" --output other.h5 \
    --checkpoint live.ckpt.h5
  kill -TERM "$live"
  status=0
  wait "$live" || status=$?
  [[ $status -eq 75 ]] || { cat live.txt; fail "the first run ended with $status, not 75"; }
  [[ ! -e live.h5.lock && ! -e live.ckpt.h5.lock ]] || fail "lock files left after the run"
  unset HDF5_USE_FILE_LOCKING

  # Disk full: one line and exit 2 (no segfault in HDF5 at exit); the last checkpoint survives.
  full() {  # full SIZE COMMAND...: runs the command with ./disk a tmpfs of SIZE
    mkdir -p disk
    unshare -m sh -c 'mount -t tmpfs -o size="$1" tmpfs disk && shift && exec "$@"' sh "$@"
  }
  status=0
  full 16k "${ppo[@]}" "${small[@]}" --output disk/log.h5 >out.txt 2>err.txt || status=$?
  [[ $status -eq 2 ]] || { cat err.txt; fail "disk full on the log: exit $status, not 2"; }
  [[ $(wc -l <err.txt) -eq 1 ]] || { cat err.txt; fail "disk full on the log: not one line"; }
  cat >fill-up.sh <<SH
set -e
"\$@" --total-timesteps 1024 --checkpoint-every 1 --output disk/log.h5 >/dev/null
cp disk/log.ckpt.h5 before.ckpt.h5
dd if=/dev/zero of=disk/filler bs=4k status=none 2>/dev/null || true
truncate -s -32K disk/filler  # room for the lock files, not for a checkpoint
status=0
"\$@" --total-timesteps 4096 --checkpoint-every 1 --output disk/log.h5 --resume auto >out.txt 2>err.txt || status=\$?
echo \$status >status.txt
cmp disk/log.ckpt.h5 before.ckpt.h5
rm disk/filler
"\$@" --total-timesteps 4096 --checkpoint-every 1 --output disk/log.h5 --resume auto >resumed.txt
SH
  full 1m bash fill-up.sh "${ppo[@]}" "${cartpole[@]}" ||
    { cat err.txt; fail "disk full lost the checkpoint"; }
  [[ $(cat status.txt) -eq 2 ]] || { cat err.txt; fail "disk full: exit $(cat status.txt), not 2"; }
  [[ $(wc -l <err.txt) -eq 1 ]] || { cat err.txt; fail "disk full: not one line"; }
  grep -q "resumed from disk/log.ckpt.h5 at iteration 2" resumed.txt || fail "no resume"
  ;;
checkpoint-safety)
  tiny=(--config "$configs/cartpole.toml" --workers 2 --checkpoint-every 1)
  short=("${ppo[@]}" "${tiny[@]}" --total-timesteps 1024)  # 2 iterations
  longer=("${ppo[@]}" "${tiny[@]}" --total-timesteps 1536)
  checkpoint_safety_checks
  ;;
scaling)
  # benchmarks/ppo_scaling on 4 simulated nodes, small: every run's iterations and the updates
  # alone reach the CSV, the replay's too (16 slots on 8 workers of one node and on 16 workers of
  # 2 nodes) with the CPU of its phases from /proc, and the report states the comparison, the
  # replay and their targets; ppo_update refuses bad flags with one line.
  update="$build/benchmarks/ppo_update/ppo_update"
  expect_status 2 "ppo_update: --samples: .*not in range 1 to" "$update" --samples 0
  expect_status 2 "fewer than 2" "$update" --samples 8 --minibatches 8
  expect_status 2 "ppo_update: .*unknown environment 'Nope'" "$update" --env Nope
  expect_status 2 "ppo_update: --threads: .*not in range 1 to" "$update" --threads 0
  # --threads 2: the update on 2 threads beside 1, the same parameters (the last field).
  "$update" --samples 256 --epochs 1 --minibatches 2 --repeats 1 --threads 2 --header >threads.csv
  $python - <<'PY' || fail "ppo_update --threads 2"
import csv
row = next(csv.DictReader(open("threads.csv")))
assert row["threads"] == "2" and row["identical"] == "1", row
assert float(row["threaded_cpu_seconds"]) > 0 and float(row["threaded_wall_seconds"]) > 0, row
PY
  $python "$here/../../benchmarks/ppo_scaling/ppo_scaling.py" "$build" --header --workers 1 2 \
    --steps 64 --iterations 2 --step-sleep-us 1000 --project-to 16 --replay 16 --replay-nodes 2 \
    >scaling.csv
  $python - <<'PY' || fail "ppo_scaling.csv"
import csv
rows = list(csv.DictReader(open("scaling.csv")))
runs = sorted((r["workers"], r["nodes"], r["iteration"]) for r in rows if r["kind"] == "run")
assert runs == [(w, n, i) for w, n in (("1", "4"), ("2", "4"), ("8", "1")) for i in "01"], runs
replays = sorted((r["workers"], r["nodes"], r["iteration"]) for r in rows if r["kind"] == "replay")
assert replays == [(w, n, i) for w, n in (("16", "2"), ("8", "1")) for i in "01"], replays
for r in rows:
    if r["kind"] == "replay":
        assert r["slots"] == "16" and float(r["rollout_task_cpu"]) > 0, r
        assert float(r["update_master_cpu"]) > 0, r
updates = {r["samples"]: r for r in rows if r["kind"] == "update"}
assert sorted(updates, key=int) == ["64", "128", "1024"], sorted(updates)
for r in rows:
    assert float(r["update_seconds"]) > 0, r
    if r["kind"] in ("run", "replay"):
        assert float(r["rollout_seconds"]) >= float(r["task_seconds_max"]) >= 64 * 1e-3, r
    else:
        assert float(r["gemm_seconds"]) > 0, r
PY
  $python "$here/../../benchmarks/ppo_scaling/report.py" scaling.csv --markdown scaling.md \
    --plot scaling.png >/dev/null
  grep -q "^Target: T(16) < 0.5 x T(8, one node): .*: \(met\|NOT met\)\. " scaling.md ||
    { cat scaling.md; fail "no target line"; }
  grep -q "^| 8 (1 node, the baseline) | .* | 1.00 |" scaling.md || fail "no baseline row"
  targets="^Targets: T'(16) < 0.5 x T'(8, one node): ratio [0-9.]*: \(met\|NOT met\) .*"
  targets+=" the update alone: [0-9.]*x its CPU: \(met\|NOT met\)"
  grep -q "$targets" scaling.md || { cat scaling.md; fail "no replay targets line"; }
  grep -q "^| 8 | 1 | .* | 1.00 |$" scaling.md || fail "no replay baseline row"
  [[ -s scaling.png ]] || fail "no plot"
  ;;
*)
  fail "unknown check '$2'"
  ;;
esac
echo "ppo_checks $2: passed"
