#!/usr/bin/env python3
"""Fixtures and checks for the component-dataset tests (tests/corpus/test_dataset.sh,
tests/load/test_dataset_http.sh).  Vector row of global row g: [g, g + 0.5, -g, 1.25] (exact in
float32/float16 for the sizes used), so a point's vector tells which global row it came from.

  dataset_gen.py parts DIR FMT SIZES      vectors part i -> DIR/emb_{i}.FMT (npy | fbin) and the
                                          labels DIR/gid_{i}.npy (int32 = global row) that
                                          `vforge convert --labels` turns into the payload part
  dataset_gen.py npy FILE DTYPE ROWS      one .npy of the rows 0..ROWS-1 in DTYPE (<f4 <f2 <f8 |u1 |i1)
  dataset_gen.py check FIRST COUNT [payload]
                                          stdin: `vforge cat` of a local collection; every point
                                          id_num in FIRST..FIRST+COUNT-1 exactly once, its vector
                                          the one of that row and (payload) payload.label == id
"""
import json
import sys

import numpy as np


def vec(g):
    return [float(g), g + 0.5, -float(g), 1.25]


def rows(first, n, dtype="<f4"):
    a = np.array([vec(g) for g in range(first, first + n)], dtype=np.float64).reshape(n, 4)
    return a.astype(dtype)


def main():
    mode = sys.argv[1]
    if mode == "parts":
        d, fmt, sizes = sys.argv[2], sys.argv[3], [int(x) for x in sys.argv[4].split(",")]
        g = 0
        for i, n in enumerate(sizes):
            a = rows(g, n)
            if fmt == "npy":
                np.save(f"{d}/emb_{i}.npy", a)
            else:
                with open(f"{d}/emb_{i}.fbin", "wb") as f:
                    np.array([n, 4], dtype="<u4").tofile(f)
                    a.astype("<f4").tofile(f)
            np.save(f"{d}/gid_{i}.npy", np.arange(g, g + n, dtype="<i4"))
            np.save(f"{d}/gidv_{i}.npy", np.arange(g, g + n, dtype="<f4").reshape(n, 1))
            g += n
        return 0
    if mode == "npy":
        path, dtype, n = sys.argv[2], sys.argv[3], int(sys.argv[4])
        a = rows(0, n)
        if dtype in ("|u1", "|i1"):
            a = np.clip(a, 0, 100)
        np.save(path, a.astype(dtype))
        return 0
    if mode == "check":
        first, count = int(sys.argv[2]), int(sys.argv[3])
        with_payload = len(sys.argv) > 4
        seen = set()
        bad = 0
        for line in sys.stdin:
            r = json.loads(line)
            g = r["id_num"]
            if g in seen:
                print(f"point {g} stored twice")
                bad += 1
            seen.add(g)
            if g is None or not (first <= g < first + count):
                print(f"unexpected point id {g}")
                bad += 1
                continue
            if r["emb"] != vec(g):
                print(f"point {g}: vector {r['emb']} belongs to another row (expected {vec(g)})")
                bad += 1
            if with_payload:
                p = json.loads(r["payload"])
                if p.get("label") != g:
                    print(f"point {g}: payload {p} is another row's")
                    bad += 1
            if bad > 10:
                break
        if len(seen) != count:
            print(f"{len(seen)} points stored, expected {count}")
            bad += 1
        return 1 if bad else 0
    print("unknown mode", mode)
    return 2


if __name__ == "__main__":
    sys.exit(main())
