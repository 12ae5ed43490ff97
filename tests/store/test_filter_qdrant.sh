#!/usr/bin/env bash
# Filtered search through Qdrant's REST API, against the Qdrant stand-in
# (tests/services/qdrant-standin: NOT a live Qdrant; it validates every request against Qdrant's
# published OpenAPI schema and evaluates filters with its own reading of Qdrant's filtering
# documentation, filter.mjs, written apart from vforge's C evaluator).  The bundled corpus is
# loaded into the stand-in; per-query filters from a template and a single --filter are
# benched against vforge's exact filtered ground truth: the stand-in searches exactly, so
# recall 1 means both evaluators selected the same points.  Every Query carries its filter and
# every request is schema-valid.  Skips (77) without node, ajv or the shared schema.
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
V=${VFORGE:?set VFORGE to the vforge binary}
oracle="$src/tests/oracle"
sd="$src/tests/services/qdrant-standin"
shared=${VF_SHARED:-$src/../shared}
openapi="$shared/qdrant/openapi.json"
command -v node >/dev/null || { echo "SKIP: node not installed"; exit 77; }
[ -d "$oracle/node_modules/ajv" ] && [ -d "$oracle/node_modules/ajv-formats" ] ||
  { echo "SKIP: no ajv / ajv-formats in $oracle/node_modules"; exit 77; }
[ -f "$openapi" ] || { echo "SKIP: no $openapi (Qdrant's published schema, from shared/)"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/filter-qdrant.XXXXXX" 2>/dev/null || mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
jcheck() { node -e "const r = JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8'));
  if (!($2)) { console.log('   ' + JSON.stringify(r).slice(0, 700)); process.exit(1); }" "$1"; }

grpc=()
[ -d "$oracle/node_modules/@grpc/grpc-js" ] && [ -d "$shared/qdrant/proto" ] &&
  grpc=(--grpc-port 0 --grpc-port-file "$tmp/gport" --proto "$shared/qdrant/proto")
node "$sd/server.mjs" --port 0 --port-file "$tmp/port" --openapi "$openapi" --oracle "$oracle" \
  --optimize-ms 50 "${grpc[@]}" > "$tmp/standin.out" 2>&1 &
pid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
[ -s "$tmp/port" ] || { echo "FAIL: the stand-in did not start: $(cat "$tmp/standin.out")"; exit 1; }
url="http://127.0.0.1:$(cat "$tmp/port")"
stats() { node -e "fetch(process.argv[1] + '/__standin/stats').then((r) => r.text()).then((t) => process.stdout.write(t))" "$url"; }

cp -r "$src/examples/corpus" "$tmp/corpus"
C=$tmp/corpus
cat > "$tmp/q.yaml" <<EOF
vectors: {emb: {type: dense, column: emb, distance: cosine}}
datasource:
  uri: $C
  payload_fields: {id: id, text: text, meta: meta}
vectorstore: {type: qdrant, url: $url, collection_name: filtered}
loader: {batch_size: 500, concurrency: 2}
EOF
cd "$tmp"
"$V" --quiet load run q.yaml > load.json 2> load.err || { cat load.err; echo "FAIL: load into the stand-in"; exit 1; }
ok "loaded the corpus into the stand-in"
T='{"must":[{"key":"id","range":{"gte":"$id"}}],"must_not":[{"key":"meta.lang","match":{"any":["de"]}}],"should":[{"key":"meta.score","range":{"lt":0.3}},{"key":"text","match":{"text":"9"}}]}'
"$V" --quiet generate-queries q.yaml -n 40 --filter-template "$T" --output tq.parquet 2> g.err || fail "generate-queries: $(cat g.err)"
"$V" --quiet brute-force q.yaml --queries tq.parquet -k 10 --output gt.parquet 2> b.err || fail "brute-force: $(cat b.err)"
"$V" --quiet bench q.yaml --queries tq.parquet --ground-truth gt.parquet -k 10 --json > bench.json 2> bench.err || fail "bench: $(cat bench.err)"
jcheck bench.json "r.recall === 1 && r.filtered_queries === 40 && r.errors === 0" &&
  ok "per-query filters through Qdrant's Query: recall 1 against the exact filtered truth" || fail "bench: $(cat bench.json)"
F='{"must":[{"key":"meta.lang","match":{"value":"en"}},{"key":"id","range":{"lt":40}}]}'
"$V" --quiet generate-queries q.yaml -n 20 --seed 9 --output q20.parquet 2>/dev/null
"$V" --quiet brute-force q.yaml --queries q20.parquet -k 10 --filter "$F" --output gt20.parquet 2> b2.err || fail "brute-force --filter: $(cat b2.err)"
"$V" --quiet bench q.yaml --queries q20.parquet --ground-truth gt20.parquet -k 10 --filter "$F" --json > bench2.json 2> bench2.err || fail "bench --filter: $(cat bench2.err)"
jcheck bench2.json "r.recall === 1 && r.filtered_queries === 20" && ok "--filter through Qdrant: recall 1" || fail "bench --filter: $(cat bench2.json)"
# the same filtered searches over gRPC (QueryPoints.filter as qdrant.Filter), same collection
if [ ${#grpc[@]} -gt 0 ]; then
  for _ in $(seq 100); do [ -s "$tmp/gport" ] && break; sleep 0.1; done
  sed "s|collection_name: filtered}|collection_name: filtered, prefer_grpc: true, grpc_port: $(cat "$tmp/gport")}|" q.yaml > g.yaml
  "$V" --quiet bench g.yaml --queries tq.parquet --ground-truth gt.parquet -k 10 --json > gbench.json 2> gbench.err || fail "bench over gRPC: $(cat gbench.err)"
  jcheck gbench.json "r.recall === 1 && r.filtered_queries === 40 && r.errors === 0" &&
    ok "per-query filters through gRPC QueryBatch: recall 1" || fail "gRPC bench: $(cat gbench.json)"
  "$V" --quiet bench g.yaml --queries q20.parquet --ground-truth gt20.parquet -k 10 --filter "$F" --json > gbench2.json 2> gbench2.err || fail "gRPC bench --filter: $(cat gbench2.err)"
  jcheck gbench2.json "r.recall === 1 && r.filtered_queries === 20" && ok "--filter through gRPC: recall 1" || fail "gRPC bench --filter: $(cat gbench2.json)"
else
  echo "SKIP (part): no @grpc/grpc-js or protos: the gRPC half"
fi
stats > stats.json
jcheck stats.json "r.filtered_queries >= (${#grpc[@]} ? 120 : 60) && r.invalid === 0 && r.rejected === 0 && r.unmodelled === 0" &&
  ok "every filtered Query reached the stand-in with its filter, all requests schema-valid" || fail "stand-in stats: $(cat stats.json | head -c 600)"
[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all qdrant filter checks passed"
