#!/usr/bin/env bash
# Upserts under injected network faults (issue 10, "Fault injection"): `vforge load run` into the
# Qdrant stand-in (tests/services/qdrant-standin: NOT a live Qdrant) through the fault proxy
# (tests/services/faultproxy/proxy.mjs), which drops, loses, delays, resets and truncates
# responses (true and lying Content-Length) and answers 429 (Retry-After) / 500 / 503 for a
# seeded fraction of the requests.
#  - 10% faults, every mode, three seeds: each load completes with exactly the corpus's point set
#    (the stand-in's dump vs `vforge cat --with-id`, point by point) and its JSON report counts
#    the retries (>= the faults that failed a request);
#  - 100% faults (503, 500, drop): the load stops with exit 1 and a message naming the store and
#    the failure, within the retry budget (well under the 60 s timeout).
# The proxy's counters are summed into $VF_RELIABILITY_FIGURES (when set) for tests/RELIABILITY.md.
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
V=${VFORGE:?set VFORGE to the vforge binary}
oracle="$src/tests/oracle"
sd="$src/tests/services/qdrant-standin"
proxy="$src/tests/services/faultproxy/proxy.mjs"
shared=${VF_SHARED:-$src/../shared}
openapi="$shared/qdrant/openapi.json"
command -v node >/dev/null || { echo "SKIP: node not installed"; exit 77; }
[ -d "$oracle/node_modules/ajv" ] && [ -d "$oracle/node_modules/ajv-formats" ] ||
  { echo "SKIP: no ajv / ajv-formats in $oracle/node_modules"; exit 77; }
[ -f "$openapi" ] || { echo "SKIP: no $openapi (Qdrant's published schema, from shared/)"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/faults-qdrant.XXXXXX" 2>/dev/null || mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
# wait_port FILE PID WHAT
wait_port() {
  for _ in $(seq 150); do [ -s "$1" ] && return 0; kill -0 "$2" 2>/dev/null || break; sleep 0.1; done
  echo "FAIL: $3 did not start"; exit 1
}
KEY="vf-faults-key-$$"
node "$sd/server.mjs" --port 0 --port-file "$tmp/sport" --openapi "$openapi" --oracle "$oracle" \
  --api-key "$KEY" > "$tmp/standin.out" 2>&1 &
spid=$!; pids+=("$spid")
wait_port "$tmp/sport" "$spid" "the Qdrant stand-in"
surl="http://127.0.0.1:$(cat "$tmp/sport")"
# start_proxy NAME ARGS...: a proxy in front of the stand-in -> $purl, stats in $tmp/NAME.stats
start_proxy() {
  local name=$1; shift
  node "$proxy" --target "$surl" --port 0 --port-file "$tmp/$name.port" --stats "$tmp/$name.stats" "$@" \
    > "$tmp/$name.out" 2>&1 &
  ppid_=$!; pids+=("$ppid_")
  wait_port "$tmp/$name.port" "$ppid_" "the fault proxy"
  purl="http://127.0.0.1:$(cat "$tmp/$name.port")"
}
stop_proxy() { kill "$ppid_" 2>/dev/null; wait "$ppid_" 2>/dev/null; }
jget() { node -e "const r = JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8')); console.log(eval(process.argv[2]))" "$1" "$2"; }
corpus="$src/examples/corpus"
"$V" cat --with-id 'vf_point_id(filename, file_row_number)' "$corpus" > "$tmp/ex.jsonl" || { echo "FAIL: cannot read $corpus"; exit 1; }
EXV="--vec emb=emb:dense --payload id=id --payload text=text --payload meta=meta"
# config NAME COLLECTION URL RETRIES
config() {
  cat > "$tmp/$1.yaml" <<EOC
vectors:
  emb: {type: dense, column: emb, distance: cosine}
datasource:
  uri: $corpus
  payload_fields: {id: id, text: text, meta: meta}
vectorstore:
  type: qdrant
  url: $3
  collection_name: $2
  api_key: \${QDRANT_API_KEY}
loader: {batch_size: 100, prefetch_size: 1000, concurrency: 3, retries: $4}
EOC
}
load() {
  (cd "$tmp" && QDRANT_API_KEY="$KEY" timeout 120 "$V" --quiet load run "$tmp/$1.yaml" \
     --state-dir "$tmp/state-$1" --json > "$tmp/$1.json" 2> "$tmp/$1.err")
}
total_faults=0 total_requests=0 runs=0 total_wr=0
# --- 10% faults, all modes, three seeds
for seed in 11 22 33; do
  start_proxy p$seed --rate 0.1 --seed "$seed" --delay-ms 300 --retry-after 1
  config f$seed "faults_$seed" "$purl" 8
  t0=$(date +%s)
  load f$seed; rc=$?
  stop_proxy
  st="$tmp/p$seed.stats"
  nf=$(jget "$st" r.faults_total); nreq=$(jget "$st" r.requests)
  nfail=$(jget "$st" "r.faults_total - r.faults.delay")
  total_faults=$((total_faults + nf)); total_requests=$((total_requests + nreq))
  modes=$(jget "$st" "Object.entries(r.faults).filter(([k, v]) => v).map(([k, v]) => k + ':' + v).join(' ')")
  if [ $rc -eq 0 ]; then
    runs=$((runs + 1))
    retries=$(jget "$tmp/f$seed.json" r.retries)
    pts=$(jget "$tmp/f$seed.json" r.points)
    # upsert retries the client logged (a request dropped on a reused keep-alive connection is
    # re-sent by libcurl itself, without a retry of ours, so faults >= logged retries)
    # faults >= logged retries.  Which request a seeded fault hits depends on the order 8
    # concurrent uploads reach the proxy, so one seed may fault only requests that are not
    # retried as upserts (a collection GET, a drop re-sent by libcurl): the three seeds together
    # must show logged upsert retries, each seed must report at least the ones it logged.
    wr=$(grep -c 'PUT [^ ]*/points[^ ]*: .*retrying' "$tmp/f$seed.err")
    total_wr=$((total_wr + wr))
    [ "$pts" = 6000 ] && [ "$nf" -gt 0 ] && [ "$retries" -ge "$wr" ] &&
      ok "seed $seed: $nf faults in $nreq requests ($modes): completed in $(( $(date +%s) - t0 )) s, report: 6000 points, $retries retries" ||
      fail "seed $seed: report points $pts retries $retries (upsert retries logged $wr), faults $nf ($nfail failing: $modes)"
    curl -sSf "$surl/__standin/dump?collection=faults_$seed" > "$tmp/f$seed.dump" 2>/dev/null ||
      node -e "fetch(process.argv[1]).then((r) => r.text()).then((t) => process.stdout.write(t))" "$surl/__standin/dump?collection=faults_$seed" > "$tmp/f$seed.dump"
    if out=$(node "$sd/check_dump.mjs" "$tmp/ex.jsonl" "$tmp/f$seed.dump" $EXV); then ok "seed $seed: $out"
    else fail "seed $seed: point set differs: $out"; fi
  else
    fail "seed $seed: load under 10% faults ($nf: $modes) exited $rc: $(grep -v "retrying in\|retry [0-9]" "$tmp/f$seed.err" | tail -c 1200)"
  fi
done

[ "$runs" -eq 0 ] || [ "$total_wr" -gt 0 ] && ok "10% faults: $total_wr upsert retries logged over the seeds" ||
  fail "10% faults: no upsert retry logged in $runs completed runs"

# --- faults that never clear: stop with a clear error within the retry budget
start_proxy never --rate 1 --modes 503,500,drop --seed 5 --retry-after 1
config never faults_never "$purl" 3
t0=$(date +%s)
load never; rc=$?
el=$(( $(date +%s) - t0 ))
stop_proxy
nf=$(jget "$tmp/never.stats" r.faults_total)
total_faults=$((total_faults + nf)); total_requests=$((total_requests + $(jget "$tmp/never.stats" r.requests)))
msg=$(head -c 600 "$tmp/never.err")
if [ $rc -eq 1 ] && [ $el -lt 60 ] && echo "$msg" | grep -qiE "qdrant|$purl|127\.0\.0\.1" && echo "$msg" | grep -qiE '503|500|connection|retr|closed|reset'; then
  ok "100% faults: exit 1 after $el s and $nf faulted requests: $msg"
else
  fail "100% faults: rc $rc after $el s: $msg"
fi
grep -q "$KEY" "$tmp"/*.err "$tmp"/*.json 2>/dev/null && fail "the api key appears in vforge's output"
if [ -n "${VF_RELIABILITY_FIGURES:-}" ]; then
  echo "faults_qdrant faults=$total_faults requests=$total_requests runs_survived=$runs/3" >> "$VF_RELIABILITY_FIGURES"
fi
echo "figures: $total_faults faults injected in $total_requests requests; $runs of 3 faulted loads survived"
[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all Qdrant fault-injection checks passed"
