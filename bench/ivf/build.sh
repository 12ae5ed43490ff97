#!/usr/bin/env bash
# Issue 17 item 3, IVF build at scale: `vforge index build` with its defaults (two-level k-means from
# nlist 1024 — sqrt(nlist) coarse clusters split into their shares, one full iteration — below it at most 20 k-means
# iterations with the 1 % changed-row and 0.1 % objective early stops, 128 k-means rows per list) end to end from the parquet corpus, timed
# whole, against FAISS IndexIVFFlat / IndexIVFScalarQuantizer(QT_8bit) (/ IndexIVFPQ) train + add
# on vectors already in memory with FAISS's defaults (niter 10, max_points_per_centroid 256), at
# the same --threads, in one run:
#   - Fashion-MNIST: the 60,000 train images indexed, the first NQ t10k images as held-out queries,
#     nlist NLISTS_FASHION (256 1024);
#   - the clustered synthetic set of gen_synth.py: SIZE + NQ rows generated, the first SIZE
#     indexed, the last NQ the held-out queries, nlist NLISTS_SYNTH (1024).
# Ground truth: `vforge brute-force -k 10 --metric euclid` over the indexed rows.  recall@10 of both
# sides at every nprobe of NPROBES, against that ground truth, with the same formula.  Prints per
# nlist and type: build seconds, vforge/FAISS (target <= 0.5), k-means iterations of each side,
# recall@10 of each and the difference (target >= -0.002); the CPU, BLAS cores, load average.
# Usage: bench/ivf/build.sh ; env VFORGE (binary), THREADS (nproc), DATASETS ("fashion synth"),
#        NLISTS_FASHION ("256 1024"), NLISTS_SYNTH ("1024"), TYPES ("flat sq8"; add pq), NPROBES
#        ("8 32"), NQ (1000), SIZE (1000000), DIM (128), PYS (the Pythons with FAISS, default
#        "$VF_PY /usr/bin/python3"), FAISS_TRAIN (sample|all, see ivf_build.py), WORK (keep data),
#        FAISS_CORETYPE (OPENBLAS_CORETYPE for FAISS's OpenBLAS only, e.g. SkylakeX where its older
#        OpenBLAS falls back to Prescott on a CPU it does not know; the report names the core).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
V=${VFORGE:-$root/build/vforge}
THREADS=${THREADS:-$(nproc)}
DATASETS=${DATASETS:-fashion synth}
NLISTS_FASHION=${NLISTS_FASHION:-256 1024}
NLISTS_SYNTH=${NLISTS_SYNTH:-1024}
TYPES=${TYPES:-flat sq8}
NPROBES=${NPROBES:-8 32}
NQ=${NQ:-1000}
SIZE=${SIZE:-1000000}
DIM=${DIM:-128}
VF_PY=${VF_PY:-$root/.venv/bin/python}
PYS=${PYS:-$VF_PY /usr/bin/python3}
FM=/usr/share/datasets/fashion-mnist
[ -x "$V" ] && "$V" index --help > /dev/null || { echo "no vforge with an index command at $V: build the project first"; exit 2; }
pys=()
for py in $PYS; do
  if [ -x "$py" ] && "$py" -c 'import faiss, numpy' 2>/dev/null; then pys+=("$py"); else echo "skip $py: no faiss or numpy there"; fi
done
[ ${#pys[@]} -gt 0 ] || { echo "need a Python with faiss and numpy (pinned faiss-cpu in \$VF_PY, or python3-faiss)"; exit 77; }
py0=${pys[0]}
for t in $TYPES; do
  case $t in flat | sq8 | pq) ;; *) echo "unknown type '$t' in TYPES (flat, sq8, pq)"; exit 2 ;; esac
done
if [ -n "${WORK:-}" ]; then mkdir -p "$WORK"; work=$WORK; else work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; fi
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
reports=()

now() { date +%s.%N; }

# run_set NAME CORPUS BASE QSRC QUERIES NLISTS PQ_M
#   CORPUS: the parquet corpus vforge indexes; BASE: the same rows for FAISS (.npy or IDX .gz);
#   QSRC: the held-out query rows (.npy); QUERIES: their queries file (generate-queries of QSRC)
run_set() {
  local name=$1 corpus=$2 base=$3 qsrc=$4 q=$5 nlists=$6 pqm=$7 out="$work/$1-out"
  rm -rf "$out"
  mkdir -p "$out"
  "$V" --quiet cat "$q" --columns query_id,__source_row__ > "$out/q.jsonl"
  "$V" --quiet --threads "$THREADS" brute-force "$corpus" --queries "$q" -k 10 --metric euclid --output "$out/gt.parquet"
  "$V" --quiet cat "$out/gt.parquet" --columns query_id,hit_ids > "$out/gt.jsonl"
  "$V" --quiet cat "$corpus" --columns id --with-id 'vf_point_id(filename, file_row_number)' > "$out/ids.jsonl"
  local nl t p extra t0 t1
  for nl in $nlists; do
    for t in $TYPES; do
      extra=""
      [ "$t" = pq ] && extra="--pq-m $pqm"
      echo "== $name: vforge index build nlist $nl $t" >&2
      t0=$(now)
      "$V" --quiet --threads "$THREADS" index build "$corpus" --output "$out/$t.ivf" --type "$t" \
        --nlist "$nl" --metric euclid $extra --json > "$out/build.json"
      t1=$(now)
      "$py0" -c 'import json, sys; r = json.load(open(sys.argv[1])); r["wall"] = float(sys.argv[3]) - float(sys.argv[2]); print(json.dumps(r))' \
        "$out/build.json" "$t0" "$t1" > "$out/vf_${nl}_$t.json"
      for p in $NPROBES; do
        "$V" --quiet --threads "$THREADS" index search "$out/$t.ivf" --queries "$q" -k 10 --nprobe "$p" \
          --ground-truth "$out/gt.parquet" --output "$out/res.parquet" --json > "$out/vf_${nl}_${t}_np$p.json"
        "$V" --quiet cat "$out/res.parquet" --columns query_id,hit_ids > "$out/vf_${nl}_${t}_np$p.jsonl"
      done
      rm -f "$out/$t.ivf" "$out/res.parquet"
    done
  done
  local i=0 py
  for py in "${pys[@]}"; do
    echo "== $name: FAISS train + add with $py" >&2
    env ${FAISS_CORETYPE:+OPENBLAS_CORETYPE=$FAISS_CORETYPE} "$py" "$here/ivf_build.py" faiss "$name" "$base" "$qsrc" "$out/q.jsonl" "$out/ids.jsonl" "$out/gt.jsonl" \
      "$nlists" "$TYPES" "$NPROBES" "$pqm" "$THREADS" "$out/faiss_$i.jsonl"
    i=$((i + 1))
  done
  local n d
  read -r n d < <("$py0" -c 'import sys; sys.path.insert(0, sys.argv[2]); from faiss_ivf import load; print(*load(sys.argv[1]).shape)' "$base" "$here")
  "$py0" "$here/ivf_build.py" report "$name" "$n" "$d" "$NQ" "$THREADS" "$out" "$out"/faiss_*.jsonl > "$out/report.txt"
  reports+=("$out/report.txt")
}

# queries_from NPY OUT: the queries file of every row of NPY (held-out rows, in their order)
queries_from() {
  local rows
  rows=$("$py0" -c 'import numpy, sys; print(numpy.load(sys.argv[1], mmap_mode="r").shape[0])' "$1")
  "$V" --quiet generate-queries "$1" -n "$rows" --seed 1 --output "$2"
}

for ds in $DATASETS; do
  case $ds in
    fashion)
      [ -f "$FM/train-images-idx3-ubyte.gz" ] || { echo "skip fashion: need dataset-fashion-mnist ($FM)"; continue; }
      [ -d "$work/fashion-train" ] || "$V" --quiet convert "$FM/train-images-idx3-ubyte.gz" --rows-per-file 60000 \
        --output "$work/fashion-train"
      "$py0" - "$FM/t10k-images-idx3-ubyte.gz" "$NQ" "$work/fashion-queries.npy" "$here" <<'PY'
import sys
import numpy as np
sys.path.insert(0, sys.argv[4])
from faiss_ivf import load
t = load(sys.argv[1])
nq = int(sys.argv[2])
if nq > len(t):
    sys.exit("NQ %d exceeds the %d t10k images" % (nq, len(t)))
np.save(sys.argv[3], np.ascontiguousarray(t[:nq]))
PY
      queries_from "$work/fashion-queries.npy" "$work/fashion-queries.parquet"
      run_set fashion-mnist "$work/fashion-train" "$FM/train-images-idx3-ubyte.gz" "$work/fashion-queries.npy" \
        "$work/fashion-queries.parquet" "$NLISTS_FASHION" 56
      ;;
    synth)
      all="$work/synth-$((SIZE + NQ))-$DIM.npy"
      [ -f "$all" ] || "$py0" "$here/gen_synth.py" "$all" "$((SIZE + NQ))" "$DIM" 1
      "$py0" "$here/split_npy.py" "$all" "$SIZE" "$work/synth-base.npy" "$work/synth-queries.npy"
      rm -rf "$work/synth-corpus"
      "$V" --quiet convert "$work/synth-base.npy" --rows-per-file "$SIZE" --output "$work/synth-corpus"
      queries_from "$work/synth-queries.npy" "$work/synth-queries.parquet"
      run_set synthetic "$work/synth-corpus" "$work/synth-base.npy" "$work/synth-queries.npy" \
        "$work/synth-queries.parquet" "$NLISTS_SYNTH" $((DIM / 4))
      ;;
    *) echo "unknown dataset '$ds' (fashion, synth)"; exit 2 ;;
  esac
done

echo
echo "cpu: $(lscpu | sed -n 's/^Model name: *//p' | head -1) ($(nproc) CPUs usable here), $THREADS threads on both sides"
"$V" --threads "$THREADS" version --json | "$py0" -c 'import json, sys; v = json.load(sys.stdin); b = v["blas"]; print("vforge %s: BLAS %s core %s (%s), simd %s" % (v["version"], b.get("library"), b.get("core"), b.get("source"), v.get("simd")))'
echo "load average (1, 5, 15 min): at start $load_start, at end $(cut -d' ' -f1-3 /proc/loadavg)"
for r in "${reports[@]}"; do cat "$r"; done
