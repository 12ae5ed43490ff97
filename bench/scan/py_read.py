"""One Python reader of bench/scan, run as its own process (the harness times the whole process):

  py_read.py pyarrow|polars FILE_OR_DIR --threads N [--column emb]

pyarrow: pq.read_table(f, columns=[col], use_threads=N > 1) with pa.set_cpu_count(N), then the
list column to a NumPy (n, d) float32 array (flatten + reshape; one copy when the file has several
row groups/chunks).  polars: POLARS_MAX_THREADS=N (set before polars is imported), pl.read_parquet(
f, columns=[col]), the column cast to Array(Float32, d) and to_numpy() -> (n, d).  Both then take
the float64 sum of the array: a checksum comparable to `vforge scan`'s and DuckDB's
sum(list_sum(emb)) (summation order differs: equal to ~1e-9 relative), and the same "touch every
decoded value once" the other readers do.  A directory is read file by file (sorted *.parquet).
Prints one JSON line {"seconds" (in-process: read + to NumPy + sum), "rows", "dim", "checksum",
"threads", "reader", "version"}.
"""
import glob
import json
import os
import sys
import time


def main():
    args = sys.argv[1:]
    if len(args) < 2 or args[0] not in ("pyarrow", "polars"):
        sys.exit("usage: py_read.py pyarrow|polars FILE_OR_DIR --threads N [--column emb]")
    lib, src = args[0], args[1]
    threads, col = 1, "emb"
    i = 2
    while i < len(args):
        if args[i] == "--threads":
            threads = int(args[i + 1])
            i += 2
        elif args[i] == "--column":
            col = args[i + 1]
            i += 2
        else:
            sys.exit(f"py_read.py: unknown argument {args[i]}")
    files = sorted(glob.glob(os.path.join(src, "**", "*.parquet"), recursive=True)) if os.path.isdir(src) else [src]
    if lib == "polars":
        os.environ["POLARS_MAX_THREADS"] = str(threads)
    import numpy as np
    if lib == "pyarrow":
        import pyarrow as pa
        import pyarrow.parquet as pq
        version = pa.__version__
        pa.set_cpu_count(threads)
    else:
        import polars as pl
        version = pl.__version__
    t0 = time.perf_counter()  # after the imports: the in-process figure is the read itself
    rows, dim, total = 0, 0, 0.0
    if lib == "pyarrow":
        for f in files:
            t = pq.read_table(f, columns=[col], use_threads=threads > 1)
            c = t.column(col)
            c = c.chunk(0) if c.num_chunks == 1 else c.combine_chunks()
            flat = c.flatten().to_numpy()
            d = len(flat) // max(1, len(c))
            x = flat.reshape(len(c), d)
            rows, dim = rows + x.shape[0], d
            total += float(np.sum(x, dtype=np.float64))
    else:
        for f in files:
            s = pl.read_parquet(f, columns=[col])[col]
            n = len(s)
            d = s.list.len()[0] if s.dtype.base_type() == pl.List else s.dtype.size
            x = s.cast(pl.Array(pl.Float32, int(d))).to_numpy()
            assert x.shape == (n, d), x.shape
            rows, dim = rows + n, int(d)
            total += float(np.sum(x, dtype=np.float64))
    seconds = time.perf_counter() - t0
    print(json.dumps({"seconds": seconds, "rows": rows, "dim": dim, "checksum": total, "threads": threads,
                      "reader": lib, "version": version}))


if __name__ == "__main__":
    main()
