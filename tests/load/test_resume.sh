#!/usr/bin/env bash
# Killing a load with SIGKILL at random moments and resuming it (`load run --resume`) until it
# completes yields exactly the point set of an uninterrupted load: the same ids (each stored
# once after finalize), vectors and payloads.  The corpus is 6 copies of examples/corpus
# (12 files, 36000 rows) loaded in small batches with frequent checkpoints, so kills land
# inside files, between checkpoints, and during finalize.
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
V=${VFORGE:?set VFORGE to the vforge binary}
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
"$V" load --help > /dev/null 2>&1 || { echo "FAIL: $V has no 'load' command (register cmd_load / CLI_LOAD in src/cli/main.c)"; exit 1; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/load-resume.XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pts="$src/tests/load/points.py"
oracle="$src/tests/oracle"
for i in 0 1 2 3 4 5; do
  mkdir -p "$tmp/corpus/part$i" && cp "$src"/examples/corpus/rank00/*.parquet "$tmp/corpus/part$i/" || exit 1
done
config() {
  cat > "$tmp/$1.yaml" <<EOC
vectors: {emb: {type: dense, column: emb, distance: cosine}}
datasource: {uri: $tmp/corpus, payload_fields: {id: id, text: text, meta: meta}}
vectorstore: {type: local, path: $tmp/$1, collection_name: ex}
loader: {batch_size: 50, prefetch_size: 200, concurrency: 3, retries: 2}
EOC
}
now_ms() { date +%s%3N; }

# the uninterrupted reference
config ref
t0=$(now_ms)
"$V" --quiet load run "$tmp/ref.yaml" --checkpoint-batches 4 2> "$tmp/err.txt" || { echo "FAIL: reference run: $(cat "$tmp/err.txt")"; exit 1; }
T=$(( $(now_ms) - t0 ))
[ $T -lt 100 ] && T=100
echo "uninterrupted load: ${T} ms"

# kill -9 at random moments, then --resume until a run completes
config killed
state="$tmp/killed/ex/_load/rank000-of-001.json"
resume=""
completed=0
kills=0
mid=0
for attempt in 1 2 3 4 5 6; do
  "$V" load run "$tmp/killed.yaml" --checkpoint-batches 4 $resume 2> "$tmp/err.txt" &
  pid=$!
  ms=$(( (RANDOM % 55 + 5) * T / 100 ))
  sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
  if kill -9 $pid 2> /dev/null; then
    wait $pid 2> /dev/null
    kills=$((kills + 1))
    if [ -f "$state" ] && grep -q '"done":false' "$state"; then mid=$((mid + 1)); fi
    echo "killed after ${ms} ms: $(grep -o '"points":[0-9]*' "$state" 2> /dev/null || echo 'no state yet')"
  else
    wait $pid || { echo "FAIL: run exited with an error: $(cat "$tmp/err.txt")"; exit 1; }
    echo "run completed before the kill"
    completed=1
    break
  fi
  resume=--resume
done
if [ $completed -eq 0 ]; then
  "$V" load run "$tmp/killed.yaml" --resume 2> "$tmp/err.txt" || { echo "FAIL: final --resume: $(cat "$tmp/err.txt")"; exit 1; }
fi
grep -q "holds 36000 points (the load sent 36000)" "$tmp/err.txt" || { echo "FAIL: finalize output: $(cat "$tmp/err.txt")"; exit 1; }
echo "$kills kills ($mid in the middle of a load), then --resume completed"
[ $mid -ge 1 ] || echo "note: no kill landed in the middle of a load this time"

"$V" cat "$tmp/ref/ex" | python3 "$pts" store > "$tmp/ref.jsonl" || { echo "FAIL: reading the reference store"; exit 1; }
"$V" cat "$tmp/killed/ex" | python3 "$pts" store > "$tmp/killed.jsonl" || { echo "FAIL: the resumed store holds an id twice"; exit 1; }
[ "$(wc -l < "$tmp/ref.jsonl")" -eq 36000 ] || { echo "FAIL: reference holds $(wc -l < "$tmp/ref.jsonl") points"; exit 1; }
cmp -s "$tmp/ref.jsonl" "$tmp/killed.jsonl" || { echo "FAIL: resumed point set differs: $(diff "$tmp/ref.jsonl" "$tmp/killed.jsonl" | head -c 400)"; exit 1; }
echo "ok: the resumed load holds the identical 36000 points"
"$V" cat --with-id 'vf_point_id(filename, file_row_number)' "$tmp/corpus" |
  python3 "$pts" corpus id=id text=text meta=meta > "$tmp/expected.jsonl"
cmp -s "$tmp/expected.jsonl" "$tmp/killed.jsonl" || { echo "FAIL: resumed store differs from the corpus"; exit 1; }
echo "ok: and they equal the corpus"
if [ -d "$oracle/node_modules/@duckdb/node-api" ] && command -v node >/dev/null; then
  node "$src/tests/load/duckdb_points.mjs" "$oracle" "$tmp/killed/ex" "$tmp/expected.jsonl" || exit 1
fi
echo "resume test passed"
