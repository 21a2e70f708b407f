#!/usr/bin/env bash
# End-to-end checks of fiber-es, each a CTest test:
#   es_checks.sh BUILD_DIR solves|resume|exploration|step-sleep|stop|bad-input|data-safety|
#                checkpoint-safety
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
# data-safety: no file destroyed or mixed: --output refuses a foreign file and an earlier run's
#            log (--overwrite replaces it), --output and --checkpoint as one file, files held by
#            a live run (fiber's lock files, also with HDF5_USE_FILE_LOCKING=FALSE); a stale lock
#            is taken over; a corrupted log row, a checkpoint of another environment (same
#            parameter count) or ahead of its log are refused on resume; storage errors exit 2;
#            disk full (a small tmpfs in a private mount namespace) is one line, and the last
#            checkpoint survives; a missing or read-only --checkpoint folder and a too-small
#            /dev/shm are refused before any file is created; /log/tasks_retried counts per
#            generation.
# checkpoint-safety: a file already at --checkpoint (not a checkpoint, or another run's) is
#            refused unless --overwrite; a resume continues a log only from its own run's
#            checkpoint; a FIFO, a directory or a device as --checkpoint, --output or --resume is
#            one line and exit 2 at once (tests/support/checkpoint_safety.sh).
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
# shellcheck source=../support/expect_status.sh
source "$here/../support/expect_status.sh"
# shellcheck source=../support/config_refusals.sh
source "$here/../support/config_refusals.sh"
# shellcheck source=../support/checkpoint_safety.sh
source "$here/../support/checkpoint_safety.sh"

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
  # Refused before the run: exit 2 (no 300-digit range limit in the line).
  expect_refused() { expect_status 2 "$1" "${es[@]}" "${@:2}"; }
  # A network far too large for any node's memory (10^10 weights a layer): refused at once.
  expect_refused "--hidden: the networks. [0-9]* parameters would need about .* GiB on this node" \
    --hidden 100000 100000 --workers 2
  # A /dev/shm too small for the noise table (64 MiB, in a private mount namespace): the pool's
  # start fails with one line, exit 1, no abort and backtrace (data-safety: no log is left).
  small_shm() {  # small_shm COMMAND...: runs it with a private 64 MiB /dev/shm
    unshare --map-root-user --mount \
      sh -c 'mount -t tmpfs -o size=64m tmpfs /dev/shm && exec "$@"' sh "$@"
  }
  expect_status 1 "^fiber-es: .*needs .* MiB in /dev/shm" small_shm "${es[@]}" --workers 1 \
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
  expect_toml_faults_located
  expect_non_finite_refused sigma learning-rate l2 target-return time-limit
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
data-safety)
  small=(--env Pendulum-v1 --population 8 --eval-episodes 1 --workers 1 --noise-size 100000)
  # refused STATUS PATTERN ARGS...: the program exits STATUS with one line matching PATTERN.
  refused() { expect_status "$1" "$2" "${es[@]}" "${@:3}"; }
  unchanged() {  # unchanged FILE SHA256: the file is still what it was
    [[ $(sha256sum <"$1") == "$2" ]] || fail "$1 was changed"
  }

  # --output never truncates a file that is not an earlier log of fiber-es.
  echo "someone's notes" >notes.txt
  notes=$(sha256sum <notes.txt)
  refused 2 "exists and is not a run log of this program" "${small[@]}" --generations 1 --output notes.txt
  unchanged notes.txt "$notes"
  $python -c 'import h5py; h5py.File("data.h5", "w")["x"] = [1.0, 2.0]'
  data=$(sha256sum <data.h5)
  refused 2 "pass --overwrite to replace it" "${small[@]}" --generations 1 --output data.h5
  unchanged data.h5 "$data"
  "${es[@]}" "${small[@]}" --generations 2 --output earlier.h5 >/dev/null
  earlier=$(sha256sum <earlier.h5)
  refused 2 "holds the log of an earlier run (2 rows).*--resume auto" "${small[@]}" \
    --generations 1 --output earlier.h5 --checkpoint other.ckpt.h5
  unchanged earlier.h5 "$earlier"
  [[ ! -e other.ckpt.h5 ]] || fail "a refused run wrote its checkpoint"
  "${es[@]}" "${small[@]}" --generations 1 --output earlier.h5 --overwrite >/dev/null ||
    fail "--overwrite did not replace the earlier log"
  # --resume auto before the first checkpoint (a requeued job): the same run, started over.
  "${es[@]}" "${small[@]}" --generations 1 --output restart.h5 --checkpoint-every 5 >/dev/null
  rm restart.ckpt.h5
  "${es[@]}" "${small[@]}" --generations 1 --output restart.h5 --resume auto |
    grep -q "the run starts over, replacing its log restart.h5 (1 rows)" || fail "no start-over note"

  # --output and --checkpoint as one file, also spelt differently.
  mkdir -p sub
  refused 2 "are the same file" "${small[@]}" --generations 1 --output same.h5 --checkpoint same.h5
  refused 2 "are the same file" "${small[@]}" --generations 1 --output ./same.h5 \
    --checkpoint sub/../same.h5
  ln -s earlier.h5 link.h5
  refused 2 "are the same file" "${small[@]}" --generations 1 --output earlier.h5 --checkpoint link.h5
  unchanged earlier.h5 "$(sha256sum <earlier.h5)"

  # Two runs on one file are refused by fiber's own lock, also without HDF5's.
  export HDF5_USE_FILE_LOCKING=FALSE
  "${es[@]}" "${small[@]}" --generations 40 --step-sleep-us 2000 --output live.h5 >live.txt 2>&1 &
  live=$!
  for _ in $(seq 300); do
    grep -q '^gen ' live.txt && break
    sleep 0.1
  done
  grep -q '^gen ' live.txt || { cat live.txt; fail "the first run did not start"; }
  [[ $(cat live.h5.lock) == "$(hostname) "* ]] || fail "the lock file does not name this host"
  refused 2 "live.h5: in use by another run (host $(hostname), pid [0-9]*;" "${small[@]}" \
    --generations 1 --output live.h5 --overwrite
  refused 2 "live.ckpt.h5: in use by another run" "${small[@]}" --generations 1 \
    --output elsewhere.h5 --checkpoint live.ckpt.h5
  [[ ! -e elsewhere.h5 ]] || fail "a refused run created its log"
  kill -TERM "$live"
  status=0
  wait "$live" || status=$?
  [[ $status -eq 75 ]] || { cat live.txt; fail "the first run ended with $status, not 75"; }
  [[ ! -e live.h5.lock && ! -e live.ckpt.h5.lock ]] || fail "lock files left after the run"
  unset HDF5_USE_FILE_LOCKING
  # A stale lock (a dead process of this host) is taken over with a word; another host's is not.
  dead=$(sh -c 'echo $$')
  echo "$(hostname) $dead" >stale.h5.lock
  "${es[@]}" "${small[@]}" --generations 1 --output stale.h5 >out.txt 2>err.txt ||
    { cat err.txt; fail "a stale lock was not taken over"; }
  grep -q "took over the stale lock stale.h5.lock of pid $dead on this host" err.txt ||
    fail "no word about the stale lock"
  [[ ! -e stale.h5.lock ]] || fail "the lock was not released"
  echo "node-elsewhere 4242" >remote.h5.lock
  refused 2 "in use by another run (host node-elsewhere, pid 4242" "${small[@]}" \
    --generations 1 --output remote.h5

  # A corrupted row that Fletcher32 detects is refused on resume; the log is left as it was.
  "${es[@]}" "${small[@]}" --generations 3 --checkpoint-every 1 --output damaged.h5 >/dev/null
  offset=$($python -c 'import h5py; print(h5py.File("damaged.h5", "r")["log/eval_return"].id.get_chunk_info(0).byte_offset)')
  printf '\x7f\x7f\x7f\x7f' | dd of=damaged.h5 bs=1 seek=$((offset + 8)) conv=notrunc status=none
  damaged=$(sha256sum <damaged.h5)
  refused 2 "checksum mismatch in /log/eval_return, rows 0-2" "${small[@]}" --generations 5 \
    --output damaged.h5 --resume auto
  unchanged damaged.h5 "$damaged"

  # A checkpoint of another environment with as many parameters (CartPole 4-7-2 and Pendulum
  # 3-10-1: 51), and a checkpoint ahead of its log, are refused.
  "${es[@]}" --env CartPole-v1 --hidden 7 --population 8 --workers 1 --noise-size 100000 \
    --generations 1 --output cartpole.h5 >/dev/null
  refused 2 "made for another environment, CartPole-v1, not Pendulum-v1" "${small[@]}" \
    --hidden 10 --generations 2 --output pendulum.h5 --resume cartpole.ckpt.h5
  # Ahead: an older copy of the run's own log put back (another run's log is refused before, as
  # another run's: checkpoint-safety).
  "${es[@]}" "${small[@]}" --generations 2 --output ahead.h5 >/dev/null
  cp ahead.h5 behind.h5
  "${es[@]}" "${small[@]}" --generations 4 --output ahead.h5 --resume auto >/dev/null
  cp behind.h5 ahead.h5
  refused 2 "has 2 rows, but the checkpoint ahead.ckpt.h5 is at row 4" "${small[@]}" \
    --generations 6 --output ahead.h5 --resume auto
  # Storage errors are exit status 2, and a missing --checkpoint folder is found at the start.
  echo garbage >garbage.ckpt.h5
  refused 2 "not an HDF5 file" "${small[@]}" --generations 1 --output g.h5 --resume garbage.ckpt.h5
  refused 2 "cannot create the lock file nowhere/c.h5.lock" "${small[@]}" --generations 1 \
    --output fresh.h5 --checkpoint nowhere/c.h5
  [[ ! -e fresh.h5 ]] || fail "a run refused at the start created its log"
  mkdir -p readonly
  status=0
  unshare -m sh -c 'mount -t tmpfs -o ro,size=1m tmpfs readonly && exec "$@"' sh "${es[@]}" \
    "${small[@]}" --generations 1 --output fresh.h5 --checkpoint readonly/c.h5 >out.txt \
    2>err.txt || status=$?
  [[ $status -eq 2 ]] || { cat err.txt; fail "a read-only --checkpoint folder: exit $status, not 2"; }
  grep -q "cannot create the lock file readonly/c.h5.lock (Read-only file system" err.txt ||
    { cat err.txt; fail "a read-only --checkpoint folder is not refused at the start"; }
  [[ ! -e fresh.h5 ]] || fail "a run refused at the start created its log"

  # Disk full, in a tmpfs of a private mount namespace: one line, exit 2, and the checkpoint
  # written before survives (a resume from it works once there is room).
  full() {  # full SIZE COMMAND...: runs the command with ./disk a tmpfs of SIZE
    mkdir -p disk
    unshare -m sh -c 'mount -t tmpfs -o size="$1" tmpfs disk && shift && exec "$@"' sh "$@"
  }
  status=0
  full 16k "${es[@]}" "${small[@]}" --generations 3 --output disk/log.h5 >out.txt 2>err.txt ||
    status=$?
  [[ $status -eq 2 ]] || { cat err.txt; fail "disk full on the log: exit $status, not 2"; }
  [[ $(wc -l <err.txt) -eq 1 ]] || { cat err.txt; fail "disk full on the log: not one line"; }
  cat >fill-up.sh <<SH
set -e
"\$@" --generations 2 --checkpoint-every 1 --output disk/log.h5 >/dev/null
cp disk/log.ckpt.h5 before.ckpt.h5
dd if=/dev/zero of=disk/filler bs=4k status=none 2>/dev/null || true
truncate -s -32K disk/filler  # room for the lock files, not for a checkpoint
status=0
"\$@" --generations 6 --checkpoint-every 1 --output disk/log.h5 --resume auto >out.txt 2>err.txt || status=\$?
echo \$status >status.txt
cmp disk/log.ckpt.h5 before.ckpt.h5
rm disk/filler
"\$@" --generations 6 --checkpoint-every 1 --output disk/log.h5 --resume auto >resumed.txt
SH
  full 1m bash fill-up.sh "${es[@]}" "${small[@]}" || { cat err.txt; fail "disk full lost the checkpoint"; }
  [[ $(cat status.txt) -eq 2 ]] || { cat err.txt; fail "disk full: exit $(cat status.txt), not 2"; }
  [[ $(wc -l <err.txt) -eq 1 ]] || { cat err.txt; fail "disk full: not one line"; }
  grep -q "resumed from disk/log.ckpt.h5 at generation 2" resumed.txt || fail "no resume"

  # A too-small /dev/shm for the noise table: its message as one line, and no log left behind.
  status=0
  unshare -m sh -c 'mount -t tmpfs -o size=20m tmpfs /dev/shm && exec "$@"' sh "${es[@]}" \
    --env Pendulum-v1 --workers 1 --noise-size 10000000 --generations 1 --output shm.h5 \
    >out.txt 2>err.txt || status=$?
  [[ $status -ne 0 ]] || fail "a too-small /dev/shm: exit 0"
  grep -q "enlarge /dev/shm" err.txt || { cat err.txt; fail "no /dev/shm message"; }
  [[ $(grep -vc '^fiberrun:' err.txt) -eq 1 ]] || { cat err.txt; fail "/dev/shm: not one line"; }
  [[ ! -e shm.h5 ]] || fail "an empty log left behind"

  # /log/tasks_retried counts the generation's retries: task processes killed in an early
  # generation (~0.8 s each; enough of them that a slow look for the victims on a loaded machine
  # still lands before the last).
  "${es[@]}" --env Pendulum-v1 --population 8 --eval-episodes 1 --workers 2 --noise-size 100000 \
    --generations 8 --step-sleep-us 500 --output retried.h5 >retried.txt 2>&1 &
  run=$!
  for _ in $(seq 300); do
    grep -q '^gen    0' retried.txt 2>/dev/null && break
    sleep 0.1
  done
  sleep 0.3
  # A task process: a fiber-es process of this run whose parent is a fiber-es worker.
  descendants() { local p; for p in $(pgrep -P "$1"); do echo "$p"; descendants "$p"; done; }
  victims=()
  for p in $(descendants "$run"); do
    parent=$(ps -o ppid= -p "$p" | tr -d ' ')
    if [[ $(ps -o comm= -p "$p") == fiber-es && $(ps -o comm= -p "$parent") == fiber-es ]]; then
      victims+=("$p")
    fi
  done
  [[ ${#victims[@]} -gt 0 ]] || fail "no task process found"
  kill -KILL "${victims[@]}"  # all of them: at least one runs an item
  wait "$run" || { cat retried.txt; fail "the run with a killed task process failed"; }
  $python - <<'PY' || fail "tasks_retried is not per generation"
import h5py
with h5py.File("retried.h5") as f:
    retried = list(f["log/tasks_retried"][:f["log"].attrs["rows"]])
print("tasks_retried per generation:", retried)
assert len(retried) == 8 and sum(retried) >= 1 and retried[-1] == 0, retried
PY
  ;;
checkpoint-safety)
  tiny=(--env Pendulum-v1 --population 8 --eval-episodes 1 --workers 1 --noise-size 100000
    --checkpoint-every 1)
  short=("${es[@]}" "${tiny[@]}" --generations 2)
  longer=("${es[@]}" "${tiny[@]}" --generations 3)
  checkpoint_safety_checks
  ;;
*)
  fail "unknown check '$2'"
  ;;
esac
echo "es_checks $2: passed"
