#!/usr/bin/env bash
# fiberrun's exit status and argument passing, each a CTest test:
#   fiberrun_checks.sh BUILD_DIR status|missing|interrupt|terminal|killed|options|installed
# status:    the program's exit status, also under recovery (mpirun alone says 0): /bin/false 1,
#            exit 7, a program killed by a signal 128+N, the lowest failing rank of several.
# missing:   a program that does not exist (127) or cannot be executed (126): one line, at once.
# interrupt: Ctrl-C (SIGINT to fiberrun's process group): a fiber-es master checkpoints and its
#            75 comes back; a program that does not handle SIGINT gives 130, as in a shell.
# terminal:  at a terminal, typed input reaches the program, and a typed Ctrl-C gives 130.
# killed:    a fiber master SIGKILLed while its workers run: 137 at once, the job ended.
# options:   every mpirun option before the program reaches mpirun as given (value-taking ones
#            too); what follows the program is the program's; `--` ends fiberrun's options; a
#            --hostfile means "not local", as a hostfile in the environment does.
# installed: `cmake --install`: the installed fiber-es and fiber-pi run, also under fiberrun.
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
fiberrun="$build/libfiber/fiberrun"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

fail() { echo "FAIL: $*" >&2; exit 1; }

# expect_status STATUS COMMAND...: runs COMMAND (output to out.txt), checks its exit status.
expect_status() {
  local expected=$1 status=0
  shift
  timeout 60 "$@" >out.txt 2>&1 || status=$?
  [[ $status -eq $expected ]] || { cat out.txt; fail "$* exited $status, not $expected"; }
}

# shellcheck source=../support/wait_for_line.sh
source "$here/../support/wait_for_line.sh"

case "$2" in
status)
  expect_status 0 "$fiberrun" -n 1 /bin/true
  expect_status 1 "$fiberrun" -n 1 /bin/false
  expect_status 7 "$fiberrun" -n 1 sh -c 'exit 7'
  expect_status 7 "$fiberrun" sh -c 'exit 7'
  expect_status 137 "$fiberrun" -n 1 sh -c 'kill -KILL $$'
  grep -q "^fiberrun: the program ended without an exit status: killed by SIGKILL (exit 137)$" \
    out.txt || { cat out.txt; fail "no line on the signal"; }
  expect_status 143 "$fiberrun" -n 1 sh -c 'kill -TERM $$'
  # Several ranks: the lowest rank that failed gives the status.
  expect_status 3 "$fiberrun" -n 3 sh -c 'exit $((OMPI_COMM_WORLD_RANK + 3))'
  expect_status 5 "$fiberrun" -n 3 sh -c '[ $OMPI_COMM_WORLD_RANK -eq 2 ] && exit 5; exit 0'
  # A fiber program's own status (fiber-pi's 2 for bad input) and a fiber program's success.
  expect_status 2 "$fiberrun" -n 1 "$build/apps/pi/fiber-pi" --tasks 0
  expect_status 0 "$fiberrun" "$build/apps/pi/fiber-pi" --workers 2 --tasks 4 --samples 1000
  ;;
missing)
  for program in /no/such/program no-such-program-on-path; do
    expect_status 127 "$fiberrun" -n 1 "$program" --flag
    [[ $(wc -l <out.txt) -eq 1 ]] || { cat out.txt; fail "$program: not one line"; }
    grep -q "^fiberrun: $program: No such file or directory$" out.txt ||
      { cat out.txt; fail "$program: no line naming it"; }
  done
  printf 'not a program\n' >data.txt
  chmod -x data.txt
  expect_status 126 "$fiberrun" ./data.txt
  [[ $(wc -l <out.txt) -eq 1 ]] || { cat out.txt; fail "not executable: not one line"; }
  grep -q "^fiberrun: ./data.txt: Permission denied$" out.txt || { cat out.txt; fail "no line"; }
  ;;
interrupt)
  # interrupt COMMAND...: starts COMMAND in a process group of its own, as a terminal's
  # foreground job, waits for "ready" in its output, sends SIGINT to the whole group (Ctrl-C),
  # and leaves its exit status in $status.
  interrupt() {
    setsid "$@" >out.txt 2>&1 &
    local group=$!
    wait_for_line "$ready" out.txt 60
    kill -INT -- "-$group"
    status=0
    wait "$group" || status=$?
  }
  ready="^gen "
  interrupt "$fiberrun" -n 1 "$build/apps/es/fiber-es" \
    --config "$here/../../apps/es/configs/cartpole.toml" --no-stop-at-target --workers 2 \
    --population 2048 --generations 100 --output run.h5
  [[ $status -eq 75 ]] || { cat out.txt; fail "fiber-es interrupted: exit $status, not 75"; }
  grep -q "^fiber-es: stopped by SIGINT after [0-9]* generations; checkpoint run.ckpt.h5" out.txt ||
    { cat out.txt; fail "fiber-es did not checkpoint"; }
  ! grep -q "crashed\|without an exit status" out.txt || { cat out.txt; fail "said it crashed"; }
  ready="^ready$"
  interrupt "$fiberrun" -n 1 sh -c 'echo ready; exec sleep 60'
  [[ $status -eq 130 ]] || { cat out.txt; fail "sleep interrupted: exit $status, not 130"; }
  ;;
terminal)
  # Run at a terminal (a pty from script(1)): what is typed reaches the program, although
  # mpirun runs in a process group of its own.
  status=0
  (sleep 1; printf 'typed\n'; sleep 1) |
    timeout 30 script -qec "$fiberrun sh -c 'read -r line; echo got \$line; exit 4'" /dev/null \
      >out.txt 2>&1 || status=$?
  [[ $status -eq 4 ]] || { cat out.txt; fail "at a terminal: exit $status, not 4"; }
  grep -q "^got typed" out.txt || { cat out.txt; fail "the typed line did not reach the program"; }
  # Ctrl-C typed at the terminal: the program's status, 130 for one that does not handle SIGINT.
  status=0
  (sleep 1.5; printf '\003'; sleep 2) |
    timeout 30 script -qec "$fiberrun sh -c 'echo ready; exec sleep 60'" /dev/null >out.txt 2>&1 ||
    status=$?
  [[ $status -eq 130 ]] || { cat out.txt; fail "Ctrl-C at a terminal: exit $status, not 130"; }
  ;;
killed)
  "$fiberrun" -n 1 "$build/apps/pi/fiber-pi" --workers 2 --tasks 100000 --samples 1000000 \
    >out.txt 2>&1 &
  launcher=$!
  wait_for_line "^fiber-pi: 2 workers" out.txt 60
  for _ in $(seq 600); do  # the master and its 2 workers
    [[ $(pgrep -fc "^$build/apps/pi/fiber-pi --workers 2") -ge 3 ]] && break
    sleep 0.1
  done
  master=$(pgrep -fo "^$build/apps/pi/fiber-pi --workers 2")
  [[ -n $master ]] || fail "no master process"
  kill -KILL "$master"
  for _ in $(seq 100); do
    kill -0 "$launcher" 2>/dev/null || break
    sleep 0.1
  done
  ! kill -0 "$launcher" 2>/dev/null || { kill -KILL "$launcher"; fail "job still runs 10 s on"; }
  status=0
  wait "$launcher" || status=$?
  [[ $status -eq 137 ]] || { cat out.txt; fail "master SIGKILLed: exit $status, not 137"; }
  ;;
options)
  # Value-taking options and flags, in mpirun's spelling, before the program.
  printf 'localhost slots=4\n' >hosts
  expect_status 0 "$fiberrun" --wdir /tmp -x FIBER_CHECK=passed --map-by slot --bind-to none \
    --mca btl_base_verbose 0 --hostfile hosts --report-bindings -np 2 \
    sh -c 'echo "$(pwd) $FIBER_CHECK $OMPI_COMM_WORLD_SIZE ${OMPI_MCA_btl_tcp_if_include:-site}"'
  # (A hostfile means the job may span machines: TCP is not kept on loopback.)
  [[ $(grep -c "^/tmp passed 2 site$" out.txt) -eq 2 ]] || { cat out.txt; fail "options lost"; }
  # What follows the program is the program's, even in mpirun's spelling; one process by default.
  expect_status 0 "$fiberrun" sh -c 'echo "args: $* size $OMPI_COMM_WORLD_SIZE"' sh -n 5 --wdir x
  grep -qx "args: -n 5 --wdir x size 1" out.txt || { cat out.txt; fail "program's arguments"; }
  # `--` ends the options explicitly; a program named like an option then still runs.
  expect_status 0 "$fiberrun" --wdir /tmp -- pwd
  grep -qx "/tmp" out.txt || { cat out.txt; fail "-- separator"; }
  # A bad option is mpirun's to report, with a non-zero status.
  expect_status 1 "$fiberrun" --no-such-mpirun-option /bin/true
  grep -q "unknown option \"--no-such-mpirun-option\"" out.txt || { cat out.txt; fail "bad option"; }
  ;;
installed)
  prefix="$work/prefix"
  cmake --install "$build" --prefix "$prefix" >/dev/null
  readelf -d "$prefix/bin/fiber-es" | grep -q 'R.*PATH.*\[\$ORIGIN/\.\./lib\]' ||
    fail "fiber-es has no \$ORIGIN/../lib RPATH: $(readelf -d "$prefix/bin/fiber-es" | grep PATH)"
  expect_status 0 "$prefix/bin/fiber-es" --help
  expect_status 0 "$prefix/bin/fiber-ppo" --help
  expect_status 0 "$prefix/bin/fiberrun" "$prefix/bin/fiber-es" --help
  expect_status 0 "$prefix/bin/fiberrun" "$prefix/bin/fiber-pi" --workers 2 --tasks 4 \
    --samples 1000
  grep -q "^pi = 3\." out.txt || { cat out.txt; fail "installed fiber-pi"; }
  ;;
*)
  fail "unknown check '$2'"
  ;;
esac
echo "fiberrun $2: passed"
