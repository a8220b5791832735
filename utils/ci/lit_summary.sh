#!/usr/bin/env bash
# One line from lit's closing counts: "20 passed, 1 unsupported of 21 tests".
log=$1
total=$(sed -n 's/^Total Discovered Tests: *\([0-9]*\).*/\1/p' "$log")
parts=$(sed -n 's/^  \([A-Za-z ]*[A-Za-z]\) *: *\([0-9]*\) .*/\2 \1/p' "$log" |
        tr 'A-Z' 'a-z' | paste -sd, - | sed 's/,/, /g')
echo "${parts:-no results}, of ${total:-0} tests"
