# Sourced by the benchmarks' checks (tests/benchmarks): a failure, a line looked for in a file, a
# bad flag's one line.
#   fail MESSAGE...           says FAIL: MESSAGE on stderr and exits 1
#   expect_line FILE PATTERN  FILE has a line matching the extended regex PATTERN, else prints
#                             FILE and fails
#   expect_usage_error PATTERN COMMAND...
#                             COMMAND exits with 2 (argparse's bad flag) and its last line on
#                             stderr matches PATTERN, the line that says what is wrong
fail() { echo "FAIL: $*" >&2; exit 1; }
expect_line() { grep -Eq "$2" "$1" || { cat "$1" >&2; fail "no line '$2' in $(basename "$1")"; }; }
expect_usage_error() {
  local pattern="$1" status=0 errors
  shift
  errors=$("$@" 2>&1 >/dev/null) || status=$?
  [[ $status -eq 2 ]] || { echo "$errors" >&2; fail "a bad flag exited with $status, not 2"; }
  tail -1 <<<"$errors" | grep -Eq "$pattern" ||
    { echo "$errors" >&2; fail "no line that says what is wrong"; }
}
