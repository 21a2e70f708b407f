#!/usr/bin/env bash
# fiber-es and fiber-ppo under sbatch on a one-machine Slurm cluster (slurm/local/), each a CTest
# test:
#   slurm_checks.sh BUILD_DIR start|completes|ppo-completes|requeue|requeue-hard|stop
# start:     starts the cluster (the fixture's setup; its state in FIBER_SLURM_DIR).
# completes: slurm/es.sbatch runs CartPole for 4 generations to the end: job COMPLETED with exit
#            0, a valid HDF5 log with generations 0..3.
# ppo-completes: slurm/ppo.sbatch runs CartPole for 4 iterations to the end, the same checks.
# requeue:   a longer job gets `scancel --batch --signal=TERM` once its log has 2 generations:
#            it checkpoints, exits 75, is requeued, resumes and completes; the output has the stop
#            and resume lines, and the log every generation exactly once.
# python-requeue: slurm/python.sbatch runs examples/python/resumable_search.py (a fiber.Pool in
#            Python, one worker); `scancel --batch --signal=TERM` after 2 rounds: it exits 75, is requeued,
#            resumes from its checkpoint and completes, every round printed exactly once.
# requeue-hard: the same with `scontrol requeue` (Slurm ends every process of the job): the
#            run resumes from its last checkpoint, and the log has every generation once.
# fiber-es's jobs also check their rollout log (log.rollouts.h5): every generation's rollouts once.
# stop:      stops the cluster (the fixture's cleanup, also after failures) and checks that no
#            process it started is left.
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export FIBER_SLURM_DIR=${FIBER_SLURM_DIR:-/tmp/fiber-slurm-ctest}
export FIBER_SLURM_PORT=${FIBER_SLURM_PORT:-6917}
export SLURM_CONF=$FIBER_SLURM_DIR/slurm.conf
# The jobs run on this machine: MPI's TCP traffic stays on loopback (docs/platform.md, "Keep
# local traffic on loopback"); under a batch system fiber leaves that choice to the site.
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
python=/usr/bin/python3

fail() { echo "FAIL: $*" >&2; exit 1; }

# wait_for SECONDS COMMAND...: polls COMMAND every 0.2 s until it succeeds or SECONDS have passed.
wait_for() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 0.2
  done
}
job_field() { scontrol show job "$1" -o | tr ' ' '\n' | sed -n "s/^$2=//p"; }
job_ended() { [[ $(job_field "$1" JobState) =~ ^(COMPLETED|FAILED|CANCELLED|TIMEOUT)$ ]]; }
generations_logged() { [[ $(grep -c '^gen ' "$1" 2>/dev/null || true) -ge $2 ]]; }

# The scripts' settings go in the environment, which sbatch passes on: with them listed in
# --export=ALL,NAME=VALUE,... this Slurm (Debian's 22.05) started each job's script a minute late.
export FIBER_ROOT=$root FIBER_BUILD=$build

# submit NAME ARGS...: slurm/es.sbatch on the local node (2 tasks: the master and one worker),
# CartPole with a small noise table, in a fresh folder; prints the job id.
submit() {
  local name=$1
  shift
  mkdir -p "$work/$name"
  RUN_DIR=$work/$name/run NOISE_SIZE=1000000 CONFIG=$root/apps/es/configs/cartpole.toml \
    sbatch --parsable --nodes=1 --ntasks-per-node=2 --time=10 --chdir="$work/$name" \
    --output="$work/$name/job.out" "$root/slurm/es.sbatch" --no-stop-at-target "$@"
}

# check_log RUN_DIR N: the HDF5 log has generations 0..N-1, each once; the job ended cleanly, so
# it and its rollout log are compressed (read through the compression, across any requeue).
check_log() {
  $python - "$1/log.h5" "$2" <<'PY' || fail "log $1/log.h5 is not generations 0..$(($2 - 1)) once each"
import sys, h5py
path, n = sys.argv[1], int(sys.argv[2])
with h5py.File(path, "r") as f:
    rows = int(f["log"].attrs["rows"])
    generations = [int(g) for g in f["log/generation"][:rows]]
    assert generations == list(range(n)), generations
    assert f["meta/environment"][()].decode() == "CartPole-v1"
    assert all(t > 0 for t in f["log/timesteps"][:rows])
    assert f["log/generation"].compression == "gzip" and f["log/generation"].fletcher32
# The rollout log beside it: every generation's rollouts once (as many rows each).
import numpy as np
with h5py.File(path.replace("log.h5", "log.rollouts.h5"), "r") as f:
    assert f["log/return"].compression == "gzip" and f["log/return"].shuffle
    counts = np.bincount(f["log/generation"][:int(f["log"].attrs["rows"])], minlength=n)
    assert len(counts) == n and (counts == counts[0]).all() and counts[0] > 0, counts
print(f"{path}: generations 0..{n - 1}, once each; {counts[0]} rollouts each")
PY
}

show_job() {
  echo "--- job output ($1) ---" >&2
  cat "$1" >&2 || true
}

case "$2" in
start)
  "$root/slurm/local/start.sh"
  ;;
stop)
  pids=$(cat "$FIBER_SLURM_DIR"/slurm*.pid "$FIBER_SLURM_DIR"/munge/munged.pid 2>/dev/null || true)
  "$root/slurm/local/stop.sh"
  for pid in $pids; do
    ! kill -0 "$pid" 2>/dev/null || fail "process $pid ($(cat /proc/"$pid"/comm)) still runs"
  done
  for pid in $(pgrep -x slurmstepd || true); do
    ! tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "SLURM_CONF=$SLURM_CONF" ||
      fail "slurmstepd $pid of this cluster still runs"
  done
  echo "stopped: $(echo "$pids" | wc -w) daemons, no job step left"
  ;;
completes)
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  job=$(submit completed --generations 4)
  wait_for 120 job_ended "$job" || { show_job "$work/completed/job.out"; fail "job $job did not end"; }
  [[ $(job_field "$job" JobState) == COMPLETED && $(job_field "$job" ExitCode) == 0:0 ]] ||
    { show_job "$work/completed/job.out"; fail "job $job: $(job_field "$job" JobState) $(job_field "$job" ExitCode)"; }
  grep -q "fiber-es: done: 4 generations" "$work/completed/job.out" ||
    { show_job "$work/completed/job.out"; fail "no 'done' line"; }
  check_log "$work/completed/run" 4
  ;;
ppo-completes)
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  out=$work/ppo/job.out
  mkdir -p "$work/ppo"
  # 4 slots x 128 steps = 512 timesteps an iteration: 2,048 are 4 iterations.
  job=$(RUN_DIR=$work/ppo/run ENVS=4 CONFIG=$root/apps/ppo/configs/cartpole.toml \
    sbatch --parsable --nodes=1 --ntasks-per-node=2 --time=10 --chdir="$work/ppo" \
    --output="$out" "$root/slurm/ppo.sbatch" --total-timesteps 2048 --no-stop-at-target)
  wait_for 120 job_ended "$job" || { show_job "$out"; fail "job $job did not end"; }
  [[ $(job_field "$job" JobState) == COMPLETED && $(job_field "$job" ExitCode) == 0:0 ]] ||
    { show_job "$out"; fail "job $job: $(job_field "$job" JobState) $(job_field "$job" ExitCode)"; }
  grep -q "fiber-ppo: done: 4 iterations" "$out" || { show_job "$out"; fail "no 'done' line"; }
  $python - "$work/ppo/run/log.h5" <<'PY' || fail "the PPO log is not iterations 0..3 once each"
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    rows = int(f["log"].attrs["rows"])
    iterations = [int(i) for i in f["log/iteration"][:rows]]
    assert iterations == [0, 1, 2, 3], iterations
    assert f["meta/environment"][()].decode() == "CartPole-v1"
    assert list(f["log/timesteps"][:rows]) == [512, 1024, 1536, 2048], f["log/timesteps"][:rows]
print(f"{sys.argv[1]}: iterations 0..3, once each, 512 timesteps each")
PY
  ;;
requeue | requeue-hard)
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  out=$work/stopped/job.out
  generations=16
  job=$(submit stopped --generations $generations --population 256 --checkpoint-every 2)
  wait_for 120 generations_logged "$out" 3 || { show_job "$out"; fail "job $job logged no 3 generations"; }
  if [[ $2 == requeue ]]; then
    scancel --batch --signal=TERM "$job"
    echo "job $job: SIGTERM to the batch shell after $(grep -c '^gen ' "$out") generations"
  else
    scontrol requeue "$job"
    echo "job $job: requeued by scontrol after $(grep -c '^gen ' "$out") generations"
  fi
  wait_for 120 grep -q "fiber-es: resumed from" "$out" || { show_job "$out"; fail "job $job did not resume"; }
  wait_for 180 job_ended "$job" || { show_job "$out"; fail "job $job did not end"; }
  show_job "$out" 2>&1
  [[ $(job_field "$job" JobState) == COMPLETED && $(job_field "$job" ExitCode) == 0:0 ]] ||
    fail "job $job: $(job_field "$job" JobState) $(job_field "$job" ExitCode)"
  [[ $(job_field "$job" Restarts) == 1 ]] || fail "job $job restarted $(job_field "$job" Restarts) times"
  grep -q "fiber-es: done: $generations generations" "$out" || fail "no 'done' line"
  check_log "$work/stopped/run" $generations
  if [[ $2 == requeue ]]; then
    stop_line=$(grep "fiber-es: stopped by SIGTERM after" "$out") || fail "no stop line"
    done_before=$(sed -E 's/.*after ([0-9]+) generations.*/\1/' <<<"$stop_line")
    grep -q "fiber-job: stopped gracefully (exit 75); requeueing job $job" "$out" ||
      fail "no requeue line"
    grep -q "fiber-es: resumed from .* at generation $done_before\$" "$out" ||
      fail "did not resume at generation $done_before"
  fi
  ;;
python-requeue)
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  out=$work/python/job.out
  rounds=12
  mkdir -p "$work/python"
  job=$(sbatch --parsable --nodes=1 --ntasks-per-node=2 --time=10 --chdir="$work/python" \
    --output="$out" "$root/slurm/python.sbatch" "$root/examples/python/resumable_search.py" \
    --checkpoint "$work/python/search.json" --rounds $rounds --pause 0.2 --workers 1)
  wait_for 120 grep -qs "^round 1:" "$out" || { show_job "$out"; fail "job $job printed no 2 rounds"; }
  scancel --batch --signal=TERM "$job"
  wait_for 120 grep -qs "^resumed at round" "$out" || { show_job "$out"; fail "job $job did not resume"; }
  wait_for 180 job_ended "$job" || { show_job "$out"; fail "job $job did not end"; }
  show_job "$out" 2>&1
  [[ $(job_field "$job" JobState) == COMPLETED && $(job_field "$job" ExitCode) == 0:0 ]] ||
    fail "job $job: $(job_field "$job" JobState) $(job_field "$job" ExitCode)"
  [[ $(job_field "$job" Restarts) == 1 ]] || fail "job $job restarted $(job_field "$job" Restarts) times"
  grep -q "fiber: stopped by SIGTERM; run again to resume (exit 75)" "$out" || fail "no stop line"
  grep -q "fiber-job: stopped gracefully (exit 75); requeueing job $job" "$out" || fail "no requeue line"
  [[ $(grep -o '^round [0-9]*' "$out" | tr '\n' ' ') == "$(seq -f 'round %g' -s ' ' 0 $((rounds - 1))) " ]] ||
    fail "the rounds printed are not 0..$((rounds - 1)) once each"
  grep -q "^done: .* after $rounds rounds" "$out" || fail "no 'done' line"
  ;;
*)
  fail "unknown check '$2'"
  ;;
esac
echo "slurm_checks $2: passed"
