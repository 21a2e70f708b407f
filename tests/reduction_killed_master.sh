#!/usr/bin/env bash
# A map_reduce's partial results after its run was SIGKILLed, each a CTest test:
#   reduction_killed_master.sh PROGRAM master|killed|swept
# PROGRAM is tests/reduction_killed_master.cpp, started directly (no fiberrun), which prints
# "partials stored" once some wait in /dev/shm.
# master: SIGKILL to the master alone: its workers see it gone and end, and the watcher removes
#         the run's partial results.
# killed: SIGKILL to the master, its workers and their task processes (a kill of the whole job):
#         their watcher removes the run's partial results within seconds.
# swept:  the watcher is SIGKILLed too, and the files stay; the next master's start removes them.
set -euo pipefail
program=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
run=""
master=""
victims=""
# Never leave the run's processes or files behind, whatever the outcome.
cleanup() {
  # shellcheck disable=SC2086 # a list of pids
  [[ -n $master$victims ]] && { kill -KILL $master $victims 2>/dev/null || true; }
  rm -rf "$work"
  [[ -n $run ]] && rm -f /dev/shm/fiber-partial."$run".*
  return 0
}
trap cleanup EXIT
cd "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

fail() { echo "FAIL: $*" >&2; exit 1; }

# shellcheck source=support/wait_for_line.sh
source "$here/support/wait_for_line.sh"

partials() { find /dev/shm -maxdepth 1 -name "fiber-partial.$run.*" 2>/dev/null; }

# gone_within SECONDS: true once none of the run's files is left.
gone_within() {
  for _ in $(seq $(($1 * 10))); do
    [[ -z $(partials) ]] && return 0
    sleep 0.1
  done
  return 1
}

"$program" >out.txt 2>&1 &
master=$!
run="$(hostname)-$master"
wait_for_line "^partials stored" out.txt 120
victims=$(pgrep -f -- "^$program\$")
# shellcheck disable=SC2086 # a list of pids
echo "the run $run: $(partials | wc -l) files; processes" $victims
watchers=$(pgrep -f "fiber-partial-watcher /dev/shm/fiber-partial\.$run\." || true)
case "$2" in
master)
  [[ -n $watchers ]] || fail "no watcher"
  kill -KILL "$master"
  gone_within 60 || fail "left behind after the master's SIGKILL: $(partials | tr '\n' ' ')"
  ;;
killed)
  [[ -n $watchers ]] || fail "no watcher"
  # shellcheck disable=SC2086 # a list of pids
  kill -KILL $victims
  gone_within 20 || fail "left behind after SIGKILL: $(partials | tr '\n' ' ')"
  ;;
swept)
  # shellcheck disable=SC2086 # lists of pids
  kill -KILL $victims $watchers
  wait "$master" || true
  sleep 1
  [[ -n $(partials) ]] || fail "nothing was left to sweep"
  "$program" --start-only >start.txt 2>&1 || { cat start.txt; fail "the next master failed"; }
  [[ -z $(partials) ]] || fail "left behind after the next start: $(partials | tr '\n' ' ')"
  ;;
*)
  fail "unknown check '$2'"
  ;;
esac
wait "$master" 2>/dev/null || true
echo "reduction_killed_master $2: passed"
