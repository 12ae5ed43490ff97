#!/usr/bin/python3
"""bench/load/scale_local.sh's corpus writer: BASE.npy (N x D float32) -> OUTDIR/part-<k>.parquet,
FILES files of columns id int64 (the global row), emb list<float> (D per row) and text string
('document <id>'), zstd, with the row groups a writer gives by default (ROW_GROUP rows: DuckDB's
122,880 unless told), so the load reads the units it meets in the field rather than the 10,000-row
groups of gen_load_data.mjs.  Written through a temporary name per file (a killed run leaves no
file that looks complete).
usage: npy_to_parquet.py BASE.npy OUTDIR [FILES=4] [ROW_GROUP=122880]"""
import os
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

base, out = sys.argv[1], sys.argv[2]
files = int(sys.argv[3]) if len(sys.argv) > 3 else 4
rg = int(sys.argv[4]) if len(sys.argv) > 4 else 122880
x = np.load(base, mmap_mode="r")
n, d = x.shape
os.makedirs(out, exist_ok=True)
per = -(-n // files)
schema = pa.schema([("id", pa.int64()), ("emb", pa.list_(pa.float32())), ("text", pa.string())])
for k in range(files):
    lo, hi = k * per, min(n, (k + 1) * per)
    path = os.path.join(out, f"part-{k:03d}.parquet")
    with pq.ParquetWriter(path + ".part", schema, compression="zstd") as w:
        for a in range(lo, hi, rg):
            b = min(hi, a + rg)
            ids = np.arange(a, b, dtype=np.int64)
            flat = pa.array(np.ascontiguousarray(x[a:b]).reshape(-1), type=pa.float32())
            offs = pa.array(np.arange(0, (b - a) * d + 1, d, dtype=np.int32))
            emb = pa.ListArray.from_arrays(offs, flat)
            text = pa.array([f"document {i}" for i in range(a, b)])
            w.write_table(pa.table([pa.array(ids), emb, text], schema=schema), row_group_size=rg)
    os.replace(path + ".part", path)
