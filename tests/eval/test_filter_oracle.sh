#!/usr/bin/env bash
# Exact filtered ground truth against DuckDB: `vforge brute-force --filter` on a DuckDB-written
# corpus (keyword, integer, float, list, JSON-object and null payloads) equals, for every metric
# and for filters matching 50 % of the rows down to 0.1 % and none, an independent DuckDB query
# (WHERE on the payload, ORDER BY the distance, LIMIT k) — tests/eval/filter_oracle.py.
# Skips (77) without the pinned Python (duckdb) in $VF_PY.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
V=${VFORGE:-$here/build/vforge}
PY=${VF_PY:-$here/.venv/bin/python}
[ -x "$V" ] || { echo "skip: no vforge binary at $V"; exit 77; }
[ -x "$PY" ] && "$PY" -c "import duckdb" 2>/dev/null || { echo "skip: no duckdb in $PY"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/filter-oracle.XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PY" "$here/tests/eval/filter_oracle.py" "$V" "$tmp"
