"""PQ search, vforge vs FAISS, queries/s at equal recall (the worker of bench/ivf/pq.sh).

Both sides index the same rows with the same nlist, k-means iterations (20), training sample
(max(256 * nlist, 65536) rows) and threads, and answer the same held-out queries (rows that are
not in the index), L2, k = 10:

  vforge pq8       8-bit PQ, M sub-quantizers (float tables, AVX2 gathers)
  vforge pq4       4-bit PQ, 2M sub-quantizers (the same bytes per row), fast-scan u8 tables;
                   re-rank R > 0: the best R*k re-scored by float ADC
  vforge pq4+vec   the same codes plus the float32 vectors: the best R*k re-scored exactly
  faiss  pq8       IndexIVFPQ(M, 8)
  faiss  pq4fs     IndexIVFPQFastScan(2M, 4)
  faiss  +refine   IndexRefineFlat over either, k_factor R (the best R*k re-scored exactly)

Every configuration of a sweep over nprobe and R is timed on the whole query batch (one warm-up
call, then the best of REPS timings, each over as many calls as fill MIN_SECONDS) and scored by
recall@10 against vforge's exact brute force.  TIMER=cpu times with the process CPU clock
instead of the wall clock: for a machine shared with other work, where wall time measures the
neighbours (queries/s then means per CPU-second of all the threads).
The report: every point, each system's frontier (the most queries/s at or above a recall), and
the pairs at matching recall — for each point of FAISS's frontier, vforge's fastest
configuration with at least that recall, and the ratio.

usage: pq_sweep.py NAME BASE QUERIES NQ NLIST M THREADS WORKDIR
  BASE, QUERIES  .npy (N x D float32) or IDX .gz files joined with ','; the first NQ rows of
                 QUERIES are the queries
env: NPROBES ("1 2 4 8 16 32 64"), RERANKS ("1 2 4 8 16"), REPS (3), MIN_SECONDS (0.2),
     K (10), TIMER (wall | cpu)
"""
import ctypes
import json
import os
import platform
import sys
import time

import faiss
import numpy as np

import vforge
from faiss_ivf import load


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def blas_cores():
    """{library path: OpenBLAS core name} of every OpenBLAS this process has loaded (numpy's,
    FAISS's and vforge's may be three different copies)."""
    out = {}
    try:
        libs = sorted({l.split()[-1] for l in open("/proc/self/maps") if "openblas" in l.lower() and "/" in l})
    except OSError:
        libs = []
    for p in libs:
        try:
            f = ctypes.CDLL(p).openblas_get_corename
            f.restype = ctypes.c_char_p
            out[p] = f().decode()
        except (OSError, AttributeError):
            pass
    return out


def recall_at(I, T, k):
    return float(np.mean([len(set(I[i][:k].tolist()) & set(T[i][:k].tolist())) / k for i in range(len(T))]))


def timed(fn, reps):
    """seconds of one call of fn (the best of `reps` timings, each averaged over enough calls to
    last MIN_SECONDS) and its result"""
    clock = time.process_time if os.environ.get("TIMER", "wall") == "cpu" else time.perf_counter
    least = float(os.environ.get("MIN_SECONDS", "0.2"))
    r = fn()  # warm-up: page faults of the mapped file, caches
    best = None
    for _ in range(reps):
        calls, t0 = 0, clock()
        while True:
            fn()
            calls += 1
            t = clock() - t0
            if t >= least:
                break
        t /= calls
        best = t if best is None or t < best else best
    return best, r


def frontier(points):
    """points sorted by recall, each with the most queries/s among points of at least its recall"""
    pts = sorted(points, key=lambda p: (-p["recall"], -p["qps"]))
    out, best = [], 0.0
    for p in pts:
        if p["qps"] > best:
            out.append(p)
            best = p["qps"]
    return sorted(out, key=lambda p: p["recall"])


def best_at(points, r):
    c = [p for p in points if p["recall"] >= r]
    return max(c, key=lambda p: p["qps"]) if c else None


def label(p):
    s = "%s %s np=%d" % (p["system"], p["index"], p["nprobe"])
    return s + (" R=%d" % p["rerank"] if p["rerank"] else "")


def main():
    name, base, qspec, nq, nlist, M, threads, work = sys.argv[1:9]
    nq, nlist, M, threads = int(nq), int(nlist), int(M), int(threads)
    nprobes = [int(x) for x in os.environ.get("NPROBES", "1 2 4 8 16 32 64").split() if int(x) <= nlist]
    reranks = [int(x) for x in os.environ.get("RERANKS", "1 2 4 8 16").split()]
    reps, k = int(os.environ.get("REPS", "3")), int(os.environ.get("K", "10"))
    faiss.omp_set_num_threads(threads)
    X = np.ascontiguousarray(np.asarray(load(base), dtype=np.float32))
    Q = np.ascontiguousarray(np.asarray(load(qspec)[:nq], dtype=np.float32))
    n, d = X.shape
    if d % (2 * M):
        sys.exit("pq_sweep: 2M = %d must divide the dimension %d" % (2 * M, d))
    T = np.asarray(vforge.brute_force(X, Q, max(k, 100), "euclid", threads=threads).ids)
    ntrain = min(n, max(256 * nlist, 65536))
    rng = np.random.default_rng(1234)
    train = X[np.sort(rng.choice(n, ntrain, replace=False))] if ntrain < n else X
    builds, points = {}, []

    # vforge: the index files, built by the library from the array (as `index build` does from a
    # corpus); the training sample is vforge's own stratified sample of the same size
    vf = {}
    for key, kw in (("pq8", dict(pq_m=M)), ("pq4", dict(pq_m=2 * M, pq_nbits=4)),
                    ("pq4+vec", dict(pq_m=2 * M, pq_nbits=4, rerank=1))):
        t0 = time.perf_counter()
        vf[key] = vforge.Index.build(X, type="pq", nlist=nlist, metric="euclid", seed=1234,
                                     path=os.path.join(work, "%s-%s.ivf" % (name, key.replace("+", "_"))),
                                     threads=threads, **kw)
        builds["vforge " + key] = time.perf_counter() - t0

    def vf_point(key, nprobe, rr):
        ix = vf[key]
        t, h = timed(lambda: ix.search(Q, k, nprobe=nprobe, rerank=rr, threads=threads), reps)
        points.append(dict(system="vforge", index=key, nprobe=nprobe, rerank=rr, qps=nq / t,
                           recall=recall_at(np.asarray(h.ids), T, k)))

    for npb in nprobes:
        vf_point("pq8", npb, 0)
        vf_point("pq4", npb, 0)
        for rr in reranks:
            vf_point("pq4", npb, rr)  # float ADC
            vf_point("pq4+vec", npb, rr)  # exact
    for ix in vf.values():
        ix.close()

    # FAISS: each base index inside an IndexRefineFlat (which keeps the float vectors); the base
    # alone answers the R = 0 points
    fx = {}
    for key, mk in (("pq8", lambda q: faiss.IndexIVFPQ(q, d, nlist, M, 8)),
                    ("pq4fs", lambda q: faiss.IndexIVFPQFastScan(q, d, nlist, 2 * M, 4))):
        quant = faiss.IndexFlatL2(d)
        ivf = mk(quant)
        ivf.cp.niter = 20
        ref = faiss.IndexRefineFlat(ivf)
        t0 = time.perf_counter()
        ref.train(train)
        ref.add(X)
        builds["faiss " + key] = time.perf_counter() - t0
        fx[key] = (ivf, ref, quant)

    def fa_point(key, nprobe, rr):
        ivf, ref, _ = fx[key]
        ivf.nprobe = nprobe
        if rr:
            ref.k_factor = rr
        index = ref if rr else ivf
        t, (_, I) = timed(lambda: index.search(Q, k), reps)
        points.append(dict(system="faiss", index=key + ("+refine" if rr else ""), nprobe=nprobe,
                           rerank=rr, qps=nq / t, recall=recall_at(I, T, k)))

    for npb in nprobes:
        for key in fx:
            fa_point(key, npb, 0)
            for rr in reranks:
                fa_point(key, npb, rr)

    # report
    print()
    print("%s: %d x %d, %d held-out queries, k %d, L2, nlist %d, pq8 M %d, pq4 M %d, %d threads"
          % (name, n, d, nq, k, nlist, M, 2 * M, threads))
    print("cpu: %s (%d logical cores); faiss %s [%s]; vforge %s; timer %s"
          % (cpu_model(), os.cpu_count() or 0, faiss.__version__, faiss.get_compile_options().strip(),
             getattr(vforge, "__version__", "?"), os.environ.get("TIMER", "wall")))
    for lib, core in blas_cores().items():
        print("openblas: %s core %s" % (lib, core))
    print("build seconds: " + ", ".join("%s %.1f" % kv for kv in builds.items()))
    print()
    print("%-26s %7s %10s" % ("configuration", "R@%d" % k, "QPS"))
    for p in sorted(points, key=lambda p: (p["system"], p["index"], p["rerank"], p["nprobe"])):
        print("%-26s %7.4f %10.0f" % (label(p), p["recall"], p["qps"]))
    vfp = [p for p in points if p["system"] == "vforge"]
    fap = [p for p in points if p["system"] == "faiss"]
    print()
    print("pairs at matching recall: each point of FAISS's frontier (all its indexes) against the")
    print("fastest vforge configuration with at least that recall")
    print("%-26s %7s %9s | %-26s %7s %9s | %7s" % ("faiss", "R@%d" % k, "QPS", "vforge", "R@%d" % k, "QPS", "vf/faiss"))
    for f in frontier(fap):
        v = best_at(vfp, f["recall"])
        if v:
            print("%-26s %7.4f %9.0f | %-26s %7.4f %9.0f | %6.2fx"
                  % (label(f), f["recall"], f["qps"], label(v), v["recall"], v["qps"], v["qps"] / f["qps"]))
        else:
            print("%-26s %7.4f %9.0f | %-26s" % (label(f), f["recall"], f["qps"], "(no vforge point reaches it)"))
    print()
    print("the same, per index kind (plain PQ against plain PQ, no re-rank on either side):")
    for fk, vk in (("pq8", "pq8"), ("pq4fs", "pq4")):
        fs = frontier([p for p in fap if p["index"] == fk])
        vs = [p for p in vfp if p["index"] == vk and p["rerank"] == 0]
        for f in fs:
            v = best_at(vs, f["recall"])
            if v:
                print("  %-24s %7.4f %9.0f | %-24s %7.4f %9.0f | %6.2fx"
                      % (label(f), f["recall"], f["qps"], label(v), v["recall"], v["qps"], v["qps"] / f["qps"]))
            else:
                print("  %-24s %7.4f %9.0f | (vforge %s does not reach it)" % (label(f), f["recall"], f["qps"], vk))
    with open(os.path.join(work, "%s-points.jsonl" % name), "w") as out:
        for p in points:
            out.write(json.dumps(dict(p, dataset=name, nlist=nlist, threads=threads)) + "\n")


if __name__ == "__main__":
    main()
