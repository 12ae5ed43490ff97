#!/usr/bin/env bash
# Issue 14, defect 8 ("Smaller, each real"): each check below failed on the code before it.
#  a. brute-force with 4-d queries over an 8-d corpus names the corpus's real dimension (8)
#  b. brute-force counts the NaN and NULL rows it skips (rows_skipped)
#  c. a tiny --memory-budget error names the file, row group and column (scan, brute-force)
#  d. a schema mismatch names the vector and both definitions in full; a corrupt collection.json
#     is reported as corrupt (exit 2), not as "a different vector schema"
#  e. loader.retries bounds the Qdrant connection retries
#  f. load validates the config (offset, payload and id columns) before it creates the collection
#  g. load finalize of a missing collection exits 2 and creates nothing
#  h. a second load of a worker whose load still runs is told which pid holds it
#  i. --quiet prints no summary
#  j. --memory-budget 0 and --nlist 0 are refused (exit 2), not silently "the default"
#  k. version --json prints {"version": ...}
#  l. index search defaults to nprobe max(16, nlist/16), the local store's rule
#  m. generate-queries CONFIG names the vector column after the vector; bench CONFIG finds it
#     (and still finds queries sampled from the parquet corpus, named after its column)
#  n. brute-force and generate-queries --json print one JSON object
set -u
V=${VFORGE:?set VFORGE to the vforge binary}
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
PY=${VF_PY:-}
[ -x "$PY" ] && "$PY" -c 'import pyarrow, numpy' 2> /dev/null || { echo "skip: no python with pyarrow (VF_PY)"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/runtime-fixes.XXXXXX" 2> /dev/null || mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2> /dev/null; wait "$p" 2> /dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
corpus="$src/examples/corpus"
# run WANT LABEL CMD...: stdout in $tmp/out, stderr in $tmp/err; true when the exit code is WANT
run() {
  local want=$1 label=$2; shift 2
  "$@" > "$tmp/out" 2> "$tmp/err"
  local rc=$?
  [ $rc -eq "$want" ] && return 0
  fail "$label: exit $rc, want $want: $(tail -c 400 "$tmp/err")"
  return 1
}
jok() { "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2"; }

"$PY" - "$tmp" << 'PYEOF' || { echo "FAIL: fixtures"; exit 1; }
import sys, numpy as np, pyarrow as pa, pyarrow.parquet as pq
t = sys.argv[1]
rng = np.random.default_rng(3)
import os
os.makedirs(f"{t}/c8"); os.makedirs(f"{t}/c16")
v = list(rng.random((60, 8), dtype=np.float32))
v[3] = None                                               # a NULL vector
v[7] = np.array([np.nan] + [0.5] * 7, dtype=np.float32)  # a NaN
pq.write_table(pa.table({"id": pa.array(range(60), pa.int64()),
                         "emb": pa.array(v, type=pa.list_(pa.float32()))}), f"{t}/c8/a.parquet")
pq.write_table(pa.table({"id": pa.array(range(20), pa.int64()),
                         "emb": pa.array(list(rng.random((20, 16), dtype=np.float32)), type=pa.list_(pa.float32()))}),
               f"{t}/c16/a.parquet")
for name, d in (("q4", 4), ("q8", 8)):
    pq.write_table(pa.table({"query_id": pa.array([f"q{i}" for i in range(3)]),
                             "emb": pa.array(list(rng.random((3, d), dtype=np.float32)), type=pa.list_(pa.float32()))}),
                   f"{t}/{name}.parquet")
PYEOF

# --- a, b, n: brute-force
run 2 "a: brute-force 4-d queries over 8-d" "$V" brute-force "$tmp/c8" --queries "$tmp/q4.parquet" -k 3 --output "$tmp/x.parquet" &&
  { grep -q 'has dimension 8, expected 4' "$tmp/err" && ok "a: the error names dimension 8 (the corpus's), expected 4" ||
    fail "a: $(cat "$tmp/err")"; }
run 0 "b: brute-force over NaN/NULL rows" "$V" brute-force "$tmp/c8" --queries "$tmp/q8.parquet" -k 3 --output "$tmp/bf.parquet" --json &&
  { jok "$tmp/out" 'd["rows_skipped"] == 2 and d["rows_scanned"] == 60 and d["queries"] == 3 and d["k"] == 3 and d["metric"] == "cosine" and d["output"].endswith("bf.parquet") and set(d) == {"queries", "k", "metric", "rows_scanned", "rows_skipped", "files", "empty_files", "rescored", "seconds", "output", "peak_rss_bytes"}' &&
    grep -q '2 rows skipped' "$tmp/err" && ok "b, n: brute-force --json counts the NaN and NULL rows skipped (2)" ||
    fail "b: $(cat "$tmp/out") $(cat "$tmp/err")"; }
"$V" cat "$tmp/bf.parquet" --columns hit_ids | grep -q "$("$PY" -c 'import hashlib,sys; h=hashlib.md5((sys.argv[1]+":3").encode()).hexdigest(); print(h[:8])' "$tmp/c8/a.parquet")" &&
  fail "b: the NULL row 3 is a hit"
run 0 "n: generate-queries --json" "$V" generate-queries "$corpus" -n 7 --seed 1 --output "$tmp/g.parquet" --json &&
  { jok "$tmp/out" 'd["rows"] == 7 and d["corpus_rows"] == 6000 and d["dim"] == 32 and d["empty_files"] == 0 and d["output"].endswith("g.parquet") and set(d) == {"rows", "corpus_rows", "dim", "row_groups_read", "empty_files", "seconds", "output", "peak_rss_bytes"}' &&
    ok "n: generate-queries --json: one JSON object" || fail "n: $(cat "$tmp/out")"; }

# --- c: tiny memory budgets name the file, row group and column
run 1 "c: scan under 1K" "$V" --memory-budget 1K scan "$corpus" &&
  { grep -q 'batch_0000000[01].parquet: row group 0 (largest column emb' "$tmp/err" && ok "c: scan's budget error names file, row group, column" ||
    fail "c: scan: $(cat "$tmp/err")"; }
run 1 "c: brute-force under 1K" "$V" --memory-budget 1K brute-force "$corpus" --queries "$tmp/g.parquet" -k 3 --output "$tmp/x.parquet" &&
  { grep -q "vector column 'emb', the largest being .*batch_0000000[01].parquet row group 0" "$tmp/err" &&
    ok "c: brute-force's budget error names the column, file and row group" || fail "c: brute-force: $(cat "$tmp/err")"; }

# --- j, k
run 2 "j: --memory-budget 0" "$V" --memory-budget 0 scan "$corpus" && ok "j: --memory-budget 0 is refused (exit 2)"
run 2 "j: --nlist 0" "$V" index build "$corpus" --output "$tmp/n0.ivf" --type flat --nlist 0 && ok "j: --nlist 0 is refused (exit 2)"
[ -e "$tmp/n0.ivf" ] && fail "j: --nlist 0 wrote an index"
run 0 "k: version --json" "$V" version --json && jok "$tmp/out" '{"version", "blas", "simd", "cpu"} <= set(d) and d["version"] and d["blas"]["core"]' &&
  ok "k: version --json: $(cat "$tmp/out")" || fail "k: $(cat "$tmp/out")"

# --- i: --quiet
"$V" --quiet scan "$corpus" --json > "$tmp/out" 2> "$tmp/err"
[ ! -s "$tmp/err" ] && jok "$tmp/out" 'd["rows"] == 6000' && ok "i: scan --quiet: JSON on stdout, nothing on stderr" ||
  fail "i: scan --quiet printed: $(cat "$tmp/err")"
cat > "$tmp/quiet.yaml" << EOC
vectors: {emb: {type: dense, column: emb, distance: cosine}}
datasource: {uri: $corpus}
vectorstore: {type: local, path: $tmp/sq, collection_name: q}
EOC
"$V" --quiet load run "$tmp/quiet.yaml" > "$tmp/out" 2> "$tmp/err"
[ $? -eq 0 ] && [ ! -s "$tmp/err" ] && [ ! -s "$tmp/out" ] && ok "i: load run --quiet prints nothing" ||
  fail "i: load run --quiet printed: $(cat "$tmp/err")"

# --- l: index search's default nprobe
"$V" --quiet index build "$corpus" --output "$tmp/i64.ivf" --type flat --nlist 64 --seed 1 || fail "l: index build"
run 0 "l: index search without --nprobe" "$V" --quiet index search "$tmp/i64.ivf" --queries "$tmp/g.parquet" -k 3 --output "$tmp/is.parquet" --json &&
  { jok "$tmp/out" 'd["nprobe"] == 16' && ok "l: index search defaults to nprobe 16 for nlist 64 (max(16, nlist/16))" ||
    fail "l: $(cat "$tmp/out")"; }

# --- d: schema mismatch and a corrupt collection.json (local store)
cat > "$tmp/s8.yaml" << EOC
vectors: {emb: {type: dense, column: emb, distance: cosine}}
datasource: {uri: $tmp/c8}
vectorstore: {type: local, path: $tmp/ss, collection_name: averyveryverylongcollectionname_to_push_the_message_past_its_old_cut_$(printf 'x%.0s' $(seq 60))}
EOC
sed "s|$tmp/c8|$tmp/c16|" "$tmp/s8.yaml" > "$tmp/s16.yaml"
"$V" --quiet load prepare "$tmp/s8.yaml" || fail "d: prepare"
run 2 "d: a different dimension" "$V" load prepare "$tmp/s16.yaml" &&
  { grep -q "vector 'emb' is dense, dim 8, cosine there but dense, dim 16, cosine in the config" "$tmp/err" &&
    ok "d: the mismatch names both definitions in full" || fail "d: $(cat "$tmp/err")"; }
cj=$(ls -d "$tmp"/ss/*/collection.json)
head -c 40 "$cj" > "$cj.cut" && mv "$cj.cut" "$cj"
run 2 "d: a corrupt collection.json" "$V" load prepare "$tmp/s8.yaml" &&
  { grep -q 'collection.json is corrupt' "$tmp/err" && ! grep -q 'different vector schema' "$tmp/err" &&
    ok "d: a truncated collection.json is reported as corrupt" || fail "d: $(cat "$tmp/err")"; }

# --- f, g: validation before the collection exists; finalize never creates
cat > "$tmp/f.yaml" << EOC
vectors: {emb: {type: dense, column: emb, distance: cosine}}
datasource: {uri: $corpus, payload_fields: {t: no_such_column}}
vectorstore: {type: local, path: $tmp/sf, collection_name: f}
EOC
run 2 "f: a missing payload column" "$V" load run "$tmp/f.yaml" && [ ! -e "$tmp/sf/f/collection.json" ] &&
  grep -q no_such_column "$tmp/err" && ok "f: a missing payload column is refused before the collection is created" ||
  fail "f: payload column: collection created or message: $(cat "$tmp/err")"
sed "s|payload_fields: {t: no_such_column}||" "$tmp/f.yaml" > "$tmp/f2.yaml"
run 2 "f: --offset past the end" "$V" load run "$tmp/f2.yaml" --offset 999999 && [ ! -e "$tmp/sf/f/collection.json" ] &&
  ok "f: --offset past the end is refused before the collection is created" || fail "f: offset: collection created"
run 2 "g: finalize of a missing collection" "$V" load finalize "$tmp/f2.yaml" &&
  { [ ! -e "$tmp/sf/f/collection.json" ] && grep -q "does not exist" "$tmp/err" &&
    ok "g: load finalize of a missing collection: exit 2, nothing created" || fail "g: $(cat "$tmp/err")"; }

# --- m: one naming rule for a config's query vector column, both ways
cat > "$tmp/m.yaml" << EOC
vectors: {image: {type: dense, column: emb, distance: cosine}}
datasource: {uri: $corpus}
vectorstore: {type: local, path: $tmp/sm, collection_name: m}
EOC
"$V" --quiet load run "$tmp/m.yaml" || fail "m: load"
"$V" --quiet generate-queries "$tmp/m.yaml" -n 5 --seed 2 --output "$tmp/mq.parquet" || fail "m: generate-queries CONFIG"
"$V" --quiet brute-force "$tmp/m.yaml" --queries "$tmp/mq.parquet" -k 5 --output "$tmp/mgt.parquet" || fail "m: brute-force CONFIG"
run 0 "m: bench CONFIG with generate-queries CONFIG's file" "$V" --quiet bench "$tmp/m.yaml" --queries "$tmp/mq.parquet" \
  --ground-truth "$tmp/mgt.parquet" -k 5 --json && ok "m: bench CONFIG reads the queries generate-queries CONFIG wrote (column 'image')"
"$V" --quiet brute-force "$corpus" --queries "$tmp/g.parquet" -k 5 --output "$tmp/ggt.parquet" || fail "m: brute-force URI"
run 0 "m: bench CONFIG with queries sampled from the parquet corpus" "$V" --quiet bench "$tmp/m.yaml" --queries "$tmp/g.parquet" \
  --ground-truth "$tmp/ggt.parquet" -k 5 --json && ok "m: bench CONFIG still reads queries named after the parquet column ('emb')"

# --- e: loader.retries bounds the Qdrant connection retries (nothing listens on port 1)
cat > "$tmp/e.yaml" << EOC
vectors: {emb: {type: dense, column: emb, distance: cosine}}
datasource: {uri: $corpus}
vectorstore: {type: qdrant, url: "http://127.0.0.1:1", collection_name: e}
loader: {retries: 1}
EOC
run 1 "e: qdrant unreachable" "$V" load run "$tmp/e.yaml" &&
  { [ "$(grep -c 'retrying' "$tmp/err")" -eq 1 ] && grep -q 'attempt 1 of 2' "$tmp/err" && grep -q 'after 2 attempts' "$tmp/err" &&
    ok "e: loader.retries 1: one retry, 2 attempts" || fail "e: $(cat "$tmp/err")"; }

# --- h: a second load of a running worker is told which pid holds it
"$PY" "$src/tests/corpus/slow_http.py" "$corpus/rank00" "$tmp/port" 0.7 &
pids+=($!)
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
base="http://127.0.0.1:$(cat "$tmp/port")"
cat > "$tmp/h.yaml" << EOC
vectors: {emb: {type: dense, column: emb, distance: cosine}}
datasource: {file_list: ["$base/batch_00000000.parquet"]}
vectorstore: {type: local, path: $tmp/sh, collection_name: h}
loader: {batch_size: 100, prefetch_size: 100}
EOC
"$V" --quiet load prepare "$tmp/h.yaml" || fail "h: prepare"
"$V" --quiet load load "$tmp/h.yaml" --no-manage-indexing > "$tmp/h1.out" 2>&1 &
first=$!
pids+=($first)
for _ in $(seq 400); do ls "$tmp"/sh/h/_load/rank000-of-001.json > /dev/null 2>&1 && break; sleep 0.02; done
# the state appears before the first upsert; each read then takes 0.7 s: stop it mid-load so
# the check does not race its end (a stopped process still holds its lock)
kill -STOP "$first" 2> /dev/null
if kill -0 "$first" 2> /dev/null && ! grep -q '"done":true' "$tmp"/sh/h/_load/rank000-of-001.json; then
  run 2 "h: a second load while the first runs" "$V" load load "$tmp/h.yaml" --no-manage-indexing --resume &&
    { grep -q "running now (pid $first on host" "$tmp/err" && ok "h: the second load names the pid holding the worker ($first)" ||
      fail "h: $(cat "$tmp/err")"; }
  kill -9 "$first" 2> /dev/null; wait "$first" 2> /dev/null
  run 0 "h: --resume after the first was killed" timeout 120 "$V" --quiet load load "$tmp/h.yaml" --no-manage-indexing --resume &&
    ok "h: after a kill -9 the lock is gone and --resume continues"
else
  fail "h: the first load finished before the check (the slow server did not slow it)"
fi

[ $fails -eq 0 ] && echo "all defect-8 checks passed" || echo "$fails defect-8 checks FAILED"
exit $((fails > 0))
