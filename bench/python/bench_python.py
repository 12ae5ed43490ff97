"""bench/python (see run.sh): read path and brute force, vforge vs pyarrow / DuckDB / faiss-cpu,
every side in one run; prints seconds (best of REPEAT), ratios, the CPU, BLAS cores and load."""
import ctypes
import ctypes.util
import glob
import os
import platform
import resource
import sys
import time

import numpy as np

import vforge

out = sys.argv[1]
ROWS = int(os.environ.get("ROWS", 100000))
BF_ROWS = int(os.environ.get("BF_ROWS", 100000))
NQ = int(os.environ.get("QUERIES", 1000))
K = int(os.environ.get("K", 100))
REPEAT = int(os.environ.get("REPEAT", 3))
DIM = 768


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def openblas_cores():
    """the OpenBLAS core each library in this process runs (numpy's, faiss's)"""
    try:
        import faiss  # noqa: F401  (loads its OpenBLAS with the libgfortran it bundles, so dlopen finds it)
    except ImportError:
        pass
    cores = {}
    for path in sorted(set(glob.glob(os.path.join(os.path.dirname(np.__file__), "..", "numpy.libs", "libscipy_openblas*.so*"))
                           + glob.glob(os.path.join(os.path.dirname(np.__file__), "..", "faiss_cpu.libs", "*openblas*.so*")))):
        try:
            lib = ctypes.CDLL(path)
            for name in ("scipy_openblas_get_corename64_", "openblas_get_corename64_", "openblas_get_corename"):
                f = getattr(lib, name, None)
                if f:
                    f.restype = ctypes.c_char_p
                    cores[os.path.basename(path)] = f().decode()
                    break
        except OSError:
            pass
    return cores or {"?": "not found"}


CPU_S = {}  # fn -> best CPU seconds (user + system, every thread of this process) of its runs


def best(fn):
    ts, cs = [], []
    r = None
    for _ in range(REPEAT):
        r = None  # the previous result is freed first (its pages are not reused by the next)
        c0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.perf_counter()
        r = fn()
        ts.append(time.perf_counter() - t0)
        c1 = resource.getrusage(resource.RUSAGE_SELF)
        cs.append(c1.ru_utime - c0.ru_utime + c1.ru_stime - c0.ru_stime)
    CPU_S[fn] = min(cs)
    return min(ts), r


def header():
    print(f"cpu: {cpu_model()} ({os.cpu_count()} cpus), load average {os.getloadavg()}")
    print(f"vforge {vforge.__version__}, numpy {np.__version__}, OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}")
    print(f"openblas cores: {openblas_cores()}")


def duckdb_file():
    import duckdb
    path = os.path.join(out, f"duckdb_default_{ROWS}x{DIM}_zstd.parquet")
    if not os.path.exists(path):
        con = duckdb.connect()
        con.execute("SELECT setseed(0.42)")
        con.execute(f"COPY (SELECT list_transform(range({DIM}), lambda x: random()::FLOAT)::FLOAT[{DIM}] AS emb "
                    f"FROM range({ROWS})) TO '{path}' (FORMAT parquet, COMPRESSION zstd)")
    return path


def bench_read():
    import duckdb
    import pyarrow as pa
    import pyarrow.parquet as pq
    path = duckdb_file()
    meta = pq.ParquetFile(path).metadata
    print(f"\nread: {path}: {meta.num_rows} rows, {meta.num_row_groups} row group(s), "
          f"{meta.row_group(0).column(0).compression}, {os.path.getsize(path) / 1e6:.1f} MB")
    vforge.read_vectors(path)  # page cache

    def pyarrow_read(threads):
        pa.set_cpu_count(threads)
        t = pq.read_table(path, use_threads=threads > 1)
        return t.column("emb").combine_chunks().flatten().to_numpy().reshape(-1, DIM)

    def duckdb_read(threads):
        con = duckdb.connect()
        con.execute(f"SET threads={threads}")
        rel = con.sql(f"SELECT emb FROM read_parquet('{path}')")
        t = rel.to_arrow_table() if hasattr(rel, "to_arrow_table") else rel.arrow()
        return t.column("emb").combine_chunks().flatten().to_numpy().reshape(-1, DIM)

    rows = []
    ref = None
    for threads in (1, 2):
        fv, fp, fd = (lambda: vforge.read_vectors(path, threads=threads)), (lambda: pyarrow_read(threads)), \
            (lambda: duckdb_read(threads))
        tv, xv = best(fv)
        tp, xp = best(fp)
        td, xd = best(fd)
        if ref is None:
            ref = xv
        assert xv.shape == (ROWS, DIM) and np.array_equal(xv, xp) and np.array_equal(xv, xd)
        rows.append((threads, tv, tp, td, CPU_S[fv], CPU_S[fp], CPU_S[fd]))
        xv = xp = xd = None
    print(f"{'threads':>7} {'vforge_s':>9} {'pyarrow_s':>9} {'duckdb_s':>9} {'x pyarrow':>9} {'x duckdb':>9} {'MB/s vforge':>11}"
          f"  cpu_s: {'vforge':>6} {'pyarrow':>7} {'duckdb':>6}")
    for threads, tv, tp, td, cv, cp, cd in rows:
        print(f"{threads:>7} {tv:9.3f} {tp:9.3f} {td:9.3f} {tp / tv:9.2f} {td / tv:9.2f} {ref.nbytes / 1e6 / tv:11.1f}"
              f"         {cv:6.3f} {cp:7.3f} {cd:6.3f}")
    print("(cpu_s: user + system seconds of this process, best run: the work done, which a loaded machine "
          "inflates less than the wall time)")
    print(f"target: vforge >= 1.5x pyarrow on 1 thread -> {'met' if rows[0][2] / rows[0][1] >= 1.5 else 'NOT met'} "
          f"({rows[0][2] / rows[0][1]:.2f}x); 2 threads / 1 thread: vforge {rows[0][1] / rows[1][1]:.2f}x")


def bench_brute_force():
    import faiss
    rng = np.random.default_rng(7)
    x = rng.standard_normal((BF_ROWS, DIM), dtype=np.float32)
    q = rng.standard_normal((NQ, DIM), dtype=np.float32)
    print(f"\nbrute force: {BF_ROWS} x {DIM} float32 (numpy), {NQ} queries, k {K}, euclid; faiss {faiss.__version__} IndexFlatL2")
    print(f"{'threads':>7} {'vforge_s':>9} {'faiss_s':>9} {'x faiss':>8} {'GFLOP/s vf':>10} {'same top-1':>10}")
    ok = True
    for threads in (1, 2):
        faiss.omp_set_num_threads(threads)

        def run_faiss():
            ix = faiss.IndexFlatL2(DIM)
            ix.add(x)
            return ix.search(q, K)

        tv, hv = best(lambda: vforge.brute_force(x, q, K, "euclid", threads=threads))
        tf, (df, idf) = best(run_faiss)
        same = float(np.mean(hv.ids[:, 0] == idf[:, 0]))
        flops = 2.0 * BF_ROWS * NQ * DIM
        print(f"{threads:>7} {tv:9.3f} {tf:9.3f} {tf / tv:8.2f} {flops / tv / 1e9:10.1f} {same:10.3f}")
        ok &= tf / tv >= 1.2
    print(f"target: vforge >= 1.2x faiss-cpu -> {'met' if ok else 'NOT met'} at every thread count shown")


header()
bench_read()
bench_brute_force()
print("\n(one run on this machine; compare figures only from an idle machine)")
