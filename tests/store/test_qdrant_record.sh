#!/usr/bin/env bash
# Issue 14, defect 4, the Qdrant side: `load prepare` records the corpus in the collection's
# metadata (vforge_corpus: files md5, id expression; vforge_load: "in progress" until finalize),
# and `bench` checks ground truth against it — against the Qdrant stand-in
# (tests/services/qdrant-standin/server.mjs: NOT a live Qdrant; it validates every request
# against Qdrant's published OpenAPI schema and models the metadata merge and point retrieval).
#   1. load run records the corpus and "finalized"; bench with the corpus's own truth: exit 0;
#   2. bench with truth of another corpus: exit 2 (the recorded md5s differ);
#   3. a collection whose record was removed (an older collection): the truth's hits are looked
#      up (POST /points): own truth exit 0, foreign ids exit 2;
#   4. prepare + load without finalize: bench warns that the load was not finalized;
#   5. every request was valid against the schema.
# Skips (77) without node, the oracle node_modules (ajv) or the shared schema.
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
V=${VFORGE:?set VFORGE to the vforge binary}
PY=${VF_PY:-$src/.venv/bin/python}
oracle="$src/tests/oracle"
sd="$src/tests/services/qdrant-standin"
shared=${VF_SHARED:-$src/../shared}
openapi="$shared/qdrant/openapi.json"
command -v node > /dev/null || { echo "SKIP: node not installed"; exit 77; }
[ -d "$oracle/node_modules/ajv" ] && [ -d "$oracle/node_modules/ajv-formats" ] ||
  { echo "SKIP: no ajv / ajv-formats in $oracle/node_modules (scripts/install-deps.sh runs npm ci there)"; exit 77; }
[ -f "$openapi" ] || { echo "SKIP: no $openapi (Qdrant's published schema, from shared/)"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/qdrant-record.XXXXXX" 2>/dev/null || mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

node "$sd/server.mjs" --port 0 --port-file "$tmp/port" --openapi "$openapi" --oracle "$oracle" \
  --optimize-ms 100 --log "$tmp/standin.log" > "$tmp/standin.out" 2>&1 &
pid=$!
for _ in $(seq 300); do [ -s "$tmp/port" ] && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
[ -s "$tmp/port" ] || { echo "FAIL: the stand-in did not start: $(cat "$tmp/standin.out")"; exit 1; }
url="http://127.0.0.1:$(cat "$tmp/port")"
get() { node --input-type=module -e "
  const r = await fetch(process.argv[1]); process.stdout.write(await r.text()); if (!r.ok) process.exit(1);" "$url$1"; }
send() { node --input-type=module -e "
  const [m, u, b] = process.argv.slice(1);
  const r = await fetch(u, { method: m, body: b, headers: { 'content-type': 'application/json' } });
  process.stdout.write(await r.text()); if (!r.ok) process.exit(1);" "$1" "$url$2" "$3"; }
jcheck() { node -e "const r = JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8'));
  if (!($2)) { console.log('   ' + JSON.stringify(r).slice(0, 700)); process.exit(1); }" "$1"; }

mkdir -p "$tmp/a" "$tmp/b"
cp -r "$src/examples/corpus/." "$tmp/a/"
cp -r "$src/examples/corpus/." "$tmp/b/"
config() { # NAME COLLECTION
  cat > "$tmp/$1.yaml" <<EOF
vectors:
  emb: {type: dense, column: emb, distance: cosine}
datasource: {uri: $tmp/a}
vectorstore: {type: qdrant, url: $url, collection_name: $2}
loader: {batch_size: 500, concurrency: 2}
EOF
}
config a a
"$V" load run "$tmp/a.yaml" --state-dir "$tmp/st-a" 2> "$tmp/load.err" || { cat "$tmp/load.err"; echo "FAIL: load run into the stand-in"; exit 1; }
get /collections/a > "$tmp/a.json"
jcheck "$tmp/a.json" "r.result.config.metadata.vforge_corpus && /^[0-9a-f]{32}\$/.test(r.result.config.metadata.vforge_corpus.files_md5) &&
  r.result.config.metadata.vforge_corpus.files === 2 && r.result.config.metadata.vforge_load === 'finalized'" &&
  ok "load run records the corpus and 'finalized' in the collection metadata" || fail "collection metadata"
"$V" generate-queries "$tmp/a" -n 120 2> /dev/null && "$V" generate-queries "$tmp/b" -n 120 2> /dev/null || fail "generate-queries"
"$V" brute-force "$tmp/a" --queries "$tmp/a/eval/queries_120.parquet" -k 10 2> /dev/null &&
  "$V" brute-force "$tmp/b" --queries "$tmp/b/eval/queries_120.parquet" -k 10 2> /dev/null || fail "brute-force"
GTA=$tmp/a/eval/brute_force_queries_120_k10.parquet GTB=$tmp/b/eval/brute_force_queries_120_k10.parquet
bench() { "$V" bench "$1" --queries "$2" --ground-truth "$3" -k 10 --exact > "$tmp/bench.out" 2> "$tmp/bench.err"; }

bench "$tmp/a.yaml" "$tmp/a/eval/queries_120.parquet" "$GTA"
rc=$?
[ $rc -eq 0 ] && ! grep -q warning "$tmp/bench.err" && ok "bench with the corpus's own truth: exit 0" || fail "own truth: exit $rc: $(tail -2 "$tmp/bench.err")"
bench "$tmp/a.yaml" "$tmp/b/eval/queries_120.parquet" "$GTB"
rc=$?
[ $rc -eq 2 ] && grep -q 'another corpus' "$tmp/bench.err" && ok "bench with truth of another corpus: exit 2" ||
  fail "another corpus: exit $rc: $(tail -2 "$tmp/bench.err")"

# 3. an older collection: no record -> the hits are looked up
send PATCH /collections/a '{"metadata": {"vforge_corpus": null, "vforge_load": null}}' > /dev/null || fail "removing the record"
bench "$tmp/a.yaml" "$tmp/a/eval/queries_120.parquet" "$GTA"
rc=$?
[ $rc -eq 0 ] && ok "no record, own truth: found by lookup, exit 0" || fail "no record, own truth: exit $rc: $(tail -2 "$tmp/bench.err")"
bench "$tmp/a.yaml" "$tmp/b/eval/queries_120.parquet" "$GTB"
rc=$?
[ $rc -eq 2 ] && grep -q 'none of the 1000 ground-truth neighbours' "$tmp/bench.err" && ok "no record, another corpus's truth: exit 2 by lookup" ||
  fail "no record, another corpus: exit $rc: $(tail -2 "$tmp/bench.err")"

# 4. a load that never reached finalize
config p p
"$V" load prepare "$tmp/p.yaml" --state-dir "$tmp/st-p" 2> /dev/null &&
  "$V" load load "$tmp/p.yaml" --state-dir "$tmp/st-p" -n 3000 2> /dev/null || fail "prepare + load"
get /collections/p > "$tmp/p.json"
jcheck "$tmp/p.json" "r.result.config.metadata.vforge_load === 'in progress'" || fail "prepare did not record the load in progress"
bench "$tmp/p.yaml" "$tmp/a/eval/queries_120.parquet" "$GTA"
rc=$?
[ $rc -eq 0 ] && grep -q 'has not been finalized' "$tmp/bench.err" && grep -q 'are not in collection' "$tmp/bench.err" &&
  ok "a load without finalize: warned (and the missing hits counted)" || fail "partial load: exit $rc: $(grep -v '^  ' "$tmp/bench.err" | tail -4)"

# 5. the schema
get /__standin/stats > "$tmp/stats.json"
jcheck "$tmp/stats.json" "r.invalid === 0 && r.rejected === 0 && r.unmodelled === 0 && r.by_route.get_points >= 1" &&
  ok "every request valid against the Qdrant schema, ids looked up with POST /points" || fail "invalid or unmodelled requests"

[ "$fails" -eq 0 ] || { echo "qdrant record: $fails failure(s)"; exit 1; }
echo "ok: qdrant corpus record"
