#!/usr/bin/env bash
# bench/scan: the parquet read path on files as the field writes them (issue 16), every side in
# one run: vforge scan vs DuckDB vs pyarrow vs polars, each at 1 and 2 threads (whole-process
# wall, best of RUNS, peak RSS and CPU of each child), beside the physical floors (memcpy of the
# decoded bytes; the bare zstd/snappy decompressor over the same pages), with the issue's ratios
# and targets printed per file and a markdown summary table at the end.
#
# Usage: bench/scan/run.sh [path/to/vforge] [rows=100000]
#   env: DIM (768), THREADS (1,2), RUNS (3), TIMEOUT (300 s per run), READERS
#        (vforge,duckdb,pyarrow,polars), BATCH_ROWS (1024: the output batch in the RSS target),
#        FILES (default: duckdb_default_zstd pyarrow_default polars_default spark_128m_uncompressed
#        spark_128m_snappy fmnist; also duckdb_rg10240_uncompressed duckdb_rg10240_zstd, the layout
#        bench/RESULTS.md measured before issue 16), FMNIST (train | t10k: 10000 rows, for a quick run),
#        VF_BENCH_OUT (bench/out: where the files and the compiled tools go)
#   A quick end-to-end check: RUNS=1 FMNIST=t10k bench/scan/run.sh build/vforge 2000
# Files (written once, kept): $VF_BENCH_OUT/scan/<rows>x<dim>/ — (a) duckdb_default_zstd: DuckDB's
# defaults, zstd (one row group for 100k rows); (b) pyarrow_default, polars_default; (c)
# spark_128m_{uncompressed,snappy}: one ~128 MiB row group, 1 MiB pages; (d) fmnist: Fashion-MNIST
# via `vforge convert` (real data; the others are random floats).  What each file is:
# bench/scan/gen_files.py.  Needs the pinned .venv (scripts/install-deps.sh), node with
# tests/oracle/node_modules (the DuckDB reader), cc with libzstd-dev and libsnappy-dev.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
vf=$(realpath "${1:-$root/build/vforge}")
rows=${2:-100000}
dim=${DIM:-768}
py=${VF_PY:-$root/.venv/bin/python}
[ -x "$vf" ] || { echo "bench/scan: no vforge binary at $vf (build first)" >&2; exit 2; }
[ -x "$py" ] || { echo "bench/scan: no $py (scripts/install-deps.sh makes the pinned .venv)" >&2; exit 2; }
[ -d "$root/tests/oracle/node_modules/@duckdb" ] || { echo "bench/scan: no tests/oracle/node_modules (scripts/install-deps.sh)" >&2; exit 2; }
files=${FILES:-duckdb_default_zstd pyarrow_default polars_default spark_128m_uncompressed spark_128m_snappy fmnist}
out=${VF_BENCH_OUT:-$root/bench/out}/scan
data="$out/${rows}x${dim}"
tools="$out/tools"
mkdir -p "$data" "$tools"
cc -O2 -o "$tools/memcpy_bw" "$here/memcpy_bw.c"
cc -O2 -Wall -Wextra -o "$tools/decomp_bare" "$here/decomp_bare.c" -lzstd -lsnappy -lpthread
list="$data/files.jsonl"
: > "$list"
for k in $files; do
  # Fashion-MNIST does not depend on rows x dim: one copy under bench/out/scan/
  if [ "$k" = fmnist ]; then
    VFORGE=$vf "$py" "$here/gen_files.py" "$out" "$rows" "$dim" fmnist >> "$list"
  else
    VFORGE=$vf "$py" "$here/gen_files.py" "$data" "$rows" "$dim" "$k" >> "$list"
  fi
done
exec "$py" "$here/scan_bench.py" --vforge "$vf" --data "$data" --tools "$tools" --files "$list" \
  --threads "${THREADS:-1,2}" --runs "${RUNS:-3}" --timeout "${TIMEOUT:-300}" \
  --readers "${READERS:-vforge,duckdb,pyarrow,polars}" --batch-rows "${BATCH_ROWS:-1024}"
