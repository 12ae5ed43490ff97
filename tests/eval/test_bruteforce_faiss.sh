#!/usr/bin/env bash
# brute-force vs FAISS exact search (IndexFlatL2 / IndexFlatIP, IndexFlat METRIC_L1) on
# Fashion-MNIST t10k (10000 x 784, integer pixels: many exact ties and duplicate images):
# the same neighbours up to ties, for every metric, and our scores equal a float64 numpy
# recomputation.  Skips (77) when faiss/numpy (Debian python3-faiss, python3-numpy) or the
# dataset (dataset-fashion-mnist) is absent.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
V=${VFORGE:-$here/build/vforge}
PY=/usr/bin/python3
IDX=/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz
[ -x "$V" ] || { echo "skip: no vforge binary at $V"; exit 77; }
[ -f "$IDX" ] || { echo "skip: $IDX absent (dataset-fashion-mnist)"; exit 77; }
[ -x "$PY" ] && "$PY" -c 'import faiss, numpy' 2>/dev/null || { echo "skip: python3-faiss/numpy not importable"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$V" convert "$IDX" --output "$tmp/fm" 2>/dev/null
"$V" generate-queries "$tmp/fm" -n 200 --seed 3 2>/dev/null
Q=$tmp/fm/eval/queries_200.parquet
"$V" cat "$Q" --columns query_id,__source_row__,__source_file__ > "$tmp/q.jsonl"
for m in cosine dot euclid manhattan; do
  "$V" brute-force "$tmp/fm" --queries "$Q" -k 10 --metric $m --output "$tmp/bf_$m.parquet" 2>/dev/null
  "$V" cat "$tmp/bf_$m.parquet" > "$tmp/bf_$m.jsonl"
done
"$PY" - "$tmp" "$IDX" <<'PY'
import gzip, hashlib, json, sys
import numpy as np, faiss
t, idx = sys.argv[1], sys.argv[2]
raw = gzip.open(idx).read()
n, h, w = (int.from_bytes(raw[i:i + 4], "big") for i in (4, 8, 12))
X = np.frombuffer(raw, dtype=np.uint8, offset=16).reshape(n, h * w).astype(np.float32)
q = [json.loads(l) for l in open(t + "/q.jsonl")]
key = q[0]["__source_file__"]
def pid(row):
    d = hashlib.md5(("%s:%d" % (key, row)).encode()).hexdigest()
    return "%s-%s-%s-%s-%s" % (d[:8], d[8:12], d[12:16], d[16:20], d[20:])
ids = [pid(r) for r in range(n)]
row_of = {i: r for r, i in enumerate(ids)}
qrows = [r["__source_row__"] for r in q]
for r in q: assert pid(r["__source_row__"]) == r["query_id"]
Q = X[qrows]
X64, Q64 = X.astype(np.float64), Q.astype(np.float64)
k = 10
def faiss_search(metric):
    if metric == "euclid":
        ix = faiss.IndexFlatL2(X.shape[1]); ix.add(X); D, I = ix.search(Q, k); return -np.sqrt(np.maximum(D, 0)), I
    if metric == "dot":
        ix = faiss.IndexFlatIP(X.shape[1]); ix.add(X); return ix.search(Q, k)
    if metric == "cosine":
        Xn, Qn = X.copy(), Q.copy(); faiss.normalize_L2(Xn); faiss.normalize_L2(Qn)
        ix = faiss.IndexFlatIP(X.shape[1]); ix.add(Xn); return ix.search(Qn, k)
    ix = faiss.IndexFlat(X.shape[1], faiss.METRIC_L1); ix.add(X); D, I = ix.search(Q, k); return -D, I
def exact(metric, qv, rows):
    xs = X64[rows]
    if metric == "dot": return xs @ qv
    if metric == "cosine": return (xs @ qv) / (np.linalg.norm(xs, axis=1) * np.linalg.norm(qv))
    if metric == "euclid": return -np.sqrt(((xs - qv) ** 2).sum(axis=1))
    return -np.abs(xs - qv).sum(axis=1)
bad = 0
for metric in ("cosine", "dot", "euclid", "manhattan"):
    res = [json.loads(l) for l in open("%s/bf_%s.jsonl" % (t, metric))]
    D, I = faiss_search(metric)
    for qi, r in enumerate(res):
        assert r["query_id"] == q[qi]["query_id"]
        got_rows = [row_of[i] for i in r["hit_ids"]]
        gs = np.array(r["hit_scores"], dtype=np.float64)
        ex = exact(metric, Q64[qi], got_rows)
        tol = 1e-5 * np.maximum(1.0, np.abs(ex))
        if np.any(np.abs(ex - gs) > tol): print(metric, qi, "scores differ from float64", ex, gs); bad += 1; continue
        fs = exact(metric, Q64[qi], list(I[qi]))  # FAISS's neighbours, rescored exactly
        # same scores rank by rank (both sides exact), same ids except among ties at the cutoff
        if np.any(np.abs(np.sort(fs)[::-1] - gs) > 1e-5 * np.maximum(1.0, np.abs(gs))):
            print(metric, qi, "k-NN scores differ from FAISS", np.sort(fs)[::-1], gs); bad += 1; continue
        kth = gs[-1]
        ftop = {ids[i] for i, s in zip(I[qi], fs) if s > kth + 1e-5 * max(1.0, abs(kth))}
        if not ftop <= set(r["hit_ids"]): print(metric, qi, "FAISS neighbour missing"); bad += 1
        # ties: equal-score hits are ordered by point id
        for a in range(k - 1):
            if gs[a] == gs[a + 1] and r["hit_ids"][a] > r["hit_ids"][a + 1]: print(metric, qi, "tie order"); bad += 1
print("faiss comparison: %d problems" % bad)
sys.exit(1 if bad else 0)
PY
echo ok
