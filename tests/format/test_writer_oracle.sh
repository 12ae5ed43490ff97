#!/usr/bin/env bash
# Oracle test for the parquet writer: files written by vforge (every column type, nulls, NaN,
# +-inf, -0, int64 extremes, several row groups and pages, each codec, an empty file) must read
# back identically in DuckDB and in arrow-rs (parquet-wasm -> apache-arrow).
#
# The files come from the unit-test binary format_test_writer: its `oracle_files` test writes
# them, with the expected rows as JSON lines, into $VF_WRITER_OUT.  Each file is then read with
# tests/oracle/read_with_duckdb.mjs and read_with_arrow.mjs and compared row by row (float32
# columns compared after rounding both sides to float32; everything else exactly).
# Exit 77 (skipped) when node, the oracle node_modules, python3 or the test binary is missing.
set -u
SRC=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
ORACLE=$SRC/tests/oracle

skip() { echo "skipped: $*" >&2; exit 77; }
command -v node >/dev/null 2>&1 || skip "node not installed"
command -v python3 >/dev/null 2>&1 || skip "python3 not installed"
[ -d "$ORACLE/node_modules/@duckdb/node-api" ] && [ -d "$ORACLE/node_modules/parquet-wasm" ] &&
  [ -d "$ORACLE/node_modules/apache-arrow" ] || skip "oracle node_modules missing (npm ci in tests/oracle)"

BIN=${VF_WRITER_TEST_BIN:-}
if [ -z "$BIN" ] && [ -n "${VFORGE:-}" ]; then
  for c in "$(dirname "$VFORGE")/tests/format_test_writer" "$(dirname "$VFORGE")/../tests/format_test_writer"; do
    if [ -x "$c" ]; then BIN=$c; break; fi
  done
fi
[ -n "$BIN" ] && [ -x "$BIN" ] || skip "format_test_writer binary not found (set VFORGE or VF_WRITER_TEST_BIN)"

OUT=$(mktemp -d "${VF_TMP:-/tmp}/writer_oracle.XXXXXX" 2>/dev/null) || { mkdir -p "${VF_TMP:-/tmp}"; OUT=$(mktemp -d "${VF_TMP:-/tmp}/writer_oracle.XXXXXX"); }
if ! VF_WRITER_OUT=$OUT "$BIN" oracle_files >"$OUT/test.log" 2>&1; then
  cat "$OUT/test.log" >&2
  echo "FAIL: $BIN oracle_files could not write the sample files" >&2
  exit 1
fi

fail=0
for f in "$OUT"/writer_*.parquet; do
  exp=${f%.parquet}.expected.jsonl
  for oracle in duckdb arrow; do
    got=${f%.parquet}.$oracle.jsonl
    schema_opt=
    [ $oracle = arrow ] && schema_opt=--schema
    if ! node "$ORACLE/read_with_$oracle.mjs" $schema_opt "$f" >"$got" 2>"$got.err"; then
      echo "FAIL: $oracle cannot read $(basename "$f"):" >&2
      head -20 "$got.err" >&2
      fail=1
      continue
    fi
    # the ARROW:schema footer entry makes arrow restore VECTOR columns as fixed-size lists
    if [ $oracle = arrow ] && ! { grep -qx 'emb: FixedSizeList\[4\]<Float32> nullable=true' "$got.err" &&
        grep -qx 'emb2: FixedSizeList\[3\]<Float32> nullable=false' "$got.err" &&
        grep -qx 'lf: List<Float32> nullable=true' "$got.err"; }; then
      echo "FAIL: arrow schema of $(basename "$f") is not the one described in ARROW:schema:" >&2
      cat "$got.err" >&2
      fail=1
    fi
    if ! python3 - "$exp" "$got" "$OUT/float32_columns.txt" "$oracle" <<'PY'
import json, math, struct, sys
exp_path, got_path, f32_path, oracle = sys.argv[1:5]
f32 = set(l.strip() for l in open(f32_path) if l.strip())
exp = [json.loads(l) for l in open(exp_path) if l.strip()]
got = [json.loads(l) for l in open(got_path) if l.strip()]

def r32(x):
    return struct.unpack('<f', struct.pack('<f', x))[0]

def same(a, b, is32):
    if isinstance(a, list) or isinstance(b, list):
        return isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and \
            all(same(x, y, is32) for x, y in zip(a, b))
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, int) and isinstance(b, int):
            return a == b
        return r32(float(a)) == r32(float(b)) if is32 else float(a) == float(b)
    return a == b

bad = []
if len(exp) != len(got):
    bad.append(f"{len(got)} rows, expected {len(exp)}")
for i, (e, g) in enumerate(zip(exp, got)):
    if list(e.keys()) != list(g.keys()):
        bad.append(f"row {i}: columns {list(g.keys())}, expected {list(e.keys())}")
        continue
    for k in e:
        if not same(e[k], g[k], k in f32):
            bad.append(f"row {i} column {k}: got {g[k]!r}, expected {e[k]!r}")
    if len(bad) > 10:
        break
for b in bad[:10]:
    print(f"  {oracle} {got_path.rsplit('/', 1)[-1]}: {b}", file=sys.stderr)
sys.exit(1 if bad else 0)
PY
    then
      echo "FAIL: $oracle disagrees with what was written to $(basename "$f")" >&2
      fail=1
    else
      echo "ok: $oracle reads $(basename "$f") ($(wc -l <"$exp") rows)"
    fi
  done
done
# DuckDB's own footer parser: row groups, codec, level counts and null_count statistics per
# column chunk must match what the expected rows imply (300 rows per row group).
for f in "$OUT"/writer_*.parquet; do
  exp=${f%.parquet}.expected.jsonl
  if ! node "$ORACLE/read_with_duckdb.mjs" --meta "$f" >"${f%.parquet}.meta.jsonl" 2>"${f%.parquet}.meta.err"; then
    echo "FAIL: duckdb cannot read the metadata of $(basename "$f"):" >&2
    head -20 "${f%.parquet}.meta.err" >&2
    fail=1
    continue
  fi
  if ! python3 - "$exp" "${f%.parquet}.meta.jsonl" "$(basename "$f")" <<'PY'
import json, sys
exp_path, meta_path, name = sys.argv[1:4]
rows = [json.loads(l) for l in open(exp_path) if l.strip()]
meta = [json.loads(l) for l in open(meta_path) if l.strip()]
kv = meta.pop()["kv"]
RG = 300
codec = name[len("writer_"):-len(".parquet")]
bad = []
if kv.get("vforge.test") != "replaced":
    bad.append(f"key-value metadata {kv}")
want_rgs = (len(rows) + RG - 1) // RG
got_rgs = len({m["row_group_id"] for m in meta})
if got_rgs != want_rgs:
    bad.append(f"{got_rgs} row groups, expected {want_rgs}")
for m in meta:
    g = m["row_group_id"]
    part = rows[g * RG:(g + 1) * RG]
    col = m["path_in_schema"].split(",")[0].strip()
    vals = [r[col] for r in part]
    if isinstance(next((v for v in vals if v is not None), None), list) or col in ("lf", "ls", "emb", "emb2"):
        nv = sum(1 if not v else len(v) for v in vals)   # null and empty lists take one level
        nulls = sum(1 for v in vals if not v)
    else:
        nv, nulls = len(vals), sum(1 for v in vals if v is None)
    if m["row_group_num_rows"] != len(part):
        bad.append(f"rg {g}: {m['row_group_num_rows']} rows, expected {len(part)}")
    if m["num_values"] != nv or m["stats_null_count"] != nulls:
        bad.append(f"rg {g} {col}: num_values {m['num_values']} null_count {m['stats_null_count']},"
                   f" expected {nv} and {nulls}")
    if codec != "empty" and m["compression"] != codec:
        bad.append(f"rg {g} {col}: compression {m['compression']}, expected {codec}")
    if m["encodings"] != "PLAIN, RLE":
        bad.append(f"rg {g} {col}: encodings {m['encodings']}")
for b in bad[:10]:
    print(f"  duckdb metadata of {name}: {b}", file=sys.stderr)
sys.exit(1 if bad else 0)
PY
  then
    echo "FAIL: DuckDB's view of the metadata of $(basename "$f") differs" >&2
    fail=1
  else
    echo "ok: duckdb metadata of $(basename "$f")"
  fi
done

if [ $fail -ne 0 ]; then
  echo "files kept in $OUT" >&2
  exit 1
fi
rm -rf "$OUT"
echo "writer oracle: all files agree with DuckDB and arrow-rs"
