#!/usr/bin/env bash
# The README's "Benchmark campaign" walk-through, as one script: Fashion-MNIST (Debian's
# dataset-fashion-mnist) train (60k x 784) loaded into the local store twice, with a flat and an
# SQ8 IVF index (nlist 256, examples/fashion-mnist-campaign.yaml); 500 held-out queries from the
# t10k set with exact euclid top-10 ground truth; `vforge bench --sweep nprobe=...` on each
# collection, one --results file per index type; then the same queries filtered on `label` (each
# query searches the images of its own class, `generate-queries --filter-template`, exact
# filtered ground truth from the __filter__ column) swept on the SQ8 collection; `vforge plot`
# overlays the three series, filtered and unfiltered.
# Prints each sweep's points; the picture goes to $OUT (default: $VFORGE_CAMPAIGN_DIR/campaign.png;
# OUT=docs/bench-campaign.png refreshes the README's figure, which must come from an idle machine:
# figures on a shared machine are only the curve's shape).
# Usage: bench/campaign/run.sh ; env VFORGE (binary), VFORGE_CAMPAIGN_DIR (default: a temp dir),
# N (queries, 500), NPROBE (the sweep, 1,2,4,8,16,32,64), INDEXES ("flat sq8"), FILTERED (the
# index types swept with the label filter, "sq8"; "" for none), WARMUP (100), OUT;
# SUBSET=ROWS takes the first ROWS training images only (a quick run: tests/bench/test_campaign.sh),
# with NLIST (256) and MIN_ROWS (10000, the store's index threshold) for the smaller collection.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
V=${VFORGE:-$here/build/vforge}
src=/usr/share/datasets/fashion-mnist
[ -f "$src/train-images-idx3-ubyte.gz" ] || { echo "need dataset-fashion-mnist ($src)"; exit 77; }
N=${N:-500}
NPROBE=${NPROBE:-1,2,4,8,16,32,64}
INDEXES=${INDEXES:-flat sq8}
FILTERED=${FILTERED-sq8}
WARMUP=${WARMUP:-100}
export NLIST=${NLIST:-256} MIN_ROWS=${MIN_ROWS:-10000}
if [ -z "${VFORGE_CAMPAIGN_DIR:-}" ]; then
  VFORGE_CAMPAIGN_DIR=$(mktemp -d)
  trap 'rm -rf "$VFORGE_CAMPAIGN_DIR"' EXIT
fi
export VFORGE_CAMPAIGN_DIR
c=$VFORGE_CAMPAIGN_DIR
OUT=${OUT:-$c/campaign.png}
cfg=$here/examples/fashion-mnist-campaign.yaml

train=$src/train-images-idx3-ubyte.gz
labels=$src/train-labels-idx1-ubyte.gz
rows=60k
if [ -n "${SUBSET:-}" ]; then
  # the first SUBSET images and labels, as IDX files whose headers say so
  python3 - "$src" "$c/subset" "$SUBSET" <<'EOP'
import gzip, os, struct, sys
src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.makedirs(dst, exist_ok=True)
for name, hdr, row in (("train-images-idx3-ubyte.gz", 16, 784), ("train-labels-idx1-ubyte.gz", 8, 1)):
    with gzip.open(os.path.join(src, name)) as f:
        head = bytearray(f.read(hdr))
        total = struct.unpack(">I", head[4:8])[0]
        if not 1 <= n <= total:
            sys.exit(f"SUBSET={n}: the training set has {total} rows")
        head[4:8] = struct.pack(">I", n)
        body = f.read(n * row)
    with gzip.open(os.path.join(dst, name), "wb", compresslevel=1) as g:
        g.write(bytes(head) + body)
EOP
  train=$c/subset/train-images-idx3-ubyte.gz
  labels=$c/subset/train-labels-idx1-ubyte.gz
  rows=$SUBSET
fi

"$V" --quiet convert "$train" --labels "$labels" --output "$c/train" --rows-per-file 20000 --overwrite
"$V" --quiet convert "$src/t10k-images-idx3-ubyte.gz" --labels "$src/t10k-labels-idx1-ubyte.gz" \
  --output "$c/test" --overwrite
"$V" --quiet generate-queries "$c/test" -n "$N" --seed 7 --columns label --output "$c/queries.parquet"
"$V" --quiet brute-force "$c/train" --queries "$c/queries.parquet" -k 10 --metric euclid --output "$c/truth.parquet"
files=()
for ix in $INDEXES; do
  INDEX=$ix "$V" --quiet load run "$cfg"
  INDEX=$ix "$V" bench "$cfg" --queries "$c/queries.parquet" --ground-truth "$c/truth.parquet" -k 10 \
    --sweep nprobe="$NPROBE" --warmup "$WARMUP" --label "local $ix, nlist $NLIST" --results "$c/$ix.jsonl"
  files+=("$c/$ix.jsonl")
done
# the filter on `label`: each query keeps only the training images of its own class ($label is
# the query row's label), about 10 % of the corpus; the truth honours each query's __filter__
if [ -n "$FILTERED" ]; then
  "$V" --quiet generate-queries "$c/test" -n "$N" --seed 7 --columns label \
    --filter-template '{"must": [{"key": "label", "match": {"value": "$label"}}]}' --output "$c/queries-label.parquet"
  "$V" --quiet brute-force "$c/train" --queries "$c/queries-label.parquet" -k 10 --metric euclid \
    --output "$c/truth-label.parquet"
  for ix in $FILTERED; do
    case " $INDEXES " in *" $ix "*) ;; *) INDEX=$ix "$V" --quiet load run "$cfg" ;; esac
    INDEX=$ix "$V" bench "$cfg" --queries "$c/queries-label.parquet" --ground-truth "$c/truth-label.parquet" \
      -k 10 --sweep nprobe="$NPROBE" --warmup "$WARMUP" --label "local $ix, nlist $NLIST, filter label = the query's" \
      --results "$c/$ix-label.jsonl"
    files+=("$c/$ix-label.jsonl")
  done
fi
"$V" plot "${files[@]}" --output "$OUT" \
  --title "Fashion-MNIST $rows x 784, euclid: local store, IVF nlist $NLIST, nprobe sweep, with and without a label filter"
python3 - "${files[@]}" <<'EOP'
import json, sys
for f in sys.argv[1:]:
    rows = [json.loads(s) for s in open(f)]
    m = rows[0]["machine"]
    print(f"{rows[0]['label']}  ({m['cpu_model']}, {m['cpus_available']} CPUs, OpenBLAS {m['blas_core']}, vforge {rows[0]['vforge_version']})")
    for r in rows:
        extra = f"  ({r['filtered_queries']} filtered)" if r.get("filtered_queries") else ""
        print(f"  nprobe {r['params']['nprobe']:>4}: recall@10 {r['recall']:.4f}  {r['qps']:>9.1f} q/s  p50 {r['latency_ms']['p50']:.3f} ms  p99 {r['latency_ms']['p99']:.3f} ms{extra}")
EOP
echo "plot: $OUT"
