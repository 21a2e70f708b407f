#!/usr/bin/env bash
# Stops the one-machine cluster of slurm/local/start.sh: cancels its jobs and waits for them to
# end (so no slurmstepd or job process stays behind), then stops slurmd, slurmctld and munged by
# their pid files. Idempotent: nothing running is not an error. Same FIBER_SLURM_DIR as start.sh.
set -euo pipefail
dir=${FIBER_SLURM_DIR:-/tmp/fiber-slurm}
export SLURM_CONF=$dir/slurm.conf

running() {  # running PIDFILE NAME: its process is alive and is NAME (not a reused pid)
  local pid
  pid=$(cat "$1" 2>/dev/null) && [[ -n $pid && $(cat "/proc/$pid/comm" 2>/dev/null) == "$2" ]]
}

# Ends the process of pid file $1, named $2: waits $3 tenths of a second for it to go by itself
# (after scontrol shutdown), then sends TERM, and KILL if it is still there 10 s later.
stop_process() {
  local pidfile=$1 name=$2 grace=$3 pid
  running "$pidfile" "$name" || return 0
  pid=$(cat "$pidfile")
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

if running "$dir/slurmctld.pid" slurmctld; then
  jobs=$(squeue -h -o %i 2>/dev/null || true)
  if [[ -n $jobs ]]; then
    # shellcheck disable=SC2086 # one job id per word
    scancel $jobs || true
    for _ in $(seq 300); do
      [[ -z $(squeue -h -o %i 2>/dev/null) ]] && break
      sleep 0.1
    done
  fi
  scontrol shutdown >/dev/null 2>&1 || true
fi
stop_process "$dir/slurmd.pid" slurmd 30
stop_process "$dir/slurmctld.pid" slurmctld 30
stop_process "$dir/munge/munged.pid" munged 0
for step in $(leftover_steps); do
  echo "slurm/local/stop.sh: killing job processes left behind (slurmstepd $step)" >&2
  # shellcheck disable=SC2046 # pids, one a word
  kill -KILL "$step" $(descendants "$step") 2>/dev/null || true
done
echo "slurm/local: stopped (logs in $dir)"
