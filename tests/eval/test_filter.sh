#!/usr/bin/env bash
# Filters end to end (issue 19), on the bundled corpus (examples/corpus: id, text, meta JSON):
#   1. brute-force --filter JSON|@FILE: output named _f<h>_k<K> (h = md5 of the filter), the
#      unfiltered file untouched; hits only from matching rows; fewer than k recorded; bad
#      filters, unknown keys and --filter with a __filter__ column exit 2 naming the problem;
#   2. generate-queries --filter-template ($key, $~key): queries_<N>_f<h> with a __filter__
#      column; brute-force honours it; --num-jobs 2 + brute-force-merge give the same bytes;
#   3. bench on the local store: exact scan and IVF (filter inside the list scan, nprobe widened:
#      a 0.1 % filter still finds its hits with nprobe 1) reach recall 1; filtered_queries and
#      no_truth_queries in --json; a filter nothing matches is counted and left out of the mean;
#   4. index search --filter --corpus, and a __filter__ queries file, recall 1 with widening;
#   5. an ann-filtering-benchmark bundle (tests/eval/gen_filter_bundle.py, exact ground truth by
#      numpy) as a directory and as a .tgz: loaded through a jsonl payload component and benched
#      from tests.jsonl (closest_ids) with recall 1.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
V=${VFORGE:-$here/build/vforge}
PY=${VF_PY:-$here/.venv/bin/python}
[ -x "$V" ] || { echo "skip: no vforge binary at $V"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/filter.XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
json() { # json FILE EXPR: python expression over r (the file's JSON) must hold
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"
}
cp -r "$here/examples/corpus" "$tmp/corpus"
C=$tmp/corpus
cd "$tmp"

# ---- 1. brute-force --filter
"$V" --quiet generate-queries "$C" -n 30 --seed 3 2> gq.err || fail "generate-queries: $(cat gq.err)"
Q=$C/eval/queries_30.parquet
"$V" --quiet brute-force "$C" --queries "$Q" -k 5 2> bf0.err || fail "unfiltered brute-force"
cp "$C/eval/brute_force_queries_30_k5.parquet" plain.parquet
F='{"must":[{"key":"meta.lang","match":{"value":"en"}}]}'
H=$(printf '%s' "$F" | md5sum | cut -c1-8)
"$V" brute-force "$C" --queries "$Q" -k 5 --filter "$F" 2> bf1.err || fail "brute-force --filter: $(cat bf1.err)"
[ -f "$C/eval/brute_force_queries_30_f${H}_k5.parquet" ] && ok "filtered output named _f$H" || fail "no $C/eval/brute_force_queries_30_f${H}_k5.parquet ($(ls "$C/eval"))"
cmp -s plain.parquet "$C/eval/brute_force_queries_30_k5.parquet" && ok "the unfiltered file is untouched" || fail "unfiltered output changed"
# every hit's payload matches: the hit ids against `cat --with-id`
"$V" cat "$C" --with-id 'vf_point_id(filename, file_row_number)' --columns meta > rows.jsonl
"$V" cat "$C/eval/brute_force_queries_30_f${H}_k5.parquet" > hits.jsonl
python3 - rows.jsonl hits.jsonl <<'PY' && ok "every hit has meta.lang = en" || fail "a hit does not match the filter"
import json, sys
lang = {}
for l in open(sys.argv[1]):
    r = json.loads(l); lang[r["__id__"]] = json.loads(r["meta"])["lang"]
hits = [json.loads(l) for l in open(sys.argv[2])]
assert len(hits) == 30 and all(len(h["hit_ids"]) == 5 for h in hits)
assert all(lang[i] == "en" for h in hits for i in h["hit_ids"]), "non-matching hit"
PY
printf '%s\n' '{"must":[{"key":"id","range":{"lt":3}}]}' > few.json
"$V" brute-force "$C" --queries "$Q" -k 5 --filter @few.json 2> bf2.err || fail "--filter @FILE: $(cat bf2.err)"
grep -q "30 with fewer than 5 hits" bf2.err && ok "fewer than k hits reported" || fail "short queries not reported: $(cat bf2.err)"
H2=$(printf '%s' '{"must":[{"key":"id","range":{"lt":3}}]}' | md5sum | cut -c1-8)
"$V" cat "$C/eval/brute_force_queries_30_f${H2}_k5.parquet" --limit 1 | python3 -c "import json,sys; r=json.loads(sys.stdin.read()); sys.exit(0 if len(r['hit_ids']) == 3 else 1)" &&
  ok "3 matching rows: 3 hits recorded" || fail "@FILE output (hash of the trimmed text) missing or wrong"
expect2() { # expect2 WHAT NEEDLE ARGS...: exit 2 and NEEDLE in the message
  local what=$1 needle=$2; shift 2
  "$V" "$@" > /dev/null 2> err.txt
  local rc=$?
  [ $rc -eq 2 ] && grep -q -- "$needle" err.txt && ok "$what: exit 2" || fail "$what: rc $rc, $(cat err.txt)"
}
expect2 "misspelt condition" "unknown key 'mach'" brute-force "$C" --queries "$Q" -k 5 --filter '{"must":[{"key":"id","mach":{"value":1}}]}'
expect2 "bad JSON" "invalid JSON" brute-force "$C" --queries "$Q" -k 5 --filter '{"must":['
expect2 "unknown column" "no column 'nope'" brute-force "$C" --queries "$Q" -k 5 --filter '{"must":[{"key":"nope","match":{"value":1}}]}'
expect2 "missing @FILE" "cannot open" brute-force "$C" --queries "$Q" -k 5 --filter @missing.json

# ---- 2. generate-queries --filter-template
T='{"must":[{"key":"meta.lang","match":{"value":"$~lang"}}],"must_not":[{"key":"id","match":{"value":"$id"}}]}'
cat > cfg.yaml <<EOF
vectors: {emb: {type: dense, column: emb, distance: cosine}}
datasource:
  uri: $C
  payload_fields: {id: id, meta: meta, text: text}
vectorstore: {type: local, path: $tmp/store, collection_name: ex}
EOF
expect2 "template key that is no payload key" "not one of the config's payload_fields" generate-queries cfg.yaml -n 10 --filter-template "$T"
expect2 "template key that is no column" "no column 'nothing'" generate-queries "$C" -n 10 --filter-template '{"must":[{"key":"id","match":{"value":"$~nothing"}}]}'
expect2 "template that does not compile" "expected a string, an integer or a bool" generate-queries "$C" -n 10 --filter-template '{"must":[{"key":"m","match":{"value":"$meta"}}]}'
T='{"must":[{"key":"meta.lang","match":{"value":"de"}}],"must_not":[{"key":"id","match":{"value":"$id"}}],"should":[{"key":"text","match":{"value":"$~text"}},{"key":"id","range":{"gte":"$id"}}]}'
HT=$(printf '%s' "$T" | md5sum | cut -c1-8)
"$V" --quiet generate-queries cfg.yaml -n 40 --filter-template "$T" 2> gt.err || fail "--filter-template: $(cat gt.err)"
QT=$C/eval/queries_40_f$HT.parquet
[ -f "$QT" ] && ok "template queries named _f$HT" || fail "no $QT ($(ls "$C/eval"))"
"$V" cat "$QT" --columns __source_row__,__filter__ --limit 3 > tq.jsonl
python3 - tq.jsonl <<'PY' && ok "\$id is the row's own id, \$~text a corpus value" || fail "template values"
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l); f = json.loads(r["__filter__"])
    own = f["must_not"][0]["match"]["value"]
    assert isinstance(own, int) and f["should"][1]["range"]["gte"] == own
    assert f["should"][0]["match"]["value"].startswith("document ")
PY
expect2 "--filter with a __filter__ column" "carries its own filters" brute-force cfg.yaml --queries "$QT" -k 10 --filter '{}'
"$V" --quiet brute-force cfg.yaml --queries "$QT" -k 10 2> bt.err || fail "brute-force of template queries: $(cat bt.err)"
GT=$C/eval/brute_force_queries_40_f${HT}_k10.parquet
[ -f "$GT" ] && ok "per-query filtered ground truth $GT" || fail "no $GT"
for r in 0 1; do "$V" --quiet brute-force cfg.yaml --queries "$QT" -k 10 --num-jobs 2 --job-rank $r 2>> bt.err || fail "job $r"; done
"$V" --quiet brute-force-merge cfg.yaml --queries "$QT" -k 10 --output merged.parquet 2>> bt.err || fail "merge: $(cat bt.err)"
cmp -s merged.parquet "$GT" && ok "2 jobs + merge: byte-identical filtered ground truth" || fail "merged filtered truth differs"

# ---- 3. bench on the local store (exact scan and IVF)
"$V" --quiet load run cfg.yaml > /dev/null 2> l1.err || fail "load: $(cat l1.err)"
sed -e "s/collection_name: ex}/collection_name: ix, params: {index: {type: flat, nlist: 32, nprobe: 1, min_rows: 100}}}/" cfg.yaml > cfg_ix.yaml
"$V" --quiet load run cfg_ix.yaml > /dev/null 2> l2.err || fail "load with an index: $(cat l2.err)"
for c in cfg cfg_ix; do
  "$V" --quiet bench $c.yaml --queries "$QT" --ground-truth "$GT" -k 10 --json > b_$c.json 2> b_$c.err || fail "bench $c: $(cat b_$c.err)"
done
json b_cfg.json "r['recall'] == 1 and r['filtered_queries'] == 40 and r['no_truth_queries'] == 0" &&
  ok "local exact scan: filtered recall 1" || fail "exact filtered bench: $(cat b_cfg.json)"
json b_cfg_ix.json "r['filtered_queries'] == 40" && ok "IVF: filtered queries searched ($(python3 -c "import json;print(json.load(open('b_cfg_ix.json'))['recall'])"))" || fail "IVF bench: $(cat b_cfg_ix.json)"
# a 0.1 % filter (6 rows): nprobe 1 widens until the hits are found
R='{"must":[{"key":"id","range":{"lt":6}}]}'
"$V" --quiet brute-force "$C" --queries "$Q" -k 10 --filter "$R" 2>/dev/null
GR=$C/eval/brute_force_queries_30_f$(printf '%s' "$R" | md5sum | cut -c1-8)_k10.parquet
"$V" --quiet bench cfg_ix.yaml --queries "$Q" --ground-truth "$GR" -k 10 --filter "$R" --json > b_w.json 2> b_w.err || fail "bench widening: $(cat b_w.err)"
json b_w.json "r['recall'] == 1" && ok "IVF nprobe 1 with a 0.1 % filter: recall 1 (probe widened)" || fail "widening: $(cat b_w.json)"
"$V" --quiet bench cfg_ix.yaml --queries "$Q" --ground-truth "$GR" -k 10 --json > b_u.json 2>/dev/null
json b_u.json "r['recall'] < 0.5 and 'filtered_queries' not in r" && ok "without the filter the same truth is missed (recall $(python3 -c "import json;print(json.load(open('b_u.json'))['recall'])"))" || fail "unfiltered control: $(cat b_u.json)"
Z='{"must":[{"key":"id","range":{"lt":0}}]}'
"$V" --quiet brute-force "$C" --queries "$Q" -k 10 --filter "$Z" 2>/dev/null
GZ=$C/eval/brute_force_queries_30_f$(printf '%s' "$Z" | md5sum | cut -c1-8)_k10.parquet
"$V" --quiet bench cfg.yaml --queries "$Q" --ground-truth "$GZ" -k 10 --filter "$Z" --json > b_z.json 2>/dev/null || fail "bench of a filter nothing matches"
json b_z.json "r['no_truth_queries'] == 30 and r['recall'] == 0" && ok "no true hits: counted (30) and left out of the mean" || fail "no-truth: $(cat b_z.json)"
expect2 "bench: --filter with a __filter__ column" "carries its own filters" bench cfg.yaml --queries "$QT" --ground-truth "$GT" -k 10 --filter '{}'

# ---- 4. index search
"$V" --quiet index build "$C" --output x.ivf --type flat --nlist 16 > /dev/null 2>&1 || fail "index build"
expect2 "index search without --corpus" "give --corpus" index search x.ivf --queries "$QT" -k 10
"$V" --quiet index search x.ivf --queries "$QT" -k 10 --nprobe 16 --corpus cfg.yaml --ground-truth "$GT" --json > is.json 2> is.err || fail "index search: $(cat is.err)"
json is.json "r['recall'] == 1" && ok "index search of __filter__ queries: recall 1 (nprobe = nlist)" || fail "index search: $(cat is.json)"
"$V" --quiet index search x.ivf --queries "$Q" -k 10 --nprobe 1 --filter "$R" --corpus "$C" --ground-truth "$GR" --json > is2.json 2> is2.err || fail "index search --filter: $(cat is2.err)"
json is2.json "r['recall'] == 1 and '_f' in r['output']" && ok "index search --filter, nprobe 1 widened: recall 1, output named apart" || fail "index search --filter: $(cat is2.json)"

# ---- 5. an ann-filtering-benchmark bundle, as a directory and as a .tgz
if [ -x "$PY" ] && "$PY" -c "import numpy" 2>/dev/null; then
  "$PY" "$here/tests/eval/gen_filter_bundle.py" "$tmp/bun" 3000 16 36 10 > /dev/null || fail "bundle generator"
  for form in dir tgz; do
    [ $form = dir ] && B=$tmp/bun || B=$tmp/bun.tgz
    cat > bun_$form.yaml <<EOF
vectors: {vector: {type: dense, distance: cosine}}
datasource:
  type: dataset
  id_expression: row
  vectors: {format: npy, path: $B/vectors.npy}
  payload: {format: jsonl, path: $B/payloads.jsonl}
vectorstore: {type: local, path: $tmp/store, collection_name: bun_$form}
EOF
    "$V" --quiet load run bun_$form.yaml > /dev/null 2> bl.err || fail "bundle $form: load: $(cat bl.err)"
    "$V" --quiet bench bun_$form.yaml --queries "$B" -k 10 --json > bb.json 2> bb.err || fail "bundle $form: bench: $(cat bb.err)"
    json bb.json "r['recall'] == 1 and r['filtered_queries'] == 30 and r['no_truth_queries'] == 6" &&
      ok "bundle ($form): loaded from vectors.npy + payloads.jsonl, benched against closest_ids: recall 1" || fail "bundle $form: $(cat bb.json)"
  done
  [ -f "$tmp/.bun.tgz.extract/.complete" ] && ok "the .tgz was extracted once, next to it" || fail "no extraction directory"
  # a bundle is also a corpus for brute-force (its queries from the .tgz's tests would need a queries file)
  "$V" --quiet generate-queries "$tmp/bun.tgz" -n 5 --output bq.parquet 2> bg.err && ok "a .tgz bundle is a corpus" || fail "bundle as a corpus: $(cat bg.err)"
  printf '{"query": [1,2], "conditions": {}, "closest_ids": [1], "closest_scores": [0.5]}\nnot json\n' > bad.jsonl
  expect2 "a bad tests.jsonl line" "bad.jsonl:2" bench bun_dir.yaml --queries bad.jsonl -k 1
else
  echo "skip: bundle part (no numpy in $PY)"
fi

[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all filter checks passed"
