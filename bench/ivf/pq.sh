#!/usr/bin/env bash
# PQ search, vforge vs FAISS: queries/s at equal recall@10 (pq_sweep.py), on Fashion-MNIST (the
# 60000 train rows indexed, the first NQ t10k images as held-out queries) and a clustered
# synthetic set (SIZE x DIM indexed, NQ more rows of the same generator as queries).  vforge
# 8-bit PQ (M), 4-bit fast-scan PQ (2M) without and with float32 vectors; FAISS IndexIVFPQ (M, 8)
# and IndexIVFPQFastScan (2M, 4), each alone and under IndexRefineFlat; nprobe and re-rank depth
# swept on both sides.  Runs once per Python that has FAISS: the pinned faiss-cpu of $VF_PY
# (its own OpenBLAS, AVX2 build) and Debian's python3-faiss (/usr/bin/python3).
# Usage: bench/ivf/pq.sh ; env THREADS (default nproc), SIZE (1000000), DIM (128), NQ (1000),
#        DATASETS ("fashion synth"), NLISTS_FASHION ("256"), WORK (keeps the data), PYS
#        (the Pythons to run, default "$VF_PY /usr/bin/python3"), NPROBES, RERANKS, REPS,
#        MIN_SECONDS, TIMER (wall, or cpu on a shared machine) — see pq_sweep.py.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$root/build}
THREADS=${THREADS:-$(nproc)}
SIZE=${SIZE:-1000000}
DIM=${DIM:-128}
NQ=${NQ:-1000}
DATASETS=${DATASETS:-fashion synth}
NLISTS_FASHION=${NLISTS_FASHION:-256}
VF_PY=${VF_PY:-$root/.venv/bin/python}
PYS=${PYS:-$VF_PY /usr/bin/python3}
FM=/usr/share/datasets/fashion-mnist
[ -d "$BUILD/python/vforge" ] || { echo "no $BUILD/python/vforge: build the project (the Python extension) first"; exit 2; }
export PYTHONPATH="$BUILD/python${PYTHONPATH:+:$PYTHONPATH}"
pys=()
for py in $PYS; do
  if [ -x "$py" ] && "$py" -c 'import faiss, numpy, vforge' 2>/dev/null; then pys+=("$py"); else echo "skip $py: no faiss, numpy or vforge there"; fi
done
[ ${#pys[@]} -gt 0 ] || { echo "need a Python with faiss and numpy (pinned faiss-cpu in \$VF_PY, or python3-faiss)"; exit 77; }
if [ -n "${WORK:-}" ]; then mkdir -p "$WORK"; work=$WORK; else work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; fi

# sweep NAME BASE QUERIES NLIST M
sweep() {
  local py
  for py in "${pys[@]}"; do
    echo "== $1 (nlist $4) with $py"
    "$py" "$here/pq_sweep.py" "$1" "$2" "$3" "$NQ" "$4" "$5" "$THREADS" "$work"
    rm -f "$work/$1"-*.ivf
  done
}

for ds in $DATASETS; do
  case $ds in
    fashion)
      [ -f "$FM/train-images-idx3-ubyte.gz" ] || { echo "skip fashion: need dataset-fashion-mnist ($FM)"; continue; }
      for nl in $NLISTS_FASHION; do
        sweep "fashion-mnist" "$FM/train-images-idx3-ubyte.gz" "$FM/t10k-images-idx3-ubyte.gz" "$nl" 56
      done
      ;;
    synth)
      all="$work/synth-$((SIZE + NQ))-$DIM.npy"
      [ -f "$all" ] || "${pys[0]}" "$here/gen_synth.py" "$all" "$((SIZE + NQ))" "$DIM" 1
      "${pys[0]}" "$here/split_npy.py" "$all" "$SIZE" "$work/synth-base.npy" "$work/synth-queries.npy"
      nl=$("${pys[0]}" -c "import math; print(max(16, min(4096, 2 ** round(math.log2(math.sqrt($SIZE))))))")
      sweep "synthetic" "$work/synth-base.npy" "$work/synth-queries.npy" "$nl" $((DIM / 4))
      ;;
    *) echo "unknown dataset '$ds' (fashion, synth)"; exit 2 ;;
  esac
done
