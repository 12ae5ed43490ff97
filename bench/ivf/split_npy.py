"""Split a .npy of rows in two: the first N rows and the rest (held-out queries for bench/ivf).
usage: split_npy.py ALL.npy N HEAD.npy TAIL.npy"""
import sys

import numpy as np

if len(sys.argv) != 5:
    sys.exit(__doc__)
x = np.load(sys.argv[1], mmap_mode="r")
n = int(sys.argv[2])
if not 0 < n < len(x):
    sys.exit("split_npy: N is %d, but %s has %d rows: N must be 1..%d" % (n, sys.argv[1], len(x), len(x) - 1))
np.save(sys.argv[3], x[:n])
np.save(sys.argv[4], x[n:])
