# Sourced by the multinode checks that read the runtime's debug log (batched_spawn.sh,
# broadcast.sh, reduction.sh). Sets `here`, `nodes` (the hostfile's) and `log` (a file removed at
# exit), and defines:
#   run_case CHECK PROGRAM TEST    runs one gtest case of PROGRAM on the simulated nodes with the
#                                  runtime's debug log, its output in $log; if it fails, prints
#                                  the output and "CHECK: the test program failed" and exits 1.
here=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
nodes=$(grep -c . "$here/hostfile")
log=$(mktemp)
trap 'rm -f "$log"' EXIT

run_case() {
  local check=$1 program=$2 test=$3 status=0
  FIBER_OVERSUBSCRIBE=1 FIBER_LOG_LEVEL=debug "$here/run.sh" "$program" \
    --gtest_filter="$test" >"$log" 2>&1 || status=$?
  if [[ $status -ne 0 ]]; then
    cat "$log"
    echo "$check: the test program failed (status $status)" >&2
    exit 1
  fi
}
