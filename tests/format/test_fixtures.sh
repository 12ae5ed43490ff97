#!/usr/bin/env bash
# test_fixtures.sh — the parquet reader against independent readers, on files written by independent
# writers.
#
# tests/oracle/gen_fixtures.mjs writes ~37 small files (a few seconds) with DuckDB (every codec,
# parquet v1/v2 encodings, nulls at every level of every type, maps/structs/nested lists, sparse and
# multivector shapes, integer extremes, several row groups), arrow-rs via parquet-wasm (FixedSizeList,
# page index, dictionary fallback to PLAIN mid-chunk, many small pages, data page v2,
# BYTE_STREAM_SPLIT/DELTA_*, Hadoop LZ4) and hyparquet-writer (data page v2 with SNAPPY/GZIP/BROTLI).
# tests/oracle/oracle_check.mjs then holds `vforge cat` of each file against DuckDB
# (dump_duckdb.mjs) — or arrow-rs (dump_arrow.mjs) where DuckDB cannot read the file — compared by
# compare_jsonl.mjs (float32 as float32, doubles and int64 exactly, decimals exactly), and checks
# --columns (both orders), --offset/--limit across a row-group boundary and past the end.  Last,
# `--with-id` point ids against DuckDB's md5.  A crash (signal, exit >= 128, sanitizer report) fails.
# Environment (set by ctest): VFORGE, VF_SRC, VF_TMP.  Exit 77 when node or the oracle modules are
# missing.
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
oracle=$src/tests/oracle
tmp=${VF_TMP:-/tmp/vforge-test}/fixtures_check
fixtures=${VF_TMP:-/tmp/vforge-test}/fixtures
vforge=${VFORGE:-$src/build/vforge}

if ! command -v node >/dev/null 2>&1; then echo "SKIP: node is not installed (needed for the DuckDB/arrow oracles)"; exit 77; fi
if [ ! -d "$oracle/node_modules/@duckdb/node-api" ] || [ ! -d "$oracle/node_modules/parquet-wasm" ]; then
  echo "SKIP: $oracle/node_modules is missing (run scripts/install-deps.sh or: cd tests/oracle && npm ci)"; exit 77
fi
if [ ! -x "$vforge" ]; then echo "FAIL: vforge binary not found at $vforge (set VFORGE)"; exit 1; fi
mkdir -p "$tmp" "$fixtures"

# (Re)generate the fixtures when missing or older than the generator.
stamp=$fixtures/.generated
if [ ! -f "$stamp" ] || [ "$oracle/gen_fixtures.mjs" -nt "$stamp" ]; then
  rm -f "$fixtures"/*.parquet
  if ! node "$oracle/gen_fixtures.mjs" "$fixtures" > "$tmp/gen.out" 2> "$tmp/gen.err"; then
    echo "FAIL: gen_fixtures.mjs failed:"; cat "$tmp/gen.err"; exit 1
  fi
  touch "$stamp"
fi

crashed() { # rc stderr-file: 0 when the run crashed (signal or sanitizer report)
  [ "$1" -ge 128 ] || grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:|UndefinedBehaviorSanitizer' "$2"
}

shopt -s nullglob
files=("$fixtures"/*.parquet)
if [ "${#files[@]}" -eq 0 ]; then echo "FAIL: no fixtures in $fixtures"; exit 1; fi
# Plan for tests/oracle/oracle_check.mjs: every fixture must read, equal to DuckDB (or arrow-rs where
# DuckDB cannot read it: Hadoop LZ4), plus the column/offset/limit slices across the first
# row-group boundary (DuckDB: 2048 rows, arrow-rs: 1000, hyparquet-writer: 700), and arrow-rs held
# against DuckDB wherever both read a file (the oracles must agree for a mismatch to be vforge's).
plan=$tmp/plan.tsv
: > "$plan"
for f in "${files[@]}"; do
  case $(basename "$f") in duck_*) off=2045 ;; pw_*) off=997 ;; *) off=697 ;; esac
  printf '%s\tread\tauto\tslices=%s;cross\t\n' "$f" "$off" >> "$plan"
done
fail=0
node "$oracle/oracle_check.mjs" "$plan" --vforge "$vforge" --tmp "$tmp/out" || fail=1

# Point ids: vf_point_id(filename, file_row_number) = md5("<abs path>:<physical row>") (DESIGN.md
# "Point ids"), checked against DuckDB's md5 on a slice that starts inside the second row group.
idf=$fixtures/duck_v1_snappy.parquet
if [ -f "$idf" ]; then
  node "$oracle/dump_duckdb.mjs" "$idf" --columns id --offset 2040 --limit 20 --with-id-key "$idf" > "$tmp/id.expected.jsonl" 2> "$tmp/id.err"
  "$vforge" cat "$idf" --columns id --offset 2040 --limit 20 --with-id 'vf_point_id(filename, file_row_number)' > "$tmp/id.vforge.jsonl" 2> "$tmp/id.vforge.err"
  rc=$?
  if [ $rc -eq 0 ] && ! crashed $rc "$tmp/id.vforge.err" &&
     node "$oracle/compare_jsonl.mjs" "$tmp/id.vforge.jsonl" "$tmp/id.expected.jsonl" --names vforge,duckdb > "$tmp/id.cmp" 2>&1; then
    echo "ok   point ids (--with-id) = DuckDB md5"
  else
    echo "FAIL point ids (--with-id) vs DuckDB md5: exit $rc $(head -c 400 "$tmp/id.vforge.err")"
    sed 's/^/    /' "$tmp/id.cmp" 2>/dev/null
    fail=1
  fi
fi

exit $fail
