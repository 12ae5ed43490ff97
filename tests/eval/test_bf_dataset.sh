#!/usr/bin/env bash
# generate-queries / brute-force / brute-force-merge over component datasets and vector files
# (issue 8): (1) a `type: dataset` config of 3 npy parts of unequal sizes + parquet payload
# parts: generate-queries samples rows whose query_id is the global row and whose vector is that
# row; brute-force (metric from the config) matches an exact numpy top-10 with ids = global rows
# (ties allowed to swap); (2) 2 jobs + merge and --threads 1 are byte-identical to one job, and
# the merge refuses a partial set computed for another corpus; (3) a single .fbin and a single
# .npy as the corpus, .npy queries (query i = "i"); (4) an ann-benchmarks hdf5 bundle: train as
# the corpus, the bundle itself as queries (`test`), hits = `neighbors` (skipped without h5py);
# (5) a config whose parts are missing, an id_expression reading a column, --columns on a config:
# clear errors, exit 2.
set -u
V=${VFORGE:?set VFORGE to the vforge binary}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
"$PY" -c 'import numpy' 2>/dev/null || { echo "python3-numpy not installed"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/bf-dataset.XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

# fixtures: parts of 40, 7 and 73 rows (dim 16), payload label = global row; queries.npy
"$PY" - "$tmp" <<'EOF' || { echo "FAIL: fixture generation"; exit 1; }
import sys
import numpy as np
d = sys.argv[1]
rng = np.random.default_rng(7)
g = 0
for i, n in enumerate([40, 7, 73]):
    a = rng.standard_normal((n, 16)).astype("<f4")
    a[n // 2] = a[0]  # duplicate rows inside a part: equal scores, ties broken by id text
    np.save(f"{d}/emb_{i}.npy", a)
    np.save(f"{d}/gid_{i}.npy", np.arange(g, g + n, dtype="<i4"))
    g += n
allv = np.concatenate([np.load(f"{d}/emb_{i}.npy") for i in range(3)])
np.save(f"{d}/all.npy", allv)
with open(f"{d}/all.fbin", "wb") as f:
    np.array(allv.shape, dtype="<u4").tofile(f)
    allv.tofile(f)
np.save(f"{d}/q.npy", rng.standard_normal((12, 16)).astype("<f4"))
EOF
for i in 0 1 2; do
  "$V" --quiet convert "$tmp/emb_$i.npy" --labels "$tmp/gid_$i.npy" --output "$tmp/c$i" \
    --row-group-rows 16 > /dev/null || { echo "FAIL: convert payload part $i"; exit 1; }
  mv "$tmp/c$i/batch_00000000.parquet" "$tmp/meta_$i.parquet"
done
cat > "$tmp/ds.yaml" <<EOC
vectors:
  emb: {type: dense, distance: cosine}
datasource:
  type: dataset
  vectors: {parts: {count: 3, path: "$tmp/emb_{i}.npy"}}
  payload: {format: parquet, parts: {count: 3, path: "$tmp/meta_{i}.parquet"}, columns: [label]}
  id_expression: row
EOC

# check RESULT VECTORS QUERIES METRIC K: `vforge cat` of a brute-force result against numpy
# (ids = row numbers; queries: a parquet queries file (vector column VEC) or a .npy)
check() {
  "$V" cat "$1" > "$1.jsonl" || return 1
  "$PY" - "$1.jsonl" "$2" "$3" "$4" "$5" <<'EOF'
import json, sys
import numpy as np
res, vecs, qsrc, metric, k = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
X = np.load(vecs).astype(np.float64)
rows = [json.loads(l) for l in open(res)]
if qsrc.endswith(".npy"):
    Q = np.load(qsrc).astype(np.float64)
    qids = [str(i) for i in range(len(Q))]
else:
    qs = [json.loads(l) for l in open(qsrc)]
    Q = np.array([q["emb"] for q in qs], dtype=np.float64)
    qids = [q["query_id"] for q in qs]
assert [r["query_id"] for r in rows] == qids, "query ids/order differ"
if metric == "cosine":
    S = (Q / np.linalg.norm(Q, axis=1)[:, None]) @ (X / np.linalg.norm(X, axis=1)[:, None]).T
elif metric == "dot":
    S = Q @ X.T
else:
    S = -np.sqrt(((Q[:, None, :] - X[None, :, :]) ** 2).sum(-1))
bad = 0
for i, r in enumerate(rows):
    ids = [int(h) for h in r["hit_ids"]]
    sc = np.array(r["hit_scores"], dtype=np.float64)
    exact = np.sort(S[i])[::-1][:k]
    if len(ids) != k or not np.allclose(sc, exact, atol=1e-5):
        bad += 1; print("query", i, "scores", sc[:3], "expected", exact[:3]); continue
    # every returned id's own score matches its rank's score (ties may swap ids)
    if not np.allclose(S[i][ids], sc, atol=1e-5):
        bad += 1; print("query", i, "ids", ids, "do not have the scores"); continue
    # best first, ties ordered by id text
    for a in range(k - 1):
        if sc[a] < sc[a + 1] or (sc[a] == sc[a + 1] and str(ids[a]) > str(ids[a + 1])):
            bad += 1; print("query", i, "order at", a); break
sys.exit(1 if bad else 0)
EOF
}

# 1. generate-queries on the config: ids are global rows, vectors are those rows
if "$V" generate-queries "$tmp/ds.yaml" -n 25 --seed 3 > "$tmp/gq.out" 2>&1 &&
   [ -f "$tmp/eval/queries_25.parquet" ]; then
  "$V" cat "$tmp/eval/queries_25.parquet" > "$tmp/q25.jsonl"
  if "$PY" - "$tmp" <<'EOF'
import json, sys
import numpy as np
d = sys.argv[1]
X = np.load(f"{d}/all.npy")
parts = [f"{d}/emb_{i}.npy" for i in range(3)]
base = {parts[0]: 0, parts[1]: 40, parts[2]: 47}
qs = [json.loads(l) for l in open(f"{d}/q25.jsonl")]
assert len(qs) == 25 and len({q["query_id"] for q in qs}) == 25
for q in qs:
    g = int(q["query_id"])
    assert base[q["__source_file__"]] + q["__source_row__"] == g, q["query_id"]
    assert np.array_equal(np.array(q["emb"], dtype=np.float32), X[g]), g
EOF
  then ok "generate-queries CONFIG: 25 queries, query_id = global row, vector = that row, under <part 0 dir>/eval"
  else fail "generate-queries CONFIG: query ids/vectors do not match the rows"; fi
else fail "generate-queries CONFIG: $(tail -3 "$tmp/gq.out")"; fi
Q="$tmp/eval/queries_25.parquet"
"$V" cat "$Q" > "$tmp/q25.jsonl" 2>/dev/null

# brute-force on the config (metric: the config's cosine) against numpy
if "$V" brute-force "$tmp/ds.yaml" --queries "$Q" -k 10 > "$tmp/bf.out" 2>&1 &&
   [ -f "$tmp/eval/brute_force_queries_25_k10.parquet" ] && grep -q "cosine" "$tmp/bf.out"; then
  if check "$tmp/eval/brute_force_queries_25_k10.parquet" "$tmp/all.npy" "$tmp/q25.jsonl" cosine 10; then
    ok "brute-force CONFIG (3 npy parts + payload, cosine from the config) = numpy top-10, ids = global rows"
  else fail "brute-force CONFIG differs from numpy"; fi
else fail "brute-force CONFIG: $(tail -3 "$tmp/bf.out")"; fi
# --metric overrides the configured distance
if "$V" --quiet brute-force "$tmp/ds.yaml" --queries "$Q" -k 10 --metric euclid \
     --output "$tmp/bf_l2.parquet" > "$tmp/bf2.out" 2>&1 &&
   check "$tmp/bf_l2.parquet" "$tmp/all.npy" "$tmp/q25.jsonl" euclid 10; then
  ok "--metric euclid overrides the config's distance"
else fail "brute-force CONFIG --metric euclid: $(tail -3 "$tmp/bf2.out")"; fi

# 2. determinism: --threads 1, two jobs + merge: byte-identical to the single job
one="$tmp/eval/brute_force_queries_25_k10.parquet"
"$V" --quiet --threads 1 brute-force "$tmp/ds.yaml" --queries "$Q" -k 10 --output "$tmp/t1.parquet" > /dev/null 2>&1
cmp -s "$one" "$tmp/t1.parquet" && ok "--threads 1 output byte-identical" || fail "--threads 1 output differs"
r0=0
for r in 0 1; do
  "$V" --quiet brute-force "$tmp/ds.yaml" --queries "$Q" -k 10 --num-jobs 2 --job-rank $r > "$tmp/j$r.out" 2>&1 || r0=1
done
if [ $r0 -eq 0 ] && [ -f "$tmp/eval/_bf_partial_queries_25_k10/rank001.parquet" ] &&
   "$V" --quiet brute-force-merge "$tmp/ds.yaml" --queries "$Q" -k 10 --output "$tmp/merged.parquet" > "$tmp/m.out" 2>&1 &&
   cmp -s "$one" "$tmp/merged.parquet"; then
  ok "2 jobs (parts split over jobs) + brute-force-merge CONFIG byte-identical to one job"
else fail "jobs/merge: $(tail -2 "$tmp/j0.out" "$tmp/j1.out" "$tmp/m.out" 2>/dev/null)"; fi
# the merge checks the corpus file list: the same partials against another corpus are refused
"$V" --quiet brute-force-merge "$tmp/all.npy" --queries "$Q" -k 10 --output "$tmp/x.parquet" > "$tmp/mx.out" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q "corpus" "$tmp/mx.out"; then ok "merge against another corpus refused (exit 2, names the corpus)"
else fail "merge with another corpus: exit $rc, $(tail -2 "$tmp/mx.out")"; fi

# a config over a parquet uri (vector `column:`, default id expression) gives exactly what the
# parquet URI itself gives
"$V" --quiet convert "$tmp/all.npy" --output "$tmp/pq" --rows-per-file 50 > /dev/null 2>&1
cat > "$tmp/pq.yaml" <<EOC
vectors:
  emb: {column: emb, distance: dot}
datasource: {uri: "$tmp/pq"}
EOC
if "$V" --quiet brute-force "$tmp/pq" --queries "$Q" -k 10 --metric dot --output "$tmp/pq_uri.parquet" > "$tmp/pq1.out" 2>&1 &&
   "$V" --quiet brute-force "$tmp/pq.yaml" --queries "$Q" -k 10 --output "$tmp/pq_cfg.parquet" > "$tmp/pq2.out" 2>&1 &&
   cmp -s "$tmp/pq_uri.parquet" "$tmp/pq_cfg.parquet"; then
  ok "config with a parquet uri (metric dot from the config) = brute-force of the URI, byte for byte"
else fail "uri config: $(tail -2 "$tmp/pq1.out" "$tmp/pq2.out")"; fi

# 3. a single .fbin / .npy file as the corpus; .npy queries (query i = "i")
for f in all.fbin all.npy; do
  if "$V" --quiet brute-force "$tmp/$f" --queries "$tmp/q.npy" -k 7 --metric euclid \
       --output "$tmp/bf_$f.parquet" > "$tmp/bf_$f.out" 2>&1 &&
     check "$tmp/bf_$f.parquet" "$tmp/all.npy" "$tmp/q.npy" euclid 7; then
    ok "brute-force $f (one-part dataset, ids = rows) with .npy queries = numpy euclid top-7"
  else fail "brute-force $f: $(tail -3 "$tmp/bf_$f.out")"; fi
done
# generate-queries on a vector file: default outputs in its directory, query ids = rows
mkdir -p "$tmp/vf" && cp "$tmp/all.fbin" "$tmp/vf/"
if "$V" --quiet generate-queries "$tmp/vf/all.fbin" -n 5 > "$tmp/gv.out" 2>&1 &&
   "$V" --quiet brute-force "$tmp/vf/all.fbin" --queries "$tmp/vf/eval/queries_5.parquet" -k 3 --metric dot > "$tmp/bv.out" 2>&1 &&
   "$V" cat "$tmp/vf/eval/queries_5.parquet" | sed 's/"vector":/"emb":/' > "$tmp/gv.jsonl" &&
   check "$tmp/vf/eval/brute_force_queries_5_k3.parquet" "$tmp/all.npy" "$tmp/gv.jsonl" dot 3; then
  ok "generate-queries + brute-force on a .fbin: outputs under its directory, = numpy dot top-3"
else fail "generate-queries/brute-force on a .fbin: $(tail -2 "$tmp/gv.out" "$tmp/bv.out")"; fi

# 4. an ann-benchmarks bundle: train = corpus, test = queries, neighbors = truth
if "$PY" -c 'import h5py' 2>/dev/null; then
  "$PY" - "$tmp" <<'EOF' || fail "building the hdf5 bundle"
import sys
import h5py, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(11)
train = rng.integers(0, 16, (600, 12)).astype(np.float32)  # integer data: exact distances
test = rng.integers(0, 16, (30, 12)).astype(np.float32)
d2 = ((test[:, None, :].astype(np.float64) - train[None, :, :]) ** 2).sum(-1)
nb = np.argsort(d2, axis=1, kind="stable")[:, :10]
with h5py.File(f"{d}/bundle-12-euclidean.hdf5", "w") as f:
    # fixed-length ASCII (a Python str attribute is variable-length UTF-8, which
    # hdf5_root_attr() does not read yet)
    f.attrs["distance"] = np.bytes_(b"euclidean")
    f.create_dataset("train", data=train)
    f.create_dataset("test", data=test)
    f.create_dataset("neighbors", data=nb.astype(np.int32))
    f.create_dataset("distances", data=np.sqrt(np.take_along_axis(d2, nb, axis=1)).astype(np.float32))
np.save(f"{d}/train.npy", train)
EOF
  H="$tmp/bundle-12-euclidean.hdf5"
  if "$V" brute-force "$H" --queries "$H" -k 10 --output "$tmp/h5.parquet" > "$tmp/h5.out" 2>&1 &&
     grep -q "euclid" "$tmp/h5.out" && "$V" cat "$tmp/h5.parquet" > "$tmp/h5.jsonl" &&
     "$PY" - "$tmp/h5.jsonl" "$H" <<'EOF'
import json, sys
import h5py, numpy as np
rows = [json.loads(l) for l in open(sys.argv[1])]
with h5py.File(sys.argv[2], "r") as f:
    nb, dist = f["neighbors"][:], f["distances"][:]
assert len(rows) == len(nb)
for i, r in enumerate(rows):
    assert r["query_id"] == str(i)
    sc = np.array(r["hit_scores"])
    assert np.allclose(sc, -dist[i], atol=1e-4), (i, sc, dist[i])
    ids = [int(x) for x in r["hit_ids"]]
    # equal distances may swap ids: compare per distinct score value
    for s in set(np.round(sc, 4)):
        mine = {ids[j] for j in range(10) if round(sc[j], 4) == s}
        theirs = {int(nb[i][j]) for j in range(10) if round(-float(dist[i][j]), 4) == s}
        full = [j for j in range(10) if round(sc[j], 4) == s]
        if max(full) < 9:  # a tie group cut by K may hold other rows of equal distance
            assert mine == theirs, (i, s, mine, theirs)
EOF
  then ok "hdf5 bundle: brute-force of train with the bundle as queries (test) = its neighbors (metric from the bundle)"
  else fail "hdf5 bundle: $(tail -3 "$tmp/h5.out")"; fi
else
  echo "skip: python3-h5py not installed (hdf5 bundle part)"
fi

# 5. bad input
sed "s#emb_{i}.npy#nothere_{i}.npy#" "$tmp/ds.yaml" > "$tmp/missing.yaml"
"$V" brute-force "$tmp/missing.yaml" --queries "$Q" -k 10 > "$tmp/e1.out" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q "nothere_0.npy" "$tmp/e1.out"; then ok "config with missing parts: exit 2 naming the part"
else fail "missing parts: exit $rc, $(tail -2 "$tmp/e1.out")"; fi
"$V" generate-queries "$tmp/missing.yaml" -n 3 > "$tmp/e1b.out" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "nothere_0.npy" "$tmp/e1b.out" && ok "generate-queries: missing parts, exit 2" ||
  fail "generate-queries missing parts: exit $rc, $(tail -2 "$tmp/e1b.out")"
sed "s#id_expression: row#id_expression: label#" "$tmp/ds.yaml" > "$tmp/idcol.yaml"
"$V" brute-force "$tmp/idcol.yaml" --queries "$Q" -k 10 --output "$tmp/x2.parquet" > "$tmp/e2.out" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "reads columns" "$tmp/e2.out" && ok "an id_expression reading a column: exit 2, explained" ||
  fail "id column: exit $rc, $(tail -2 "$tmp/e2.out")"
"$V" generate-queries "$tmp/ds.yaml" -n 3 --columns label --output "$tmp/x3.parquet" > "$tmp/e3.out" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "columns" "$tmp/e3.out" && ok "--columns on a config: exit 2" ||
  fail "--columns on a config: exit $rc, $(tail -2 "$tmp/e3.out")"
"$V" brute-force "$tmp/ds.yaml" --queries "$Q" -k 10 --column nope --output "$tmp/x4.parquet" > "$tmp/e4.out" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "no vector 'nope'" "$tmp/e4.out" && ok "--column naming no configured vector: exit 2" ||
  fail "--column nope: exit $rc, $(tail -2 "$tmp/e4.out")"
"$V" brute-force "$tmp/nothere.npy" --queries "$Q" -k 10 > "$tmp/e5.out" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "nothere.npy" "$tmp/e5.out" && ok "missing vector file: exit 2" ||
  fail "missing vector file: exit $rc, $(tail -2 "$tmp/e5.out")"

[ $fails -eq 0 ] && { echo "all passed"; exit 0; }
echo "$fails failure(s)"
exit 1
