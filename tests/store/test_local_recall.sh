#!/usr/bin/env bash
# issue 17 item 4: the local store's index defaults keep recall@10 >= 0.99 at the default nprobe
# on HELD-OUT queries.  Fashion-MNIST (Debian's /usr/share/datasets/fashion-mnist; skipped when
# absent): the first 20,000 train images are loaded into the local store with no
# vectorstore.params (sq8, nlist round(sqrt(N)) = 141, 64 k-means rows per list, at most 10
# iterations, nprobe max(16, nlist/16)); 300 queries sampled from the t10k images (never indexed)
# are searched through the index by `vforge bench` against `vforge brute-force`'s exact top 10.
# No timing is asserted (the machine may be loaded).
set -u
V=${VFORGE:?set VFORGE to the vforge binary}
py=/usr/bin/python3
fm=${VF_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
[ -f "$fm/train-images-idx3-ubyte.gz" ] && [ -f "$fm/t10k-images-idx3-ubyte.gz" ] ||
  { echo "Fashion-MNIST not installed at $fm"; exit 77; }
[ -x "$py" ] || { echo "python3 not installed"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/local-recall.XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

"$V" --quiet convert "$fm/train-images-idx3-ubyte.gz" --rows-per-file 20000 --output "$tmp/train" 2> "$tmp/err.txt" &&
  "$V" --quiet convert "$fm/t10k-images-idx3-ubyte.gz" --output "$tmp/test" 2> "$tmp/err.txt" ||
  { echo "FAIL: convert: $(cat "$tmp/err.txt")"; exit 1; }
corpus=$(ls "$tmp"/train/*.parquet | head -1) # the first 20,000 train rows
"$V" --quiet generate-queries "$tmp/test" -n 300 --seed 3 --output "$tmp/q.parquet" 2> "$tmp/err.txt" &&
  "$V" --quiet brute-force "$corpus" --queries "$tmp/q.parquet" -k 10 --metric euclid --output "$tmp/gt.parquet" 2> "$tmp/err.txt" ||
  { echo "FAIL: queries / ground truth: $(cat "$tmp/err.txt")"; exit 1; }
cat > "$tmp/fm.yaml" <<EOC
vectors:
  image: {type: dense, column: emb, distance: euclid}
datasource:
  uri: $corpus
vectorstore:
  type: local
  path: $tmp/store
  collection_name: fm
loader: {batch_size: 1000, concurrency: 2}
EOC
if "$V" load run "$tmp/fm.yaml" > /dev/null 2> "$tmp/load.err"; then
  line=$(grep "built the sq8 IVF index of 'image'" "$tmp/load.err")
  # the defaults: nlist round(sqrt(20000)) = 141, nprobe 16, k-means on 141 x 64 = 9024 rows
  # for at most 10 iterations
  if echo "$line" | grep -q "(20000 points, nlist 141, searches scan 16 lists)" &&
     echo "$line" | grep -Eq "k-means [0-9.]+ s: ([1-9]|10) iterations on 9024 rows"; then
    ok "defaults: $(echo "$line" | sed 's/.*index of//')"
  else
    fail "defaults: $(grep -E "built|error" "$tmp/load.err")"
  fi
  if "$V" bench "$tmp/fm.yaml" --queries "$tmp/q.parquet" --ground-truth "$tmp/gt.parquet" -k 10 --json \
       > "$tmp/bench.json" 2> "$tmp/bench.err"; then
    r=$("$py" -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["errors"] == 0, r; print(r["recall"])' "$tmp/bench.json")
    if ! grep -q "searching 'image' with its sq8 IVF index (20000 points, nlist 141, nprobe 16)" "$tmp/bench.err"; then
      fail "bench did not search through the default index: $(cat "$tmp/bench.err")"
    elif "$py" -c "import sys; sys.exit(0 if $r >= 0.99 else 1)"; then
      ok "held-out recall@10 at the default nprobe: $r >= 0.99"
    else
      fail "held-out recall@10 at the default nprobe: $r < 0.99"
    fi
  else
    fail "bench: $(cat "$tmp/bench.err")"
  fi
else
  fail "load run: $(cat "$tmp/load.err")"
fi
[ "$fails" -eq 0 ] && echo "all ok" || { echo "$fails failure(s)"; exit 1; }
