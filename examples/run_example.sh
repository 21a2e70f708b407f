#!/bin/sh
# Runs an example under fiberrun: it must exit 0 and print exactly its .expected file.
# usage: run_example.sh FIBERRUN EXAMPLE EXPECTED [SCRIPT]
# (a Python example: EXAMPLE is the interpreter, SCRIPT the example's file)
fiberrun=$1 example=$2 expected=$3 script=${4:-}
name=$(basename "${script:-$example}")
output=$("$fiberrun" -n 1 "$example" ${script:+"$script"}) || {
  echo "run_example.sh: $name exited with status $?"
  exit 1
}
if ! printf '%s\n' "$output" | diff -u --label "$expected" --label "$name" "$expected" -; then
  echo "run_example.sh: $name printed other than $expected (diff above)"
  exit 1
fi
