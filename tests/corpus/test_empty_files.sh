#!/usr/bin/env bash
# Issue 14, defect 3: 0-row parquet files in a corpus directory (Spark and DuckDB partitioned
# writes make them).  `load` used to exit 2 ("no valid row to take its dimension from") when the
# first file was empty.  Every command skips empty files (logged, counted) and takes the
# dimension from the first file with rows, decided by one corpus function (corpus_plan).
# Two corpora, each with three empty files written by DuckDB and by pyarrow (a file with no row
# group, and one with a 0-row row group) in first, middle and last position around two real
# files; every command must give exactly what it gives on the two real files alone (ids made
# equal with id_root): inspect, scan, cat, load inspect, load, generate-queries, brute-force,
# index build and load-dist (local engine).
set -u
V=${VFORGE:?set VFORGE to the vforge binary}
PY=${VF_PY:-}
[ -x "$PY" ] && "$PY" -c 'import pyarrow, duckdb' 2> /dev/null || { echo "skip: no python with pyarrow and duckdb (VF_PY)"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/empty-files.XXXXXX" 2> /dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

"$PY" - "$tmp" << 'PYEOF' || { echo "FAIL: fixtures"; exit 1; }
import os, sys
import duckdb, numpy as np, pyarrow as pa, pyarrow.parquet as pq
tmp = sys.argv[1]
rng = np.random.default_rng(7)
schema = pa.schema([("id", pa.int64()), ("emb", pa.list_(pa.float32())), ("text", pa.string())])
def table(n, start):
    v = rng.random((n, 8), dtype=np.float32)
    return pa.table({"id": pa.array(range(start, start + n), pa.int64()),
                     "emb": pa.array(list(v), type=pa.list_(pa.float32())),
                     "text": pa.array([f"t{i}" for i in range(start, start + n)], pa.string())},
                    schema=schema)
for d in ("ref", "A", "B"):
    os.makedirs(f"{tmp}/{d}")
pq.write_table(table(100, 0), f"{tmp}/ref/b_rows.parquet")
pq.write_table(table(150, 100), f"{tmp}/ref/d_rows.parquet")
con = duckdb.connect()
def duck_empty(path):  # DuckDB: a footer without row groups
    con.execute(f"COPY (SELECT * FROM '{tmp}/ref/b_rows.parquet' WHERE false) TO '{path}' (FORMAT parquet)")
def arrow_empty(path):  # pyarrow: one row group of 0 rows
    pq.write_table(table(0, 0), path)
for d in ("A", "B"):
    for f in ("b_rows", "d_rows"):
        os.link(f"{tmp}/ref/{f}.parquet", f"{tmp}/{d}/{f}.parquet")
arrow_empty(f"{tmp}/A/a_empty.parquet"); duck_empty(f"{tmp}/A/c_empty.parquet"); duck_empty(f"{tmp}/A/e_empty.parquet")
duck_empty(f"{tmp}/B/a_empty.parquet"); arrow_empty(f"{tmp}/B/c_empty.parquet"); arrow_empty(f"{tmp}/B/e_empty.parquet")
for d in ("A", "B"):
    for f in ("a_empty", "c_empty", "e_empty"):
        m = pq.ParquetFile(f"{tmp}/{d}/{f}.parquet").metadata
        assert m.num_rows == 0, (d, f)
print("fixtures: two corpora, three empty files each")
PYEOF

jget() { "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {"d": d}))' "$1" "$2"; }
cfg() { # NAME CORPUS
  cat > "$tmp/$1.yaml" << EOC
vectors: {emb: {type: dense, column: emb, distance: cosine}}
datasource: {uri: $tmp/$2, id_root: $tmp/$2, payload_fields: {id: id, text: text}}
vectorstore: {type: local, path: $tmp/store-$1, collection_name: c}
loader: {batch_size: 64}
EOC
}
# reference outputs from the two real files alone
cfg ref ref
"$V" --quiet generate-queries "$tmp/ref" -n 20 --seed 5 --id-root "$tmp/ref" --output "$tmp/ref.q.parquet" || fail "generate-queries ref"
"$V" --quiet scan "$tmp/ref" --json > "$tmp/ref.scan" || fail "scan ref"
"$V" --quiet cat "$tmp/ref" --with-id 'vf_point_id(filename, file_row_number)' --id-root "$tmp/ref" > "$tmp/ref.cat" || fail "cat ref"
"$V" --quiet load run "$tmp/ref.yaml" > /dev/null 2>&1 || fail "load ref"
"$V" cat "$tmp/store-ref/c" --columns id,payload | sort > "$tmp/ref.points"
"$V" --quiet brute-force "$tmp/ref" --queries "$tmp/ref.q.parquet" -k 5 --id-root "$tmp/ref" --output "$tmp/ref.bf.parquet" || fail "brute-force ref"
"$V" cat "$tmp/ref.bf.parquet" > "$tmp/ref.bf"
"$V" --quiet index build "$tmp/ref" --output "$tmp/ref.ivf" --type flat --nlist 4 --seed 1 --id-root "$tmp/ref" > /dev/null 2>&1 || fail "index build ref"
"$V" --quiet index search "$tmp/ref.ivf" --queries "$tmp/ref.q.parquet" -k 5 --nprobe 4 --output "$tmp/ref.is.parquet" > /dev/null 2>&1 || fail "index search ref"
"$V" cat "$tmp/ref.is.parquet" > "$tmp/ref.is"

for d in A B; do
  c="$tmp/$d"
  # inspect: every file listed, the empty ones counted
  if "$V" inspect "$c" --json > "$tmp/$d.inspect" 2> "$tmp/$d.inspect.err" &&
     [ "$(jget "$tmp/$d.inspect" '(d["total_files"], d["total_rows"], d["empty_files"])')" = "(5, 250, 3)" ]; then
    ok "$d: inspect lists 5 files, 250 rows, 3 empty"
  else fail "$d: inspect: $(head -c 300 "$tmp/$d.inspect") $(tail -2 "$tmp/$d.inspect.err")"; fi
  # scan: the same checksum, the empty files counted and logged
  if "$V" scan "$c" --json > "$tmp/$d.scan" 2> "$tmp/$d.scan.err" &&
     [ "$(jget "$tmp/$d.scan" '(d["rows"], d["checksum"], d["empty_files"])')" = "$(jget "$tmp/ref.scan" '(d["rows"], d["checksum"], 3)')" ] &&
     [ "$(grep -c 'has no rows' "$tmp/$d.scan.err")" -eq 3 ]; then
    ok "$d: scan: same rows and checksum, 3 empty files logged and counted"
  else fail "$d: scan: $(cat "$tmp/$d.scan") $(tail -3 "$tmp/$d.scan.err")"; fi
  # cat: the same rows and ids
  "$V" --quiet cat "$c" --with-id 'vf_point_id(filename, file_row_number)' --id-root "$c" > "$tmp/$d.cat" 2>&1 &&
    cmp -s "$tmp/$d.cat" "$tmp/ref.cat" && ok "$d: cat: the same rows and ids" || fail "$d: cat differs: $(head -c 300 "$tmp/$d.cat")"
  # load: the same points; the report counts the empty files
  cfg "$d" "$d"
  "$V" --quiet load inspect "$tmp/$d.yaml" > "$tmp/$d.linspect" 2>&1 &&
    [ "$(jget "$tmp/$d.linspect" '(len(d["files"]), d["total_rows"], d["empty_files"])')" = "(5, 250, 3)" ] &&
    ok "$d: load inspect: 5 files, 250 rows, 3 empty" || fail "$d: load inspect: $(head -c 300 "$tmp/$d.linspect")"
  if "$V" load run "$tmp/$d.yaml" --json > "$tmp/$d.load" 2> "$tmp/$d.load.err" &&
     [ "$(jget "$tmp/$d.load" '(d["points"], d["empty_files"])')" = "(250, 3)" ] &&
     "$V" cat "$tmp/store-$d/c" --columns id,payload | sort | cmp -s - "$tmp/ref.points"; then
    ok "$d: load run: the same 250 points, 3 empty files skipped"
  else fail "$d: load run: $(cat "$tmp/$d.load") $(tail -3 "$tmp/$d.load.err")"; fi
  # generate-queries: the same sample (empty files hold no rows to sample)
  "$V" --quiet generate-queries "$c" -n 20 --seed 5 --id-root "$c" --output "$tmp/$d.q.parquet" > /dev/null 2>&1 &&
    cmp -s "$tmp/$d.q.parquet" "$tmp/ref.q.parquet" && ok "$d: generate-queries: byte-identical queries" ||
    fail "$d: generate-queries differs"
  # brute-force: the same ground truth
  "$V" --quiet brute-force "$c" --queries "$tmp/ref.q.parquet" -k 5 --id-root "$c" --output "$tmp/$d.bf.parquet" > /dev/null 2>&1 &&
    "$V" cat "$tmp/$d.bf.parquet" | cmp -s - "$tmp/ref.bf" && ok "$d: brute-force: the same neighbours" ||
    fail "$d: brute-force differs"
  # index build (+ search): the same index answers
  "$V" --quiet index build "$c" --output "$tmp/$d.ivf" --type flat --nlist 4 --seed 1 --id-root "$c" > /dev/null 2>&1 &&
    "$V" --quiet index search "$tmp/$d.ivf" --queries "$tmp/ref.q.parquet" -k 5 --nprobe 4 --output "$tmp/$d.is.parquet" > /dev/null 2>&1 &&
    "$V" cat "$tmp/$d.is.parquet" | cmp -s - "$tmp/ref.is" && ok "$d: index build + search: the same results" ||
    fail "$d: index build/search differs"
  # load-dist: the empty files go to no shard; the load verifies 250 points
  cfg "dist$d" "$d"
  if "$V" load-dist "$tmp/dist$d.yaml" --engine local --num-shards 3 --runs-dir "$tmp/runs$d" --json > "$tmp/$d.dist" 2> "$tmp/$d.dist.err" &&
     [ "$(jget "$tmp/$d.dist" '(d["state"], d["stored"], d["files"])')" = "('finalized', 250, 2)" ]; then
    ok "$d: load-dist: 2 shards of the files with rows, 250 points verified"
  else fail "$d: load-dist: $(head -c 400 "$tmp/$d.dist") $(tail -3 "$tmp/$d.dist.err")"; fi
done

# a corpus of empty files only: a clear error, exit 2
mkdir -p "$tmp/none" && cp "$tmp/A/c_empty.parquet" "$tmp/A/a_empty.parquet" "$tmp/none/"
cfg none none
"$V" load run "$tmp/none.yaml" > /dev/null 2> "$tmp/none.err"
rc=$?
[ $rc -eq 2 ] && grep -q 'every file of the corpus (2) is empty' "$tmp/none.err" &&
  ok "a corpus of empty files only: exit 2, $(tail -1 "$tmp/none.err")" || fail "empty-only corpus: exit $rc, $(cat "$tmp/none.err")"

[ $fails -eq 0 ] && echo "all empty-file checks passed" || echo "$fails empty-file checks FAILED"
exit $((fails > 0))
