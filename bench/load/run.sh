#!/usr/bin/env bash
# bench/load: `vforge load` of 768-d points into the `discard` store (the pipeline itself: read,
# decode, slice, ids, payload, upsert calls) and into the embedded `local` store, with its
# finalize (compaction, IVF index build, verify) timed as a row of its own.  Points/s, points per
# CPU-second (points / user + sys seconds of the load process; issue 16 target: >= 200k into
# discard), peak RSS of each process; best of RUNS; every command has a wall-clock limit and a
# side that exceeds it is killed and reported as timed out (the local finalize did not finish in
# 400 s once it built an IVF index: the run must not hang on it).
#
# Usage: bench/load/run.sh [path/to/vforge] [rows=200000] [concurrency=4]
#   env: RUNS (3), LOAD_TIMEOUT (600 s), FINALIZE_TIMEOUT (600 s), MEMORY_BUDGET (passed to
#        finalize as --memory-budget; default none), STORES (discard,local), VF_BENCH_OUT (bench/out),
#        BASELINE (another vforge binary: its discard loads alternate with this one's, best of RUNS
#        by points per CPU-second each, and the ratio is printed; e.g. main's build)
#   A quick end-to-end check: RUNS=1 bench/load/run.sh build/vforge 4000
# The corpus (written once, kept): $VF_BENCH_OUT/load/corpus_<rows>: 4 zstd files written by
# DuckDB (node oracle, gen_load_data.mjs), row groups of 10000 rows, id + emb FLOAT[768] + text.
# Needs node + tests/oracle/node_modules (scripts/install-deps.sh), python3, cc.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
vf=$(realpath "${1:-$root/build/vforge}")
rows=${2:-200000}
conc=${3:-4}
base=${BASELINE:+$(realpath "$BASELINE")}
[ -z "$base" ] || [ -x "$base" ] || { echo "bench/load: BASELINE $BASELINE is not an executable" >&2; exit 2; }
[ -x "$vf" ] || { echo "bench/load: no vforge binary at $vf (build first)" >&2; exit 2; }
[ -d "$root/tests/oracle/node_modules/@duckdb" ] || { echo "bench/load: no tests/oracle/node_modules (scripts/install-deps.sh)" >&2; exit 2; }
out=${VF_BENCH_OUT:-$root/bench/out}/load
data="$out/corpus_${rows}"
mkdir -p "$out"
if [ ! -f "$data.done" ]; then
  rm -rf "$data"
  node "$here/gen_load_data.mjs" "$data" "$rows" 768 4 zstd
  touch "$data.done"
fi
cat > "$out/bench.yaml" <<EOC
vectors: {emb: {type: dense, column: emb, distance: cosine}}
datasource: {uri: $data, payload_fields: {text: text}}
vectorstore: {type: local, path: $out/store, collection_name: bench}
loader: {batch_size: 1000, prefetch_size: 20000, concurrency: $conc, retries: 0}
EOC
python3 "$here/load_bench.py" --vforge "$vf" --out "$out" --config "$out/bench.yaml" --runs "${RUNS:-3}" \
  --load-timeout "${LOAD_TIMEOUT:-600}" --finalize-timeout "${FINALIZE_TIMEOUT:-600}" \
  --memory-budget "${MEMORY_BUDGET:-}" --stores "${STORES:-discard,local}" --baseline "$base" \
  --describe "$rows x 768-d points, 4 zstd files (DuckDB, 10000-row groups), text payload; batch 1000, prefetch 20000, concurrency $conc"
