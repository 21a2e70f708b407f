# Sourced by the benchmarks' checks (tests/benchmarks): a failure and a line looked for in a file.
#   fail MESSAGE...           says FAIL: MESSAGE on stderr and exits 1
#   expect_line FILE PATTERN  FILE has a line matching the extended regex PATTERN, else prints
#                             FILE and fails
fail() { echo "FAIL: $*" >&2; exit 1; }
expect_line() { grep -Eq "$2" "$1" || { cat "$1" >&2; fail "no line '$2' in $(basename "$1")"; }; }
