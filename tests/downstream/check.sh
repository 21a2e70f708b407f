#!/usr/bin/env bash
# Installs fiber from BUILD_DIR into a temporary prefix, builds tests/downstream against the
# installed package with find_package(fiber), and runs it under the installed fiberrun.
#   tests/downstream/check.sh BUILD_DIR
set -euo pipefail
build_dir=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
cmake -S "$here" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/build" >/dev/null
"$work/prefix/bin/fiberrun" -n 1 "$work/build/downstream"
