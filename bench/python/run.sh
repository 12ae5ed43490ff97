#!/usr/bin/env bash
# bench/python: vforge from Python, side by side in one run (figures: bench/RESULTS.md).
#  read:        the vectors of a DuckDB-default parquet file (ROWS x 768 float32, zstd, one row
#               group, written by the duckdb PyPI package) into a NumPy (n, 768) array:
#               vforge.read_vectors vs pyarrow.parquet.read_table + to_numpy vs DuckDB -> Arrow
#               -> numpy, with 1 and 2 threads (target: >= 1.5x pyarrow on 1 thread); wall seconds
#               and the CPU seconds (user + system) of each side
#  brute force: exact top-k from NumPy arrays, vforge.brute_force vs faiss-cpu IndexFlat
#               (PyPI, its own BLAS), same threads and k (target: >= 1.2x)
# Usage: bench/python/run.sh [BUILD_DIR]   env: ROWS (100000), BF_ROWS (100000), QUERIES (1000),
#        K (100), REPEAT (3).  Needs the pinned .venv and a build with the extension (make build).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
py="$root/.venv/bin/python"
[ -x "$py" ] || { echo "bench/python: no $py (run scripts/install-deps.sh)" >&2; exit 1; }
ls "$build"/python/vforge/_vforge*.so >/dev/null 2>&1 || { echo "bench/python: no extension in $build/python (make build)" >&2; exit 1; }
out="$root/bench/out/python"
mkdir -p "$out"
PYTHONPATH="$build/python" exec "$py" "$here/bench_python.py" "$out"
