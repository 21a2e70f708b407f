#!/usr/bin/env bash
# Shared memory after a killed master, each a CTest test:
#   shm_cleanup.sh BUILD_DIR nodes|alone
# nodes: fiber-es on the simulated nodes nodeA..nodeC (run.sh's fake launcher), each node with a
#        /dev/shm of its own; its master SIGKILLed while the workers hold the noise table
#        (a NodeArray): within seconds nothing of the run is left in any node's /dev/shm.
# alone: a master started directly (./fiber-es, no fiberrun) on this machine: SIGTERM to the
#        table's watcher (scancel sends it to every process first), then SIGKILL to the master,
#        its workers and their task processes: nothing of the run left in /dev/shm.
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
configs="$here/../../apps/es/configs"
work=$(mktemp -d)
# The nodes' /dev/shm folders are on tmpfs too, as a real /dev/shm.
nodes=$(mktemp -d /dev/shm/fiber-test-nodes.XXXXXX)
trap 'rm -rf "$work" "$nodes"' EXIT
cd "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
es=("$build/apps/es/fiber-es" --config "$configs/cartpole.toml" --no-stop-at-target
    --population 2048 --generations 1000 --noise-size 10000000 --output "$work/run.h5")

fail() { echo "FAIL: $*" >&2; exit 1; }

# shellcheck source=../support/wait_for_line.sh
source "$here/../support/wait_for_line.sh"

# segments FOLDER...: the run's NodeArray segments there.
segments() { find "$@" -maxdepth 1 -name "fiber.$run.*" 2>/dev/null; }

# kill_and_check FOLDER...: SIGKILLs $victims; nothing of the run may stay in the FOLDERs.
kill_and_check() {
  local before
  before=$(segments "$@" | wc -l)
  [[ $before -ge $expected_copies ]] || { segments "$@"; fail "$before copies, not $expected_copies"; }
  # shellcheck disable=SC2086 # a list of pids
  kill -KILL $victims
  for _ in $(seq 200); do
    [[ -z $(segments "$@") ]] && return 0
    sleep 0.1
  done
  fail "left behind after SIGKILL: $(segments "$@" | tr '\n' ' ')"
}

case "$2" in
nodes)
  if [[ $(id -u) -eq 0 ]]; then
    export OMPI_MCA_plm_rsh_agent="$here/fakessh-root.sh"
  else
    export OMPI_MCA_plm_rsh_agent="$here/fakessh-user.sh"
  fi
  export OMPI_MCA_orte_default_hostfile="$here/hostfile" FAKE_NODE_SHM="$nodes"
  export OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_btl_tcp_if_include=lo
  "$build/libfiber/fiberrun" "${es[@]}" --workers 5 >out.txt 2>&1 &
  launcher=$!
  wait_for_line "^gen " out.txt 120
  master=$(pgrep -fo "^$build/apps/es/fiber-es --config")
  run="nodeA-$master"
  victims=$master
  expected_copies=3  # the master on nodeA, 5 workers on nodeA..nodeC (2 slots each)
  kill_and_check "$nodes"/node*
  status=0
  wait "$launcher" || status=$?
  [[ $status -eq 137 ]] || { cat out.txt; fail "fiberrun exited $status, not 137"; }
  ;;
alone)
  # Killed, workers and task processes too (as by a kill of the whole job), once they all
  # have the table.
  # In a /dev/shm of its own: another fiber run starting meanwhile would sweep this one's.
  mkdir "$nodes/alone"
  isolate=(unshare --mount --propagation private)
  [[ $(id -u) -eq 0 ]] || isolate=(unshare --user --map-current-user --keep-caps --mount)
  "${isolate[@]}" /bin/sh -c 'mount --bind "$0" /dev/shm && exec "$@"' "$nodes/alone" \
    "${es[@]}" --workers 2 >out.txt 2>&1 &
  master=$!
  run="$(hostname)-$master"
  expected_copies=1
  wait_for_line "^gen " out.txt 120
  victims=$(pgrep -f -- "--output $work/run.h5")
  # The table's watcher ignores the SIGTERM that scancel sends every process of a job first.
  watchers=$(pgrep -f "fiber-node-array-watcher .*/fiber\.$run\.")
  [[ -n $watchers ]] || fail "no watcher"
  # shellcheck disable=SC2086 # a list of pids
  kill -TERM $watchers
  kill_and_check "$nodes/alone"
  wait "$master" || true
  ;;
*)
  fail "unknown check '$2'"
  ;;
esac
echo "shm_cleanup $2: passed"
