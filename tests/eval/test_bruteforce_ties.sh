#!/usr/bin/env bash
# brute-force with exact ties: a corpus (3 files, row groups of 40 rows) where every vector
# occurs 3 times, small integer components (exact scores), K = 7 cutting through tie groups.
# The hits must equal a python brute force ordered by (score desc, point id asc) EXACTLY, for
# every metric, and be byte-identical across --threads 1/3 and --num-jobs 3 + merge.  Also
# checks bounded memory: peak RSS of a run over 12 copies of the corpus stays close to that of
# one copy (streaming one row group at a time).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
V=${VFORGE:-$here/build/vforge}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
command -v "$PY" >/dev/null || { echo "skip: no python3"; exit 77; }
[ -x "$V" ] || { echo "skip: no vforge binary at $V"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
"$PY" "$here/tests/eval/dup_npy.py" "$tmp/dup.npy" 5 8 100 3
C=$tmp/c
"$V" convert "$tmp/dup.npy" --output "$C" --rows-per-file 100 --row-group-rows 40 2>/dev/null
[ "$(ls "$C"/*.parquet | wc -l)" = 3 ] || fail "expected 3 corpus files"
"$V" generate-queries "$C" -n 12 --seed 11 2>/dev/null
Q=$C/eval/queries_12.parquet
"$V" cat "$C" --with-id 'vf_point_id(filename, file_row_number)' > "$tmp/corpus.jsonl"
"$V" cat "$Q" > "$tmp/q.jsonl"
for m in cosine dot euclid manhattan; do
  "$V" --threads 1 brute-force "$C" --queries "$Q" -k 7 --metric $m --output "$tmp/t1.parquet" 2>/dev/null
  "$V" --threads 3 brute-force "$C" --queries "$Q" -k 7 --metric $m --output "$tmp/t3.parquet" 2>/dev/null
  cmp -s "$tmp/t1.parquet" "$tmp/t3.parquet" || fail "$m: threads 1 vs 3 differ"
  rm -rf "$C/eval/_bf_partial_queries_12_k7"
  for r in 0 1 2; do
    "$V" brute-force "$C" --queries "$Q" -k 7 --metric $m --num-jobs 3 --job-rank $r 2>/dev/null
  done
  "$V" brute-force-merge "$C" --queries "$Q" -k 7 --output "$tmp/merged.parquet" 2>/dev/null
  cmp -s "$tmp/t1.parquet" "$tmp/merged.parquet" || fail "$m: 3 jobs + merge differs from one job"
  "$V" cat "$tmp/t1.parquet" > "$tmp/bf.jsonl"
  "$PY" - "$tmp" "$m" <<'PY' || fail "$m: ties not resolved by point id"
import json, math, struct, sys
t, metric = sys.argv[1], sys.argv[2]
f32 = lambda x: struct.unpack("<f", struct.pack("<f", x))[0]
corpus = [json.loads(l) for l in open(t + "/corpus.jsonl")]
q = [json.loads(l) for l in open(t + "/q.jsonl")]
res = [json.loads(l) for l in open(t + "/bf.jsonl")]
def score(a, b):
    if metric == "dot": return math.fsum(x * y for x, y in zip(a, b))
    if metric == "cosine":
        na, nb = math.fsum(x * x for x in a), math.fsum(x * x for x in b)
        return 0.0 if na == 0 or nb == 0 else math.fsum(x * y for x, y in zip(a, b)) / (math.sqrt(na) * math.sqrt(nb))
    if metric == "euclid": return -math.sqrt(math.fsum((x - y) ** 2 for x, y in zip(a, b)))
    return -math.fsum(abs(x - y) for x, y in zip(a, b))
ties = 0
for qr, rr in zip(q, res):
    sc = sorted(((f32(score(qr["emb"], c["emb"])) + 0.0, c["__id__"]) for c in corpus), key=lambda p: (-p[0], p[1]))
    want = sc[:7]
    got = list(zip(rr["hit_scores"], rr["hit_ids"]))
    assert [i for _, i in want] == [i for _, i in got], (qr["query_id"], want, got)
    assert [s for s, _ in want] == [f32(float(s)) for s, _ in got], (want, got)
    ties += sum(1 for a, b in zip(want, want[1:]) if a[0] == b[0])
assert ties > 0, "the data should produce ties"
PY
done
# bounded memory: 12 copies of a 10000 x 784 corpus vs one copy
# (not under AddressSanitizer: its quarantine keeps freed row groups resident)
# (the sanitizer env first: under pipefail, `ldd | grep -q` can fail when grep exits before ldd
# has written everything and ldd dies of SIGPIPE)
if [ -n "${ASAN_OPTIONS:-}${UBSAN_OPTIONS:-}${TSAN_OPTIONS:-}" ] ||
   ldd "$V" 2>/dev/null | grep 'libasan\|libtsan' >/dev/null; then
  echo "note: sanitizer build; peak-memory check skipped" >&2
elif [ -x /usr/bin/time ] && [ -f /usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz ]; then
  "$V" convert /usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz --output "$tmp/one" --row-group-rows 2000 2>/dev/null
  mkdir -p "$tmp/many"
  for i in $(seq -w 1 12); do cp "$tmp/one/batch_00000000.parquet" "$tmp/many/copy_$i.parquet"; done
  "$V" generate-queries "$tmp/one" -n 100 --output "$tmp/fq.parquet" 2>/dev/null
  rss() { /usr/bin/time -f %M "$V" --threads 2 brute-force "$1" --queries "$tmp/fq.parquet" -k 10 --metric euclid --output "$tmp/m.parquet" 2>&1 >/dev/null | tail -1; }
  one=$(rss "$tmp/one"); many=$(rss "$tmp/many")
  echo "peak RSS: one copy ${one} KiB, 12 copies ${many} KiB (12 x 31 MB of vectors)"
  [ "$many" -lt $((one + 20000)) ] || fail "peak memory grows with the corpus: $one KiB -> $many KiB"
fi
echo ok
