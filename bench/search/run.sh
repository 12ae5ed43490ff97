#!/usr/bin/env bash
# `vforge bench` on Fashion-MNIST train (60000 x 784, integer pixels: many exact ties and
# duplicate images) against the embedded local store (exact search): for each metric, the
# corpus is loaded into a collection of that distance, ground truth comes from
# `vforge brute-force`, and `vforge bench -k K` must report recall@K 1.0 (issue 5, Done when).
# Prints one bench JSON per metric; exits 1 if any recall (strict) is below 1.
# Usage: bench/search/run.sh [METRIC...] (default: cosine euclid) ; env VFORGE, N (queries,
# default 100), K (default 10), CONCURRENCY (default: nproc), RPS (open loop instead).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
V=${VFORGE:-$here/build/vforge}
N=${N:-100}
K=${K:-10}
C=${CONCURRENCY:-$(nproc)}
IDX=/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz
[ -f "$IDX" ] || { echo "need dataset-fashion-mnist ($IDX)"; exit 77; }
metrics=("$@")
[ ${#metrics[@]} -gt 0 ] || metrics=(cosine euclid)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$V" --quiet convert "$IDX" --output "$tmp/fm"
"$V" --quiet generate-queries "$tmp/fm" -n "$N" --seed 1
Q=$tmp/fm/eval/queries_$N.parquet
loop=(--concurrency "$C")
[ -n "${RPS:-}" ] && loop=(--rps "$RPS" --concurrency "$C")
status=0
for m in "${metrics[@]}"; do
  cat > "$tmp/$m.yaml" <<EOC
vectors:
  emb: {type: dense, column: emb, distance: $m}
datasource:
  uri: $tmp/fm
vectorstore: {type: local, path: $tmp/store, collection_name: fmnist_$m}
loader: {batch_size: 2000, concurrency: 4}
EOC
  "$V" --quiet load run "$tmp/$m.yaml" 2> /dev/null
  "$V" --quiet brute-force "$tmp/fm" --queries "$Q" -k "$K" --metric "$m" --output "$tmp/gt_$m.parquet"
  out=$("$V" bench "$tmp/$m.yaml" --queries "$Q" --ground-truth "$tmp/gt_$m.parquet" -k "$K" "${loop[@]}" --json)
  echo "$m: $out"
  python3 -c "import json,sys; r=json.loads(sys.argv[1]); sys.exit(0 if r['recall']==1.0 and r['errors']==0 else 1)" "$out" ||
    { echo "$m: recall@$K below 1.0 for exact search"; status=1; }
done
exit $status
