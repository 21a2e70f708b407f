#!/usr/bin/env bash
# End-to-end checks of fiber-es, each a CTest test:
#   es_checks.sh BUILD_DIR solves|resume|exploration|step-sleep|stop|bad-input
# solves:    CartPole-v1 reaches an eval return >= 475 within 40 generations.
# resume:    3 generations + resume to 6 gives bit-identical parameters to 6 in one go, and the
#            log has every generation exactly once; --time-limit stops with a checkpoint.
# exploration: --episodes-per-perturbation, --common-start-states and --continuous-actions tanh
#            reach the workers.
# step-sleep: --step-sleep-us makes episodes cost what it says; the log has master_seconds.
# stop:      SIGTERM to fiberrun in the middle of a generation: the master abandons it, writes
#            the checkpoint of the last complete one and exits 75; resumed, the log has every
#            generation exactly once. A program that does not handle SIGTERM (fiber-pi) is ended
#            with its workers, not left hanging.
# bad-input: damaged, truncated and foreign checkpoints, bad values, unknown keys and
#            environments: one line, a non-zero exit.
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
configs="$here/../../apps/es/configs"
es=("$build/libfiber/fiberrun" -n 1 "$build/apps/es/fiber-es")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
python=/usr/bin/python3

fail() { echo "FAIL: $*" >&2; exit 1; }

case "$2" in
solves)
  "${es[@]}" --config "$configs/cartpole.toml" --generations 40 --workers 2 --output run.h5 | tail -3
  $python - <<'PY' || fail "CartPole not solved"
import h5py
with h5py.File("run.h5") as f:
    rows = f["log"].attrs["rows"]
    best = max(f["log/eval_return"][:rows])
    print(f"best eval return {best} in {rows} generations")
    assert best >= 475, best
PY
  ;;
resume)
  common=(--config "$configs/cartpole.toml" --no-stop-at-target --workers 2 --checkpoint-every 3)
  "${es[@]}" "${common[@]}" --generations 6 --output whole.h5 >/dev/null
  "${es[@]}" "${common[@]}" --generations 3 --output split.h5 >/dev/null
  "${es[@]}" "${common[@]}" --generations 6 --output split.h5 --resume auto | grep -q "resumed" ||
    fail "no resume"
  $python - <<'PY' || fail "resumed run differs"
import h5py, numpy as np
with h5py.File("whole.ckpt.h5") as a, h5py.File("split.ckpt.h5") as b:
    for name in ("theta", "adam_m", "adam_v", "observation_sum", "observation_sumsq"):
        assert np.array_equal(a[name][:], b[name][:]), name
    assert a["rng"][()] == b["rng"][()]
with h5py.File("whole.h5") as a, h5py.File("split.h5") as b:
    ra, rb = a["log"].attrs["rows"], b["log"].attrs["rows"]
    assert list(b["log/generation"][:rb]) == list(range(6)), list(b["log/generation"][:rb])
    for column in ("return_mean", "eval_return", "timesteps"):
        assert np.array_equal(a["log/" + column][:ra], b["log/" + column][:rb]), column
print("bit-identical after resume; generations 0..5 once each")
PY
  # A time limit ends the run after the generation in flight, with a checkpoint to resume from.
  "${es[@]}" "${common[@]}" --generations 6 --time-limit 1e-6 --output limited.h5 |
    grep -q "time limit of 1e-06 s reached after generation 0" || fail "no stop at the time limit"
  "${es[@]}" "${common[@]}" --generations 2 --output limited.h5 --resume auto | grep -q "resumed" ||
    fail "no resume after the time limit"
  ;;
stop)
  common=(--config "$configs/cartpole.toml" --no-stop-at-target --workers 2 --population 2048)
  "${es[@]}" "${common[@]}" --generations 50 --output run.h5 >out.txt 2>&1 &
  fiberrun=$!
  for _ in $(seq 600); do
    [[ $(grep -c '^gen ' out.txt) -ge 1 ]] && break
    sleep 0.1
  done
  sleep 0.3  # into the next generation (~1 s each)
  kill -TERM "$fiberrun" || true
  status=0
  wait "$fiberrun" || status=$?
  cat out.txt
  [[ $status -eq 75 ]] || fail "exit $status, not 75"
  done_before=$(sed -nE 's/^fiber-es: stopped by SIGTERM after ([0-9]+) generations; checkpoint run.ckpt.h5; resume with --resume auto$/\1/p' out.txt)
  [[ -n $done_before ]] || fail "no stop line"
  [[ $(grep -c '^gen ' out.txt) -eq $done_before ]] || fail "a generation was logged but not checkpointed"
  "${es[@]}" "${common[@]}" --generations $((done_before + 1)) --output run.h5 --resume auto |
    grep -q "resumed from run.ckpt.h5 at generation $done_before" || fail "no resume"
  $python - $((done_before + 1)) <<'PY' || fail "log is not every generation once"
import sys, h5py
n = int(sys.argv[1])
with h5py.File("run.h5") as f:
    rows = f["log"].attrs["rows"]
    assert list(f["log/generation"][:rows]) == list(range(n)), list(f["log/generation"][:rows])
print(f"generations 0..{n - 1} once each")
PY
  "$build/libfiber/fiberrun" -n 1 "$build/apps/pi/fiber-pi" --workers 2 --tasks 100000 \
    --samples 1000000 >pi.txt 2>&1 &
  fiberrun=$!
  sleep 2
  kill -TERM "$fiberrun" || true
  for _ in $(seq 100); do
    kill -0 "$fiberrun" 2>/dev/null || break
    sleep 0.1
  done
  ! kill -0 "$fiberrun" 2>/dev/null || { kill -KILL "$fiberrun"; fail "fiber-pi's job still runs 10 s after SIGTERM"; }
  status=0
  wait "$fiberrun" || status=$?
  [[ $status -ne 0 ]] || fail "fiber-pi killed by SIGTERM, yet exit 0"
  grep -q "fiberrun: the program ended without an exit status" pi.txt || { cat pi.txt; fail "no 'ended without an exit status' line"; }
  ;;
bad-input)
  expect_error() {  # expect_error PATTERN ARGS...: one line matching, non-zero exit
    local pattern="$1"
    shift
    local status=0
    "${es[@]}" "$@" >out.txt 2>err.txt || status=$?
    [[ $status -ne 0 ]] || fail "exit 0 for: $*"
    grep -q -- "$pattern" err.txt || { cat err.txt >&2; fail "no '$pattern' for: $*"; }
    [[ $(grep -c "fiber-es" err.txt) -eq 1 ]] || { cat err.txt >&2; fail "not one line: $*"; }
  }
  "${es[@]}" --config "$configs/cartpole.toml" --generations 2 --no-stop-at-target \
    --output good.h5 >/dev/null
  echo garbage >garbage.h5
  head -c 2000 good.ckpt.h5 >truncated.h5
  expect_error "not an HDF5 file" --output x.h5 --resume garbage.h5
  expect_error "checkpoint truncated.h5" --output x.h5 --resume truncated.h5
  expect_error "not a fiber checkpoint" --output x.h5 --resume good.h5
  expect_error "nowhere.h5: cannot open" --output x.h5 --resume nowhere.h5
  expect_error "another environment" --env Pendulum-v1 --output good.h5 --resume good.ckpt.h5
  expect_error "unknown environment 'Nope'" --env Nope
  expect_error "population" --population -4
  expect_error "must be even" --population 5
  expect_error "sigma" --sigma 0
  printf 'learning-rate = 0.1\nlearning_rat = 2\n' >bad.toml
  expect_error "learning_rat" --config bad.toml
  expect_error "hidden" --hidden 64 abc
  expect_status() {  # expect_status STATUS PATTERN COMMAND...: that status, one readable line
    local expected="$1" pattern="$2"
    shift 2
    local status=0
    "$@" >out.txt 2>err.txt || status=$?
    [[ $status -eq $expected ]] || { cat err.txt >&2; fail "exit $status, not $expected, for: $*"; }
    grep -q -- "$pattern" err.txt || { cat err.txt >&2; fail "no '$pattern' for: $*"; }
    [[ $(wc -l <err.txt) -eq 1 ]] || { cat err.txt >&2; fail "not one line: $*"; }
    ! grep -qE '[0-9]{20}' err.txt || { cat err.txt >&2; fail "an unreadable number for: $*"; }
  }
  # Refused before the run: exit 2 (no 300-digit range limit in the line).
  expect_refused() { expect_status 2 "$1" "${es[@]}" "${@:2}"; }
  # A network far too large for any node's memory (10^10 weights a layer): refused at once.
  expect_refused "--hidden: the networks. [0-9]* parameters would need about .* GiB on this node" \
    --hidden 100000 100000 --workers 2
  # An exception that reaches main (here a 64 MiB /dev/shm, in a private mount namespace, too
  # small for the noise table): one line, exit 1, no abort and backtrace.
  small_shm() {  # small_shm COMMAND...: runs it with a private 64 MiB /dev/shm
    unshare --map-root-user --mount \
      sh -c 'mount -t tmpfs -o size=64m tmpfs /dev/shm && exec "$@"' sh "$@"
  }
  expect_status 1 "^fiber-es: error: .*needs .* MiB in /dev/shm" small_shm "${es[@]}" --workers 1 \
    --noise-size 25000000 --output shm.h5
  # --task-timeout: a task longer than it (two Pendulum episodes, each sleeping 200 x 10 ms) is
  # killed, tried again twice, then ends the run with one line; the same task under a timeout
  # longer than it completes.
  grep -q -- "--task-timeout FLOAT:FINITE in \[0, 4000000\]=600" <("${es[@]}" --help) ||
    fail "--task-timeout default"
  slow=(--env Pendulum-v1 --population 2 --pairs-per-task 1 --eval-episodes 0 --workers 1
    --noise-size 100000 --step-sleep-us 10000 --generations 1)
  expect_status 1 "^fiber-es: error: .*timed out 3 times.*raise --task-timeout" \
    "${es[@]}" "${slow[@]}" --task-timeout 1 --output timeout.h5
  "${es[@]}" "${slow[@]}" --task-timeout 60 --output in-time.h5 | grep -q "fiber-es: done" ||
    fail "a task within --task-timeout did not complete"
  # TOML files: the file, line and column of the fault.
  expect_refused "bad.toml:2:1: unknown option 'learning_rat'" --config bad.toml
  printf 'seed = 3\nlearning-rate = = 2\n' >syntax.toml
  expect_refused "syntax.toml:2:17: " --config syntax.toml
  printf 'seed = 3\n\nenv = "CartPole-v1\n' >unterminated.toml
  expect_refused "unterminated.toml:3:" --config unterminated.toml
  printf 'seed = 3\n[section]\nseed = 4\n' >section.toml
  expect_refused "section.toml:2:2: \[section\]: sections are not options" --config section.toml
  for option in sigma learning-rate l2 target-return time-limit; do
    for value in nan inf -inf; do
      expect_refused "--$option: must be a finite number" "--$option=$value"
      printf '%s = %s\n' "$option" "$value" >value.toml
      expect_refused "value.toml:1:1: --$option: must be a finite number" --config value.toml
    done
  done
  expect_refused "--l2: must be a finite number >= 0, not -1" --l2 -1
  expect_refused "--workers: must be a finite number >= 0, not -2" --workers -2
  expect_refused "--population: must be a finite number in \[2, 10000000\], not -4" --population -4
  ;;
step-sleep)
  # Pendulum episodes are 200 steps; one task holds the 4 pairs (8 episodes), so each generation
  # sleeps at least 8 * 200 * 500 us = 0.8 s, two of them at least 1.6 s.
  "${es[@]}" --env Pendulum-v1 --population 8 --eval-episodes 1 --generations 2 --workers 2 \
    --step-sleep-us 500 --noise-size 100000 --output sleep.h5 >/dev/null
  $python - <<'PY' || fail "step sleep or master_seconds wrong"
import h5py
with h5py.File("sleep.h5") as f:
    rows = f["log"].attrs["rows"]
    seconds, master = f["log/seconds"][rows - 1], f["log/master_seconds"][:rows]
    print(f"{rows} generations in {seconds:.2f} s, master {list(master)}")
    assert rows == 2 and seconds >= 1.6, (rows, seconds)
    assert all(0 < m < seconds / 2 for m in master), master
PY
  ;;
exploration)
  # The options for hard exploration reach the workers: each changes what is measured.
  small=(--env Pendulum-v1 --population 8 --eval-episodes 1 --generations 1 --workers 2
         --noise-size 100000)
  "${es[@]}" "${small[@]}" --output plain.h5 >/dev/null
  "${es[@]}" "${small[@]}" --episodes-per-perturbation 3 --output three.h5 >/dev/null
  "${es[@]}" "${small[@]}" --common-start-states --output common.h5 >/dev/null
  "${es[@]}" "${small[@]}" --continuous-actions tanh --output tanh.h5 >/dev/null
  $python - <<'PY' || fail "an exploration option had no effect"
import h5py
def log(name):
    with h5py.File(name + ".h5") as f:
        return f["log/episodes"][0], f["log/return_mean"][0]
plain, three, common, tanh = (log(n) for n in ("plain", "three", "common", "tanh"))
assert plain[0] == 8 and three[0] == 24, (plain, three)  # 4 pairs x 2 x episodes
assert common[1] != plain[1], "common start states changed nothing"
assert tanh[1] != plain[1], "tanh actions changed nothing"
print("episodes per perturbation, common start states and tanh actions reach the workers")
PY
  ;;
*)
  fail "unknown check '$2'"
  ;;
esac
echo "es_checks $2: passed"
