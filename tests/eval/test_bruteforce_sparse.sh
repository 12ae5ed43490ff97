#!/usr/bin/env bash
# Sparse (dot) ground truth on a DuckDB-written corpus (an independent parquet writer; one row
# group per file): 3 files of 120 rows, columns dense FLOAT[4] and sp STRUCT(indices UINTEGER[],
# values FLOAT[]) with 1..6 distinct indices in 0..15 stored out of order and small integer values
# (many exact score ties); every 11th row NULL, every 13th empty.
#  - generate-queries --column sp writes the struct{indices: list<uint32>, values: list<float>}
#    of each sampled row exactly (checked through `vforge cat` against the corpus row, and read
#    back by DuckDB);
#  - brute-force --column sp --metric dot, K = 7: hits equal an independent python brute force
#    (dot over shared indices, rows sharing none are not hits, ties by point id) exactly;
#  - byte-identical output for --threads 1 vs 3 and for --num-jobs 3 + brute-force-merge;
#  - cosine is refused for sparse vectors.
# Skips (77) without node, the DuckDB oracle (tests/oracle/node_modules) or python3.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
V=${VFORGE:-$here/build/vforge}
ORACLE=$here/tests/oracle
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
[ -x "$V" ] || { echo "skip: no vforge binary at $V"; exit 77; }
command -v "$PY" >/dev/null || { echo "skip: no python3"; exit 77; }
command -v node >/dev/null || { echo "skip: node not installed"; exit 77; }
[ -d "$ORACLE/node_modules/@duckdb/node-api" ] || { echo "skip: no DuckDB in $ORACLE/node_modules"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
C=$tmp/c
mkdir -p "$C"
cat > "$tmp/gen.mjs" <<'JS'
import { createRequire } from 'node:module';
import path from 'node:path';
const [oracle, out] = process.argv.slice(2);
const require = createRequire(path.resolve(oracle, 'package.json'));
const { DuckDBInstance } = require('@duckdb/node-api');
const con = await (await DuckDBInstance.create(':memory:', { threads: '1' })).connect();
await con.run('select setseed(0.75)');
for (let f = 0; f < 3; f++) {
  await con.run(`copy (select (${f * 120} + i)::BIGINT id,
      list_transform(range(4), x -> (random() + 0)::FLOAT)::FLOAT[4] dense,
      case when i % 11 = 5 then NULL
           when i % 13 = 7 then {'indices': []::UINTEGER[], 'values': []::FLOAT[]}
           else {'indices': list_transform(range(1 + (i % 6)::BIGINT), x -> ((x * 7 + i * 3) % 16)::UINTEGER),
                 'values': list_transform(range(1 + (i % 6)::BIGINT), x -> (floor((random() + 0) * 4) - 1)::FLOAT)} end sp
    from range(120) r(i)) to '${out}/part-${f}.parquet' (format parquet)`);
}
JS
node "$tmp/gen.mjs" "$ORACLE" "$C"
cat > "$tmp/read.mjs" <<'JS'
import { createRequire } from 'node:module';
import path from 'node:path';
const [oracle, file] = process.argv.slice(2);
const require = createRequire(path.resolve(oracle, 'package.json'));
const { DuckDBInstance } = require('@duckdb/node-api');
const con = await (await DuckDBInstance.create(':memory:')).connect();
const r = await con.runAndReadAll(`select query_id, to_json(sp)::VARCHAR from read_parquet('${file}')`);
for (const row of r.getRows()) console.log(JSON.stringify({ query_id: row[0], sp: JSON.parse(row[1]) }));
JS
seed=
for s in 1 2 3 4 5 6 7 8 9 10 11 12; do
  if "$V" generate-queries "$C" -n 9 --seed $s --column sp 2>/dev/null; then seed=$s; break; fi
done
[ -n "$seed" ] || fail "generate-queries --column sp failed for every seed"
Q=$C/eval/queries_9.parquet
"$V" cat "$Q" > "$tmp/q.jsonl"
node "$tmp/read.mjs" "$ORACLE" "$Q" > "$tmp/q_duckdb.jsonl" || fail "DuckDB cannot read the queries file"
"$V" cat "$C" --with-id 'vf_point_id(filename, file_row_number)' > "$tmp/corpus.jsonl"
"$PY" - "$tmp" <<'PY' || fail "queries do not copy the sparse vectors"
import json, sys
t = sys.argv[1]
byid = {r["__id__"]: r for r in map(json.loads, open(t + "/corpus.jsonl"))}
q = [json.loads(l) for l in open(t + "/q.jsonl")]
dq = [json.loads(l) for l in open(t + "/q_duckdb.jsonl")]
assert len(q) == 9
assert [(r["query_id"], r["sp"]) for r in q] == [(r["query_id"], r["sp"]) for r in dq], "DuckDB reads other values"
for r in q:
    assert r["sp"] == byid[r["query_id"]]["sp"] and len(r["sp"]["indices"]) >= 1, r
PY
set +e
msg=$("$V" brute-force "$C" --queries "$Q" -k 7 --metric cosine --column sp 2>&1); rc=$?
set -e
[ $rc -eq 2 ] && echo "$msg" | grep -q "scored with dot" || fail "cosine on sparse not refused: $rc $msg"
"$V" --threads 1 brute-force "$C" --queries "$Q" -k 7 --metric dot --column sp --output "$tmp/t1.parquet" 2>/dev/null
"$V" --threads 3 brute-force "$C" --queries "$Q" -k 7 --metric dot --column sp --output "$tmp/t3.parquet" 2>/dev/null
cmp -s "$tmp/t1.parquet" "$tmp/t3.parquet" || fail "threads 1 vs 3 differ"
for r in 0 1 2; do
  "$V" brute-force "$C" --queries "$Q" -k 7 --metric dot --column sp --num-jobs 3 --job-rank $r 2>/dev/null
done
"$V" brute-force-merge "$C" --queries "$Q" -k 7 --column sp --output "$tmp/merged.parquet" 2>/dev/null
cmp -s "$tmp/t1.parquet" "$tmp/merged.parquet" || fail "3 jobs + merge differs from one job"
"$V" cat "$tmp/t1.parquet" > "$tmp/bf.jsonl"
"$PY" - "$tmp" <<'PY' || fail "sparse results differ from the python brute force"
import json, math, struct, sys
t = sys.argv[1]
f32 = lambda x: struct.unpack("<f", struct.pack("<f", x))[0]
corpus = [json.loads(l) for l in open(t + "/corpus.jsonl")]
q = [json.loads(l) for l in open(t + "/q.jsonl")]
res = [json.loads(l) for l in open(t + "/bf.jsonl")]
def dot(a, b):
    da = dict(zip(a["indices"], a["values"]))
    shared = [i for i in b["indices"] if i in da]
    if not shared: return None
    return math.fsum(da[i] * v for i, v in zip(b["indices"], b["values"]) if i in da)
docs = [c for c in corpus if c["sp"] and c["sp"]["indices"]]
assert len(docs) < len(corpus), "the corpus should hold rows without entries"
assert any(c["sp"]["indices"] != sorted(c["sp"]["indices"]) for c in docs), "indices should be unsorted"
ties = 0
assert [r["query_id"] for r in res] == [r["query_id"] for r in q]
for qr, rr in zip(q, res):
    sc = [(dot(qr["sp"], c["sp"]), c["__id__"]) for c in docs]
    sc = sorted(((f32(s) + 0.0, i) for s, i in sc if s is not None), key=lambda p: (-p[0], p[1]))
    want = sc[:7]
    got = list(zip(rr["hit_scores"], rr["hit_ids"]))
    assert want == [(f32(float(s)), i) for s, i in got], (qr["query_id"], want, got)
    ties += sum(1 for a, b in zip(want, want[1:]) if a[0] == b[0])
assert ties > 0, "the data should produce ties"
PY
echo ok
