#!/usr/bin/env bash
# The README's "Benchmark campaign" walk-through, as one script: Fashion-MNIST (Debian's
# dataset-fashion-mnist) train (60k x 784) loaded into the local store twice, with a flat and an
# SQ8 IVF index (nlist 256, examples/fashion-mnist-campaign.yaml); 500 held-out queries from the
# t10k set with exact euclid top-10 ground truth; `vforge bench --sweep nprobe=...` on each
# collection, one --results file per index type, then `vforge plot` overlays them.
# Prints each sweep's points; the picture goes to $OUT (default: $VFORGE_CAMPAIGN_DIR/campaign.png;
# OUT=docs/bench-campaign.png refreshes the README's figure, which must come from an idle machine:
# figures on a shared machine are only the curve's shape).
# Usage: bench/campaign/run.sh ; env VFORGE (binary), VFORGE_CAMPAIGN_DIR (default: a temp dir),
# N (queries, 500), NPROBE (the sweep, 1,2,4,8,16,32,64), INDEXES ("flat sq8"), WARMUP (100), OUT.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
V=${VFORGE:-$here/build/vforge}
src=/usr/share/datasets/fashion-mnist
[ -f "$src/train-images-idx3-ubyte.gz" ] || { echo "need dataset-fashion-mnist ($src)"; exit 77; }
N=${N:-500}
NPROBE=${NPROBE:-1,2,4,8,16,32,64}
INDEXES=${INDEXES:-flat sq8}
WARMUP=${WARMUP:-100}
if [ -z "${VFORGE_CAMPAIGN_DIR:-}" ]; then
  VFORGE_CAMPAIGN_DIR=$(mktemp -d)
  trap 'rm -rf "$VFORGE_CAMPAIGN_DIR"' EXIT
fi
export VFORGE_CAMPAIGN_DIR
c=$VFORGE_CAMPAIGN_DIR
OUT=${OUT:-$c/campaign.png}
cfg=$here/examples/fashion-mnist-campaign.yaml

"$V" --quiet convert "$src/train-images-idx3-ubyte.gz" --labels "$src/train-labels-idx1-ubyte.gz" \
  --output "$c/train" --rows-per-file 20000 --overwrite
"$V" --quiet convert "$src/t10k-images-idx3-ubyte.gz" --labels "$src/t10k-labels-idx1-ubyte.gz" \
  --output "$c/test" --overwrite
"$V" --quiet generate-queries "$c/test" -n "$N" --seed 7 --columns label --output "$c/queries.parquet"
"$V" --quiet brute-force "$c/train" --queries "$c/queries.parquet" -k 10 --metric euclid --output "$c/truth.parquet"
files=()
for ix in $INDEXES; do
  INDEX=$ix "$V" --quiet load run "$cfg"
  INDEX=$ix "$V" bench "$cfg" --queries "$c/queries.parquet" --ground-truth "$c/truth.parquet" -k 10 \
    --sweep nprobe="$NPROBE" --warmup "$WARMUP" --label "local $ix, nlist 256" --results "$c/$ix.jsonl"
  files+=("$c/$ix.jsonl")
done
"$V" plot "${files[@]}" --output "$OUT" --title "Fashion-MNIST 60k x 784, euclid: local store, IVF nlist 256, nprobe sweep"
python3 - "${files[@]}" <<'EOP'
import json, sys
for f in sys.argv[1:]:
    rows = [json.loads(s) for s in open(f)]
    m = rows[0]["machine"]
    print(f"{rows[0]['label']}  ({m['cpu_model']}, {m['cpus_available']} CPUs, OpenBLAS {m['blas_core']}, vforge {rows[0]['vforge_version']})")
    for r in rows:
        print(f"  nprobe {r['params']['nprobe']:>4}: recall@10 {r['recall']:.4f}  {r['qps']:>9.1f} q/s  p50 {r['latency_ms']['p50']:.3f} ms  p99 {r['latency_ms']['p99']:.3f} ms")
EOP
echo "plot: $OUT"
