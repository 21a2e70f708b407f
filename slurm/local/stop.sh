#!/usr/bin/env bash
# Stops the one-machine cluster of slurm/local/start.sh: cancels its jobs and waits for them to
# end (so no slurmstepd or job process stays behind), then stops slurmd, slurmctld and munged by
# their pid files. Idempotent: nothing running is not an error. Same FIBER_SLURM_DIR as start.sh.
set -euo pipefail
dir=${FIBER_SLURM_DIR:-/tmp/fiber-slurm}
export SLURM_CONF=$dir/slurm.conf

# pid_of PIDFILE NAME: the pid in PIDFILE if its process is alive and is NAME (not a reused pid).
pid_of() {
  local pid
  pid=$(cat "$1" 2>/dev/null) && [[ -n $pid && $(cat "/proc/$pid/comm" 2>/dev/null) == "$2" ]] &&
    echo "$pid"
}

# stop_pid PID GRACE: waits GRACE tenths of a second for PID to end by itself (after scontrol
# shutdown), then sends TERM, and KILL if it is still there 10 s later.
stop_pid() {
  local pid=$1 grace=$2
  [[ -n $pid ]] || return 0
  for signal in none TERM KILL; do
    if [[ $signal != none ]]; then kill -"$signal" "$pid" 2>/dev/null || return 0; fi
    for _ in $(seq "$grace"); do
      kill -0 "$pid" 2>/dev/null || return 0
      sleep 0.1
    done
    grace=100
  done
}

# Processes left by jobs that did not end: the slurmstepd of this cluster (its environment names
# our slurm.conf, inherited from slurmd) and every process below it.
leftover_steps() {
  local pid
  for pid in $(pgrep -x slurmstepd || true); do
    tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "SLURM_CONF=$SLURM_CONF" && echo "$pid"
  done
}
descendants() {
  local child
  for child in $(pgrep -P "$1" || true); do
    echo "$child"
    descendants "$child"
  done
}

# The pids first: the daemons remove their pid files while they shut down.
slurmctld_pid=$(pid_of "$dir/slurmctld.pid" slurmctld || true)
slurmd_pid=$(pid_of "$dir/slurmd.pid" slurmd || true)
munged_pid=$(pid_of "$dir/munge/munged.pid" munged || true)
if [[ -n $slurmctld_pid ]]; then
  jobs=$(squeue -h -o %i 2>/dev/null || true)
  if [[ -n $jobs ]]; then
    # shellcheck disable=SC2086 # one job id per word
    scancel $jobs || true
    deadline=$((SECONDS + 30))
    while [[ -n $(squeue -h -o %i 2>/dev/null) ]] && ((SECONDS < deadline)); do sleep 0.2; done
  fi
  scontrol shutdown >/dev/null 2>&1 || true
fi
stop_pid "$slurmd_pid" 30
stop_pid "$slurmctld_pid" 30
stop_pid "$munged_pid" 0
for step in $(leftover_steps); do
  echo "slurm/local/stop.sh: killing job processes left behind (slurmstepd $step)" >&2
  # shellcheck disable=SC2046 # pids, one a word
  kill -KILL "$step" $(descendants "$step") 2>/dev/null || true
done
echo "slurm/local: stopped (logs in $dir)"
