#!/usr/bin/env bash
# Fuzz smoke run: each harness for a few seconds, seeded with tests/fuzz/corpus/<name>/ and, when
# ../shared is present, the parquet conformance files.  Fails on any crash, leak or sanitizer report.
set -euo pipefail
build=$(cd "${1:?usage: tests/fuzz/run.sh BUILD_DIR SECONDS}" && pwd)  # absolute: harnesses run in a temp dir
secs=${2:-15}
here=$(cd "$(dirname "$0")" && pwd)
shared=${VF_SHARED:-$here/../../../shared}
passed=0 failed=0
for bin in "$build"/tests/fuzz/fuzz_*; do
  [ -x "$bin" ] || continue
  name=$(basename "$bin")
  work=$(mktemp -d)
  mkdir -p "$work/corpus"
  if [ -d "$here/corpus/$name" ]; then cp "$here/corpus/$name"/* "$work/corpus/" 2>/dev/null || true; fi
  if [ "$name" = fuzz_file ] || [ "$name" = fuzz_footer ] && [ -d "$shared/data/parquet-testing" ]; then
    find "$shared/data/parquet-testing" -name '*.parquet' -size -200k -exec cp {} "$work/corpus/" \; 2>/dev/null || true
  fi
  echo "fuzz: $name for ${secs}s ($(ls "$work/corpus" | wc -l) seeds)"
  if (cd "$work" && "$bin" -max_total_time="$secs" -rss_limit_mb=2048 -max_len=262144 -print_final_stats=0 \
        -artifact_prefix="$work/" corpus >"$work/log" 2>&1); then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "fuzz: $name FAILED; log tail:"; tail -40 "$work/log"
    mkdir -p "$build/fuzz-artifacts"; cp "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$build/fuzz-artifacts/" 2>/dev/null || true
  fi
  rm -rf "$work"
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
