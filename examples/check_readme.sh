#!/bin/sh
# Checks that the README's minimal program is examples/minimal.cpp, character for character: the
# first ```cpp block after the heading "## A minimal program".
# usage: check_readme.sh README.md examples/minimal.cpp
readme=$1 program=$2
block=$(awk '/^## A minimal program$/ { section = 1; next }
             section && !inside && /^```cpp$/ { inside = 1; next }
             inside && /^```$/ { exit }
             inside { print }' "$readme")
if [ -z "$block" ]; then
  echo "check_readme.sh: $readme has no \`\`\`cpp block under \"## A minimal program\""
  exit 1
fi
if ! printf '%s\n' "$block" | diff -u --label "$readme" --label "$program" - "$program"; then
  echo "check_readme.sh: the minimal program in $readme is not $program (diff above): make them the same text"
  exit 1
fi
