"""bench/scan input files "as the field writes them" (issue 16), each written once into OUTDIR and
kept (bench/out/ is gitignored; a file is written under a temporary name and renamed, so an
interrupted run never leaves half a file that a later run would take as done).

  gen_files.py OUTDIR ROWS DIM KIND...  (run by bench/scan/run.sh with the pinned .venv python)

The random files hold the same vectors: ROWS x DIM float32 uniform in [0, 1) from numpy's PCG64
with seed 16 (incompressible but for the exponent bits, like real embeddings: zstd saves ~8 %),
plus an `id` BIGINT column, handed to each writer as one Arrow table:
  duckdb_default_zstd    DuckDB (PyPI duckdb) COPY ... (FORMAT parquet, COMPRESSION zstd), every
                         other setting its default (122,880 rows per row group: one row group for
                         100k rows; DuckDB writes FLOAT[DIM] as a LIST and its pages ~100 MB)
  duckdb_rg10240_{uncompressed,zstd}  the same with row_group_size 10240 (the layout of the
                         figures bench/RESULTS.md reported before issue 16)
  pyarrow_default        pyarrow.parquet.write_table with its defaults (snappy, dictionary tried
                         then PLAIN fallback, 1 MiB pages, row groups up to 1Mi rows)
  polars_default         polars DataFrame.write_parquet with its defaults (zstd)
  spark_128m_{uncompressed,snappy}  Spark-like: one row group of ~128 MiB (parquet.block.size),
                         i.e. the first floor(128 MiB / row bytes) vectors (all of them when fewer),
                         1 MiB data pages v1, no dictionary for the floats, with a page index
                         (parquet-mr >= 1.11 writes one), written by pyarrow with those settings
  fmnist                 Fashion-MNIST (train, 60000 x 784, or t10k with FMNIST=t10k) as
                         `vforge convert` writes it (needs VFORGE=path/to/vforge): the directory
                         OUTDIR/fmnist_train or OUTDIR/fmnist_t10k (ROWS and DIM do not apply)
Prints one JSON line per kind: {"kind", "path", "rows"}.
"""
import json
import os
import subprocess
import sys

import numpy as np

SEED = 16
SPARK_BLOCK = 128 << 20


def vectors(rows, dim):
    x = np.random.default_rng(SEED).random((rows, dim), dtype=np.float32)
    return np.arange(rows, dtype=np.int64), x


def arrow_table(ids, x):
    import pyarrow as pa
    emb = pa.FixedSizeListArray.from_arrays(pa.array(x.reshape(-1)), x.shape[1])
    return pa.table({"id": ids, "emb": emb})


def write_duckdb(table, tmp, row_group_size=None, codec="zstd"):
    import duckdb
    con = duckdb.connect()
    con.register("vecs", table)
    opts = f"FORMAT parquet, COMPRESSION {codec}"
    if row_group_size:
        opts += f", ROW_GROUP_SIZE {row_group_size}"
    path = tmp.replace("'", "''")
    con.execute(f"COPY (SELECT id, emb FROM vecs) TO '{path}' ({opts})")
    con.close()


def main():
    if len(sys.argv) < 5:
        sys.exit("usage: gen_files.py OUTDIR ROWS DIM KIND...")
    out, rows, dim, kinds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
    os.makedirs(out, exist_ok=True)
    data = None
    for kind in kinds:
        which = "t10k" if os.environ.get("FMNIST") == "t10k" else "train"
        path = os.path.join(out, f"fmnist_{which}" if kind == "fmnist" else f"{kind}.parquet")
        nrows = rows
        if kind.startswith("spark_128m_"):
            nrows = min(rows, SPARK_BLOCK // (dim * 4 + 8))
        if kind == "fmnist":
            nrows = 10000 if which == "t10k" else 60000
        if os.path.exists(path):
            print(json.dumps({"kind": kind, "path": path, "rows": nrows}))
            continue
        tmp = os.path.join(out, f".tmp-{os.getpid()}-{os.path.basename(path)}")
        if kind == "fmnist":
            vf = os.environ.get("VFORGE")
            src = f"/usr/share/datasets/fashion-mnist/{which}-images-idx3-ubyte.gz"
            if not vf or not os.path.exists(src):
                sys.exit(f"gen_files: fmnist needs VFORGE and {src} (scripts/install-deps.sh installs dataset-fashion-mnist)")
            subprocess.run([vf, "--quiet", "convert", src, "--output", tmp], check=True)
            os.replace(tmp, path)
            print(json.dumps({"kind": kind, "path": path, "rows": nrows}))
            continue
        if data is None:
            data = vectors(rows, dim)
        ids, x = data
        table = arrow_table(ids[:nrows], x[:nrows])
        if kind == "duckdb_default_zstd":
            write_duckdb(table, tmp)
        elif kind in ("duckdb_rg10240_uncompressed", "duckdb_rg10240_zstd"):
            write_duckdb(table, tmp, row_group_size=10240, codec=kind.rsplit("_", 1)[1])
        elif kind == "pyarrow_default":
            import pyarrow.parquet as pq
            pq.write_table(table, tmp)
        elif kind == "polars_default":
            import polars as pl
            pl.DataFrame({"id": ids[:nrows], "emb": x[:nrows]}).write_parquet(tmp)
        elif kind in ("spark_128m_uncompressed", "spark_128m_snappy"):
            import pyarrow.parquet as pq
            pq.write_table(table, tmp, row_group_size=nrows, data_page_size=1 << 20, data_page_version="1.0",
                           compression="none" if kind.endswith("uncompressed") else "snappy",
                           use_dictionary=False, write_page_index=True)
        else:
            sys.exit(f"gen_files: unknown kind {kind}")
        os.replace(tmp, path)
        print(json.dumps({"kind": kind, "path": path, "rows": nrows}))


if __name__ == "__main__":
    main()
