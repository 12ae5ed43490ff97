#!/usr/bin/python3
"""FAISS side of bench/ivf/run.sh: build IndexIVFFlat / IndexIVFScalarQuantizer(QT_8bit) /
IndexIVFPQ with vforge's nlist, pq M, nprobe, metric (L2) and thread count on the same rows,
search the same queries, score recall@10 and recall@100 against the same ground truth
(`vforge brute-force`, its point ids mapped back to rows), and print the comparison table.

usage: faiss_ivf.py NAME VECTORS QUERIES.jsonl TRUTH.jsonl NLIST NPROBE PQ_M THREADS VFDIR
  VECTORS        .npy (N x D float32) or IDX .gz files joined with ',' (rows in that order)
  QUERIES.jsonl  `vforge cat` of the queries file: query_id, __source_file__, __source_row__
  TRUTH.jsonl    `vforge cat` of the brute-force file: query_id, hit_ids
  VFDIR          vforge's build_<t>.json and search_<t>_k<K>.json reports
"""
import gzip
import hashlib
import json
import sys
import time

import faiss
import numpy as np


def load(spec):
    if spec.endswith(".npy"):
        return np.load(spec, mmap_mode="r")
    parts = []
    for p in spec.split(","):
        raw = gzip.open(p).read()
        n, h, w = (int.from_bytes(raw[i:i + 4], "big") for i in (4, 8, 12))
        parts.append(np.frombuffer(raw, dtype=np.uint8, offset=16).reshape(n, h * w).astype(np.float32))
    return np.concatenate(parts)


def point_id(key, row):
    h = hashlib.md5(("%s:%d" % (key, row)).encode()).hexdigest()
    return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])


def main():
    name, vec, qf, tf, nlist, nprobe, pqm, threads, vfdir = sys.argv[1:10]
    nlist, nprobe, pqm, threads = int(nlist), int(nprobe), int(pqm), int(threads)
    faiss.omp_set_num_threads(threads)
    X = load(vec)
    n, d = X.shape
    queries = [json.loads(l) for l in open(qf)]
    keys = {q["__source_file__"] for q in queries}
    if len(keys) != 1:
        sys.exit("bench/ivf expects a single-file corpus (got %d files)" % len(keys))
    key = keys.pop()
    Q = np.ascontiguousarray(np.asarray(X[[q["__source_row__"] for q in queries]], dtype=np.float32))
    row_of = {point_id(key, r): r for r in range(n)}
    truth = {}
    for l in open(tf):
        t = json.loads(l)
        truth[t["query_id"]] = [row_of[h] for h in t["hit_ids"]]
    T = [truth[q["query_id"]] for q in queries]
    Xc = np.ascontiguousarray(np.asarray(X, dtype=np.float32))
    # the same training sample size as vforge's default: max(256 * nlist, 65536) rows
    ntrain = min(n, max(256 * nlist, 65536))
    rng = np.random.default_rng(1234)
    train = Xc[np.sort(rng.choice(n, ntrain, replace=False))] if ntrain < n else Xc
    rows = []
    for t in ("flat", "sq8", "pq"):
        quant = faiss.IndexFlatL2(d)
        if t == "flat":
            ix = faiss.IndexIVFFlat(quant, d, nlist, faiss.METRIC_L2)
        elif t == "sq8":
            ix = faiss.IndexIVFScalarQuantizer(quant, d, nlist, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_L2)
        else:
            ix = faiss.IndexIVFPQ(quant, d, nlist, pqm, 8)
        ix.cp.niter = 20  # vforge's k-means iterations
        t0 = time.perf_counter()
        ix.train(train)
        ix.add(Xc)
        fb = time.perf_counter() - t0
        ix.nprobe = nprobe
        rec = {}
        fs = {}
        for k in (10, 100):
            t0 = time.perf_counter()
            _, I = ix.search(Q, k)
            fs[k] = time.perf_counter() - t0
            rec[k] = float(np.mean([len(set(I[i][:k]) & set(T[i][:k])) / min(k, len(T[i])) for i in range(len(Q))]))
        vb = json.load(open("%s/build_%s.json" % (vfdir, t)))
        vs = {k: json.load(open("%s/search_%s_k%d.json" % (vfdir, t, k))) for k in (10, 100)}
        rows.append((t, vb["seconds"], fb, vs[10]["recall"], rec[10], vs[100]["recall"], rec[100],
                     vs[10]["qps"], len(Q) / fs[10]))
        del ix
    print()
    print("%s: %d x %d, %d queries, nlist %d, nprobe %d, pq M %d, %d threads (L2)"
          % (name, n, d, len(Q), nlist, nprobe, pqm, threads))
    print("%-5s | %9s %9s %7s | %8s %8s | %8s %8s | %9s %9s" %
          ("index", "build vf", "faiss", "f/vf", "R@10 vf", "faiss", "R@100 vf", "faiss", "QPS@10 vf", "faiss"))
    for t, vb, fb, v10, f10, v100, f100, vq, fq in rows:
        print("%-5s | %8.2fs %8.2fs %6.2fx | %8.4f %8.4f | %8.4f %8.4f | %9.0f %9.0f" %
              (t, vb, fb, fb / vb, v10, f10, v100, f100, vq, fq))


if __name__ == "__main__":
    main()
