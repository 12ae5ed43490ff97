#!/usr/bin/env bash
# bench/campaign/run.sh (the README's benchmark campaign, issue 19) end to end on a small subset:
# the first 3000 Fashion-MNIST training images, nlist 16, 30 queries, nprobe 1 and 8, an SQ8
# collection swept without and with the filter on `label`.  Checks that every step ran and that
# the filtered step is what it claims: each query's __filter__ names its own label, every hit of
# the exact filtered truth has that label (10 per query: ~10 % of the corpus matches), the
# filtered --results lines count every query as filtered, and the plot overlays both series.
# Skips (77) without the Debian dataset or python3.
set -u
src=${VF_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
V=${VFORGE:?set VFORGE to the vforge binary}
[ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] ||
  { echo "SKIP: Fashion-MNIST not installed (Debian dataset-fashion-mnist)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
tmp=$(mktemp -d "${VF_TMP:-/tmp}/campaign.XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$tmp"' EXIT
c=$tmp/c
mkdir -p "$c"
if ! VFORGE=$V VFORGE_CAMPAIGN_DIR=$c SUBSET=3000 N=30 NPROBE=1,8 WARMUP=3 NLIST=16 MIN_ROWS=1000 \
   INDEXES=sq8 FILTERED=sq8 OUT=$tmp/campaign.png bash "$src/bench/campaign/run.sh" > "$tmp/out" 2> "$tmp/err"; then
  echo "FAIL: bench/campaign/run.sh"; cat "$tmp/out" "$tmp/err"; exit 1
fi
cat "$tmp/out"
"$V" cat "$c/train" --columns label --with-id 'vf_point_id(filename, file_row_number)' > "$tmp/train.jsonl"
"$V" cat "$c/queries-label.parquet" --columns query_id,label,__filter__ > "$tmp/q.jsonl"
"$V" cat "$c/truth-label.parquet" --columns query_id,hit_ids > "$tmp/t.jsonl"
python3 - "$c" "$tmp" <<'EOP'
import json, os, struct, sys, zlib
c, tmp = sys.argv[1:]
def lines(p):
    return [json.loads(s) for s in open(p)]
fails = []
label = {r["__id__"]: r["label"] for r in lines(os.path.join(tmp, "train.jsonl"))}
if len(label) != 3000:
    fails.append(f"the subset has {len(label)} rows, want 3000")
queries = lines(os.path.join(tmp, "q.jsonl"))
truth = {r["query_id"]: r["hit_ids"] for r in lines(os.path.join(tmp, "t.jsonl"))}
if len(queries) != 30 or len(truth) != 30:
    fails.append(f"{len(queries)} filtered queries, {len(truth)} truth rows, want 30")
for q in queries:
    f = json.loads(q["__filter__"])
    if f != {"must": [{"key": "label", "match": {"value": q["label"]}}]}:
        fails.append(f"query {q['query_id']}: filter {q['__filter__']} is not its label {q['label']}")
    hits = truth.get(q["query_id"], [])
    if len(hits) != 10:
        fails.append(f"query {q['query_id']}: {len(hits)} filtered truth hits, want 10")
    wrong = [h for h in hits if label.get(h) != q["label"]]
    if wrong:
        fails.append(f"query {q['query_id']} (label {q['label']}): hits of another label {wrong[:3]}")
for name, filtered in (("sq8.jsonl", False), ("sq8-label.jsonl", True)):
    rows = lines(os.path.join(c, name))
    if [r["params"] for r in rows] != [{"nprobe": 1}, {"nprobe": 8}]:
        fails.append(f"{name}: points {[r['params'] for r in rows]}")
    for r in rows:
        if r["queries"] != 30 or r.get("filtered_queries", 0) != (30 if filtered else 0):
            fails.append(f"{name}: {r['queries']} queries, {r.get('filtered_queries')} filtered")
        if not 0.0 < r["recall"] <= 1.0:
            fails.append(f"{name}: recall {r['recall']}")
    if filtered and rows and rows[-1]["recall"] < 0.9:
        fails.append(f"{name}: filtered recall at nprobe 8 is {rows[-1]['recall']} (< 0.9)")
    if filtered and "filter label" not in rows[0]["label"]:
        fails.append(f"{name}: label {rows[0]['label']!r}")
png = open(os.path.join(tmp, "campaign.png"), "rb").read()
if png[:8] != b"\x89PNG\r\n\x1a\n":
    fails.append("the plot is not a PNG")
else:
    w, h = struct.unpack(">II", png[16:24])
    if w < 600 or h < 300 or len(png) < 20000:
        fails.append(f"the plot is {w}x{h}, {len(png)} bytes")
for f in fails:
    print("FAIL:", f)
sys.exit(1 if fails else 0)
EOP
rc=$?
grep -q "plot: 2 series, 4 points" "$tmp/err" || { echo "FAIL: the plot does not overlay 2 series of 2 points: $(grep plot: "$tmp/err")"; rc=1; }
grep -q "filter label = the query's" "$tmp/out" || { echo "FAIL: no filtered series in the summary"; rc=1; }
[ "$rc" = 0 ] && echo "ok: campaign on a 3000-row subset, filtered and unfiltered series"
exit "$rc"
