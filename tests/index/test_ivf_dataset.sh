#!/usr/bin/env bash
# index build over a component dataset (issue 8: datasets work "for load, index build, brute-force
# and bench"): a `type: dataset` config of 3 npy parts of unequal sizes builds a flat index whose
# search at full probe equals brute-force over the same config (recall 1.0, ids = global rows,
# metric from the config); a single .npy file is a corpus too; a sparse/unknown vector is refused.
set -u
V=${VFORGE:?set VFORGE to the vforge binary}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
"$PY" -c 'import numpy' 2>/dev/null || { echo "python3-numpy not installed"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/ivf-dataset.XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
"$PY" - "$tmp" <<'PY'
import sys, numpy as np
d = sys.argv[1]; rng = np.random.default_rng(7)
for i, n in enumerate([1500, 70, 2100]):
    np.save(f"{d}/emb_{i}.npy", rng.standard_normal((n, 24)).astype("<f4"))
PY
cat > "$tmp/cfg.yaml" <<YAML
vectors: {v: {type: dense, source: vectors, distance: euclid}}
datasource:
  type: dataset
  vectors: {format: npy, parts: {count: 3, path: "$tmp/emb_{i}.npy"}}
  id_expression: row
YAML
"$V" index build "$tmp/cfg.yaml" --output "$tmp/x.ivf" --type flat --nlist 8 --json >"$tmp/build.json" 2>"$tmp/build.err" ||
  fail "index build of a dataset config: $(tail -2 "$tmp/build.err")"
grep -q '"rows":3670' "$tmp/build.json" || fail "rows: $(cat "$tmp/build.json")"
grep -q '"metric":"euclid"' "$tmp/build.json" || fail "metric from the config: $(cat "$tmp/build.json")"
"$V" generate-queries "$tmp/cfg.yaml" -n 40 --seed 3 --output "$tmp/q.parquet" 2>/dev/null || fail "generate-queries"
"$V" brute-force "$tmp/cfg.yaml" --queries "$tmp/q.parquet" -k 10 --output "$tmp/gt.parquet" 2>/dev/null || fail "brute-force"
"$V" index search "$tmp/x.ivf" --queries "$tmp/q.parquet" -k 10 --nprobe 8 --ground-truth "$tmp/gt.parquet" \
  --output "$tmp/s.parquet" --json >"$tmp/search.json" 2>"$tmp/search.err" || fail "index search: $(tail -2 "$tmp/search.err")"
grep -Eq '"recall":1(\.0+)?[,}]' "$tmp/search.json" || fail "flat at full probe should equal brute-force: $(cat "$tmp/search.json")"
# ids are global rows: the hits of the sampled queries include their own row numbers
"$V" cat "$tmp/s.parquet" --limit 1 >"$tmp/s.jsonl" 2>/dev/null || fail "cat search output"
grep -Eq '"hit_ids":\["[0-9]+"' "$tmp/s.jsonl" || fail "hit ids should be row numbers: $(head -c 300 "$tmp/s.jsonl")"
# a single vector file
"$V" index build "$tmp/emb_2.npy" --output "$tmp/y.ivf" --type sq8 --nlist 4 2>"$tmp/y.err" || fail "index build of one .npy: $(tail -2 "$tmp/y.err")"
"$V" index info "$tmp/y.ivf" --json 2>/dev/null | grep -q '"rows":2100' || fail "index info of the .npy index"
# refusals (exit 2)
"$V" index build "$tmp/cfg.yaml" --column nope --output "$tmp/z.ivf" --type flat >/dev/null 2>"$tmp/z.err"
rc=$?; [ $rc -eq 2 ] || fail "unknown --column: exit $rc ($(cat "$tmp/z.err"))"
[ ! -e "$tmp/z.ivf" ] || fail "a refused build wrote its output"
[ $fails -eq 0 ] && echo "ok" || { echo "$fails failure(s)"; exit 1; }
