#!/usr/bin/env bash
# `vforge index build|search|info` on the bundled corpus (examples/corpus: 2 files x 3000 rows,
# emb FLOAT[32]):
#   - build --json: the DESIGN.md keys, rows 6000; the same file byte for byte with --threads 1
#     and 2; info --json agrees with the build
#   - search: the brute-force schema (query_id, hit_ids, hit_scores) read back with `vforge cat`,
#     k hits per query, best first; a flat index searched with nprobe = nlist finds the exact
#     neighbours of `vforge brute-force` (recall 1 through --ground-truth) for cosine and euclid
#   - --id-expression row: integer point ids in the results
#   - --pq-nbits 4: a version-2 file, the same bytes with --threads 1 and 2, pq_nbits in info
#     (8 and version 1 for the default pq), recall through exact re-rank (--rerank at build)
#     and float-ADC re-rank (--rerank at search on a file without vectors)
#   - errors (exit 2, with a message): missing --type / --output, an unknown type, --pq-m or
#     --pq-nbits without pq, --pq-nbits other than 4 or 8, manhattan, a missing corpus, a damaged index file, queries of another
#     dimension, -k 0; a failed build leaves no output file
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
V=${VFORGE:?set VFORGE to the vforge binary}
"$V" index --help > /dev/null 2>&1 || { echo "FAIL: $V has no 'index' command"; exit 1; }
py=/usr/bin/python3
[ -x "$py" ] || { echo "python3 not installed"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/ivf-cli.XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
C="$src/examples/corpus"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

"$V" --quiet generate-queries "$C" -n 30 --seed 9 --output "$tmp/q.parquet" 2> "$tmp/err.txt" ||
  { echo "FAIL: generate-queries: $(cat "$tmp/err.txt")"; exit 1; }

# --- build, determinism, info
for t in 1 2; do
  "$V" --threads $t index build "$C" --output "$tmp/sq8-$t.ivf" --type sq8 --nlist 8 --json \
    > "$tmp/build-$t.json" 2> "$tmp/err.txt" || fail "build sq8 --threads $t: $(cat "$tmp/err.txt")"
done
if "$py" - "$tmp/build-1.json" <<'EOP'
import json, sys
text = open(sys.argv[1]).read()
assert text.count("\n") == 1, text
r = json.loads(text)
for k in ["rows", "nlist", "type", "training_rows_seen", "training_rows_retained", "source_bytes",
          "spill_bytes", "seconds", "peak_rss_bytes", "list_max_over_mean", "list_balance"]:
    assert k in r, k
assert r["rows"] == 6000 and r["nlist"] == 8 and r["type"] == "sq8" and r["training_rows_seen"] == 6000, r
assert r["source_bytes"] > 0 and r["list_max_over_mean"] >= 1, r
EOP
then ok "build --json: DESIGN.md keys"; else fail "build --json: $(cat "$tmp/build-1.json")"; fi
cmp -s "$tmp/sq8-1.ivf" "$tmp/sq8-2.ivf" && ok "same index file with --threads 1 and 2" || fail "index differs between --threads 1 and 2"
"$V" index info "$tmp/sq8-1.ivf" --json > "$tmp/info.json" 2> "$tmp/err.txt" &&
  "$py" -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["rows"]==6000 and r["nlist"]==8 and r["type"]=="sq8" and r["dim"]==32 and r["metric"]=="cosine" and r["list_min"]<=r["list_max"], r' "$tmp/info.json" &&
  ok "info --json" || fail "info --json: $(cat "$tmp/info.json" "$tmp/err.txt")"
"$V" index info "$tmp/sq8-1.ivf" | grep -q "^type: *sq8" && ok "info (text)" || fail "info text"

# --- search output schema
"$V" index search "$tmp/sq8-1.ivf" --queries "$tmp/q.parquet" -k 7 --nprobe 2 --output "$tmp/res.parquet" \
  2> "$tmp/err.txt" || fail "search: $(cat "$tmp/err.txt")"
"$V" cat "$tmp/res.parquet" > "$tmp/res.jsonl" 2> "$tmp/err.txt" || fail "cat results: $(cat "$tmp/err.txt")"
"$py" - "$tmp/res.jsonl" <<'EOP' && ok "search output: query_id, hit_ids, hit_scores; 7 hits, best first" || fail "search output: $(head -2 "$tmp/res.jsonl")"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == 30
for r in rows:
    assert sorted(r) == ["hit_ids", "hit_scores", "query_id"], r
    assert len(r["hit_ids"]) == 7 == len(r["hit_scores"]), r
    assert all(a >= b for a, b in zip(r["hit_scores"], r["hit_scores"][1:])), r
    assert len(r["hit_ids"][0]) == 36, r
EOP
# default output path: beside the queries file
"$V" --quiet index search "$tmp/sq8-1.ivf" --queries "$tmp/q.parquet" -k 3 2> "$tmp/err.txt" &&
  [ -f "$tmp/ivf_q_k3.parquet" ] && ok "default output ivf_q_k3.parquet" || fail "default output: $(ls "$tmp") $(cat "$tmp/err.txt")"

# --- flat + nprobe = nlist is exact
for m in cosine euclid; do
  "$V" --quiet brute-force "$C" --queries "$tmp/q.parquet" -k 10 --metric $m --output "$tmp/gt-$m.parquet" 2> "$tmp/err.txt" ||
    { fail "brute-force $m: $(cat "$tmp/err.txt")"; continue; }
  "$V" --quiet index build "$C" --output "$tmp/flat-$m.ivf" --type flat --nlist 8 --metric $m 2> "$tmp/err.txt" ||
    { fail "build flat $m: $(cat "$tmp/err.txt")"; continue; }
  "$V" --quiet index search "$tmp/flat-$m.ivf" --queries "$tmp/q.parquet" -k 10 --nprobe 8 --ground-truth "$tmp/gt-$m.parquet" \
    --output "$tmp/r.parquet" --json > "$tmp/s.json" 2> "$tmp/err.txt" || { fail "search flat $m: $(cat "$tmp/err.txt")"; continue; }
  "$py" -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["recall_max"]==1.0 and r["queries"]==30 and r["k"]==10 and r["nprobe"]==8, r' "$tmp/s.json" &&
    ok "flat $m, nprobe = nlist: recall 1 against brute-force" || fail "flat $m: $(cat "$tmp/s.json")"
done

# --- --id-expression row: integer ids
"$V" --quiet index build "$C" --output "$tmp/row.ivf" --type flat --nlist 4 --id-expression row 2> "$tmp/err.txt" &&
  "$V" --quiet index search "$tmp/row.ivf" --queries "$tmp/q.parquet" -k 2 --nprobe 4 --output "$tmp/rr.parquet" 2> "$tmp/err.txt" &&
  "$V" cat "$tmp/rr.parquet" | "$py" -c 'import json,sys; rows=[json.loads(l) for l in sys.stdin]; assert all(0 <= int(h) < 6000 for r in rows for h in r["hit_ids"]), rows[0]' &&
  ok "--id-expression row: integer ids" || fail "--id-expression row: $(cat "$tmp/err.txt")"

# --- 4-bit PQ
for t in 1 2; do
  "$V" --quiet --threads $t index build "$C" --output "$tmp/pq4-$t.ivf" --type pq --pq-nbits 4 --pq-m 16 \
    --nlist 8 --metric euclid 2> "$tmp/err.txt" || fail "build pq4 --threads $t: $(cat "$tmp/err.txt")"
done
cmp -s "$tmp/pq4-1.ivf" "$tmp/pq4-2.ivf" && ok "pq4: same index file with --threads 1 and 2" || fail "pq4 index differs between --threads 1 and 2"
"$V" index info "$tmp/pq4-1.ivf" --json > "$tmp/info.json" 2> "$tmp/err.txt" &&
  "$py" -c 'import json,sys; r=json.load(open(sys.argv[1])); assert (r["type"], r["pq_m"], r["pq_nbits"], r["version"]) == ("pq", 16, 4, 2), r' "$tmp/info.json" &&
  "$V" index info "$tmp/pq4-1.ivf" | grep -q "^pq_nbits: *4$" && ok "pq4: info shows pq_nbits 4, version 2" ||
  fail "pq4 info: $(cat "$tmp/info.json" "$tmp/err.txt")"
"$V" --quiet index build "$C" --output "$tmp/pq8.ivf" --type pq --pq-m 8 --nlist 8 --metric euclid 2> "$tmp/err.txt" &&
  "$V" index info "$tmp/pq8.ivf" --json > "$tmp/info.json" 2> "$tmp/err.txt" &&
  "$py" -c 'import json,sys; r=json.load(open(sys.argv[1])); assert (r["pq_nbits"], r["version"]) == (8, 1), r' "$tmp/info.json" &&
  ok "pq default: pq_nbits 8, version 1" || fail "pq8 info: $(cat "$tmp/info.json" "$tmp/err.txt")"
"$V" --quiet index build "$C" --output "$tmp/pq4r.ivf" --type pq --pq-nbits 4 --pq-m 16 --nlist 8 --metric euclid \
  --rerank 4 2> "$tmp/err.txt" || fail "build pq4 --rerank: $(cat "$tmp/err.txt")"
for f in pq4r:0:0.9 pq4-1:0:0.3 pq4-1:4:0.3; do
  IFS=: read -r name rr want <<< "$f"
  extra=""; [ "$rr" -gt 0 ] && extra="--rerank $rr"
  if "$V" --quiet index search "$tmp/$name.ivf" --queries "$tmp/q.parquet" -k 10 --nprobe 8 --ground-truth "$tmp/gt-euclid.parquet" \
       --output "$tmp/r.parquet" --json $extra > "$tmp/s.json" 2> "$tmp/err.txt" &&
     "$py" -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["recall"] >= float(sys.argv[2]), r' "$tmp/s.json" "$want"; then
    ok "pq4 $name search ${extra:-(no --rerank)}: recall $("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["recall"])' "$tmp/s.json")"
  else
    fail "pq4 $name search $extra: $(cat "$tmp/s.json" "$tmp/err.txt")"
  fi
done

# --- errors
printf 'not an index at all, just some bytes that are longer than nothing' > "$tmp/bad.ivf"
"$py" -c 'import numpy' 2> /dev/null && "$py" -c 'import numpy as np; np.save("'"$tmp"'/d8.npy", np.ones((10, 8), np.float32))' &&
  "$V" --quiet convert "$tmp/d8.npy" --output "$tmp/d8" 2> /dev/null &&
  "$V" --quiet generate-queries "$tmp/d8" -n 2 --output "$tmp/q8.parquet" 2> /dev/null
while IFS='|' read -r desc want args; do
  eval "set -- $args"
  "$V" "$@" > /dev/null 2> "$tmp/err.txt"
  rc=$?
  if [ $rc -eq 2 ] && grep -qF -- "$want" "$tmp/err.txt"; then ok "$desc: exit 2: $(tail -1 "$tmp/err.txt")"
  else fail "$desc: exit $rc, want 2 and '$want': $(cat "$tmp/err.txt")"; fi
done <<EOB
no --type|--type is required|index build "$C" --output "$tmp/x.ivf"
no --output|--output FILE is required|index build "$C" --type flat
unknown type|unknown --type 'ivfpq'|index build "$C" --output "$tmp/x.ivf" --type ivfpq
--pq-m without pq|--pq-m needs --type pq|index build "$C" --output "$tmp/x.ivf" --type sq8 --pq-m 4
--pq-nbits without pq|--pq-nbits needs --type pq|index build "$C" --output "$tmp/x.ivf" --type rabitq --pq-nbits 4
--pq-nbits 5|--pq-nbits must be 4 or 8 (got 5)|index build "$C" --output "$tmp/x.ivf" --type pq --pq-nbits 5
--rerank on 8-bit pq without vectors|--rerank needs an index built with --rerank|index search "$tmp/pq8.ivf" --queries "$tmp/q.parquet" -k 3 --rerank 4
manhattan|expected cosine, dot or euclid|index build "$C" --output "$tmp/x.ivf" --type flat --metric manhattan
missing corpus|$tmp/nothing|index build "$tmp/nothing" --output "$tmp/x.ivf" --type flat
bad pq-m|pq|index build "$C" --output "$tmp/x.ivf" --type pq --pq-m 5
damaged index|$tmp/bad.ivf|index info "$tmp/bad.ivf"
damaged index search|$tmp/bad.ivf|index search "$tmp/bad.ivf" --queries "$tmp/q.parquet" -k 3
-k 0|-k must be 1..100000|index search "$tmp/sq8-1.ivf" --queries "$tmp/q.parquet" -k 0
wrong dimension|dimension 8|index search "$tmp/sq8-1.ivf" --queries "$tmp/q8.parquet" -k 3
--rerank without vectors|--rerank needs an index built with --rerank|index search "$tmp/sq8-1.ivf" --queries "$tmp/q.parquet" -k 3 --rerank 4
unknown subcommand|unknown subcommand 'frob'|index frob
EOB
[ -e "$tmp/x.ivf" ] && fail "a failed build left $tmp/x.ivf" || ok "failed builds left no output file"
ls "$tmp" | grep -q spill && fail "spill files left behind: $(ls "$tmp")" || ok "no spill files left behind"

[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all ok"
