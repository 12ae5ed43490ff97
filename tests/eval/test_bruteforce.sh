#!/usr/bin/env bash
# generate-queries + brute-force + brute-force-merge on the bundled corpus (2 files x 3000 rows,
# emb FLOAT[32]):
#  - queries: same seed -> same bytes, other seed -> other rows, every query row equals its
#    corpus row (vector and payload, read back through `vforge cat`);
#  - brute force for every metric equals an independent python brute force (double precision,
#    ties by point id; equal only up to 1e-5 relative in scores, ids compared up to score ties);
#  - output byte-identical for --threads 1 vs 4, VFORGE_SIMD=scalar, and for --num-jobs 2 + merge vs a single job;
#  - merge refuses a missing rank and a partial with another K.
# Needs python3 (standard library only).  VFORGE: the binary (default build/vforge).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
V=${VFORGE:-$here/build/vforge}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
command -v "$PY" >/dev/null || { echo "skip: no python3"; exit 77; }
[ -x "$V" ] || { echo "skip: no vforge binary at $V"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$here/examples/corpus" "$tmp/c"
C=$tmp/c
fail() { echo "FAIL: $*" >&2; exit 1; }

# --- generate-queries: determinism and correctness
"$V" generate-queries "$C" -n 50 --seed 7 --columns id,text,meta 2>/dev/null
Q=$C/eval/queries_50.parquet
[ -f "$Q" ] || fail "no $Q"
"$V" generate-queries "$C" -n 50 --seed 7 --columns id,text,meta --output "$tmp/q_again.parquet" 2>/dev/null
cmp -s "$Q" "$tmp/q_again.parquet" || fail "same seed gave different bytes"
"$V" generate-queries "$C" -n 50 --seed 8 --output "$tmp/q_other.parquet" 2>/dev/null
"$V" cat "$Q" > "$tmp/q.jsonl"
"$V" cat "$tmp/q_other.parquet" --columns __source_row__,__source_file__ > "$tmp/q_other.jsonl"
"$V" cat "$C" --with-id 'vf_point_id(filename, file_row_number)' > "$tmp/corpus.jsonl"
# discovery must not see the eval/ directory: still 6000 rows
[ "$(wc -l < "$tmp/corpus.jsonl")" = 6000 ] || fail "eval/ files leaked into discovery"
"$PY" - "$tmp" <<'PY' || fail "queries content"
import json, sys
t = sys.argv[1]
corpus = [json.loads(l) for l in open(t + "/corpus.jsonl")]
byid = {r["__id__"]: r for r in corpus}
q = [json.loads(l) for l in open(t + "/q.jsonl")]
assert len(q) == 50, len(q)
assert len({r["query_id"] for r in q}) == 50, "duplicate rows"
files = set()
for r in q:
    src = byid[r["query_id"]]
    assert src["emb"] == r["emb"], r["query_id"]
    assert src["id"] == r["id"] and src["text"] == r["text"], r["query_id"]
    assert json.loads(r["meta"]) == json.loads(src["meta"]) if isinstance(src["meta"], str) else src["meta"]
    files.add(r["__source_file__"])
assert len(files) == 2, "sample should span both files"
rows = [(r["__source_file__"], r["__source_row__"]) for r in q]
assert rows == sorted(rows), "queries not in corpus order"
other = [(json.loads(l)["__source_file__"], json.loads(l)["__source_row__"]) for l in open(t + "/q_other.jsonl")]
assert other != rows, "different seeds gave the same rows"
PY

# --- end to end on a dimension with a tail (37 = 2 x 16 + 5) and mixed magnitudes: the vector
# exact kernel gives the bytes of the reference (tests/eval/test_exact.c proves the kernels
# equal bit for bit on data where the order of additions shows)
"$PY" - "$tmp/v37.npy" <<'PY'
import random, struct, sys
random.seed(5)
n, d = 1500, 37
vals = []
for i in range(n):
    row = [random.gauss(0, 1) for _ in range(d)]
    if i % 2:  # +-2^30 spikes in several lanes: q.x cancels them, and which small terms survive
        for k in random.sample([0, 4, 8, 12, 16, 20, 24, 28, 32, 36], 4):  # depends on the order
            row[k] = random.choice((-1.0, 1.0)) * 2.0 ** 30
    elif i % 7 == 0:
        row = [v * 1e-20 for v in row]
    vals.extend(row)
hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }" % (n, d)
hdr += " " * (63 - (len(hdr) + 10) % 64) + "\n"
with open(sys.argv[1], "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
    f.write(struct.pack("<%df" % len(vals), *vals))
PY
"$V" convert "$tmp/v37.npy" --output "$tmp/c37" 2>/dev/null
"$V" generate-queries "$tmp/c37" -n 40 --seed 3 --output "$tmp/q37.parquet" 2>/dev/null
for m in cosine dot euclid manhattan; do
  "$V" brute-force "$tmp/c37" --queries "$tmp/q37.parquet" -k 25 --metric $m --output "$tmp/b37.parquet" 2>/dev/null
  VFORGE_SIMD=scalar "$V" brute-force "$tmp/c37" --queries "$tmp/q37.parquet" -k 25 --metric $m \
    --output "$tmp/b37_sc.parquet" 2>/dev/null
  cmp -s "$tmp/b37.parquet" "$tmp/b37_sc.parquet" || fail "$m, dim 37: the vector exact kernel differs from the reference"
done

# --- brute force vs an independent implementation, every metric
for m in cosine dot euclid manhattan; do
  "$V" brute-force "$C" --queries "$Q" -k 10 --metric $m 2>/dev/null
  out=$C/eval/brute_force_queries_50_k10.parquet
  [ -f "$out" ] || fail "no $out"
  mv "$out" "$tmp/bf_$m.parquet"
  "$V" --threads 1 brute-force "$C" --queries "$Q" -k 10 --metric $m --output "$tmp/bf_${m}_t1.parquet" 2>/dev/null
  "$V" --threads 4 brute-force "$C" --queries "$Q" -k 10 --metric $m --output "$tmp/bf_${m}_t4.parquet" 2>/dev/null
  cmp -s "$tmp/bf_$m.parquet" "$tmp/bf_${m}_t1.parquet" || fail "$m: --threads 1 output differs"
  cmp -s "$tmp/bf_$m.parquet" "$tmp/bf_${m}_t4.parquet" || fail "$m: --threads 4 output differs"
  # the SIMD kernels only filter: the scalar reference must give the same bytes
  VFORGE_SIMD=scalar "$V" brute-force "$C" --queries "$Q" -k 10 --metric $m --output "$tmp/bf_${m}_sc.parquet" 2>/dev/null
  cmp -s "$tmp/bf_$m.parquet" "$tmp/bf_${m}_sc.parquet" || fail "$m: VFORGE_SIMD=scalar output differs"
  "$V" cat "$tmp/bf_$m.parquet" > "$tmp/bf_$m.jsonl"
  "$PY" - "$tmp" "$m" <<'PY' || fail "$m: results differ from the python brute force"
import json, math, sys
t, metric = sys.argv[1], sys.argv[2]
corpus = [json.loads(l) for l in open(t + "/corpus.jsonl")]
q = [json.loads(l) for l in open(t + "/q.jsonl")]
res = [json.loads(l) for l in open(t + "/bf_%s.jsonl" % metric)]
def score(a, b):
    if metric == "dot": return math.fsum(x * y for x, y in zip(a, b))
    if metric == "cosine":
        na, nb = math.sqrt(math.fsum(x * x for x in a)), math.sqrt(math.fsum(x * x for x in b))
        return 0.0 if na == 0 or nb == 0 else math.fsum(x * y for x, y in zip(a, b)) / (na * nb)
    if metric == "euclid": return -math.sqrt(math.fsum((x - y) ** 2 for x, y in zip(a, b)))
    return -math.fsum(abs(x - y) for x, y in zip(a, b))
assert [r["query_id"] for r in res] == [r["query_id"] for r in q]
for qr, rr in zip(q, res):
    sc = sorted(((score(qr["emb"], c["emb"]), c["__id__"]) for c in corpus), key=lambda p: (-p[0], p[1]))
    want = sc[:10]
    got = list(zip(rr["hit_scores"], rr["hit_ids"]))
    assert len(got) == 10
    for (ws, wid), (gs, gid) in zip(want, got):
        assert abs(ws - gs) <= 1e-5 * max(1.0, abs(ws)), (qr["query_id"], ws, gs)
    # order: scores descending, ties by id
    for a, b in zip(got, got[1:]):
        assert a[0] > b[0] or (a[0] == b[0] and a[1] < b[1]), (a, b)
    # same ids unless scores tie at the cutoff
    kth = want[-1][0]
    strict = {i for s, i in want if s > kth + 1e-6 * max(1, abs(kth))}
    assert strict <= {i for _, i in got}, qr["query_id"]
    exact = {i: s for s, i in sc}
    for gs, gid in got:
        assert abs(exact[gid] - gs) <= 1e-5 * max(1.0, abs(gs)), gid
PY
done
# the query itself is its own nearest neighbour for euclid (score 0)
"$PY" -c "
import json,sys
for l in open('$tmp/bf_euclid.jsonl'):
    r=json.loads(l); assert r['hit_scores'][0]==0, r
" || fail "euclid: query not its own nearest neighbour"

# --- jobs + merge == single job; refusals
for m in cosine manhattan; do
  "$V" brute-force "$C" --queries "$Q" -k 10 --metric $m --num-jobs 2 --job-rank 0 2>/dev/null
  "$V" brute-force "$C" --queries "$Q" -k 10 --metric $m --num-jobs 2 --job-rank 1 2>/dev/null
  P=$C/eval/_bf_partial_queries_50_k10
  [ -f "$P/rank000.parquet" ] && [ -f "$P/rank001.parquet" ] || fail "partials missing"
  "$V" brute-force-merge "$C" --queries "$Q" -k 10 2>/dev/null
  cmp -s "$C/eval/brute_force_queries_50_k10.parquet" "$tmp/bf_$m.parquet" || fail "$m: merge differs from a single job"
  # the next metric's merge must not replace this one silently (issue 14): move it away
  mv "$C/eval/brute_force_queries_50_k10.parquet" "$tmp/merged_$m.parquet"
done
# missing rank
mv "$P/rank001.parquet" "$tmp/rank001.parquet"
set +e
msg=$("$V" brute-force-merge "$C" --queries "$Q" -k 10 2>&1); rc=$?
set -e
[ $rc -ne 0 ] || fail "merge accepted a missing rank"
echo "$msg" | grep -q "rank001" || fail "missing-rank message does not name the rank: $msg"
# a partial computed with another K
"$V" brute-force "$C" --queries "$Q" -k 5 --metric manhattan --num-jobs 2 --job-rank 1 --output "$P/rank001.parquet" 2>/dev/null
set +e
msg=$("$V" brute-force-merge "$C" --queries "$Q" -k 10 2>&1); rc=$?
set -e
[ $rc -eq 2 ] || fail "merge accepted a partial with K=5 (rc $rc)"
echo "$msg" | grep -q "different K" || fail "K mismatch message: $msg"
# a partial computed with another metric
"$V" brute-force "$C" --queries "$Q" -k 10 --metric dot --num-jobs 2 --job-rank 1 --output "$P/rank001.parquet" 2>/dev/null
set +e
msg=$("$V" brute-force-merge "$C" --queries "$Q" -k 10 2>&1); rc=$?
set -e
[ $rc -eq 2 ] && echo "$msg" | grep -q "different metric" || fail "metric mismatch not refused: $msg"
# a partial computed for other queries
"$V" brute-force "$C" --queries "$tmp/q_again.parquet" -k 10 --metric manhattan --num-jobs 2 --job-rank 1 --output "$P/rank001.parquet" 2>/dev/null
set +e
msg=$("$V" brute-force-merge "$C" --queries "$tmp/q_other.parquet" -k 10 2>&1); rc=$?
set -e
[ $rc -eq 2 ] && echo "$msg" | grep -q "different queries" || fail "queries mismatch not refused: $msg"
echo "ok"
