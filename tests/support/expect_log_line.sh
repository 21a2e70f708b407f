#!/usr/bin/env bash
# Runs a command that must succeed and print a line matching PATTERN (on stdout or stderr, e.g.
# a runtime log line at FIBER_LOG_LEVEL=debug); passes its output on as it comes.
#   tests/support/expect_log_line.sh PATTERN COMMAND...
set -uo pipefail
pattern=$1
shift
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [[ $status -ne 0 ]]; then
  echo "expect_log_line: $* failed (status $status)" >&2
  exit 1
fi
if ! grep -q -- "$pattern" "$log"; then
  echo "expect_log_line: no line '$pattern' in the output of: $*" >&2
  exit 1
fi
