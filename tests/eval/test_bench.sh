#!/usr/bin/env bash
# `vforge bench` end to end: the bundled corpus (examples/corpus: 2 files x 3000 rows, emb
# FLOAT[32]) is loaded into the embedded `local` store with `vforge load run`; a queries file and
# an exact top-20 ground truth are written independently of vforge (DuckDB reads the corpus and
# writes the parquet files, point ids md5(key:row) in SQL, exact cosine neighbours computed in JS
# in double precision), then:
#   - bench -k 10 --json over the exact local store: recall 1.0, the DESIGN.md keys, 50 queries
#   - the same with --concurrency 2, with --rps 200 (open loop), and with --store local --path
#     --collection instead of the config
#   - a deliberately wrong ground truth (each query given another query's neighbours): recall < 1
#   - missing files, -k above the truth's K, a query without ground truth: exit 2 with a message
#   - when `vforge generate-queries` and `vforge brute-force` exist: bench on their outputs too
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
V=${VFORGE:?set VFORGE to the vforge binary}
"$V" bench --help > /dev/null 2>&1 || { echo "FAIL: $V has no 'bench' command (register cmd_bench / CLI_BENCH in src/cli/main.c)"; exit 1; }
command -v python3 > /dev/null || { echo "python3 not installed"; exit 77; }
oracle="$src/tests/oracle"
if ! command -v node > /dev/null || [ ! -d "$oracle/node_modules/@duckdb/node-api" ]; then
  echo "node + @duckdb/node-api (tests/oracle/node_modules) needed to write the ground truth"; exit 77
fi
tmp=$(mktemp -d "${VF_TMP:-/tmp}/bench-test.XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
corpus="$src/examples/corpus"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

# --- the store
cat > "$tmp/cfg.yaml" <<EOC
vectors:
  emb: {type: dense, column: emb, distance: cosine}
datasource:
  uri: $corpus
vectorstore:
  type: local
  path: $tmp/store
  collection_name: ex
loader: {batch_size: 1000, concurrency: 2}
EOC
"$V" --quiet load run "$tmp/cfg.yaml" 2> "$tmp/err.txt" || { echo "FAIL: load run: $(cat "$tmp/err.txt")"; exit 1; }

# --- queries + exact ground truth, written by DuckDB (independent of vforge)
cat > "$tmp/gt.mjs" <<'EOJ'
import { createRequire } from 'node:module';
const [oracle, corpus, out] = process.argv.slice(2);
const require = createRequire(oracle + '/package.json');
const { DuckDBInstance } = require('@duckdb/node-api');
const inst = await DuckDBInstance.create(':memory:');
const con = await inst.connect();
const q = async (sql) => (await con.runAndReadAll(sql)).getRowObjectsJson();
// the loader's point ids: md5(bare key ":" physical row) as 8-4-4-4-12 (DESIGN.md "Point ids")
await q(`create table c as select
    regexp_replace(md5(filename || ':' || file_row_number::VARCHAR),
                   '^(.{8})(.{4})(.{4})(.{4})(.{12})$', '\\1-\\2-\\3-\\4-\\5') as pid,
    filename, file_row_number, emb
  from read_parquet('${corpus}/**/*.parquet', filename = true, file_row_number = true)`);
const rows = await q(`select pid, emb from c order by filename, file_row_number`);
if (rows.length !== 6000) throw new Error('expected 6000 corpus rows, got ' + rows.length);
const vec = rows.map((r) => {
  const v = r.emb.map(Number);
  const n = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return v.map((x) => x / n);
});
const K = 20;
const qidx = Array.from({ length: 50 }, (_, i) => (i * 119 + 7) % 6000);
const truth = qidx.map((qi) => {
  const s = vec.map((v, j) => [v.reduce((a, x, d) => a + x * vec[qi][d], 0), rows[j].pid]);
  s.sort((a, b) => (b[0] - a[0]) || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  return s.slice(0, K);
});
const lit = (a) => '[' + a.join(',') + ']';
const str = (s) => `'${s}'`;
const qrows = qidx.map((qi) => `(${str(rows[qi].pid)}, ${lit(rows[qi].emb.map(Number))}::FLOAT[])`);
await q(`copy (select * from (values ${qrows.join(',')}) t(query_id, emb)) to '${out}/queries_50.parquet' (format parquet)`);
const trow = (qi, t) => `(${str(rows[qi].pid)}, [${t.map((h) => str(h[1])).join(',')}]::VARCHAR[], ${lit(t.map((h) => h[0]))}::FLOAT[])`;
const gt = qidx.map((qi, i) => trow(qi, truth[i]));
await q(`copy (select * from (values ${gt.join(',')}) t(query_id, hit_ids, hit_scores)) to '${out}/brute_force_queries_50_k20.parquet' (format parquet)`);
// wrong truth: each query gets the next query's neighbours
const wrong = qidx.map((qi, i) => trow(qi, truth[(i + 1) % qidx.length]));
await q(`copy (select * from (values ${wrong.join(',')}) t(query_id, hit_ids, hit_scores)) to '${out}/wrong_k20.parquet' (format parquet)`);
// truth for only the first 49 queries
await q(`copy (select * from (values ${gt.slice(0, 49).join(',')}) t(query_id, hit_ids, hit_scores)) to '${out}/short_k20.parquet' (format parquet)`);
EOJ
mkdir -p "$tmp/eval"
node "$tmp/gt.mjs" "$oracle" "$corpus" "$tmp/eval" 2> "$tmp/err.txt" || { echo "FAIL: writing the ground truth: $(cat "$tmp/err.txt")"; exit 1; }
Q="$tmp/eval/queries_50.parquet"
GT="$tmp/eval/brute_force_queries_50_k20.parquet"

# check_json FILE RECALL_TEST DESC: one JSON object with exactly the DESIGN.md keys
check_json() {
  python3 - "$1" "$2" <<'EOP'
import json, sys
text = open(sys.argv[1]).read()
assert text.count("\n") == 1 and text.endswith("\n"), "not one line: %r" % text
r = json.loads(text)
assert sorted(r) == sorted(["k", "queries", "recall", "recall_min", "recall_max", "qps", "latency_ms", "errors", "peak_rss_bytes"]), r
assert sorted(r["latency_ms"]) == ["max", "p50", "p95", "p99"], r
assert r["k"] == 10 and r["queries"] == 50 and r["errors"] == 0 and r["qps"] > 0, r
l = r["latency_ms"]
assert 0 < l["p50"] <= l["p95"] <= l["p99"] <= l["max"], l
assert r["recall_min"] <= r["recall_max"] and r["recall"] == r["recall_min"], r
want = sys.argv[2]
if want == "exact":
    assert r["recall"] == 1.0 and r["recall_max"] == 1.0, r
else:
    assert r["recall"] < 0.5, r
EOP
}

# run DESC WANT ARGS...: bench --json must exit 0 and pass check_json
run() {
  local desc=$1 want=$2
  shift 2
  if "$V" bench "$@" --json > "$tmp/out.json" 2> "$tmp/err.txt"; then
    if check_json "$tmp/out.json" "$want" 2> "$tmp/py.txt"; then ok "$desc: $(cat "$tmp/out.json")"
    else fail "$desc: $(tail -1 "$tmp/py.txt")"; fi
  else
    fail "$desc: exit $?: $(cat "$tmp/err.txt")"
  fi
}

run "config, closed loop" exact "$tmp/cfg.yaml" --queries "$Q" --ground-truth "$GT" -k 10
grep -q "recall@10" "$tmp/err.txt" && ok "human summary on stderr" || fail "no summary on stderr: $(cat "$tmp/err.txt")"
run "--concurrency 2" exact "$tmp/cfg.yaml" --queries "$Q" --ground-truth "$GT" -k 10 --concurrency 2
run "--rps 200 (open loop)" exact "$tmp/cfg.yaml" --queries "$Q" --ground-truth "$GT" -k 10 --rps 200
grep -q "open loop" "$tmp/err.txt" && ok "--rps runs the open loop" || fail "--rps summary: $(cat "$tmp/err.txt")"
run "--store local --path --collection" exact --store local --path "$tmp/store" --collection ex \
  --queries "$Q" --ground-truth "$GT" -k 10
run "wrong ground truth" wrong "$tmp/cfg.yaml" --queries "$Q" --ground-truth "$tmp/eval/wrong_k20.parquet" -k 10

# the open loop paces itself: 50 queries at 100/s take about 0.5 s
t0=$(date +%s.%N)
"$V" bench "$tmp/cfg.yaml" --queries "$Q" --ground-truth "$GT" -k 10 --rps 100 --json > "$tmp/out.json" 2> /dev/null
t1=$(date +%s.%N)
python3 -c "import sys; d=float(sys.argv[2])-float(sys.argv[1]); sys.exit(0 if d >= 0.49 else 1)" "$t0" "$t1" &&
  ok "--rps 100 takes >= 0.49 s for 50 queries" || fail "--rps 100 finished too early"

# the outstanding bound: at 100000 queries/s with one request allowed out, most are dropped and
# counted as errors; the answered ones are still scored
if "$V" bench "$tmp/cfg.yaml" --queries "$Q" --ground-truth "$GT" -k 10 --rps 100000 --max-outstanding 1 \
     --json > "$tmp/out.json" 2> "$tmp/err.txt" &&
   python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if 0 < r['errors'] < 50 and r['recall'] == 1.0 else 1)" "$tmp/out.json" &&
   grep -q "dropped at the outstanding bound" "$tmp/err.txt"; then
  ok "--max-outstanding 1 drops and counts: $(cat "$tmp/out.json")"
else
  fail "--max-outstanding: $(cat "$tmp/out.json") $(cat "$tmp/err.txt")"
fi

# expect2 DESC PATTERN ARGS...: exit 2 and PATTERN in the message
expect2() {
  local desc=$1 pat=$2
  shift 2
  "$V" bench "$@" > "$tmp/out.txt" 2> "$tmp/err.txt"
  local rc=$?
  if [ $rc -eq 2 ] && grep -q -- "$pat" "$tmp/err.txt" && [ ! -s "$tmp/out.txt" ]; then ok "$desc: $(head -1 "$tmp/err.txt")"
  else fail "$desc: exit $rc, stderr: $(cat "$tmp/err.txt")"; fi
}
expect2 "missing queries file" "queries file" "$tmp/cfg.yaml" --queries "$tmp/nope.parquet" --ground-truth "$GT" -k 10
expect2 "missing ground truth" "ground-truth file" "$tmp/cfg.yaml" --queries "$Q" --ground-truth "$tmp/nope.parquet" -k 10
expect2 "missing config" "nope.yaml" "$tmp/nope.yaml" --queries "$Q" --ground-truth "$GT" -k 10
expect2 "-k above the truth's K" "exceeds the 20 hits" "$tmp/cfg.yaml" --queries "$Q" --ground-truth "$GT" -k 30
expect2 "query without ground truth" "no row for query_id" "$tmp/cfg.yaml" --queries "$Q" --ground-truth "$tmp/eval/short_k20.parquet" -k 10
expect2 "missing collection" "does not exist" --store local --path "$tmp/store" --collection nope --queries "$Q" --ground-truth "$GT" -k 10
expect2 "no -k" "required" "$tmp/cfg.yaml" --queries "$Q" --ground-truth "$GT"
expect2 "config and --store" "either a CONFIG" "$tmp/cfg.yaml" --store local --queries "$Q" --ground-truth "$GT" -k 10
expect2 "bad --rps" "rps" "$tmp/cfg.yaml" --queries "$Q" --ground-truth "$GT" -k 10 --rps abc
expect2 "truth given as queries" "no column 'emb'" "$tmp/cfg.yaml" --queries "$GT" --ground-truth "$GT" -k 10

# --- a qdrant store: the Qdrant stand-in (tests/services/qdrant-standin; no Qdrant server can be
# installed here — it validates every request against Qdrant's OpenAPI schema and answers the
# Query API by brute force), loaded with `load run`, searched through the same store_search()
shared=${VF_SHARED:-$src/../shared}
standin="$src/tests/services/qdrant-standin/server.mjs"
if [ -f "$standin" ] && [ -f "$shared/qdrant/openapi.json" ]; then
  node "$standin" --port 0 --port-file "$tmp/qport" --openapi "$shared/qdrant/openapi.json" \
    --oracle "$oracle" > "$tmp/standin.log" 2>&1 &
  spid=$!
  trap 'kill $spid 2>/dev/null; rm -rf "$tmp"' EXIT
  for _ in $(seq 100); do [ -s "$tmp/qport" ] && break; sleep 0.1; done
  qp=$(cat "$tmp/qport" 2>/dev/null)
  sed -e "s|type: local|type: qdrant|" -e "s|path: $tmp/store|url: http://127.0.0.1:$qp|" "$tmp/cfg.yaml" > "$tmp/qcfg.yaml"
  if [ -z "$qp" ]; then
    fail "qdrant stand-in did not start: $(cat "$tmp/standin.log")"
  elif ! "$V" --quiet load run "$tmp/qcfg.yaml" 2> "$tmp/err.txt"; then
    fail "qdrant: load run: $(cat "$tmp/err.txt")"
  else
    # first, so its searches are among the 50 whose params the stand-in keeps
    run "qdrant, --exact --hnsw-ef 64" exact "$tmp/qcfg.yaml" --queries "$Q" --ground-truth "$GT" -k 10 --exact --hnsw-ef 64
    run "qdrant, closed loop" exact "$tmp/qcfg.yaml" --queries "$Q" --ground-truth "$GT" -k 10 --concurrency 2
    run "qdrant, --rps 200" exact "$tmp/qcfg.yaml" --queries "$Q" --ground-truth "$GT" -k 10 --rps 200
    if python3 - "$qp" <<'EOP'; then ok "qdrant: every request valid, --exact/--hnsw-ef sent as search params"; else fail "qdrant: stand-in stats"; fi
import json, sys, urllib.request
s = json.load(urllib.request.urlopen("http://127.0.0.1:%s/__standin/stats" % sys.argv[1]))
assert s["invalid"] == 0, s["invalid_samples"]
p = s["search_params"]
assert p and all(x.get("exact") is True and x.get("hnsw_ef") == 64 for x in p), p[:3]
assert s["by_route"]["query_batch_points"] >= 3 * 51, s["by_route"]
EOP
    expect2 "--exact on a local store" "apply to qdrant" "$tmp/cfg.yaml" --queries "$Q" --ground-truth "$GT" -k 10 --exact
  fi
else
  echo "note: qdrant stand-in or $shared/qdrant/openapi.json absent; qdrant bench not checked"
fi

# --- on the outputs of generate-queries / brute-force, when this build has them
if "$V" generate-queries --help > /dev/null 2>&1 && "$V" brute-force --help > /dev/null 2>&1; then
  if "$V" --quiet generate-queries "$corpus" -n 40 --seed 7 --output "$tmp/gq/queries_40.parquet" 2> "$tmp/err.txt" &&
     "$V" --quiet brute-force "$corpus" --queries "$tmp/gq/queries_40.parquet" -k 10 --metric cosine \
       --output "$tmp/gq/brute_force_queries_40_k10.parquet" 2>> "$tmp/err.txt"; then
    if "$V" bench "$tmp/cfg.yaml" --queries "$tmp/gq/queries_40.parquet" \
         --ground-truth "$tmp/gq/brute_force_queries_40_k10.parquet" -k 10 --json > "$tmp/out.json" 2> "$tmp/err.txt" &&
       python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r['queries']==40 and r['recall_max']==1.0 and r['recall']>=0.99 else 1)" "$tmp/out.json"; then
      ok "bench on generate-queries + brute-force outputs: $(cat "$tmp/out.json")"
    else
      fail "bench on generate-queries + brute-force outputs: $(cat "$tmp/out.json") $(cat "$tmp/err.txt")"
    fi
  else
    fail "generate-queries / brute-force: $(cat "$tmp/err.txt")"
  fi
else
  echo "note: generate-queries / brute-force not in this build; bench checked on DuckDB-written files only"
fi

[ $fails -eq 0 ] && echo "all bench checks passed" || echo "$fails bench check(s) failed"
[ $fails -eq 0 ]
