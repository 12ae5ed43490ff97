#!/usr/bin/env bash
# A vector file (or an ann-filtering bundle directory) as the corpus argument (src/corpus/source.c)
# at a path of several hundred bytes: the one-part dataset config made for it used to be built in
# a buffer capped at 512 bytes, so brute-force / index build over a file at a path longer than
# ~440 bytes failed with "buffer would grow to more than its limit of 512 bytes".
set -u
V=${VFORGE:?set VFORGE to the vforge binary}
PY=${VF_PY:-}
[ -n "$PY" ] && [ -x "$PY" ] && "$PY" -c 'import numpy, pyarrow' 2>/dev/null || { echo "numpy/pyarrow not available: skipped"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/long-path.XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
d=$tmp/$(printf 'a%.0s' $(seq 200))/$(printf 'b%.0s' $(seq 200))/$(printf 'c%.0s' $(seq 150))
mkdir -p "$d"
"$PY" -c 'import numpy as np, sys; np.save(sys.argv[1], np.random.default_rng(1).standard_normal((50, 8), dtype=np.float32))' "$d/vectors.npy" || { echo "numpy failed"; exit 1; }
cp "$d/vectors.npy" "$tmp/short.npy"
"$V" --quiet brute-force "$d/vectors.npy" --queries "$tmp/short.npy" -k 3 --output "$tmp/long.parquet" 2> "$tmp/err" &&
  ok "brute-force over a vector file at a ${#d}-byte directory" || fail "vector file at a long path: $(cat "$tmp/err")"
"$V" --quiet brute-force "$tmp/short.npy" --queries "$tmp/short.npy" -k 3 --output "$tmp/short.parquet" 2>/dev/null || fail "short path"
"$PY" - "$tmp/long.parquet" "$tmp/short.parquet" <<'PYEOF' && ok "the same hits as at a short path" || fail "hits differ"
import sys, pyarrow.parquet as pq
a, b = (pq.read_table(p).select(["query_id", "hit_ids", "hit_scores"]).to_pylist() for p in sys.argv[1:3])
assert a == b and len(a) == 50, (a[:1], b[:1])
PYEOF
"$V" --quiet index build "$d" --output "$tmp/ix.ivf" --type flat --nlist 2 2> "$tmp/err" &&
  ok "index build over a bundle directory at a long path" || fail "bundle at a long path: $(cat "$tmp/err")"
[ $fails -eq 0 ] && echo "all long-path checks passed"
[ $fails -eq 0 ]
