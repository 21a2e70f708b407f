# Sourced by the end-to-end checks (tests/es, tests/ppo): runs a command that must fail cleanly.
#   expect_status STATUS PATTERN COMMAND...
# The command exits with STATUS and says one line on stderr that matches PATTERN, with no
# unreadable number in it (20 digits or more, as a range limit once printed). Needs fail().
expect_status() {
  local expected="$1" pattern="$2"
  shift 2
  local status=0
  "$@" >out.txt 2>err.txt || status=$?
  [[ $status -eq $expected ]] || { cat err.txt >&2; fail "exit $status, not $expected, for: $*"; }
  grep -q -- "$pattern" err.txt || { cat err.txt >&2; fail "no '$pattern' for: $*"; }
  [[ $(wc -l <err.txt) -eq 1 ]] || { cat err.txt >&2; fail "not one line: $*"; }
  ! grep -qE '[0-9]{20}' err.txt || { cat err.txt >&2; fail "an unreadable number for: $*"; }
}
