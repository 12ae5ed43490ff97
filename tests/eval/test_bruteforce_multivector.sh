#!/usr/bin/env bash
# Multivector (max_sim) ground truth on a DuckDB-written corpus (an independent parquet writer; one row group per file):
# 3 files of 120 rows, columns dense FLOAT[4] and mv FLOAT[][] (1..3 vectors of 4 small
# integers: many exact score ties; every 11th row NULL, every 13th an empty list).
#  - generate-queries --column mv copies the multivector (list<list<float>>) of each sampled row
#    exactly (checked through `vforge cat` against the corpus row; seed 8 samples no row without
#    vectors: such a row is refused as a query, like a null dense vector), and DuckDB reads the
#    same values from the queries file (the writer's LIST_LIST_FLOAT);
#  - brute-force --column mv, cosine and dot, K = 7: hits equal an independent python brute force
#    (max_sim in double, rounded to float, ties by point id) exactly; rows without vectors are
#    never hits;
#  - byte-identical output for --threads 1 vs 3 and for --num-jobs 3 + brute-force-merge;
#  - euclid is refused for multivectors.
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
const inst = await DuckDBInstance.create(':memory:', { threads: '1' });
const con = await inst.connect();
await con.run('select setseed(0.5)');
for (let f = 0; f < 3; f++) {
  await con.run(`copy (select (${f * 120} + i)::BIGINT id,
      list_transform(range(4), x -> (random() + 0)::FLOAT)::FLOAT[4] dense,
      case when i % 11 = 5 then NULL
           when i % 13 = 7 then []::FLOAT[][]
           else list_transform(range(1 + (i % 3)::BIGINT),
                  v -> list_transform(range(4), x -> (floor((random() + 1) * 5) - 7)::FLOAT))::FLOAT[][] end mv
    from range(120) r(i)) to '${out}/part-${f}.parquet' (format parquet, row_group_size 50)`);
}
JS
node "$tmp/gen.mjs" "$ORACLE" "$C"
"$V" generate-queries "$C" -n 9 --seed 8 --column mv 2>/dev/null || fail "generate-queries --column mv"
Q=$C/eval/queries_9.parquet
"$V" cat "$Q" > "$tmp/q.jsonl"
# the queries file's list<list<float>> column as DuckDB reads it
cat > "$tmp/read.mjs" <<'JS'
import { createRequire } from 'node:module';
import path from 'node:path';
const [oracle, file] = process.argv.slice(2);
const require = createRequire(path.resolve(oracle, 'package.json'));
const { DuckDBInstance } = require('@duckdb/node-api');
const con = await (await DuckDBInstance.create(':memory:')).connect();
const r = await con.runAndReadAll(`select query_id, to_json(mv)::VARCHAR from read_parquet('${file}')`);
for (const row of r.getRows()) console.log(JSON.stringify({ query_id: row[0], mv: JSON.parse(row[1]) }));
JS
node "$tmp/read.mjs" "$ORACLE" "$Q" > "$tmp/q_duckdb.jsonl" || fail "DuckDB cannot read the queries file"
"$V" cat "$C" --with-id 'vf_point_id(filename, file_row_number)' > "$tmp/corpus.jsonl"
"$PY" - "$tmp" <<'PY' || fail "queries do not copy the multivectors"
import json, sys
t = sys.argv[1]
byid = {r["__id__"]: r for r in map(json.loads, open(t + "/corpus.jsonl"))}
q = [json.loads(l) for l in open(t + "/q.jsonl")]
assert len(q) == 9
dq = [json.loads(l) for l in open(t + "/q_duckdb.jsonl")]
assert [(r["query_id"], r["mv"]) for r in q] == [(r["query_id"], r["mv"]) for r in dq], "DuckDB reads other values"
for r in q:
    assert r["mv"] == byid[r["query_id"]]["mv"] and len(r["mv"]) >= 1, r
PY
set +e
msg=$("$V" brute-force "$C" --queries "$Q" -k 7 --metric euclid --column mv 2>&1); rc=$?
set -e
[ $rc -eq 2 ] && echo "$msg" | grep -q "max_sim" || fail "euclid on multivectors not refused: $rc $msg"
for m in cosine dot; do
  "$V" --threads 1 brute-force "$C" --queries "$Q" -k 7 --metric $m --column mv --output "$tmp/t1.parquet" 2>/dev/null
  "$V" --threads 3 brute-force "$C" --queries "$Q" -k 7 --metric $m --column mv --output "$tmp/t3.parquet" 2>/dev/null
  cmp -s "$tmp/t1.parquet" "$tmp/t3.parquet" || fail "$m: threads 1 vs 3 differ"
  rm -rf "$C/eval/_bf_partial_queries_9_k7"
  for r in 0 1 2; do
    "$V" brute-force "$C" --queries "$Q" -k 7 --metric $m --column mv --num-jobs 3 --job-rank $r 2>/dev/null
  done
  "$V" brute-force-merge "$C" --queries "$Q" -k 7 --column mv --output "$tmp/merged.parquet" 2>/dev/null
  cmp -s "$tmp/t1.parquet" "$tmp/merged.parquet" || fail "$m: 3 jobs + merge differs from one job"
  "$V" cat "$tmp/t1.parquet" > "$tmp/bf.jsonl"
  "$PY" - "$tmp" "$m" <<'PY' || fail "$m: max_sim results differ from the python brute force"
import json, math, struct, sys
t, metric = sys.argv[1], sys.argv[2]
f32 = lambda x: struct.unpack("<f", struct.pack("<f", x))[0]
corpus = [json.loads(l) for l in open(t + "/corpus.jsonl")]
q = [json.loads(l) for l in open(t + "/q.jsonl")]
res = [json.loads(l) for l in open(t + "/bf.jsonl")]
def sim(a, b):
    s = math.fsum(x * y for x, y in zip(a, b))
    if metric == "dot": return s
    na, nb = math.sqrt(math.fsum(x * x for x in a)), math.sqrt(math.fsum(x * x for x in b))
    return 0.0 if na == 0 or nb == 0 else s / (na * nb)
def max_sim(Q, D):
    return math.fsum(max(sim(a, b) for b in D) for a in Q)
docs = [c for c in corpus if c["mv"]]
assert len(docs) < len(corpus), "the corpus should hold rows without vectors"
ties = 0
assert [r["query_id"] for r in res] == [r["query_id"] for r in q]
for qr, rr in zip(q, res):
    sc = sorted(((f32(max_sim(qr["mv"], c["mv"])) + 0.0, c["__id__"]) for c in docs), key=lambda p: (-p[0], p[1]))
    want = sc[:7]
    got = list(zip(rr["hit_scores"], rr["hit_ids"]))
    assert [i for _, i in want] == [i for _, i in got], (qr["query_id"], want, got)
    for (ws, _), (gs, _) in zip(want, got):
        assert abs(ws - gs) <= 1e-6 * max(1.0, abs(ws)), (ws, gs)
    ties += sum(1 for a, b in zip(want, want[1:]) if a[0] == b[0])
assert ties > 0, "the data should produce ties"
PY
done
echo ok
