"""Write OUT.npy: DISTINCT random integer-valued float32 vectors of dimension D (components in
[-SPREAD, SPREAD], seeded), each present three times, shuffled - a corpus whose top-k cuts
through exact ties (the brute-force tie and thread tests).  Standard library only.

usage: dup_npy.py OUT SEED D DISTINCT SPREAD
"""
import random
import struct
import sys

out, seed, d, distinct, spread = sys.argv[1], *map(int, sys.argv[2:6])
random.seed(seed)
base = [[float(random.randint(-spread, spread)) for _ in range(d)] for _ in range(distinct)]
rows = [base[i % distinct] for i in range(3 * distinct)]
random.shuffle(rows)
hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }" % (len(rows), d)
hdr += " " * (64 - (10 + len(hdr) + 1) % 64) + "\n"
with open(out, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
    for r in rows:
        f.write(struct.pack("<%df" % d, *r))
