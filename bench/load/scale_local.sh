#!/usr/bin/env bash
# Issue 17 item 4, second half: a 1M x 768 `load run` into the local store (finalize included)
# takes <= 2x the same load into `--store discard`, in the same run.  The corpus: N rows x DIM
# float32 from bench/scale/gen_scale.py's mixture (4096 Gaussian clusters, seed SEED: random,
# incompressible floats, but with the cluster structure an IVF index is for — uniform random
# floats have none, so any IVF recall on them says nothing about the defaults), written by
# npy_to_parquet.py as 4 zstd files with DuckDB's default 122,880-row groups, id + emb + text;
# NQ held-out queries from the same mixture (another random stream: never rows of the corpus),
# their exact top 10 by `vforge brute-force` over the loaded corpus.  All generated once into
# WORK (outside git) and reused.  Then scale_local.py: ROUNDS rounds of discard then local
# (`load run`, finalize included) per binary — VFORGE, and BASELINE (another binary, e.g. main's
# build) alternated with it — wall / load / finalize seconds, CPU, peak RSS, load average, the
# local / discard ratio against 2x, and recall@10 at the default nprobe of each binary's store.
# Usage: WORK=/work/data/load1m bench/load/scale_local.sh ; env N (1000000), DIM (768), NQ (1000),
#   SEED (1), ROUNDS (2), CONCURRENCY (4), VFORGE (build/vforge), BASELINE, TIMEOUT (1800 s).
#   A quick check: WORK=/tmp/sl N=20000 DIM=64 NQ=50 ROUNDS=1 bench/load/scale_local.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
: "${WORK:?set WORK to a data directory outside git (the corpus is generated there once)}"
V=$(realpath "${VFORGE:-$root/build/vforge}")
N=${N:-1000000}
DIM=${DIM:-768}
NQ=${NQ:-1000}
SEED=${SEED:-1}
py=${VF_PY:-$root/.venv/bin/python}
[ -x "$V" ] || { echo "no vforge at $V: build the project first"; exit 2; }
"$py" -c 'import numpy, pyarrow' 2>/dev/null || { echo "need numpy and pyarrow in $py"; exit 77; }
mkdir -p "$WORK"
# the corpora stay out of git: WORK is outside the repository or in a path git ignores (build/)
case "$(realpath "$WORK")/" in
  "$root"/*) git -C "$root" check-ignore -q "$(realpath "$WORK")" 2>/dev/null ||
    { echo "WORK must be outside the repository or in a git-ignored directory (build/)"; exit 2; } ;;
esac
d="$WORK/n${N}_d${DIM}_s${SEED}"
mkdir -p "$d"
if [ ! -f "$d/corpus.done" ]; then
  rm -rf "$d/corpus"
  "$py" "$root/bench/scale/gen_scale.py" "$d/base.npy" "$d/queries.npy" "$N" "$NQ" "$DIM" "$SEED"
  "$py" "$here/npy_to_parquet.py" "$d/base.npy" "$d/corpus" 4 122880
  rm -f "$d/base.npy" # the parquet corpus is the data from here on
  touch "$d/corpus.done"
fi
cat > "$d/load.yaml" <<EOC
vectors: {emb: {type: dense, column: emb, distance: euclid}}
datasource: {uri: $d/corpus, payload_fields: {text: text}}
vectorstore: {type: local, path: $d/store, collection_name: bench, params: {recreate: true}}
loader: {batch_size: 1000, prefetch_size: 20000, concurrency: ${CONCURRENCY:-4}, retries: 0}
EOC
if [ ! -f "$d/gt.done" ]; then
  "$V" --quiet brute-force "$d/load.yaml" --queries "$d/queries.npy" -k 10 --output "$d/gt.parquet"
  touch "$d/gt.done"
fi
VF_BENCH_OUT=${VF_BENCH_OUT:-$WORK} "$py" "$here/scale_local.py" --vforge "$V" ${BASELINE:+--baseline "$BASELINE"} \
  --config "$d/load.yaml" --store "$d/store" --queries "$d/queries.npy" --truth "$d/gt.parquet" \
  --rounds "${ROUNDS:-2}" --timeout "${TIMEOUT:-1800}" \
  --describe "$N x $DIM float32 (gen_scale.py mixture, seed $SEED), 4 zstd files, 122,880-row groups, text payload; batch 1000, prefetch 20000, concurrency ${CONCURRENCY:-4}; $NQ held-out queries"
