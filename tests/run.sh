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
total=$(grep -o '<testsuite [^>]*' "$junit" | grep -o ' tests="[0-9]*"' | grep -o '[0-9]*')
failed=$(grep -o '<testsuite [^>]*' "$junit" | grep -o ' failures="[0-9]*"' | grep -o '[0-9]*')
skipped=$(grep -o '<testsuite [^>]*' "$junit" | grep -o ' skipped="[0-9]*"' | grep -o '[0-9]*')
errors=$(grep -o '<testsuite [^>]*' "$junit" | grep -o ' errors="[0-9]*"' | grep -o '[0-9]*' || echo 0)
failed=$(( ${failed:-0} + ${errors:-0} ))
passed=$(( ${total:-0} - failed - ${skipped:-0} ))
if [ "${skipped:-0}" -gt 0 ]; then
  echo "skipped tests (a missing ../shared or node/npm oracle):"
  grep -o '<testcase name="[^"]*"[^>]*status="notrun"' "$junit" | sed 's/<testcase name="\([^"]*\)".*/  \1/' || true
fi
echo "$label: $passed passed, $failed failed, ${skipped:-0} skipped"
[ "$rc" -eq 0 ] && [ "$failed" -eq 0 ]
