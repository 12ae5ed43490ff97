#!/usr/bin/env bash
# `vforge load run` into Qdrant, end to end, against the Qdrant stand-in
# (tests/services/qdrant-standin/server.mjs: NOT a live Qdrant; it validates every request against
# Qdrant's published OpenAPI schema, ../shared/qdrant/openapi.json, and models collections,
# points, exact counts and the green/yellow/grey/red status).  Checks, point by point (the
# stand-in's dump vs `vforge cat --with-id` of the corpus, floats as float32):
#   1. the bundled corpus (examples/corpus, dense + payload): ids, vectors, payloads; no invalid
#      request; the api-key header on every request; indexing deferred (threshold 0) during
#      the load and restored, collection green; a wrong api key fails;
#   2. a multi-file corpus written by DuckDB (dense + sparse + multivector + payload) with
#      hnsw / optimizers / quantization / shard params passed through;
#   3. injected 429 / 5xx (with Retry-After) on upserts, then on every route: the same point
#      set, and the JSON report counts the retries;
#   4. an injected optimizer error fails finalize (exit 1) with the stand-in's message;
#   5. a grey status (pending optimisation) is triggered and the load finishes;
#   6. an existing collection with another vector schema is refused (exit 2) unless recreate;
#   7. prepare / two workers / finalize as separate processes restore the threshold.
# Runs the stand-in's own selftest first.  Skips (77) without node, the oracle node_modules (ajv),
# the shared schema, or while this vforge build has no Qdrant store.
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
V=${VFORGE:?set VFORGE to the vforge binary}
oracle="$src/tests/oracle"
sd="$src/tests/services/qdrant-standin"
shared=${VF_SHARED:-$src/../shared}
openapi="$shared/qdrant/openapi.json"
command -v node >/dev/null || { echo "SKIP: node not installed"; exit 77; }
[ -d "$oracle/node_modules/ajv" ] && [ -d "$oracle/node_modules/ajv-formats" ] ||
  { echo "SKIP: no ajv / ajv-formats in $oracle/node_modules (scripts/install-deps.sh runs npm ci there)"; exit 77; }
[ -f "$openapi" ] || { echo "SKIP: no $openapi (Qdrant's published schema, from shared/)"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/qdrant-e2e.XXXXXX" 2>/dev/null || mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
KEY="vf-e2e-key-$$"
. "$sd/e2e_lib.sh"

# --- 0. the stand-in's own check
if node "$sd/selftest.mjs" --openapi "$openapi" --oracle "$oracle" > "$tmp/selftest.txt" 2>&1; then
  ok "$(tail -1 "$tmp/selftest.txt")"
else
  cat "$tmp/selftest.txt"; echo "FAIL: the Qdrant stand-in's selftest"; exit 1
fi

# --- start the stand-in (killed and waited for at exit)
standin_start

# load NAME [API_KEY]: vforge load run -> rc; $tmp/NAME.json (report), $tmp/NAME.err
load() {
  (cd "$tmp" && QDRANT_API_KEY="${2:-$KEY}" timeout 60 "$V" --quiet load run "$tmp/$1.yaml" \
     --state-dir "$tmp/state-$1" --json > "$tmp/$1.json" 2> "$tmp/$1.err")
}
# --- 1. the bundled corpus
corpus="$src/examples/corpus"
"$V" cat --with-id 'vf_point_id(filename, file_row_number)' "$corpus" > "$tmp/ex.jsonl" || { echo "FAIL: cannot read $corpus"; exit 1; }
EXV="--vec emb=emb:dense --payload id=id --payload text=text --payload meta=meta"
config ex ex "$corpus" "  emb: {type: dense, column: emb, distance: cosine}" "{id: id, text: text, meta: meta}"
load ex
rc=$?
if [ $rc -eq 2 ] && grep -qi 'qdrant' "$tmp/ex.err" && grep -qiE 'not in this build|not supported|unsupported|not available|not built' "$tmp/ex.err"; then
  echo "SKIP: this vforge build has no Qdrant store yet: $(head -c 300 "$tmp/ex.err") (the stand-in's selftest passed)"
  exit 77
fi
if [ $rc -eq 0 ]; then
  jcheck "$tmp/ex.json" "r.points === 6000 && r.files === 2 && r.retries === 0" && ok "ex: report 6000 points, 0 retries" || fail "ex: report"
  check_points ex ex "$tmp/ex.jsonl" $EXV
  no_invalid ex
  jcheck "$tmp/stats.json" "r.auth_failures === 0 && r.api_key_seen === r.requests && r.by_route.count_points >= 1 && r.by_route.upsert_points >= 12" &&
    ok "ex: api-key on every request, upserts in batches, an exact count" || fail "ex: api key / routes"
  jcheck "$tmp/stats.json" "r.max_body_bytes < 32 * 1024 * 1024" || fail "ex: a body over 32 MiB"
  node -e "const r = JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8'));
    console.log('info: ex: ' + r.requests + ' requests, at most ' + r.max_in_flight + ' in flight, largest body ' +
      r.max_body_bytes + ' bytes, upserts with wait=true ' + r.upsert_wait.true + ' / wait=false ' + r.upsert_wait.false)" "$tmp/stats.json"
  coll_state ex
  jcheck "$tmp/coll.json" "r.status === 'green' && r.points === 6000 && r.indexing_threshold === 10000 &&
      r.history.some((h) => /->0\$/.test(h) || /^create indexing_threshold=0\$/.test(h))" &&
    ok "ex: indexing deferred (threshold 0) during the load, restored to 10000, green" || fail "ex: deferred indexing"
else
  fail "ex: load run exited $rc: $(head -c 600 "$tmp/ex.err")"
fi
load ex wrong-key
rc=$?
[ $rc -ne 0 ] && grep -qiE '401|403|api key|unauthori|forbidden' "$tmp/ex.err" && ok "a wrong api key fails (exit $rc)" ||
  fail "wrong api key: rc $rc $(head -c 300 "$tmp/ex.err")"
admin POST /__standin/stats/reset > /dev/null

# --- 2. a multi-file corpus: dense + sparse + multivector + payload, params passed through
if [ -d "$oracle/node_modules/@duckdb/node-api" ] && node "$sd/gen_corpus.mjs" "$oracle" "$tmp/mc" 3 400 > /dev/null; then
  "$V" cat --with-id 'vf_point_id(filename, file_row_number)' "$tmp/mc" > "$tmp/mc.jsonl" || fail "mc: vforge cat"
  config mc mc "$tmp/mc" "  dense: {type: dense, column: dense, distance: cosine}
  sparse: {type: sparse, column: sparse}
  colbert: {type: multivector, column: colbert, distance: dot, comparator: max_sim}" "{title: title, n: n, meta: meta}" \
    "{hnsw: {m: 8, ef_construct: 64}, optimizers: {indexing_threshold: 5000}, quantization: {scalar: {type: int8, quantile: 0.99, always_ram: true}}, shard_number: 2}"
  if load mc; then
    jcheck "$tmp/mc.json" "r.points === 1200 && r.files === 3" && ok "mc: report 1200 points from 3 files" || fail "mc: report"
    check_points mc mc "$tmp/mc.jsonl" --vec dense=dense:dense --vec sparse=sparse:sparse --vec colbert=colbert:multi \
      --payload title=title --payload n=n --payload meta=meta
    no_invalid mc
    coll_state mc
    jcheck "$tmp/coll.json" "r.status === 'green' && r.indexing_threshold === 5000 && r.config.hnsw_config.m === 8 &&
        r.config.hnsw_config.ef_construct === 64 && r.config.quantization_config && r.config.quantization_config.scalar.type === 'int8' &&
        r.config.params.shard_number === 2 && r.config.params.vectors.colbert.multivector_config.comparator === 'max_sim' &&
        r.config.params.vectors.colbert.distance === 'Dot' && r.config.params.sparse_vectors.sparse" &&
      ok "mc: vectors and params passed through, threshold set to the configured 5000" || fail "mc: collection config"
  else
    fail "mc: load run exited $?: $(head -c 600 "$tmp/mc.err")"
  fi
else
  echo "note: no DuckDB in $oracle/node_modules: multi-file sparse/multivector corpus not tested"
fi

# --- 3. injected 429 / 5xx: the same point set, retries reported
admin POST /__standin/stats/reset > /dev/null
admin POST /__standin/faults '{"reset": true, "fail_next": 6, "status": [429, 503, 500], "retry_after": 1, "only": "upsert_points"}' > /dev/null
config r1 ex_retry "$corpus" "  emb: {type: dense, column: emb, distance: cosine}" "{id: id, text: text, meta: meta}"
if load r1; then
  jcheck "$tmp/r1.json" "r.points === 6000 && r.retries > 0" && ok "429/503/500 on upserts: completed, report retries $(node -e "console.log(JSON.parse(require('fs').readFileSync(process.argv[1])).retries)" "$tmp/r1.json")" ||
    fail "r1: report should count retries"
  admin GET /__standin/stats > "$tmp/stats.json"
  jcheck "$tmp/stats.json" "r.faults_injected === 6 && r.by_status['429'] >= 2 && r.by_status['503'] >= 2" || fail "r1: faults not injected"
  check_points r1 ex_retry "$tmp/ex.jsonl" $EXV
else
  fail "r1: load under 429/5xx exited $?: $(head -c 600 "$tmp/r1.err")"
fi
admin POST /__standin/faults '{"reset": true, "fail_next": 3, "status": 503, "retry_after": 0}' > /dev/null
config r2 ex_retry2 "$corpus" "  emb: {type: dense, column: emb, distance: cosine}" "{id: id, text: text, meta: meta}"
if load r2; then
  jcheck "$tmp/r2.json" "r.points === 6000" && ok "503 on the first requests of every kind: completed" || fail "r2: report"
  check_points r2 ex_retry2 "$tmp/ex.jsonl" $EXV
else
  fail "r2: load with 503 on collection requests exited $?: $(head -c 600 "$tmp/r2.err")"
fi
no_invalid "429/5xx"

# --- 4. an optimizer error fails finalize with Qdrant's message
msg="Service internal error: stand-in optimizer failure $$: No space left on device"
admin POST /__standin/faults "{\"reset\": true, \"optimizer_error\": \"$msg\"}" > /dev/null
config oe ex_opterr "$corpus" "  emb: {type: dense, column: emb, distance: cosine}" "{id: id, text: text, meta: meta}"
load oe
rc=$?
[ $rc -eq 1 ] && grep -qF "stand-in optimizer failure $$: No space left on device" "$tmp/oe.err" &&
  ok "optimizer error: exit 1 with the message" || fail "optimizer error: rc $rc $(head -c 600 "$tmp/oe.err")"

# --- 5. grey: the pending optimisation is triggered, then green
admin POST /__standin/faults '{"reset": true, "grey": true}' > /dev/null
config gr ex_grey "$corpus" "  emb: {type: dense, column: emb, distance: cosine}" "{id: id, text: text, meta: meta}"
if load gr; then
  coll_state ex_grey
  jcheck "$tmp/coll.json" "r.status === 'green' && r.history.some((h) => /^grey/.test(h)) && r.history.some((h) => /triggered/.test(h))" &&
    ok "grey: triggered by a PATCH, then green" || fail "grey: history"
else
  fail "grey: exited $?: $(head -c 600 "$tmp/gr.err")"
fi
admin POST /__standin/faults '{"reset": true}' > /dev/null

# --- 6. an existing collection with another vector schema: exit 2, or recreate
config sm ex "$corpus" "  emb: {type: dense, column: emb, distance: dot}" "{id: id, text: text, meta: meta}"
load sm
rc=$?
[ $rc -eq 2 ] && ok "another vector schema on an existing collection: exit 2" || fail "schema mismatch: rc $rc $(head -c 400 "$tmp/sm.err")"
config rc ex "$corpus" "  emb: {type: dense, column: emb, distance: dot}" "{id: id, text: text, meta: meta}" "{recreate: true}"
if load rc; then
  coll_state ex
  jcheck "$tmp/coll.json" "r.config.params.vectors.emb.distance === 'Dot' && r.points === 6000" && ok "recreate: dropped and created with Dot" || fail "recreate: collection"
  check_points rc ex "$tmp/ex.jsonl" $EXV
else
  fail "recreate: exited $?: $(head -c 400 "$tmp/rc.err")"
fi
# --- 7. prepare, two workers, finalize in separate processes: the threshold read before the load
# (kept in the collection's metadata) is restored by the finalizing process
admin POST /__standin/faults '{"reset": true}' > /dev/null
config jb ex_jobs "$corpus" "  emb: {type: dense, column: emb, distance: cosine}" "{id: id, text: text, meta: meta}"
jobs_ok=1
step() { (cd "$tmp" && QDRANT_API_KEY="$KEY" timeout 60 "$V" --quiet load "$@" "$tmp/jb.yaml" --state-dir "$tmp/state-jb" 2>> "$tmp/jb.err" > /dev/null) || { jobs_ok=0; fail "jobs: load $*: $(head -c 400 "$tmp/jb.err")"; }; }
step prepare
coll_state ex_jobs
jcheck "$tmp/coll.json" "r.indexing_threshold === 0" || fail "jobs: indexing not deferred after prepare"
step load --num-jobs 2 --job-rank 0 --no-manage-indexing &
j0=$!
step load --num-jobs 2 --job-rank 1 --no-manage-indexing
wait $j0 || jobs_ok=0
step finalize
if [ $jobs_ok -eq 1 ]; then
  coll_state ex_jobs
  jcheck "$tmp/coll.json" "r.status === 'green' && r.indexing_threshold === 10000 && r.points === 6000" &&
    ok "jobs: prepare / 2 workers / finalize: threshold restored to 10000 by another process, green" || fail "jobs: collection state"
  check_points jb ex_jobs "$tmp/ex.jsonl" $EXV
fi
no_invalid "all scenarios"

[ $fails -eq 0 ] || { echo "$fails failure(s); stand-in log: $(tail -5 "$tmp/standin.log")"; exit 1; }
echo "all qdrant end-to-end tests passed"
