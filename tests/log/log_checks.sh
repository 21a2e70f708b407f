#!/usr/bin/env bash
# FIBER_LOG_LEVEL: which of the runtime's messages reach stderr.
#   log_checks.sh BUILD_DIR levels    the log's levels, the default and a bad value (log_probe)
#   log_checks.sh BUILD_DIR runtime   a real run: debug lines from the master and its workers,
#                                     a bad value said once per run, stdout unchanged
set -uo pipefail
build=$1
check=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# expect_lines LEVEL_SETTING EXPECTED...: the probe's stderr, exactly the expected lines.
expect_lines() {
  local setting=$1
  shift
  local environment=(FIBER_LOG_LEVEL="$setting")
  [[ $setting == unset ]] && environment=(-u FIBER_LOG_LEVEL)
  env "${environment[@]}" "$build/tests/log_probe" 2>"$scratch/err" >"$scratch/out"
  local status=$?
  [[ $status -eq 0 ]] || fail "FIBER_LOG_LEVEL=$setting: log_probe exited with $status"
  printf '%s\n' "$@" >"$scratch/expected"
  diff "$scratch/expected" "$scratch/err" >&2 ||
    fail "FIBER_LOG_LEVEL=$setting: stderr is not the lines expected (diff above)"
  [[ -s $scratch/out ]] && fail "FIBER_LOG_LEVEL=$setting: the log wrote to stdout"
  echo "ok: FIBER_LOG_LEVEL=$setting"
}

case $check in
  levels)
    expect_lines unset "fiber: probe error 1" "fiber: probe warn 2"
    expect_lines warn "fiber: probe error 1" "fiber: probe warn 2"
    expect_lines error "fiber: probe error 1"
    expect_lines info "fiber: probe error 1" "fiber: probe warn 2" "fiber: probe info 3"
    expect_lines debug "fiber: probe error 1" "fiber: probe warn 2" "fiber: probe info 3" \
      "fiber: probe debug 4"
    expect_lines loud "fiber: FIBER_LOG_LEVEL='loud' is not a level (error, warn, info or debug); using warn" \
      "fiber: probe error 1" "fiber: probe warn 2"
    ;;
  runtime)
    program=$build/examples/example-minimal
    expected=$(dirname "$0")/../../examples/minimal.expected
    run() {  # run SETTING: the minimal example (4 workers) under fiberrun
      FIBER_LOG_LEVEL=$1 timeout 120 "$build/libfiber/fiberrun" "$program" \
        >"$scratch/out" 2>"$scratch/err"
      local status=$?
      [[ $status -eq 0 ]] || { cat "$scratch/err"; fail "FIBER_LOG_LEVEL=$1: exit $status"; }
      diff "$expected" "$scratch/out" >&2 || fail "FIBER_LOG_LEVEL=$1: stdout changed (diff above)"
    }
    run debug
    grep -q "^fiber: master process [0-9]* on .* started; [0-9]* slots for workers$" "$scratch/err" ||
      { cat "$scratch/err"; fail "no debug line from the master"; }
    workers=$(grep -c "^fiber: worker process [0-9]* on .* serves its master$" "$scratch/err")
    [[ $workers -eq 4 ]] || { cat "$scratch/err"; fail "$workers workers said so at debug, not 4"; }
    echo "ok: debug lines from the master and its 4 workers"
    run warn
    [[ -s $scratch/err ]] && { cat "$scratch/err"; fail "FIBER_LOG_LEVEL=warn: a clean run wrote to stderr"; }
    echo "ok: nothing on stderr at warn"
    run loud
    lines=$(wc -l <"$scratch/err")
    grep -q "^fiber: FIBER_LOG_LEVEL='loud' is not a level" "$scratch/err" && [[ $lines -eq 1 ]] ||
      { cat "$scratch/err"; fail "a bad value gave $lines lines, not its one line"; }
    echo "ok: a bad value is said once per run"
    ;;
  *) fail "unknown check '$check' (levels or runtime)" ;;
esac
