#!/usr/bin/env bash
# Remote scan throughput: the same corpus scanned from local disk, from the HF stand-in (nginx,
# http and https) and, when VF_S3_ENDPOINT is set, from S3 (radosgw); prints MB/s (decoded bytes
# / wall time of the scan as `scan --json` reports it), MB received, HTTP requests per file, and
# the effect of VFORGE_REMOTE_PARALLEL (concurrent range requests per read).  Best of RUNS runs.
# Usage: bench/remote-scan/run.sh [CORPUS_DIR]   (default: Fashion-MNIST train converted, else
# 16 copies of examples/corpus); env VFORGE, RUNS (3), THREADS; needs the services
# (source /tmp/vf-services.env or run under tests/services/with-services.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
V=${VFORGE:-$here/build/vforge}
RUNS=${RUNS:-3}
THREADS=${THREADS:-$(nproc)}
[ -n "${VF_HF_ENDPOINT:-}" ] && [ -n "${VF_HF_ROOT:-}" ] || { echo "need the HF stand-in (VF_HF_ENDPOINT, VF_HF_ROOT)"; exit 77; }
tmp=$(mktemp -d)
repo="bench-remote-$$"
bucket="vf-bench-$$"
s3clean() { :; }
trap 's3clean; rm -rf "$tmp" "$VF_HF_ROOT/repos/vfbench/$repo" "$VF_HF_ROOT/api/vfbench/$repo"' EXIT
if [ $# -ge 1 ]; then
  cp -r "$1" "$tmp/c"
elif [ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
  "$V" convert /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz --output "$tmp/c" 2>/dev/null
else
  mkdir -p "$tmp/c"
  for i in $(seq -w 0 15); do for f in "$here"/examples/corpus/rank00/*.parquet; do cp "$f" "$tmp/c/r${i}_$(basename "$f")"; done; done
fi
rm -rf "$tmp/c/eval"
bash "$here/tests/services/hf/publish.sh" "$tmp/c" vfbench "$repo" >/dev/null
nfiles=$(find "$tmp/c" -name '*.parquet' | wc -l)
size=$(du -sb "$tmp/c" | cut -f1)
echo "corpus: $nfiles files, $((size / 1000000)) MB; threads $THREADS; best of $RUNS"
printf '%-28s %9s %9s %11s %9s %8s\n' source MB/s seconds MB_received requests req/file

# run LABEL URI [env...]: best-of-RUNS scan
run() {
  local label=$1 uri=$2; shift 2
  local best=""
  for _ in $(seq "$RUNS"); do
    env "$@" "$V" --threads "$THREADS" scan --json "$uri" 2>/dev/null > "$tmp/s.json" || { echo "$label: scan failed"; return; }
    best=$(python3 - "$tmp/s.json" "$best" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
prev = sys.argv[2]
if prev and float(prev.split()[1]) <= d["seconds"]: print(prev)
else: print(d["mb_per_s"], d["seconds"], d.get("remote_bytes", 0) / 1e6, d.get("remote_requests", 0), d["files"])
PY
)
  done
  set -- $best
  printf '%-28s %9.1f %9.3f %11.1f %9d %8.1f\n' "$label" "$1" "$2" "$3" "$4" "$(echo "$4 / $5" | bc -l)"
}
run "local" "$tmp/c"
run "hf (http)" "hf://datasets/vfbench/$repo" HF_ENDPOINT="$VF_HF_ENDPOINT"
run "hf (http), parallel 1" "hf://datasets/vfbench/$repo" HF_ENDPOINT="$VF_HF_ENDPOINT" VFORGE_REMOTE_PARALLEL=1
run "hf (http), parallel 8" "hf://datasets/vfbench/$repo" HF_ENDPOINT="$VF_HF_ENDPOINT" VFORGE_REMOTE_PARALLEL=8
run "hf (https)" "hf://datasets/vfbench/$repo" HF_ENDPOINT="$VF_HF_ENDPOINT_TLS" VFORGE_CA_BUNDLE="$VF_HF_CA"
if [ -n "${VF_S3_ENDPOINT:-}" ]; then
  s3curl() { curl -sS --fail --aws-sigv4 "aws:amz:us-east-1:s3" --user "$VF_S3_ACCESS_KEY:$VF_S3_SECRET_KEY" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$@"; }
  s3clean() {
    for f in $(cd "$tmp/c" && find . -type f | sed 's#^\./##'); do s3curl -X DELETE "$VF_S3_ENDPOINT/$bucket/$f" >/dev/null 2>&1 || true; done
    s3curl -X DELETE "$VF_S3_ENDPOINT/$bucket" >/dev/null 2>&1 || true
  }
  s3curl -X PUT "$VF_S3_ENDPOINT/$bucket" >/dev/null
  (cd "$tmp/c" && find . -type f | sed 's#^\./##' | while read -r f; do s3curl -T "$f" "$VF_S3_ENDPOINT/$bucket/$f" >/dev/null; done)
  run "s3 (radosgw)" "s3://$bucket" AWS_ENDPOINT_URL="$VF_S3_ENDPOINT" AWS_ACCESS_KEY_ID="$VF_S3_ACCESS_KEY" \
    AWS_SECRET_ACCESS_KEY="$VF_S3_SECRET_KEY" AWS_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true
fi
