#!/usr/bin/env bash
# `vforge load` end to end on the bundled corpus (examples/corpus: 2 files x 3000 rows, id BIGINT,
# emb FLOAT[32], text, meta JSON) into the embedded `local` store, checked point by point:
# the store's segments read back with `vforge cat` (and with DuckDB when the oracle
# node_modules exist) must hold exactly the corpus's ids, vectors and payloads.  Also: two
# workers (--num-jobs 2) then finalize, an existing state without --resume, --offset/-n,
# bad rows (stop with file+row, or --skip-bad-rows), uuid() with --resume, bad configs (exit 2).
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
V=${VFORGE:?set VFORGE to the vforge binary}
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
"$V" load --help > /dev/null 2>&1 || { echo "FAIL: $V has no 'load' command (register cmd_load / CLI_LOAD in src/cli/main.c)"; exit 1; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/load-test.XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
corpus="$src/examples/corpus"
pts="$src/tests/load/points.py"
oracle="$src/tests/oracle"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

# config NAME STORE_DIR [extra datasource lines] -> $tmp/NAME.yaml
config() {
  cat > "$tmp/$1.yaml" <<EOC
vectors:
  emb: {type: dense, column: emb, distance: cosine}
datasource:
  uri: $corpus
  payload_fields: {id: id, text: text, meta: meta}
${3:-}
vectorstore:
  type: local
  path: $2
  collection_name: ex
loader: {batch_size: ${BATCH:-700}, prefetch_size: ${PREFETCH:-2000}, concurrency: 3, retries: 2}
EOC
}

# the expected point set of the whole corpus (ids as the loader makes them)
"$V" cat --with-id 'vf_point_id(filename, file_row_number)' "$corpus" |
  python3 "$pts" corpus id=id text=text meta=meta > "$tmp/expected.jsonl" || { echo "cannot read the corpus"; exit 1; }
[ "$(wc -l < "$tmp/expected.jsonl")" -eq 6000 ] || { echo "expected 6000 corpus rows"; exit 1; }

# check_store DIR EXPECTED WHAT: the collection's segments equal EXPECTED (each id once)
check_store() {
  if ! "$V" cat "$1/ex" | python3 "$pts" store > "$tmp/actual.jsonl"; then
    fail "$3: reading the store"; return; fi
  if cmp -s "$2" "$tmp/actual.jsonl"; then ok "$3: $(wc -l < "$2") points equal the corpus (vforge cat)"
  else fail "$3: store differs from the corpus: $(diff "$2" "$tmp/actual.jsonl" | head -c 400)"; fi
  if [ -d "$oracle/node_modules/@duckdb/node-api" ] && command -v node >/dev/null; then
    node "$src/tests/load/duckdb_points.mjs" "$oracle" "$1/ex" "$2" || fail "$3: DuckDB check"
  fi
}

# --- 1. load run, --json report, point by point
config run "$tmp/s1"
if "$V" --quiet load run "$tmp/run.yaml" --json > "$tmp/out.json" 2> "$tmp/err.txt"; then
  python3 - "$tmp/out.json" <<'EOP' && ok "run --json: one object, 6000 points, 2 files" || fail "run --json report: $(cat "$tmp/out.json")"
import json, sys
text = open(sys.argv[1]).read()
assert text.count("\n") == 1, text
r = json.loads(text)
assert sorted(r) == sorted(["points", "files", "bytes_read", "seconds", "points_per_s", "finalize_seconds", "retries", "skipped_rows", "empty_files", "peak_rss_bytes"]), r
assert r["points"] == 6000 and r["files"] == 2 and r["bytes_read"] > 0 and r["retries"] == 0 and r["skipped_rows"] == 0, r
EOP
  check_store "$tmp/s1" "$tmp/expected.jsonl" "run"
  [ ! -e "$tmp/s1/ex/_load/rank000-of-001.json" ] && ok "a verified run leaves no state" || fail "state left after run"
else
  fail "load run exited $?: $(cat "$tmp/err.txt")"
fi
# a second run over the same collection replaces by id: still exactly the corpus
if "$V" --quiet load run "$tmp/run.yaml" 2> "$tmp/err.txt"; then check_store "$tmp/s1" "$tmp/expected.jsonl" "second run"
else fail "second run: $(cat "$tmp/err.txt")"; fi

# --- 2. two workers, then finalize
config jobs "$tmp/s2"
"$V" --quiet load prepare "$tmp/jobs.yaml" || fail "prepare"
"$V" --quiet load load "$tmp/jobs.yaml" --num-jobs 2 --job-rank 0 --no-manage-indexing &
p0=$!
"$V" --quiet load load "$tmp/jobs.yaml" --num-jobs 2 --job-rank 1 --no-manage-indexing --json > "$tmp/r1.json" &
p1=$!
wait $p0 || fail "worker 0"
wait $p1 || fail "worker 1"
grep -q '"points":3000,"files":1,' "$tmp/r1.json" && ok "worker 1 loaded its one file" || fail "worker 1 report: $(cat "$tmp/r1.json")"
if "$V" load finalize "$tmp/jobs.yaml" 2> "$tmp/err.txt"; then
  grep -q "holds 6000 points (the load sent 6000)" "$tmp/err.txt" && ok "finalize verified 6000 points" || fail "finalize output: $(cat "$tmp/err.txt")"
  check_store "$tmp/s2" "$tmp/expected.jsonl" "num-jobs 2"
else fail "finalize: $(cat "$tmp/err.txt")"; fi

# finalize with a worker missing is refused
config miss "$tmp/s3"
"$V" --quiet load prepare "$tmp/miss.yaml" && "$V" --quiet load load "$tmp/miss.yaml" --num-jobs 2 --job-rank 0 || fail "prepare/load rank 0"
"$V" --quiet load finalize "$tmp/miss.yaml" 2> "$tmp/err.txt"
rc=$?
[ $rc -eq 2 ] && grep -q "only 1 of 2 workers" "$tmp/err.txt" && ok "finalize refuses a missing worker" || fail "finalize with a missing worker: rc $rc $(cat "$tmp/err.txt")"

# --- 3. an existing state needs --resume
config st "$tmp/s4"
"$V" --quiet load load "$tmp/st.yaml" > /dev/null 2>&1 || fail "load"
"$V" --quiet load load "$tmp/st.yaml" 2> "$tmp/err.txt"
rc=$?
[ $rc -eq 2 ] && grep -q -- "--resume" "$tmp/err.txt" && ok "existing state without --resume: exit 2 naming --resume" || fail "existing state: rc $rc $(cat "$tmp/err.txt")"
"$V" --quiet load run "$tmp/st.yaml" 2> /dev/null
[ $? -eq 2 ] && ok "run with an existing state: exit 2" || fail "run with an existing state"
out=$("$V" --quiet load load "$tmp/st.yaml" --resume --json) && echo "$out" | grep -q '"points":0,' && ok "--resume of a finished load sends nothing" || fail "resume of a finished load: $out"
"$V" --quiet load finalize "$tmp/st.yaml" && check_store "$tmp/s4" "$tmp/expected.jsonl" "load + finalize" || fail "finalize after load"

# --- 4. --offset and -n cut this worker's rows (across the file boundary)
config lim "$tmp/s5"
out=$("$V" --quiet load run "$tmp/lim.yaml" --offset 2990 -n 20 --json) && echo "$out" | grep -q '"points":20,"files":2,' || fail "offset/limit run: $out"
"$V" cat --with-id 'vf_point_id(filename, file_row_number)' --offset 2990 --limit 20 "$corpus" |
  python3 "$pts" corpus id=id text=text meta=meta > "$tmp/exp20.jsonl"
check_store "$tmp/s5" "$tmp/exp20.jsonl" "--offset 2990 -n 20"

# --- 5. bad rows: stop naming file and row, or skip and count
bad_uri="$src/tests/data/dim_mismatch.parquet"
cat > "$tmp/bad.yaml" <<EOC
vectors: {emb: {type: dense, column: emb}}
datasource: {uri: $bad_uri}
vectorstore: {path: $tmp/s6, collection_name: ex}
EOC
"$V" --quiet load run "$tmp/bad.yaml" 2> "$tmp/err.txt"
rc=$?
[ $rc -eq 2 ] && grep -q "dim_mismatch.parquet" "$tmp/err.txt" && grep -q "row 3" "$tmp/err.txt" && ok "bad row: exit 2 naming file and row" || fail "bad row: rc $rc $(cat "$tmp/err.txt")"
out=$("$V" --quiet load run "$tmp/bad.yaml" --resume --skip-bad-rows --json) && echo "$out" | grep -q '"points":5,.*"skipped_rows":1,' && ok "--skip-bad-rows: 5 points, 1 skipped" || fail "skip bad rows: $out"

# --- 6. uuid() ids cannot be resumed; bad configs exit 2
cat > "$tmp/uuid.yaml" <<EOC
vectors: {emb: {type: dense, column: emb}}
datasource: {uri: $corpus, id_expression: "uuid()"}
vectorstore: {path: $tmp/s7, collection_name: ex}
EOC
"$V" --quiet load run "$tmp/uuid.yaml" --resume 2> "$tmp/err.txt"
rc=$?
[ $rc -eq 2 ] && grep -q "uuid" "$tmp/err.txt" && ok "uuid() with --resume: exit 2" || fail "uuid resume: rc $rc $(cat "$tmp/err.txt")"
printf 'vectors: {emb: {type: dense, column: emb}}\ndatasource: {urll: %s}\nvectorstore: {collection_name: ex}\n' "$corpus" > "$tmp/badkey.yaml"
"$V" --quiet load run "$tmp/badkey.yaml" 2> "$tmp/err.txt"
rc=$?
[ $rc -eq 2 ] && grep -q "urll" "$tmp/err.txt" && ok "unknown config key: exit 2" || fail "bad config: rc $rc $(cat "$tmp/err.txt")"
"$V" --quiet load run "$tmp/does-not-exist.yaml" 2> /dev/null
[ $? -eq 2 ] && ok "missing config: exit 2" || fail "missing config"
printf 'vectors: {emb: {type: dense, column: nope}}\ndatasource: {uri: %s}\nvectorstore: {path: %s, collection_name: ex}\n' "$corpus" "$tmp/s8" > "$tmp/nocol.yaml"
"$V" --quiet load run "$tmp/nocol.yaml" 2> "$tmp/err.txt"
rc=$?
[ $rc -eq 2 ] && grep -q "nope" "$tmp/err.txt" && ok "missing vector column: exit 2" || fail "missing column: rc $rc $(cat "$tmp/err.txt")"
"$V" --quiet load bogus "$tmp/run.yaml" 2> /dev/null
[ $? -eq 2 ] && ok "unknown subcommand: exit 2" || fail "unknown subcommand"

# --- 7a. the `row` id expression is corpus-wide whatever the worker split (global row bases)
config rows "$tmp/s9" '  id_expression: row'
"$V" --quiet load prepare "$tmp/rows.yaml" &&
  "$V" --quiet load load "$tmp/rows.yaml" --num-jobs 2 --job-rank 1 --no-manage-indexing &&
  "$V" --quiet load load "$tmp/rows.yaml" --num-jobs 2 --job-rank 0 --no-manage-indexing &&
  "$V" --quiet load finalize "$tmp/rows.yaml" || fail "row ids: load"
"$V" cat "$tmp/s9/ex" | python3 -c "
import json, sys
ids = {}
for l in sys.stdin:
    r = json.loads(l); ids[r['id']] = json.loads(r['payload'])['id']
assert len(ids) == 6000 and all(str(v) == k for k, v in ids.items()), 'row ids differ from the corpus rows'
" && ok "row ids: 0..5999 in corpus order across 2 workers" || fail "row ids"

# --- 7b. a store that keeps failing: retries logged, then a clear error (exit 1)
config retry "$tmp/s10"
"$V" --quiet load prepare "$tmp/retry.yaml" || fail "prepare"
rm -f "$tmp/s10/ex/.seq" && mkdir "$tmp/s10/ex/.seq"   # every new segment now fails with EIO
"$V" load load "$tmp/retry.yaml" --no-manage-indexing 2> "$tmp/err.txt"
rc=$?
[ $rc -eq 1 ] && grep -q "retry 2/2" "$tmp/err.txt" && grep -q "failed after retries" "$tmp/err.txt" &&
  ok "failing store: retried, then exit 1" || fail "failing store: rc $rc $(cat "$tmp/err.txt")"

# --- 7c. finalize names both numbers when points are missing
config lost "$tmp/s11"
"$V" --quiet load prepare "$tmp/lost.yaml" && "$V" --quiet load load "$tmp/lost.yaml" --no-manage-indexing || fail "load for lost"
rm -f "$(ls "$tmp"/s11/ex/seg-*.parquet | head -1)"
"$V" --quiet load finalize "$tmp/lost.yaml" 2> "$tmp/err.txt"
rc=$?
[ $rc -eq 1 ] && grep -q "but the load sent 6000" "$tmp/err.txt" && ok "finalize reports lost points: $(grep -o 'holds [0-9]* points' "$tmp/err.txt")" || fail "lost points: rc $rc $(cat "$tmp/err.txt")"

# --- 7. inspect prints the resolved config as JSON, discard measures the pipeline
"$V" load inspect "$tmp/run.yaml" > "$tmp/inspect.json" && python3 -c "
import json,sys; r=json.load(open(sys.argv[1])); assert r['total_rows']==6000 and r['collection']=='ex', r" "$tmp/inspect.json" \
  && ok "inspect" || fail "inspect: $(head -c 300 "$tmp/inspect.json")"
out=$("$V" --quiet load run "$tmp/run.yaml" --store discard --state-dir "$tmp/dstate" --json) && echo "$out" | grep -q '"points":6000,' && ok "discard store" || fail "discard: $out"

# --- 8. load delete of a local collection: refused without --yes, then dropped with its states
config del "$tmp/s12"
"$V" --quiet load run "$tmp/del.yaml" || fail "load for delete"
"$V" load delete "$tmp/del.yaml" 2> "$tmp/del.err"; rc=$?
[ $rc -eq 2 ] && grep -q "pass --yes" "$tmp/del.err" && [ -f "$tmp/s12/ex/collection.json" ] &&
  ok "load delete without --yes: exit 2, nothing dropped" || fail "delete without --yes: rc $rc $(head -c 300 "$tmp/del.err")"
out=$("$V" load delete "$tmp/del.yaml" --yes --json 2> "$tmp/del.err") && echo "$out" | grep -q '"existed":true,"dropped":true,"points":6000,' &&
  [ ! -e "$tmp/s12/ex/collection.json" ] && ok "load delete --yes --json: dropped 6000 points" ||
  fail "delete --yes: $out $(head -c 300 "$tmp/del.err")"

[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all load tests passed"
