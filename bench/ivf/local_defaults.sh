#!/usr/bin/env bash
# Issue 17 item 4, the local store's index defaults: Fashion-MNIST's 60,000 train images are
# loaded into the local store with no vectorstore.params (sq8, nlist round(sqrt(N)), 64 k-means
# rows per list, at most 10 iterations with the early stops, nprobe max(16, nlist/16)); NQ
# held-out t10k images (never indexed) are searched through the index by `vforge bench` against
# `vforge brute-force`'s exact top 10.  Prints the finalize line (its time and split, the k-means
# iterations and rows), the `load run` wall and CPU seconds, and recall@10 at the default nprobe
# (targets: finalize <= 10 s, recall >= 0.99).
# Usage: bench/ivf/local_defaults.sh ; env VFORGE (binary), THREADS (nproc), NQ (10000), WORK.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
V=${VFORGE:-$root/build/vforge}
THREADS=${THREADS:-$(nproc)}
NQ=${NQ:-10000}
FM=/usr/share/datasets/fashion-mnist
py=/usr/bin/python3
[ -x "$V" ] || { echo "no vforge at $V: build the project first"; exit 2; }
[ -f "$FM/train-images-idx3-ubyte.gz" ] || { echo "skip: need dataset-fashion-mnist ($FM)"; exit 77; }
if [ -n "${WORK:-}" ]; then mkdir -p "$WORK"; work=$WORK; else work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; fi
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
[ -d "$work/train" ] || "$V" --quiet convert "$FM/train-images-idx3-ubyte.gz" --rows-per-file 60000 --output "$work/train"
[ -d "$work/test" ] || "$V" --quiet convert "$FM/t10k-images-idx3-ubyte.gz" --output "$work/test"
"$V" --quiet generate-queries "$work/test" -n "$NQ" --seed 3 --output "$work/q.parquet"
"$V" --quiet --threads "$THREADS" brute-force "$work/train" --queries "$work/q.parquet" -k 10 --metric euclid \
  --output "$work/gt.parquet"
cat > "$work/fm.yaml" <<EOC
vectors:
  image: {type: dense, column: emb, distance: euclid}
datasource:
  uri: $work/train
vectorstore:
  type: local
  path: $work/store
  collection_name: fm
  params: {recreate: true}
loader: {batch_size: 1000, concurrency: 2}
EOC
/usr/bin/time -f "load run: %e s wall, %U s user, %S s system" "$V" --threads "$THREADS" load run "$work/fm.yaml" \
  > /dev/null 2> "$work/load.err"
"$V" --threads "$THREADS" bench "$work/fm.yaml" --queries "$work/q.parquet" --ground-truth "$work/gt.parquet" -k 10 \
  --json > "$work/bench.json" 2> "$work/bench.err"
echo "cpu: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $THREADS threads"
echo "load average (1, 5, 15 min): at start $load_start, at end $(cut -d' ' -f1-3 /proc/loadavg)"
grep -o "built the sq8 IVF index.*" "$work/load.err" || { cat "$work/load.err"; exit 1; }
grep "load run:" "$work/load.err"
grep -o "searching 'image' with its .*" "$work/bench.err" || true
"$py" -c 'import json, sys; r = json.load(open(sys.argv[1])); print("held-out recall@10 at the default nprobe (%s queries): %.4f (target >= 0.99)" % (sys.argv[2], r["recall"]))' \
  "$work/bench.json" "$NQ"
