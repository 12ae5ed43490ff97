# Shared helpers of the Qdrant end-to-end tests (tests/store/test_qdrant*_e2e.sh), sourced after
# they set: src, V (vforge), oracle, sd (this folder), openapi, tmp, KEY.  Provides fail/ok (and
# $fails), standin_start [ARGS...] (sets pid, port, url; with --grpc-port also gport), config,
# admin, jcheck, coll_state, check_points, no_invalid.
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

# standin_start [EXTRA ARGS]: the stand-in (killed at exit by the caller's trap); writes
# $tmp/port (and $tmp/gport with --grpc-port), sets url (http://127.0.0.1:PORT)
standin_start() {
  rm -f "$tmp/port" "$tmp/gport"
  node "$sd/server.mjs" --port 0 --port-file "$tmp/port" --openapi "$openapi" --oracle "$oracle" \
    --api-key "$KEY" --optimize-ms 300 --log "$tmp/standin.log" "$@" > "$tmp/standin.out" 2>&1 &
  pid=$!
  for _ in $(seq 300); do [ -s "$tmp/port" ] && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  [ -s "$tmp/port" ] || { echo "FAIL: the stand-in did not start: $(cat "$tmp/standin.out")"; exit 1; }
  port=$(cat "$tmp/port")
  url="${STANDIN_SCHEME:-http}://127.0.0.1:$port"
  gport=$(cat "$tmp/gport" 2>/dev/null || true)
}

# admin METHOD PATH [BODY]: the stand-in's /__standin routes
admin() {
  if command -v curl > /dev/null; then
    curl -sSf --max-time 30 ${STANDIN_CA:+--cacert "$STANDIN_CA"} -X "$1" -H 'content-type: application/json' \
      ${3:+--data-binary "$3"} "$url$2"
    return
  fi
  node --input-type=module -e "
    const [m, u, b] = process.argv.slice(1);
    const r = await fetch(u, { method: m, body: b || undefined, headers: { 'content-type': 'application/json' } });
    process.stdout.write(await r.text());
    if (!r.ok) process.exit(1);" "$1" "$url$2" "${3:-}"
}
# jcheck FILE EXPR: EXPR (JavaScript over r, the file's JSON) must hold
jcheck() {
  node -e "const r = JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8'));
    if (!($2)) { console.log('   ' + JSON.stringify(r).slice(0, 700)); process.exit(1); }" "$1"
}
# the stand-in's view of collection $1 -> $tmp/coll.json
coll_state() { admin GET /__standin/collections | node -e "
  const all = JSON.parse(require('fs').readFileSync(0, 'utf8'));
  process.stdout.write(JSON.stringify(all.find((c) => c.name === process.argv[1]) || null))" "$1" > "$tmp/coll.json"; }
# check_points NAME COLLECTION CORPUS_JSONL ARGS...: the stand-in's dump equals the corpus
check_points() {
  if ! admin GET "/__standin/dump?collection=$2" > "$tmp/$1.dump"; then fail "$1: no collection $2 in the stand-in"; return; fi
  if out=$(node "$sd/check_dump.mjs" "$3" "$tmp/$1.dump" "${@:4}"); then ok "$1: $out"; else fail "$1: $out"; fi
}
# no_invalid WHAT: every request so far was valid against the schema and accepted
no_invalid() {
  admin GET /__standin/stats > "$tmp/stats.json"
  node -e "const r = JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8'));
    for (const x of [...r.invalid_samples, ...r.rejected_samples].slice(0, 5)) console.log('   refused: ' + JSON.stringify(x).slice(0, 1500));" "$tmp/stats.json"
  jcheck "$tmp/stats.json" "r.invalid === 0 && r.rejected === 0 && r.unmodelled === 0" &&
    ok "$1: all $(node -e "console.log(JSON.parse(require('fs').readFileSync(process.argv[1])).requests)" "$tmp/stats.json") requests valid against the Qdrant schema" ||
    fail "$1: invalid / rejected / unmodelled requests (the stand-in's stats above)"
}

# config NAME COLLECTION CORPUS_DIR VECTORS_YAML PAYLOAD_FIELDS [PARAMS] [EXTRA VECTORSTORE LINES]
# -> $tmp/NAME.yaml.  A `vs_lines` function, when the test defines one, adds lines to every
# vectorstore (the gRPC keys); BATCH / PREFETCH size the loader (500 / 2000).
config() {
  cat > "$tmp/$1.yaml" <<EOC
vectors:
$4
datasource:
  uri: $3
  payload_fields: $5
vectorstore:
  type: qdrant
  url: $url
  collection_name: $2
  api_key: \${QDRANT_API_KEY}
$(declare -F vs_lines > /dev/null && vs_lines)
${6:+  params: $6}
${7:-}
loader: {batch_size: ${BATCH:-500}, prefetch_size: ${PREFETCH:-2000}, concurrency: 3, retries: 5}
EOC
}
