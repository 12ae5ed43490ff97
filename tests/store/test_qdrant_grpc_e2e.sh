#!/usr/bin/env bash
# vforge load / bench / reindex / delete over Qdrant's gRPC API (vectorstore.prefer_grpc: true,
# issue 18) against the stand-in (tests/services/qdrant-standin: one process serving REST and
# gRPC over the same collections; NOT a live Qdrant).  Every load is checked point by point over
# REST (the stand-in's dump vs `vforge cat --with-id` of the corpus, floats as float32):
#   1. the bundled corpus over gRPC only (no REST call), the api-key metadata on every call,
#      indexing deferred and restored; `load inspect` shows the transport; a wrong key fails;
#   2. the dense + sparse + multivector + payload corpus with every collection setting (per-vector
#      datatype / on_disk / hnsw / quantization, sparse modifier / index, collection hnsw,
#      optimizers with max_optimization_threads, product quantization, shards, replication,
#      write consistency, on_disk_payload), payload indexes (mode all, a field_types override)
#      and defer: hnsw_m — and the same config over REST gives the same collection;
#   3. faults: RESOURCE_EXHAUSTED (retry-after) / UNAVAILABLE / DEADLINE_EXCEEDED on upserts,
#      connection resets, lost responses (create and upsert applied, answer lost), an
#      INVALID_ARGUMENT naming the point; kill -9 during the load + --resume;
#   4. the message limit: batches split under grpc_max_message_mb; a server limit below the
#      client's is a final error (RESOURCE_EXHAUSTED, not retried);
#   5. bench (Points/QueryBatch) with search params, the same recall as REST;
#   6. payload_indexes: mode specific, a type the column cannot hold is refused; defer: none;
#      prepare / load / finalize in separate processes restore hnsw m from the metadata;
#   7. load reindex (hnsw / quantization patched, green) and load delete (without --yes: exit 2,
#      nothing dropped; with --yes: the collection and the load states are gone);
#   8. TLS: https:// url -> gRPC over TLS (ALPN h2) with VFORGE_CA_BUNDLE.
# Skips (77) without node, the npm oracles (ajv, @grpc/grpc-js, @grpc/proto-loader, DuckDB),
# the shared schema and protos, or a libcurl without HTTP/2.
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
V=${VFORGE:?set VFORGE to the vforge binary}
oracle="$src/tests/oracle"
sd="$src/tests/services/qdrant-standin"
shared=${VF_SHARED:-$src/../shared}
openapi="$shared/qdrant/openapi.json"
protos="$shared/qdrant/proto"
command -v node >/dev/null || { echo "SKIP: node not installed"; exit 77; }
for m in ajv ajv-formats @grpc/grpc-js @grpc/proto-loader protobufjs @duckdb/node-api; do
  [ -d "$oracle/node_modules/$m" ] || { echo "SKIP: no $m in $oracle/node_modules (scripts/install-deps.sh runs npm ci there)"; exit 77; }
done
[ -f "$openapi" ] && [ -f "$protos/points_service.proto" ] || { echo "SKIP: no $openapi / $protos (Qdrant's published API, from shared/)"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/qdrant-grpc-e2e.XXXXXX" 2>/dev/null || mktemp -d)
pid=
pids=()
cleanup() {
  for p in "${pids[@]}" $pid; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
KEY="vf-grpc-key-$$"
. "$sd/e2e_lib.sh"

# --- 0. the stand-in's own check of its gRPC side
if node "$sd/selftest_grpc.mjs" --openapi "$openapi" --oracle "$oracle" --proto "$protos" > "$tmp/selftest.txt" 2>&1; then
  ok "$(tail -1 "$tmp/selftest.txt")"
else
  cat "$tmp/selftest.txt"; echo "FAIL: the Qdrant stand-in's gRPC selftest"; exit 1
fi

standin_start --grpc-port 0 --grpc-port-file "$tmp/gport" --proto "$protos"
[ -n "$gport" ] || { echo "FAIL: the stand-in wrote no gRPC port: $(cat "$tmp/standin.out")"; exit 1; }

# the gRPC keys of every config (e2e_lib.sh config); PREFER_GRPC=false makes a REST one
vs_lines() { printf '  prefer_grpc: %s\n  grpc_port: %s\n' "${PREFER_GRPC:-true}" "$gport"; }
# vf NAME SUBCOMMAND [ARGS]: vforge load SUBCOMMAND on $tmp/NAME.yaml -> rc; .json, .err
vf() {
  local n=$1 sub=$2
  shift 2
  (cd "$tmp" && QDRANT_API_KEY="${APIKEY:-$KEY}" timeout 120 "$V" --quiet load "$sub" "$tmp/$n.yaml" \
     --state-dir "$tmp/state-$n" "$@" > "$tmp/$n.json" 2> "$tmp/$n.err")
}
load() { vf "$1" run --json "${@:2}"; }
reset_stats() { admin POST /__standin/stats/reset > /dev/null; }
faults() { admin POST /__standin/faults "$1" > /dev/null; }
stat() { admin GET /__standin/stats > "$tmp/stats.json"; jcheck "$tmp/stats.json" "$1"; }
show_stats() { node -e "const r = JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8'));
  console.log('   stats: ' + JSON.stringify({requests: r.requests, rest: r.rest_requests, grpc: r.grpc_requests, by_rpc: r.by_rpc,
    by_grpc_status: r.by_grpc_status, invalid: r.invalid_samples.slice(0, 2), rejected: r.rejected_samples.slice(0, 2)}).slice(0, 900))" "$tmp/stats.json"; }

# --- 1. the bundled corpus over gRPC
corpus="$src/examples/corpus"
"$V" cat --with-id 'vf_point_id(filename, file_row_number)' "$corpus" > "$tmp/ex.jsonl" || { echo "FAIL: cannot read $corpus"; exit 1; }
EXV="--vec emb=emb:dense --payload id=id --payload text=text --payload meta=meta"
EXVEC="  emb: {type: dense, column: emb, distance: cosine}"
EXPAY="{id: id, text: text, meta: meta}"
config ex ex "$corpus" "$EXVEC" "$EXPAY"
if QDRANT_API_KEY=$KEY "$V" load inspect "$tmp/ex.yaml" > "$tmp/inspect.json" 2> "$tmp/inspect.err" &&
   jcheck "$tmp/inspect.json" "r.transport === 'grpc (port $gport)'"; then
  ok "load inspect shows the transport: $(node -e "console.log(JSON.parse(require('fs').readFileSync(process.argv[1])).transport)" "$tmp/inspect.json")"
else
  fail "load inspect: $(head -c 300 "$tmp/inspect.err")"
fi
reset_stats
load ex
rc=$?
if [ $rc -ne 0 ] && grep -q "no HTTP/2 support" "$tmp/ex.err"; then
  echo "SKIP: $(head -c 300 "$tmp/ex.err")"; exit 77
fi
if [ $rc -eq 0 ]; then
  jcheck "$tmp/ex.json" "r.points === 6000 && r.files === 2 && r.retries === 0" && ok "ex: report 6000 points, 0 retries" || fail "ex: report"
  check_points ex ex "$tmp/ex.jsonl" $EXV
  no_invalid ex
  stat "r.rest_requests === 0 && r.grpc_requests === r.requests && r.auth_failures === 0 && r.api_key_seen === r.requests &&
        r.by_rpc['qdrant.Points/Upsert'] >= 12 && r.by_rpc['qdrant.Points/Count'] >= 1 && r.upsert_wait.false >= 12 && r.upsert_wait.true === 0 &&
        !r.by_rpc['qdrant.Points/CreateFieldIndex']" &&
    ok "ex: every call over gRPC ($(node -e "console.log(JSON.parse(require('fs').readFileSync(process.argv[1])).grpc_requests)" "$tmp/stats.json")), none over REST; api-key metadata on each; Upsert with wait=false; no payload index by default" ||
    { fail "ex: transport / routes"; show_stats; }
  coll_state ex
  jcheck "$tmp/coll.json" "r.status === 'green' && r.points === 6000 && r.indexing_threshold === 10000 &&
      r.history.some((h) => /->0\$/.test(h)) && r.config.metadata.vforge_defer === 'indexing_threshold'" &&
    ok "ex: indexing_threshold 0 during the load, restored to 10000, green" || fail "ex: deferred indexing"
else
  fail "ex: load run exited $rc: $(head -c 600 "$tmp/ex.err")"
fi
APIKEY=wrong-key load ex
rc=$?
[ $rc -eq 1 ] && grep -qE 'PERMISSION_DENIED|UNAUTHENTICATED' "$tmp/ex.err" && ! grep -q "wrong-key" "$tmp/ex.err" &&
  ok "a wrong api key fails (exit 1, $(grep -oE 'PERMISSION_DENIED|UNAUTHENTICATED' "$tmp/ex.err" | head -1)), the key not echoed" ||
  fail "wrong api key: rc $rc $(head -c 300 "$tmp/ex.err")"

# --- 2. dense + sparse + multivector + payload, every setting, payload indexes, defer hnsw_m
node "$sd/gen_corpus.mjs" "$oracle" "$tmp/mc" 3 400 > /dev/null || { echo "FAIL: gen_corpus"; exit 1; }
"$V" cat --with-id 'vf_point_id(filename, file_row_number)' "$tmp/mc" > "$tmp/mc.jsonl" || fail "mc: vforge cat"
MCV="--vec dense=dense:dense --vec sparse=sparse:sparse --vec colbert=colbert:multi --payload title=title --payload n=n --payload meta=meta"
MCVEC="  dense: {type: dense, column: dense, distance: cosine, datatype: float16, on_disk: true, hnsw: {m: 32, ef_construct: 200}, quantization: {scalar: {type: int8, quantile: 0.99, always_ram: true}}}
  sparse: {type: sparse, column: sparse, modifier: idf, index: {on_disk: true, datatype: float16, full_scan_threshold: 5000}}
  colbert: {type: multivector, column: colbert, distance: dot, comparator: max_sim, datatype: uint8, quantization: {binary: {always_ram: true}}}"
MCPAY="{title: title, n: n, meta: meta}"
MCPAR="{hnsw: {m: 8, ef_construct: 64, full_scan_threshold: 20000}, optimizers: {indexing_threshold: 5000, max_optimization_threads: 2, default_segment_number: 2}, quantization: {product: {compression: x16, always_ram: false}}, shard_number: 2, replication_factor: 2, write_consistency_factor: 2, on_disk_payload: true, defer: hnsw_m, payload_indexes: {mode: all, field_types: {title: text}}}"
config mc mc "$tmp/mc" "$MCVEC" "$MCPAY" "$MCPAR"
reset_stats
if load mc; then
  jcheck "$tmp/mc.json" "r.points === 1200 && r.files === 3" && ok "mc: report 1200 points from 3 files" || fail "mc: report"
  check_points mc mc "$tmp/mc.jsonl" $MCV
  no_invalid mc
  stat "r.rest_requests === 0 && r.by_rpc['qdrant.Points/CreateFieldIndex'] === 2" || { fail "mc: transport / field indexes"; show_stats; }
  coll_state mc
  cp "$tmp/coll.json" "$tmp/mc.coll.json"
  jcheck "$tmp/coll.json" "((p, d, c, s) => d.datatype === 'float16' && d.on_disk === true && d.hnsw_config.m === 32 && d.hnsw_config.ef_construct === 200 &&
      d.quantization_config.scalar.type === 'int8' && Math.abs(d.quantization_config.scalar.quantile - 0.99) < 1e-6 &&
      d.quantization_config.scalar.always_ram === true && c.datatype === 'uint8' && c.distance === 'Dot' &&
      c.multivector_config.comparator === 'max_sim' && c.quantization_config.binary.always_ram === true &&
      s.modifier === 'idf' && s.index.on_disk === true && s.index.datatype === 'float16' && s.index.full_scan_threshold === 5000 &&
      p.shard_number === 2 && p.replication_factor === 2 && p.write_consistency_factor === 2 && p.on_disk_payload === true &&
      r.config.hnsw_config.m === 8 && r.config.hnsw_config.ef_construct === 64 && r.config.hnsw_config.full_scan_threshold === 20000 &&
      r.config.optimizer_config.max_optimization_threads === 2 && r.config.optimizer_config.default_segment_number === 2 &&
      r.config.optimizer_config.indexing_threshold === 5000 &&
      r.config.quantization_config.product.compression === 'x16' && r.config.quantization_config.product.always_ram === false)(
      r.config.params, r.config.params.vectors.dense, r.config.params.vectors.colbert, r.config.params.sparse_vectors.sparse)" &&
    ok "mc: every vector and collection setting arrived over gRPC" || fail "mc: collection settings"
  jcheck "$tmp/coll.json" "r.history.includes('patch hnsw m 8->0') && r.history.includes('patch vector dense hnsw m 32->0') &&
      r.history.includes('patch hnsw m 0->8') && r.history.includes('patch vector dense hnsw m 0->32') &&
      !r.history.some((h) => /indexing_threshold \\d+->0\$/.test(h)) && r.status === 'green' &&
      r.config.metadata.vforge_defer === 'hnsw_m' && r.config.metadata.vforge_hnsw_m === 8" &&
    ok "mc: defer hnsw_m: m 0 (collection and vector dense) during the load, both restored, threshold untouched" || fail "mc: defer hnsw_m"
  curl -sS -H "api-key: $KEY" "$url/collections/mc" > "$tmp/mcinfo.json"
  jcheck "$tmp/mcinfo.json" "((s) => s.title && s.title.data_type === 'text' && s.n && s.n.data_type === 'integer' && !s.meta)(r.result.payload_schema)" &&
    ok "mc: payload indexes before the upload: title (text, field_types), n (integer, inferred from INT32), none for the JSON column" ||
    fail "mc: payload indexes"
  # the same config over REST makes the same collection
  PREFER_GRPC=false config mcr mcr "$tmp/mc" "$MCVEC" "$MCPAY" "$MCPAR"
  if load mcr; then
    coll_state mcr
    # key order aside, numbers as float32 (Qdrant keeps quantile etc. as f32 whichever API set it)
    node -e "const a = JSON.parse(require('fs').readFileSync(process.argv[1])), b = JSON.parse(require('fs').readFileSync(process.argv[2]));
      const canon = (v) => Array.isArray(v) ? v.map(canon) : v && typeof v === 'object'
        ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon(v[k])])) : typeof v === 'number' ? Math.fround(v) : v;
      const same = ['params', 'hnsw_config', 'optimizer_config', 'quantization_config', 'metadata']
        .every((k) => JSON.stringify(canon(a.config[k])) === JSON.stringify(canon(b.config[k])));
      if (!same) console.log('   grpc: ' + JSON.stringify(canon(a.config)).slice(0, 900) + '\n   rest: ' + JSON.stringify(canon(b.config)).slice(0, 900));
      process.exit(same ? 0 : 1)" "$tmp/mc.coll.json" "$tmp/coll.json" &&
      ok "mcr: the same config over REST made the same collection (params, hnsw, optimizers, quantization, metadata)" ||
      fail "mcr: REST and gRPC collections differ"
    check_points mcr mcr "$tmp/mc.jsonl" $MCV
  else
    fail "mcr: REST load exited $?: $(head -c 400 "$tmp/mcr.err")"
  fi
else
  fail "mc: load run exited $?: $(head -c 600 "$tmp/mc.err")"
fi
MCSIMPLE="  dense: {type: dense, column: dense, distance: cosine}
  sparse: {type: sparse, column: sparse}
  colbert: {type: multivector, column: colbert, distance: dot, comparator: max_sim}"

# --- 3. faults
reset_stats
faults '{"reset": true, "fail_next": 6, "grpc_status": [8, 14, 4], "retry_after": 1, "only": "upsert_points"}'
config f1 f1 "$tmp/mc" "$MCSIMPLE" "$MCPAY"
if load f1; then
  jcheck "$tmp/f1.json" "r.points === 1200 && r.retries >= 6" && ok "RESOURCE_EXHAUSTED / UNAVAILABLE / DEADLINE_EXCEEDED on upserts: completed, $(node -e "console.log(JSON.parse(require('fs').readFileSync(process.argv[1])).retries)" "$tmp/f1.json") retries reported" || fail "f1: report"
  stat "r.faults_injected === 6 && r.by_grpc_status['8'] === 2 && r.by_grpc_status['14'] === 2 && r.by_grpc_status['4'] === 2" || { fail "f1: faults"; show_stats; }
  grep -q "RESOURCE_EXHAUSTED (8).*retrying in 1.00 s" "$tmp/f1.err" && ok "f1: the retry-after hint is honoured and each retry logged" || fail "f1: retry log: $(grep -m2 retrying "$tmp/f1.err")"
  check_points f1 f1 "$tmp/mc.jsonl" $MCV
else
  fail "f1: exited $?: $(head -c 600 "$tmp/f1.err")"
fi
reset_stats
faults '{"reset": true, "reset_next": 3}'
config f2 f2 "$tmp/mc" "$MCSIMPLE" "$MCPAY"
if load f2; then
  stat "r.grpc_resets === 3" && ok "3 connection resets: retried, completed" || { fail "f2: resets"; show_stats; }
  check_points f2 f2 "$tmp/mc.jsonl" $MCV
else
  fail "f2: exited $?: $(head -c 600 "$tmp/f2.err")"
fi
# lost responses: the create and two upserts are applied but answered UNAVAILABLE
faults '{"reset": true, "fail_next": 1, "grpc_status": [14], "apply": true, "only": "create_collection"}'
config f3 f3 "$tmp/mc" "$MCSIMPLE" "$MCPAY"
if load f3; then
  grep -q "already exists after the create request" "$tmp/f3.err" && ok "a lost create response: ALREADY_EXISTS on the retry, the schema checked, accepted" || fail "f3: no reconcile message"
  check_points f3 f3 "$tmp/mc.jsonl" $MCV
else
  fail "f3: exited $?: $(head -c 600 "$tmp/f3.err")"
fi
reset_stats
faults '{"reset": true, "fail_next": 2, "grpc_status": [14], "apply": true, "only": "upsert_points"}'
config f4 f4 "$tmp/mc" "$MCSIMPLE" "$MCPAY"
if load f4; then
  stat "r.retries_seen >= 2" && ok "lost upsert responses: re-sent (the stand-in saw $(node -e "console.log(JSON.parse(require('fs').readFileSync(process.argv[1])).retries_seen)" "$tmp/stats.json") identical messages again), no duplicate" || fail "f4: retries_seen"
  check_points f4 f4 "$tmp/mc.jsonl" $MCV
else
  fail "f4: exited $?: $(head -c 600 "$tmp/f4.err")"
fi
# INVALID_ARGUMENT names the batch and the point the server names
faults '{"reset": true, "fail_next": 1, "grpc_status": [3], "message": "Wrong input: points[2]: Vector dimension error (stand-in)", "only": "upsert_points"}'
config f5 f5 "$tmp/mc" "$MCSIMPLE" "$MCPAY"
vf f5 run
rc=$?
# the point the message names is the corpus row it says (its id recomputed from the file row)
named=$(grep -oE "points\[2\] is point [0-9a-f-]{36}, file row [0-9]+" "$tmp/f5.err" | head -1)
nid=$(echo "$named" | grep -oE "[0-9a-f-]{36}")
nrow=$(echo "$named" | grep -oE "[0-9]+\$")
batch_file=$(grep -oE "from [^ ]+part-00[0-9].parquet" "$tmp/f5.err" | head -1 | sed 's/^from //')
want=$([ -n "$batch_file" ] && [ -n "$nrow" ] && "$V" cat "$batch_file" --offset 0 --limit $((nrow + 1)) --columns id --with-id 'vf_point_id(filename, file_row_number)' | tail -1 |
  node -e "console.log(JSON.parse(require('fs').readFileSync(0, 'utf8')).__id__)")
[ $rc -eq 2 ] && grep -q "INVALID_ARGUMENT: Wrong input: points\[2\]" "$tmp/f5.err" && [ -n "$nid" ] && [ "$nid" = "$want" ] &&
  ok "INVALID_ARGUMENT: exit 2 naming the batch's file, rows and ids and points[2] (point $nid, file row $nrow)" || fail "f5: rc $rc named '$named' want '$want': $(head -c 700 "$tmp/f5.err")"
faults '{"reset": true}'
# kill -9 during the load, then --resume: exactly the corpus
faults '{"reset": true, "delay_ms": 400, "only": "upsert_points"}'
BATCH=100 PREFETCH=400 config kr kr "$tmp/mc" "$MCSIMPLE" "$MCPAY"
reset_stats
(cd "$tmp" && QDRANT_API_KEY=$KEY exec "$V" --quiet load run "$tmp/kr.yaml" --state-dir "$tmp/state-kr" --checkpoint-batches 1 > /dev/null 2> "$tmp/kr1.err") &
kpid=$!
disown "$kpid" 2>/dev/null # no job-status line when it is killed
for _ in $(seq 300); do
  admin GET /__standin/stats > "$tmp/stats.json"
  node -e "process.exit(JSON.parse(require('fs').readFileSync(process.argv[1])).upserted_points >= 300 ? 0 : 1)" "$tmp/stats.json" && break
  sleep 0.1
done
kill -9 $kpid 2>/dev/null
while kill -0 $kpid 2>/dev/null; do sleep 0.1; done
faults '{"reset": true}'
if vf kr run --resume --json; then
  check_points kr kr "$tmp/mc.jsonl" $MCV
  jcheck "$tmp/kr.json" "r.points < 1200" && ok "kill -9 + --resume: continued from the checkpoint ($(node -e "console.log(JSON.parse(require('fs').readFileSync(process.argv[1])).points)" "$tmp/kr.json") points sent after the kill)" || fail "kr: resumed from the start"
else
  fail "kr: --resume exited $?: $(head -c 600 "$tmp/kr.err")"
fi
no_invalid "faults"

# --- 4. the message limit (a second stand-in, 1 MiB)
s1pid=$pid s1url=$url s1port=$port s1gport=$gport
mkdir -p "$tmp/s2"
tmp0=$tmp
tmp="$tmp0/s2"
standin_start --grpc-port 0 --grpc-port-file "$tmp/gport" --proto "$protos" --grpc-max-mb 1
pids+=("$pid")
tmp=$tmp0
# 4000 x 256-d points in row groups of 2000: a 2000-point batch is about 2 MiB of protobuf
node -e "const n = 4000, d = 256, b = Buffer.alloc(8 + n * d * 4); b.writeUInt32LE(n, 0); b.writeUInt32LE(d, 4);
  let x = 7; for (let i = 0; i < n * d; i++) { x = (x * 1103515245 + 12345) % 2147483648; b.writeFloatLE(x / 2147483648 - 0.5, 8 + 4 * i); }
  require('fs').writeFileSync(process.argv[1], b)" "$tmp/big.fbin"
"$V" --quiet convert "$tmp/big.fbin" --output "$tmp/big" --rows-per-file 2000 --row-group-rows 2000 > /dev/null 2>&1 || fail "convert big.fbin"
"$V" cat --with-id 'vf_point_id(filename, file_row_number)' "$tmp/big" > "$tmp/big.jsonl" || fail "big: vforge cat"
BIGVEC="  emb: {type: dense, column: emb, distance: dot}"
BATCH=2000 PREFETCH=2000 config ml1 ml1 "$tmp/big" "$BIGVEC" "{id: id}" "" "  grpc_max_message_mb: 1"
reset_stats
if load ml1; then
  stat "r.max_grpc_message_bytes <= 1048576 && r.max_grpc_message_bytes > 700000 && r.by_rpc['qdrant.Points/Upsert'] >= 6 && r.invalid === 0" &&
    ok "2000-point batches (about 2 MiB) split under the server's 1 MiB limit ($(node -e "const r = JSON.parse(require('fs').readFileSync(process.argv[1])); console.log(r.by_rpc['qdrant.Points/Upsert'] + ' messages, largest ' + r.max_grpc_message_bytes + ' bytes')" "$tmp/stats.json"))" ||
    { fail "ml1: split"; show_stats; }
  check_points ml1 ml1 "$tmp/big.jsonl" --vec emb=emb:dense --payload id=id
else
  fail "ml1: exited $?: $(head -c 600 "$tmp/ml1.err")"
fi
BATCH=2000 PREFETCH=2000 config ml2 ml2 "$tmp/big" "$BIGVEC" "{id: id}"
load ml2
rc=$?
[ $rc -eq 2 ] && grep -q "too large.*lower that setting" "$tmp/ml2.err" && ! grep -qi "retry" "$tmp/ml2.err" &&
  ok "a message over the server's limit: RESOURCE_EXHAUSTED, final (exit 2 naming grpc_max_message_mb, no retry)" || fail "ml2: rc $rc $(head -c 600 "$tmp/ml2.err")"
kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
pid=$s1pid url=$s1url port=$s1port gport=$s1gport

# --- 5. bench over gRPC: Points/QueryBatch with search params; the same recall as REST
"$V" --quiet generate-queries "$tmp/mc" -n 40 --seed 3 --columns n > /dev/null 2>&1 &&
  "$V" --quiet brute-force "$tmp/mc" --queries "$tmp/mc/eval/queries_40.parquet" -k 5 --column dense > /dev/null 2>&1 || fail "bench: queries / ground truth"
reset_stats
bench() { QDRANT_API_KEY=$KEY "$V" --quiet bench "$tmp/$1.yaml" --column dense --queries "$tmp/mc/eval/queries_40.parquet" \
  --ground-truth "$tmp/mc/eval/brute_force_queries_40_k5.parquet" -k 5 --exact --hnsw-ef 77 --json > "$tmp/$1.bench.json" 2> "$tmp/$1.bench.err"; }
if bench mc && bench mcr; then
  jcheck "$tmp/mc.bench.json" "r.recall === 1 && r.errors === 0 && r.queries === 40" && ok "bench over gRPC: recall@5 1 with exact search" || fail "bench grpc: $(cat "$tmp/mc.bench.json")"
  node -e "const a = JSON.parse(require('fs').readFileSync(process.argv[1])), b = JSON.parse(require('fs').readFileSync(process.argv[2]));
    process.exit(a.recall === b.recall && a.recall_min === b.recall_min ? 0 : 1)" "$tmp/mc.bench.json" "$tmp/mcr.bench.json" &&
    ok "bench: gRPC and REST give the same recall" || fail "bench: recall differs"
  stat "r.by_rpc['qdrant.Points/QueryBatch'] >= 1 && r.search_params.some((p) => p.hnsw_ef === 77 && p.exact === true)" &&
    ok "bench: Points/QueryBatch carried hnsw_ef and exact" || { fail "bench: search params"; show_stats; }
else
  fail "bench: $(head -c 400 "$tmp/mc.bench.err") $(head -c 400 "$tmp/mcr.bench.err")"
fi

# --- 6. payload indexes (specific, refused types), defer none, separate processes
config pi pi "$tmp/mc" "$MCSIMPLE" "$MCPAY" "{payload_indexes: {mode: specific, fields: [title], field_types: {title: keyword}}}"
if load pi; then
  curl -sS -H "api-key: $KEY" "$url/collections/pi" > "$tmp/piinfo.json"
  jcheck "$tmp/piinfo.json" "((s) => Object.keys(s).length === 1 && s.title.data_type === 'keyword')(r.result.payload_schema)" &&
    ok "payload_indexes specific: only title (keyword)" || fail "pi: payload schema"
else
  fail "pi: exited $?: $(head -c 400 "$tmp/pi.err")"
fi
config pr pr "$tmp/mc" "$MCSIMPLE" "$MCPAY" "{payload_indexes: {mode: all, field_types: {n: keyword}}}"
load pr
rc=$?
[ $rc -eq 2 ] && grep -q "field_types.n: keyword, but column 'n' (INT32) holds integers" "$tmp/pr.err" &&
  ok "a payload index type the column cannot hold is refused (exit 2): $(grep -o "field_types.n.*" "$tmp/pr.err" | head -c 140)" || fail "pr: rc $rc $(head -c 400 "$tmp/pr.err")"
config dn dn "$tmp/mc" "$MCSIMPLE" "$MCPAY" "{defer: none}"
if load dn; then
  coll_state dn
  jcheck "$tmp/coll.json" "!r.history.some((h) => /->0\$/.test(h)) && r.config.metadata.vforge_defer === 'none' && r.status === 'green'" &&
    ok "defer: none: neither the threshold nor m touched" || fail "dn: history"
else
  fail "dn: exited $?: $(head -c 400 "$tmp/dn.err")"
fi
config jb jb "$tmp/mc" "$MCSIMPLE" "$MCPAY" "{defer: hnsw_m, hnsw: {m: 24}}"
jobs_ok=1
vf jb prepare || { jobs_ok=0; fail "jobs: prepare: $(head -c 300 "$tmp/jb.err")"; }
coll_state jb
jcheck "$tmp/coll.json" "r.config.hnsw_config.m === 0" || fail "jobs: m not 0 after prepare"
vf jb load --no-manage-indexing || { jobs_ok=0; fail "jobs: load: $(head -c 300 "$tmp/jb.err")"; }
sed -i 's/hnsw: {m: 24}/hnsw: {}/' "$tmp/jb.yaml" # the finalizing process does not know m
vf jb finalize || { jobs_ok=0; fail "jobs: finalize: $(head -c 300 "$tmp/jb.err")"; }
if [ $jobs_ok -eq 1 ]; then
  coll_state jb
  jcheck "$tmp/coll.json" "r.config.hnsw_config.m === 24 && r.status === 'green' && r.points === 1200" &&
    ok "prepare / load / finalize apart: m restored to 24 from the collection metadata" || fail "jobs: m not restored"
fi

# --- 7. reindex and delete
sed -i 's/hnsw: {m: 8, ef_construct: 64, full_scan_threshold: 20000}/hnsw: {m: 20, ef_construct: 90}/; s/quantization: {product: {compression: x16, always_ram: false}}/quantization: {scalar: {type: int8, always_ram: true}}/; s/hnsw: {m: 32, ef_construct: 200}/hnsw: {m: 40}/' "$tmp/mc.yaml"
if vf mc reindex; then
  coll_state mc
  jcheck "$tmp/coll.json" "r.config.hnsw_config.m === 20 && r.config.hnsw_config.ef_construct === 90 && r.config.quantization_config.scalar.type === 'int8' &&
      r.config.params.vectors.dense.hnsw_config.m === 40 && r.status === 'green' && r.history.some((h) => /index settings changed/.test(h))" &&
    ok "load reindex: hnsw (collection and vector) and quantization patched, waited for green" || fail "reindex: collection"
else
  fail "reindex: exited $?: $(head -c 400 "$tmp/mc.err")"
fi
config dl dl "$tmp/mc" "$MCSIMPLE" "$MCPAY"
vf dl prepare && vf dl load || fail "dl: prepare / load: $(head -c 300 "$tmp/dl.err")" # not finalized: states stay
vf dl delete
rc=$?
coll_state dl
[ $rc -eq 2 ] && grep -q "would drop collection 'dl'.*1200 points" "$tmp/dl.err" && jcheck "$tmp/coll.json" "r !== null && r.points === 1200" &&
  ls "$tmp/state-dl"/rank*.json > /dev/null 2>&1 &&
  ok "load delete without --yes: says what it would drop, exit 2, nothing dropped" || fail "delete without --yes: rc $rc $(head -c 300 "$tmp/dl.err")"
if vf dl delete --yes --json; then
  coll_state dl
  jcheck "$tmp/dl.json" "r.existed === true && r.dropped === true && r.points === 1200" && jcheck "$tmp/coll.json" "r === null" &&
    ! ls "$tmp/state-dl"/rank*.json > /dev/null 2>&1 &&
    ok "load delete --yes: the collection and its load states are gone" || fail "delete --yes: state"
else
  fail "delete --yes: exited $?: $(head -c 300 "$tmp/dl.err")"
fi
vf dl reindex
rc=$?
[ $rc -eq 2 ] && grep -q "does not exist" "$tmp/dl.err" && ok "load reindex of a missing collection: exit 2" || fail "reindex missing: rc $rc"

# --- 8. TLS (self-signed, SAN 127.0.0.1)
if command -v openssl > /dev/null && openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" \
     -addext "subjectAltName=IP:127.0.0.1" -keyout "$tmp/key.pem" -out "$tmp/cert.pem" > /dev/null 2>&1; then
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  STANDIN_SCHEME=https STANDIN_CA="$tmp/cert.pem" standin_start --grpc-port 0 --grpc-port-file "$tmp/gport" --proto "$protos" \
    --tls-cert "$tmp/cert.pem" --tls-key "$tmp/key.pem"
  export STANDIN_CA="$tmp/cert.pem"
  config tl tl "$tmp/mc" "$MCSIMPLE" "$MCPAY"
  if VFORGE_CA_BUNDLE="$tmp/cert.pem" load tl; then
    check_points tl tl "$tmp/mc.jsonl" $MCV
    stat "r.rest_requests === 0 && r.grpc_requests > 0" && ok "https:// url: gRPC over TLS (ALPN h2) with VFORGE_CA_BUNDLE" || { fail "tl: transport"; show_stats; }
  else
    fail "tl: exited $?: $(head -c 600 "$tmp/tl.err")"
  fi
  load tl
  rc=$?
  [ $rc -ne 0 ] && grep -qiE "certificate|SSL" "$tmp/tl.err" && ok "TLS: an unknown CA is refused (exit $rc)" || fail "tl: unverified TLS accepted (rc $rc)"
  unset STANDIN_CA
else
  echo "note: no openssl: TLS not tested"
fi

[ $fails -eq 0 ] || { echo "$fails failure(s); stand-in log: $(tail -5 "$tmp/standin.log")"; exit 1; }
echo "all qdrant gRPC end-to-end tests passed"
