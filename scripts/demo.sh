#!/usr/bin/env bash
# The main job end to end on a real dataset that Debian packages: Fashion-MNIST (70k 28x28
# images, /usr/share/datasets/fashion-mnist) is converted to a parquet corpus of 784-d vectors
# with labels, inspected, and loaded into the embedded local store with `vforge load run`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
vf=${1:-$root/build/vforge}
export VFORGE_DEMO_DIR=${VFORGE_DEMO_DIR:-$root/build/demo}
src=/usr/share/datasets/fashion-mnist
mkdir -p "$VFORGE_DEMO_DIR"
echo "== vforge convert Fashion-MNIST (train + test) -> $VFORGE_DEMO_DIR/fashion-mnist"
"$vf" convert "$src/train-images-idx3-ubyte.gz" "$src/t10k-images-idx3-ubyte.gz" \
  --labels "$src/train-labels-idx1-ubyte.gz,$src/t10k-labels-idx1-ubyte.gz" \
  --rows-per-file 20000 --output "$VFORGE_DEMO_DIR/fashion-mnist" --overwrite
echo "== vforge inspect"
"$vf" inspect "$VFORGE_DEMO_DIR/fashion-mnist" | tail -1
echo "== vforge load inspect examples/fashion-mnist.yaml"
"$vf" load inspect "$root/examples/fashion-mnist.yaml" | python3 -c 'import json,sys; d=json.load(sys.stdin); print("files:", len(d["files"]), "rows:", d["total_rows"], "collection:", d["collection"])'
echo "== vforge load run examples/fashion-mnist.yaml"
"$vf" load run "$root/examples/fashion-mnist.yaml" --json
echo "== the store's segments are parquet: vforge cat one point back"
"$vf" cat "$VFORGE_DEMO_DIR/vforge-data/fashion-mnist" --limit 1 --columns id,payload
echo "== exact ground truth and recall: 20 sampled queries, euclid top-10, bench against the local store"
"$vf" generate-queries "$VFORGE_DEMO_DIR/fashion-mnist" -n 20 --seed 7 --columns label
"$vf" brute-force "$VFORGE_DEMO_DIR/fashion-mnist" --queries "$VFORGE_DEMO_DIR/fashion-mnist/eval/queries_20.parquet" -k 10 --metric euclid
"$vf" bench "$root/examples/fashion-mnist.yaml" --queries "$VFORGE_DEMO_DIR/fashion-mnist/eval/queries_20.parquet" \
  --ground-truth "$VFORGE_DEMO_DIR/fashion-mnist/eval/brute_force_queries_20_k10.parquet" -k 10 --concurrency 2 --json
