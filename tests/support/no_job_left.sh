# Sourced by the checks whose job might outlive its program (a spawn that never returned):
#   expect_no_job_left WHO PROGRAM
# Fails (status 1, after listing and killing them) if processes of the job that ran PROGRAM are
# left: the job's processes, mpirun and the workers, have the program and its gtest flags in
# their command line; the calling script has the program alone. WHO starts the message.
expect_no_job_left() {
  local who="$1" program="$2" left
  left=$(pgrep -f -- "$program --gtest" || true)
  [[ -z $left ]] && return 0
  ps -o pid,stat,args -p "${left//$'\n'/,}" >&2
  # shellcheck disable=SC2086 # a list of pids
  kill -KILL $left 2>/dev/null
  echo "$who: processes of the job left behind (listed above)" >&2
  exit 1
}
