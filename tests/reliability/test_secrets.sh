#!/usr/bin/env bash
# Secrets (issue 10, "Security"): QDRANT_API_KEY, AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN),
# HF_TOKEN come from the environment only and appear in no output: with VFORGE_DEBUG=1 (debug
# logs on), every stdout/stderr of inspect, load inspect, load run (Qdrant stand-in requiring the
# key; the local store), cat/scan of hf:// and s3:// (also failing through a proxy answering 503,
# and with a wrong key/secret), and every file written under the work, state, store and output
# directories is scanned for each secret value (and its base64 form): absent.  `load inspect`
# shows the api key as "****".  Parts needing a service skip themselves (noted) when it is absent.
# A password in the Qdrant URL (issue 14: `url: http://user:PASSWORD@host`) is a secret too:
# `load inspect`, retry warnings and errors show `http://****@host`, a load through the stand-in
# leaves it nowhere, and load-dist refuses it written literally (writing nothing) and passes it
# as the `${VAR}` reference it came from.
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
V=${VFORGE:?set VFORGE to the vforge binary}
oracle="$src/tests/oracle"
sd="$src/tests/services/qdrant-standin"
shared=${VF_SHARED:-$src/../shared}
command -v python3 >/dev/null || { echo "skip: python3 not installed"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/secrets.XXXXXX" 2>/dev/null || mktemp -d)
repo="relsecrets-$$"
bucket="vf-relsecrets-$$"
pids=()
s3_cleanup() { :; }
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  s3_cleanup
  rm -rf "$tmp"
  [ -n "${VF_HF_ROOT:-}" ] && rm -rf "$VF_HF_ROOT/repos/vftest/$repo" "$VF_HF_ROOT/api/vftest/$repo"
}
trap cleanup EXIT
fails=0 runs=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
QKEY="qk-SECRET-$$-a1b2c3d4e5"
HTOK="hf_SECRETtoken$$xyzw"
AWSS="aws-SECRET-$$-K9q8w7e6r5t4"
ATOK="sess-SECRET-$$-Zz"
QPASS="pw-SECRET-$$-u7y6t5"
export VFORGE_DEBUG=1
mkdir -p "$tmp/work" "$tmp/logs"
# run NAME ENV... -- CMD...: run in $tmp/work with the secrets in the environment, keep outputs
run() {
  local name=$1; shift
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  (cd "$tmp/work" && env QDRANT_API_KEY="$QKEY" HF_TOKEN="$HTOK" AWS_SECRET_ACCESS_KEY="$AWSS" \
     AWS_ACCESS_KEY_ID="${AWS_ACCESS_KEY_ID:-AKIDEXAMPLE}" AWS_SESSION_TOKEN="$ATOK" "${envs[@]}" \
     timeout 120 "$@" > "$tmp/logs/$name.out" 2> "$tmp/logs/$name.err")
  local rc=$?
  runs=$((runs + 1))
  return $rc
}
corpus="$src/examples/corpus"
# --- local: inspect, load inspect (masked), load run into the local store
cat > "$tmp/local.yaml" <<EOC
vectors: {emb: {type: dense, column: emb, distance: cosine}}
datasource: {uri: $corpus, payload_fields: {id: id, text: text}}
vectorstore: {type: local, path: $tmp/store, collection_name: ex}
loader: {batch_size: 500}
EOC
run inspect -- "$V" inspect "$corpus" || fail "inspect"
run load-local -- "$V" load run "$tmp/local.yaml" --state-dir "$tmp/state-local" --json || fail "load run local: $(tail -2 "$tmp/logs/load-local.err")"
# --- Qdrant stand-in that requires the key
openapi="$shared/qdrant/openapi.json"
if command -v node >/dev/null && [ -d "$oracle/node_modules/ajv" ] && [ -f "$openapi" ]; then
  node "$sd/server.mjs" --port 0 --port-file "$tmp/qport" --openapi "$openapi" --oracle "$oracle" \
    --api-key "$QKEY" > "$tmp/standin.out" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do [ -s "$tmp/qport" ] && break; sleep 0.1; done
  qurl="http://127.0.0.1:$(cat "$tmp/qport")"
  cat > "$tmp/qdrant.yaml" <<EOC
vectors: {emb: {type: dense, column: emb, distance: cosine}}
datasource: {uri: $corpus, payload_fields: {id: id, text: text}}
vectorstore:
  type: qdrant
  url: $qurl
  collection_name: secrets
  api_key: \${QDRANT_API_KEY}
loader: {batch_size: 1000, retries: 1}
EOC
  run load-inspect -- "$V" load inspect "$tmp/qdrant.yaml" || fail "load inspect: $(tail -2 "$tmp/logs/load-inspect.err")"
  grep -q '\*\*\*\*' "$tmp/logs/load-inspect.out" "$tmp/logs/load-inspect.err" && ok "load inspect masks the api key as ****" ||
    fail "load inspect does not show the masked key: $(head -c 400 "$tmp/logs/load-inspect.out")"
  run load-qdrant -- "$V" load run "$tmp/qdrant.yaml" --state-dir "$tmp/state-q" --json ||
    fail "load run qdrant: $(tail -2 "$tmp/logs/load-qdrant.err")"
  run load-qdrant-wrong QDRANT_API_KEY="$QKEY-wrong" -- "$V" load run "$tmp/qdrant.yaml" --state-dir "$tmp/state-q2" &&
    fail "a wrong api key was accepted"
  # a password in the URL, through the stand-in (which ignores HTTP basic auth)
  sed "s|url: .*|url: \${QDRANT_URL}|; s|collection_name: secrets|collection_name: secrets_url|" \
    "$tmp/qdrant.yaml" > "$tmp/qurl.yaml"
  run load-qdrant-url QDRANT_URL="http://vfuser:$QPASS@${qurl#http://}" -- "$V" load run "$tmp/qurl.yaml" \
    --state-dir "$tmp/state-qurl" --json || fail "load run qdrant (password in the url): $(tail -2 "$tmp/logs/load-qdrant-url.err")"
else
  echo "note: no Qdrant stand-in (node/ajv/openapi): Qdrant part skipped"
fi
# --- a password in the Qdrant URL, no server needed: masked in load inspect, in every retry
# warning and in the error (nothing listens on port 1); load-dist refuses it written literally
# and writes the `${VAR}` reference when it came from one
cat > "$tmp/qpass.yaml" <<EOC
vectors: {emb: {type: dense, column: emb, distance: cosine}}
datasource: {uri: $corpus}
vectorstore: {type: qdrant, url: "http://vfuser:$QPASS@127.0.0.1:1", collection_name: pw}
loader: {retries: 2}
EOC
sed "s|url: \"[^\"]*\"|url: \"\${QDRANT_URL}\"|" "$tmp/qpass.yaml" > "$tmp/qpassref.yaml"
run url-inspect -- "$V" load inspect "$tmp/qpass.yaml" || fail "load inspect (password in the url)"
grep -q '"url":"http://\*\*\*\*@127.0.0.1:1"' "$tmp/logs/url-inspect.out" &&
  ok "load inspect shows the url as http://****@127.0.0.1:1" ||
  fail "load inspect url: $(grep -o '"url":"[^"]*"' "$tmp/logs/url-inspect.out")"
run url-retries -- "$V" load run "$tmp/qpass.yaml" --state-dir "$tmp/state-pw" &&
  fail "a load into a store nobody listens on succeeded"
nw=$(grep -c 'http://\*\*\*\*@127.0.0.1:1/.*retrying' "$tmp/logs/url-retries.err")
[ "$nw" -ge 2 ] && grep -q 'error: .*http://\*\*\*\*@127.0.0.1:1' "$tmp/logs/url-retries.err" &&
  ok "retry warnings ($nw) and the error show http://****@127.0.0.1:1" ||
  fail "retry warnings: $(head -c 600 "$tmp/logs/url-retries.err")"
run url-corpus -- "$V" cat "http://vfuser:$QPASS@127.0.0.1:1/x.parquet" &&
  fail "a corpus URL with a password was accepted"
grep -q 'http://\*\*\*\*@127.0.0.1:1/x.parquet' "$tmp/logs/url-corpus.err" &&
  ok "a corpus URL with a password is refused, masked" || fail "corpus URL: $(cat "$tmp/logs/url-corpus.err")"
run dist-literal -- "$V" load-dist "$tmp/qpass.yaml" --engine local --dry-run --runs-dir "$tmp/store-runs-lit"
rc=$?
if [ $rc -eq 2 ] && grep -q 'vectorstore.url is a secret' "$tmp/logs/dist-literal.err" &&
   [ -z "$(find "$tmp/store-runs-lit" -type f 2> /dev/null)" ]; then
  ok "load-dist refuses a literal password in the url and writes no run directory"
else fail "load-dist with a literal password in the url: exit $rc, $(tail -2 "$tmp/logs/dist-literal.err")"; fi
if run dist-ref QDRANT_URL="http://vfuser:$QPASS@127.0.0.1:1" -- "$V" load-dist "$tmp/qpassref.yaml" --engine local \
     --dry-run --runs-dir "$tmp/store-runs"; then
  nref=$(grep -l '"url": "${QDRANT_URL}"' "$tmp"/store-runs/*/config.yaml "$tmp"/store-runs/*/shards/*.yaml | wc -l)
  [ "$nref" -ge 2 ] && grep -q '"url":"http://\*\*\*\*@127.0.0.1:1"' "$tmp"/store-runs/*/config.json &&
    ok "load-dist writes url: \${QDRANT_URL} into config.yaml and the shard configs, config.json masked" ||
    fail "load-dist run directory: $(grep -h 'url' "$tmp"/store-runs/*/config.yaml "$tmp"/store-runs/*/config.json | head -c 400)"
else fail "load-dist with url: \${QDRANT_URL}: $(tail -2 "$tmp/logs/dist-ref.err")"; fi
# --- HF and S3 reads with tokens/secrets, also failing (503 proxy) and with a wrong secret
if [ -n "${VF_HF_ENDPOINT:-}" ] && [ -n "${VF_HF_ROOT:-}" ]; then
  mkdir -p "$tmp/c" && cp "$corpus"/rank00/*.parquet "$tmp/c/"
  bash "$src/tests/services/hf/publish.sh" "$tmp/c" vftest "$repo" > /dev/null || fail "publish"
  if run hf-cat HF_ENDPOINT="$VF_HF_ENDPOINT" -- "$V" cat "hf://datasets/vftest/$repo" --limit 3; then
    run hf-scan HF_ENDPOINT="$VF_HF_ENDPOINT" -- "$V" scan --json "hf://datasets/vftest/$repo" || fail "hf scan"
    run hf-out HF_ENDPOINT="$VF_HF_ENDPOINT" -- "$V" generate-queries "hf://datasets/vftest/$repo" -n 5 --output "$tmp/work/q.parquet" || fail "hf generate-queries"
    if command -v node >/dev/null; then
      node "$src/tests/services/faultproxy/proxy.mjs" --target "$VF_HF_ENDPOINT" --port 0 --port-file "$tmp/pport" \
        --rate 1 --modes 503 > "$tmp/proxy.out" 2>&1 &
      pids+=($!)
      for _ in $(seq 100); do [ -s "$tmp/pport" ] && break; sleep 0.1; done
      run hf-fail HF_ENDPOINT="http://127.0.0.1:$(cat "$tmp/pport")" VFORGE_REMOTE_RETRIES=1 -- "$V" cat "hf://datasets/vftest/$repo" &&
        fail "hf through a 503 proxy succeeded"
    fi
  else
    echo "note: this vforge cannot read hf:// yet ($(head -c 200 "$tmp/logs/hf-cat.err")): HF part partial"
  fi
else
  echo "note: HF stand-in not running: HF part skipped"
fi
if [ -n "${VF_S3_ENDPOINT:-}" ] && curl --help all 2>/dev/null | grep -q aws-sigv4; then
  s3curl() { curl -sS --fail --aws-sigv4 "aws:amz:us-east-1:s3" --user "$VF_S3_ACCESS_KEY:$VF_S3_SECRET_KEY" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$@"; }
  s3_cleanup() { s3curl -X DELETE "$VF_S3_ENDPOINT/$bucket/a.parquet" >/dev/null 2>&1; s3curl -X DELETE "$VF_S3_ENDPOINT/$bucket" >/dev/null 2>&1; }
  if s3curl -X PUT "$VF_S3_ENDPOINT/$bucket" > /dev/null && s3curl -T "$corpus/rank00/batch_00000000.parquet" "$VF_S3_ENDPOINT/$bucket/a.parquet" > /dev/null; then
    # the right secret: this test's secret is the service's, so the scan covers real signing
    AWSS=$VF_S3_SECRET_KEY
    run s3-cat AWS_ENDPOINT_URL="$VF_S3_ENDPOINT" AWS_ACCESS_KEY_ID="$VF_S3_ACCESS_KEY" AWS_REGION=us-east-1 AWS_SESSION_TOKEN= \
      AWS_EC2_METADATA_DISABLED=true -- "$V" cat "s3://$bucket" --limit 2 || echo "note: s3 cat failed: $(head -c 200 "$tmp/logs/s3-cat.err")"
    AWSS="aws-SECRET-$$-K9q8w7e6r5t4"
    run s3-wrong AWS_ENDPOINT_URL="$VF_S3_ENDPOINT" AWS_ACCESS_KEY_ID="$VF_S3_ACCESS_KEY" AWS_REGION=us-east-1 \
      AWS_EC2_METADATA_DISABLED=true -- "$V" cat "s3://$bucket" --limit 2 && fail "a wrong AWS secret was accepted"
  fi
else
  echo "note: VF_S3_ENDPOINT unset: S3 part skipped"
fi
# --- scan everything vforge wrote or printed for every secret (plain and base64)
python3 - "$tmp" "$QKEY" "$HTOK" "aws-SECRET-$$-K9q8w7e6r5t4" "$ATOK" "$QPASS" "${VF_S3_SECRET_KEY:-}" <<'PY'
import base64, os, sys
tmp, secrets = sys.argv[1], [s for s in sys.argv[2:] if len(s) >= 6]
needles = []
for s in secrets:
    needles += [s.encode(), base64.b64encode(s.encode()).rstrip(b"=")]
# what vforge wrote: the work dir (cwd), logs (its stdout/stderr), state dirs, stores, outputs
roots = [os.path.join(tmp, d) for d in os.listdir(tmp) if d.startswith(("work", "logs", "state", "store"))]
files = hits = 0
for root in roots:
    for dp, _, fns in os.walk(root):
        for fn in fns:
            p = os.path.join(dp, fn)
            data = open(p, "rb").read()
            files += 1
            for n in needles:
                if n in data:
                    hits += 1
                    print(f"FAIL: secret {n[:6]!r}... found in {os.path.relpath(p, tmp)}")
# the scanner itself finds a planted secret (so 0 hits above means absent, not unsearched)
assert any(n in b"x" + needles[0] + b"y" for n in needles)
assert files >= 10, files
print(f"scanned {files} files for {len(secrets)} secrets: {hits} hits")
sys.exit(1 if hits else 0)
PY
[ $? -eq 0 ] && ok "no secret in any output or file written ($runs runs)" || fail "secrets leaked (above)"
[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all secrets checks passed"
