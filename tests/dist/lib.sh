# Shared by tests/dist/test_*.sh (sourced, not a test itself).
# Needs: V (the vforge binary), src (repo root), tmp (a scratch directory).
pts="$src/tests/load/points.py"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

# make_corpus DIR: 6 files x 3000 rows (the bundled corpus copied into a/ b/ c/; keys differ,
# so ids differ) -> DIR; the expected point set -> $tmp/expected.jsonl
make_corpus() {
  for d in a b c; do
    mkdir -p "$1/$d" && cp "$src"/examples/corpus/rank00/*.parquet "$1/$d/" || return 1
  done
  "$V" cat --with-id 'vf_point_id(filename, file_row_number)' "$1" > "$tmp/corpus.jsonl" || return 1
  python3 "$pts" corpus id=id text=text meta=meta < "$tmp/corpus.jsonl" > "$tmp/expected.jsonl" || return 1
  [ "$(wc -l < "$tmp/expected.jsonl")" -eq 18000 ]
}

# local_config NAME CORPUS STORE_DIR [extra lines] -> $tmp/NAME.yaml
local_config() {
  cat > "$tmp/$1.yaml" <<EOC
vectors:
  emb: {type: dense, column: emb, distance: cosine}
datasource:
  uri: $2
  payload_fields: {id: id, text: text, meta: meta}
vectorstore:
  type: local
  path: $3
  collection_name: ex
loader: {batch_size: 500, prefetch_size: 1000, concurrency: 2, retries: 2}
${4:-}
EOC
}

# check_store STORE_DIR WHAT: the local collection `ex` holds exactly the corpus (each id once)
check_store() {
  if ! "$V" cat "$1/ex" | python3 "$pts" store > "$tmp/actual.jsonl"; then
    fail "$2: reading the store"; return; fi
  if cmp -s "$tmp/expected.jsonl" "$tmp/actual.jsonl"; then ok "$2: $(wc -l < "$tmp/actual.jsonl") points equal the corpus"
  else fail "$2: the store differs from the corpus: $(diff "$tmp/expected.jsonl" "$tmp/actual.jsonl" | head -c 400)"; fi
}

# jq_py FILE EXPR: python expression over r (the JSON in FILE) must be true
jq_py() {
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1" 2>/dev/null
}
