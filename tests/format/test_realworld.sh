#!/usr/bin/env bash
# test_realworld.sh — parquet the reader once refused or misread (issue 14, "Real-world parquet the
# reader refuses or misreads"), against independent readers.
#
# tests/format/gen_realworld.py writes the files (fastparquet and pandas engine="fastparquet";
# segmentio/parquet-go shapes and wrong num_values crafted byte by byte by craft_parquet.py; TIME
# and binary columns by pyarrow; VARIANT columns by DuckDB — unshredded, shredded, partially
# shredded — and crafted ones nested in a struct and a list, and undecodable ones), then:
#   1. tests/oracle/oracle_check.mjs holds `vforge cat` of each against DuckDB (VARIANT cast to JSON,
#      binary as base64) or arrow-rs where DuckDB cannot read it, with slices; files that must be
#      refused exit 2 naming the file;
#   2. the refusals say why (TIME outside a day, the variant defect);
#   3. --binary-as-string prints unannotated text as DuckDB's binary_as_string=true reads it;
#   4. --no-verify-crc reads the parquet-testing files with wrong CRCs to DuckDB's rows (DuckDB does
#      not check CRCs), while the default still refuses them;
#   5. payloads: `vforge load` stores binary as base64 and VARIANT as its JSON (DuckDB's), and
#      datasource.binary_as_string: true stores the text (and reaches load-dist shard configs).
# Environment (set by ctest): VFORGE, VF_PY, VF_SHARED, VF_SRC, VF_TMP.  Exit 77 when the Python
# tools (VF_PY with duckdb, pyarrow, fastparquet), node or the oracle modules are missing.
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
oracle=$src/tests/oracle
shared=${VF_SHARED:-$src/../shared}
tmp=${VF_TMP:-/tmp/vforge-test}/realworld
vforge=${VFORGE:-$src/build/vforge}
py=${VF_PY:-$src/.venv/bin/python}

if [ ! -x "$py" ] || ! "$py" -c 'import duckdb, pyarrow, fastparquet, pandas' 2>/dev/null; then
  echo "SKIP: $py with duckdb, pyarrow, fastparquet and pandas is missing (scripts/install-deps.sh)"; exit 77
fi
if ! command -v node >/dev/null 2>&1; then echo "SKIP: node is not installed (needed for the DuckDB/arrow oracles)"; exit 77; fi
if [ ! -d "$oracle/node_modules/@duckdb/node-api" ] || [ ! -d "$oracle/node_modules/parquet-wasm" ]; then
  echo "SKIP: $oracle/node_modules is missing (run scripts/install-deps.sh or: cd tests/oracle && npm ci)"; exit 77
fi
if [ ! -x "$vforge" ]; then echo "FAIL: vforge binary not found at $vforge (set VFORGE)"; exit 1; fi
rw=$tmp/files
mkdir -p "$tmp" "$rw"
stamp=$rw/.generated
if [ ! -f "$stamp" ] || [ "$src/tests/format/gen_realworld.py" -nt "$stamp" ] || [ "$src/tests/format/craft_parquet.py" -nt "$stamp" ]; then
  rm -f "$rw"/*.parquet
  if ! "$py" -W ignore "$src/tests/format/gen_realworld.py" "$rw" > "$tmp/gen.out" 2>&1; then
    echo "FAIL: gen_realworld.py failed:"; cat "$tmp/gen.out"; exit 1
  fi
  touch "$stamp"
fi
fail=0

# ------------------------------------------------------------------ 1. every file against an oracle
plan=$tmp/plan.tsv
cat > "$plan" <<EOF
$rw/fp_pandas.parquet	read	auto	slices;cross	pandas engine="fastparquet": empty key_value_metadata written as 0x00
$rw/fp_rowgroups_snappy.parquet	read	auto	slices=4;cross	fastparquet.write, 3 row groups, snappy
$rw/fp_gzip_stats.parquet	read	auto	slices;cross	fastparquet.write, gzip, statistics
$rw/pg_typed_root.parquet	read	auto	cross	schema root with physical type BOOLEAN (segmentio/parquet-go)
$rw/pg_typed_root_int64.parquet	read	auto	cross	schema root with physical type INT64
$rw/pg_empty_struct.parquet	read	arrow	-	empty struct groups: arrow-rs leaves them out; DuckDB and pyarrow refuse the file
$rw/nv_zero.parquet	read	auto	slices;cross	ColumnMetaData.num_values 0, pages hold 10
$rw/nv_small.parquet	read	auto	slices;cross	num_values 3, pages hold 10
$rw/nv_large.parquet	read	auto	slices;cross	num_values 1000, pages hold 10
$rw/nv_list_zero.parquet	read	arrow	slices	list column, num_values 0 (DuckDB reads 0 rows and fails)
$rw/nv_list_small.parquet	read	arrow	slices	list column, num_values 2 (DuckDB fails)
$rw/nv_list_large.parquet	read	arrow	slices	list column, num_values 999 (DuckDB fails)
$rw/nv_big_zero.parquet	read	arrow	slices	60000 list rows in 12 pages, num_values 0 (the budgeted, sliced read is checked below)
$rw/nv_big_large.parquet	read	arrow	slices	the same, num_values 10^7
$rw/time_in_range.parquet	read	duckdb	-	TIME ms/us/ns from 00:00:00 to 24:00:00
$rw/time_negative.parquet	reject	none	-	TIME -1 us: DuckDB refuses it ("TIME values must be within a day")
$rw/time_negative_ms.parquet	reject	none	-	TIME -1000 ms
$rw/time_past_midnight.parquet	reject	none	-	TIME 24:00:00 + 1 ns
$rw/bin_pyarrow.parquet	read	auto	slices;cross	binary / large_binary / fixed_size_binary / WKB without a string annotation: base64
$rw/bin_unannotated_text.parquet	read	auto	cross	text stored unannotated: base64 by default
$rw/var_unshredded.parquet	read	duckdb	slices	VARIANT, every value type DuckDB writes, unshredded
$rw/var_auto.parquet	read	duckdb	slices	the same, shredded as DuckDB chooses (one type per row group)
$rw/var_shredded.parquet	read	duckdb	slices=14	objects shredded into typed_value, some rows off the shape; 3 row groups
$rw/var_partial.parquet	read	duckdb	slices	partially shredded objects (fields left in value)
$rw/var_nested.parquet	read	duckdb	slices	VARIANT inside an optional struct and a list, nulls at every level
$rw/var_ok_crafted.parquet	read	duckdb	-	a hand-encoded object
$rw/var_bad_version.parquet	reject	none	-	metadata version 2
$rw/var_bad_truncated.parquet	reject	none	-	int32 with 2 of 4 bytes
$rw/var_bad_field_id.parquet	reject	none	-	field id past the dictionary
$rw/var_bad_primitive.parquet	reject	none	-	primitive type 21 (unknown)
$rw/var_bad_offset.parquet	reject	none	-	field values past the end
EOF
node "$oracle/oracle_check.mjs" "$plan" --vforge "$vforge" --tmp "$tmp/out" || fail=1

# the streamed page path (a row group read in slices under a memory budget) trusts the pages too
for f in nv_big_zero.parquet nv_big_large.parquet; do
  a=$("$vforge" cat "$rw/$f" 2>&1 | md5sum)
  b=$("$vforge" --memory-budget 4M cat "$rw/$f" 2>&1 | md5sum)
  n=$(VFORGE_DEBUG=1 "$vforge" --memory-budget 4M cat "$rw/$f" 2>&1 >/dev/null | grep -c 'read as [0-9]* slices')
  if [ "$a" = "$b" ] && [ "$n" -ge 1 ]; then echo "ok   $f: read in slices under --memory-budget 4M = the whole read"
  else echo "FAIL $f: the sliced read differs from the whole read (or did not slice: $n)"; fail=1; fi
done

# ------------------------------------------------------------------ 2. refusals say why
why() { # file pattern
  "$vforge" cat "$rw/$1" > /dev/null 2> "$tmp/why.err"
  if grep -q -- "$2" "$tmp/why.err"; then echo "ok   $1 refused: $(tail -1 "$tmp/why.err" | cut -c1-160)"
  else echo "FAIL $1: the message lacks \"$2\": $(cat "$tmp/why.err")"; fail=1; fi
}
why time_negative.parquet 'column us: row 3: TIME value -1 (microseconds) is not a time of day'
why time_past_midnight.parquet 'TIME value 86400000000001 (nanoseconds)'
why var_bad_version.parquet 'column v: row 0: variant metadata: version 2'
why var_bad_truncated.parquet 'a primitive value needs 4 bytes, 2 remain'
why var_bad_field_id.parquet 'field id 5 is not in the metadata dictionary'
why var_bad_primitive.parquet 'primitive type 21 is not known'

# ------------------------------------------------------------------ 3. --binary-as-string
"$vforge" cat "$rw/bin_unannotated_text.parquet" --binary-as-string > "$tmp/bas.jsonl" 2> "$tmp/bas.err"
"$py" - "$rw/bin_unannotated_text.parquet" "$rw/bin_pyarrow.parquet" > "$tmp/bas.want" 2> "$tmp/bas.pyerr" <<'EOF'
import json, sys, duckdb, pyarrow.parquet as pq
# DuckDB reads unannotated binary as text with binary_as_string=true (valid UTF-8 rows only)
rows = duckdb.connect().execute(f"select name from read_parquet('{sys.argv[1]}', binary_as_string=true) limit 2").fetchall()
for (v,) in rows:
    print(json.dumps({'name': v}, ensure_ascii=False, separators=(',', ':')))
EOF
if head -2 "$tmp/bas.jsonl" | cmp -s - "$tmp/bas.want"; then
  echo "ok   --binary-as-string = DuckDB binary_as_string=true"
else
  echo "FAIL --binary-as-string: vforge $(head -2 "$tmp/bas.jsonl" | tr '\n' ' ') duckdb $(tr '\n' ' ' < "$tmp/bas.want") $(cat "$tmp/bas.err" "$tmp/bas.pyerr")"; fail=1
fi
# invalid UTF-8 is replaced per maximal subpart (the old rendering), a lossy view
"$vforge" cat "$rw/bin_pyarrow.parquet" --columns raw --limit 1 --binary-as-string > "$tmp/bas2.jsonl" 2>&1
want2=$("$py" -c 'import json; print(json.dumps({"raw": b"\xff\xfe\x00abc".decode("utf-8", "replace")}, ensure_ascii=False, separators=(",", ":")))')
if [ "$(cat "$tmp/bas2.jsonl")" = "$want2" ]; then echo "ok   --binary-as-string replaces invalid UTF-8 as before"
else echo "FAIL --binary-as-string on invalid UTF-8: $(cat "$tmp/bas2.jsonl") want $want2"; fail=1; fi

# ------------------------------------------------------------------ 4. --no-verify-crc
corpus=$shared/data/parquet-testing/data
if [ -d "$corpus" ]; then
  for f in datapage_v1-corrupt-checksum.parquet rle-dict-uncompressed-corrupt-checksum.parquet; do
    "$vforge" cat "$corpus/$f" > /dev/null 2> "$tmp/crc.err"; rc=$?
    if [ $rc -ne 2 ] || ! grep -q 'page CRC mismatch' "$tmp/crc.err"; then
      echo "FAIL $f: without --no-verify-crc expected exit 2 (CRC mismatch), got $rc: $(cat "$tmp/crc.err")"; fail=1; continue
    fi
    for form in "--no-verify-crc cat $corpus/$f" "cat $corpus/$f --no-verify-crc"; do
      # shellcheck disable=SC2086
      "$vforge" $form > "$tmp/crc.jsonl" 2> "$tmp/crc.err"; rc=$?
      node "$oracle/dump_duckdb.mjs" "$corpus/$f" --types-out "$tmp/crc.types" > "$tmp/crc.want" 2>&1
      if [ $rc -eq 0 ] && node "$oracle/compare_jsonl.mjs" "$tmp/crc.jsonl" "$tmp/crc.want" --types "$tmp/crc.types" --names vforge,duckdb > "$tmp/crc.cmp" 2>&1; then
        echo "ok   vforge $(echo "$form" | sed "s|$corpus/||") = DuckDB ($(wc -l < "$tmp/crc.jsonl") rows)"
      else
        echo "FAIL vforge $form: exit $rc $(head -c 300 "$tmp/crc.err")"; sed 's/^/    /' "$tmp/crc.cmp"; fail=1
      fi
    done
  done
else
  echo "skip --no-verify-crc checks: $corpus is absent"
fi

# ------------------------------------------------------------------ 5. payloads
ld=$tmp/load
rm -rf "$ld"; mkdir -p "$ld/corpus"
"$py" - "$ld/corpus/part.parquet" <<'EOF' || { echo "FAIL: writing the load corpus"; exit 1; }
import sys, duckdb
duckdb.connect().execute(f"""copy (select i as id, [i::FLOAT, 1, 2, 3]::FLOAT[4] as emb,
    ('\\xFF\\x00\\x7F'||i::VARCHAR)::BLOB as raw, ('name-'||i)::BLOB as label,
    ('{{"k": '||i||', "t": [1, "x", null], "o": {{"deep": '||(i*2)||'}}}}')::JSON::VARIANT as meta
  from range(20) t(i)) to '{sys.argv[1]}' (SHREDDING {{meta: 'STRUCT(k BIGINT)'}})""")
EOF
for bas in false true; do
  cat > "$ld/cfg.yaml" <<EOF
vectors: {emb: {type: dense, column: emb, distance: cosine}}
datasource: {uri: $ld/corpus, binary_as_string: $bas, payload_fields: {raw: raw, label: label, meta: meta}}
vectorstore: {type: local, path: $ld/store-$bas, collection_name: c}
EOF
  if ! "$vforge" --quiet load run "$ld/cfg.yaml" > "$tmp/load.out" 2> "$tmp/load.err"; then
    echo "FAIL load (binary_as_string: $bas): $(cat "$tmp/load.err")"; fail=1; continue
  fi
  "$vforge" cat "$ld/store-$bas/c" --columns payload > "$tmp/payload-$bas.jsonl" 2> "$tmp/load.err"
  if "$py" - "$ld/corpus/part.parquet" "$tmp/payload-$bas.jsonl" "$bas" <<'EOF'; then
import base64, json, sys, duckdb
src, got_file, bas = sys.argv[1], sys.argv[2], sys.argv[3] == 'true'
con = duckdb.connect()
want = {}
for i, raw, label, meta in con.execute(f"select id, raw, label, meta::JSON from '{src}'").fetchall():
    enc = (lambda b: b.decode('utf-8', 'replace')) if bas else (lambda b: base64.b64encode(b).decode())
    want[i] = {'raw': enc(raw), 'label': enc(label), 'meta': json.loads(meta)}
got = [json.loads(json.loads(l)['payload']) for l in open(got_file)]
byid = {int(g['meta']['k']): g for g in got}
bad = [i for i in want if byid.get(i) != want[i]]
if len(got) != len(want) or bad:
    print(f"  {len(got)} payloads, {len(want)} wanted; first mismatch {bad[:1]}: got {byid.get(bad[0]) if bad else None} want {want[bad[0]] if bad else None}")
    sys.exit(1)
EOF
    echo "ok   load payloads (binary_as_string: $bas): binary as $([ $bas = true ] && echo text || echo base64), VARIANT = DuckDB's JSON"
  else
    echo "FAIL load payloads (binary_as_string: $bas)"; fail=1
  fi
done
# ... and load-dist hands the setting to its workers through their shard configs
"$vforge" --quiet load-dist "$ld/cfg.yaml" --num-shards 1 --engine local --dry-run --runs-dir "$ld/runs" \
  > /dev/null 2> "$tmp/dist.err"
if grep -qx '  binary_as_string: true' "$ld"/runs/*/shards/000.yaml 2>/dev/null; then
  echo "ok   load-dist shard configs keep datasource.binary_as_string: true"
else
  echo "FAIL load-dist shard config lacks binary_as_string: true: $(cat "$tmp/dist.err")"; fail=1
fi

exit $fail
