#!/bin/sh
# Runs an example under fiberrun: it must exit 0 and print exactly its .expected file.
# usage: run_example.sh FIBERRUN EXAMPLE EXPECTED
fiberrun=$1 example=$2 expected=$3
name=$(basename "$example")
output=$("$fiberrun" -n 1 "$example") || {
  echo "run_example.sh: $name exited with status $?"
  exit 1
}
if ! printf '%s\n' "$output" | diff -u --label "$expected" --label "$name" "$expected" -; then
  echo "run_example.sh: $name printed other than $expected (diff above)"
  exit 1
fi
