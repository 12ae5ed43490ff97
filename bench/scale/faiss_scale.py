"""FAISS on the bench/scale data: IndexIVFScalarQuantizer (8-bit) or IndexIVFPQ (M x 8 bits),
nlist NLIST, trained on FAISS's own default sample (max_points_per_centroid 256, 10 k-means
iterations), add, search at NPROBE the queries of a generate-queries parquet file; recall@10
against vforge's exact ground truth (hit_ids are row numbers of the .npy), matched by query_id.
Prints one JSON object.
usage: faiss_scale.py BASE.npy QUERIES.parquet GT.parquet TYPE NLIST M NPROBE THREADS"""
import json, resource, sys, time
import numpy as np
import faiss
import pyarrow.parquet as pq

base, qp, gtp, typ, nlist, m, nprobe, threads = sys.argv[1:9]
nlist, m, nprobe, threads = int(nlist), int(m), int(nprobe), int(threads)
faiss.omp_set_num_threads(threads)
x = np.load(base, mmap_mode="r")
qt = pq.read_table(qp)
vcol = [f.name for f in qt.schema if str(f.type).startswith("fixed_size_list")][0]
qids = [str(v) for v in qt.column("query_id").to_pylist()]
q = np.ascontiguousarray(np.array(qt.column(vcol).to_pylist(), dtype=np.float32))
d = x.shape[1]
t0 = time.perf_counter()
coarse = faiss.IndexFlatL2(d)
if typ == "sq8":
    ix = faiss.IndexIVFScalarQuantizer(coarse, d, nlist, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_L2)
else:
    ix = faiss.IndexIVFPQ(coarse, d, nlist, m, 8)
rng = np.random.default_rng(1)
ntrain = min(len(x), 256 * nlist)
sel = np.sort(rng.choice(len(x), ntrain, replace=False))
ix.train(np.ascontiguousarray(x[sel]))
for a in range(0, len(x), 262144):
    ix.add(np.ascontiguousarray(x[a:a + 262144]))
build = time.perf_counter() - t0
ix.nprobe = nprobe
t0 = time.perf_counter()
_, I = ix.search(q, 10)
search = time.perf_counter() - t0
gt = {str(r["query_id"]): r["hit_ids"] for r in pq.read_table(gtp, columns=["query_id", "hit_ids"]).to_pylist()}
hits = 0
for i, qid in enumerate(qids):
    truth = {int(h) for h in gt[qid][:10]}
    hits += len(truth & {int(v) for v in I[i]})
print(json.dumps({"faiss": faiss.__version__, "type": typ, "rows": len(x), "build_seconds": build,
                  "search_seconds": search, "recall10": hits / (10.0 * len(q)),
                  "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
