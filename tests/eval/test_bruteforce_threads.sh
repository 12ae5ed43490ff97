#!/usr/bin/env bash
# brute-force splits each row group into chunks of rows scored by different workers, each
# worker keeping its own top K per query (merged at the end) and sharing the K-th best score
# as the filter's bound.  The output must not depend on that: a corpus of 3 files with row
# groups of 1500 rows (several chunks per row group at 2 and 3 threads), every vector present
# 3 times (ties cut by K), each metric, --threads 1/2/3 and --memory-budgets that leave one or
# two workers give byte-identical files; with the workers' heaps not merged (or the shared bound
# dropping a hit) the 2- and 3-thread files would differ.  The in-memory path (the Python
# front end's brute force from NumPy) is checked the same way when the venv is there.
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
"$PY" "$here/tests/eval/dup_npy.py" "$tmp/dup.npy" 7 16 1500 4
C=$tmp/c
"$V" convert "$tmp/dup.npy" --output "$C" --rows-per-file 1500 --row-group-rows 1500 2>/dev/null
[ "$(ls "$C"/*.parquet | wc -l)" = 3 ] || fail "expected 3 corpus files"
"$V" generate-queries "$C" -n 40 --seed 3 --output "$tmp/q.parquet" 2>/dev/null
for m in cosine dot euclid manhattan; do
  "$V" --threads 1 brute-force "$C" --queries "$tmp/q.parquet" -k 50 --metric $m --output "$tmp/t1.parquet" 2>/dev/null
  for t in 2 3; do
    "$V" --threads $t brute-force "$C" --queries "$tmp/q.parquet" -k 50 --metric $m --output "$tmp/t$t.parquet" 2>/dev/null
    cmp -s "$tmp/t1.parquet" "$tmp/t$t.parquet" || fail "$m: --threads 1 vs $t differ"
  done
  # budgets that leave 1 and 2 of the 3 workers (40 queries x (2048 rows of sgemm scratch + 1024
  # pending candidates) each, row groups read in slices)
  for b in 1200K:1 2200K:2; do
    log=$("$V" --threads 3 --memory-budget ${b%:*} brute-force "$C" --queries "$tmp/q.parquet" -k 50 \
          --metric $m --output "$tmp/mb.parquet" 2>&1) || fail "$m: --memory-budget ${b%:*} run failed: $log"
    echo "$log" | grep -q "brute-force with ${b#*:} worker(s) instead of 3" || fail "$m: budget ${b%:*}: $log"
    cmp -s "$tmp/t1.parquet" "$tmp/mb.parquet" || fail "$m: --memory-budget ${b%:*} output differs"
  done
done
# the hits are not empty and cut through tie groups (K 50 of rows present 3 times)
"$V" cat "$tmp/t1.parquet" > "$tmp/t1.jsonl"
"$PY" - "$tmp/t1.jsonl" <<'PY' || fail "unexpected hits"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == 40, len(rows)
for r in rows:
    assert len(r["hit_ids"]) == 50, len(r["hit_ids"])
PY
# the in-memory path (eval_brute_force_matrix) through the Python extension this build made
VP=${VF_PY:-$here/.venv/bin/python}
B=$(cd "$(dirname "$V")" && pwd)
if [ -x "$VP" ] && "$VP" -c 'import numpy' 2>/dev/null && ls "$B"/python/vforge/_vforge*.so >/dev/null 2>&1; then
  PYTHONPATH="$B/python" "$VP" - "$tmp/dup.npy" <<'PY' || fail "in-memory brute force differs across threads"
import sys
import numpy as np
import vforge
x = np.load(sys.argv[1])
q = np.ascontiguousarray(x[::97][:40] + np.float32(0.5))
for metric in ("cosine", "dot", "euclid", "manhattan"):
    ref = vforge.brute_force(x, q, 50, metric, threads=1)
    assert ref.ids.shape == (40, 50) and (ref.ids >= 0).all()
    for t in (2, 3):
        got = vforge.brute_force(x, q, 50, metric, threads=t)
        assert np.array_equal(ref.ids, got.ids) and np.array_equal(ref.scores, got.scores), (metric, t)
PY
else
  echo "note: no venv numpy or Python extension; in-memory check skipped" >&2
fi
echo ok
