#!/usr/bin/env bash
# bench/remote-scan: `vforge scan` of a corpus over HTTP(S) and S3 against a plain `curl`
# download of the same files, every side in one run (issue 16 item 5: a remote scan reaches
# >= 80 % of curl).  Sources: the HF stand-in (nginx) over http and https, S3 (radosgw) when
# VF_S3_ENDPOINT is set, and both again through the fault proxy (tests/services/faultproxy)
# adding DELAY_MS (20) to every request.  Per source: whole-process wall of vforge (best of RUNS)
# and of curl (best of RUNS), the ratio curl_s / vforge_s (same files, so the ratio of their
# speeds) against the 80 % target, MB received, HTTP requests (per file), vforge's peak RSS, and
# the load average beside each figure.  vforge's VFORGE_REMOTE_PARALLEL 1 and 8 (concurrent range
# requests per read) are extra rows against the same curl figure.
#
# Usage: bench/remote-scan/run.sh [CORPUS_DIR]   (default: Fashion-MNIST train converted, 1 file,
#        38 MB; else 16 copies of examples/corpus)
#   env: VFORGE (build/vforge), RUNS (3), THREADS (nproc), DELAY_MS (20), TIMEOUT (300 s per run),
#        VF_BENCH_OUT (bench/out)
# Needs the services, one instance at a time (fixed ports), so take the shared lock:
#   flock /work/wt/services.lock bash tests/services/with-services.sh bench/remote-scan/run.sh
# curl gets every file with one process (`curl --parallel --parallel-max THREADS` when there are
# several), to /dev/null, keeping its connections.  The S3 keys reach curl through a config file
# in a private temporary directory, never its command line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
V=$(realpath "${VFORGE:-$root/build/vforge}")
RUNS=${RUNS:-3}
THREADS=${THREADS:-$(nproc)}
DELAY_MS=${DELAY_MS:-20}
TIMEOUT=${TIMEOUT:-300}
[ -n "${VF_HF_ENDPOINT:-}" ] && [ -n "${VF_HF_ROOT:-}" ] || { echo "bench/remote-scan: need the HF stand-in (run under tests/services/with-services.sh)"; exit 77; }
command -v node >/dev/null || { echo "bench/remote-scan: need node (the fault proxy)"; exit 77; }
command -v curl >/dev/null || { echo "bench/remote-scan: need curl"; exit 77; }
tmp=$(mktemp -d)
chmod 700 "$tmp"
repo="bench-remote-$$"
bucket="vf-bench-$$"
pids=()
s3clean() { :; }
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  s3clean
  rm -rf "$tmp" "$VF_HF_ROOT/repos/vfbench/$repo" "$VF_HF_ROOT/api/vfbench/$repo"
}
trap cleanup EXIT
if [ $# -ge 1 ]; then
  cp -r "$1" "$tmp/c"
elif [ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
  "$V" --quiet convert /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz --output "$tmp/c"
else
  mkdir -p "$tmp/c"
  for i in $(seq -w 0 15); do for f in "$root"/examples/corpus/rank00/*.parquet; do cp "$f" "$tmp/c/r${i}_$(basename "$f")"; done; done
fi
rm -rf "$tmp/c/eval"
bash "$root/tests/services/hf/publish.sh" "$tmp/c" vfbench "$repo" >/dev/null

# start_proxy NAME TARGET -> prints the proxy's URL; every request delayed by DELAY_MS
start_proxy() {
  node "$root/tests/services/faultproxy/proxy.mjs" --target "$2" --port 0 --port-file "$tmp/$1.port" \
    --stats "$tmp/$1.stats" --rate 1 --modes delay --delay-ms "$DELAY_MS" > "$tmp/$1.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do [ -s "$tmp/$1.port" ] && break; sleep 0.1; done
  [ -s "$tmp/$1.port" ] || { echo "bench/remote-scan: fault proxy did not start: $(cat "$tmp/$1.log")" >&2; exit 1; }
}
start_proxy hf "$VF_HF_ENDPOINT"
args=(--vforge "$V" --corpus "$tmp/c" --hf-repo "vfbench/$repo" --hf-proxy "http://127.0.0.1:$(cat "$tmp/hf.port")"
      --runs "$RUNS" --threads "$THREADS" --delay-ms "$DELAY_MS" --timeout "$TIMEOUT")
if [ -n "${VF_S3_ENDPOINT:-}" ]; then
  printf 'user = "%s:%s"\n' "$VF_S3_ACCESS_KEY" "$VF_S3_SECRET_KEY" > "$tmp/s3.curlrc"
  s3curl() { curl -sS --fail -K "$tmp/s3.curlrc" --aws-sigv4 "aws:amz:us-east-1:s3" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$@"; }
  s3clean() {
    for f in $(cd "$tmp/c" 2>/dev/null && find . -type f | sed 's#^\./##'); do s3curl -X DELETE "$VF_S3_ENDPOINT/$bucket/$f" >/dev/null 2>&1 || true; done
    s3curl -X DELETE "$VF_S3_ENDPOINT/$bucket" >/dev/null 2>&1 || true
  }
  s3curl -X PUT "$VF_S3_ENDPOINT/$bucket" >/dev/null
  (cd "$tmp/c" && find . -type f | sed 's#^\./##' | while read -r f; do s3curl -T "$f" "$VF_S3_ENDPOINT/$bucket/$f" >/dev/null; done)
  start_proxy s3 "$VF_S3_ENDPOINT"
  args+=(--s3-bucket "$bucket" --s3-proxy "http://127.0.0.1:$(cat "$tmp/s3.port")" --s3-curlrc "$tmp/s3.curlrc")
fi
python3 "$here/remote_bench.py" "${args[@]}"
