#!/usr/bin/env bash
# The end-to-end demo on the bundled example corpus (examples/corpus: 2 files x 1000 rows of
# 32-d float vectors with text and JSON payloads, written by DuckDB).
set -euo pipefail
vf=${1:-build/vforge}
root=$(cd "$(dirname "$0")/.." && pwd)
corpus="$root/examples/corpus"
echo "== vforge inspect $corpus"
"$vf" inspect "$corpus"
echo "== vforge scan $corpus"
"$vf" scan "$corpus" --json
echo "== vforge cat $corpus --limit 2 --columns id,text,meta --with-id 'vf_point_id(filename, file_row_number)'"
"$vf" cat "$corpus" --limit 2 --columns id,text,meta --with-id 'vf_point_id(filename, file_row_number)'
