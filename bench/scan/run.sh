#!/usr/bin/env bash
# bench/scan: vforge scan vs DuckDB's single-thread scan of the same 100k x 768 float file
# (uncompressed and zstd), and vs memcpy bandwidth over the same number of bytes.
# Usage: bench/scan/run.sh [path/to/vforge] [rows]   (needs node + tests/oracle/node_modules)
set -euo pipefail
vf=${1:-build/vforge}
rows=${2:-100000}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out="$root/bench/out/scan"
mkdir -p "$out"
oracle="$root/tests/oracle"
[ -d "$oracle/node_modules/@duckdb" ] || (cd "$oracle" && npm ci --no-audit --no-fund --loglevel=error)
if [ ! -f "$out/vec_${rows}_uncompressed.parquet" ] || [ ! -f "$out/vec_${rows}_zstd.parquet" ]; then
  node "$here/gen_scan_data.mjs" "$out" "$rows"
fi
cc -O2 -o "$out/memcpy_bw" "$here/memcpy_bw.c"
threads=$("$vf" --help >/dev/null 2>&1; nproc)
printf '%-14s %10s %10s %10s %10s %12s %10s %10s %10s\n' codec vf_1t_s vf_${threads}t_s duckdb_1t_s memcpy_s "vf MB/s" "x duck 1t" "x duck ${threads}t" "memcpy/vf"
for codec in uncompressed zstd; do
  f="$out/vec_${rows}_${codec}.parquet"
  # warm the page cache, then best of 3 for each side
  "$vf" scan "$f" --columns emb --json >/dev/null
  best() { python3 -c 'import sys,json; print(min(json.loads(l)[sys.argv[1]] for l in sys.stdin if l.strip()))' "$1"; }
  v1=$(for i in 1 2 3; do "$vf" --threads 1 scan "$f" --columns emb --json 2>/dev/null; done | best seconds)
  vn=$(for i in 1 2 3; do "$vf" --threads "$threads" scan "$f" --columns emb --json 2>/dev/null; done | best seconds)
  bytes=$("$vf" scan "$f" --columns emb --json 2>/dev/null | python3 -c 'import sys,json; print(json.load(sys.stdin)["bytes"])')
  dk=$(for i in 1 2 3; do node "$here/duckdb_scan.mjs" "$f"; done | best seconds)
  mc=$("$out/memcpy_bw" "$bytes" | best seconds)
  python3 - "$codec" "$v1" "$vn" "$dk" "$mc" "$bytes" <<'PY'
import sys
codec, v1, vn, dk, mc, nbytes = sys.argv[1], *map(float, sys.argv[2:])
print(f"{codec:<14} {v1:10.3f} {vn:10.3f} {dk:10.3f} {mc:10.3f} {nbytes/1e6/v1:12.1f} {dk/v1:10.2f} {dk/vn:10.2f} {mc/v1:10.2f}")
PY
done
echo "(x duck 1t / x duck Nt = DuckDB single-thread time / vforge time with 1 / N threads; memcpy/vf = memcpy time of the decoded bytes / vforge 1-thread time, 1.0 = memcpy speed, 0.5 = 2x memcpy)"
