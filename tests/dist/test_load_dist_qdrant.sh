#!/usr/bin/env bash
# vforge load-dist into Qdrant — against the Qdrant stand-in (tests/services/qdrant-standin:
# NOT a live Qdrant; it validates every request against Qdrant's published OpenAPI schema and
# models collections, points and exact counts) — with the Slurm engine when the suite's
# single-node Slurm runs (VF_SLURM=1), else the local engine.  Checks:
#   1. 4 shards: the stand-in's points equal the corpus point by point, all requests valid,
#      the api key on every request (so the workers got it from their environment);
#   2. secrets: the api key appears nowhere under the run directory (configs, manifest, logs,
#      Slurm output) nor in vforge's stdout/stderr; the shard configs say ${QDRANT_API_KEY};
#   3. --finalize RUN_ID of the finished run verifies the count again;
#   4. an api key written literally, or coming from an unset variable's default, is refused
#      (exit 2) without a run directory and without the key in the message.
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
V=${VFORGE:?set VFORGE to the vforge binary}
oracle="$src/tests/oracle"
sd="$src/tests/services/qdrant-standin"
shared=${VF_SHARED:-$src/../shared}
openapi="$shared/qdrant/openapi.json"
command -v node >/dev/null || { echo "SKIP: node not installed"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
[ -d "$oracle/node_modules/ajv" ] || { echo "SKIP: no ajv in $oracle/node_modules"; exit 77; }
[ -f "$openapi" ] || { echo "SKIP: no $openapi (Qdrant's published schema, from shared/)"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/load-dist-qdrant.XXXXXX" 2>/dev/null || mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
. "$src/tests/dist/lib.sh"
engine=local
if [ "${VF_SLURM:-}" = 1 ] && command -v sbatch > /dev/null; then engine=slurm; fi
echo "info: engine $engine"

KEY="s3cr3t-dist-$$-$RANDOM$RANDOM"
node "$sd/server.mjs" --port 0 --port-file "$tmp/port" --openapi "$openapi" --oracle "$oracle" \
  --api-key "$KEY" --optimize-ms 100 --log "$tmp/standin.log" > "$tmp/standin.out" 2>&1 &
pid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
[ -s "$tmp/port" ] || { echo "FAIL: the stand-in did not start: $(cat "$tmp/standin.out")"; exit 1; }
url="http://127.0.0.1:$(cat "$tmp/port")"
admin() { node --input-type=module -e "
  const [m, u] = process.argv.slice(1);
  const r = await fetch(u, { method: m });
  process.stdout.write(await r.text());
  if (!r.ok) process.exit(1);" "$1" "$url$2"; }

make_corpus "$tmp/c" || { echo "FAIL: cannot build the test corpus"; exit 1; }
# qconfig NAME API_KEY_LINE
qconfig() {
  cat > "$tmp/$1.yaml" <<EOC
vectors:
  emb: {type: dense, column: emb, distance: cosine}
datasource:
  uri: $tmp/c
  payload_fields: {id: id, text: text, meta: meta}
vectorstore:
  type: qdrant
  url: $url
  $2
  collection_name: dist_$1
loader: {batch_size: 500, prefetch_size: 1000, concurrency: 2, retries: 3}
resources: {cpus: 1, memory: 1}
EOC
}
runs="$tmp/runs"

# --- 1 + 2
qconfig q 'api_key: ${QDRANT_API_KEY}'
if QDRANT_API_KEY="$KEY" "$V" load-dist "$tmp/q.yaml" --engine $engine --poll 0.3 --num-shards 4 --runs-dir "$runs" --json \
     > "$tmp/q.json" 2> "$tmp/q.err"; then
  jq_py "$tmp/q.json" "r['state'] == 'finalized' and r['verified'] and r['stored'] == 18000 and len(r['shards']) == 4" &&
    ok "4 shards ($engine engine) -> Qdrant stand-in: 18000 points verified" || fail "report: $(cat "$tmp/q.json")"
  admin GET "/__standin/dump?collection=dist_q" > "$tmp/q.dump" || fail "no collection dist_q in the stand-in"
  if out=$(node "$sd/check_dump.mjs" "$tmp/corpus.jsonl" "$tmp/q.dump" --vec emb=emb:dense --payload id=id \
             --payload text=text --payload meta=meta); then ok "stand-in points: $out"; else fail "stand-in points: $out"; fi
  admin GET /__standin/stats > "$tmp/stats.json"
  jq_py "$tmp/stats.json" "r['invalid'] == 0 and r['rejected'] == 0 and r['auth_failures'] == 0 and r['api_key_seen'] == r['requests']" &&
    ok "every request valid and carrying the api key" || fail "stand-in stats: $(head -c 600 "$tmp/stats.json")"
  run=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['run_dir'])" "$tmp/q.json")
  [ "$engine" = local ] || ls "$run"/logs/slurm-*.out > /dev/null 2>&1 || fail "no Slurm output files in $run/logs"
  if grep -rlF -- "$KEY" "$run" "$tmp/q.json" "$tmp/q.err"; then fail "the api key is written above"
  else ok "the api key appears nowhere in the run directory ($(find "$run" -type f | wc -l) files) or the output"; fi
  grep -q '^  "api_key": "${QDRANT_API_KEY}"$' "$run/shards/002.yaml" && grep -q '"\*\*\*\*"' "$run/config.json" &&
    ok "shard configs reference \${QDRANT_API_KEY}; config.json masks it" || fail "secret references: $(grep api_key "$run/shards/002.yaml" "$run/config.json")"
  # --- 3. finalize again from another process
  QDRANT_API_KEY="$KEY" "$V" load-dist --finalize "$(basename "$run")" --runs-dir "$runs" 2> "$tmp/fin.err" &&
    grep -q "18000 points verified" "$tmp/fin.err" && ok "--finalize RUN_ID verifies again" || fail "--finalize: $(tail -3 "$tmp/fin.err")"
  grep -qF -- "$KEY" "$tmp/fin.err" && fail "the key in --finalize's output"
else
  fail "load-dist exited $?: $(tail -5 "$tmp/q.err")"
fi

# --- 4. secrets that could only travel through a file are refused
n_before=$(ls "$runs" 2>/dev/null | wc -l)
qconfig lit "api_key: $KEY"
"$V" load-dist "$tmp/lit.yaml" --engine local --num-shards 2 --runs-dir "$runs" > "$tmp/lit.out" 2> "$tmp/lit.err"
rc=$?
[ $rc -eq 2 ] && grep -q "vectorstore.api_key is a secret" "$tmp/lit.err" && ! grep -qF -- "$KEY" "$tmp/lit.err" "$tmp/lit.out" &&
  ok "a literal api key: exit 2, key not echoed" || fail "literal key: rc $rc $(cat "$tmp/lit.err")"
qconfig dflt "api_key: \${VF_DIST_UNSET_TOKEN:-$KEY}"
env -u VF_DIST_UNSET_TOKEN "$V" load-dist "$tmp/dflt.yaml" --engine local --runs-dir "$runs" 2> "$tmp/dflt.err"
rc=$?
[ $rc -eq 2 ] && ! grep -qF -- "$KEY" "$tmp/dflt.err" && ok "a key from an unset variable's default: exit 2" || fail "default key: rc $rc $(cat "$tmp/dflt.err")"
[ "$(ls "$runs" | wc -l)" -eq "$n_before" ] && ok "refused runs leave no run directory" || fail "a refused run left a directory: $(ls "$runs")"
grep -rlF -- "$KEY" "$runs" && fail "the key reached a run directory"

[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all load-dist Qdrant checks passed"
