#!/usr/bin/env bash
# vforge IVF indexes vs FAISS (IndexIVFFlat, IndexIVFScalarQuantizer QT_8bit, IndexIVFPQ) in one
# run, on Fashion-MNIST (train + t10k, 70000 x 784) and a clustered synthetic set (SIZE x DIM,
# default 1000000 x 128): the same rows, queries (NQ rows sampled by generate-queries), nlist,
# pq M, nprobe, metric (L2) and threads.  Reports build time (vforge end to end from the parquet
# corpus; FAISS train + add on data already in memory), recall@10 and recall@100 against
# `vforge brute-force` ground truth, and search QPS, with FAISS/vforge build-time ratios.
# Usage: bench/ivf/run.sh ; env VFORGE (binary), THREADS (default nproc), SIZE, DIM, NQ,
#        DATASETS ("fashion synth"), WORK (a directory to keep the data in between runs).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
V=${VFORGE:-$root/build/vforge}
PY=/usr/bin/python3
THREADS=${THREADS:-$(nproc)}
SIZE=${SIZE:-1000000}
DIM=${DIM:-128}
NQ=${NQ:-1000}
DATASETS=${DATASETS:-fashion synth}
FM=/usr/share/datasets/fashion-mnist
"$PY" -c 'import faiss, numpy' 2>/dev/null || { echo "need python3-faiss and python3-numpy"; exit 77; }
"$V" index --help > /dev/null || { echo "$V has no index command"; exit 1; }
if [ -n "${WORK:-}" ]; then mkdir -p "$WORK"; work=$WORK; else work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; fi

# run_set NAME CORPUS VECTORS NLIST NPROBE PQ_M
run_set() {
  local name=$1 corpus=$2 vec=$3 nlist=$4 nprobe=$5 pqm=$6 out="$work/$1-out"
  rm -rf "$out"
  mkdir -p "$out"
  local Q="$out/queries.parquet" GT="$out/gt.parquet"
  "$V" --quiet generate-queries "$corpus" -n "$NQ" --seed 1 --output "$Q"
  "$V" cat "$Q" --columns query_id,__source_file__,__source_row__ > "$out/q.jsonl"
  "$V" --quiet --threads "$THREADS" brute-force "$corpus" --queries "$Q" -k 100 --metric euclid --output "$GT"
  "$V" cat "$GT" --columns query_id,hit_ids > "$out/gt.jsonl"
  local t
  for t in flat sq8 pq; do
    local extra=""
    [ "$t" = pq ] && extra="--pq-m $pqm"
    "$V" --quiet --threads "$THREADS" index build "$corpus" --output "$out/$t.ivf" --type "$t" \
      --nlist "$nlist" --metric euclid $extra --json > "$out/build_$t.json"
    for k in 10 100; do
      "$V" --quiet --threads "$THREADS" index search "$out/$t.ivf" --queries "$Q" -k $k \
        --nprobe "$nprobe" --ground-truth "$GT" --output "$out/res_${t}_k$k.parquet" --json \
        > "$out/search_${t}_k$k.json"
    done
    rm -f "$out/$t.ivf"
  done
  "$PY" "$here/faiss_ivf.py" "$name" "$vec" "$out/q.jsonl" "$out/gt.jsonl" "$nlist" "$nprobe" "$pqm" \
    "$THREADS" "$out"
}

for ds in $DATASETS; do
  case $ds in
    fashion)
      [ -f "$FM/train-images-idx3-ubyte.gz" ] || { echo "skip fashion: need dataset-fashion-mnist ($FM)"; continue; }
      [ -d "$work/fashion" ] || "$V" --quiet convert "$FM/train-images-idx3-ubyte.gz" "$FM/t10k-images-idx3-ubyte.gz" \
        --rows-per-file 70000 --output "$work/fashion"
      run_set fashion-mnist "$work/fashion" "$FM/train-images-idx3-ubyte.gz,$FM/t10k-images-idx3-ubyte.gz" 256 8 56
      ;;
    synth)
      npy="$work/synth-$SIZE-$DIM.npy"
      [ -f "$npy" ] || "$PY" "$here/gen_synth.py" "$npy" "$SIZE" "$DIM" 1
      [ -d "$work/synth-$SIZE-$DIM" ] || "$V" --quiet convert "$npy" --rows-per-file "$SIZE" --output "$work/synth-$SIZE-$DIM"
      nl=$("$PY" -c "import math; print(max(16, min(4096, 2 ** round(math.log2(math.sqrt($SIZE))))))")
      run_set "synthetic" "$work/synth-$SIZE-$DIM" "$npy" "$nl" 16 $((DIM / 4))
      ;;
    *) echo "unknown dataset '$ds' (fashion, synth)"; exit 2 ;;
  esac
done
