#!/usr/bin/python3
"""Clustered corpora for bench/scale: BASE.npy (N x D) and QUERIES.npy (NQ x D) float32 from one
mixture — bench/ivf/gen_synth.py's generator: 4096 Gaussian clusters of uneven sizes (Zipf-like
weights 1/sqrt(rank)), centres N(0, 1), noise N(0, 0.6^2).  The centres come from SEED; the base
rows from the stream SEED+1, the queries from SEED+2, so the queries are held out (never rows of
the base) and a larger N keeps the same centres.  Written in chunks into memory-mapped files.
usage: gen_scale.py BASE.npy QUERIES.npy N NQ D [SEED]"""
import sys
import numpy as np

base, qpath, n, nq, d = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
seed = int(sys.argv[6]) if len(sys.argv) > 6 else 1
k = 4096
centres = np.random.default_rng(seed).normal(0.0, 1.0, (k, d)).astype(np.float32)
w = 1.0 / np.arange(1, k + 1) ** 0.5
w /= w.sum()


def fill(path, rows, rng):
    x = np.lib.format.open_memmap(path + ".part", mode="w+", dtype=np.float32, shape=(rows, d))
    for a in range(0, rows, 65536):
        m = min(65536, rows - a)
        c = rng.choice(k, size=m, p=w)
        x[a:a + m] = centres[c] + rng.normal(0.0, 0.6, (m, d)).astype(np.float32)
    x.flush()
    del x
    import os
    os.replace(path + ".part", path)  # a killed run leaves no file that looks complete


fill(base, n, np.random.default_rng(seed + 1))
fill(qpath, nq, np.random.default_rng(seed + 2))
