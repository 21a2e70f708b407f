#!/usr/bin/env bash
# Runs a fiber application inside a Slurm batch job so that a graceful stop works:
#
#   exec "$FIBER_ROOT/slurm/fiber-job.sh" "$FIBER_ROOT/build/libfiber/fiberrun" -n 1 APP ARGS...
#
# - SIGTERM and SIGINT sent to the batch shell (--signal=B:TERM@SECONDS before the time limit,
#   `scancel --batch --signal=TERM`, preemption with PreemptParameters=send_user_signal) are
#   passed to the command; fiberrun passes them to the master alone, which checkpoints, tears its
#   pool down and exits with 75 (fiber::rl::kExitPreempted).
# - On exit status 75 the job is requeued (scontrol requeue; needs --requeue or JobRequeue=1): the
#   next start runs the same script with --resume auto, in the same run folder (same job id).
# - Any other status ends the job with that status.
set -euo pipefail
[[ $# -ge 1 ]] || { echo "fiber-job.sh: usage: fiber-job.sh COMMAND [ARGUMENTS...]" >&2; exit 2; }
readonly preempted=75

echo "fiber-job: job ${SLURM_JOB_ID:-none} start $((${SLURM_RESTART_COUNT:-0} + 1)) on $(hostname)"
# A signal that comes before the command has started is passed on once it has.
child=
pending=
# shellcheck disable=SC2317 # run by the traps below
forward() {
  pending=$1
  if [[ -n $child ]]; then kill -"$1" "$child" 2>/dev/null || true; fi
}
trap 'forward TERM' TERM
trap 'forward INT' INT
"$@" &
child=$!
if [[ -n $pending ]]; then kill -"$pending" "$child" 2>/dev/null || true; fi
# A trapped signal ends `wait` early: wait again until the command has really ended.
while kill -0 "$child" 2>/dev/null; do wait "$child" || true; done
status=0
wait "$child" || status=$?

if [[ $status -eq $preempted && -n ${SLURM_JOB_ID:-} ]]; then
  echo "fiber-job: stopped gracefully (exit $preempted); requeueing job $SLURM_JOB_ID"
  # Slurm ends this script as it requeues the job.
  scontrol requeue "$SLURM_JOB_ID" ||
    echo "fiber-job: could not requeue job $SLURM_JOB_ID; resubmit it to continue" >&2
fi
exit "$status"
