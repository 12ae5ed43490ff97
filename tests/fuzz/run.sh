#!/usr/bin/env bash
# Runs every libFuzzer harness in BUILD_DIR/tests/fuzz for SECONDS each (`make fuzz-smoke`: 10,
# `make fuzz`: 60), seeded with tests/fuzz/corpus/<name>/, the crash regressions in
# tests/fuzz/regressions/<name>/ and, when ../shared is present, the parquet conformance files
# (fuzz_file, fuzz_footer).  Every regression input is first replayed on its own (libFuzzer runs
# the files given as arguments once), so a crash found once stays a test forever.  Fails on any
# crash, leak, timeout or sanitizer report; a new crash is copied to BUILD_DIR/fuzz-artifacts/
# with the command that adds it to tests/fuzz/regressions/<name>/.
# FUZZ_REPORT=FILE: one line per harness with executions, CPU seconds, corpus size and coverage.
# FUZZ_ONLY=REGEX: only the harnesses whose name matches.
set -euo pipefail
build=$(cd "${1:?usage: tests/fuzz/run.sh BUILD_DIR SECONDS}" && pwd)  # absolute: harnesses run in a temp dir
secs=${2:-10}
here=$(cd "$(dirname "$0")" && pwd)
shared=${VF_SHARED:-$here/../../../shared}
report=${FUZZ_REPORT:-}
[ -z "$report" ] || : > "$report"
passed=0 failed=0 total_execs=0 total_cpu=0
for bin in "$build"/tests/fuzz/fuzz_*; do
  [ -x "$bin" ] || continue
  name=$(basename "$bin")
  if [ -n "${FUZZ_ONLY:-}" ] && ! [[ $name =~ $FUZZ_ONLY ]]; then continue; fi
  work=$(mktemp -d)
  mkdir -p "$work/corpus"
  if [ -d "$here/corpus/$name" ]; then cp "$here/corpus/$name"/* "$work/corpus/" 2>/dev/null || true; fi
  nreg=0
  if [ -d "$here/regressions/$name" ]; then
    nreg=$(find "$here/regressions/$name" -type f | wc -l)
    cp "$here/regressions/$name"/* "$work/corpus/" 2>/dev/null || true
  fi
  if { [ "$name" = fuzz_file ] || [ "$name" = fuzz_footer ]; } && [ -d "$shared/data/parquet-testing" ]; then
    find "$shared/data/parquet-testing" -name '*.parquet' -size -200k -exec cp {} "$work/corpus/" \; 2>/dev/null || true
  fi
  ok=1
  # 1. the regressions, each replayed once
  if [ "$nreg" -gt 0 ]; then
    if ! (cd "$work" && "$bin" -rss_limit_mb=2048 "$here/regressions/$name"/* > "$work/replay.log" 2>&1); then
      ok=0
      echo "fuzz: $name: a regression input crashes again; log tail:"; tail -40 "$work/replay.log"
    fi
  fi
  # 2. fuzzing, CPU time measured
  echo "fuzz: $name for ${secs}s ($(ls "$work/corpus" | wc -l) seeds, $nreg regressions)"
  rc=0
  if [ $ok -eq 1 ]; then
    TIMEFORMAT='%U %S'
    { time (cd "$work" && "$bin" -max_total_time="$secs" -rss_limit_mb=2048 -max_len=262144 \
        -print_final_stats=1 -artifact_prefix="$work/" corpus > "$work/log" 2>&1) ; } 2> "$work/cpu" || rc=$?
    if [ $rc -ne 0 ]; then
      ok=0
      echo "fuzz: $name FAILED; log tail:"; tail -40 "$work/log"
    fi
  fi
  if [ $ok -eq 1 ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    mkdir -p "$build/fuzz-artifacts"
    for a in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
      [ -e "$a" ] || continue
      cp "$a" "$build/fuzz-artifacts/"
      echo "fuzz: keep it as a regression: mkdir -p tests/fuzz/regressions/$name && cp $build/fuzz-artifacts/$(basename "$a") tests/fuzz/regressions/$name/"
    done
  fi
  if [ -f "$work/log" ]; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1 || true)
    # CPU seconds (user + system) of the harness process, from bash's `time`
    wall=$(awk '{printf "%.1f", $1 + $2}' "$work/cpu" 2>/dev/null || echo 0)
    cov=$( (grep -o 'cov: [0-9]*' "$work/log" || true) | tail -1 | awk '{print $2}')
    ncorp=$(ls "$work/corpus" | wc -l)
    total_execs=$((total_execs + ${execs:-0}))
    total_cpu=$(awk -v a="$total_cpu" -v b="$wall" 'BEGIN {printf "%.1f", a + b}')
    [ -z "$report" ] || echo "$name execs=${execs:-0} cpu_s=$wall cov=${cov:-0} corpus=$ncorp regressions=$nreg" >> "$report"
  fi
  rm -rf "$work"
done
[ -z "$report" ] || echo "total execs=$total_execs cpu_s=$total_cpu harnesses=$((passed + failed)) failed=$failed" >> "$report"
echo "fuzz: $passed passed, $failed failed ($total_execs executions in ${total_cpu} s)"
[ "$failed" -eq 0 ]
