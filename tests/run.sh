#!/usr/bin/env bash
# Runs the ctest suite of a build directory and prints the closing
# "tests: N passed, N failed, N skipped" line (skips = tests that found ../shared or node absent).
set -uo pipefail
build=${1:?usage: tests/run.sh BUILD_DIR [LABEL]}
label=${2:-tests}
junit="$build/ctest-junit.xml"
rm -f "$junit"
ctest --test-dir "$build" -j"${CTEST_JOBS:-2}" --output-on-failure --timeout 900 --output-junit "$(cd "$build" && pwd)/ctest-junit.xml"
rc=$?
if [ ! -f "$junit" ]; then
  echo "$label: 0 passed, 1 failed, 0 skipped"
  exit 1
fi
python3 "$(dirname "$0")/summarize.py" "$label" "$junit"
prc=$?
[ "$rc" -eq 0 ] && [ "$prc" -eq 0 ]
