#!/usr/bin/env python3
"""Write a small filtered-search bundle in the layout of qdrant/ann-filtering-benchmark-datasets
(what vector-db-benchmark's AnnCompoundReader / TarCompoundReader and bfb's TarReader read):

    DIR/vectors.npy     float32 N x D (row i is point i)
    DIR/payloads.jsonl  one JSON object per line (point i's payload)
    DIR/tests.jsonl     {"query": [...], "conditions": {"and": [{field: {match: {value}}}] ...},
                         "closest_ids": [...], "closest_scores": [...]}

and DIR.tgz (the three files as ./vectors.npy ..., as `tar czf` in the directory makes them).
The ground truth is computed here with numpy, exactly (cosine similarity; ties by id), over the
rows whose payload satisfies the conditions, written as vector-db-benchmark does: conditions in
the {"and": [...], "or": [...]} form with match / match_any / range entries; some queries carry
no conditions ({}), one matches nothing.

usage: gen_filter_bundle.py DIR [N] [D] [QUERIES] [K]
"""
import json
import os
import sys
import tarfile

import numpy as np

out = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
d = int(sys.argv[3]) if len(sys.argv) > 3 else 16
nq = int(sys.argv[4]) if len(sys.argv) > 4 else 40
k = int(sys.argv[5]) if len(sys.argv) > 5 else 10
rng = np.random.default_rng(1234)
os.makedirs(out, exist_ok=True)

vec = rng.standard_normal((n, d)).astype(np.float32)
np.save(os.path.join(out, "vectors.npy"), vec)
colors = ["red", "green", "blue", "black", "white"]
payloads = []
for i in range(n):
    p = {"color": colors[int(rng.integers(0, 5))], "price": float(round(rng.uniform(0, 100), 3)),
         "year": int(rng.integers(2000, 2025))}
    if i % 7 == 0:
        p["tags"] = [colors[int(rng.integers(0, 5))], "sale"]
    payloads.append(p)
with open(os.path.join(out, "payloads.jsonl"), "w") as f:
    for p in payloads:
        f.write(json.dumps(p) + "\n")


def holds(entry, p):
    (field, spec), = entry.items()
    (kind, crit), = spec.items()
    v = p.get(field)
    vals = v if isinstance(v, list) else [v]
    if kind == "match":
        return any(x == crit["value"] for x in vals if x is not None)
    if kind == "match_any":
        return any(x in crit["any"] for x in vals if x is not None)
    if kind == "range":
        def ok(x):
            return (isinstance(x, (int, float)) and not isinstance(x, bool)
                    and ("lt" not in crit or x < crit["lt"]) and ("gt" not in crit or x > crit["gt"])
                    and ("lte" not in crit or x <= crit["lte"]) and ("gte" not in crit or x >= crit["gte"]))
        return any(ok(x) for x in vals)
    raise ValueError(kind)


def allowed(cond, p):
    if not cond:
        return True
    if "and" in cond and not all(holds(e, p) for e in cond["and"]):
        return False
    if "or" in cond and cond["or"] and not any(holds(e, p) for e in cond["or"]):
        return False
    return True


norm = vec / np.linalg.norm(vec, axis=1, keepdims=True)
with open(os.path.join(out, "tests.jsonl"), "w") as f:
    for qi in range(nq):
        q = rng.standard_normal(d).astype(np.float32)
        c = qi % 6
        if c == 0:
            cond = {"and": [{"color": {"match": {"value": colors[qi % 5]}}}]}
        elif c == 1:
            cond = {"and": [{"price": {"range": {"gt": 10.0, "lt": 30.5}}}, {"color": {"match_any": {"any": ["red", "blue"]}}}]}
        elif c == 2:
            cond = {"or": [{"tags": {"match": {"value": "sale"}}}, {"year": {"match": {"value": 2003}}}]}
        elif c == 3:
            cond = {}
        elif c == 4:
            cond = {"and": [{"year": {"range": {"gte": 2020}}}, {"price": {"range": {"lte": 5.0}}}]}
        else:
            cond = {"and": [{"color": {"match": {"value": "purple"}}}]}  # matches nothing
        mask = np.array([allowed(cond, p) for p in payloads])
        qn = q / np.linalg.norm(q)
        s = (norm.astype(np.float64) @ qn.astype(np.float64))
        ids = np.nonzero(mask)[0]
        order = sorted(ids, key=lambda i: (-s[i], i))[:k]
        f.write(json.dumps({"query": [float(x) for x in q], "conditions": cond,
                            "closest_ids": [int(i) for i in order],
                            "closest_scores": [float(s[i]) for i in order]}) + "\n")

with tarfile.open(out.rstrip("/") + ".tgz", "w:gz") as t:
    for name in ("vectors.npy", "payloads.jsonl", "tests.jsonl"):
        t.add(os.path.join(out, name), arcname="./" + name)
print(f"bundle: {n} points x {d}, {nq} queries, k {k} -> {out} and {out.rstrip('/')}.tgz")
