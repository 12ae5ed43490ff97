#!/usr/bin/env bash
# vforge brute-force vs FAISS IndexFlat (exact) on Fashion-MNIST train (60000 x 784), 1000
# queries, the same threads and K, one run each.  vforge is timed end to end (reading the
# parquet corpus included); FAISS only for its search on data already in memory.  Prints the
# ratio FAISS time / vforge time (target >= 1.3).
# Usage: bench/brute-force/run.sh [METRIC=euclid] ; env VFORGE, THREADS, K.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
V=${VFORGE:-$here/build/vforge}
PY=/usr/bin/python3
METRIC=${1:-euclid}
K=${K:-10}
THREADS=${THREADS:-$(nproc)}
IDX=/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz
[ -f "$IDX" ] || { echo "need dataset-fashion-mnist ($IDX)"; exit 77; }
"$PY" -c 'import faiss, numpy' 2>/dev/null || { echo "need python3-faiss and python3-numpy"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$V" convert "$IDX" --output "$tmp/fm" 2>/dev/null
"$V" generate-queries "$tmp/fm" -n 1000 --seed 1 2>/dev/null
Q=$tmp/fm/eval/queries_1000.parquet
"$V" cat "$Q" --columns __source_row__ > "$tmp/qrows.jsonl"
t0=$(date +%s.%N)
"$V" --threads "$THREADS" brute-force "$tmp/fm" --queries "$Q" -k "$K" --metric "$METRIC" --output "$tmp/bf.parquet"
t1=$(date +%s.%N)
vf=$(echo "$t1 - $t0" | bc -l)
"$PY" - "$IDX" "$tmp/qrows.jsonl" "$METRIC" "$K" "$THREADS" "$vf" <<'PY'
import gzip, json, sys, time
import numpy as np, faiss
idx, qf, metric, k, threads, vf = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
raw = gzip.open(idx).read()
n, h, w = (int.from_bytes(raw[i:i + 4], "big") for i in (4, 8, 12))
X = np.ascontiguousarray(np.frombuffer(raw, dtype=np.uint8, offset=16).reshape(n, h * w).astype(np.float32))
Q = np.ascontiguousarray(X[[json.loads(l)["__source_row__"] for l in open(qf)]])
faiss.omp_set_num_threads(threads)
d = X.shape[1]
t0 = time.perf_counter()
if metric == "cosine":
    Xn, Qn = X.copy(), Q.copy(); faiss.normalize_L2(Xn); faiss.normalize_L2(Qn)
    ix = faiss.IndexFlatIP(d); ix.add(Xn); ix.search(Qn, k)
else:
    mt = {"euclid": faiss.METRIC_L2, "dot": faiss.METRIC_INNER_PRODUCT, "manhattan": faiss.METRIC_L1}[metric]
    ix = faiss.IndexFlat(d, mt); ix.add(X); ix.search(Q, k)
fs = time.perf_counter() - t0
print("brute-force %s: %d x %d, %d queries, k %d, %d threads: vforge %.3f s (end to end), FAISS %.3f s (search only)"
      % (metric, n, d, len(Q), k, threads, vf, fs))
print("ratio FAISS/vforge = %.2fx (target >= 1.3x)" % (fs / vf))
PY
