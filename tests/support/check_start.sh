# Sourced first by a benchmark's check (tests/benchmarks), with the check's BUILD_DIR argument:
#   source "$(dirname "$0")/../support/check_start.sh" "$1"
# Stops at the first error; sets $build (BUILD_DIR, absolute), $root (the repository) and $work
# (a directory removed at exit); and defines fail and expect_line (expect_line.sh).
set -euo pipefail
build=$(cd "$1" && pwd)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=expect_line.sh
source "$(dirname "${BASH_SOURCE[0]}")/expect_line.sh"
