#!/usr/bin/env bash
# DuckDB reads the segments of a local-store collection (written, re-upserted and compacted by
# store_test_local's export_for_duckdb) and finds exactly the expected points: ids once each,
# dense / multivector / sparse vectors and payloads equal.  Skips (77) without node or the
# oracle node_modules, or when the unit-test binary is not next to $VFORGE.
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
oracle="$src/tests/oracle"
[ -d "$oracle/node_modules/@duckdb/node-api" ] || { echo "no $oracle/node_modules/@duckdb/node-api"; exit 77; }
command -v node >/dev/null || { echo "node not installed"; exit 77; }
bin=${STORE_TEST_LOCAL:-}
if [ -z "$bin" ] && [ -n "${VFORGE:-}" ]; then bin="$(dirname "$VFORGE")/tests/store_test_local"; fi
[ -n "$bin" ] && [ -x "$bin" ] || { echo "store_test_local binary not found (set STORE_TEST_LOCAL)"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/duckdb-store.XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
VF_STORE_EXPORT="$tmp" "$bin" export_for_duckdb || { echo "export failed"; exit 1; }
[ -s "$tmp/expected.jsonl" ] || { echo "no expected.jsonl written"; exit 1; }
node "$src/tests/store/duckdb_check.mjs" "$oracle" "$tmp/ex" "$tmp/expected.jsonl"
