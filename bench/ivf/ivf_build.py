"""IVF build at scale, vforge vs FAISS (the worker of bench/ivf/build.sh).

Two commands:

  faiss NAME BASE QSRC QUERIES.jsonl IDS.jsonl TRUTH.jsonl NLISTS TYPES NPROBES PQ_M THREADS OUT.jsonl
      FAISS's side, in whichever Python runs it (the pinned faiss-cpu, or Debian's python3-faiss):
      for every nlist and type, IndexIVFFlat / IndexIVFScalarQuantizer(QT_8bit) / IndexIVFPQ(M, 8)
      with FAISS's defaults (cp.niter, cp.max_points_per_centroid untouched), train + add timed on
      vectors already in memory, then recall@10 at every nprobe against the same ground truth as
      vforge.  One JSON line per index is appended to OUT.jsonl.
        BASE           the indexed rows: .npy (N x D float32) or IDX .gz files joined with ','
        QSRC           where the queries' rows come from (.npy or IDX .gz, as BASE)
        QUERIES.jsonl  `vforge cat` of the queries file: query_id, __source_row__ (a QSRC row)
        IDS.jsonl      `vforge cat CORPUS --columns id --with-id ...`: the point id of every BASE
                       row, in row order (so FAISS's row numbers map to vforge's point ids)
        TRUTH.jsonl    `vforge cat` of the brute-force file: query_id, hit_ids
      env FAISS_TRAIN: `sample` (default) trains on min(N, max_points_per_centroid * nlist) random
      rows, drawn inside the timing (the sample FAISS's k-means would draw itself, handed over up
      front so the SQ/PQ trainers do not encode every row a second time); `all` trains on every row.

  report NAME N D NQ THREADS VFDIR FAISS.jsonl... 
      The table: per nlist, type and FAISS build, build seconds (vforge wall, end to end from the
      parquet corpus; FAISS train + add), the ratio vforge/FAISS (target <= 0.5), k-means
      iterations of each side, and per nprobe recall@10 of both and their difference (target
      >= -0.002).  vforge's recall is recomputed from its result file with the same formula as
      FAISS's (and checked against the recall `index search --ground-truth` printed).
      VFDIR holds vf_<nlist>_<type>.json (build --json plus "wall"), vf_<nlist>_<type>_np<P>.json
      (search --json) and vf_<nlist>_<type>_np<P>.jsonl (`vforge cat` of its results).

Recall@10 = |the 10 hits returned ∩ the 10 true nearest| / 10, averaged over the queries (strict:
ties at the cutoff are not counted).
"""
import ctypes
import json
import os
import sys
import time

RATIO_TARGET = 0.5
RECALL_SLACK = -0.002


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def recall(hits, truth, k):
    """mean over queries of |hits[q][:k] ∩ truth[q][:k]| / k; hits and truth: {query_id: [ids]}"""
    if not truth:
        return float("nan")
    tot = 0.0
    for q, t in truth.items():
        tot += len(set(hits.get(q, [])[:k]) & set(t[:k])) / k
    return tot / len(truth)


def blas_core():
    """'<library> core <name>' of the OpenBLAS this process loaded (FAISS's), or 'unknown'"""
    try:
        import threadpoolctl  # noqa: F401  (not pinned; used when present)
        for info in threadpoolctl.threadpool_info():
            if info.get("internal_api") == "openblas":
                return "%s core %s" % (info.get("filepath"), info.get("architecture"))
    except ImportError:
        pass
    try:
        with open("/proc/self/maps") as f:
            libs = sorted({l.split()[-1] for l in f if "openblas" in l.lower() and "/" in l})
    except OSError:
        libs = []
    for path in libs:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for sym in ("openblas_get_corename", "scipy_openblas_get_corename", "scipy_openblas64_get_corename"):
            fn = getattr(lib, sym, None)
            if fn is not None:
                fn.restype = ctypes.c_char_p
                return "%s core %s" % (path, fn().decode())
    return "unknown"


def cmd_faiss(argv):
    import faiss
    import numpy as np
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from faiss_ivf import load

    (name, base, qsrc, qf, idf, tf, nlists, types, nprobes, pqm, threads, out) = argv
    nlists = [int(x) for x in nlists.split()]
    types = types.split()
    nprobes = [int(x) for x in nprobes.split()]
    pqm, threads = int(pqm), int(threads)
    faiss.omp_set_num_threads(threads)
    X = np.ascontiguousarray(np.asarray(load(base), dtype=np.float32))
    n, d = X.shape
    ids = [r["__id__"] for r in read_jsonl(idf)]
    if len(ids) != n:
        sys.exit("ivf_build: %s has %d point ids, %s has %d rows" % (idf, len(ids), base, n))
    queries = read_jsonl(qf)
    qids = [q["query_id"] for q in queries]
    src = load(qsrc)
    Q = np.ascontiguousarray(np.asarray(src[[q["__source_row__"] for q in queries]], dtype=np.float32))
    if Q.shape[1] != d:
        sys.exit("ivf_build: queries have dimension %d, the base %d" % (Q.shape[1], d))
    truth = {t["query_id"]: t["hit_ids"] for t in read_jsonl(tf)}
    mode = os.environ.get("FAISS_TRAIN", "sample")
    if mode not in ("sample", "all"):
        sys.exit("ivf_build: FAISS_TRAIN must be sample or all, not %r" % mode)
    core = blas_core()
    with open(out, "a") as f:
        for nlist in nlists:
            for t in types:
                quant = faiss.IndexFlatL2(d)
                if t == "flat":
                    ix = faiss.IndexIVFFlat(quant, d, nlist, faiss.METRIC_L2)
                elif t == "sq8":
                    ix = faiss.IndexIVFScalarQuantizer(quant, d, nlist, faiss.ScalarQuantizer.QT_8bit,
                                                       faiss.METRIC_L2)
                elif t == "pq":
                    ix = faiss.IndexIVFPQ(quant, d, nlist, pqm, 8)
                else:
                    sys.exit("ivf_build: unknown type %r (flat, sq8, pq)" % t)
                cap = ix.cp.max_points_per_centroid * nlist
                t0 = time.perf_counter()
                if mode == "sample" and cap < n:
                    rng = np.random.default_rng(1234)
                    train = X[np.sort(rng.choice(n, cap, replace=False))]
                else:
                    train = X
                ix.train(train)
                ix.add(X)
                secs = time.perf_counter() - t0
                rec = {}
                for nprobe in nprobes:
                    ix.nprobe = min(nprobe, nlist)
                    _, I = ix.search(Q, 10)
                    hits = {qids[i]: [ids[j] for j in I[i] if j >= 0] for i in range(len(qids))}
                    rec[str(nprobe)] = recall(hits, truth, 10)
                f.write(json.dumps({
                    "name": name, "python": sys.executable, "faiss": faiss.__version__, "blas": core,
                    "nlist": nlist, "type": t, "seconds": secs, "niter": ix.cp.niter,
                    "nredo": ix.cp.nredo, "max_points_per_centroid": ix.cp.max_points_per_centroid,
                    "train_rows": int(train.shape[0]), "train_mode": mode, "recall": rec}) + "\n")
                f.flush()
                del ix, quant, train


def cmd_report(argv):
    name, n, d, nq, threads, vfdir = argv[:6]
    fa = [r for p in argv[6:] for r in read_jsonl(p)]
    pys = []
    for r in fa:
        key = (r["python"], r["faiss"], r["blas"])
        if key not in pys:
            pys.append(key)
    tag = {k: chr(ord("a") + i) for i, k in enumerate(pys)}
    print()
    print("%s: %s x %s indexed, %s held-out queries, k 10, L2, %s threads" % (name, n, d, nq, threads))
    for k in pys:
        print("  FAISS [%s] %s (%s), BLAS %s" % (tag[k], k[1], k[0], k[2]))
    hdr = ("nlist", "type", "F", "build vf", "FAISS", "vf/FAISS", "<=0.5", "iters vf", "FAISS",
           "nprobe", "R@10 vf", "FAISS", "diff", ">=-.002")
    print("%5s %-4s %1s | %9s %9s %8s %5s | %8s %5s | %6s %7s %7s %7s %7s" % hdr)
    checks = {"build": [0, 0], "recall": [0, 0]}
    truth = {h["query_id"]: h["hit_ids"] for h in read_jsonl(os.path.join(vfdir, "gt.jsonl"))}
    seen = set()
    for r in fa:
        nl, t = r["nlist"], r["type"]
        vb = json.load(open(os.path.join(vfdir, "vf_%d_%s.json" % (nl, t))))
        ratio = vb["wall"] / r["seconds"]
        ok = ratio <= RATIO_TARGET
        checks["build"][0] += ok
        checks["build"][1] += 1
        first, width = True, 0
        for p, fr in r["recall"].items():
            base = os.path.join(vfdir, "vf_%d_%s_np%s" % (nl, t, p))
            vs = json.load(open(base + ".json"))
            hits = {h["query_id"]: h["hit_ids"] for h in read_jsonl(base + ".jsonl")}
            vr = recall(hits, truth, 10)
            if (nl, t, p) not in seen and "recall" in vs and abs(vs["recall"] - vr) > 1e-6:
                print("  note: index search printed recall %.4f for nlist %d %s nprobe %s, recomputed %.4f"
                      % (vs["recall"], nl, t, p, vr))
            seen.add((nl, t, p))
            diff = vr - fr
            rok = diff >= RECALL_SLACK
            checks["recall"][0] += rok
            checks["recall"][1] += 1
            left = ("%5d %-4s %1s | %8.3fs %8.3fs %8.3f %5s | %5d/%-2d %5d"
                    % (nl, t, tag[(r["python"], r["faiss"], r["blas"])], vb["wall"], r["seconds"], ratio,
                       "yes" if ok else "NO", vb["kmeans_iterations"], vb["kmeans_max_iterations"],
                       r["niter"] * r["nredo"])) if first else " " * width
            width = len(left)
            print("%s | %6s %7.4f %7.4f %+7.4f %7s" % (left, p, vr, fr, diff, "yes" if rok else "NO"))
            first = False
    for nl in sorted({r["nlist"] for r in fa}):
        r = next(x for x in fa if x["nlist"] == nl)
        vb = json.load(open(os.path.join(vfdir, "vf_%d_%s.json" % (nl, r["type"]))))
        print("  nlist %d: vforge k-means on %d rows of a %d-row training sample; FAISS trained on %d rows "
              "(FAISS_TRAIN=%s, max_points_per_centroid %d)"
              % (nl, vb["kmeans_rows"], vb["training_rows_retained"], r["train_rows"], r["train_mode"],
                 r["max_points_per_centroid"]))
    print("  targets met: build vf/FAISS <= %.1f in %d of %d; recall@10 diff >= %.3f in %d of %d"
          % (RATIO_TARGET, checks["build"][0], checks["build"][1], RECALL_SLACK,
             checks["recall"][0], checks["recall"][1]))


def main():
    if len(sys.argv) >= 14 and sys.argv[1] == "faiss":
        cmd_faiss(sys.argv[2:14])
    elif len(sys.argv) >= 9 and sys.argv[1] == "report":
        cmd_report(sys.argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
