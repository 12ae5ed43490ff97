#!/usr/bin/env bash
# Remote reads under injected network faults (issue 10, "Fault injection"): the bundled corpus
# (2 files x 3000 rows) published on the HF stand-in (nginx) and, when VF_S3_ENDPOINT is set, in
# an S3 bucket (radosgw, SigV4), read through the fault proxy (tests/services/faultproxy: drop,
# lost, delay, reset, truncate, truncate-lie, 429, 500, 503 for a seeded fraction of requests):
#  - 10% faults, every mode, two seeds per backend: `cat --with-id` is byte-identical to the
#    local read and `scan --json` gives the same rows and checksum (a short or cut body is caught,
#    never decoded); retries are logged, and counted in --json when vforge reports them;
#  - 100% faults (503, 500, drop): exit 1 with a message naming the URI, within the retry budget.
# HF_ENDPOINT / AWS_ENDPOINT_URL point vforge at the proxy; the proxy keeps the Host header, so
# SigV4 signatures verify at radosgw.  Skips (77) without the HF stand-in (VF_HF_ENDPOINT) or
# while this vforge cannot read hf:// URIs.
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
V=${VFORGE:?set VFORGE to the vforge binary}
proxy="$src/tests/services/faultproxy/proxy.mjs"
[ -n "${VF_HF_ENDPOINT:-}" ] && [ -n "${VF_HF_ROOT:-}" ] || { echo "SKIP: HF stand-in not running (VF_HF_ENDPOINT unset)"; exit 77; }
command -v node >/dev/null || { echo "SKIP: node not installed"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/faults-reads.XXXXXX" 2>/dev/null || mktemp -d)
repo="relfaults-$$"
bucket="vf-relfaults-$$"
pids=()
s3_cleanup() { :; }
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  s3_cleanup
  rm -rf "$tmp" "$VF_HF_ROOT/repos/vftest/$repo" "$VF_HF_ROOT/api/vftest/$repo"
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
unset HF_TOKEN VFORGE_CA_BUNDLE
export VFORGE_REMOTE_RETRIES=8
ID='vf_point_id(filename, file_row_number)'
mkdir -p "$tmp/c/data"
cp "$src"/examples/corpus/rank00/*.parquet "$tmp/c/data/"
bash "$src/tests/services/hf/publish.sh" "$tmp/c" vftest "$repo" > /dev/null || { echo "FAIL: publish"; exit 1; }
"$V" cat --with-id "$ID" --id-root "$tmp/c" "$tmp/c" > "$tmp/local.jsonl" 2>/dev/null || { echo "FAIL: local cat"; exit 1; }
"$V" scan --json "$tmp/c" > "$tmp/local.scan" 2>/dev/null || { echo "FAIL: local scan"; exit 1; }
if ! HF_ENDPOINT=$VF_HF_ENDPOINT "$V" inspect "hf://datasets/vftest/$repo" > /dev/null 2> "$tmp/err"; then
  echo "SKIP: this vforge cannot read hf:// yet: $(head -c 300 "$tmp/err")"; exit 77
fi

ppid_=
# start_proxy NAME TARGET ARGS... -> $purl
start_proxy() {
  local name=$1 target=$2; shift 2
  node "$proxy" --target "$target" --port 0 --port-file "$tmp/$name.port" --stats "$tmp/$name.stats" "$@" > "$tmp/$name.out" 2>&1 &
  ppid_=$!; pids+=("$ppid_")
  for _ in $(seq 100); do [ -s "$tmp/$name.port" ] && break; sleep 0.1; done
  [ -s "$tmp/$name.port" ] || { echo "FAIL: proxy did not start: $(cat "$tmp/$name.out")"; exit 1; }
  purl="http://127.0.0.1:$(cat "$tmp/$name.port")"
}
stop_proxy() { kill "$ppid_" 2>/dev/null; wait "$ppid_" 2>/dev/null; }
jget() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
total_faults=0 total_requests=0 runs=0 nruns=0
# faulted NAME BACKEND URI TARGET SEED: cat + scan through a 10% proxy equal the local read
faulted() {
  local name=$1 backend=$2 uri=$3 target=$4 seed=$5
  start_proxy "$name" "$target" --rate 0.1 --seed "$seed" --delay-ms 300 --retry-after 1
  local envv
  if [ "$backend" = hf ]; then envv="HF_ENDPOINT=$purl"; else envv="AWS_ENDPOINT_URL=$purl"; fi
  local t0; t0=$(date +%s)
  env "$envv" timeout 120 "$V" cat --with-id "$ID" "$uri" > "$tmp/$name.jsonl" 2> "$tmp/$name.err"; local rc1=$?
  env "$envv" timeout 120 "$V" --threads 2 scan --json "$uri" > "$tmp/$name.scan" 2> "$tmp/$name.serr"; local rc2=$?
  cat "$tmp/$name.serr" >> "$tmp/$name.err"
  stop_proxy
  local nf nreq modes retr
  nf=$(jget "$tmp/$name.stats" 'r["faults_total"]'); nreq=$(jget "$tmp/$name.stats" 'r["requests"]')
  modes=$(jget "$tmp/$name.stats" '" ".join(f"{k}:{v}" for k, v in r["faults"].items() if v)')
  retr=$(grep -c 'retrying' "$tmp/$name.err")
  total_faults=$((total_faults + nf)); total_requests=$((total_requests + nreq)); nruns=$((nruns + 2))
  if [ $rc1 -ne 0 ] || [ $rc2 -ne 0 ]; then
    fail "$name: under 10% faults ($nf: $modes) cat exit $rc1, scan exit $rc2: $(grep -v retrying "$tmp/$name.err" | head -c 600)"
    return
  fi
  local sretr
  sretr=$(grep -c 'retrying' "$tmp/$name.serr")
  if cmp -s "$tmp/local.jsonl" "$tmp/$name.jsonl" && python3 - "$tmp/local.scan" "$tmp/$name.scan" "$sretr" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert (a["rows"], a["checksum"]) == (b["rows"], b["checksum"]), (a, b)
# the summary reports the retries (scan --json remote_retries, when this vforge has it)
if "remote_retries" in b:
    assert b["remote_retries"] >= int(sys.argv[3]), ("remote_retries", b["remote_retries"], "logged", sys.argv[3])
PY
  then
    runs=$((runs + 2))
    ok "$name: $nf faults in $nreq requests ($modes), $retr retries logged: cat identical to local, scan checksum identical ($(( $(date +%s) - t0 )) s)"
  else
    fail "$name: output differs from the local read under faults ($modes)"
  fi
}
# never NAME BACKEND URI TARGET: faults that never clear -> exit 1, clear message, bounded time
never() {
  local name=$1 backend=$2 uri=$3 target=$4
  start_proxy "$name" "$target" --rate 1 --modes 503,500,drop --seed 3 --retry-after 1
  local envv
  if [ "$backend" = hf ]; then envv="HF_ENDPOINT=$purl"; else envv="AWS_ENDPOINT_URL=$purl"; fi
  local t0; t0=$(date +%s)
  env "$envv" VFORGE_REMOTE_RETRIES=3 timeout 120 "$V" cat "$uri" > /dev/null 2> "$tmp/$name.err"; local rc=$?
  local el=$(( $(date +%s) - t0 ))
  stop_proxy
  total_faults=$((total_faults + $(jget "$tmp/$name.stats" 'r["faults_total"]')))
  total_requests=$((total_requests + $(jget "$tmp/$name.stats" 'r["requests"]')))
  local msg; msg=$(grep -v retrying "$tmp/$name.err" | head -c 500)
  if [ $rc -eq 1 ] && [ $el -lt 60 ] && echo "$msg" | grep -q "127.0.0.1\|$uri\|$repo\|$bucket"; then
    ok "$name: faults that never clear: exit 1 after $el s: $msg"
  else fail "$name: rc $rc after $el s: $msg"; fi
}

faulted hf-s1 hf "hf://datasets/vftest/$repo" "$VF_HF_ENDPOINT" 101
faulted hf-s2 hf "hf://datasets/vftest/$repo" "$VF_HF_ENDPOINT" 202
never hf-never hf "hf://datasets/vftest/$repo" "$VF_HF_ENDPOINT"

if [ -n "${VF_S3_ENDPOINT:-}" ] && curl --help all 2>/dev/null | grep -q aws-sigv4; then
  s3curl() { curl -sS --fail --aws-sigv4 "aws:amz:us-east-1:s3" --user "$VF_S3_ACCESS_KEY:$VF_S3_SECRET_KEY" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$@"; }
  keys="data/batch_00000000.parquet data/batch_00000001.parquet"
  s3_cleanup() {
    for k in $keys; do s3curl -X DELETE "$VF_S3_ENDPOINT/$bucket/$k" >/dev/null 2>&1; done
    s3curl -X DELETE "$VF_S3_ENDPOINT/$bucket" >/dev/null 2>&1
  }
  if s3curl -X PUT "$VF_S3_ENDPOINT/$bucket" > /dev/null; then
    for k in $keys; do s3curl -T "$tmp/c/$k" "$VF_S3_ENDPOINT/$bucket/$k" > /dev/null || fail "s3 put $k"; done
    export AWS_ACCESS_KEY_ID=$VF_S3_ACCESS_KEY AWS_SECRET_ACCESS_KEY=$VF_S3_SECRET_KEY AWS_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true
    if AWS_ENDPOINT_URL=$VF_S3_ENDPOINT "$V" inspect "s3://$bucket" > /dev/null 2> "$tmp/err"; then
      faulted s3-s1 s3 "s3://$bucket" "$VF_S3_ENDPOINT" 303
      faulted s3-s2 s3 "s3://$bucket" "$VF_S3_ENDPOINT" 404
      never s3-never s3 "s3://$bucket" "$VF_S3_ENDPOINT"
    else
      echo "note: this vforge cannot read s3:// yet: $(head -c 300 "$tmp/err")"
    fi
  else
    fail "cannot create the S3 bucket $bucket at $VF_S3_ENDPOINT"
  fi
else
  echo "note: VF_S3_ENDPOINT unset (or curl without --aws-sigv4): S3 not checked"
fi
if [ -n "${VF_RELIABILITY_FIGURES:-}" ]; then
  echo "faults_reads faults=$total_faults requests=$total_requests runs_survived=$runs/$nruns" >> "$VF_RELIABILITY_FIGURES"
fi
echo "figures: $total_faults faults injected in $total_requests requests; $runs of $nruns faulted reads identical"
[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all remote-read fault-injection checks passed"
