#!/usr/bin/env bash
# IVF indexes on skewed corpora: a minority distribution (8 clusters in dimensions 16..31, the
# majority's 16 clusters live in dimensions 0..15) sits
#   (a) only at the tail of the corpus (the last 2 of 20 files),
#   (b) only in every 5th file (files 4, 9, 14, 19),
#   (c) only in a small late batch (a 21st file of 600 rows, 3 % of the corpus).
# For every code type (flat, sq8, pq, rabitq) an index is built with nlist 32 and a training
# sample of 2000 rows (--max-train; 10 % of the corpus), then minority queries (rows of a
# minority file, via generate-queries) are searched with nprobe 4 and compared with
# `vforge brute-force` (euclid, k 10).  A sampler that took the first 2000 rows (or any prefix)
# would train no centroid in the minority subspace: the minority rows would be scattered over
# the majority's lists and recall@10 at nprobe 4 falls far below the thresholds checked here
# (verified: with ivf_sampler replaced by a keep-the-first-rows sampler every case fails, minority
# recall@10 0.42-0.48 for flat/sq8/rabitq and 0.24-0.35 for pq, against 0.81-1.0 here).
# Data: numpy (seeded) -> .npy -> `vforge convert`.
set -u
V=${VFORGE:?set VFORGE to the vforge binary}
"$V" index --help > /dev/null 2>&1 || { echo "FAIL: $V has no 'index' command"; exit 1; }
py=/usr/bin/python3
[ -x "$py" ] && "$py" -c 'import numpy' 2> /dev/null || { echo "python3-numpy not installed"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/ivf-skew.XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$py" - "$tmp" <<'EOP' || { echo "FAIL: generating the data"; exit 1; }
import sys, numpy as np
out = sys.argv[1]
rng = np.random.default_rng(20261129)
d = 32
def sphere(n, dims):  # n centres of norm 16 in the given dimensions
    c = np.zeros((n, d), np.float32)
    c[:, dims] = rng.normal(0, 1, (n, len(dims)))
    return (16 * c / np.linalg.norm(c, axis=1, keepdims=True)).astype(np.float32)
maj = sphere(16, list(range(16)))
mino = sphere(8, list(range(16, 32)))
def draw(c, n):
    return (c[rng.integers(0, len(c), n)] + rng.normal(0, 1, (n, d))).astype(np.float32)
# (a) tail: 18000 majority rows, then 2000 minority rows
np.save(f"{out}/tail.npy", np.concatenate([draw(maj, 18000), draw(mino, 2000)]))
# (b) every 5th file of 1000 rows is minority
np.save(f"{out}/kth.npy", np.concatenate([draw(mino if f % 5 == 4 else maj, 1000) for f in range(20)]))
# (c) a small late batch: 20000 majority rows, then 600 minority rows (its own last file)
np.save(f"{out}/late.npy", np.concatenate([draw(maj, 20000), draw(mino, 600)]))
EOP

# scenario NAME MINORITY_FILE: convert, queries from the minority file, exact truth, indexes
scenario() {
  local name=$1 qfile=$2 c="$tmp/$1"
  "$V" --quiet convert "$tmp/$name.npy" --output "$c" --rows-per-file 1000 2> "$tmp/err.txt" ||
    { fail "$name: convert: $(cat "$tmp/err.txt")"; return; }
  "$V" --quiet generate-queries "$c/$qfile" -n 40 --seed 3 --output "$tmp/$name-q.parquet" 2> "$tmp/err.txt" ||
    { fail "$name: generate-queries: $(cat "$tmp/err.txt")"; return; }
  "$V" --quiet brute-force "$c" --queries "$tmp/$name-q.parquet" -k 10 --metric euclid \
    --output "$tmp/$name-gt.parquet" 2> "$tmp/err.txt" || { fail "$name: brute-force: $(cat "$tmp/err.txt")"; return; }
  local t
  for t in flat sq8 pq rabitq; do
    local extra="" min=0.95
    case $t in
      sq8) min=0.9 ;;
      pq) extra="--pq-m 16"; min=0.65 ;;
      rabitq) extra="--rabitq-bits 4"; min=0.8 ;;
    esac
    "$V" --quiet index build "$c" --output "$tmp/$name-$t.ivf" --type $t --nlist 32 --max-train 2000 \
      --metric euclid --seed 7 $extra --json > "$tmp/build.json" 2> "$tmp/err.txt" ||
      { fail "$name/$t: build: $(cat "$tmp/err.txt")"; continue; }
    "$V" --quiet index search "$tmp/$name-$t.ivf" --queries "$tmp/$name-q.parquet" -k 10 --nprobe 4 \
      --ground-truth "$tmp/$name-gt.parquet" --output "$tmp/$name-$t-res.parquet" --json \
      > "$tmp/search.json" 2> "$tmp/err.txt" || { fail "$name/$t: search: $(cat "$tmp/err.txt")"; continue; }
    local r
    r=$("$py" - "$tmp/build.json" "$tmp/search.json" <<'EOP'
import json, sys
b = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[2]))
assert b["nlist"] == 32 and b["training_rows_retained"] <= 2000, b
print("%.3f %d %d" % (s["recall"], b["rows"], b["training_rows_retained"]))
EOP
    ) || { fail "$name/$t: bad JSON reports"; continue; }
    set -- $r
    if "$py" -c "import sys; sys.exit(0 if $1 >= $min else 1)"; then
      echo "ok: $name/$t: minority recall@10 $1 (>= $min) at nprobe 4 of 32, $2 rows, $3 training rows"
    else
      fail "$name/$t: minority recall@10 $1 < $min at nprobe 4 of 32 ($2 rows, $3 training rows)"
    fi
  done
}

scenario tail batch_00000019.parquet
scenario kth batch_00000009.parquet
scenario late batch_00000020.parquet

[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all ok"
