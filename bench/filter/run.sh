#!/usr/bin/env bash
# Filtered search, side by side in one run, on Fashion-MNIST train (60000 x 784, label payload;
# SIZE=small: a 6000-row slice) with 200 queries, k 10, filters from 100 % of the rows (no
# filter) to 10 % (label), 1 % and 0.1 % (id ranges):
#   1. exact filtered ground truth: vforge brute-force --filter vs DuckDB's
#      WHERE <filter> ORDER BY list_distance LIMIT k over the same parquet (its own vectorised
#      scan, all threads); the ratio DuckDB time / vforge time per selectivity;
#   2. the local store, bench QPS and recall@10 per selectivity: exact scan, and the IVF index
#      (sq8, nprobe 8) with the filter inside the list scan and the probe widened;
#      ratios against the unfiltered run of the same store.
# Usage: bench/filter/run.sh ; env VFORGE, THREADS, SIZE=small|full.  Needs dataset-fashion-mnist
# and duckdb in the pinned venv (.venv/bin/python).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
V=${VFORGE:-$here/build/vforge}
PY=${VF_PY:-$here/.venv/bin/python}
THREADS=${THREADS:-$(nproc)}
SIZE=${SIZE:-full}
IDX=/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz
LAB=/usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz
[ -f "$IDX" ] && [ -f "$LAB" ] || { echo "need dataset-fashion-mnist ($IDX)"; exit 77; }
"$PY" -c 'import duckdb' 2>/dev/null || { echo "need duckdb in $PY"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$V" --quiet convert "$IDX" --labels "$LAB" --output "$tmp/fm" --rows-per-file 20000 > /dev/null
if [ "$SIZE" = small ]; then rm -f "$tmp/fm"/batch_0000000[12].parquet; fi
C=$tmp/fm
"$V" --quiet generate-queries "$C" -n 200 --seed 1 --output "$tmp/q.parquet" 2>/dev/null
ROWS=$("$V" --quiet scan "$C" --columns id --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["rows"])')
declare -a NAMES=(all label10 id1 id01)
declare -a FILTERS=('' '{"must":[{"key":"label","match":{"value":3}}]}'
  "{\"must\":[{\"key\":\"id\",\"range\":{\"lt\":$((ROWS / 100))}}]}"
  "{\"must\":[{\"key\":\"id\",\"range\":{\"lt\":$((ROWS / 1000))}}]}")
declare -a SQL=('true' 'label = 3' "id < $((ROWS / 100))" "id < $((ROWS / 1000))")
secs() { "$PY" -c 'import sys,time; print(time.time())'; }
echo "filtered search: $ROWS x 784 (Fashion-MNIST${SIZE:+ $SIZE}), 200 queries, k 10, $THREADS threads, $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
echo "-- 1. exact filtered ground truth: vforge brute-force vs DuckDB (end to end, from parquet)"
for i in 0 1 2 3; do
  args=()
  [ -n "${FILTERS[$i]}" ] && args=(--filter "${FILTERS[$i]}")
  t0=$(secs)
  "$V" --quiet --threads "$THREADS" brute-force "$C" --queries "$tmp/q.parquet" -k 10 --metric euclid \
    "${args[@]}" --output "$tmp/gt_${NAMES[$i]}.parquet"
  t1=$(secs)
  "$PY" - "$C" "$tmp/q.parquet" "${SQL[$i]}" "$THREADS" "${NAMES[$i]}" "$t0" "$t1" <<'PY'
import sys, time, duckdb
c, q, where, threads, name, t0, t1 = sys.argv[1:8]
vf = float(t1) - float(t0)
con = duckdb.connect()
con.execute(f"set threads = {int(threads)}")
s = time.perf_counter()
con.execute(f"""select q.query_id, c.id from read_parquet('{q}') q, read_parquet('{c}/*.parquet') c
  where {where} qualify row_number() over (partition by q.query_id order by list_distance(c.emb, q.emb)) <= 10""").fetchall()
dd = time.perf_counter() - s
n = con.execute(f"select count(*) from read_parquet('{c}/*.parquet') where {where}").fetchone()[0]
tot = con.execute(f"select count(*) from read_parquet('{c}/*.parquet')").fetchone()[0]
print(f"  {name:8s} {100.0 * n / tot:7.2f} % of rows: vforge {vf:7.3f} s, DuckDB {dd:7.3f} s, ratio DuckDB/vforge {dd / vf:6.2f}x")
PY
done
echo "-- 2. the local store: bench QPS and recall@10 (1 worker) per selectivity"
for kind in exact ivf; do
  params='{recreate: true, index: {type: none}}'
  [ $kind = ivf ] && params='{recreate: true, index: {type: sq8, nprobe: 8, min_rows: 1000}}'
  cat > "$tmp/$kind.yaml" <<EOF
vectors: {image: {type: dense, column: emb, distance: euclid}}
datasource: {uri: $C, payload_fields: {label: label, id: id}}
vectorstore: {type: local, path: $tmp/store, collection_name: $kind, params: $params}
EOF
  "$V" --quiet --threads "$THREADS" load run "$tmp/$kind.yaml" > /dev/null
  base=
  for i in 0 1 2 3; do
    args=()
    [ -n "${FILTERS[$i]}" ] && args=(--filter "${FILTERS[$i]}")
    "$V" --quiet bench "$tmp/$kind.yaml" --queries "$tmp/q.parquet" --ground-truth "$tmp/gt_${NAMES[$i]}.parquet" \
      -k 10 "${args[@]}" --json > "$tmp/b.json" 2> /dev/null
    read -r qps rec <<< "$("$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["qps"], r["recall"])' "$tmp/b.json")"
    [ -z "$base" ] && base=$qps
    "$PY" -c 'import sys; k,n,q,r,b=sys.argv[1:6]; print(f"  {k:5s} {n:8s} QPS {float(q):9.1f}  recall@10 {float(r):.4f}  QPS ratio to unfiltered {float(q)/float(b):5.2f}x")' \
      "$kind" "${NAMES[$i]}" "$qps" "$rec" "$base"
  done
done
