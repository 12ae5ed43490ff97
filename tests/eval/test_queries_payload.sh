#!/usr/bin/env bash
# generate-queries payload columns of every kind, on a DuckDB-written corpus (two files, two
# vector columns): strings and integers copied as they are, lists/structs/doubles/timestamps
# as the JSON text `vforge cat` renders, NULLs kept; --column picks one vector column and the
# other is an ordinary (JSON-rendered) payload column; without --column the command refuses,
# naming the candidates.  Skips (77) without the DuckDB oracle (tests/oracle/node_modules).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
V=${VFORGE:-$here/build/vforge}
ORACLE=$here/tests/oracle
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
[ -x "$V" ] || { echo "skip: no vforge binary at $V"; exit 77; }
[ -d "$ORACLE/node_modules/@duckdb/node-api" ] && command -v node >/dev/null || { echo "skip: DuckDB oracle not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
mkdir -p "$tmp/c"
cat > "$tmp/gen.cjs" <<'JS'
const { DuckDBInstance } = require(process.argv[2] + '/node_modules/@duckdb/node-api');
(async () => {
  const inst = await DuckDBInstance.create(':memory:');
  const con = await inst.connect();
  for (const [f, off] of [['a', 0], ['b', 500]]) {
    await con.run(`copy (select (i + ${off})::BIGINT as id,
        [ (i % 7)::FLOAT, (i % 11)::FLOAT, (i % 13)::FLOAT ]::FLOAT[3] as v1,
        [ (i % 3)::FLOAT, 1.5::FLOAT ]::FLOAT[] as v2,
        case when i % 5 = 0 then null else 'name ' || i end as name,
        (i % 9)::INTEGER as small,
        ['t' || (i % 4), 'x']::VARCHAR[] as tags,
        {'a': i, 'b': 'q' || i} as st,
        (i / 3.0)::DOUBLE as dbl,
        case when i % 4 = 0 then null else i::BIGINT end as maybe
      from range(500) r(i)) to '${process.argv[3]}/${f}.parquet' (format parquet, row_group_size 100)`);
  }
})().catch(e => { console.error(e); process.exit(1); });
JS
node "$tmp/gen.cjs" "$ORACLE" "$tmp/c" || fail "duckdb fixture"
set +e
msg=$("$V" generate-queries "$tmp/c" -n 5 2>&1); rc=$?
set -e
[ $rc -eq 2 ] && echo "$msg" | grep -q "v1, v2" || fail "ambiguous vector column not refused: $msg"
"$V" generate-queries "$tmp/c" -n 40 --seed 9 --column v1 --columns name,small,tags,st,dbl,maybe,v2,id 2>/dev/null
Q=$tmp/c/eval/queries_40.parquet
"$V" inspect "$Q" > "$tmp/inspect.txt"
grep -q "BYTE_ARRAY name (UTF8)\|BYTE_ARRAY name (STRING)" "$tmp/inspect.txt" || fail "name is not a string column: $(cat "$tmp/inspect.txt")"
grep -q "INT64 small" "$tmp/inspect.txt" || fail "small is not an int64 column"
"$V" cat "$Q" > "$tmp/q.jsonl"
"$V" cat "$tmp/c" --with-id 'vf_point_id(filename, file_row_number)' > "$tmp/corpus.jsonl"
"$PY" - "$tmp" <<'PY' || fail "payload values"
import json, sys
t = sys.argv[1]
corpus = {r["__id__"]: r for r in map(json.loads, open(t + "/corpus.jsonl"))}
q = [json.loads(l) for l in open(t + "/q.jsonl")]
assert len(q) == 40
nulls = 0
for r in q:
    src = corpus[r["query_id"]]
    assert r["v1"] == src["v1"]
    assert r["name"] == src["name"] and r["small"] == src["small"] and r["id"] == src["id"]
    for c in ("tags", "st", "dbl", "v2"):
        assert isinstance(r[c], str), (c, r[c])
        assert json.loads(r[c]) == src[c], (c, r[c], src[c])
    assert r["maybe"] == src["maybe"]
    nulls += r["name"] is None
assert nulls > 0, "sample should include null names"
assert len({r["__source_file__"] for r in q}) == 2
PY
echo ok
