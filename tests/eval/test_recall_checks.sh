#!/usr/bin/env bash
# Issue 14, defect 4: recall that cannot be right is refused (exit 2, saying what differs) or
# warned about, never printed silently with exit 0.
#   1. ground truth of the collection's corpus and metric: recall 1, exit 0, no warning;
#   2. brute-force with another metric never replaces the layout's file silently: refused naming
#      --output (the file is unchanged); with --output it writes elsewhere;
#   3. bench against truth of another metric: exit 2 naming both metrics;
#   4. bench against truth of another corpus: exit 2 (the recorded corpus md5s differ);
#   5. truth without a record (written by pyarrow, as other tools write it): the first 100
#      queries' hits are looked up — all found: exit 0; none found: exit 2; some missing: a
#      warning with the count;
#   6. an older store (collection.json without the record): lookups, exit 0;
#   7. a load that never reached finalize: a warning;
#   8. index search --ground-truth: another metric, another corpus (header identity), truth
#      without a record whose ids are not in the index: exit 2; the right truth: exit 0.
# Corpus: examples/corpus (6000 x 32, the bundled files); corpus B is a copy in another directory
# (other bare keys, so other point ids).  Python (pyarrow) parts skip when $VF_PY is absent.
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
V=${VFORGE:?set VFORGE to the vforge binary}
PY=${VF_PY:-$src/.venv/bin/python}
tmp=$(mktemp -d "${VF_TMP:-/tmp}/recall-checks.XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
# expect RC WHAT-GREP LABEL -- CMD...: exit code RC and stderr matching WHAT-GREP ('' = anything)
expect() {
  local want=$1 pat=$2 label=$3; shift 4
  "$@" > "$tmp/out" 2> "$tmp/err"
  local rc=$?
  if [ "$rc" -ne "$want" ]; then fail "$label: exit $rc, want $want: $(tail -3 "$tmp/err")"; return 1; fi
  if [ -n "$pat" ] && ! grep -q -- "$pat" "$tmp/err"; then fail "$label: stderr lacks '$pat': $(tail -3 "$tmp/err")"; return 1; fi
  ok "$label"
}

mkdir -p "$tmp/a" "$tmp/b"
cp -r "$src/examples/corpus/." "$tmp/a/"
cp -r "$src/examples/corpus/." "$tmp/b/"
cat > "$tmp/a.yaml" <<EOF
vectors:
  emb: {type: dense, column: emb, distance: cosine}
datasource: {uri: $tmp/a}
vectorstore: {type: local, path: $tmp/store, collection_name: a}
loader: {batch_size: 500, concurrency: 2}
EOF
"$V" load run "$tmp/a.yaml" 2> "$tmp/load.err" || { cat "$tmp/load.err"; echo "FAIL: load run"; exit 1; }
grep -q '"corpus": {"files_md5"' "$tmp/store/a/collection.json" || fail "collection.json records no corpus"
grep -q '"load": "finalized"' "$tmp/store/a/collection.json" || fail "collection.json: load not finalized"
"$V" generate-queries "$tmp/a" -n 120 2> /dev/null || { echo "FAIL: generate-queries a"; exit 1; }
"$V" generate-queries "$tmp/b" -n 120 2> /dev/null || { echo "FAIL: generate-queries b"; exit 1; }
QA=$tmp/a/eval/queries_120.parquet
QB=$tmp/b/eval/queries_120.parquet
GTA=$tmp/a/eval/brute_force_queries_120_k10.parquet
"$V" brute-force "$tmp/a" --queries "$QA" -k 10 2> /dev/null || { echo "FAIL: brute-force a"; exit 1; }
"$V" brute-force "$tmp/b" --queries "$QB" -k 10 2> /dev/null || { echo "FAIL: brute-force b"; exit 1; }

# 1. the right truth
if expect 0 '' "bench with the collection's own ground truth" -- \
     "$V" bench "$tmp/a.yaml" --queries "$QA" --ground-truth "$GTA" -k 10 --json; then
  grep -q '"recall":1' "$tmp/out" || fail "recall of the exact store is not 1: $(cat "$tmp/out")"
  grep -q 'warning' "$tmp/err" && fail "a warning for the right ground truth: $(grep warning "$tmp/err")"
fi

# 2. brute-force with another metric: the layout's file is not replaced
sum0=$(md5sum < "$GTA")
expect 2 'pass --output\|with --output' "brute-force --metric euclid refuses to replace cosine truth" -- \
  "$V" brute-force "$tmp/a" --queries "$QA" -k 10 --metric euclid
grep -q 'computed with cosine' "$tmp/err" || fail "the refusal does not name the existing metric: $(cat "$tmp/err")"
[ "$(md5sum < "$GTA")" = "$sum0" ] || fail "the cosine ground truth was changed"
expect 0 '' "brute-force --metric euclid --output elsewhere" -- \
  "$V" brute-force "$tmp/a" --queries "$QA" -k 10 --metric euclid --output "$tmp/euclid.parquet"

# 3. another metric
expect 2 'computed with euclid' "bench refuses euclid truth for a cosine collection" -- \
  "$V" bench "$tmp/a.yaml" --queries "$QA" --ground-truth "$tmp/euclid.parquet" -k 10
grep -q 'cosine' "$tmp/err" || fail "the metric refusal does not name the collection's metric"

# 4. another corpus (B's queries and truth against collection a)
expect 2 'another corpus' "bench refuses truth of another corpus" -- \
  "$V" bench "$tmp/a.yaml" --queries "$QB" --ground-truth "$tmp/b/eval/brute_force_queries_120_k10.parquet" -k 10

# 5. truth without a record
if [ -x "$PY" ] && "$PY" -c 'import pyarrow' 2> /dev/null; then
  strip() { # IN OUT MODE: copy the truth without metadata; MODE none|foreign|half
    "$PY" - "$@" <<'PYEOF'
import sys, pyarrow.parquet as pq, pyarrow as pa
src, out, mode = sys.argv[1], sys.argv[2], sys.argv[3]
t = pq.read_table(src)
ids = t.column('hit_ids').to_pylist()
if mode == 'foreign':
    ids = [['00000000-0000-0000-0000-%012d' % (i * 100 + j) for j in range(len(r))] for i, r in enumerate(ids)]
elif mode == 'half':
    ids = [[h if j % 2 == 0 else '00000000-0000-0000-0000-%012d' % (i * 100 + j) for j, h in enumerate(r)] for i, r in enumerate(ids)]
t2 = pa.table({'query_id': t.column('query_id'), 'hit_ids': pa.array(ids, pa.list_(pa.string())),
               'hit_scores': t.column('hit_scores')})
pq.write_table(t2, out)
PYEOF
  }
  strip "$GTA" "$tmp/other.parquet" none && strip "$GTA" "$tmp/foreign.parquet" foreign &&
    strip "$GTA" "$tmp/half.parquet" half || fail "pyarrow could not write the truth copies"
  expect 0 '' "truth without a record whose hits are all stored: exit 0" -- \
    "$V" bench "$tmp/a.yaml" --queries "$QA" --ground-truth "$tmp/other.parquet" -k 10
  grep -q warning "$tmp/err" && fail "a warning for a truth whose hits are all stored"
  expect 2 'none of the 1000 ground-truth neighbours of the first 100 queries' \
    "truth without a record whose hits are not stored: exit 2" -- \
    "$V" bench "$tmp/a.yaml" --queries "$QA" --ground-truth "$tmp/foreign.parquet" -k 10
  expect 0 'warning: 500 of the 1000 ground-truth neighbours of the first 100 queries' \
    "truth with half its hits missing: a warning with the count" -- \
    "$V" bench "$tmp/a.yaml" --queries "$QA" --ground-truth "$tmp/half.parquet" -k 10
else
  echo "skip (5): no pyarrow at $PY"
fi

# 6. an older store: collection.json without the record -> lookups
cp -r "$tmp/store/a" "$tmp/store/old"
awk '/^ \],$/ { print " ]}"; exit } { sub(/"collection": "a"/, "\"collection\": \"old\""); print }' \
  "$tmp/store/a/collection.json" > "$tmp/store/old/collection.json"
grep -q corpus "$tmp/store/old/collection.json" && fail "test setup: the record is still in the old store"
sed 's/collection_name: a/collection_name: old/' "$tmp/a.yaml" > "$tmp/old.yaml"
expect 0 '' "an older store without a record: checked by lookups, exit 0" -- \
  "$V" bench "$tmp/old.yaml" --queries "$QA" --ground-truth "$GTA" -k 10
expect 2 'none of the' "an older store and truth of another corpus: exit 2 by lookups" -- \
  "$V" bench "$tmp/old.yaml" --queries "$QB" --ground-truth "$tmp/b/eval/brute_force_queries_120_k10.parquet" -k 10

# 7. a load that did not reach finalize
sed 's/collection_name: a/collection_name: partial/' "$tmp/a.yaml" > "$tmp/partial.yaml"
"$V" load prepare "$tmp/partial.yaml" 2> /dev/null && "$V" load load "$tmp/partial.yaml" -n 3000 2> /dev/null ||
  fail "prepare + load of the partial collection"
grep -q '"load": "in progress"' "$tmp/store/partial/collection.json" || fail "prepare did not record the load in progress"
expect 0 'has not been finalized' "bench warns about a load that never finished" -- \
  "$V" bench "$tmp/partial.yaml" --queries "$QA" --ground-truth "$GTA" -k 10

# 8. index search --ground-truth
"$V" index build "$tmp/a" --output "$tmp/a.ivf" --type flat --nlist 16 2> /dev/null || fail "index build"
expect 0 'recall@10' "index search with the corpus's own truth" -- \
  "$V" index search "$tmp/a.ivf" --queries "$QA" -k 10 --nprobe 16 --ground-truth "$GTA"
expect 2 'computed with euclid' "index search refuses truth of another metric" -- \
  "$V" index search "$tmp/a.ivf" --queries "$QA" -k 10 --ground-truth "$tmp/euclid.parquet"
expect 2 'another corpus' "index search refuses truth of another corpus (header identity)" -- \
  "$V" index search "$tmp/a.ivf" --queries "$QB" -k 10 --ground-truth "$tmp/b/eval/brute_force_queries_120_k10.parquet"
if [ -f "$tmp/foreign.parquet" ]; then
  expect 2 'none of the' "index search: truth without a record, ids not in the index" -- \
    "$V" index search "$tmp/a.ivf" --queries "$QA" -k 10 --ground-truth "$tmp/foreign.parquet"
  expect 0 '' "index search: truth without a record, ids in the index" -- \
    "$V" index search "$tmp/a.ivf" --queries "$QA" -k 10 --ground-truth "$tmp/other.parquet"
fi

[ "$fails" -eq 0 ] || { echo "recall checks: $fails failure(s)"; exit 1; }
echo "ok: recall checks"
