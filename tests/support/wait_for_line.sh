# Sourced by end-to-end checks: waits until a program's output shows it got somewhere.
#   wait_for_line PATTERN FILE SECONDS
# Returns once FILE has a line matching PATTERN; after SECONDS, prints FILE and fails. Needs fail().
wait_for_line() {
  local polls=$(($3 * 10))
  for _ in $(seq "$polls"); do
    grep -q "$1" "$2" 2>/dev/null && return 0
    sleep 0.1
  done
  cat "$2"
  fail "no '$1' in $2 within $3 s"
}
