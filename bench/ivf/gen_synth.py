#!/usr/bin/python3
"""Clustered synthetic vectors for bench/ivf: N x D float32 rows written as .npy.

Rows come from 4096 Gaussian clusters of uneven sizes (Zipf-like weights) whose centres are
N(0, 1) in every dimension; each row is its centre plus N(0, 0.6^2) noise, so neighbours
cross cluster borders and the index has to work for its recall.  Rows are written in chunks
(the file is memory-mapped), so memory stays at a few hundred MB whatever N.
usage: gen_synth.py OUT.npy N D [SEED]"""
import sys
import numpy as np

out, n, d = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
seed = int(sys.argv[4]) if len(sys.argv) > 4 else 1
rng = np.random.default_rng(seed)
k = 4096
centres = rng.normal(0.0, 1.0, (k, d)).astype(np.float32)
w = 1.0 / np.arange(1, k + 1) ** 0.5
w /= w.sum()
x = np.lib.format.open_memmap(out, mode="w+", dtype=np.float32, shape=(n, d))
chunk = 65536
for a in range(0, n, chunk):
    m = min(chunk, n - a)
    c = rng.choice(k, size=m, p=w)
    x[a:a + m] = centres[c] + rng.normal(0.0, 0.6, (m, d)).astype(np.float32)
x.flush()
